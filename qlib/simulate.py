"""Event-driven simulation of JSQ on a (resampled) graph, O(1) per event.

See the module docstring of ``simulate`` for the model.  Positions carry
the graph; servers are placed by a permutation which is redrawn at rate
``mu``.  The permutation is materialised lazily: each epoch is a sparse
Fisher–Yates shuffle (array ``A`` with epoch stamps) so a lookup is O(1)
and resampling is O(1).
"""
from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass

import numba
import numpy as np

from qlib.graphs import Graph

__all__ = ["simulate", "SimulationResult"]


@numba.njit(cache=True)
def _lookup(v, epoch, perm, pstamp, A, astamp, kc, n):
    # position v -> server under the current epoch's permutation
    if pstamp[v] == epoch:
        return perm[v]
    k = kc[0]
    j = k + np.random.randint(n - k)
    ak = A[k] if astamp[k] == epoch else k
    aj = A[j] if astamp[j] == epoch else j
    A[j] = ak
    astamp[j] = epoch
    A[k] = aj
    astamp[k] = epoch
    kc[0] = k + 1
    perm[v] = aj
    pstamp[v] = epoch
    return aj


@numba.njit(cache=True)
def _kernel(seed, indptr, indices, n, lam, mu, mu_inf, t_end, burn_in,
            nbatch, X, K, rec_dt, nrec):
    np.random.seed(seed)
    B = np.empty(n, np.int64)
    bpos = np.full(n, -1, np.int64)
    nb = 0
    Q = np.zeros(K + 1, np.int64)
    for s in range(n):
        for i in range(X[s] + 1):
            Q[i] += 1
        if X[s] > 0:
            bpos[s] = nb
            B[nb] = s
            nb += 1
    perm = np.empty(n, np.int64)
    pstamp = np.full(n, -1, np.int64)
    A = np.empty(n, np.int64)
    astamp = np.full(n, -1, np.int64)
    kc = np.zeros(1, np.int64)
    epoch = 0
    integ = np.zeros((nbatch, K + 1))
    rsum = np.zeros(nbatch)
    rcnt = np.zeros(nbatch)
    last = np.zeros(K + 1)
    paths = np.zeros((nrec, K + 1))
    irec = 0
    blen = (t_end - burn_in) / nbatch
    batch = -1
    nextb = burn_in
    t = 0.0
    events = 0
    resamples = 0
    arrivals = 0
    departures = 0
    lamn = lam * n
    overflow = 0
    while True:
        rate = lamn + nb + (0.0 if mu_inf else mu)
        tnew = t + np.random.exponential(1.0 / rate)
        tstop = min(tnew, t_end)
        # grid recording
        while irec < nrec and irec * rec_dt <= tstop:
            for i in range(K + 1):
                paths[irec, i] = Q[i] / n
            irec += 1
        # batch boundaries
        while nextb <= tstop and batch < nbatch:
            if batch >= 0:
                for i in range(K + 1):
                    integ[batch, i] += Q[i] * (nextb - last[i])
            for i in range(K + 1):
                last[i] = nextb
            batch += 1
            nextb = burn_in + (batch + 1) * blen if batch < nbatch - 1 else t_end
            if batch == nbatch - 1:
                nextb = t_end
        if tnew >= t_end:
            break
        t = tnew
        events += 1
        u = np.random.random() * rate
        if u < lamn:
            if mu_inf:
                epoch += 1
                kc[0] = 0
                resamples += 1
            v = np.random.randint(n)
            best = _lookup(v, epoch, perm, pstamp, A, astamp, kc, n)
            bx = X[best]
            ties = 1
            for p in range(indptr[v], indptr[v + 1]):
                s = _lookup(indices[p], epoch, perm, pstamp, A, astamp, kc, n)
                x = X[s]
                if x < bx:
                    bx = x
                    best = s
                    ties = 1
                elif x == bx:
                    ties += 1
                    if np.random.random() * ties < 1.0:
                        best = s
            if bx + 1 > K:
                overflow = 1
                break
            lv = bx + 1
            if batch >= 0 and batch < nbatch:
                integ[batch, lv] += Q[lv] * (t - last[lv])
                rsum[batch] += bx + 1
                rcnt[batch] += 1
            last[lv] = t
            Q[lv] += 1
            X[best] = lv
            if bx == 0:
                bpos[best] = nb
                B[nb] = best
                nb += 1
            arrivals += 1
        elif u < lamn + nb:
            i = np.random.randint(nb)
            s = B[i]
            lv = X[s]
            if batch >= 0 and batch < nbatch:
                integ[batch, lv] += Q[lv] * (t - last[lv])
            last[lv] = t
            Q[lv] -= 1
            X[s] = lv - 1
            if lv == 1:
                nb -= 1
                last_s = B[nb]
                B[i] = last_s
                bpos[last_s] = i
                bpos[s] = -1
            departures += 1
        else:
            epoch += 1
            kc[0] = 0
            resamples += 1
    return (integ, rsum, rcnt, paths, events, resamples, arrivals,
            departures, overflow)


@dataclass(frozen=True)
class SimulationResult:
    occupancy: np.ndarray
    occupancy_se: np.ndarray
    mean_response_time: float
    mean_response_time_se: float
    times: np.ndarray | None
    paths: np.ndarray | None
    events: int
    resamples: int
    arrivals: int
    departures: int
    final_queues: np.ndarray
    wall_time: float
    seed: int
    n: int
    lam: float
    mu: float
    t_end: float
    burn_in: float


def _initial(initial, n):
    if initial is None:
        return np.zeros(n, np.int64)
    a = np.asarray(initial)
    if a.ndim != 1:
        raise ValueError("initial must be one-dimensional")
    if np.issubdtype(a.dtype, np.integer):
        if a.shape[0] != n or np.any(a < 0):
            raise ValueError("initial: queue lengths need length n and be >= 0")
        return a.astype(np.int64).copy()
    q = a.astype(float)
    if q.size == 0 or not np.isclose(q[0], 1) or np.any(np.diff(q) > 1e-12) \
            or np.any(q < 0):
        raise ValueError("initial: occupancy must have q[0]=1, non-increasing")
    cnt = np.round(n * q).astype(np.int64)  # servers with >= i tasks
    X = np.zeros(n, np.int64)
    for i in range(1, cnt.size):
        X[:cnt[i]] = i
    return X


def simulate(graph, lam, mu=0.0, *, t_end, burn_in=0.0, seed=None,
             levels=None, record_dt=None, initial=None, progress=False,
             batches=20):
    """Simulate JSQ on the closed neighbourhoods of ``graph``.

    Arrivals: rate ``lam`` per server, at a uniform position; a task joins a
    uniform shortest queue of the closed neighbourhood.  Relabelling at rate
    ``mu`` (``mu=inf``: before every arrival).  Returns time averages over
    ``[burn_in, t_end]`` with batch-means standard errors.
    ``progress`` is accepted but currently ignored (no time slicing).
    """
    if not isinstance(graph, Graph):
        raise TypeError("graph must be a qlib.graphs.Graph")
    lam = float(lam)
    if not np.isfinite(lam) or lam <= 0:
        raise ValueError(f"lam must be positive and finite, got {lam}")
    mu = float(mu)
    if np.isnan(mu) or mu < 0:
        raise ValueError(f"mu must be >= 0, got {mu}")
    t_end = float(t_end)
    burn_in = float(burn_in)
    if burn_in < 0 or not t_end > burn_in or not np.isfinite(t_end):
        raise ValueError("t_end must be finite and > burn_in >= 0")
    if lam >= 1:
        if burn_in != 0:
            raise ValueError("lam >= 1 (unstable) requires burn_in == 0")
        warnings.warn("lam >= 1: the system is not stable", RuntimeWarning)
    n = graph.n
    X = _initial(initial, n)
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    if isinstance(seed, np.random.SeedSequence):
        seed = int(seed.generate_state(1)[0])
    seed = int(seed) % (2**32)
    K = int(levels) if levels is not None else max(int(X.max()) + 1, 64)
    if K < max(1, int(X.max())):
        raise ValueError("levels must be >= max initial queue")
    if record_dt is not None:
        record_dt = float(record_dt)
        if not record_dt > 0:
            raise ValueError("record_dt must be positive")
        nrec = int(math.floor(t_end / record_dt)) + 1
    else:
        nrec, record_dt = 0, 1.0
    mu_inf = bool(np.isinf(mu))
    X0 = X.copy()
    w0 = time.perf_counter()
    out = _kernel(seed, graph.indptr, graph.indices, n, lam,
                  0.0 if mu_inf else mu, mu_inf, t_end, burn_in, int(batches),
                  X, K, record_dt, nrec)
    wall = time.perf_counter() - w0
    integ, rsum, rcnt, paths, events, res, arr, dep, overflow = out
    if overflow:
        raise RuntimeError(f"a queue exceeded levels={K}; rerun with more levels")
    blen = (t_end - burn_in) / batches
    occ_b = integ / (n * blen)
    occ = occ_b.mean(axis=0)
    occ_se = occ_b.std(axis=0, ddof=1) / np.sqrt(batches)
    # trim trailing zero levels
    nz = np.nonzero(occ > 0)[0]
    top = int(nz[-1]) + 2 if nz.size else 2
    occ, occ_se = occ[:top], occ_se[:top]
    with np.errstate(invalid="ignore", divide="ignore"):
        rb = rsum / rcnt
    R = rsum.sum() / max(rcnt.sum(), 1)
    ok = rcnt > 0
    R_se = rb[ok].std(ddof=1) / np.sqrt(ok.sum()) if ok.sum() > 1 else np.nan
    del X0
    return SimulationResult(
        occupancy=occ, occupancy_se=occ_se, mean_response_time=float(R),
        mean_response_time_se=float(R_se),
        times=(np.arange(nrec) * record_dt) if nrec else None,
        paths=paths[:, :top] if nrec else None, events=int(events),
        resamples=int(res), arrivals=int(arr), departures=int(dep),
        final_queues=X, wall_time=wall, seed=seed, n=n, lam=lam, mu=mu,
        t_end=t_end, burn_in=burn_in)
