"""The result of the exact Halfin–Whitt chain and the moments read off its law.

Shared by the structured solver (:mod:`qlib.halfin_whitt.chain`) and the
adaptive one (:mod:`qlib.halfin_whitt.chain_fsp`), so that neither imports the
other at module level.
"""
from __future__ import annotations

import functools
import math
import numpy as np
from dataclasses import dataclass

from qlib.stats._results import ResultIO, fields_eq

@fields_eq
@dataclass(frozen=True, repr=False)
class StationaryJSQ(ResultIO):
    """Result of :func:`~qlib.halfin_whitt.chain.stationary_jsq`.

    ``states``: the truncated state space as occupancy rows
    ``(Q_1, …, Q_L)``; ``pi`` its stationary law (``None`` for truncations of
    more than ``10⁷`` states).  ``mass_bound``: a certified bound on the
    stationary mass of the idle-server cut; ``mass_tail``: the estimated mass
    beyond the ``Q_2``/``Q_3`` cuts; ``truncated_mass``: their sum (for
    ``method = "fsp"``, the adaptive fallback: its estimated frontier mass,
    with ``mass_bound`` and ``mass_tail`` NaN).  ``blocked``: the fraction of arrivals blocked at the highest
    number of tasks in the set.  ``balance_gap = E[n − Q_1] − β√n``: zero for
    the exact law (rate balance for the number of tasks); in the truncated
    chain it is the blocked arrivals' flux less the departures blocked at the
    idle cut (the structured solver checks this to round-off and raises
    ``FloatingPointError`` where it fails).

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
    mass_bound: float = float("nan")
    mass_tail: float = float("nan")
    method: str = "qbd"

    @functools.cached_property
    def occupancy(self) -> np.ndarray:
        """``(1, E Q_1/n, …, E Q_L/n)``: the fraction of servers with at least ``i`` tasks."""
        if self.pi is None:
            return np.array([1.0, self.mean_q1 / self.n, self.mean_q2 / self.n, self.mean_q3 / self.n])
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




# ---------------------------------------------------------------- the solver
