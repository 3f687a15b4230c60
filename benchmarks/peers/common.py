"""Pieces shared by the peer simulators (pure Python, standard library only).

* :class:`LazyPermutation` -- the same lazy, epoch-stamped Fisher--Yates
  permutation of servers to positions that ``qlib.simulate`` uses, so that a
  resampling costs O(1) in every implementation and the comparison measures
  the engine, not the algorithm;
* :class:`Occupancy` -- time integrals of ``Q_i`` (number of servers with at
  least ``i`` tasks) per batch, updated in O(1) per queue change, giving the
  time-averaged occupancy ``q(i)`` with batch-means standard errors exactly as
  ``qlib.simulate`` computes them;
* :class:`PeerResult` -- what every peer returns.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = ["LazyPermutation", "Occupancy", "PeerResult", "ring_neighbours",
           "hw_rate", "queues_from_occupancy", "Buckets"]


def ring_neighbours(n):
    """Open neighbourhoods of the ring on positions 0..n-1 (n >= 3)."""
    if n < 3:
        raise ValueError(f"n must be >= 3 for a ring, got {n}")
    return [((v - 1) % n, (v + 1) % n) for v in range(n)]


def hw_rate(n, beta):
    """Total arrival rate ``n - beta sqrt(n)`` of the Halfin--Whitt regime."""
    lam = n - beta * math.sqrt(n)
    if not lam > 0:
        raise ValueError(f"beta must be < sqrt(n), got beta={beta}, n={n}")
    return lam


def queues_from_occupancy(n, initial):
    """Queue length of every server for occupancy counts ``(Q_1, Q_2, ...)``.

    Server ``s`` gets ``#{i : Q_i > s}`` tasks (any assignment will do: on the
    complete graph the servers are exchangeable).  ``None``: all empty.
    """
    X = [0] * n
    if initial is None:
        return X
    prev = n
    for q in initial:
        q = int(q)
        if not 0 <= q <= prev:
            raise ValueError(f"initial must be non-increasing in [0, n = {n}], got {list(initial)}")
        for s in range(q):
            X[s] += 1
        prev = q
    return X


class Buckets:
    """Servers grouped by queue length, for JSQ on the complete graph in O(1).

    ``members[k]`` lists the servers holding ``k`` tasks, ``where[s]`` is the
    index of ``s`` in its list and ``m`` is the shortest queue length: the
    routing of ``qlib.halfin_whitt.tasks.simulate_tasks`` and of the heapq peer, so that
    every per-server simulator of model (b) runs the same algorithm.
    """

    __slots__ = ("members", "where", "m", "X")

    def __init__(self, X):
        self.X = list(X)
        top = max(self.X, default=0)
        self.members = [[] for _ in range(top + 1)]
        self.where = [0] * len(self.X)
        for s, k in enumerate(self.X):
            self.where[s] = len(self.members[k])
            self.members[k].append(s)
        self.m = min(self.X, default=0)

    def pick(self, rand):
        """A uniform server among the shortest queues (not yet moved)."""
        lst = self.members[self.m]
        return lst[int(rand() * len(lst))]

    def move(self, s, b):
        """Server ``s`` now holds ``b`` tasks (``b = X[s] ± 1``)."""
        a = self.X[s]
        lst = self.members[a]
        i, last = self.where[s], lst[-1]
        lst[i] = last
        self.where[last] = i
        lst.pop()
        if b == len(self.members):
            self.members.append([])
        self.where[s] = len(self.members[b])
        self.members[b].append(s)
        self.X[s] = b
        if b < self.m:
            self.m = b
        elif a == self.m and not lst:
            self.m = b


class LazyPermutation:
    """Uniform permutation ``position -> server``, redrawn in O(1).

    Epoch 0 is the identity (server ``s`` at position ``s``).  After
    :meth:`resample` the server at a position is drawn only when it is first
    looked at, by a sparse Fisher--Yates shuffle whose entries carry the epoch
    they were written in (entries from older epochs read as the identity).
    """

    __slots__ = ("n", "epoch", "kc", "pstamp", "pval", "astamp", "aval",
                 "random")

    def __init__(self, n, rng):
        self.n = n
        self.epoch = 0
        self.kc = 0
        self.pstamp = [-1] * n
        self.pval = [0] * n
        self.astamp = [-1] * n
        self.aval = [0] * n
        self.random = rng.random

    def resample(self):
        """A fresh uniform permutation (O(1))."""
        self.epoch += 1
        self.kc = 0

    def server(self, w):
        """Server at position ``w`` in the current epoch."""
        e = self.epoch
        if e == 0:
            return w
        if self.pstamp[w] == e:
            return self.pval[w]
        n, kc = self.n, self.kc
        j = kc + int(self.random() * (n - kc))
        ak = self.aval[kc] if self.astamp[kc] == e else kc
        aj = self.aval[j] if self.astamp[j] == e else j
        self.astamp[j] = e
        self.aval[j] = ak
        self.pstamp[w] = e
        self.pval[w] = aj
        self.kc = kc + 1
        return aj


class Occupancy:
    """Per-batch time integrals of ``Q_i``, O(1) per change.

    Call :meth:`up` when a server goes from ``lv - 1`` to ``lv`` tasks and
    :meth:`down` when it goes from ``lv`` to ``lv - 1``, with non-decreasing
    times, then :meth:`finish` at ``t_end``.  The window ``[burn_in, t_end]``
    is cut into ``batches`` equal batches (batch means).
    """

    def __init__(self, n, t_end, burn_in=0.0, batches=20, levels=16):
        self.n = n
        self.t_end = float(t_end)
        self.burn_in = float(burn_in)
        self.batches = int(batches)
        self.blen = (self.t_end - self.burn_in) / self.batches
        K = levels
        self.Q = [n] + [0] * K
        self.last = [0.0] * (K + 1)
        # row `batches` collects the burn-in (and is discarded)
        self.integ = [[0.0] * (K + 1) for _ in range(self.batches + 1)]
        self.batch = -1
        self.row = self.integ[self.batches]
        self.next_b = self.burn_in

    def _cross(self, t):
        """Flush every level to each batch boundary <= t."""
        while t >= self.next_b:
            b = self.next_b
            row = self.row
            Q, last = self.Q, self.last
            for i in range(len(Q)):
                row[i] += Q[i] * (b - last[i])
                last[i] = b
            self.batch += 1
            if self.batch < self.batches:
                self.row = self.integ[self.batch]
                self.next_b = (self.t_end if self.batch == self.batches - 1
                               else self.burn_in + (self.batch + 1) * self.blen)
            else:
                self.row = self.integ[self.batches]
                self.next_b = math.inf

    def _grow(self):
        k = len(self.Q)
        self.Q += [0] * k
        self.last += [0.0] * k
        for r in self.integ:
            r += [0.0] * k

    def up(self, t, lv):
        if t >= self.next_b:
            self._cross(t)
        if lv >= len(self.Q):
            self._grow()
        self.row[lv] += self.Q[lv] * (t - self.last[lv])
        self.last[lv] = t
        self.Q[lv] += 1

    def down(self, t, lv):
        if t >= self.next_b:
            self._cross(t)
        self.row[lv] += self.Q[lv] * (t - self.last[lv])
        self.last[lv] = t
        self.Q[lv] -= 1

    def finish(self):
        """Close the window; return (occupancy, occupancy_se) as lists."""
        self._cross(self.t_end)
        B, n, blen = self.batches, self.n, self.blen
        K1 = len(self.Q)
        occ_b = [[self.integ[b][i] / (n * blen) for i in range(K1)]
                 for b in range(B)]
        mean = [sum(r[i] for r in occ_b) / B for i in range(K1)]
        se = [math.sqrt(sum((r[i] - mean[i]) ** 2 for r in occ_b) / (B - 1) / B)
              for i in range(K1)]
        while len(mean) > 2 and mean[-1] == 0 and mean[-2] == 0:
            mean.pop()
            se.pop()
        return mean, se


@dataclass
class PeerResult:
    """Result of one peer run.

    ``events`` counts model events exactly as ``qlib.simulate`` does:
    arrivals + departures + epochs of the resampling Poisson process
    (``mu = inf``: the per-arrival redraws are not separate events).
    ``cpu_time`` is the process CPU time of the run (``time.process_time``),
    model construction excluded.
    """

    engine: str
    model: str
    n: int
    mu: float
    t_end: float
    occupancy: list
    occupancy_se: list
    events: int
    arrivals: int
    departures: int
    resamples: int
    cpu_time: float
    extra: dict = field(default_factory=dict)

    @property
    def events_per_s(self):
        return self.events / self.cpu_time if self.cpu_time > 0 else math.nan
