"""The uniformized kernel of :func:`~qlib.halfin_whitt.simulate.simulate_jsq`: one uniform and integer updates per step.

The occupancy chain ``(Q_1, Q_2, …)`` of JSQ on ``n`` servers jumps at
total rate ``λ_n + Q_1`` (an arrival joins a shortest queue; a departure
leaves a uniform busy server). Uniformized at the constant rate
``Λ = λ_n + n``, its potential events form a Poisson process of rate ``Λ``
independent of the states, and each one is, by one uniform ``u``: an
arrival when ``u Λ < λ_n``, else a potential departure at the server
``⌊u Λ − λ_n⌋`` of ``0..n−1``, a real departure (from the level ``i`` with
``Q_{i+1} <= v < Q_i``) when that server is busy and a self-loop when it is
idle. The path is the model's, exactly in law. ``simulate_jsq`` runs it for
``kernel="uniformized"``, and for the default ``kernel="auto"`` where it pays
(few self-loops, several steps per cell; stream ``"uniformized-1"``).

The epochs are never drawn one by one. ``[0, t_end]`` is cut at a grid
fixed by the inputs (the batch slices of ``[burn_in, t_end]``, as many
slices of the same length before ``burn_in``, and the ``record_dt`` points);
the number of steps in a cell of length ``h`` is Poisson(``Λ h``), the cells
independent, so the state at every grid point, the arrivals and the
waiting arrivals in every cell are exact in law. Given the jump chain and
the counts, the ``m`` epochs in a cell are ``m`` sorted uniforms, and a time
integral over the cell, ``Σ_k f(X_k) (epoch_{k+1} − epoch_k)``, has the
conditional mean ``h / (m + 1) · Σ_{k=0}^{m} f(X_k)``: that is what the kernel
adds (a Rao–Blackwellisation: the same mean, from any start, and no larger
variance; the statistics over the cells, batch means included, are of
these sums). The first epoch with ``Q_3 = 0``, the ``k``-th of ``m`` in its
cell, is drawn from its law, ``Beta(k, m + 1 − k)`` of the cell. A waiting
time is ``Gamma(s, 1)`` as on the event kernel, ``−log`` of a product of
``s`` uniforms.

Random numbers: the steps' uniforms are SplitMix64's output over a counter
(Steele, Lea and Flood 2014), 53 bits each; the counts, the one beta draw
and nothing else come from numba's generator, seeded inside the kernel.
"""
from __future__ import annotations

import math

import numba
import numpy as np

__all__ = []

_GOLD = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_TWO53 = 1.0 / 9007199254740992.0

# the kernel's state between calls (progress slices): integers and floats
_S, _N, _NW, _G, _IREC, _ARRS, _OVF, _DONE, _CTR, _DEPS = range(10)
_T, _T3, _CUMW = range(3)


@numba.njit(cache=True, inline="always")
def _uniform(ctr):
    """The uniform in [0, 1) of counter value ``ctr`` (SplitMix64's output, 53 bits)."""
    z = ctr * _GOLD
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    z = z ^ (z >> _S31)
    return np.float64(z >> _S11) * _TWO53


@numba.njit(cache=True)
def _grid_end(g, nburn, nfine, burn_in, t_end):
    """The end of the ``g``-th cell of the fixed grid (records aside)."""
    if g < nburn - 1:
        return burn_in * (g + 1) / nburn
    if g == nburn - 1:
        return burn_in
    j = g - nburn + 1
    if j >= nfine:
        return t_end
    return burn_in + (t_end - burn_in) * j / nfine


@numba.njit(cache=True)
def _uniformized_kernel(seed, ctr0, n, lam, t_end, burn_in, Q, K, nfine, nburn, rec_dt, nrec,
                        slice_end, acc, arr, warr, waits, paths, ist, fst):
    # Q[0] = n, Q[1..K] the occupancy counts, Q[K+1] = 0 a sentinel. seed >= 0:
    # a fresh run (ctr0 the counter's start); seed < 0: go on from ist, fst.
    # Returns at the first grid point at or after slice_end, or at t_end.
    sq = math.sqrt(n)
    max_waits = waits.size
    Lam = lam + n
    if seed >= 0:
        np.random.seed(seed)
        s = 0  # length of a shortest queue: largest i with Q[i] == n
        while s < K and Q[s + 1] == n:
            s += 1
        N = 0
        for i in range(1, K + 1):
            N += Q[i]
        nw = 0
        g = 0
        irec = 0
        arrivals = 0
        deps = 0
        overflow = 0
        ctr = np.uint64(ctr0)
        t = 0.0
        t3 = 0.0 if Q[3] == 0 else -1.0
        cumw = 0.0
    else:
        s, N, nw, g, irec = ist[_S], ist[_N], ist[_NW], ist[_G], ist[_IREC]
        arrivals, overflow, deps = ist[_ARRS], ist[_OVF], ist[_DEPS]
        ctr = np.uint64(ist[_CTR])
        t, t3, cumw = fst[_T], fst[_T3], fst[_CUMW]
    ncell = nburn + nfine
    done = 0
    q1, q2, q3 = Q[1], Q[2], Q[3]
    while True:
        while irec < nrec and irec * rec_dt <= t:
            paths[irec, 0] = (q1 - n) / sq
            paths[irec, 1] = q2 / sq
            paths[irec, 2] = q3 / sq
            paths[irec, 3] = cumw
            irec += 1
        if g >= ncell:
            done = 1
            break
        if t >= slice_end:
            break
        ge = _grid_end(g, nburn, nfine, burn_in, t_end)
        b = ge
        if irec < nrec and irec * rec_dt < b:
            b = irec * rec_dt
        h = b - t
        m = np.random.poisson(Lam * h) if h > 0 else 0
        inwin = g >= nburn
        # Σ_{k=0}^{m} of Q_1, Q_2, Q_3, N, 1{Q_1 = n} over the jump chain's states
        s1, s2, s3, sN, sf = q1, q2, q3, N, 1 if s >= 1 else 0
        na = 0
        nwa = 0
        for k in range(m):
            ctr += np.uint64(1)
            x = _uniform(ctr) * Lam
            if x < lam:  # an arrival joins a queue of length s
                if s + 1 > K:
                    overflow = 1
                    break
                na += 1
                if s >= 1:
                    nwa += 1
                    if inwin and nw < max_waits:
                        # FIFO: Gamma(s, 1), −log of a product of s uniforms
                        w = 0.0
                        p = 1.0
                        for _ in range(s):
                            ctr += np.uint64(1)
                            p *= 1.0 - _uniform(ctr)
                            if p < 1e-280:
                                w -= math.log(p)
                                p = 1.0
                        waits[nw] = w - math.log(p)
                        nw += 1
                Q[s + 1] += 1
                N += 1
                if Q[s + 1] == n:
                    s += 1
            else:
                v = x - lam  # a uniform server of 0..n-1; busy when v < Q_1
                if v < q1:
                    i = 1  # the level i with Q[i+1] <= v < Q[i]
                    while Q[i + 1] > v:
                        i += 1
                    Q[i] -= 1
                    N -= 1
                    deps += 1
                    if i <= s:
                        s = i - 1
                    if i == 3 and Q[3] == 0 and t3 < 0:
                        # the (k+1)-th of m sorted uniform epochs in (t, b]
                        t3 = t + h * np.random.beta(k + 1.0, m - k)
            q1, q2, q3 = Q[1], Q[2], Q[3]
            s1 += q1
            s2 += q2
            s3 += q3
            sN += N
            if s >= 1:
                sf += 1
        if overflow:
            done = 1
            break
        arrivals += na
        wgt = h / (m + 1)
        cumw += wgt * (sN - s1)
        if inwin:
            cb = g - nburn
            acc[cb, 0] += wgt * (n * (m + 1) - s1)
            acc[cb, 1] += wgt * s2
            acc[cb, 2] += wgt * s3
            acc[cb, 3] += wgt * (sN - s1)
            acc[cb, 4] += wgt * sf
            arr[cb] += na
            warr[cb] += nwa
        t = b
        if b == ge:
            g += 1
            if g >= ncell:
                t = t_end
    ist[_S], ist[_N], ist[_NW], ist[_G], ist[_IREC] = s, N, nw, g, irec
    ist[_ARRS], ist[_OVF], ist[_DONE], ist[_DEPS] = arrivals, overflow, done, deps
    ist[_CTR] = np.int64(ctr)
    fst[_T], fst[_T3], fst[_CUMW] = t, t3, cumw
