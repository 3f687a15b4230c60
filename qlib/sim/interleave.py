"""Interleaved replications: one loop advances R independent runs of the same model.

:func:`~qlib.sim.replications.replicate` spends its time in many independent runs of one model on
one graph.  :func:`~qlib.sim.interleave.simulate_interleaved` runs a group of them in one jitted
loop: a round robin over the replications, each visit running ``block``
events of one replication with its own pipeline (the drawn-ahead ring of
:mod:`qlib.sim.kernel`), so the cache lines that replication ``r``'s next
events need are asked for while the other replications run.  Each
replication has its own arrays (queues, lazy permutation, level integrals,
xoshiro streams, ring) and the visit (``_chunk``) is the exponential
kernel's event loop (``qlib.sim._loop._events``, compiled with a budget of
events per visit), cut only where all state is in the arrays, as at the
slice ends of ``progress=True``.  So every replication's random stream and
path, and every field of its result but ``wall_time``, are bit for bit what
:func:`qlib.sim.simulate <qlib.sim.run.simulate>` returns for the same seed alone
(``tests/test_interleave.py``); interleaving changes speed only.

Memory: a group of G replications holds G copies of the 24-byte-per-server
state, so :func:`~qlib.sim.replications.replicate` groups at most ``_group_size(n, ...)``
replications together.
"""
from __future__ import annotations

import inspect
import time
import numba
import numpy as np
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:   # names for the annotations only
    from qlib._types import GraphLike

from qlib.sim._loop import EPOCH_MAX, _BATCH, _EC, _NJIT, _NST, _events
from qlib.sim.kernel import _depth
from qlib.sim.result import SimulationResult, _FINE
from qlib.sim.start import (_as_graph, _check_args, _grow, _initial, _record_grid, _result,
                            _seed, _tracked)

__all__ = ['simulate_interleaved']

# whether the start state is drawn from the run's seed (an occupancy vector
# as ``initial``: which servers carry the load), as simulate does
_SEEDED_START = len(inspect.signature(_initial).parameters) >= 3


@numba.njit(**_NJIT)
def _chunk(indptr, indices, n, lam, mu, mu_inf, t_end, burn_in, nbatch,
           slice_end, rec_dt, nrec, X, Q, P, A, rs, integ, last, rsum,
           rcnt, paths, cand, fs, st, epoch_max, bt, bk, bu, K, ec_stop,
           lslot, lval, lpos, lsrv, ch, bs):
    """One visit of the interleaved loop to one replication: the event loop
    of ``qlib.sim.kernel._kernel`` (``qlib.sim._loop._events``, whole
    neighbourhoods), with the tracked top level ``K`` passed in (the level
    arrays of all replications share one allocated width ``>= K + 1``) and
    the scratch maps of mu = inf passed in (``ch = 0``, whole
    neighbourhoods, comes as a value: compiled in as a constant it measured
    up to 10 % slower; ``bs``: an unused 1 x 1 array);
    the visit also stops, with code 2, at the top of the loop once ``ec``
    (events run from the ring) reaches ``ec_stop`` -- a point where all
    state is in the arrays, as at a slice end, so where the visits are cut
    changes no bit."""
    par = (n, lam, mu, mu_inf, t_end, burn_in, nbatch, slice_end, rec_dt, nrec, epoch_max)
    return _events(indptr, indices, par, X, Q, P, A, rs, integ, last, rsum, rcnt, paths,
                   cand, fs, st, bt, bk, bu, ch, bs, K, ec_stop, (lslot, lval, lpos, lsrv),
                   True)


@numba.njit(**_NJIT)
def _many(indptr, indices, n, lam, mu, mu_inf, t_end, burn_in, nbatch, rec_dt,
          nrec, XA, Q, P, rs, integ, last, rsum, rcnt, paths, cand, fs, st, kr,
          done, epoch_max, bt, bk, bu, block, lslot, lval, lpos, lsrv, bs):
    """Round robin over the replications not yet ``done``: ``block`` events
    of each in turn (``_chunk``), until every one reaches ``t_end``.

    ``kr[r]`` is replication r's tracked top level (what ``K`` is alone);
    when r's queue reaches it, it doubles, and when it outgrows the shared
    width of the level arrays the loop returns 1 so that the caller widens
    them (zeros, as alone) and calls again; 0 when all are done.  ``bs``:
    an unused 1 x 1 int64 array (no sampled neighbours)."""
    R = XA.shape[0]
    kal = Q.shape[1] - 1
    left = 0
    for r in range(R):
        if done[r] == 0:
            left += 1
    while left > 0:
        for r in range(R):
            if done[r]:
                continue
            code = _chunk(indptr, indices, n, lam, mu, mu_inf, t_end, burn_in,
                          nbatch, t_end, rec_dt, nrec, XA[r, :, 1], Q[r], P[r],
                          XA[r, :, 0], rs[r], integ[r], last[r], rsum[r],
                          rcnt[r], paths[r], cand, fs[r], st[r], epoch_max,
                          bt[r], bk[r], bu[r], kr[r], st[r, _EC] + block,
                          lslot, lval, lpos, lsrv, 0, bs)
            if code == 0:
                done[r] = 1
                left -= 1
            elif code == 1:
                kr[r] = 2 * kr[r]
                if kr[r] > kal:
                    return 1
    return 0


def _block(n):
    """Events per visit.  A visit costs about 280 ns of bookkeeping (the
    call, the replication's array views and about 40 scalars in and out;
    measured as the difference between blocks of 16 and 64 at n = 1000),
    so at 256 events it adds about 1 ns per event."""
    return 256


def simulate_interleaved(graph: GraphLike, lam: float, mu: float = 0.0, *, seeds: Sequence,
                         t_end: float, burn_in: float = 0.0, levels: int | None = None,
                         record_dt: float | None = None, initial: object = None,
                         batches: int | None = None, depth: int | None = None,
                         block: int | None = None, warn: bool = True) -> list[SimulationResult]:
    """Independent runs of :func:`qlib.sim.simulate <qlib.sim.run.simulate>` (exponential services),
    one per seed, advanced together in one interleaved loop.

    Parameters
    ----------
    graph, lam, mu, t_end, burn_in, levels, record_dt, initial, batches, warn
        As for :func:`qlib.sim.simulate <qlib.sim.run.simulate>`, the same for every run.
    seeds : sequence of (None, int >= 0 or numpy.random.SeedSequence)
        One per run; run ``r`` returns what ``simulate(..., seed=seeds[r])``
        returns, bit for bit (every field but ``wall_time``).
    depth : int, optional
        Pipeline depth of each run (a power of 2; default: as alone for
        one run, else 1 while the group's ``R n`` servers number less than
        2**17, 32 beyond).  Changes speed only.
    block : int, optional
        Events per visit of the round robin (default ``_block``).
        Changes speed only.

    Returns
    -------
    list of SimulationResult
        ``wall_time`` is the loop's time divided by the number of runs.
    """
    graph = _as_graph(graph)
    lam, mu, t_end, burn_in = _check_args(graph, lam, mu, t_end, burn_in, batches, warn=warn)
    return _interleaved_checked(graph, lam, mu, seeds=seeds, t_end=t_end, burn_in=burn_in,
                                levels=levels, record_dt=record_dt, initial=initial,
                                batches=batches, depth=depth, block=block, warn=warn)


def _interleaved_checked(graph, lam, mu, *, seeds, t_end, burn_in, levels=None,
                         record_dt=None, initial=None, batches=None, depth=None,
                         block=None, warn=True):
    """:func:`simulate_interleaved` on a graph and rates already checked (a
    :class:`qlib.graphs.Graph`; ``lam, mu, t_end, burn_in`` as
    ``start._check_args`` returns them)."""
    batches = None if batches is None else int(batches)
    seeds = list(seeds)
    R = len(seeds)
    if R < 1:
        raise ValueError("seeds must hold at least one seed")
    n = graph.n
    rs = np.empty((R, 8), np.uint64)
    seed_out, sss = [], []
    for r, sd in enumerate(seeds):
        ss, so = _seed(sd)
        seed_out.append(so)
        sss.append(ss)
        rs[r] = ss.generate_state(8, np.uint64)   # two xoshiro streams
        for k in (0, 4):
            if not rs[r, k:k + 4].any():  # xoshiro's one forbidden state
                rs[r, k] = np.uint64(1)
    # the start state of run r, as simulate draws it (from its seed, where
    # the start state takes one)
    start = ((lambda r: _initial(initial, n, sss[r])) if _SEEDED_START
             else (lambda r: _initial(initial, n)))
    X0 = start(0)
    _tracked(levels, 0)   # levels checked before the record grid, as alone
    Ks = np.empty(R, np.int64)
    nrec, record_dt = _record_grid(record_dt, t_end)
    mu_inf = bool(np.isinf(mu))
    # the graph's own arrays, 32- or 64-bit (no copy; the kernels compile
    # for each width)
    indptr, indices = graph.indptr, graph.indices
    maxdeg = int(np.diff(indptr).max()) if n else 0
    if depth is None:
        # the group's state is R copies of n servers: pipelined once it
        # outgrows the L2 cache (measured at n = 1e4: R = 4 is faster
        # unpipelined, R = 16 pipelined)
        depth = _depth(n) if R == 1 else (1 if n * R < 2**17 else 32)
    depth = int(depth)
    if depth < 1 or depth & (depth - 1):
        raise ValueError(f"depth must be a power of 2, got {depth}")
    block = _block(n) if block is None else int(block)
    if block < 1:
        raise ValueError(f"block must be >= 1, got {block}")

    XA = np.empty((R, n, 2), np.int64)   # per run: slot A and queue X, one record
    XA[:, :, 0] = -1
    for r in range(R):
        X = X0 if r == 0 else start(r)
        Ks[r] = _tracked(levels, int(X.max()))
        XA[r, :, 1] = X
    K = int(Ks.max())
    Q = np.zeros((R, K + 1), np.int64)
    for r in range(R):
        Q[r, :Ks[r] + 1] = np.bincount(XA[r, :, 1], minlength=Ks[r] + 1)[::-1].cumsum()[::-1]
    del X0, X
    P = np.full((R, n), -1, np.int64)
    nfine = _FINE if batches is None else batches
    integ = np.zeros((R, nfine + 1, K + 1))
    last = np.zeros((R, K + 1))
    rsum = np.zeros((R, nfine + 1))
    rcnt = np.zeros((R, nfine + 1))
    paths = np.zeros((R, nrec, K + 1))
    cand = np.empty(maxdeg + 1, np.int64)
    m = maxdeg + 1
    lslot, lval = np.empty(m, np.int64), np.empty(m, np.int64)
    lpos, lsrv = np.empty(m, np.int64), np.empty(m, np.int64)
    fs = np.zeros((R, 2))
    st = np.zeros((R, _NST), np.int64)
    st[:, _BATCH] = -1
    kr = Ks
    done = np.zeros(R, np.int64)
    bt = np.zeros((R, depth))
    bk = np.zeros((R, depth), np.int64)
    bu = np.zeros((R, depth, maxdeg + 2))

    w0 = time.perf_counter()
    while _many(indptr, indices, n, lam, mu, mu_inf, t_end, burn_in, nfine,
                record_dt, nrec, XA, Q, P, rs, integ, last, rsum, rcnt, paths,
                cand, fs, st, kr, done, EPOCH_MAX, bt, bk, bu, block,
                lslot, lval, lpos, lsrv, np.zeros((1, 1), np.int64)):
        K1 = int(kr.max()) + 1     # a run outgrew the shared level width
        Q = _grow(Q, K1)
        integ = _grow(integ, K1)
        last = _grow(last, K1)
        paths = _grow(paths, K1)
    wall = (time.perf_counter() - w0) / R

    out = []
    for r in range(R):
        Kr = int(kr[r])
        # the arrays run r would have alone (contiguous, width Kr + 1), so
        # that the reductions below are the same operations on the same data
        integ_r = np.ascontiguousarray(integ[r, :, :Kr + 1])
        paths_r = np.ascontiguousarray(paths[r, :, :Kr + 1])
        out.append(_result(SimulationResult, integ_r, np.ascontiguousarray(rsum[r]),
                           np.ascontiguousarray(rcnt[r]), paths_r, XA[r, :, 1], st[r], nfine,
                           n, Kr, levels, batches, t_end, burn_in, nrec, record_dt, wall,
                           seed_out[r], lam, mu, warn))
    return out
