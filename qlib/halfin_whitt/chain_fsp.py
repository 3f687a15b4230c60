"""stationary_jsq_fsp: the superseded adaptive finite-state-projection solver of the finite-n JSQ chain (error estimates, not bounds), kept for comparison."""
from __future__ import annotations

import math
import numbers
import time
import numpy as np

from qlib.halfin_whitt import _fsp as _jsq_chain
from qlib.halfin_whitt._common import _check_beta, _check_n, _check_pos
from qlib.halfin_whitt._chain_result import StationaryJSQ, _QUANTITIES, _quantities

__all__ = ['stationary_jsq_fsp']


def _occupancy(W, n):
    """Occupancy rows ``(Q_1, …, Q_L)`` of window states ``(s, p_1..p_d)``."""
    s = W[:, 0]
    d = W.shape[1] - 1
    L = int(s.max()) + d
    Q = np.zeros((W.shape[0], L), np.int64)
    lev = np.arange(1, L + 1)
    Q[lev[None, :] <= s[:, None]] = n
    for j in range(1, d + 1):
        Q[np.arange(W.shape[0]), s + j - 1] = W[:, j]
    return Q


def _outside_sup(Q, F, n, lam, kappa):
    """Estimated sup of each quantity's |integrand| over the states outside
    the set: the sup over the set's rows ``Q`` and the rows just outside
    ``F``, with every count (``Q_2``, ``Q_3``, ``N``, ``N − Q_1``) raised by
    ``kappa``, the mean overshoot of a geometric tail of ratio ``λ_n/n`` (the
    slow direction: ``N`` with every server busy); ``|X_1| <= √n`` a priori
    caps the idle servers' count likewise raised."""
    L = max(Q.shape[1], F.shape[1], 3)
    R = np.zeros((Q.shape[0] + F.shape[0], L), np.int64)
    R[:Q.shape[0], :Q.shape[1]] = Q
    R[Q.shape[0]:, :F.shape[1]] = F
    sq = math.sqrt(n)
    q2 = float(R[:, 1].max()) + kappa
    q3 = float(R[:, 2].max()) + kappa
    tasks = float(R.sum(axis=1).max()) + kappa
    wait = float((R.sum(axis=1) - R[:, 0]).max()) + kappa
    a1 = min(sq, float(n - R[:, 0].min()) / sq + kappa / sq)
    a2 = q2 / sq
    return {"p_wait": 1.0, "mean_q1": float(n), "mean_idle": float(n), "mean_q2": q2,
            "mean_q3": q3, "mean_tasks": tasks, "mean_waiting": wait,
            "mean_response": tasks / lam, "mean_wait": wait / lam, "mean_x1": a1,
            "mean_x2": a2, "var_x1": 4 * a1 ** 2, "var_x2": 4 * a2 ** 2,
            "mean_x1x2": a1 * a2, "cov_x1x2": 4 * a1 * a2}


def _blocked(W, pi, n, lam):
    """Fraction of arrivals blocked: π of the rows at the highest N whose
    arrival leaves the set (no row at N + 1)."""
    N = W[:, 0] * n + W[:, 1:].sum(axis=1)
    return float(pi[N == N.max()].sum()) if not np.any(N == N.max() + 1) else 0.0


def stationary_jsq_fsp(n: int, beta: float, *, tol: float = 1e-10, max_states: int = 3_000_000,
                   progress: bool = False) -> StationaryJSQ:
    """The superseded solver of :func:`~qlib.halfin_whitt.chain.stationary_jsq`
    (solver version 2), kept to compare against: stationary law of the
    finite-``n`` JSQ occupancy chain by adaptive truncation, with an a-posteriori *estimate* of the truncation error of
    every returned quantity (not a certified bound).

    Works for every ``n >= 2`` and ``0 < β < √n``; at ``n <= 2000`` and
    ``β`` in ``[0.25, 4]`` it takes seconds to about half a minute with the
    default ``tol`` (see ``benchmarks/bench_heavy_traffic.py --stationary``
    and its ``benchmarks/stationary_results.json``).

    Parameters
    ----------
    n : int
        ``n >= 2``.
    beta : float
        ``0 < beta < √n``; the arrival rate is ``λ_n = n − β√n``.
    tol : float, default 1e-10
        Admission threshold in ``(0, 1)``: every state whose estimated
        stationary probability exceeds ``tol`` is in the final set (a round
        that admits states admits down to ``tol / 100``).  At the default
        the estimated relative errors are about ``10⁻⁷–10⁻⁴`` (largest
        at large ``n``); ``tol = 1e-14`` gives about ``10⁻⁹`` at small
        ``n`` (slower).  See ``error_estimates``.
    max_states : int
        Give up (RuntimeError) when the set would exceed this many states.
    progress : bool, default False
        Show a progress bar over the solves of the growing truncation (one per
        round, with the current number of states).

    Returns
    -------
    StationaryJSQ
        The quantities (``p_wait``, ``mean_q2``, ``var_x1``, ``mean_x1x2``,
        ``q2_pmf``, …), each with its entry in ``error_estimates`` (also
        readable as ``error_bounds``, the old name).

    Raises
    ------
    TypeError, ValueError
        For a bad ``n``, ``beta``, ``tol`` or ``max_states``, naming it.
    RuntimeError
        If the set would need more than ``max_states`` states, or if a final
        solve leaves a relative balance residual above ``1e-9`` (an
        ill-conditioned truncation; not seen on the benchmark grid).

    Notes
    -----
    *State.*  A window ``(s, p_1, …, p_D)``: ``s`` full levels (``Q_i = n``
    for ``i <= s``; ``s`` is the length of a shortest queue) and
    ``Q_{s+j} = p_j < n`` above them.  Every occupancy vector has exactly one
    window, of any spread ``D``.

    *Truncation* (finite state projection, adaptive).  Start from a box
    around the bulk (``Q_1 >= n − (β + 5)√n``, ``Q_2`` up to a few
    ``√n/β``).  Solve the chain truncated to the set; every transition that
    leaves the set is redirected to a fixed representative state with the
    same number of tasks ``N`` as its target (every move changes ``N`` by
    one, so the dynamics of ``N`` stay exact except for arrivals blocked at
    the top).  Each state ``y`` just outside gets the estimate
    ``Σ_x π(x) r(x, y) / out(y)``; those above ``tol`` are admitted, with a
    geometric extension along slowly decaying directions and a
    breadth-first wave.  Repeat until no estimate exceeds ``tol``.

    *Solve.*  The generator is block tridiagonal in ``N``.  When every level
    holds at most a few hundred states (small ``n``, where queues of large
    spread matter) it is solved by linear level reduction
    (``π_N = π_{N−1} R_N``, non-singular M-matrices only); otherwise (the
    two-dimensional sheets of large ``n``) by a sparse LU with COLAMD
    ordering and two steps of iterative refinement.

    *Error estimates.*  The returned values come from the final set ``S_2``.
    ``S_1 ⊂ S_2`` keeps the states of ``S_2`` whose probability is at least
    ``10 · tol`` (what a ten times coarser threshold keeps) and is solved
    again.  ``error_estimates[q] = |q(S_2) − q(S_1)| + m · s_q`` with
    ``m = m_2 · max(1, √n/β)``: ``m_2`` is the estimated mass of the states
    just outside ``S_2``, summed along a geometric tail of ratio ``λ_n/n``
    (the number of tasks when every server is busy, the slowest direction),
    and ``s_q`` is the sup of the absolute value of ``q``'s integrand over ``S_2`` and those
    states, each count raised by the tail's mean overshoot ``√n/β`` (so a
    quantity that is zero on the set, ``E[Q_3]`` at large ``n``, still gets
    a positive estimate).  This is an a-posteriori estimate, not a theorem:
    both solves share the redirection bias, and ``m_2`` is itself an
    estimate.  The tests measure the ratio of true error to estimate
    against an independent brute force (:mod:`qlib.halfin_whitt.brute`) at
    heavy load, ``n = 9…25``, ``β ∈ {0.5, 1}``, and against a solve at a 100
    times smaller ``tol``.

    *Identities.*  Redirection keeps the rates of ``N`` except for arrivals
    blocked at the top, so ``E[n − Q_1] − β√n = λ_n · blocked``
    (``balance_gap``) holds by construction: it checks the solve, not the
    truncation.  ``λ_n P(wait) = E[Q_2]`` (balance of ``N − Q_1``) is *not*
    kept by the redirection (a representative row has another ``N − Q_1``),
    so its violation measures the redirection bias.

    Examples
    --------
    >>> from qlib.halfin_whitt.chain_fsp import stationary_jsq_fsp
    >>> s = stationary_jsq_fsp(20, 1.0)
    >>> round(s.p_wait, 4), abs(s.mean_queue_length - s.lam * s.response_time) < 1e-12
    (0.1165, True)
    """
    n = _check_n(n)
    if n < 2:
        raise ValueError(f"n must be >= 2 for stationary_jsq, got {n}")
    beta = _check_beta(beta, n)
    tol = _check_pos("tol", tol)
    if not tol < 1:
        raise ValueError(f"tol must be in (0, 1), got {tol}")
    if isinstance(max_states, bool) or not isinstance(max_states, numbers.Integral):
        raise TypeError(f"max_states must be an integer >= 1, got {max_states!r}")
    if max_states < 1:
        raise ValueError(f"max_states must be an integer >= 1, got {max_states}")
    lam = n - beta * math.sqrt(n)
    w0, c0 = time.perf_counter(), time.process_time()
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(desc=f"stationary_jsq_fsp n={n}", unit="solve")

    def report(rounds, states):
        if bar is not None:
            bar.update(1)
            bar.set_postfix(states=states)
    try:
        W, pi, cut, rounds, tmass, res = _jsq_chain.grow(_jsq_chain.seed(n, beta, lam), n, lam,
                                                       tol, max_states=max_states, report=report)
    finally:
        if bar is not None:
            bar.close()
    # the coarser truncation: the states of the final set with probability
    # >= 10 tol (what a ten times coarser threshold keeps), solved again
    W1, pi1, _, res1 = _jsq_chain._solve(W[pi >= 10 * tol], n, lam)
    res = max(res, res1)
    if res > _jsq_chain._MAX_RESIDUAL:
        raise RuntimeError(f"the truncated chain at n = {n}, beta = {beta} was solved with a "
                           f"relative balance residual of {res:.1e}; try another tol")
    f1, pmf1, _ = _quantities(_occupancy(W1, n), pi1, n, lam)
    Q = _occupancy(W, n)
    f, pmf, _ = _quantities(Q, pi, n, lam)
    # the mass outside: the frontier's estimate summed along a geometric tail
    # of ratio λ_n/n (N with every server busy), i.e. times √n/β
    kappa = max(1.0, math.sqrt(n) / beta)
    m_out = tmass * kappa
    F = _occupancy(cut[1], n) if cut[1].shape[0] else np.zeros((0, 1), np.int64)
    top = _outside_sup(Q, F, n, lam, kappa)
    err = {k: abs(f[k] - f1[k]) + m_out * top[k] for k in _QUANTITIES}
    err["q2_pmf"] = float(np.max(np.abs(pmf - pmf1))) + m_out
    spread = int((Q > 0).sum(axis=1).max() - (Q == n).sum(axis=1).min())
    return StationaryJSQ(
        n=n, beta=beta, lam_total=lam, **f, q2_pmf=pmf, error_estimates=err,
        truncated_mass=tmass, blocked=_blocked(W, pi, n, lam),
        balance_gap=f["mean_idle"] - beta * math.sqrt(n), tol=tol, rounds=rounds,
        levels=Q.shape[1], spread=spread, states=Q, pi=pi, mass_bound=float("nan"),
        mass_tail=float("nan"), method="fsp",
        cpu_time=time.process_time() - c0, wall_time=time.perf_counter() - w0)
