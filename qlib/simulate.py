"""Event-driven simulation of JSQ on a (resampled) graph, O(1) per event.

The model (``shared/MATH.md``): ``n`` single-server FIFO queues with Exp(1)
services; tasks arrive at rate ``lam`` per server (total ``lam * n``) at a
uniformly random position of a fixed base graph on positions; a task joins a
shortest queue of the *closed* neighbourhood of its position, ties broken
uniformly at random among all shortest queues.  Servers sit on positions by a
permutation, redrawn uniformly at the epochs of a Poisson process of total
rate ``mu`` (``mu = 0``: static graph; ``mu = inf``: a fresh permutation
before every arrival).  At time 0 server ``s`` sits at position ``s``.

Implementation (all O(1) per event, memory 24 bytes per server):

* the permutation of the current epoch is materialised lazily, one position
  at a time, only where an arrival looks: a sparse Fisher–Yates shuffle whose
  entries are stamped with the epoch number, so a resampling is ``epoch += 1``
  (stamp and server packed in one int64; the stamps are cleared, O(n), once
  every 2**31 epochs); slot ``j`` of the shuffle and the queue length of
  server ``j`` share one 16-byte record, hence one cache line; under
  ``mu = inf`` the shuffle of each arrival lives in small local maps;
* events are drawn by uniformization at the constant rate
  ``lam n + n + mu``: a departure candidate is a uniform server, a real
  departure if it is busy (so a real departure is from a uniform busy
  server at total rate ``Q_1``), and nothing happens otherwise;
* ``Q[i]`` = number of servers with at least ``i`` tasks; its time integral is
  kept per level with a per-level "last change" time, so an event touches only
  the one level it changes;
* the random numbers come from two xoshiro256++ streams (state: eight
  ``uint64`` words passed in and out of the kernel), seeded from
  ``numpy.random.SeedSequence``; what an event draws does not depend on the
  state, so the kernel draws the events ``e+1, ..., e+D`` ahead and asks for
  their cache lines (software prefetch) while event ``e`` runs: at large n
  the memory misses of D events overlap (see "the pipeline" below).  The
  kernel can stop at any time (``progress=True`` bars, growing the tracked
  levels) and resume with bitwise-identical results.
"""
from __future__ import annotations

import math
import os
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from qlib import stats
from qlib.graphs import Graph

__all__ = ["simulate", "SimulationResult", "replicate", "ReplicationResult"]

# ---------------------------------------------------------------- PRNG ----
_U11 = np.uint64(11)
_U17 = np.uint64(17)
_U23 = np.uint64(23)
_U41 = np.uint64(41)
_U45 = np.uint64(45)
_U19 = np.uint64(19)
_TWO53 = 1.0 / 9007199254740992.0  # 2**-53


@numba.njit(cache=True, inline="always")
def _step(s0, s1, s2, s3):
    """xoshiro256++ (Blackman & Vigna) on a state held in local variables
    (registers): returns (uniform double in [0, 1) from the top 53 bits of
    the output, new state).  The state lives in locals rather than an array
    because an array state would be reloaded and stored around every write
    to another array; the kernel copies it in and out of ``rs``."""
    x = s0 + s3
    res = ((x << _U23) | (x >> _U41)) + s0
    t = s1 << _U17
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = (s3 << _U45) | (s3 >> _U19)
    return float(res >> _U11) * _TWO53, s0, s1, s2, s3


@numba.njit(cache=True, inline="always")
def _next(s0, s1, s2, s3):
    """xoshiro256++ as :func:`_step`, returning the raw 64-bit output."""
    x = s0 + s3
    res = ((x << _U23) | (x >> _U41)) + s0
    t = s1 << _U17
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = (s3 << _U45) | (s3 >> _U19)
    return res, s0, s1, s2, s3


def _ziggurat_tables(r=7.69711747013104972, v=0.0039496598225815571993):
    """Marsaglia & Tsang's 256-layer ziggurat for Exp(1), 53-bit version (as
    in numpy's ``random_standard_exponential``): ``ke`` acceptance bounds,
    ``we`` scales, ``fe`` the density at the layers' edges."""
    m = 2.0**53
    ke = np.zeros(256, np.uint64)
    we = np.zeros(256)
    fe = np.zeros(256)
    q = v / math.exp(-r)
    ke[0] = np.uint64(int(r / q * m))
    we[0], we[255] = q / m, r / m
    fe[0], fe[255] = 1.0, math.exp(-r)
    de = tde = r
    for i in range(254, 0, -1):
        de = -math.log(v / de + math.exp(-de))
        ke[i + 1] = np.uint64(int(de / tde * m))
        tde = de
        fe[i] = math.exp(-de)
        we[i] = de / m
    return ke, we, fe, r


_ZKE, _ZWE, _ZFE, _ZR = _ziggurat_tables()
_U3 = np.uint64(3)
_U8 = np.uint64(8)
_UFF = np.uint64(0xFF)


@numba.njit(cache=True, inline="always")
def _exp1(s0, s1, s2, s3):
    """An Exp(1) variate by the ziggurat (exact; about 99 % of the draws
    take one 64-bit output, a multiply and a compare, no logarithm).
    Returns (x, new state)."""
    while True:
        ri, s0, s1, s2, s3 = _next(s0, s1, s2, s3)
        ri >>= _U3
        idx = ri & _UFF
        ri >>= _U8
        x = float(ri) * _ZWE[idx]
        if ri < _ZKE[idx]:
            return x, s0, s1, s2, s3
        u, s0, s1, s2, s3 = _step(s0, s1, s2, s3)
        if idx == 0:  # the tail beyond r: r + Exp(1), by memorylessness
            return _ZR - math.log1p(-u), s0, s1, s2, s3
        if (_ZFE[idx - 1] - _ZFE[idx]) * u + _ZFE[idx] < math.exp(-x):
            return x, s0, s1, s2, s3


# ---------------------------------------------------------- the kernel ----
# The exponential kernel below runs a software pipeline: the random numbers
# of event e + D are drawn, and the cache lines it will touch are requested
# (``_prefetch``), while event e runs, so the memory misses of about D events
# overlap instead of queueing one after the other.  That needs the random
# numbers an event uses, and hence the addresses it touches, to be known
# before the event runs, independently of the state:
#
# * uniformization: events are drawn at the constant total rate
#   ``R = lam n + n + mu`` (``mu`` counted only when finite): an arrival at a
#   uniform position with probability ``lam n / R``, a *departure candidate*
#   (a uniform server; a real departure if it is busy, else nothing happens)
#   with probability ``n / R``, a resampling epoch with ``mu / R``.  A real
#   departure is thus from a uniform busy server at total rate ``Q_1``, as in
#   the model; no busy list is needed;
# * two xoshiro256++ streams: stream 1 draws, per event, the time increment,
#   the event, and (arrivals) the tie-breaking uniform; stream 2 draws one
#   uniform per position of an arrival's closed neighbourhood (when mu > 0),
#   used by the lazy permutation if that position is new in its epoch.
#
# Each stream is used in event order and the number of draws per event does
# not depend on the state, so the result is the same for every pipeline depth
# D (``_depth``; tests/test_simulate_pipeline.py checks depth 1 against 32 bit
# for bit); D only changes speed.
_EPOCH, _KC, _NB, _EVENTS, _RES, _ARR, _DEP, _BATCH, _IREC, _STARTED = range(10)
_H0, _H1, _EC = 10, 11, 12   # events drawn by stream 1, by stream 2, run
_NST = 13


_LOW = np.int64(0xFFFFFFFF)
_HI = np.int64(32)
EPOCH_MAX = 2**31 - 1  # stamps live in the high 32 bits of P and A


@numba.njit(cache=True, inline="always")
def _lookup(w, epoch, P, A, kc, n, s0, s1, s2, s3):
    """Server at position ``w`` under the current epoch's permutation (the
    kernel before issue 19; still used by :mod:`qlib._general`).

    ``P[w] = stamp << 32 | server`` caches positions already drawn this
    epoch; the first look at ``w`` draws its server uniformly from those not
    yet used (sparse Fisher–Yates on ``A``, entries stamped with the epoch;
    unstamped entries mean the identity).  Returns (server, new kc, new
    PRNG state).
    """
    pw = P[w]
    if (pw >> _HI) == epoch:
        return pw & _LOW, kc, s0, s1, s2, s3
    u, s0, s1, s2, s3 = _step(s0, s1, s2, s3)
    j = kc + np.int64(u * (n - kc))
    if j >= n:  # floating-point guard, probability ~2**-53
        j = n - 1
    a = A[kc]
    ak = a & _LOW if (a >> _HI) == epoch else kc
    a = A[j]
    aj = a & _LOW if (a >> _HI) == epoch else j
    # slot kc is used up for this epoch (later draws are from kc+1..n-1), so
    # only slot j needs to be written
    A[j] = (epoch << _HI) | ak
    P[w] = (epoch << _HI) | aj
    return aj, kc + 1, s0, s1, s2, s3


@intrinsic
def _prefetch(typingctx, arr, idx):
    """Ask for the cache line of ``arr[idx]`` (``llvm.prefetch``, for writing,
    keep in all cache levels).  A hint only: it changes no value."""
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]],
                                       wraparound=False)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty,
                                            "llvm.prefetch.p0")
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(1), i32(3), i32(1)])
        return context.get_dummy_value()
    return sig, codegen


@numba.njit(cache=True, inline="always")
def _slot(u, kc, n):
    """Fisher–Yates slot for the uniform ``u``: uniform on ``kc..n-1``.

    ``y = u n`` is uniform on [0, n); if ``int(y) >= kc`` it is the slot,
    else ``y / kc`` is again uniform on [0, 1) and is mapped onto
    ``kc..n-1``: each free slot gets probability ``1/n + (kc/n)/(n-kc) =
    1/(n-kc)``.  The slot is ``int(u n)`` whenever that is free, whatever
    ``kc`` is, so the pipeline knows it in advance (``kc`` is not).
    """
    y = u * n
    j = np.int64(y)
    if j < kc:
        j = kc + np.int64((y / kc) * (n - kc))
    if j >= n:  # floating-point guard, probability ~2**-53
        j = n - 1
    return j


@numba.njit(cache=True, inline="always")
def _place(w, u, epoch, P, A, kc, n):
    """Server at position ``w`` under the current epoch's permutation; the
    lazy, stamped sparse Fisher–Yates shuffle of ``_lookup``, with the
    uniform ``u`` drawn in advance (used only if ``w`` is new in this
    epoch).  Returns (server, new kc)."""
    pw = P[w]
    if (pw >> _HI) == epoch:
        return pw & _LOW, kc
    j = _slot(u, kc, n)
    a = A[kc]
    ak = a & _LOW if (a >> _HI) == epoch else kc
    a = A[j]
    aj = a & _LOW if (a >> _HI) == epoch else j
    # slot kc is used up for this epoch (later draws are from kc+1..n-1), so
    # only slot j needs to be written
    A[j] = (epoch << _HI) | ak
    P[w] = (epoch << _HI) | aj
    return aj, kc + 1


@numba.njit(cache=True, inline="always")
def _place_local(w, u, kc, n, lslot, lval, lpos, lsrv):
    """:func:`_place` under a permutation that is fresh for this arrival
    (mu = inf), its Fisher–Yates steps held in small local maps instead of
    ``A`` and ``P``: step ``q < kc`` placed position ``lpos[q]`` (server
    ``lsrv[q]``) and set slot ``lslot[q]`` to ``lval[q]``.  Returns (server,
    new kc): the same as :func:`_place` from the same draws."""
    for q in range(kc):
        if lpos[q] == w:    # a position met twice (a multigraph): cached
            return lsrv[q], kc
    j = _slot(u, kc, n)
    ak = kc
    aj = j
    for q in range(kc):     # the latest write to a slot wins
        if lslot[q] == kc:
            ak = lval[q]
        if lslot[q] == j:
            aj = lval[q]
    lslot[kc] = j
    lval[kc] = ak
    lpos[kc] = w
    lsrv[kc] = aj
    return aj, kc + 1


@numba.njit(cache=True, nogil=True)
def _kernel(indptr, indices, n, lam, mu, mu_inf, t_end, burn_in, nbatch,
            slice_end, rec_dt, nrec, X, Q, P, A, rs, integ, last, rsum,
            rcnt, paths, cand, fs, st, epoch_max, bt, bk, bu):
    """Advance the simulation to ``slice_end`` (<= t_end).

    Returns 0 when ``slice_end`` is reached, 1 when a queue has reached the
    top tracked level ``K = Q.size - 1`` (the caller grows the level arrays
    and calls again).  All state lives in the arrays, the drawn but not yet
    run events included (``bt``: times, ``bk``: what, ``bu``: uniforms, a
    ring of ``D = bt.size`` events, a power of 2), so where the run is cut
    into slices does not change it.  ``fs = [t, time of the last drawn
    event]``; ``rs`` holds the two xoshiro streams.
    """
    K = Q.shape[0] - 1
    D = bt.shape[0]
    mask = D - 1
    D1 = max((2 * D) // 3, 1)   # stream 2 draws this far ahead
    D2 = D // 3                 # the servers' lines are asked for this far ahead
    pf = D > 1
    epoch = st[_EPOCH]
    kc = st[_KC]
    events = st[_EVENTS]
    resamples = st[_RES]
    arrivals = st[_ARR]
    departures = st[_DEP]
    batch = st[_BATCH]
    irec = st[_IREC]
    h0 = st[_H0]
    h1 = st[_H1]
    ec = st[_EC]
    t = fs[0]
    td = fs[1]
    s0, s1, s2, s3 = rs[0], rs[1], rs[2], rs[3]
    r0, r1, r2, r3 = rs[4], rs[5], rs[6], rs[7]
    lamn = lam * n
    inv_lam = 1.0 / lam
    murate = 0.0 if mu_inf else mu
    R = lamn + n + murate
    inv_R = 1.0 / R
    looks = mu > 0.0        # mu = 0: the identity placement, no draws
    # mu = inf: each arrival sees a fresh permutation, so its Fisher–Yates
    # steps and placed positions live in small local maps instead of A and P
    # (the same servers from the same draws, without their memory traffic)
    m = cand.shape[0]
    local = mu_inf and m <= 16
    lslot = np.empty(m, np.int64)
    lval = np.empty(m, np.int64)
    lpos = np.empty(m, np.int64)
    lsrv = np.empty(m, np.int64)
    blen = (t_end - burn_in) / nbatch
    # row of integ/rsum/rcnt that the current time belongs to; row nbatch
    # collects the burn-in and is discarded
    row = batch if batch >= 0 else nbatch
    if batch < 0:
        nextb = burn_in
    elif batch < nbatch - 1:
        nextb = burn_in + (batch + 1) * blen
    else:
        nextb = t_end
    code = 0
    while True:
        # stage 0, event ec + D: stream 1; ask for its first lines
        while h0 < ec + D:
            sl = h0 & mask
            e, s0, s1, s2, s3 = _exp1(s0, s1, s2, s3)
            td += e * inv_R
            bt[sl] = td
            u, s0, s1, s2, s3 = _step(s0, s1, s2, s3)
            x = u * R
            if x < lamn:
                # arrival at a uniform position v (x / lam is uniform on [0, n))
                v = np.int64(x * inv_lam)
                if v >= n:
                    v = n - 1
                bk[sl] = v
                u, s0, s1, s2, s3 = _step(s0, s1, s2, s3)
                bu[sl, 0] = u
                if pf:
                    _prefetch(indptr, v)
                    if looks and not local:
                        _prefetch(P, v)
                    else:
                        _prefetch(X, v)
            elif x < lamn + n:
                j = np.int64(x - lamn)
                if j >= n:
                    j = n - 1
                bk[sl] = n + j           # departure candidate: server j
                if pf:
                    _prefetch(X, j)
            else:
                bk[sl] = -1              # resampling epoch
            h0 += 1
        # stage 1, event ec + D1: stream 2; the neighbours and the slots
        while h1 < ec + D1:
            sl = h1 & mask
            v = bk[sl]
            if 0 <= v < n:
                lo = indptr[v]
                if pf:
                    _prefetch(indices, lo)
                if looks:
                    for k in range(indptr[v + 1] - lo + 1):
                        u, r0, r1, r2, r3 = _step(r0, r1, r2, r3)
                        bu[sl, k + 1] = u
                        if pf:
                            j = min(np.int64(u * n), n - 1)
                            if not local:
                                _prefetch(A, j)
                            _prefetch(X, j)   # the server, unless slot j moved
            h1 += 1
        # stage 2, event ec + D2: the servers' lines (prefetch only)
        if D2 > 0:
            sl = (ec + D2) & mask
            v = bk[sl]
            if 0 <= v < n:
                lo = indptr[v]
                hi = indptr[v + 1]
                if not looks:
                    for p in range(lo, hi):
                        _prefetch(X, indices[p])
                elif not mu_inf:
                    # positions or slots already used in this epoch hold
                    # another server: ask for its line
                    for k in range(hi - lo + 1):
                        w = v if k == 0 else indices[lo + k - 1]
                        pw = P[w]
                        if (pw >> _HI) == epoch:
                            _prefetch(X, pw & _LOW)
                        else:
                            a = A[min(np.int64(bu[sl, k + 1] * n), n - 1)]
                            if (a >> _HI) == epoch:
                                _prefetch(X, a & _LOW)
        # run event ec
        sl = ec & mask
        tnext = bt[sl]
        stop = tnext >= slice_end
        tstop = slice_end if stop else tnext
        while irec < nrec and irec * rec_dt <= tstop:
            for i in range(K + 1):
                paths[irec, i] = Q[i] / n
            irec += 1
        while batch < nbatch and nextb <= tstop:
            for i in range(K + 1):
                integ[row, i] += Q[i] * (nextb - last[i])
                last[i] = nextb
            batch += 1
            row = batch
            if batch < nbatch - 1:
                nextb = burn_in + (batch + 1) * blen
            else:
                nextb = t_end
        if stop:
            if slice_end >= t_end:
                t = t_end
            break
        t = tnext
        ec += 1
        v = bk[sl]
        if v >= n:
            # departure candidate: a real departure if the server is busy
            s = v - n
            lv = X[s]
            if lv == 0:
                continue
            integ[row, lv] += Q[lv] * (t - last[lv])
            last[lv] = t
            Q[lv] -= 1
            X[s] = lv - 1
            departures += 1
        elif v >= 0:
            if mu_inf:
                epoch += 1
                kc = 0
                resamples += 1
                if epoch > epoch_max:  # stamps would overflow: start afresh
                    P[:] = -1
                    A[:] = -1
                    epoch = 1
            lo = indptr[v]
            if local:
                s, kc = _place_local(v, bu[sl, 1], 0, n, lslot, lval, lpos, lsrv)
            elif epoch == 0:
                s = v
            else:
                s, kc = _place(v, bu[sl, 1], epoch, P, A, kc, n)
            bx = X[s]
            cand[0] = s
            nt = 1
            for p in range(lo, indptr[v + 1]):
                w = indices[p]
                if local:
                    s, kc = _place_local(w, bu[sl, p - lo + 2], kc, n,
                                         lslot, lval, lpos, lsrv)
                elif epoch == 0:
                    s = w
                else:
                    s, kc = _place(w, bu[sl, p - lo + 2], epoch, P, A, kc, n)
                x = X[s]
                if x < bx:
                    bx = x
                    cand[0] = s
                    nt = 1
                elif x == bx:
                    cand[nt] = s
                    nt += 1
            if nt == 1:
                s = cand[0]
            else:
                k = np.int64(bu[sl, 0] * nt)
                if k >= nt:
                    k = nt - 1
                s = cand[k]
            lv = bx + 1
            integ[row, lv] += Q[lv] * (t - last[lv])
            last[lv] = t
            Q[lv] += 1
            X[s] = lv
            rsum[row] += lv
            rcnt[row] += 1
            arrivals += 1
            if lv >= K:
                code = 1
        else:
            # resampling epoch: a fresh uniform permutation, O(1)
            epoch += 1
            kc = 0
            resamples += 1
            if epoch > epoch_max:  # O(n) once per 2**31 epochs
                P[:] = -1
                A[:] = -1
                epoch = 1
        events += 1
        if code:
            break
    fs[0] = t
    fs[1] = td
    rs[0], rs[1], rs[2], rs[3] = s0, s1, s2, s3
    rs[4], rs[5], rs[6], rs[7] = r0, r1, r2, r3
    st[_EPOCH] = epoch
    st[_KC] = kc
    st[_EVENTS] = events
    st[_RES] = resamples
    st[_ARR] = arrivals
    st[_DEP] = departures
    st[_BATCH] = batch
    st[_IREC] = irec
    st[_H0] = h0
    st[_H1] = h1
    st[_EC] = ec
    return code


def _depth(n):
    """Pipeline depth for n servers: 1 (no pipeline) while the state fits in
    the caches (n < 2**15), else 32.  The result does not depend on it.

    With D = 1 the type of an event is branched on right after it is drawn,
    which the branch predictor follows; deeper pipelines pay a mispredicted
    branch per stage (about 20 ns per event measured at n = 1000) and gain
    only once the misses they hide cost more."""
    return 1 if n < 2**15 else 32


# ------------------------------------------------------------- results ----
@dataclass(frozen=True)
class SimulationResult:
    """Result of :func:`simulate`.

    Attributes
    ----------
    occupancy : ndarray, shape (K+1,)
        Time average of q(0..K) over ``[burn_in, t_end]``, where q(i) is the
        fraction of servers with at least i tasks (q(0) = 1).  The last entry
        is 0 unless ``levels`` asked for more.
    occupancy_se : ndarray, shape (K+1,)
        Standard errors by batch means. By default (``batches=None``) the
        batch length is at least 20 correlation lengths measured on the run
        itself (:func:`qlib.stats.batch_means`), with 10 to 20 batches; the
        s.e. is trustworthy when ``se_reliable`` is True (otherwise a
        ``RuntimeWarning`` said how long the run should be). Measured
        coverage of ``occupancy_ci`` on M/M/1 queues: see
        ``tests/test_simulate_se.py``.
    occupancy_ci : ndarray, shape (2, K+1)
        95 % Student-t interval with ``batches − 1`` degrees of freedom: row 0
        lower, row 1 upper.
    mean_response_time, mean_response_time_se : float
        Arrival-side estimator: a task joining a queue that holds k tasks has
        expected response time k+1 (Exp(1) FIFO service); mean over arrivals
        in ``[burn_in, t_end]``, s.e. by batch means (same batches).
    response_time_ci : tuple (lo, hi)
        95 % Student-t interval for the mean response time.
    batch_occupancy : ndarray, shape (batches, K+1)
        Per-batch time averages (for s.e. of derived quantities).
    batch_response_time : ndarray, shape (batches,)
        Per-batch arrival-side mean response times (nan if a batch saw no
        arrival).
    times, paths : ndarray or None
        Grid ``0, record_dt, 2 record_dt, ... <= t_end`` and the occupancy
        on it, shape (len(times), K+1), when ``record_dt`` is given.
    events : int
        Arrivals + departures + resampling epochs of the Poisson process of
        rate mu (for ``mu = inf`` the resamplings are not separate events).
    resamples, arrivals, departures : int
    final_queues : ndarray, shape (n,)
        Queue lengths per server at ``t_end``.
    levels : int
        Number of levels tracked at the end (grown as needed).
    batches : int
        Number of batches behind the standard errors.
    batch_length : float
        Length of one batch (time units).
    corr_length : float
        Measured correlation length ``L`` (:func:`qlib.stats.batch_means`;
        nan with a fixed ``batches``).
    batch_lag1 : float
        Lag-1 correlation of the batch means of q(1).
    se_reliable : bool
        Whether the batches are at least 20 correlation lengths long, at
        least 10, and their lag-1 correlation passes the 1 % test.
    wall_time : float
        Seconds spent in the kernel (including compilation on a first call).
    seed : int or numpy.random.SeedSequence
        What reproduces the run when passed as ``seed``.
    """

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
    seed: object
    n: int
    lam: float
    mu: float
    t_end: float
    burn_in: float
    batch_occupancy: np.ndarray = None
    batch_response_time: np.ndarray = None
    levels: int = 0
    batches: int = 0
    occupancy_ci: np.ndarray = None
    response_time_ci: tuple = None
    batch_lag1: float = float("nan")
    batch_length: float = float("nan")
    corr_length: float = float("nan")
    se_reliable: bool = True


# ------------------------------------------------------------ helpers ----
_FINE = 4000   # slices of the measurement window (batch means group them)


def _group_batches(occ_f, dt, batches, window):
    """Start indices of the batches: groups of the ``len(occ_f)`` slices.

    With ``batches`` given, equal groups (the old fixed scheme). Otherwise
    :func:`qlib.stats.batch_means` sizes them: at least 20 measured
    correlation lengths each, 10 to 20 batches; it is measured on the
    occupancy levels holding at least 1 % of the servers and on the mean
    queue length. Warns when the window is too short for 10 such batches or
    the batch means stay correlated.
    """
    nf = occ_f.shape[0]
    if batches is not None:
        return np.arange(batches) * (nf // batches), dict(
            batch_length=window / batches, corr_length=float("nan"), reliable=True)
    cols = [j for j in range(1, occ_f.shape[1]) if occ_f[:, j].mean() >= 0.01]
    series = np.column_stack([occ_f[:, cols], occ_f[:, 1:].sum(axis=1)]) if cols \
        else occ_f[:, :1]
    bm = stats.batch_means(series, dt, check=False)
    k = bm.n_batches
    thr = stats.lag1_threshold(k)
    reliable = bool(bm.batch_length >= 20 * bm.length and k >= 10
                    and np.all(np.atleast_1d(bm.lag1) <= thr))
    if not reliable:
        warnings.warn(
            f"standard errors unreliable: the window of {window:.4g} time units holds "
            f"{window / bm.length:.3g} correlation lengths (L = {bm.length:.4g}); "
            f"10 decorrelated batches need about {200 * bm.length:.4g} "
            f"(largest lag-1 correlation of the batch means "
            f"{float(np.max(np.atleast_1d(bm.lag1))):.2f}). Run longer or use "
            "replicate()", RuntimeWarning, stacklevel=3)
    per = nf // k
    return np.arange(k) * per + (nf - k * per), dict(
        batch_length=per * dt, corr_length=bm.length, reliable=reliable)


def _batch_fields(occ, occ_f, rsum, rcnt, nfine, blen, batches, window):
    """The batch-means fields of a :class:`SimulationResult` (s.e., Student-t
    intervals, batch series and their diagnostics) from the fine slices of a
    run: ``occ_f`` (time averages of the occupancy per slice), ``rsum`` and
    ``rcnt`` (response-time sums and counts per slice)."""
    groups, info = _group_batches(occ_f, blen, batches, window)
    occ_b = np.add.reduceat(occ_f, groups, axis=0) / np.diff(np.append(groups, nfine))[:, None]
    k = len(groups)
    rs_b = np.add.reduceat(rsum[:nfine], groups)
    rc_b = np.add.reduceat(rcnt[:nfine], groups)
    occ_se = occ_b.std(axis=0, ddof=1) / np.sqrt(k)
    with np.errstate(invalid="ignore", divide="ignore"):
        rb = rs_b / rc_b
    R = rs_b.sum() / rc_b.sum() if rc_b.sum() > 0 else np.nan
    ok = rc_b > 0
    R_se = rb[ok].std(ddof=1) / np.sqrt(ok.sum()) if ok.sum() > 1 else np.nan
    tq = float(stats.t_quantile(0.975, k - 1))
    lag1 = stats._lag1(occ_b[:, 1:2]) if occ.size > 1 else np.zeros(1)
    return dict(
        occupancy_se=occ_se, mean_response_time=float(R), mean_response_time_se=float(R_se),
        batch_occupancy=occ_b, batch_response_time=rb, batches=k,
        occupancy_ci=np.vstack([occ - tq * occ_se, occ + tq * occ_se]),
        response_time_ci=(float(R - tq * R_se), float(R + tq * R_se)),
        batch_lag1=float(lag1[0]), batch_length=float(info["batch_length"]),
        corr_length=float(info["corr_length"]), se_reliable=bool(info["reliable"]))


def _initial(initial, n):
    if initial is None:
        return np.zeros(n, np.int64)
    a = np.asarray(initial)
    if a.dtype == bool or not (np.issubdtype(a.dtype, np.integer)
                              or np.issubdtype(a.dtype, np.floating)):
        raise TypeError("initial must be an integer array of queue lengths or "
                        f"a float occupancy vector, got dtype {a.dtype}")
    if a.ndim != 1:
        raise ValueError(f"initial must be one-dimensional, got shape {a.shape}")
    if np.issubdtype(a.dtype, np.integer):
        if a.shape[0] != n:
            raise ValueError(f"initial: queue lengths need length n={n}, "
                             f"got {a.shape[0]}")
        if np.any(a < 0):
            raise ValueError("initial: queue lengths must be >= 0")
        if np.any(a >= 2**30):
            raise ValueError("initial: queue lengths must be < 2**30")
        return a.astype(np.int64).copy()
    q = a.astype(float)
    if (q.size == 0 or not np.all(np.isfinite(q)) or not np.isclose(q[0], 1)
            or np.any(np.diff(q) > 1e-12) or np.any(q < 0)):
        raise ValueError("initial: an occupancy vector needs q[0] = 1, "
                         "non-increasing entries in [0, 1]")
    # servers with >= i tasks: round(n q(i)), kept non-increasing
    cnt = np.minimum.accumulate(np.round(n * q).astype(np.int64))
    cnt[0] = n
    X = np.zeros(n, np.int64)
    for i in range(1, cnt.size):
        X[:cnt[i]] = i
    return X


def _seed(seed):
    """Return (SeedSequence, the value stored as result.seed)."""
    if seed is None:
        ss = np.random.SeedSequence()
        return ss, ss.entropy
    if isinstance(seed, np.random.SeedSequence):
        return seed, seed
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError("seed must be None, a non-negative int or a "
                        f"numpy.random.SeedSequence, got {type(seed).__name__}")
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    return np.random.SeedSequence(int(seed)), int(seed)


def _check_args(graph, lam, mu, t_end, burn_in, batches):
    if not isinstance(graph, Graph):
        raise TypeError("graph must be a qlib.graphs.Graph, "
                        f"got {type(graph).__name__}")
    if not 1 <= graph.n < 2**31:
        raise ValueError(f"graph must have 1 <= n < 2**31 vertices, got {graph.n}")
    try:
        lam = float(lam)
        mu = float(mu)
        t_end = float(t_end)
        burn_in = float(burn_in)
    except (TypeError, ValueError) as e:
        raise TypeError(f"lam, mu, t_end, burn_in must be real numbers ({e})")
    if not np.isfinite(lam) or lam <= 0:
        raise ValueError(f"lam must be positive and finite, got {lam}")
    if np.isnan(mu) or mu < 0:
        raise ValueError(f"mu must be >= 0 (inf allowed), got {mu}")
    if not np.isfinite(burn_in) or burn_in < 0:
        raise ValueError(f"burn_in must be finite and >= 0, got {burn_in}")
    if not np.isfinite(t_end) or not t_end > burn_in:
        raise ValueError(f"t_end must be finite and > burn_in={burn_in}, "
                         f"got {t_end}")
    if lam >= 1:
        if burn_in != 0:
            raise ValueError(f"lam must be < 1 when burn_in > 0 (the system "
                             f"is unstable for lam >= 1), got lam={lam}")
        warnings.warn(f"lam={lam} >= 1: the system is unstable; only the "
                      "transient over [0, t_end] is meaningful",
                      RuntimeWarning, stacklevel=3)
    if batches is None:
        return lam, mu, t_end, burn_in
    if isinstance(batches, bool) or not isinstance(batches, (int, np.integer)):
        raise TypeError("batches must be an int or None")
    if batches < 2:
        raise ValueError(f"batches must be >= 2, got {batches}")
    return lam, mu, t_end, burn_in


def _grow(arr, K1, axis_len=None):
    """Pad the last axis of ``arr`` with zeros to length K1."""
    shape = arr.shape[:-1] + (K1,)
    out = np.zeros(shape, arr.dtype)
    out[..., :arr.shape[-1]] = arr
    return out


# ------------------------------------------------------------ simulate ----
def simulate(graph, lam, mu=0.0, *, t_end, burn_in=0.0, seed=None,
             levels=None, record_dt=None, initial=None, progress=False,
             batches=None, service=None, record_response=False):
    """Simulate JSQ on the closed neighbourhoods of a (resampled) graph.

    Parameters
    ----------
    graph : qlib.graphs.Graph
        Base graph on positions ``0..n-1``.
    lam : float
        Arrival rate per server (total ``lam * n``), ``0 < lam``; ``lam >= 1``
        only with ``burn_in = 0`` (a transient run) and with a warning.
    mu : float
        Total rate of the Poisson resampling epochs, ``0 <= mu <= inf``;
        ``0``: static graph, ``inf``: a fresh permutation before each arrival.
    t_end : float
        End of the run, ``t_end > burn_in``.
    burn_in : float
        Time averages are over ``[burn_in, t_end]``.
    seed : None, int >= 0 or numpy.random.SeedSequence
        Same seed, same result, bit for bit.
    levels : int, optional
        Number of queue-length levels tracked at the start (default: enough
        for ``initial``); levels grow automatically when a queue reaches the
        top, so nothing is truncated.  The returned arrays have at least
        ``levels + 1`` entries.
    record_dt : float, optional
        Record the occupancy on the grid ``0, record_dt, ... <= t_end``.
    initial : array_like, optional
        Either per-server queue lengths (integer array of length n; server s
        at position s) or an occupancy vector (float, q[0] = 1,
        non-increasing: round(n q(i)) servers get at least i tasks).
        Default: empty.
    progress : bool
        Show a tqdm progress bar (the run is cut into time slices; the
        result does not depend on it).
    batches : int, optional
        Default: the batch length follows the correlation length measured
        on the run (see ``occupancy_se``), and a ``RuntimeWarning`` says when
        the run is too short. An int >= 2 forces that many equal batches
        (no check that they are long enough).
    service : None, "exp" or qlib.service.ServiceLaw
        None or "exp": Exp(1) services, this module's kernel (unchanged).
        A law of :mod:`qlib.service`: FIFO servers, service times drawn
        from it at the start of service (``qlib._general.simulate_general``,
        which returns a ``GeneralSimulationResult``).
    record_response : bool
        Also return every task's measured response time (runs the
        general-service kernel, with Exp(1) services when ``service`` is
        None or "exp").

    Returns
    -------
    SimulationResult
    """
    if service is not None or record_response is not False:
        from qlib import _general, service as _service
        if _service.check_law(service) is not None or record_response is not False:
            return _general.simulate_general(
                graph, lam, mu, t_end=t_end, burn_in=burn_in, seed=seed,
                levels=levels, record_dt=record_dt, initial=initial,
                progress=progress, batches=batches, service=service,
                record_response=record_response)
    lam, mu, t_end, burn_in = _check_args(graph, lam, mu, t_end, burn_in,
                                          batches)
    batches = None if batches is None else int(batches)
    n = graph.n
    X = _initial(initial, n)
    ss, seed_out = _seed(seed)
    rs = ss.generate_state(8, np.uint64)   # two xoshiro streams
    for k in (0, 4):
        if not rs[k:k + 4].any():  # xoshiro's one forbidden state
            rs[k] = np.uint64(1)
    xmax = int(X.max())
    if levels is not None:
        if isinstance(levels, bool) or not isinstance(levels, (int, np.integer)):
            raise TypeError("levels must be an int")
        if levels < 1:
            raise ValueError(f"levels must be >= 1, got {levels}")
    K = max(int(levels) if levels is not None else 16, 2 * xmax, xmax + 1)
    if record_dt is not None:
        record_dt = float(record_dt)
        if not (record_dt > 0 and np.isfinite(record_dt)):
            raise ValueError(f"record_dt must be positive, got {record_dt}")
        nrec = int(math.floor(t_end / record_dt + 1e-9)) + 1
    else:
        nrec, record_dt = 0, 1.0
    mu_inf = bool(np.isinf(mu))
    indptr = np.ascontiguousarray(graph.indptr, np.int64)
    indices = np.ascontiguousarray(graph.indices, np.int64)
    maxdeg = int(np.diff(indptr).max()) if n else 0

    Q = np.bincount(X, minlength=K + 1)[::-1].cumsum()[::-1].astype(np.int64)
    # 24 bytes per server: the lazy permutation's positions P ((stamp,
    # server) packed in an int64) and one 16-byte record per index holding
    # its slot A (packed likewise) and the queue length X of that server: a
    # fresh look-up reads slot j and, mostly, server j, in one cache line
    XA = np.empty((n, 2), np.int64)
    XA[:, 0] = -1
    XA[:, 1] = X
    A, X = XA[:, 0], XA[:, 1]
    P = np.full(n, -1, np.int64)
    # the window is cut into nfine short slices; the batches of the standard
    # errors are groups of slices, sized from the measured correlation length
    nfine = _FINE if batches is None else batches
    integ = np.zeros((nfine + 1, K + 1))
    last = np.zeros(K + 1)
    rsum = np.zeros(nfine + 1)
    rcnt = np.zeros(nfine + 1)
    paths = np.zeros((nrec, K + 1))
    cand = np.empty(maxdeg + 1, np.int64)
    fs = np.zeros(2)
    st = np.zeros(_NST, np.int64)
    st[_BATCH] = -1
    D = _depth(n)   # the pipeline's ring of drawn events
    bt, bk, bu = np.zeros(D), np.zeros(D, np.int64), np.zeros((D, maxdeg + 2))

    if progress:
        from tqdm.auto import tqdm
        nslices = 100
        bar = tqdm(total=t_end, unit="time", desc=f"simulate n={n}")
    else:
        nslices = 1
        bar = None
    w0 = time.perf_counter()
    try:
        for j in range(1, nslices + 1):
            slice_end = t_end if j == nslices else t_end * j / nslices
            while True:
                code = _kernel(indptr, indices, n, lam, mu, mu_inf, t_end,
                               burn_in, nfine, slice_end, record_dt, nrec,
                               X, Q, P, A, rs, integ, last, rsum, rcnt,
                               paths, cand, fs, st, EPOCH_MAX, bt, bk, bu)
                if code == 0:
                    break
                K = 2 * K  # a queue reached the top level: track more
                Q = _grow(Q, K + 1)
                integ = _grow(integ, K + 1)
                last = _grow(last, K + 1)
                paths = _grow(paths, K + 1)
            if bar is not None:
                bar.update(slice_end - bar.n)
    finally:
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - w0

    blen = (t_end - burn_in) / nfine
    occ_f = integ[:nfine] / (n * blen)
    occ = occ_f.mean(axis=0)
    nz = np.nonzero(occ > 0)[0]
    top = int(nz[-1]) + 2 if nz.size else 2
    if levels is not None:
        top = max(top, int(levels) + 1)
    top = min(top, K + 1)
    occ, occ_f = occ[:top], occ_f[:, :top]
    fields = _batch_fields(occ, occ_f, rsum, rcnt, nfine, blen, batches, t_end - burn_in)
    return SimulationResult(
        occupancy=occ, times=(np.arange(nrec) * record_dt) if nrec else None,
        paths=paths[:, :top] if nrec else None, events=int(st[_EVENTS]),
        resamples=int(st[_RES]), arrivals=int(st[_ARR]),
        departures=int(st[_DEP]), final_queues=X.astype(np.int64), wall_time=wall,
        seed=seed_out, n=n, lam=lam, mu=mu, t_end=t_end, burn_in=burn_in, levels=K,
        **fields)


# ----------------------------------------------------------- replicate ----
@dataclass(frozen=True)
class ReplicationResult:
    """Result of :func:`replicate`: R independent runs of :func:`simulate`.

    Attributes
    ----------
    occupancy : ndarray, shape (K+1,)
        Mean over replications of the time-averaged occupancy (levels padded
        with zeros to a common length).
    occupancy_se : ndarray, shape (K+1,)
        Standard error of that mean, ``std(ddof=1) / sqrt(R)``.
    occupancy_ci : ndarray, shape (2, K+1)
        95% Student-t confidence interval (t with R-1 degrees of freedom):
        row 0 lower, row 1 upper.
    mean_response_time, response_time_se : float
    response_time_ci : tuple (lo, hi)
        Same for the arrival-side mean response time.
    replications : int
    seed : int or numpy.random.SeedSequence
        The root seed; replication r used ``SeedSequence(seed).spawn(R)[r]``.
    results : tuple of SimulationResult
    wall_time : float
        Seconds for the whole call.
    """

    occupancy: np.ndarray
    occupancy_se: np.ndarray
    occupancy_ci: np.ndarray
    mean_response_time: float
    response_time_se: float
    response_time_ci: tuple
    replications: int
    seed: object
    results: tuple
    wall_time: float


def replicate(graph, lam, mu=0.0, *, replications, seed=None, n_jobs=None,
              **simulate_kwargs):
    """Independent replications of :func:`simulate`, in parallel threads.

    Parameters
    ----------
    graph, lam, mu
        As for :func:`simulate`.
    replications : int
        Number of independent runs R, >= 2.
    seed : None, int >= 0 or numpy.random.SeedSequence
        Root seed; the runs use ``SeedSequence(seed).spawn(R)``, so the
        result does not depend on ``n_jobs``.
    n_jobs : int, optional
        Number of threads (the kernel releases the GIL); default
        ``min(R, os.cpu_count())``.
    **simulate_kwargs
        Passed to :func:`simulate` (``t_end`` is required; ``progress=True``
        shows one bar over the replications).

    Returns
    -------
    ReplicationResult
    """
    if isinstance(replications, bool) or not isinstance(replications,
                                                        (int, np.integer)):
        raise TypeError("replications must be an int")
    if replications < 2:
        raise ValueError(f"replications must be >= 2, got {replications}")
    R = int(replications)
    if n_jobs is None:
        n_jobs = min(R, os.cpu_count() or 1)
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)):
        raise TypeError("n_jobs must be an int or None")
    if n_jobs < 1:
        raise ValueError(f"n_jobs must be >= 1, got {n_jobs}")
    if "seed" in simulate_kwargs:
        raise TypeError("pass the root seed as seed=")
    progress = bool(simulate_kwargs.pop("progress", False))
    # validate once, in the caller's thread, so errors are raised here
    if "t_end" not in simulate_kwargs:
        raise TypeError("replicate() needs t_end= (passed on to simulate)")
    if "service" in simulate_kwargs:
        from qlib.service import check_law
        check_law(simulate_kwargs["service"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _check_args(graph, lam, mu, simulate_kwargs["t_end"],
                    simulate_kwargs.get("burn_in", 0.0),
                    simulate_kwargs.get("batches", None))
    if float(lam) >= 1:
        warnings.warn(f"lam={lam} >= 1: the system is unstable; only the "
                      "transient over [0, t_end] is meaningful",
                      RuntimeWarning, stacklevel=2)
    ss, seed_out = _seed(seed)
    children = ss.spawn(R)
    w0 = time.perf_counter()

    def one(c):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return simulate(graph, lam, mu, seed=c, **simulate_kwargs)

    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=R, unit="run", desc="replicate")
    try:
        if n_jobs == 1:
            results = []
            for c in children:
                results.append(one(c))
                if bar is not None:
                    bar.update(1)
        else:
            results = [None] * R
            with ThreadPoolExecutor(max_workers=int(n_jobs)) as ex:
                futs = {ex.submit(one, c): r for r, c in enumerate(children)}
                for f in futs:
                    results[futs[f]] = f.result()
                    if bar is not None:
                        bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    from scipy.stats import t as student_t
    L = max(r.occupancy.size for r in results)
    occ = np.zeros((R, L))
    for k, r in enumerate(results):
        occ[k, :r.occupancy.size] = r.occupancy
    m = occ.mean(axis=0)
    se = occ.std(axis=0, ddof=1) / math.sqrt(R)
    tq = float(student_t.ppf(0.975, R - 1))
    resp = np.array([r.mean_response_time for r in results])
    rm = float(resp.mean())
    rse = float(resp.std(ddof=1) / math.sqrt(R))
    return ReplicationResult(
        occupancy=m, occupancy_se=se,
        occupancy_ci=np.vstack([m - tq * se, m + tq * se]),
        mean_response_time=rm, response_time_se=rse,
        response_time_ci=(rm - tq * rse, rm + tq * rse), replications=R,
        seed=seed_out, results=tuple(results),
        wall_time=time.perf_counter() - w0)
