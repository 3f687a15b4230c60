"""The qlib.simulate kernel as it was before issue 19 (commit ab72720): the "before" baseline.

A verbatim copy of ``_step``, ``_lookup`` and ``_kernel`` from
``qlib/simulate.py`` at that commit, and a minimal driver :func:`run` that
allocates its state (queue lengths and busy list in int32, the stamped lazy
permutation in two int64 arrays: 24 bytes per server) and runs it once.
``bench_simulate.py`` times it in the same run as the new kernel, so the
performance appendix can plot cost per event against n before and after.
Not used by qlib or by the book.
"""
import math

import numba
import numpy as np

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


# ---------------------------------------------------------- the kernel ----
# integer state st[...]
_EPOCH, _KC, _NB, _EVENTS, _RES, _ARR, _DEP, _BATCH, _IREC, _STARTED = range(10)
_NST = 10


_LOW = np.int64(0xFFFFFFFF)
_HI = np.int64(32)
EPOCH_MAX = 2**31 - 1  # stamps live in the high 32 bits of P and A


@numba.njit(cache=True, inline="always")
def _lookup(w, epoch, P, A, kc, n, s0, s1, s2, s3):
    """Server at position ``w`` under the current epoch's permutation.

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


@numba.njit(cache=True, nogil=True)
def _kernel(indptr, indices, n, lam, mu, mu_inf, t_end, burn_in, nbatch,
            slice_end, rec_dt, nrec, X, B, Q, P, A, rs, integ, last, rsum,
            rcnt, paths, cand, fs, st, epoch_max):
    """Advance the simulation to ``slice_end`` (<= t_end).

    Returns 0 when ``slice_end`` is reached, 1 when a queue has reached the
    top tracked level ``K = Q.size - 1`` (the caller grows the level arrays
    and calls again).  All state lives in the arrays; the next event time is
    drawn right after each event and kept in ``fs[1]``, so where the run is
    cut into slices does not change it.
    """
    K = Q.shape[0] - 1
    epoch = st[_EPOCH]
    kc = st[_KC]
    nb = st[_NB]
    events = st[_EVENTS]
    resamples = st[_RES]
    arrivals = st[_ARR]
    departures = st[_DEP]
    batch = st[_BATCH]
    irec = st[_IREC]
    t = fs[0]
    s0 = rs[0]
    s1 = rs[1]
    s2 = rs[2]
    s3 = rs[3]
    lamn = lam * n
    inv_lam = 1.0 / lam
    blen = (t_end - burn_in) / nbatch
    murate = 0.0 if mu_inf else mu
    if st[_STARTED] == 0:
        u, s0, s1, s2, s3 = _step(s0, s1, s2, s3)
        fs[1] = t - math.log(1.0 - u) / (lamn + nb + murate)
        st[_STARTED] = 1
    tnext = fs[1]
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
        events += 1
        u, s0, s1, s2, s3 = _step(s0, s1, s2, s3)
        u *= lamn + nb + murate
        if u < lamn:
            # arrival at a uniform position v (u / lam is uniform on [0, n))
            v = np.int64(u * inv_lam)
            if v >= n:
                v = n - 1
            if mu_inf:
                epoch += 1
                kc = 0
                resamples += 1
                if epoch > epoch_max:  # stamps would overflow: start afresh
                    P[:] = -1
                    A[:] = -1
                    epoch = 1
            if epoch == 0:
                s = v
            else:
                s, kc, s0, s1, s2, s3 = _lookup(v, epoch, P, A, kc, n,
                                                s0, s1, s2, s3)
            bx = X[s]
            cand[0] = s
            nt = 1
            for p in range(indptr[v], indptr[v + 1]):
                w = indices[p]
                if epoch == 0:
                    s = w
                else:
                    s, kc, s0, s1, s2, s3 = _lookup(w, epoch, P, A, kc, n,
                                                    s0, s1, s2, s3)
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
                u, s0, s1, s2, s3 = _step(s0, s1, s2, s3)
                k = np.int64(u * nt)
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
            if bx == 0:
                B[nb] = s
                nb += 1
            arrivals += 1
            if lv >= K:
                code = 1
        elif u < lamn + nb:
            # departure from a uniform busy server
            i = np.int64(u - lamn)
            if i >= nb:
                i = nb - 1
            s = B[i]
            lv = X[s]
            integ[row, lv] += Q[lv] * (t - last[lv])
            last[lv] = t
            Q[lv] -= 1
            X[s] = lv - 1
            if lv == 1:
                nb -= 1
                B[i] = B[nb]
            departures += 1
        else:
            # resampling epoch: a fresh uniform permutation, O(1)
            epoch += 1
            kc = 0
            resamples += 1
            if epoch > epoch_max:  # O(n) once per 2**31 epochs
                P[:] = -1
                A[:] = -1
                epoch = 1
        u, s0, s1, s2, s3 = _step(s0, s1, s2, s3)
        tnext = t - math.log(1.0 - u) / (lamn + nb + murate)
        if code:
            break
    fs[0] = t
    fs[1] = tnext
    rs[0] = s0
    rs[1] = s1
    rs[2] = s2
    rs[3] = s3
    st[_EPOCH] = epoch
    st[_KC] = kc
    st[_NB] = nb
    st[_EVENTS] = events
    st[_RES] = resamples
    st[_ARR] = arrivals
    st[_DEP] = departures
    st[_BATCH] = batch
    st[_IREC] = irec
    return code


def run(graph, lam, mu, t_end, seed, X0, levels=64):
    """Run the old kernel on ``graph`` from per-server queue lengths ``X0``.

    Returns (events, final queue lengths).  No batches, no records: the
    kernel's bookkeeping of the time integrals is still done (one batch).
    """
    n = graph.n
    rs = np.random.SeedSequence(seed).generate_state(4, np.uint64)
    mu_inf = bool(np.isinf(mu))
    indptr = np.ascontiguousarray(graph.indptr, np.int64)
    indices = np.ascontiguousarray(graph.indices, np.int64)
    maxdeg = int(np.diff(indptr).max())
    K = levels
    X = np.asarray(X0).astype(np.int32)
    Q = np.bincount(X, minlength=K + 1)[::-1].cumsum()[::-1].astype(np.int64)
    B = np.empty(n, np.int32)
    busy = np.nonzero(X > 0)[0]
    B[:busy.size] = busy
    P = np.full(n, -1, np.int64)
    A = np.full(n, -1, np.int64)
    integ = np.zeros((2, K + 1))
    last = np.zeros(K + 1)
    rsum = np.zeros(2)
    rcnt = np.zeros(2)
    paths = np.zeros((0, K + 1))
    cand = np.empty(maxdeg + 1, np.int64)
    fs = np.zeros(2)
    st = np.zeros(_NST, np.int64)
    st[_NB] = busy.size
    st[_BATCH] = -1
    code = _kernel(indptr, indices, n, float(lam), float(mu), mu_inf, float(t_end),
                   0.0, 1, float(t_end), 1.0, 0, X, B, Q, P, A, rs, integ, last,
                   rsum, rcnt, paths, cand, fs, st, EPOCH_MAX)
    if code != 0:
        raise RuntimeError("a queue reached the top level; raise levels")
    return int(st[_EVENTS]), X
