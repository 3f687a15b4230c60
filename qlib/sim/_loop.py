"""The one event loop of the simulation kernels and the pieces every kernel shares.

The exponential kernel (:mod:`qlib.sim.kernel`), the interleaved
replications (:mod:`qlib.sim.interleave`) and the general-service kernel
(:mod:`qlib.sim.general`) simulate the same model with the same
bookkeeping; what they share is written here once:

* the lazy, epoch-stamped permutation of servers on positions (``_lookup``
  draws its uniform when needed, ``_place`` takes one drawn ahead,
  ``_place_local`` keeps a fresh permutation of one arrival in small local
  maps) and a fresh epoch (``_new_epoch``);
* the policy: the positions an arrival looks at (``_looked``, ``_offset``,
  ``_sample`` for ``choices = k``), the scan for a shortest queue and the
  uniform tie-break (``_join``);
* the time bookkeeping: the per-level integrals touched only where a level
  changes (``_touch``), the recorded rows and the batch boundaries that the
  clock passes (``_advance``, ``_boundary``), the shared entries of the
  state vector (``_load``, ``_store``);
* the event loop of exponential services, ``_events``: one body, inlined
  into the module-level entry points ``qlib.sim.kernel._kernel`` (one run)
  and ``qlib.sim.interleave._chunk`` (one visit of the round robin).  The
  variant is a literal constant (``chunked``: stop after a budget of
  events), so the compiler prunes the branches the other variant takes,
  and each entry point is compiled and cached on its own; the policy
  (``ch``) is a value in both (a constant ``ch = 0`` measured no faster).
  The general-service kernel has an event loop of its own (its events come
  from a heap of completions and its uniforms are drawn when needed, so
  its random streams differ), built from the same pieces.

All helpers are ``inline="always"``: they cost no call, and a change here
reaches the kernels only when numba recompiles them (clear the caches in
``qlib/sim/__pycache__`` after editing this file).  The entry points are
compiled without reference counting (``_NJIT``): an inlined helper's array
arguments are new references to numba, counted at every event (five times
the cost of an event, measured), so the kernels allocate nothing and their
callers pass every array they use.
"""
from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from qlib.sim.rng import _exp1, _step

__all__ = []

# the state vector ``st`` shared by the kernels (the general kernel adds
# its own entries after _STARTED; the exponential kernel its pipeline's)
_EPOCH, _KC, _NB, _EVENTS, _RES, _ARR, _DEP, _BATCH, _IREC, _STARTED = range(10)
_H0, _H1, _EC = 10, 11, 12   # events drawn by stream 1, by stream 2, run
_HP = 13                     # events whose positions are placed
_NST = 14

# the options of the kernels' entry points: cached, releasing the GIL, and
# without reference counting (numba's ``_nrt=False``: no array is allocated
# inside, none is counted)
_NJIT = dict(cache=True, nogil=True, _nrt=False)

_LOW = np.int64(0xFFFFFFFF)
_HI = np.int64(32)
EPOCH_MAX = 2**31 - 1  # stamps live in the high 32 bits of P and A


# ---------------------------------------------- the lazy permutation ----
@numba.njit(cache=True, inline="always")
def _lookup(w, epoch, P, A, kc, n, s0, s1, s2, s3):
    """Server at position ``w`` under the current epoch's permutation,
    drawing its uniform from the stream ``s`` when ``w`` is new in the epoch.

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
    s, kc = _take(w, j, epoch, P, A, kc)
    return s, kc, s0, s1, s2, s3


@numba.njit(cache=True, inline="always")
def _take(w, j, epoch, P, A, kc):
    """Fisher–Yates step ``kc`` of the epoch's shuffle: position ``w`` gets
    the server in slot ``j >= kc``, slot ``j`` the one in slot ``kc``
    (entries of ``A`` not stamped with the epoch hold their own index), and
    ``w`` is stamped in ``P``.  Returns (server, kc + 1)."""
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
    return _take(w, _slot(u, kc, n), epoch, P, A, kc)


@numba.njit(cache=True, inline="always")
def _place_local(w, u, kc, n, lslot, lval, lpos, lsrv):
    """``_place`` under a permutation that is fresh for this arrival
    (mu = inf), its Fisher–Yates steps held in small local maps instead of
    ``A`` and ``P``: step ``q < kc`` placed position ``lpos[q]`` (server
    ``lsrv[q]``) and set slot ``lslot[q]`` to ``lval[q]``.  Returns (server,
    new kc): the same as ``_place`` from the same draws."""
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


@numba.njit(cache=True, inline="always")
def _new_epoch(epoch, P, A, epoch_max):
    """A resampling epoch: a fresh uniform permutation, O(1) (the stamps
    are cleared, O(n), once every ``epoch_max`` epochs, before they would
    overflow).  Returns the new epoch; its permutation starts at ``kc = 0``."""
    epoch += 1
    if epoch > epoch_max:
        P[:] = -1
        A[:] = -1
        epoch = 1
    return epoch


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


# ---------------------------------------------------------- the policy ----
@numba.njit(cache=True, inline="always")
def _looked(deg, ch):
    """Positions an arrival at a position of degree ``deg`` looks at: its
    own and all neighbours (``ch = 0``), or its own and ``ch - 1`` sampled
    neighbours (all of them when ``deg < ch``)."""
    if ch == 0 or deg < ch:
        return deg + 1
    return ch


@numba.njit(cache=True, inline="always")
def _offset(k, deg, ch, bs, sl):
    """Neighbour offset (into the CSR row) of the ``k``-th looked position,
    ``k >= 1``: ``k - 1`` when all neighbours are looked at, else the
    ``k``-th sampled one."""
    if ch == 0 or deg < ch:
        return k - 1
    return bs[sl, k - 1]


@numba.njit(cache=True, inline="always")
def _sample(deg, m, bs, sl, s0, s1, s2, s3):
    """Floyd's algorithm: ``m`` distinct offsets uniform among the
    ``m``-subsets of ``0..deg-1``, written to ``bs[sl, :m]``, with exactly
    ``m`` draws of the stream (so the draws do not depend on the state).
    Returns the new stream state."""
    c = 0
    for j in range(deg - m, deg):
        u, s0, s1, s2, s3 = _step(s0, s1, s2, s3)
        t = np.int64(u * (j + 1))
        if t > j:   # floating-point guard
            t = j
        for q in range(c):
            if bs[sl, q] == t:
                t = j    # t already taken: take j (never taken before)
                break
        bs[sl, c] = t
        c += 1
    return s0, s1, s2, s3


@numba.njit(cache=True, inline="always")
def _server(w, k, sl, epoch, P, A, kc, n, bu, early, local, ahead,
            lslot, lval, lpos, lsrv, s0, s1, s2, s3):
    """Server at position ``w``, the ``k``-th position an arrival looks at.

    ``ahead`` (a constant of the kernel): its uniform was drawn ahead into
    ``bu[sl, k + 1]`` -- or, ``early``, the server itself was placed there
    --, ``local``: under the arrival's own fresh permutation (mu = inf);
    otherwise the uniform is drawn now from the stream ``s``, if needed.
    Epoch 0 is the identity.  Returns (server, new kc, stream state)."""
    if not ahead:
        if epoch == 0:
            return w, kc, s0, s1, s2, s3
        return _lookup(w, epoch, P, A, kc, n, s0, s1, s2, s3)
    if early:
        return np.int64(bu[sl, k + 1]), kc, s0, s1, s2, s3
    if local:
        s, kc = _place_local(w, bu[sl, k + 1], kc, n, lslot, lval, lpos, lsrv)
        return s, kc, s0, s1, s2, s3
    if epoch == 0:
        return w, kc, s0, s1, s2, s3
    s, kc = _place(w, bu[sl, k + 1], epoch, P, A, kc, n)
    return s, kc, s0, s1, s2, s3


@numba.njit(cache=True, inline="always")
def _join(v, sl, indptr, indices, X, cand, n, epoch, kc, P, A, bu, ch, bs,
          early, local, ahead, lslot, lval, lpos, lsrv, s0, s1, s2, s3):
    """The server an arrival at position ``v`` joins: a shortest queue
    among the positions it looks at (its own first, then its neighbours in
    the order of the graph, or the sampled ones for ``ch = k``), ties
    broken uniformly by the uniform ``bu[sl, 0]`` (``ahead``) or, only when
    there is a tie, by one drawn now from the stream ``s``.  Returns
    (server, its queue length, new kc, stream state)."""
    lo = np.int64(indptr[v])   # 32- or 64-bit graph: one type
    dg = np.int64(indptr[v + 1]) - lo
    s, kc, s0, s1, s2, s3 = _server(v, 0, sl, epoch, P, A, kc, n, bu, early, local,
                                    ahead, lslot, lval, lpos, lsrv, s0, s1, s2, s3)
    bx = X[s]
    cand[0] = s
    nt = 1
    for k in range(1, _looked(dg, ch)):
        w = np.int64(indices[lo + _offset(k, dg, ch, bs, sl)])
        s, kc, s0, s1, s2, s3 = _server(w, k, sl, epoch, P, A, kc, n, bu, early, local,
                                        ahead, lslot, lval, lpos, lsrv, s0, s1, s2, s3)
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
        if ahead:
            u = bu[sl, 0]
        else:
            u, s0, s1, s2, s3 = _step(s0, s1, s2, s3)
        k = np.int64(u * nt)
        if k >= nt:
            k = nt - 1
        s = cand[k]
    return s, bx, kc, s0, s1, s2, s3


# ------------------------------------------------ the time bookkeeping ----
@numba.njit(cache=True, inline="always")
def _load(st):
    """The shared entries of the state vector: (epoch, kc, events,
    resamples, arrivals, departures, batch, irec)."""
    return (st[_EPOCH], st[_KC], st[_EVENTS], st[_RES], st[_ARR], st[_DEP], st[_BATCH],
            st[_IREC])


@numba.njit(cache=True, inline="always")
def _store(st, epoch, kc, events, resamples, arrivals, departures, batch, irec):
    """Write the shared entries of the state vector back (``_load``)."""
    st[_EPOCH] = epoch
    st[_KC] = kc
    st[_EVENTS] = events
    st[_RES] = resamples
    st[_ARR] = arrivals
    st[_DEP] = departures
    st[_BATCH] = batch
    st[_IREC] = irec


@numba.njit(cache=True, inline="always")
def _touch(lv, t, row, integ, Q, last):
    """Close the time integral of level ``lv`` at ``t`` (into batch row
    ``row``) before ``Q[lv]`` changes: an event touches only its level."""
    integ[row, lv] += Q[lv] * (t - last[lv])
    last[lv] = t


@numba.njit(cache=True, inline="always")
def _boundary(batch, nbatch, burn_in, blen, t_end):
    """(row of the integrals that the time after boundary ``batch`` belongs
    to, next boundary): row ``nbatch`` collects the burn-in (batch -1) and is
    discarded."""
    row = batch if batch >= 0 else nbatch
    if batch < 0:
        nextb = burn_in
    elif batch < nbatch - 1:
        nextb = burn_in + (batch + 1) * blen
    else:
        nextb = t_end
    return row, nextb


@numba.njit(cache=True, inline="always")
def _advance(t, tnext, slice_end, K, n, Q, last, integ, paths, irec, nrec, rec_dt,
             batch, row, nextb, nbatch, burn_in, blen, t_end):
    """Let the clock run from ``t`` towards the next event at ``tnext`` with
    the state unchanged, stopping at ``slice_end`` if that comes first:
    record the occupancy on the grid points passed, and close the batches
    whose ends are passed.  Returns (stop, new t, irec, batch, row, nextb):
    ``stop`` when the slice ends before the event (the clock then reads
    ``t_end`` at the end of the run, else stays), else the clock reads
    ``tnext``."""
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
        row, nextb = _boundary(batch, nbatch, burn_in, blen, t_end)
    if not stop:
        t = tnext
    elif slice_end >= t_end:
        t = t_end
    return stop, t, irec, batch, row, nextb


# ------------------------------------- the loop of exponential services ----
@numba.njit(cache=True, inline="always")
def _events(indptr, indices, par, X, Q, P, A, rs, integ, last, rsum, rcnt, paths,
            cand, fs, st, bt, bk, bu, ch, bs, K, ec_stop, scratch, chunked):
    """Advance one run of exponential services to ``slice_end`` (<= t_end).

    ``par = (n, lam, mu, mu_inf, t_end, burn_in, nbatch, slice_end, rec_dt,
    nrec, epoch_max)`` and ``scratch = (lslot, lval, lpos, lsrv)`` come as
    tuples: a call of more than 30 arguments would reach numba as a call
    with ``*args``, which it does not inline.

    Returns 0 when ``slice_end`` is reached, 1 when a queue has reached the
    top tracked level ``K`` (the caller grows the level arrays, at least
    ``K + 1`` wide, and calls again), and, ``chunked``, 2 at the top of the
    loop once ``ec`` (events run from the ring) reaches ``ec_stop``.  All
    state lives in the arrays, the drawn but not yet run events included
    (``bt``: times, ``bk``: what, ``bu``: uniforms, a ring of ``D =
    bt.size`` events, a power of 2), so where the run is cut into slices
    or visits does not change it.  ``fs = [t, time of the last drawn
    event]``; ``rs`` holds the two xoshiro streams.  ``ch = 0``: an arrival
    looks at its whole closed neighbourhood; ``ch = k >= 2``: at its own
    position and ``k - 1`` distinct neighbours drawn uniformly (stream 1,
    when the event is drawn; their offsets in ``bs``), all of them when the
    degree is below ``k``.  ``lslot, lval, lpos, lsrv``: scratch maps of
    mu = inf, at least as long as ``cand``.
    """
    n, lam, mu, mu_inf, t_end, burn_in, nbatch, slice_end, rec_dt, nrec, epoch_max = par
    lslot, lval, lpos, lsrv = scratch
    D = bt.shape[0]
    mask = D - 1
    D1 = max((2 * D) // 3, 1)   # stream 2 draws this far ahead
    D2 = D // 3                 # the servers' lines are asked for this far ahead
    pf = D > 1
    epoch, kc, events, resamples, arrivals, departures, batch, irec = _load(st)
    h0 = st[_H0]
    h1 = st[_H1]
    ec = st[_EC]
    hp = st[_HP]
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
    # 0 < mu < inf, pipelined: the permutation is drawn at stage 2 (below)
    early = looks and pf and not mu_inf
    blen = (t_end - burn_in) / nbatch
    row, nextb = _boundary(batch, nbatch, burn_in, blen, t_end)
    code = 0
    while True:
        if chunked and ec >= ec_stop:    # the visit's budget: back to the round robin
            code = 2
            break
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
                if ch > 0:
                    dg = np.int64(indptr[v + 1]) - np.int64(indptr[v])
                    if dg >= ch:
                        s0, s1, s2, s3 = _sample(dg, ch - 1, bs, sl, s0, s1, s2, s3)
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
                lo = np.int64(indptr[v])   # 32- or 64-bit graph: one type
                if pf:
                    _prefetch(indices, lo)
                if looks:
                    for k in range(_looked(np.int64(indptr[v + 1]) - lo, ch)):
                        u, r0, r1, r2, r3 = _step(r0, r1, r2, r3)
                        bu[sl, k + 1] = u
                        if pf:
                            j = min(np.int64(u * n), n - 1)
                            if not local:
                                _prefetch(A, j)
                            _prefetch(X, j)   # the server, unless slot j moved
            h1 += 1
        # stage 2, event ec + D2: the servers' lines.  ``early`` (0 < mu <
        # inf, pipelined): place the positions of the arrival under its
        # epoch's permutation here -- the lazy shuffle depends on the
        # positions and the epochs only, never on the queues, so it can run
        # in event order D2 events ahead, where its dependent misses (a
        # used slot's fallback, a slot or position already drawn this
        # epoch) overlap the events in between instead of stalling the one
        # that needs the server -- keep the servers in bu[sl, 1:] and ask
        # for their lines
        if early:
            while hp <= ec + D2:
                sl = hp & mask
                v = bk[sl]
                if 0 <= v < n:
                    lo = np.int64(indptr[v])   # 32- or 64-bit graph: one type
                    dg = np.int64(indptr[v + 1]) - lo
                    for k in range(_looked(dg, ch)):
                        w = v if k == 0 else np.int64(indices[lo + _offset(k, dg, ch, bs, sl)])
                        if epoch == 0:
                            s = w
                        else:
                            s, kc = _place(w, bu[sl, k + 1], epoch, P, A, kc, n)
                        bu[sl, k + 1] = s    # exact: s < 2**31
                        _prefetch(X, s)
                elif v < 0:
                    kc = 0
                    epoch = _new_epoch(epoch, P, A, epoch_max)
                hp += 1
        elif D2 > 0 and not looks:
            sl = (ec + D2) & mask
            v = bk[sl]
            if 0 <= v < n:
                for p in range(np.int64(indptr[v]), np.int64(indptr[v + 1])):
                    _prefetch(X, np.int64(indices[p]))
        # run event ec
        sl = ec & mask
        stop, t, irec, batch, row, nextb = _advance(
            t, bt[sl], slice_end, K, n, Q, last, integ, paths, irec, nrec, rec_dt,
            batch, row, nextb, nbatch, burn_in, blen, t_end)
        if stop:
            break
        ec += 1
        v = bk[sl]
        if v >= n:
            # departure candidate: a real departure if the server is busy
            s = v - n
            lv = X[s]
            if lv == 0:
                continue
            _touch(lv, t, row, integ, Q, last)
            Q[lv] -= 1
            X[s] = lv - 1
            departures += 1
        elif v >= 0:
            if mu_inf:
                kc = 0
                resamples += 1
                epoch = _new_epoch(epoch, P, A, epoch_max)
            s, bx, kc, s0, s1, s2, s3 = _join(v, sl, indptr, indices, X, cand, n, epoch,
                                              kc, P, A, bu, ch, bs, early, local, True,
                                              lslot, lval, lpos, lsrv, s0, s1, s2, s3)
            lv = bx + 1
            _touch(lv, t, row, integ, Q, last)
            Q[lv] += 1
            X[s] = lv
            rsum[row] += lv
            rcnt[row] += 1
            arrivals += 1
            if lv >= K:
                code = 1
        else:
            # resampling epoch (begun at stage 2 when early)
            resamples += 1
            if not early:
                kc = 0
                epoch = _new_epoch(epoch, P, A, epoch_max)
        events += 1
        if code:
            break
    fs[0] = t
    fs[1] = td
    rs[0], rs[1], rs[2], rs[3] = s0, s1, s2, s3
    rs[4], rs[5], rs[6], rs[7] = r0, r1, r2, r3
    _store(st, epoch, kc, events, resamples, arrivals, departures, batch, irec)
    st[_H0] = h0
    st[_H1] = h1
    st[_EC] = ec
    st[_HP] = hp
    return code
