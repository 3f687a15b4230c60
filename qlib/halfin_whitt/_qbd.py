"""Kernels of the structured solver behind stationary_jsq: rank-one level reduction of JSQ's occupancy chain.

The state is ``(I, k, e)``: ``I = n − Q_1`` idle servers, ``k = Q_2`` servers
with at least two tasks, ``e = Q_3`` servers with three (no server has four).
For fixed ``e`` (a *sector*) the chain is block tridiagonal in ``k``: inside a
level ``I`` is a birth–death chain (an arrival takes an idle server at rate
``λ``; a server with one task finishes at rate ``n − I − k``), a level is left
upward only from ``I = 0`` (an arrival that finds no idle server: a rank-one
move ``(0, k) → (0, k + 1)``) and downward at rate ``k − e`` without changing
``I``.  Level reduction from the top,

    z_k = a_k + z_{k−1}(0) b_k,    S_k = T_k − e_0 (b_{k+1} D_{k+1}),

needs three tridiagonal solves per level (the rank-one term by
Sherman–Morrison), so a sector costs ``O(states)``.  Sectors are coupled the
same way: ``e`` rises only from the corner ``(0, n)`` and falls at rate ``e``
without changing ``(I, k)``.
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = []


@numba.njit(cache=True)
def _factor(n, lam, k, m, khi, up_corner, cp, den):
    """Thomas factors of ``x T = v`` for level ``k``'s states ``I = 0..m−1``
    (columns of ``T``: coefficient of ``x_{j−1}`` is ``−(n − j + 1 − k)``, of
    ``x_j`` the out-rate ``d_j`` of the kept moves, of ``x_{j+1}`` is ``−λ``).

    The pivots are formed without subtraction (as in Grassmann–Taksar–Heyman
    elimination): ``d_j = λ[j >= 1] + μ_j + ℓ_j`` with ``μ_j = n − j − k``
    (to ``I + 1``, where kept) and ``ℓ_j`` the rate out of the level (``k``
    departures from servers with two or three tasks, and ``λ`` at ``I = 0``
    where the arrival goes up), and ``den_j = d_j − λ μ_{j−1}/den_{j−1} =
    μ_j + esc_j`` with ``esc_j = ℓ_j + λ esc_{j−1}/den_{j−1}`` (the rate of
    leaving the level through the states below ``j``).  The subtraction would
    cancel to nothing at light loads, where the level is left from its low
    states with a tiny probability (zero pivots at n = 50, beta = 6)."""
    esc = 0.0
    for j in range(m):
        leak = float(k)
        if j == 0 and (k < khi or (k == n and up_corner)):
            leak += lam
        esc = leak + (lam * esc / den[j - 1] if j >= 1 else 0.0)
        den[j] = esc + ((n - j - k) if j + 1 < m else 0.0)
        cp[j] = (-lam) / den[j] if j + 1 < m else 0.0


@numba.njit(cache=True)
def _apply(n, k, m, cp, den, v, x):
    """``x = v T⁻¹`` from the factors (``v`` is overwritten)."""
    for j in range(m):
        a = -(n - j + 1 - k) if j >= 1 else 0.0
        v[j] = (v[j] - (a * v[j - 1] if j >= 1 else 0.0)) / den[j]
    x[m - 1] = v[m - 1]
    for j in range(m - 2, -1, -1):
        x[j] = v[j] - cp[j] * x[j + 1]


@numba.njit(cache=True)
def _sizes(n, J, klo, khi):
    L = khi - klo + 1
    m = np.empty(L, np.int64)
    off = np.zeros(L + 1, np.int64)
    for l in range(L):
        m[l] = min(J, n - (klo + l)) + 1
        off[l + 1] = off[l] + m[l]
    return m, off


@numba.njit(cache=True)
def sector_solve(n, lam, e, J, khi, up_corner, G):
    """Top-down reduction of sector ``e`` (levels ``k = e..khi``) with the
    right-hand sides ``G`` (rows; may be none).  Returns ``(A, Bv, U, off)``:
    ``z = a + z_{k−1}(0) b`` level by level for each row of ``G`` (``z G``-solves
    of ``z (−B) = g``), and ``U`` the bottom level's null vector of the
    homogeneous system (``π_0`` up to scale when the sector is the whole chain).
    In sector ``e = 0`` the bottom level ``k = 0`` is left only upwards, so
    its rank-one pivot is not formed: there ``A`` holds the particular part
    ``h`` (``z_0 = h + z_0(0) U``, the multiple ``z_0(0)`` left to the caller)."""
    m, off = _sizes(n, J, e, khi)
    L = m.size
    r = G.shape[0]
    tot = off[L]
    A = np.zeros((r, tot))
    Bv = np.zeros(tot)
    mx = m[0]
    cp = np.empty(mx); den = np.empty(mx)
    v = np.empty(mx); u = np.empty(mx); w0 = np.empty(mx); h = np.empty(mx)
    U = np.zeros(mx)
    for l in range(L - 1, -1, -1):
        k = e + l
        mm = m[l]
        o = off[l]
        _factor(n, lam, k, mm, khi, up_corner, cp, den)
        rate = k + 1 - e
        v[:mm] = 0.0
        if l + 1 < L:
            o2 = off[l + 1]
            for i in range(m[l + 1]):
                v[i] = Bv[o2 + i] * rate
        _apply(n, k, mm, cp, den, v, u)
        v[:mm] = 0.0
        v[0] = 1.0
        _apply(n, k, mm, cp, den, v, w0)
        dd = 1.0 - u[0]
        if l == 0:
            U[:mm] = u[:mm]
            if r == 0:
                # a closed sector (the whole chain): level 0's reduced matrix is
                # singular, u its null vector and the pivot 1 − u_0 zero up to
                # rounding (exactly zero at n = 3, λ = 2.7); b_0 is never used
                Bv[o:o + mm] = 0.0
                continue
        if l == 0 and e == 0:
            # sector 0's bottom level is left only upwards: its pivot 1 − u_0 is
            # the probability of leaking out of the sector at the corner before
            # coming back, far below rounding at light loads; keep the
            # particular part h (A_0 = h) and let the caller fix the multiple
            # of the homogeneous solution by the flux balance of the sector
            Bv[o:o + mm] = 0.0
            for q in range(r):
                for i in range(mm):
                    v[i] = G[q, o + i]
                if l + 1 < L:
                    o2 = off[l + 1]
                    for i in range(m[l + 1]):
                        v[i] += A[q, o2 + i] * rate
                _apply(n, k, mm, cp, den, v, h)
                for i in range(mm):
                    A[q, o + i] = h[i]
            continue
        if dd == 0.0:
            raise ZeroDivisionError("sector_solve: zero rank-one pivot in an open sector")
        s = w0[0] / dd
        for i in range(mm):
            Bv[o + i] = lam * (w0[i] + s * u[i])
        for q in range(r):
            for i in range(mm):
                v[i] = G[q, o + i]
            if l + 1 < L:
                o2 = off[l + 1]
                for i in range(m[l + 1]):
                    v[i] += A[q, o2 + i] * rate
            _apply(n, k, mm, cp, den, v, h)
            s = h[0] / dd
            for i in range(mm):
                A[q, o + i] = h[i] + s * u[i]
    return A, Bv, U, off


@numba.njit(cache=True)
def forward(A_row, Bv, U, off, homogeneous):
    """``z`` level by level from the reduction: ``z_0 = U`` (homogeneous) or
    ``a_0``, then ``z_k = a_k + z_{k−1}(0) b_k``; each level is rescaled and
    its log scale returned (``z = x · exp(logs[level])``)."""
    L = off.size - 1
    x = np.empty(off[L])
    logs = np.zeros(L)
    m0 = off[1]
    for i in range(m0):
        x[i] = U[i] if homogeneous else A_row[i]
    prev0 = x[0]
    prevlog = 0.0
    for l in range(1, L):
        o, o2 = off[l], off[l + 1]
        # z_l = a_l + z_{l−1}(0) b_l; z_{l−1}(0) = prev0 · exp(prevlog)
        if homogeneous:
            for i in range(o, o2):
                x[i] = prev0 * Bv[i]
            logs[l] = prevlog
        else:
            sc = np.exp(prevlog)
            for i in range(o, o2):
                x[i] = A_row[i] + prev0 * sc * Bv[i]
            logs[l] = 0.0
        mx = 0.0
        for i in range(o, o2):
            mx = max(mx, abs(x[i]))
        if homogeneous and mx > 0:
            for i in range(o, o2):
                x[i] /= mx
            logs[l] += np.log(mx)
        prev0 = x[o]
        prevlog = logs[l]
    return x, logs


@numba.njit(cache=True)
def stream_chunk(n, lam, J, klo, khi, ktop, bnext, out):
    """Levels ``khi`` down to ``klo`` of the single-sector chain (no server
    with three tasks; levels ``k <= ktop``), storing per level ``k`` in
    ``out[k]`` the scalars ``(b(0), Σ b, Σ I b, Σ I² b, (n − J − k) b(J))``
    of ``b_k`` (the last zero where ``J >= n − k``; of the
    null vector ``u`` at ``k = 0``).  ``bnext`` is ``b_{khi+1}`` (zeros at
    the top); returns ``b_{klo}``."""
    mx = min(J, n) + 1
    cp = np.empty(mx); den = np.empty(mx)
    v = np.empty(mx); u = np.empty(mx); w0 = np.empty(mx)
    b = bnext.copy()
    mprev = min(J, n - (khi + 1)) + 1 if khi + 1 <= ktop else 0
    for k in range(khi, klo - 1, -1):
        mm = min(J, n - k) + 1
        _factor(n, lam, k, mm, ktop, False, cp, den)
        v[:mm] = 0.0
        for i in range(mprev):
            v[i] = b[i] * (k + 1)
        _apply(n, k, mm, cp, den, v, u)
        if k == 0:
            for i in range(mm):
                b[i] = u[i]
        else:
            v[:mm] = 0.0
            v[0] = 1.0
            _apply(n, k, mm, cp, den, v, w0)
            s = w0[0] / (1.0 - u[0])
            for i in range(mm):
                b[i] = lam * (w0[i] + s * u[i])
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        for i in range(mm):
            s0 += b[i]
            s1 += i * b[i]
            s2 += i * i * b[i]
        out[k, 0] = b[0]
        out[k, 1] = s0
        out[k, 2] = s1
        out[k, 3] = s2
        # departures blocked at the idle cut (I = J < n − k): rate (n − J − k) b(J)
        out[k, 4] = (n - J - k) * b[J] if J < n - k else 0.0
        mprev = mm
    return b


@numba.njit(cache=True)
def sector_moments(n, x, off, e, out):
    """Per-level sums of sector ``e``'s vector ``x`` (negative round-off
    clamped to zero): ``out[5k:5k+5] = (x(0, k), Σ x, Σ I x, Σ I² x,
    (n − I_top − k) x(I_top, k))`` over level ``k = e..`` (``I_top`` the
    level's top idle count: the last term is the departure flux blocked at
    the idle cut, zero where the level is whole), and ``out[-2:] = (Σ x, e Σ x)``."""
    L = off.size - 1
    tm = 0.0
    for l in range(L):
        k = e + l
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        o = off[l]
        for i in range(off[l + 1] - o):
            v = x[o + i]
            if v < 0.0:
                v = 0.0
            s0 += v
            s1 += i * v
            s2 += i * i * v
        x0 = x[o]
        out[5 * k] = x0 if x0 > 0.0 else 0.0
        out[5 * k + 1] = s0
        out[5 * k + 2] = s1
        out[5 * k + 3] = s2
        mm = off[l + 1] - o
        xj = x[o + mm - 1]
        out[5 * k + 4] = (n - (mm - 1) - k) * xj if xj > 0.0 else 0.0
        tm += s0
    out[out.size - 2] = tm
    out[out.size - 1] = e * tm
