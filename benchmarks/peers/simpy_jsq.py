"""The two models in SimPy (4.1), written the way SimPy's documentation does.

Each server is a ``simpy.Resource(capacity=1)`` (FIFO); each task is a process
that requests its server, holds it for an Exp(1) service and releases it; an
arrival process generates the tasks and dispatches them; a resampling process
redraws the permutation at the epochs of a Poisson process of rate ``mu``.
The queue length of a server is ``res.count + len(res.queue)``.

* :func:`ring` -- model (a), closed neighbourhoods of a resampled ring with the
  same lazy permutation as ``qlib.simulate``, ties uniform;
* :func:`complete` -- model (b), JSQ over all ``n`` resources (SimPy has no
  router: the shortest queue is kept in buckets of servers by queue length,
  O(1) per event, as in the heapq peer and ``qlib.halfin_whitt.tasks``; ties uniform),
  total rate ``n - beta sqrt(n)``.
"""
from __future__ import annotations

import math
import random
import time

import simpy

from .common import (Buckets, LazyPermutation, Occupancy, PeerResult, hw_rate,
                     queues_from_occupancy, ring_neighbours)

__all__ = ["ring", "complete"]


class _Counts:
    __slots__ = ("arrivals", "departures", "resamples")

    def __init__(self):
        self.arrivals = self.departures = self.resamples = 0


def _task(env, res, occ, cnt, expo):
    occ.up(env.now, res.count + len(res.queue) + 1)
    with res.request() as req:
        yield req
        yield env.timeout(expo(1.0))
        occ.down(env.now, res.count + len(res.queue))
    cnt.departures += 1


def _load(res):
    return res.count + len(res.queue)


def ring(n, lam, mu=0.0, *, t_end, burn_in=0.0, seed=0, batches=20):
    """JSQ on a resampled ring (see :func:`benchmarks.peers.heapq_jsq.ring`)."""
    rng = random.Random(seed)
    expo, rand = rng.expovariate, rng.random
    nbrs = ring_neighbours(n)
    perm = LazyPermutation(n, rng)
    occ = Occupancy(n, t_end, burn_in, batches)
    cnt = _Counts()
    env = simpy.Environment()
    servers = [simpy.Resource(env, capacity=1) for _ in range(n)]
    mu_inf = math.isinf(mu)

    def arrivals():
        while True:
            yield env.timeout(expo(lam * n))
            if mu_inf:
                perm.resample()
            v = int(rand() * n)
            best = perm.server(v)
            bx = _load(servers[best])
            cand = [best]
            for w in nbrs[v]:
                u = perm.server(w)
                x = _load(servers[u])
                if x < bx:
                    bx, cand = x, [u]
                elif x == bx:
                    cand.append(u)
            s = cand[0] if len(cand) == 1 else cand[int(rand() * len(cand))]
            cnt.arrivals += 1
            env.process(_task(env, servers[s], occ, cnt, expo))

    def resampler():
        while True:
            yield env.timeout(expo(mu))
            perm.resample()
            cnt.resamples += 1

    c0 = time.process_time()
    env.process(arrivals())
    if 0 < mu < math.inf:
        env.process(resampler())
    env.run(until=t_end)
    q, se = occ.finish()
    cpu = time.process_time() - c0
    ev = cnt.arrivals + cnt.departures + (0 if mu_inf else cnt.resamples)
    return PeerResult("simpy", "ring", n, mu, t_end, q, se, ev, cnt.arrivals,
                      cnt.departures, cnt.resamples, cpu)


def _task_b(env, res, s, occ, cnt, expo, bk):
    """A task at server ``s`` of model (b), already counted in ``bk`` and ``occ``."""
    with res.request() as req:
        yield req
        yield env.timeout(expo(1.0))
        lv = bk.X[s]
        bk.move(s, lv - 1)
        occ.down(env.now, lv)
    cnt.departures += 1


def complete(n, beta, *, t_end, burn_in=0.0, seed=0, batches=20, initial=None):
    """JSQ over all ``n`` servers, total arrival rate ``n - beta sqrt(n)``.

    SimPy has no router; the shortest queue is found in O(1) from buckets of
    servers by queue length (:class:`benchmarks.peers.common.Buckets`, the
    routing of the heapq peer and of ``qlib.halfin_whitt.tasks``), so that SimPy and the
    other per-server simulators run the same algorithm.  ``initial``:
    occupancy counts ``(Q_1, Q_2, ...)`` at time 0 (``None``: empty).
    """
    lam_n = hw_rate(n, beta)
    rng = random.Random(seed)
    expo, rand = rng.expovariate, rng.random
    occ = Occupancy(n, t_end, burn_in, batches)
    cnt = _Counts()
    env = simpy.Environment()
    servers = [simpy.Resource(env, capacity=1) for _ in range(n)]
    X0 = queues_from_occupancy(n, initial)
    bk = Buckets([0] * n)

    def arrive(s):
        bk.move(s, bk.X[s] + 1)
        occ.up(env.now, bk.X[s])
        env.process(_task_b(env, servers[s], s, occ, cnt, expo, bk))

    def arrivals():
        while True:
            yield env.timeout(expo(lam_n))
            arrive(bk.pick(rand))
            cnt.arrivals += 1

    c0 = time.process_time()
    for s, k in enumerate(X0):       # the initial tasks, in FIFO order
        for _ in range(k):
            arrive(s)
    env.process(arrivals())
    env.run(until=t_end)
    q, se = occ.finish()
    cpu = time.process_time() - c0
    return PeerResult("simpy", "complete", n, math.nan, t_end, q, se,
                      cnt.arrivals + cnt.departures, cnt.arrivals,
                      cnt.departures, 0, cpu, {"beta": beta})
