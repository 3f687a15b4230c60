"""Exact event-driven JSQ on a (resampled) graph with general service times.

The model is that of :mod:`qlib.sim` (same graph, placement,
resampling, tie-breaking and occupancy bookkeeping; the lazy permutation, the
shortest-queue scan and the time bookkeeping are those of
``qlib.sim._loop``, with the uniforms drawn when needed from one stream),
except that a task's service time is
drawn from a :class:`qlib.sim.service.ServiceLaw` of mean 1 when it *starts*
service, and each server serves its queue in FIFO order.

Departures are no longer a Poisson stream, so they are scheduled: a
(4-ary) min-heap holds one ``(completion time, server)`` pair per busy server.  Only
the root is ever re-keyed (the next task of the departing server starts) or
removed (the server empties), and a new busy server is pushed, so the heap
needs no position index: O(log n) per departure and per arrival at an idle
server, O(1) otherwise.  Arrivals and resampling epochs still form a Poisson
stream of rate ``lam n + mu``; the next event is the earlier of its next
epoch and the heap's root.

Deterministic services need no heap.  Every service then lasts exactly 1,
so a completion time is its start time plus 1; services start at event
times, which never decrease, and rounding is monotone, so completion times
are scheduled in non-decreasing order and the earliest pending one is the
oldest.  A ring buffer of the pending ``(completion time, server)`` pairs,
pushed at the tail and taken from the head, is then exactly the heap: O(1)
per event, no sift, four pairs per cache line, read in order.  The
kernel takes this path whenever the law is deterministic.  It runs the same
events at the same times and draws the same random numbers, so a seeded run
returns the same results bit for bit as the heap (the tests compare them
with the heap kernel).  The one freedom is the order of departures with the
*same* completion time, which the model leaves open: the tasks present at
time 0 that keep their servers busy finish together at times 1, 2, ..., and
rounding can, rarely, make two starts less than an ulp of the clock apart
finish together.  Simultaneous departures change the state by the
same total in any order, and no arrival comes between them, so every field
of the result is the same; only ``response_times``, listed in order of
departure, may list a group of simultaneous departures in another order.

Response times: the mean is estimated on the arrival side, as in the
exponential kernel, by the conditional expectation given the state: a task
joining a server with ``k >= 1`` tasks has expected response time
``(C_s - t) + k`` (the residual of the task in service, which is known, plus
``k`` fresh services of mean 1), and 1 at an idle server.  With
``record_response=True`` every task also carries its arrival time through
its server's FIFO (a linked list in a pool of slots), and the measured
response time of every task that *leaves* in ``[burn_in, t_end]`` is
returned.  Selecting tasks by departure, not by arrival, avoids the survivor
bias of a window that would drop the long response times that have not ended
by ``t_end``; in a stationary run the tasks leaving in a window have the
law of the response time of a typical task.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numba
import numpy as np

from qlib.sim._loop import (EPOCH_MAX, _NB, _NJIT, _STARTED, _advance, _boundary,
                            _join, _load, _new_epoch, _store, _touch)
from qlib.sim.result import GENERAL_STREAM, SimulationResult
from qlib.sim.rng import _step
from qlib.sim.service import DET, check_law, draw
from qlib.sim.start import (_as_graph, _bookkeeping, _check_args, _grow, _initial,
                            _record_grid, _result, _seed, _tracked)
from typing import TYPE_CHECKING
from qlib.stats._results import fields_eq

if TYPE_CHECKING:   # names for the annotations only
    from qlib._types import GraphLike, Seed

__all__ = ["simulate_general", "GeneralSimulationResult"]

# the state vector: the shared entries of qlib.sim._loop, then these
_FREE, _NRESP, _RH = 10, 11, 12
_NST = 13


# --------------------------------------------------------------- heap ----
# A 4-ary min-heap of (completion time, server) pairs, interleaved in one
# float64 array (the server as an exact float): entry k lives in slots
# 2(k + 3), 2(k + 3) + 1, so the four children 4k + 1..4k + 4 of entry k
# fill the 64 bytes from slot 8(k + 1): one cache line per level.
_OFF = 3


@numba.njit(cache=True, inline="always")
def _sift_up(H, i, t, s):
    """Put (t, s) at the hole at entry ``i``, moving it up past the parents
    with later times."""
    while i > 0:
        p = (i - 1) >> 2
        tp = H[2 * (p + _OFF)]
        if tp <= t:
            break
        H[2 * (i + _OFF)] = tp
        H[2 * (i + _OFF) + 1] = H[2 * (p + _OFF) + 1]
        i = p
    H[2 * (i + _OFF)] = t
    H[2 * (i + _OFF) + 1] = s


@numba.njit(cache=True, inline="always")
def _push(H, size, t, s):
    """Add (t, s) to a heap of ``size`` entries; returns the new size."""
    _sift_up(H, size, t, s)
    return size + 1


@numba.njit(cache=True, inline="always")
def _sift_root(H, size, t, s):
    """Put (t, s) at the root of a heap of ``size`` entries and restore the
    heap order.  Bottom-up (Floyd): move the hole down along the smallest
    children to a leaf, then sift (t, s) up from there; the new key (a
    fresh completion time, late) usually stops near the bottom."""
    i = 0
    while True:
        c = 4 * i + 1
        if c >= size:
            break
        e = min(c + 4, size)
        m = c
        hm = H[2 * (c + _OFF)]
        for j in range(c + 1, e):
            hj = H[2 * (j + _OFF)]
            if hj < hm:
                hm = hj
                m = j
        H[2 * (i + _OFF)] = hm
        H[2 * (i + _OFF) + 1] = H[2 * (m + _OFF) + 1]
        i = m
    _sift_up(H, i, t, s)


@numba.njit(cache=True, inline="always")
def _rpush(H, head, size, cap, t, s):
    """Append (t, s) to the ring of ``size`` pairs from pair ``head`` on,
    modulo ``cap``; returns the new size."""
    i = head + size
    if i >= cap:
        i -= cap
    H[2 * i] = t
    H[2 * i + 1] = s
    return size + 1


@numba.njit(cache=True, inline="always")
def _begin(s, t, C, H, nb, root, rcap, fifo, lcode, lpar, s0, s1, s2, s3):
    """Server ``s``, idle until ``t``, starts a task: draw its service, note
    its completion time and schedule it (ring or heap of ``nb`` pairs).
    Returns (new nb, stream state)."""
    S, s0, s1, s2, s3 = draw(lcode, lpar, s0, s1, s2, s3)
    C[s] = t + S
    if fifo:
        nb = _rpush(H, root, nb, rcap, t + S, s)
    else:
        nb = _push(H, nb, t + S, s)
    return nb, s0, s1, s2, s3


# ------------------------------------------------------------- kernel ----
@numba.njit(**_NJIT)
def _gkernel(indptr, indices, n, lam, mu, mu_inf, t_end, burn_in, nbatch,
             slice_end, rec_dt, nrec, X, C, H, Q, P, A, rs, integ, last,
             rsum, rcnt, paths, cand, fs, st, epoch_max, lcode, lpar, record,
             head, tail, nxt, tarr, resp, fifo, unused):
    """Advance to ``slice_end``.  Returns 0 there, 1 when a queue reached
    the top tracked level, 2 when the task pool is full, 3 when the
    response-time record is full (the caller grows the arrays and calls
    again; the state is entirely in the arrays).  With ``fifo`` (constant
    service times) ``H`` holds a ring buffer of ``nb`` pairs from pair
    ``st[_RH]`` on, modulo ``n + 1``, instead of the heap.  ``unused``:
    (1 x 1 float64, 1 x 1 int64, 1 int64) arrays for what the shortest-queue
    scan takes and this kernel has not (uniforms drawn ahead, sampled
    neighbours, local maps)."""
    K = Q.shape[0] - 1
    epoch, kc, events, resamples, arrivals, departures, batch, irec = _load(st)
    nb = st[_NB]
    free = st[_FREE]
    nresp = st[_NRESP]
    # the earliest completion is the pair at index `root` of H: the heap's
    # root, or the ring's head (ring capacity n + 1 pairs, >= the busy servers)
    rcap = n + 1
    root = st[_RH] if fifo else _OFF
    t = fs[0]
    s0 = rs[0]
    s1 = rs[1]
    s2 = rs[2]
    s3 = rs[3]
    lamn = lam * n
    inv_lam = 1.0 / lam
    blen = (t_end - burn_in) / nbatch
    murate = 0.0 if mu_inf else mu
    prate = lamn + murate
    bu, bs, lz = unused
    if st[_STARTED] == 0:
        # tasks present at time 0 start service then
        for s in range(n):
            if X[s] > 0:
                nb, s0, s1, s2, s3 = _begin(s, t, C, H, nb, root, rcap, fifo, lcode, lpar,
                                            s0, s1, s2, s3)
        u, s0, s1, s2, s3 = _step(s0, s1, s2, s3)
        fs[1] = t - math.log(1.0 - u) / prate
        st[_STARTED] = 1
    tp = fs[1]
    row, nextb = _boundary(batch, nbatch, burn_in, blen, t_end)
    code = 0
    while True:
        dep = nb > 0 and H[2 * root] <= tp
        stop, t, irec, batch, row, nextb = _advance(
            t, H[2 * root] if dep else tp, slice_end, K, n, Q, last, integ, paths, irec,
            nrec, rec_dt, batch, row, nextb, nbatch, burn_in, blen, t_end)
        if stop:
            break
        events += 1
        if dep:
            s = np.int64(H[2 * root + 1])
            lv = X[s]
            _touch(lv, t, row, integ, Q, last)
            Q[lv] -= 1
            X[s] = lv - 1
            if record:
                f = head[s]
                if t >= burn_in and tarr[f] >= 0.0:
                    resp[nresp] = t - tarr[f]
                    nresp += 1
                    if nresp == resp.shape[0]:
                        code = 3
                head[s] = nxt[f]
                nxt[f] = free
                free = f
            if fifo:
                # take the head; the server's next task (if any) goes to the tail
                root += 1
                if root == rcap:
                    root = 0
                nb -= 1
                if lv > 1:
                    S, s0, s1, s2, s3 = draw(lcode, lpar, s0, s1, s2, s3)
                    C[s] = t + S
                    nb = _rpush(H, root, nb, rcap, t + S, s)
            elif lv > 1:
                S, s0, s1, s2, s3 = draw(lcode, lpar, s0, s1, s2, s3)
                C[s] = t + S
                _sift_root(H, nb, t + S, s)
            else:
                nb -= 1
                if nb > 0:
                    _sift_root(H, nb, H[2 * (nb + _OFF)], H[2 * (nb + _OFF) + 1])
            departures += 1
            if code:
                break
            continue
        u, s0, s1, s2, s3 = _step(s0, s1, s2, s3)
        u *= prate
        if u < lamn:
            v = np.int64(u * inv_lam)
            if v >= n:
                v = n - 1
            if mu_inf:
                kc = 0
                resamples += 1
                epoch = _new_epoch(epoch, P, A, epoch_max)
            s, bx, kc, s0, s1, s2, s3 = _join(v, 0, indptr, indices, X, cand, n, epoch,
                                              kc, P, A, bu, 0, bs, False, False, False,
                                              lz, lz, lz, lz, s0, s1, s2, s3)
            lv = bx + 1
            _touch(lv, t, row, integ, Q, last)
            Q[lv] += 1
            X[s] = lv
            if bx == 0:
                rsum[row] += 1.0
                nb, s0, s1, s2, s3 = _begin(s, t, C, H, nb, root, rcap, fifo, lcode, lpar,
                                            s0, s1, s2, s3)
            else:
                rsum[row] += C[s] - t + bx
            rcnt[row] += 1
            if record:
                f = free
                free = nxt[f]
                nxt[f] = -1
                tarr[f] = t
                if bx == 0:
                    head[s] = f
                else:
                    nxt[tail[s]] = f
                tail[s] = f
                if free < 0:
                    code = 2
            arrivals += 1
            if lv >= K:
                code = 1
        else:
            kc = 0
            resamples += 1
            epoch = _new_epoch(epoch, P, A, epoch_max)
        u, s0, s1, s2, s3 = _step(s0, s1, s2, s3)
        tp = t - math.log(1.0 - u) / prate
        if code:
            break
    fs[0] = t
    fs[1] = tp
    rs[0] = s0
    rs[1] = s1
    rs[2] = s2
    rs[3] = s3
    _store(st, epoch, kc, events, resamples, arrivals, departures, batch, irec)
    st[_NB] = nb
    st[_FREE] = free
    st[_NRESP] = nresp
    st[_RH] = root if fifo else 0
    return code


# ------------------------------------------------------------- result ----
@fields_eq
@dataclass(frozen=True, repr=False)
class GeneralSimulationResult(SimulationResult):
    """A :class:`qlib.sim.SimulationResult <qlib.sim.result.SimulationResult>` with general services.

    The inherited fields mean what they mean there, except that
    ``mean_response_time`` is the arrival-side estimator ``(C_s - t) + k``
    (residual of the task in service plus ``k`` mean services; 1 at an idle
    server), which is unbiased for FIFO with services drawn at the start.

    Attributes
    ----------
    service : qlib.sim.service.ServiceLaw
        The service law.
    response_times : numpy.ndarray or None
        With ``record_response=True``: measured response times of the tasks
        that left in ``[burn_in, t_end]``, in order of departure (tasks
        present at time 0, whose arrival times are unknown, excluded).
    """

    service: object = None
    response_times: np.ndarray = None


def _grow_pool(head, nxt, tarr, st):
    cap = nxt.size
    new = 2 * cap
    nxt2 = np.empty(new, np.int64)
    nxt2[:cap] = nxt
    nxt2[cap:] = np.arange(cap + 1, new + 1)
    nxt2[-1] = -1
    tarr2 = np.zeros(new)
    tarr2[:cap] = tarr
    st[_FREE] = cap
    return nxt2, tarr2


def _pool(X, burn_in):
    """Task pool holding the initial tasks (arrival time -1: never recorded)."""
    n = X.size
    tot = int(X.sum())
    cap = max(2 * tot, 2 * n, 16)
    head = np.full(n, -1, np.int64)
    tail = np.full(n, -1, np.int64)
    nxt = np.arange(1, cap + 1, dtype=np.int64)
    nxt[-1] = -1
    tarr = np.zeros(cap)
    k = 0
    for s in np.nonzero(X)[0]:
        m = int(X[s])
        idx = np.arange(k, k + m)
        nxt[idx[:-1]] = idx[1:]
        nxt[idx[-1]] = -1
        tarr[idx] = -1.0
        head[s], tail[s] = idx[0], idx[-1]
        k += m
    return head, tail, nxt, tarr, k


def simulate_general(graph: GraphLike, lam: float, mu: float = 0.0, *, t_end: float,
                     burn_in: float = 0.0, seed: Seed = None, levels: int | None = None,
                     record_dt: float | None = None, initial: object = None,
                     progress: bool = False, batches: int | None = None, service: object,
                     record_response: bool = False, warn: bool = True) -> SimulationResult:
    """JSQ on a resampled graph with FIFO servers and general services.

    Called by :func:`qlib.simulate <qlib.sim.run.simulate>` when ``service`` is a law (or when
    ``record_response=True``); the parameters are those of
    :func:`qlib.simulate <qlib.sim.run.simulate>`, plus

    Parameters
    ----------
    service : qlib.sim.service.ServiceLaw or None or "exp"
        The service law (None/"exp": :func:`qlib.sim.service.exponential`).
    record_response : bool
        Also return the measured response time of every task leaving in
        ``[burn_in, t_end]`` (memory: 8 bytes per such task, plus 16 per
        task present).
    warn : bool, default True
        As for :func:`qlib.simulate <qlib.sim.run.simulate>`.

    Returns
    -------
    GeneralSimulationResult
    """
    return _simulate_general(graph, lam, mu, t_end=t_end, burn_in=burn_in,
                             seed=seed, levels=levels, record_dt=record_dt,
                             initial=initial, progress=progress, batches=batches,
                             service=service, record_response=record_response, warn=warn)


def _simulate_general(graph, lam, mu=0.0, *, t_end, burn_in=0.0, seed=None,
                      levels=None, record_dt=None, initial=None, progress=False,
                      batches=None, service, record_response=False, warn=True, _fifo=None):
    """:func:`simulate_general`; ``_fifo`` (tests and benchmarks only) forces
    the ring buffer (True) or the heap (False) instead of choosing the ring
    exactly when the law is deterministic.  The ring is exact only for
    constant service times."""
    check_law(service)
    graph = _as_graph(graph)
    lam, mu, t_end, burn_in = _check_args(graph, lam, mu, t_end, burn_in, batches, warn=warn)
    return _general_checked(graph, lam, mu, t_end=t_end, burn_in=burn_in, seed=seed,
                            levels=levels, record_dt=record_dt, initial=initial,
                            progress=progress, batches=batches, service=service,
                            record_response=record_response, warn=warn, _fifo=_fifo)


def _general_checked(graph, lam, mu, *, t_end, burn_in, seed=None, levels=None,
                     record_dt=None, initial=None, progress=False, batches=None, service,
                     record_response=False, warn=True, _fifo=None):
    """:func:`_simulate_general` on a graph and rates already checked (a
    :class:`qlib.graphs.Graph`; ``lam, mu, t_end, burn_in`` as
    ``start._check_args`` returns them)."""
    from qlib.sim.service import exponential
    law = check_law(service)
    if law is None:
        law = exponential()
    if not isinstance(record_response, (bool, np.bool_)):
        raise TypeError("record_response must be a bool")
    record = bool(record_response)
    batches = None if batches is None else int(batches)
    n = graph.n
    ss, seed_out = _seed(seed)
    X = _initial(initial, n, ss)
    rs = ss.generate_state(4, np.uint64)
    if not rs.any():
        rs[0] = np.uint64(1)
    K = _tracked(levels, int(X.max()))
    nrec, record_dt = _record_grid(record_dt, t_end)
    mu_inf = bool(np.isinf(mu))
    # constant services finish in the order they start: a ring, not a heap
    fifo = law.code == DET if _fifo is None else bool(_fifo)
    # the graph's own arrays, 32- or 64-bit (no copy; the kernels compile
    # for each width)
    indptr, indices = graph.indptr, graph.indices
    maxdeg = int(np.diff(indptr).max()) if n else 0
    Q = np.bincount(X, minlength=K + 1)[::-1].cumsum()[::-1].astype(np.int64)
    if record:
        head, tail, nxt, tarr, used = _pool(X, burn_in)
        resp = np.empty(max(1024, int(min(lam * n * (t_end - burn_in) * 1.1, 2**26))))
    else:
        head = tail = nxt = np.zeros(1, np.int64)
        tarr = resp = np.zeros(1)
        used = 0
    X = X.astype(np.int32, copy=False)   # _initial's int32 start, no copy
    C = np.zeros(n)
    H = np.empty(2 * (n + _OFF + 1))
    P = np.full(n, -1, np.int64)
    A = np.full(n, -1, np.int64)
    nfine, integ, last, rsum, rcnt, paths, fs, st = _bookkeeping(batches, K, nrec, _NST)
    cand = np.empty(maxdeg + 1, np.int64)
    st[_FREE] = used if record and used < nxt.size else -1
    unused = (np.zeros((1, 1)), np.zeros((1, 1), np.int64), np.zeros(1, np.int64))
    if progress:
        from tqdm.auto import tqdm
        nslices = 100
        bar = tqdm(total=t_end, unit="time", desc=f"simulate n={n} ({law.name})")
    else:
        nslices, bar = 1, None
    w0 = time.perf_counter()
    try:
        for j in range(1, nslices + 1):
            slice_end = t_end if j == nslices else t_end * j / nslices
            while True:
                if record and st[_FREE] < 0:
                    nxt, tarr = _grow_pool(head, nxt, tarr, st)
                code = _gkernel(indptr, indices, n, lam, mu, mu_inf, t_end,
                                burn_in, nfine, slice_end, record_dt, nrec, X, C,
                                H, Q, P, A, rs, integ, last, rsum, rcnt,
                                paths, cand, fs, st, EPOCH_MAX, law.code,
                                law.params, record, head, tail, nxt, tarr, resp,
                                fifo, unused)
                if code == 0:
                    break
                if code == 1:
                    K = 2 * K
                    Q, integ = _grow(Q, K + 1), _grow(integ, K + 1)
                    last, paths = _grow(last, K + 1), _grow(paths, K + 1)
                elif code == 3:
                    resp = np.concatenate([resp, np.empty(resp.size)])
            if bar is not None:
                bar.update(slice_end - bar.n)
    finally:
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - w0
    return _finish(integ, rsum, rcnt, paths, X, st, nfine, n, K, levels, batches,
                   t_end, burn_in, nrec, record_dt, wall, seed_out, lam, mu, law,
                   resp[:st[_NRESP]].copy() if record else None, warn=warn)


def _finish(integ, rsum, rcnt, paths, X, st, nfine, n, K, levels, batches, t_end,
            burn_in, nrec, record_dt, wall, seed_out, lam, mu, law, resp, warn=True):
    """Time averages, batch-means errors and the result (as in simulate)."""
    return _result(GeneralSimulationResult, integ, rsum, rcnt, paths, X, st, nfine, n, K,
                   levels, batches, t_end, burn_in, nrec, record_dt, wall, seed_out, lam, mu,
                   warn, service=law, response_times=resp, stream=GENERAL_STREAM)
