"""The "write it yourself" baseline: a plain-Python event loop on ``heapq``.

Standard library only (importable by the book without SimPy or Ciw).  A heap
holds the pending events -- the next arrival, one service completion per busy
server, the next resampling epoch -- as ``(time, kind, server)``; services are
Exp(1), drawn when a service starts (FIFO).

* :func:`ring` -- model (a): JSQ on the closed neighbourhoods of a ring whose
  server-to-position permutation is redrawn at the epochs of a Poisson process
  of rate ``mu`` (``0``: static, ``inf``: before every arrival), ties uniform,
  with the same lazy permutation as ``qlib.simulate``;
* :func:`complete` -- model (b): JSQ on the complete graph with total arrival
  rate ``n - beta sqrt(n)``; the shortest queue is found in O(1) from buckets
  of servers by queue length (what a careful programmer would write).
"""
from __future__ import annotations

import heapq
import math
import random
import time

from .common import (LazyPermutation, Occupancy, PeerResult, hw_rate,
                     queues_from_occupancy, ring_neighbours)

__all__ = ["ring", "complete"]

_ARR, _DEP, _RES = 0, 1, 2


def ring(n, lam, mu=0.0, *, t_end, burn_in=0.0, seed=0, batches=20):
    """JSQ on a resampled ring, time averages over ``[burn_in, t_end]``.

    ``lam`` is the arrival rate per server (total ``lam * n``).
    """
    rng = random.Random(seed)
    expo, rand = rng.expovariate, rng.random
    nbrs = ring_neighbours(n)
    perm = LazyPermutation(n, rng)
    occ = Occupancy(n, t_end, burn_in, batches)
    X = [0] * n
    mu_inf = math.isinf(mu)
    c0 = time.process_time()
    heap = [(expo(lam * n), _ARR, -1)]
    if 0 < mu < math.inf:
        heap.append((expo(mu), _RES, -1))
        heapq.heapify(heap)
    arrivals = departures = resamples = 0
    push, pop = heapq.heappush, heapq.heappop
    while True:
        t, kind, s = pop(heap)
        if t > t_end:
            break
        if kind == _ARR:
            push(heap, (t + expo(lam * n), _ARR, -1))
            if mu_inf:
                perm.resample()
            v = int(rand() * n)
            best = perm.server(v)
            bx = X[best]
            cand = [best]
            for w in nbrs[v]:
                u = perm.server(w)
                x = X[u]
                if x < bx:
                    bx, cand = x, [u]
                elif x == bx:
                    cand.append(u)
            s = cand[0] if len(cand) == 1 else cand[int(rand() * len(cand))]
            X[s] = bx + 1
            occ.up(t, bx + 1)
            if bx == 0:
                push(heap, (t + expo(1.0), _DEP, s))
            arrivals += 1
        elif kind == _DEP:
            lv = X[s]
            X[s] = lv - 1
            occ.down(t, lv)
            if lv > 1:
                push(heap, (t + expo(1.0), _DEP, s))
            departures += 1
        else:
            perm.resample()
            push(heap, (t + expo(mu), _RES, -1))
            resamples += 1
    q, se = occ.finish()
    cpu = time.process_time() - c0
    ev = arrivals + departures + (0 if mu_inf else resamples)
    return PeerResult("heapq", "ring", n, mu, t_end, q, se, ev, arrivals,
                      departures, resamples, cpu)


def complete(n, beta, *, t_end, burn_in=0.0, seed=0, batches=20, initial=None):
    """JSQ on ``n`` fully connected servers, total arrival rate ``n - beta sqrt(n)``.

    ``initial``: occupancy counts ``(Q_1, Q_2, ...)`` at time 0 (``None``:
    empty); see :func:`benchmarks.peers.common.queues_from_occupancy`.
    """
    lam_n = hw_rate(n, beta)
    rng = random.Random(seed)
    expo, rand = rng.expovariate, rng.random
    occ = Occupancy(n, t_end, burn_in, batches)
    X = queues_from_occupancy(n, initial)
    # members[k]: the servers holding k tasks; where[s]: index of s in its list
    members = [[] for _ in range(max(X) + 1)]
    where = [0] * n
    for s, k in enumerate(X):
        where[s] = len(members[k])
        members[k].append(s)
    m = min(X)  # the shortest queue length: members[m] is the first non-empty list

    def move(s, a, b):
        lst = members[a]
        i, last = where[s], lst[-1]
        lst[i] = last
        where[last] = i
        lst.pop()
        if b == len(members):
            members.append([])
        where[s] = len(members[b])
        members[b].append(s)

    c0 = time.process_time()
    heap = [(expo(lam_n), _ARR, -1)]
    for s, k in enumerate(X):
        for lv in range(1, k + 1):
            occ.up(0.0, lv)
        if k:
            heap.append((expo(1.0), _DEP, s))
    heapq.heapify(heap)
    arrivals = departures = 0
    push, pop = heapq.heappush, heapq.heappop
    while True:
        t, kind, s = pop(heap)
        if t > t_end:
            break
        if kind == _ARR:
            push(heap, (t + expo(lam_n), _ARR, -1))
            lst = members[m]
            s = lst[int(rand() * len(lst))]
            move(s, m, m + 1)
            X[s] = m + 1
            occ.up(t, m + 1)
            if m == 0:
                push(heap, (t + expo(1.0), _DEP, s))
            if not members[m]:
                m += 1
            arrivals += 1
        else:
            lv = X[s]
            move(s, lv, lv - 1)
            X[s] = lv - 1
            occ.down(t, lv)
            if lv - 1 < m:
                m = lv - 1
            if lv > 1:
                push(heap, (t + expo(1.0), _DEP, s))
            departures += 1
    q, se = occ.finish()
    cpu = time.process_time() - c0
    return PeerResult("heapq", "complete", n, math.nan, t_end, q, se,
                      arrivals + departures, arrivals, departures, 0, cpu,
                      {"beta": beta})
