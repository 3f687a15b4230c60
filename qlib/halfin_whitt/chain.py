"""stationary_jsq: the stationary law of the finite-n JSQ chain by adaptive truncation, with error estimates (not certified bounds)."""
from __future__ import annotations

import functools
import math
import numbers
import time
import numpy as np
from dataclasses import dataclass

from qlib.stats._results import ResultIO
from qlib.halfin_whitt import _fsp as _jsq_chain
from qlib.halfin_whitt._common import _check_beta, _check_n, _check_pos

__all__ = ['stationary_jsq', 'StationaryJSQ', 'SOLVER_VERSION']

#: Version of :func:`stationary_jsq`'s values and error estimates.  Bump it
#: whenever a change can move a stored value or estimate; the benchmark files
#: that store the solver's output record the version that wrote them, and
#: ``tests/test_stored_chain_versions.py`` fails when a file is older.
#: 1: estimates before the frontier-tail estimator (b01ec94);
#: 2: error_estimates with the outside-mass term summed along the slow tail.
SOLVER_VERSION = 2


# ---------------------------------------------------------------- stationary

@dataclass(frozen=True, repr=False)
class StationaryJSQ(ResultIO):
    """Result of :func:`~qlib.halfin_whitt.chain.stationary_jsq`.

    ``states``: the truncated state space as occupancy rows
    ``(Q_1, …, Q_L)``; ``pi`` its stationary law.  ``truncated_mass``: the
    estimated stationary mass of the states just outside the final set (the
    flux the solved law sends out of the set, divided by those states' exit
    rates).  ``blocked``: the fraction of arrivals blocked at the highest
    number of tasks in the set.  ``balance_gap = E[n − Q_1] − β√n``: zero for
    the exact law (rate balance for the number of tasks); in the truncated
    chain it equals ``λ_n · blocked`` up to round-off, a check of the solve.

    Quantities (``X_1 = (Q_1 − n)/√n``, ``X_2 = Q_2/√n``, ``N = Σ_i Q_i``):
    ``p_wait = π(Q_1 = n)`` (an arrival waits; PASTA), ``mean_q1``,
    ``mean_idle = E[n − Q_1]``, ``mean_q2``, ``mean_q3``, ``mean_tasks = E[N]``,
    ``mean_waiting = E[N − Q_1]``, ``mean_response = E[N]/λ_n`` and
    ``mean_wait = E[N − Q_1]/λ_n`` (Little), ``mean_x1``, ``mean_x2``,
    ``var_x1``, ``var_x2``, ``mean_x1x2 = E[X_1 X_2]``, ``cov_x1x2``, and
    ``q2_pmf[k] = π(Q_2 = k)``, ``k = 0..n``.

    ``error_estimates``: quantity name → a-posteriori *estimate* of its
    truncation error (for ``"q2_pmf"``: of every entry), from a second solve
    on a smaller set and the estimated mass outside the set (see
    :func:`~qlib.halfin_whitt.chain.stationary_jsq`, Notes).  It is not a certified bound; the tests
    measure its ratio to the true error against an independent brute force.
    ``error_bounds`` is the same dict under its old name.  ``tol``: the admission threshold used;
    ``rounds``: solves of the final growth; ``levels``: number of occupancy
    levels ``L``; ``spread``: the largest difference between a longest and a
    shortest queue in the set.  ``cpu_time``, ``wall_time``: of the whole
    call, both solves included.
    """

    n: int
    beta: float
    lam_total: float
    p_wait: float
    mean_q1: float
    mean_idle: float
    mean_q2: float
    mean_q3: float
    mean_tasks: float
    mean_waiting: float
    mean_response: float
    mean_wait: float
    mean_x1: float
    mean_x2: float
    var_x1: float
    var_x2: float
    mean_x1x2: float
    cov_x1x2: float
    q2_pmf: np.ndarray
    error_estimates: dict
    truncated_mass: float
    blocked: float
    balance_gap: float
    tol: float
    rounds: int
    levels: int
    spread: int
    states: np.ndarray
    pi: np.ndarray
    cpu_time: float
    wall_time: float

    @functools.cached_property
    def occupancy(self) -> np.ndarray:
        """``(1, E Q_1/n, …, E Q_L/n)``: the fraction of servers with at least ``i`` tasks."""
        return np.concatenate([[1.0], np.asarray(self.pi) @ np.asarray(self.states, float) / self.n])

    @property
    def response_time(self) -> float:
        """Mean response time ``E[N]/λ_n`` (``mean_response``)."""
        return self.mean_response

    @property
    def mean_queue_length(self) -> float:
        """Mean number of tasks per server ``E[N]/n`` (``= (λ_n/n) response_time``)."""
        return self.mean_tasks / self.n

    @property
    def lam(self) -> float:
        """The arrival rate per server ``λ_n / n = 1 − β/√n`` (``lam_total`` is the total)."""
        return self.lam_total / self.n

    @property
    def error_bounds(self):
        """The old name of ``error_estimates`` (estimates, not bounds)."""
        return self.error_estimates


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


_QUANTITIES = ("p_wait", "mean_q1", "mean_idle", "mean_q2", "mean_q3", "mean_tasks",
               "mean_waiting", "mean_response", "mean_wait", "mean_x1", "mean_x2",
               "var_x1", "var_x2", "mean_x1x2", "cov_x1x2")


def _quantities(Q, pi, n, lam):
    """The quantities of :class:`~qlib.halfin_whitt.chain.StationaryJSQ` under the law ``pi`` on the
    occupancy rows ``Q``, and the largest |integrand| of each on the rows."""
    sq = math.sqrt(n)
    q1 = Q[:, 0].astype(float)
    q2 = Q[:, 1].astype(float) if Q.shape[1] >= 2 else np.zeros(Q.shape[0])
    q3 = Q[:, 2].astype(float) if Q.shape[1] >= 3 else np.zeros(Q.shape[0])
    tasks = Q.sum(axis=1).astype(float)
    x1, x2 = (q1 - n) / sq, q2 / sq
    f = {"p_wait": float(pi[Q[:, 0] == n].sum()), "mean_q1": float(pi @ q1),
         "mean_idle": float(pi @ (n - q1)), "mean_q2": float(pi @ q2),
         "mean_q3": float(pi @ q3), "mean_tasks": float(pi @ tasks),
         "mean_waiting": float(pi @ (tasks - q1)), "mean_x1": float(pi @ x1),
         "mean_x2": float(pi @ x2), "mean_x1x2": float(pi @ (x1 * x2))}
    f["mean_response"] = f["mean_tasks"] / lam
    f["mean_wait"] = f["mean_waiting"] / lam
    # central moments from centred values (no cancellation)
    f["var_x1"] = float(pi @ (x1 - f["mean_x1"]) ** 2)
    f["var_x2"] = float(pi @ (x2 - f["mean_x2"]) ** 2)
    f["cov_x1x2"] = float(pi @ ((x1 - f["mean_x1"]) * (x2 - f["mean_x2"])))
    a1, a2 = float(np.abs(x1).max()), float(np.abs(x2).max())
    top = {"p_wait": 1.0, "mean_q1": float(n), "mean_idle": float(n),
           "mean_q2": float(q2.max()), "mean_q3": float(q3.max()),
           "mean_tasks": float(tasks.max()), "mean_waiting": float((tasks - q1).max()),
           "mean_response": float(tasks.max()) / lam,
           "mean_wait": float((tasks - q1).max()) / lam, "mean_x1": a1, "mean_x2": a2,
           "var_x1": 4 * a1 ** 2, "var_x2": 4 * a2 ** 2, "mean_x1x2": a1 * a2,
           "cov_x1x2": 4 * a1 * a2}
    pmf = np.bincount(Q[:, 1] if Q.shape[1] >= 2 else np.zeros(Q.shape[0], np.int64),
                      weights=pi, minlength=n + 1)
    return f, pmf, top


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


def stationary_jsq(n: int, beta: float, *, tol: float = 1e-10, max_states: int = 3_000_000,
                   progress: bool = False) -> StationaryJSQ:
    """Stationary law of the finite-``n`` JSQ occupancy chain by adaptive
    truncation, with an a-posteriori *estimate* of the truncation error of
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
    >>> from qlib import stationary_jsq
    >>> s = stationary_jsq(20, 1.0)
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
        bar = tqdm(desc=f"stationary_jsq n={n}", unit="solve")

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
        levels=Q.shape[1], spread=spread, states=Q, pi=pi,
        cpu_time=time.process_time() - c0, wall_time=time.perf_counter() - w0)
