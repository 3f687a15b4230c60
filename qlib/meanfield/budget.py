"""Degree laws under a mean-degree budget: the optimal law, the polytope, and R of many laws at once.

Among degree laws ``p`` on ``{0, …, D}`` with mean at most ``d̄`` (the
*budget polytope*), the fluid equilibrium's mean response time
``R(p) = Σ_{i≥1} q*(i)/λ`` is smallest for the law on the two integers
neighbouring ``d̄`` with mean ``d̄`` (the point mass ``δ_d̄`` for integer
``d̄``); its generating function is the pointwise smallest in the polytope.
This module gives that law (:func:`optimal_law`), the polytope's vertices
(:func:`budget_vertices`), a projection onto it (:func:`project_to_budget`)
and ``R`` of many laws at once by the equilibrium recursion
(:func:`response_time_many`), for optimisation and random search.

Examples
--------
>>> from qlib.meanfield.budget import optimal_law, response_time_many
>>> optimal_law(1.5, 4)
array([0. , 0.5, 0.5, 0. , 0. ])
>>> round(float(response_time_many(optimal_law(2, 4), 0.9)[0]), 6)
2.027856
"""
from __future__ import annotations

import math

import numpy as np
from typing import TYPE_CHECKING
if TYPE_CHECKING:   # names for the annotations only
    from numpy.typing import ArrayLike

__all__ = ["optimal_law", "budget_vertices", "project_to_budget", "response_time_many"]


def _check_budget(dbar, d_max):
    if isinstance(d_max, bool) or not isinstance(d_max, (int, np.integer)):
        raise TypeError(f"d_max must be an int, got {type(d_max).__name__}")
    if d_max < 1:
        raise ValueError(f"d_max must be >= 1, got {d_max}")
    if not (isinstance(dbar, (int, float, np.integer, np.floating)) and 0 <= dbar <= d_max):
        raise ValueError(f"dbar must be in [0, d_max = {d_max}], got {dbar!r}")


def optimal_law(dbar: float, d_max: int) -> np.ndarray:
    """The law ``(1 − θ)δ_k + θδ_{k+1}``, ``k = ⌊d̄⌋``, ``θ = d̄ − k``, as ``p(0..d_max)``.

    Parameters
    ----------
    dbar : float
        The budget ``d̄``, in ``[0, d_max]``.
    d_max : int
        Largest degree of the polytope, ``>= 1``.

    Examples
    --------
    >>> optimal_law(2, 3)
    array([0., 0., 1., 0.])
    """
    _check_budget(dbar, d_max)
    k, th = math.floor(dbar), dbar - math.floor(dbar)
    p = np.zeros(d_max + 1)
    p[k] += 1 - th
    if th > 0:
        p[k + 1] += th
    return p


def budget_vertices(dbar: float, d_max: int) -> list[np.ndarray]:
    """Vertices of ``{p ≥ 0 : Σ p = 1, Σ d p(d) ≤ d̄}`` on ``{0, …, d_max}``.

    The point masses ``δ_j`` with ``j ≤ d̄`` and, for ``a < d̄ < b``, the law on
    ``{a, b}`` with mean ``d̄``.

    Examples
    --------
    >>> len(budget_vertices(1.5, 3))       # δ0, δ1 and the laws on {0,2}, {0,3}, {1,2}, {1,3}
    6
    """
    _check_budget(dbar, d_max)
    V = [np.eye(d_max + 1)[j] for j in range(d_max + 1) if j <= dbar]
    for a in range(d_max + 1):
        for b in range(a + 1, d_max + 1):
            if a < dbar < b:
                v = np.zeros(d_max + 1)
                v[a], v[b] = (b - dbar) / (b - a), (dbar - a) / (b - a)
                V.append(v)
    return V


def project_to_budget(p: ArrayLike, dbar: float) -> np.ndarray:
    """Clip, renormalise, and move mass to degree 0 until the mean is at most ``d̄``.

    Parameters
    ----------
    p : array_like, shape (D + 1,)
        Coefficients ``p(0..D)``, not all ``<= 0``.
    dbar : float
        The budget, in ``[0, D]``.

    Examples
    --------
    >>> project_to_budget([0, 0, 0, 1.0], 1.5)
    array([0.5, 0. , 0. , 0.5])
    """
    p = np.clip(np.asarray(p, dtype=float), 0, None)
    if p.ndim != 1 or p.size < 2 or not p.sum() > 0:
        raise ValueError("p must be a 1-d array of length >= 2 with positive mass")
    _check_budget(dbar, p.size - 1)
    p = p / p.sum()
    deg = np.arange(p.size)
    mean = deg @ p
    t = min(1.0, dbar / mean) if mean > 0 else 1.0
    return t * p + (1 - t) * (deg == 0)


def response_time_many(P: ArrayLike, lam: float, qmin: float = 1e-18) -> np.ndarray:
    """``R(p) = Σ_{i≥1} q*(i)/λ`` for each row of ``P``, by the recursion ``q*(i) = λ q*(i−1) φ(q*(i−1))``.

    The recursion stops for a row once ``q*(i) < qmin``; since
    ``q*(i+1) ≤ λ q*(i)`` the neglected tail is below ``qmin·λ/(1 − λ)``.

    Parameters
    ----------
    P : array_like, shape (K, D + 1) or (D + 1,)
        Degree laws, one per row (coefficients ``p(0..D)``).
    lam : float
        Load, in ``(0, 1)``.
    qmin : float, default 1e-18
        Level at which a row's recursion stops, ``> 0``.

    Returns
    -------
    ndarray, shape (K,)

    Examples
    --------
    >>> response_time_many([[0, 0, 1.0], [0.5, 0, 0.5]], 0.9).round(4)
    array([2.0279, 2.9818])
    """
    if not (isinstance(lam, (int, float, np.floating)) and 0 < lam < 1):
        raise ValueError(f"lam must be in (0, 1), got {lam!r}")
    if not qmin > 0:
        raise ValueError(f"qmin must be > 0, got {qmin!r}")
    P = np.atleast_2d(np.asarray(P, dtype=float))
    q, total, alive = np.ones(len(P)), np.zeros(len(P)), np.arange(len(P))
    while alive.size:
        xq, phi = q[alive], np.zeros(alive.size)
        for c in P[alive].T[::-1]:          # Horner
            phi = phi * xq + c
        q[alive] = xq = lam * xq * phi
        total[alive] += xq
        alive = alive[xq >= qmin]
    return total / lam
