"""stationary_jsq: the stationary law of the finite-n JSQ chain by rank-one level reduction, with a certified bound on the idle-server truncation."""
from __future__ import annotations

import math
import numbers
import sys
import time
import numpy as np

from qlib.halfin_whitt import _qbd
from qlib.halfin_whitt._slices import progress_bar
from qlib.halfin_whitt._common import _check_beta, _check_n, _check_pos
from qlib.halfin_whitt._chain_result import StationaryJSQ, _QUANTITIES, _quantities

__all__ = ['stationary_jsq', 'StationaryJSQ', 'SOLVER_VERSION']

#: Version of :func:`stationary_jsq`'s values and error estimates.  Bump it
#: whenever a change can move a stored value or estimate; the benchmark files
#: that store the solver's output record the version that wrote them, and
#: ``tests/test_stored_chain_versions.py`` fails when a file is older.
#: 1: estimates before the frontier-tail estimator (b01ec94);
#: 2: error_estimates with the outside-mass term summed along the slow tail;
#: 3: the structured solver (rank-one level reduction in ``Q_2``, certified
#: idle-server truncation); the adaptive solver is ``chain_fsp.stationary_jsq_fsp``.
#: (Not bumped for the fix of sector 0's scale and the subtraction-free pivots,
#: which move some stored rows beyond their error estimates: see CHANGELOG.)
SOLVER_VERSION = 3

# the result type is defined beside the adaptive solver's helpers; it is documented and pickled here
StationaryJSQ.__module__ = __name__


# ---------------------------------------------------------------- stationary

_NS_PER_STATE = 40e-9       # seconds per state and sweep (one core, measured, with margin)
_CHUNK = 2000               # levels per kernel call (progress)
_FSP_SWITCH = 1e-8          # estimated mass beyond three tasks above which the adaptive solver runs
_FSP_TOL = 1e-10            # its admission threshold at the default tol (its own default) ...
_FSP_TOL_RATIO = 100.0      # ... and per unit of a tighter tol


def _idle_cut(n, lam, tol):
    """The smallest ``J`` with ``P(Ĩ > J) <= tol``, and that bound.

    ``Ĩ``'s weights ``w(i) = n!/((n − i)! λ^i)`` rise while ``n − i > λ`` and
    then fall with a ratio ``(n − i)/λ`` that keeps falling, so beyond ``i_max``
    their sum is at most the geometric sum at the ratio of ``i_max``."""
    top = min(n, int(n - lam + 40 * math.sqrt(n) + 50))
    i = np.arange(top + 1)
    logw = np.concatenate([[0.0], np.cumsum(np.log((n - i[:-1]) / lam))])
    w = np.exp(logw - logw.max())
    q = (n - top) / lam
    rest = w[-1] * q / (1 - q) if top < n else 0.0
    tail = np.cumsum(w[::-1])[::-1] + rest          # tail[j] = Σ_{i >= j} w(i)
    tail = np.append(tail, rest) / tail[0]           # P(Ĩ >= j), j = 0..top+1
    J = int(np.nonzero(tail[1:] <= tol)[0][0]) if top == n or tail[-1] <= tol else top
    return J, float(tail[J + 1])


def _states(n, J, K):
    """Number of states ``(I, k)`` with ``k <= K``, ``I <= min(J, n − k)``."""
    k = np.arange(K + 1)
    return int(np.sum(np.minimum(J, n - k) + 1))


def _stream(n, lam, J, K, bar):
    """Single-sector solve (no server with three tasks, ``Q_2 <= K``), by
    levels from the top; returns the per-level law of ``I``'s moments."""
    out = np.zeros((K + 1, 5))
    b = np.zeros(min(J, n) + 1)
    k = K
    while k >= 0:
        lo = max(0, k - _CHUNK + 1)
        b = _qbd.stream_chunk(n, lam, J, lo, k, K, b, out)
        bar.update(k - lo + 1)
        k = lo - 1
    # π_k = c_k b_k with c_0 = 1 (b_0 = u) and c_k = π_{k−1}(0), in logs
    with np.errstate(divide="ignore"):
        lb0 = np.log(out[:, 0])
    logc = np.concatenate([[0.0], np.cumsum(lb0[:-1])])
    mass = np.log(out[:, 1]) + logc
    top = mass.max()
    c = np.exp(logc - top)
    tot = float(np.sum(c * out[:, 1]))
    c /= tot
    return c[:, None] * out, out[0, 0]


def _sectors(n, lam, J, emax, bar, keep=True):
    """All sectors ``e = emax..0`` (``Q_2`` up to ``n``) by the nested
    reduction, one sector held at a time.

    Sector ``e``'s law is ``π_e = π_{e−1}(corner) λ s_e``: the per-level sums
    of each ``s_e`` (kernel ``sector_moments``) are accumulated from the top
    by Horner's rule, ``acc_e = M(s_e) + λ s_e(corner) acc_{e+1}``, carried
    with a log scale.  Returns ``(P, mean_q3, corner, states, pi)``: ``P`` the
    per-level sums ``(π_k(0), Σπ_k, ΣIπ_k, ΣI²π_k)`` of the normalised law,
    ``corner`` the mass of the top sector's corner; ``states``/``pi`` the
    rows ``(Q_1, Q_2, Q_3)`` and their law where ``keep`` (else ``None``)."""
    s_up = None
    parts = [] if keep else None
    acc, acc_log, up_log, top_log = None, 0.0, 0.0, 0.0
    for e in range(emax, -1, -1):
        m, off = _qbd._sizes(n, J, e, n)
        tot = int(off[-1])
        G = np.zeros((int(e >= 1) + int(s_up is not None), tot))
        if e >= 1:
            G[0, -1] = 1.0
        if s_up is not None:
            G[-1, m[0]:] = s_up * (e + 1)
            g_sum = float(np.sum(G[-1]))    # the flux back from sector e + 1
            s_up = None                     # held in G now
        A, Bv, U, off = _qbd.sector_solve(n, lam, e, J, n, e < emax, G)
        del G
        bar.update(n - e + 1)
        if e == 0 and emax:
            v = _open_bottom(A[0], Bv, U, off, lam, g_sum)
        elif e == 0:
            v = _scaled(*_qbd.forward(Bv, Bv, U, off, True), off)
        else:
            v = _qbd.forward(A[0], Bv, U, off, False)[0]
            if A.shape[0] == 2:
                y = _qbd.forward(A[1], Bv, U, off, False)[0]
                A = Bv = None
                y *= lam * (v[-1] / (1.0 - lam * y[-1]))
                v += y
                del y
            s_up = v
        A = Bv = None
        M = np.zeros(5 * (n + 1) + 2)
        _qbd.sector_moments(n, v, off, e, M)
        with np.errstate(divide="ignore"):
            lc = math.log(lam * v[-1]) if v[-1] > 0 else -math.inf
        if acc is None:
            acc = M
            top_log = math.log(v[-1]) if v[-1] > 0 else -math.inf
        else:
            g = lc + acc_log                # acc_e = M(s_e) + λ s_e(corner) acc_{e+1}
            if g > 0:
                acc = M * math.exp(-g) + acc
                acc_log = g
            else:
                acc = M + math.exp(g) * acc
                acc_log = 0.0
            up_log += lc                    # Σ_{e' < emax} log(λ s_e'(corner))
        if keep:
            parts.append(v)
    mass = acc[-2]
    P = acc[:-2].reshape(n + 1, 5) / mass
    corner = math.exp(up_log + top_log - math.log(mass) - acc_log) if mass > 0 else 0.0
    eq3 = float(acc[-1] / mass)
    if not keep:
        return P, eq3, corner, None, None
    # π_0 ∝ parts[0]; π_e = π_{e−1}(corner) λ s_e
    parts = parts[::-1]
    pis = [parts[0]]
    for e in range(1, emax + 1):
        pis.append(pis[-1][-1] * lam * parts[e])
    Q = []
    for e in range(emax + 1):
        m, off = _qbd._sizes(n, J, e, n)
        k = np.repeat(np.arange(e, n + 1), m)
        i = np.concatenate([np.arange(v) for v in m])
        Q.append(np.stack([n - i, k, np.full(k.size, e)], axis=1))
    Q = np.concatenate(Q)
    pi = np.maximum(np.concatenate(pis), 0.0)
    return P, eq3, corner, Q, pi / pi.sum()


#: The top sector's corner mass over the one-sector solve's (``π(I = 0, Q_2 = n)``),
#: 0.39 at n = 300, beta = 0.25 (64 sectors) and 0.87 at n = 2800, beta = 0.5 (16 sectors):
#: the prediction of the sectors needed errs towards fewer.
_CORNER_RATIO = 0.1
_NS_PER_SECTOR_STATE = 150e-9   # seconds per state of a Q_3 sector (two right-hand sides; 121-127 ns measured at n = 2800)
_KEEP = 10_000_000              # states and pi are returned for at most this many states


def _sectors_needed(n, flux0, tol, ratio):
    """The ``emax`` at which the sector loop (``emax = 0, 1, 3, 7, …``, capped
    at ``n``) is predicted to stop, from ``flux0 = λ π(corner)`` of the
    one-sector solve: the corner mass of the top sector stays within a factor
    ``ratio`` of the one-sector corner (the sectors' masses are spread over
    ``Q_3``, not geometric), so the flux criterion ``λ π(corner)/(emax + 1) <= tol/2``
    needs ``emax + 1 >= 2 flux0 ratio / tol``."""
    e = 0
    while e < n and flux0 * ratio / (e + 1) > tol / 2:
        e = min(n, 2 * e + 1)
    return e


def _sector_cost(n, J, e_lo, e_hi):
    """``(states, bytes, state-solves)`` of the sector passes ``emax = e_lo``,
    then doubled up to ``e_hi``: the states of the first pass, the bytes it
    holds (one sector's vectors, eight floats a state, and the rows and law
    where they are kept) and the states solved by all the passes."""
    w = np.minimum(J, n - np.arange(n + 1)) + 1                  # states of level k
    S = np.cumsum(w[::-1])[::-1].astype(float)                   # states of sector e
    T = np.cumsum(S)                                             # of sectors 0..e
    work, e = 0.0, e_lo
    while True:
        work += T[e]
        if e >= e_hi or e >= n:
            break
        e = min(n, 2 * e + 1)
    held = 8.0 * 8 * S[0] + 8.0 * 12 * (n + 1)                 # 58 MB measured at S[0] = 1.03e6
    if T[e_lo] <= _KEEP:
        held += 8.0 * 14 * T[e_lo]                               # parts, rows, law (96 B measured)
    return float(T[e_lo]), held, work


def _scaled(x, logs, off):
    lv = np.repeat(logs, np.diff(off))
    return x * np.exp(lv - lv.max())


def _open_bottom(a, Bv, U, off, lam, g_sum):
    """Sector 0's law (up to scale) where the sectors above are solved: ``z``
    with ``z (−Q_00) = g``, ``g`` the flux back from sector 1 (total ``g_sum``).

    The reduction (``a`` from :func:`_qbd.sector_solve`, whose bottom level
    holds the particular part ``h``) gives ``z = P + s H``: ``P`` the forward
    pass from ``z_0 = h``, ``H`` the homogeneous one from ``z_0 = U``, ``s =
    z_0(0)``.  The bottom level's own equation for ``s``, ``s (1 − U_0) = h_0``,
    has a pivot ``1 − U_0`` (the chance of leaving the sector at the corner
    before coming back) that is far below rounding at light loads; ``s`` is
    fixed instead by the sector's flux balance, the only exit being the
    corner's arrivals: ``λ z(corner) = g_sum``.  ``P`` and ``H`` are
    non-negative and ``P(corner) <= z(corner)``, so ``s H(corner) = g_sum/λ −
    P(corner)`` is a difference of non-negative terms whose result is not
    small beside them where ``s H`` carries the bulk of the law (light
    loads).  ``H`` is carried with its per-level log scale."""
    P = _qbd.forward(a, Bv, U, off, False)[0]
    x, logs = _qbd.forward(a, Bv, U, off, True)
    lv = np.repeat(logs, np.diff(off))
    top = lv.max()
    rest = g_sum / lam - P[-1]
    if -1e-12 * (g_sum / lam) <= rest < 0:     # P(corner) = z(corner) up to round-off
        rest = 0.0
    if not (x[-1] > 0 and rest >= 0 and math.isfinite(rest)):
        raise FloatingPointError(f"stationary_jsq: sector 0's corner balance failed "
                                 f"(H(corner) = {x[-1]:g}, g/λ − P(corner) = {rest:g})")
    # z / exp(top − logs[-1]) = P exp(logs[-1] − top) + (rest / x[-1]) x exp(lv − top)
    return P * math.exp(logs[-1] - top) + (rest / x[-1]) * (x * np.exp(lv - top))


def _from_moments(P, n, lam, beta):
    """The quantities from the per-level sums ``P[k] = (π_k(0), Σπ_k, ΣIπ_k, ΣI²π_k)``."""
    sq = math.sqrt(n)
    k = np.arange(P.shape[0], dtype=float)
    m0, m1, m2 = P[:, 1], P[:, 2], P[:, 3]
    EI, EI2 = float(m1.sum()), float(m2.sum())
    Ek, Ek2, EIk = float(k @ m0), float((k * k) @ m0), float(k @ m1)
    f = {"p_wait": float(P[:, 0].sum()), "mean_q1": n - EI, "mean_idle": EI, "mean_q2": Ek,
         "mean_q3": 0.0, "mean_tasks": n - EI + Ek, "mean_waiting": Ek,
         "mean_x1": -EI / sq, "mean_x2": Ek / sq, "mean_x1x2": -EIk / n}
    f["mean_response"] = f["mean_tasks"] / lam
    f["mean_wait"] = f["mean_waiting"] / lam
    f["var_x1"] = (EI2 - EI * EI) / n
    f["var_x2"] = (Ek2 - Ek * Ek) / n
    f["cov_x1x2"] = f["mean_x1x2"] - f["mean_x1"] * f["mean_x2"]
    pmf = np.zeros(n + 1)
    pmf[:m0.size] = m0
    return f, pmf


def _from_sector_moments(P, eq3, n, lam):
    """The quantities from the per-level sums over all sectors (as in
    :func:`_from_moments`) and ``eq3 = E[Q_3]``; the second moments of
    ``Q_2`` centred."""
    sq = math.sqrt(n)
    k = np.arange(P.shape[0], dtype=float)
    m0, m1, m2 = P[:, 1], P[:, 2], P[:, 3]
    EI, EI2 = float(m1.sum()), float(m2.sum())
    Ek = float(k @ m0)
    dk = k - Ek
    f = {"p_wait": float(P[:, 0].sum()), "mean_q1": n - EI, "mean_idle": EI, "mean_q2": Ek,
         "mean_q3": eq3, "mean_tasks": n - EI + Ek + eq3, "mean_waiting": Ek + eq3,
         "mean_x1": -EI / sq, "mean_x2": Ek / sq, "mean_x1x2": -float(k @ m1) / n}
    f["mean_response"] = f["mean_tasks"] / lam
    f["mean_wait"] = f["mean_waiting"] / lam
    f["var_x1"] = (EI2 - EI * EI) / n
    f["var_x2"] = float((dk * dk) @ m0) / n
    f["cov_x1x2"] = -float(dk @ m1) / n
    return f, m0.copy()


#: The rate-balance check's relative margin (see :func:`_check_balance`).
_BALANCE_RTOL = 1e-7


def _check_balance(n, lam, f, P, p_blocked, beta, tol):
    """Refuse a solve that breaks the truncated chain's rate balance.

    In the chain the solver solves, tasks arrive at rate ``λ`` except in the
    blocked corner (mass ``p_blocked``) and leave at rate ``n − I`` except at
    the idle cut, where the flux ``Σ_k (n − J − k) π(J, k)`` (``P[:, 4]``) is
    blocked; so ``E[I] − (n − λ) = λ p_blocked − Σ_k (n − J − k) π(J, k)``
    holds exactly for its stationary law, whatever the cuts.  A solve whose
    quantities are not finite, or break this by more than ``_BALANCE_RTOL``
    of the terms' size (round-off of a correct solve is some orders below),
    raises ``FloatingPointError`` rather than return a wrong law.  The
    relative residual of correct solves measured below ``2·10⁻¹³`` (n = 20
    to 2·10⁵, light to heavy loads, with and without the ``Q_3`` sectors);
    the failures it guards against (a lost pivot, a wrong scale between
    sectors) move ``E[I]`` by a fraction of itself."""
    ei = f["mean_idle"]
    cut = float(P[:, 4].sum())
    rhs = lam * p_blocked - cut
    res = (ei - (n - lam)) - rhs
    scale = (n - lam) + lam * p_blocked + cut
    bad = [q for q, v in f.items() if not math.isfinite(v)]
    if bad or not abs(res) <= _BALANCE_RTOL * scale:
        raise FloatingPointError(
            f"stationary_jsq(n = {n}, beta = {beta}, tol = {tol:g}): the solve is not "
            f"trustworthy ({'non-finite ' + ', '.join(bad) if bad else ''}"
            f"{'; ' if bad else ''}rate balance E[I] − (n − λ) = {ei - (n - lam):.6g} against "
            f"λ·π(blocked) − blocked departures = {rhs:.6g}); please report it")


def _tail_estimate(pmf, K, n):
    """Mass beyond ``Q_2 = K`` extrapolated from the decay of ``π(Q_2 = k)``
    over the quarter of the levels below the top (the boundary's own levels
    are depressed by the cut)."""
    if K >= n:
        return 0.0
    h = max(2, K // 8)
    a, b = pmf[K - 2 * h], pmf[K - h]
    if not (a > 0 and b > 0):
        return 0.0
    rho = min((b / a) ** (1.0 / h), 1 - 1e-12)
    return float(b * rho ** h / (1 - rho))


def stationary_jsq(n: int, beta: float, *, tol: float = 1e-12, max_states: int = 3_000_000_000,
                   max_memory: float = 4e9, max_seconds: float = 600.0,
                   progress: bool | None = None, fallback: bool = True) -> StationaryJSQ:
    """Stationary law of the finite-``n`` JSQ occupancy chain by rank-one
    level reduction, with a certified bound on the truncated idle servers.

    Parameters
    ----------
    n : int
        ``n >= 2``.
    beta : float
        ``0 < beta < √n``; the arrival rate is ``λ_n = n − β√n``.  (For the
        super-Halfin–Whitt load ``1 − β' n^{−α}`` pass ``β = β' n^{1/2−α}``.)
    tol : float, default 1e-12
        Target for the neglected mass, in ``(0, 1e-3]``: the idle-server cut
        ``J`` is the smallest with certified tail ``<= tol/2``, and the
        ``Q_2`` and ``Q_3`` cuts are widened until their estimated mass is
        ``<= tol/2``. Where the adaptive solver answers (``method="fsp"``), its
        admission threshold is ``min(1e-10, 100 * tol)``.
    max_states, max_memory, max_seconds
        Refuse (ValueError, before any work; for the ``Q_3`` sectors, after
        the one-sector solve that predicts how many are needed) a truncation
        that needs more states, bytes held or estimated CPU seconds than
        this (for the sectors: the states of one pass, the bytes of one
        sector's vectors, the seconds of all the passes predicted).
    progress : bool or None, default None
        A progress bar over the levels swept; ``None``: one where a sweep is
        estimated to take more than 5 s (and over the adaptive solver's
        rounds where it answers) and standard error is a terminal.
    fallback : bool, default True
        Where servers with four tasks carry an estimated mass above ``10⁻⁸``,
        return the adaptive solver's result instead (see Notes); ``False``
        returns the structured solve of the chain capped at three tasks per
        server, with that mass in ``mass_tail``.

    Returns
    -------
    StationaryJSQ
        The quantities, ``mass_bound`` (the certified bound on the mass of
        ``I > J``), ``mass_tail`` (the estimated mass beyond the ``Q_2`` or
        ``Q_3`` cut; zero where ``Q_2`` is not cut), ``truncated_mass``
        (their sum), ``error_estimates``; ``states``/``pi`` for truncations
        of at most ``10⁷`` states (else ``None``).

    Raises
    ------
    FloatingPointError
        Where the solve's quantities are not finite or break the truncated
        chain's rate balance (see *Checks*): a failed solve, never returned.
    TypeError, ValueError
        For a bad argument, naming it; ValueError also when the truncation
        would exceed ``max_states``, ``max_memory`` or ``max_seconds`` (with
        the estimate).  Where the ``Q_2`` cut would reach ``n`` (heavy load)
        the ``Q_3`` sectors may be needed, up to ``(n + 1)(J + 1)`` states
        each, ``n + 1`` of them at most; they are solved one at a time
        (memory: one sector's vectors), and the refusal names the sectors,
        states and CPU seconds predicted.

    Notes
    -----
    *State.*  ``(I, Q_2, Q_3)`` with ``I = n − Q_1``; no server holds four
    tasks (that needs ``Q_3 = n``: every server with three).  For fixed
    ``Q_3`` the chain is block tridiagonal in ``Q_2``, tridiagonal in ``I``
    inside a level, with rank-one up-moves (an arrival that finds no idle
    server, ``(0, k) → (0, k + 1)``): level reduction from the top costs
    three tridiagonal solves per level (the private module ``qlib.halfin_whitt._qbd``).
    ``Q_3`` rises only from the corner ``(I, Q_2) = (0, n)``, again rank one.

    *Certified idle-server cut.*  In JSQ the idle count ``I`` falls at rate
    ``λ`` (an arrival, when ``I > 0``) and rises at rate ``n − I − Q_2`` (a
    server with one task finishes), which is at most ``n − I``.  Coupling
    ``I`` with the birth–death chain ``Ĩ`` of rates ``n − Ĩ`` up and ``λ``
    down (common arrivals; ``I``'s rises a thinning of ``Ĩ``'s when they are
    equal) keeps ``I <= Ĩ`` at all times, so ``π(I > J) <= P(Ĩ > J)``, and
    ``Ĩ``'s law is explicit, ``∝ n!/((n − i)! λ^i)``.  ``mass_bound`` is that
    tail: a bound on the stationary mass outside the cut, not an estimate.

    *Other cuts.*  Where ``n·J`` is small the whole range ``Q_2 <= n`` is
    kept and the ``Q_3`` sectors ``0..e`` are added until the flux out of
    the top one over its departure rate, ``λ π(corner)/(e + 1)``, is below
    ``tol/2`` (``mass_tail``: an estimate of the mass above).  The sectors'
    masses are spread nearly evenly over ``Q_3`` (the top sector's corner
    stays near the one-sector solve's), so the number the criterion will ask
    for is predicted from the one-sector solve (the loop starts there and
    doubles ``e + 1``), and what would not fit is refused (or handed to the
    adaptive solver) then, not after the sectors.  The sectors are solved
    from the top, one held at a time: each one's per-level sums are
    accumulated by Horner's rule in the corner values
    (``π_e = π_{e−1}(corner) λ s_e``, carried in logs), so memory is that of
    one sector; ``states``/``pi`` are kept where all sectors have at most
    ``10⁷`` states.  Where a single sector (``(n + 1)(J + 1)`` states) would
    not fit it is swept by levels (memory ``O(n)``, the super-Halfin–Whitt
    loads at large ``n``), and where the sectors then needed do not fit but
    the blocked flux ``λ π(corner)`` is at most ``10⁻⁸`` that one-sector
    solve is returned with it as ``mass_tail``.  Where that
    estimate stays above ``10⁻⁸`` with every sector (``Q_3 = n`` reached:
    servers with four tasks matter, small ``n`` at heavy load) the call
    returns :func:`~qlib.halfin_whitt.chain_fsp.stationary_jsq_fsp` at
    ``min(1e-10, 100 * tol)`` instead (``method = "fsp"``, no certified bound).
    With every sector (``rounds = n + 1``) ``mass_tail`` is the flux into four
    tasks over ``n + 1``, but the set of states with a server of four tasks is
    left only when that server finishes (rate 1), so it holds about
    ``(n + 1) mass_tail`` (0.84 to 1.05 times that in the brute-force chain
    capped at five tasks, n = 8..20): read such a result's errors with that mass.  At large ``n`` the levels ``Q_2 <= K`` are kept and ``K`` is
    doubled until the geometric extrapolation of ``π(Q_2 = k)`` beyond ``K``
    (``mass_tail``) is below ``tol/2``: an estimate, not a bound.  Moves
    out of the set are blocked.  ``error_estimates[q]`` is
    ``truncated_mass`` times the largest ``|q|``-integrand on the set with
    its count raised by the tail's mean overshoot ``√n/β``.

    *Identities.*  ``λ_n P(wait) = E[Q_2]`` while no server has three tasks
    (the balance of ``N − Q_1``); the structured solve keeps it up to the
    blocked flux.

    *Checks.*  The pivots of the tridiagonal solves are formed without
    subtraction (rates out of the level carried, as in Grassmann–Taksar–Heyman
    elimination), and sector 0's scale, where the sectors above are solved,
    is fixed by its flux balance (its bottom pivot is the chance of leaving
    the sector before coming back, below rounding at light loads).  Every
    result is checked against the truncated chain's rate balance for the
    number of tasks, ``E[I] − (n − λ) = λ π(blocked corner) − Σ_k (n − J −
    k) π(J, k)`` (arrivals blocked at the top, departures blocked at the idle
    cut), to a relative ``10⁻⁷`` (round-off of correct solves, measured: below
    ``2·10⁻¹³``), and refused (``FloatingPointError``) otherwise.  The
    error estimates cover truncation, not round-off, which is about
    ``10⁻¹⁵`` relative.

    Examples
    --------
    >>> from qlib import stationary_jsq
    >>> s = stationary_jsq(4000, 1.0)
    >>> round(s.p_wait, 4), s.method, s.mass_bound <= 1e-12
    (0.0125, 'qbd', True)
    >>> abs(s.lam_total * s.p_wait - s.mean_q2) < 1e-9 * s.mean_q2   # λ P(wait) = E[Q_2]
    True
    """
    w0, c0 = time.perf_counter(), time.process_time()
    n = _check_n(n)
    if n < 2:
        raise ValueError(f"n must be >= 2 for stationary_jsq, got {n}")
    beta = _check_beta(beta, n)
    tol = _check_pos("tol", tol)
    if not tol <= 1e-3:
        raise ValueError(f"tol must be in (0, 1e-3], got {tol}")
    for name, val in (("max_states", max_states), ("max_memory", max_memory),
                      ("max_seconds", max_seconds)):
        if isinstance(val, bool) or not isinstance(val, numbers.Real) or not val > 0:
            raise ValueError(f"{name} must be a number > 0, got {val!r}")
    lam = n - beta * math.sqrt(n)
    sq = math.sqrt(n)
    J, mbound = _idle_cut(n, lam, tol / 2)
    K = n if (n + 1) * (J + 1) <= 4_000_000 else \
        min(n, int(math.ceil(sq * (math.log(2 / tol) + 10) / beta * 1.5)))

    def refuse(states, bytes_, work=None, why=""):
        secs = (states if work is None else work) * _NS_PER_STATE
        for name, need, cap in (("max_states", states, max_states),
                                ("max_memory", bytes_, max_memory),
                                ("max_seconds", secs, max_seconds)):
            if need > cap:
                raise ValueError(f"stationary_jsq(n = {n}, beta = {beta}, tol = {tol:g}) needs "
                                 f"{states:.3g} states, about {bytes_ / 1e9:.3g} GB and "
                                 f"{secs:.3g} s of CPU{why}: above {name} = {cap:g}; raise it or tol")

    def show(states):
        if progress is not None:
            return bool(progress)
        return states * _NS_PER_STATE > 5.0 and sys.stderr is not None and sys.stderr.isatty()

    states = pi = f = None
    emax = 0
    while K < n:
        ns_ = _states(n, J, K)
        refuse(ns_, 8.0 * (5 * (K + 1) + 8 * (J + 1)))
        bar = progress_bar(show(ns_), K + 1, "level", f"stationary_jsq n={n}")
        try:
            P, _ = _stream(n, lam, J, K, bar)
        finally:
            bar.close()
        f, pmf = _from_moments(P, n, lam, beta)
        mtail = _tail_estimate(pmf, K, n)
        if mtail <= tol / 2:
            break
        K = min(n, 2 * K)
    if K == n:
        # Q_2 is not cut: the one-sector solve (no server with three tasks) ...
        per = _states(n, J, n)
        bar = progress_bar(show(per), n + 1, "level", f"stationary_jsq n={n}")
        try:
            if per <= _KEEP:
                refuse(per, 8.0 * 16 * per)     # the rows, the law and the quantities' arrays
                P, eq3, corner, states, pi = _sectors(n, lam, J, 0, bar, True)
            else:       # streamed by levels: memory O(n + J)
                refuse(per, 8.0 * (5 * (n + 1) + 8 * (J + 1)), None,
                       " (one sector, Q_2 up to n, swept by levels)")
                P, _ = _stream(n, lam, J, n, bar)
                corner = float(P[n, 0])
                f, pmf = _from_moments(P, n, lam, beta)
        finally:
            bar.close()
        mtail = lam * corner
        # ... then the Q_3 sectors 0..e, e = 1, 3, 7, … until the flux out of the top one is small
        e_next = 1 if mtail > tol / 2 else 0
        first, done = True, 0.0
        while e_next:
            keep = _sector_cost(n, J, e_next, e_next)[0] <= _KEEP
            if first:       # the whole loop as predicted (the top corner as the one-sector's)
                e_need = max(1, _sectors_needed(n, mtail, tol, _CORNER_RATIO))
                ns_, bytes_, _ = _sector_cost(n, J, e_need, e_need)
                work = _sector_cost(n, J, 1, e_need)[2]     # the passes 1, 3, …, e_need
                why = (f" ({e_need + 1} Q_3 sectors of up to {per:.3g} states "
                       f"predicted from the one-sector solve)")
            else:           # this pass and those before it
                ns_, bytes_, work = _sector_cost(n, J, e_next, e_next)
                work += done
                why = f" ({e_next + 1} Q_3 sectors, with the passes before)"
            first = False
            secs = work * _NS_PER_SECTOR_STATE
            if ns_ > max_states or bytes_ > max_memory or secs > max_seconds:
                if mtail <= _FSP_SWITCH:
                    break       # the present solve, its estimated outside mass in mass_tail
                if fallback:
                    mtail = math.inf        # the adaptive solver below
                    break
                refuse(ns_, bytes_, work * _NS_PER_SECTOR_STATE / _NS_PER_STATE, why)
            emax = e_next
            bar = progress_bar(show(work * _NS_PER_SECTOR_STATE / _NS_PER_STATE),
                               (n + 1) * (emax + 1), "level", f"stationary_jsq n={n}")
            try:
                P, eq3, corner, states, pi = _sectors(n, lam, J, emax, bar, keep)
            finally:
                bar.close()
            f = None
            done += _sector_cost(n, J, emax, emax)[0]
            mtail = lam * corner / (emax + 1)
            if mtail <= tol / 2 or emax == n:
                break
            e_next = min(n, 2 * emax + 1)
    if fallback and mtail > _FSP_SWITCH:
        # servers with four tasks matter (small n, heavy load): the adaptive solver
        from qlib.halfin_whitt.chain_fsp import stationary_jsq_fsp
        return stationary_jsq_fsp(n, beta, tol=min(_FSP_TOL, _FSP_TOL_RATIO * tol),
                                  progress=show(math.inf))
    if states is not None:
        f, pmf, _ = _quantities(states, pi, n, lam)
    elif f is None:
        f, pmf = _from_sector_moments(P, eq3, n, lam)
    _check_balance(n, lam, f, P, corner if K == n else float(P[K, 0]), beta, tol)
    Qmax = n + K + emax         # the largest number of tasks in the set
    m_out = mbound + mtail
    kappa = max(1.0, sq / beta)
    a1 = (J + kappa) / sq
    a2 = (min(n, K) + kappa) / sq
    top = {"p_wait": 1.0, "mean_q1": float(n), "mean_idle": float(n), "mean_q2": a2 * sq,
           "mean_q3": float(emax + kappa), "mean_tasks": Qmax + kappa,
           "mean_waiting": Qmax - n + 2 * kappa, "mean_x1": a1, "mean_x2": a2,
           "var_x1": 4 * a1 ** 2, "var_x2": 4 * a2 ** 2, "mean_x1x2": a1 * a2,
           "cov_x1x2": 4 * a1 * a2}
    top["mean_response"] = top["mean_tasks"] / lam
    top["mean_wait"] = top["mean_waiting"] / lam
    err = {q: m_out * top[q] for q in _QUANTITIES}
    err["q2_pmf"] = m_out
    keep = states is not None and states.shape[0] <= 10_000_000
    return StationaryJSQ(
        n=n, beta=beta, lam_total=lam, **f, q2_pmf=pmf, error_estimates=err,
        truncated_mass=m_out, blocked=mtail / lam, balance_gap=f["mean_idle"] - beta * sq,
        tol=tol, rounds=emax + 1, levels=3 if emax else 2, spread=3 if emax else 2,
        states=states if keep else None, pi=pi if keep else None,
        cpu_time=time.process_time() - c0, wall_time=time.perf_counter() - w0,
        mass_bound=mbound, mass_tail=mtail, method="qbd")
