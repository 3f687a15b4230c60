"""Searching the budget polytope for a law better than the optimal one.

:mod:`~qlib.meanfield.budget` gives the law ``p*`` that minimises the fluid
mean response time ``R`` over degree laws on ``{0, …, D}`` with mean at most
``d̄``. This module tests that claim without its proof: a local optimiser over
the polytope (:func:`minimise_over_budget`), a first-order audit of its answer
against ``p*`` (:func:`budget_optimum_audit`), and random laws on and inside
the polytope for a random search (:func:`random_budget_laws`).

Examples
--------
>>> from qlib.meanfield import budget_optimum_audit
>>> a = budget_optimum_audit(0.9, 2, 4)
>>> bool(a.distance < 1e-6 and a.slope > 0)
True
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from qlib.meanfield.budget import (_check_budget, budget_vertices, optimal_law, project_to_budget,
                                   response_time_many)

__all__ = ["BudgetAudit", "minimise_over_budget", "budget_optimum_audit", "random_budget_laws"]


def _check_lam(lam):
    if isinstance(lam, bool) or not isinstance(lam, (int, float, np.integer, np.floating)):
        raise TypeError(f"lam must be a real number, got {type(lam).__name__}")
    if not 0 < lam < 1:
        raise ValueError(f"lam must be in (0, 1), got {lam!r}")


def minimise_over_budget(lam: float, dbar: float, d_max: int, *, seed: int = 0,
                         starts: int = 4) -> np.ndarray:
    """Minimise ``R(p)`` over the budget polytope with SLSQP; return the best law found.

    Parameters
    ----------
    lam : float
        Load, in ``(0, 1)``.
    dbar : float
        The budget ``d̄``, in ``[0, d_max]``.
    d_max : int
        Largest degree, ``>= 1``.
    seed : int, default 0
        Seed of the Dirichlet starting points.
    starts : int, default 4
        Starting points: the uniform law and ``starts − 1`` Dirichlet draws, ``>= 1``.

    Returns
    -------
    ndarray, shape (d_max + 1,)
        The best optimiser's answer, projected onto the polytope.

    Examples
    --------
    >>> minimise_over_budget(0.9, 1, 3).round(4)
    array([0., 1., 0., 0.])
    """
    from scipy.optimize import minimize

    _check_lam(lam)
    _check_budget(dbar, d_max)
    if isinstance(starts, bool) or not isinstance(starts, (int, np.integer)) or starts < 1:
        raise ValueError(f"starts must be an int >= 1, got {starts!r}")
    deg = np.arange(d_max + 1, dtype=float)
    rng = np.random.default_rng(seed)
    cons = [{"type": "eq", "fun": lambda p: p.sum() - 1, "jac": lambda p: np.ones_like(p)},
            {"type": "ineq", "fun": lambda p: dbar - deg @ p, "jac": lambda p: -deg}]
    best = None
    for s in range(starts):
        w = rng.dirichlet(np.ones(d_max + 1)) if s else np.full(d_max + 1, 1 / (d_max + 1))
        res = minimize(lambda p: response_time_many(np.clip(p, 0, None), lam)[0],
                       project_to_budget(w, dbar), method="SLSQP", bounds=[(0, 1)] * (d_max + 1),
                       constraints=cons, options={"ftol": 1e-14, "maxiter": 500})
        best = res if best is None or res.fun < best.fun else best
    return project_to_budget(best.x, dbar)


@dataclass(frozen=True)
class BudgetAudit:
    """An optimiser's law ``p̂`` against the optimal law ``p*`` of one budget.

    Attributes
    ----------
    lam, dbar : float
        The load and the budget.
    R_star : float
        ``R(p*)``.
    excess : float
        ``R(p̂) − R(p*)`` (negative would refute the optimality of ``p*``).
    distance : float
        ``‖p̂ − p*‖₁``.
    slope : float
        Smallest directional derivative of ``R`` at ``p*`` towards another
        vertex of the polytope (central differences).
    bound : float
        First-order bound ``2 max(excess, 1e-13 R(p*)) / slope`` on ``distance``.
    R_jensen : float
        Jensen's lower bound ``Σ_i λ^{e_d̄(i) − 1}``, truncated at ``i < 200``.
    """

    lam: float
    dbar: float
    R_star: float
    excess: float
    distance: float
    slope: float
    bound: float
    R_jensen: float


def budget_optimum_audit(lam: float, dbar: float, d_max: int, *, h: float = 1e-6,
                         seed: int = 0) -> BudgetAudit:
    """Run :func:`minimise_over_budget` and measure its answer against ``p*``.

    Parameters
    ----------
    lam, dbar, d_max
        As for :func:`minimise_over_budget`.
    h : float, default 1e-6
        Step of the central differences, ``> 0``.
    seed : int, default 0
        Seed of the optimiser's starting points.

    Examples
    --------
    >>> a = budget_optimum_audit(0.5, 1.5, 3)
    >>> bool(a.R_jensen < a.R_star and a.distance <= a.bound)
    True
    """
    if not h > 0:
        raise ValueError(f"h must be > 0, got {h!r}")
    ph = minimise_over_budget(lam, dbar, d_max, seed=seed)
    ps = optimal_law(dbar, d_max)
    Rh, Rs = response_time_many(ph, lam)[0], response_time_many(ps, lam)[0]
    E = np.eye(d_max + 1) * h
    g = (response_time_many(ps + E, lam) - response_time_many(ps - E, lam)) / (2 * h)
    c = min(g @ (v - ps) for v in budget_vertices(dbar, d_max) if np.abs(v - ps).sum() > 1e-12)
    RJ = sum(lam ** (((dbar + 1) ** i - 1) / dbar - 1) for i in range(1, 200)) if dbar > 0 else float("nan")
    return BudgetAudit(float(lam), float(dbar), float(Rs), float(Rh - Rs), float(np.abs(ph - ps).sum()),
                       float(c), float(2 * max(Rh - Rs, 1e-13 * Rs) / c), float(RJ))


def random_budget_laws(dbar: float, d_max: int, rng: np.random.Generator, *, size: int = 15_000,
                       near: int = 5_000) -> np.ndarray:
    """Random laws within the budget: Dirichlet draws moved onto the plane ``mean = d̄``,
    the draws already inside it, and ``near`` small perturbations of ``p*``.

    Parameters
    ----------
    dbar : float
        The budget, in ``(0, d_max)``.
    d_max : int
        Largest degree, ``>= 1``.
    rng : numpy.random.Generator
        Source of randomness.
    size : int, default 15000
        Dirichlet draws.
    near : int, default 5000
        Perturbations of ``p*`` (mixtures ``(1 − η)p* + η v``, ``log₁₀ η`` uniform on ``(−4, −1)``),
        at most ``size``.

    Returns
    -------
    ndarray, shape (K, d_max + 1)

    Examples
    --------
    >>> P = random_budget_laws(2, 4, np.random.default_rng(0), size=100, near=10)
    >>> bool(np.all(P @ np.arange(5) <= 2 + 1e-12))
    True
    """
    _check_budget(dbar, d_max)
    if not 0 < dbar < d_max:
        raise ValueError(f"dbar must be in (0, d_max = {d_max}), got {dbar!r}")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    if not 0 <= near <= size:
        raise ValueError(f"near must be in [0, size = {size}], got {near!r}")
    deg = np.arange(d_max + 1)
    W = rng.dirichlet(np.full(d_max + 1, 0.5), size=size)
    mean = W @ deg
    over = mean > dbar
    t = np.where(over, dbar / mean, (d_max - dbar) / (d_max - mean))
    on_plane = t[:, None] * W + (1 - t)[:, None] * (deg[None, :] == np.where(over, 0, d_max)[:, None])
    eta = 10 ** rng.uniform(-4, -1, size=(near, 1))
    return np.vstack([on_plane, W[~over], (1 - eta) * optimal_law(dbar, d_max) + eta * on_plane[:near]])
