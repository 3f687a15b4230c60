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
    out = np.zeros((K + 1, 4))
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


def _sectors(n, lam, J, emax, bar):
    """All sectors ``e = 0..emax`` (``Q_2`` up to ``n``) by the nested
    reduction; returns the rows ``(Q_1, Q_2, Q_3)`` and their law."""
    s_up = None
    parts = {}
    for e in range(emax, -1, -1):
        m, off = _qbd._sizes(n, J, e, n)
        tot = int(off[-1])
        rows = []
        if e >= 1:
            ec = np.zeros(tot)
            ec[-1] = 1.0
            rows.append(ec)
        if s_up is not None:
            w = np.zeros(tot)
            w[m[0]:] = s_up * (e + 1)
            rows.append(w)
        G = np.array(rows) if rows else np.zeros((0, tot))
        A, Bv, U, off = _qbd.sector_solve(n, lam, e, J, n, e < emax, G)
        bar.update(n - e + 1)
        if e == 0:
            y = _qbd.forward(A[0], Bv, U, off, False)[0] if s_up is not None else \
                _scaled(*_qbd.forward(A[0] if A.shape[0] else Bv, Bv, U, off, True), off)
            parts[0] = y
        else:
            x = _qbd.forward(A[0], Bv, U, off, False)[0]
            if s_up is None:
                s = x
            else:
                y = _qbd.forward(A[1], Bv, U, off, False)[0]
                s = x + lam * (x[-1] / (1.0 - lam * y[-1])) * y
            parts[e] = s
            s_up = s
    # π_0 ∝ parts[0]; π_e = π_{e−1}(corner) λ s_e
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
    return Q, pi / pi.sum()


#: The top sector's corner mass over the one-sector solve's (``π(I = 0, Q_2 = n)``),
#: 0.39 at n = 300, beta = 0.25 (64 sectors) and 0.87 at n = 2800, beta = 0.5 (16 sectors):
#: the prediction of the sectors needed errs towards fewer.
_CORNER_RATIO = 0.1


def _sectors_needed(n, flux0, tol):
    """The ``emax`` at which the sector loop (``emax = 0, 1, 3, 7, …``, capped
    at ``n``) is predicted to stop, from ``flux0 = λ π(corner)`` of the
    one-sector solve: the corner mass of the top sector stays within a factor
    of the one-sector corner (the sectors' masses are spread over ``Q_3``,
    not geometric), so the flux criterion ``λ π(corner)/(emax + 1) <= tol/2``
    needs ``emax + 1 >= 2 flux0 _CORNER_RATIO / tol``.  Returns ``(emax, the
    sectors solved by the whole loop)``."""
    e, work = 0, 1
    while e < n and flux0 * _CORNER_RATIO / (e + 1) > tol / 2:
        e = min(n, 2 * e + 1)
        work += e + 1
    return e, work


def _scaled(x, logs, off):
    lv = np.repeat(logs, np.diff(off))
    return x * np.exp(lv - lv.max())


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
        that needs more states, bytes or estimated CPU seconds than this.
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
    TypeError, ValueError
        For a bad argument, naming it; ValueError also when the truncation
        would exceed ``max_states``, ``max_memory`` or ``max_seconds`` (with
        the estimate).  Where the ``Q_2`` cut would reach ``n`` (heavy load)
        the ``Q_3`` sectors are needed, ``(n + 1)(J + 1)`` states each, and
        the refusal names their memory.

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
    for is predicted from the one-sector solve, and what would not fit is
    refused (or handed to the adaptive solver) then, not after the doubling.
    Where that
    estimate stays above ``10⁻⁸`` with every sector (``Q_3 = n`` reached:
    servers with four tasks matter, small ``n`` at heavy load) the call
    returns :func:`~qlib.halfin_whitt.chain_fsp.stationary_jsq_fsp` at
    ``min(1e-10, 100 * tol)`` instead (``method = "fsp"``, no certified bound).  At large ``n`` the levels ``Q_2 <= K`` are kept and ``K`` is
    doubled until the geometric extrapolation of ``π(Q_2 = k)`` beyond ``K``
    (``mass_tail``) is below ``tol/2``: an estimate, not a bound.  Moves
    out of the set are blocked.  ``error_estimates[q]`` is
    ``truncated_mass`` times the largest ``|q|``-integrand on the set with
    its count raised by the tail's mean overshoot ``√n/β``.

    *Identities.*  ``λ_n P(wait) = E[Q_2]`` while no server has three tasks
    (the balance of ``N − Q_1``); the structured solve keeps it up to the
    blocked flux.

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

    states = pi = None
    emax = 0
    while True:
        if K < n:
            ns_ = _states(n, J, K)
            refuse(ns_, 8.0 * (5 * (K + 1) + 8 * (J + 1)))
            bar = progress_bar(show(ns_), K + 1, "level", f"stationary_jsq n={n}")
            try:
                P, _ = _stream(n, lam, J, K, bar)
            finally:
                bar.close()
            f, pmf = _from_moments(P, n, lam, beta)
            mtail = _tail_estimate(pmf, K, n)
            if mtail <= tol / 2 or K == n:
                break
            K = min(n, 2 * K)
            continue
        ns_ = _states(n, J, n) * (emax + 1)
        if emax and fallback and 8.0 * 6 * ns_ > max_memory:
            mtail = math.inf        # more sectors than fit: the adaptive solver below
            break
        refuse(ns_, 8.0 * 6 * ns_)
        bar = progress_bar(show(ns_), (n + 1) * (emax + 1), "level", f"stationary_jsq n={n}")
        try:
            states, pi = _sectors(n, lam, J, emax, bar)
        finally:
            bar.close()
        corner = float(pi[(states[:, 0] == n) & (states[:, 1] == n) & (states[:, 2] == emax)].sum())
        mtail = lam * corner / (emax + 1)
        if mtail <= tol / 2 or emax == n:
            break
        if emax == 0:
            # before the costly sectors: how many the flux criterion will ask for
            e_need, work = _sectors_needed(n, lam * corner, tol)
            per = _states(n, J, n)
            too_big = 8.0 * 6 * per * (e_need + 1) > max_memory
            if fallback and too_big:
                mtail = math.inf        # more sectors than fit: the adaptive solver below
                break
            refuse(per * (e_need + 1), 8.0 * 6 * per * (e_need + 1), per * work,
                   f" ({e_need + 1} Q_3 sectors predicted from the one-sector solve)")
        emax = min(n, 2 * emax + 1)
    if fallback and mtail > _FSP_SWITCH:
        # servers with four tasks matter (small n, heavy load): the adaptive solver
        from qlib.halfin_whitt.chain_fsp import stationary_jsq_fsp
        return stationary_jsq_fsp(n, beta, tol=min(_FSP_TOL, _FSP_TOL_RATIO * tol),
                                  progress=show(math.inf))
    if states is not None:
        f, pmf, _ = _quantities(states, pi, n, lam)
        Qmax = states.sum(axis=1).max()
    else:
        Qmax = n + K
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
