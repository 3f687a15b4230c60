"""The chain's generator against its diffusion limit, numerically: the expansion's gap and the martingale part.

Two computations of the chapter *The diffusion limit*:

* :func:`~qlib.halfin_whitt.generator.generator_gap` evaluates the exact generator ``L_n f`` of the scaled
  JSQ chain (three jump rates times differences of ``f``, no expansion) and
  the diffusion generator ``L f`` on lattice states, for the test function
  ``f(x_1, x_2) = sin(x_1) exp(−x_2/2)``, with the remainder bounds ``h B``
  and ``h² C`` of the generator expansion;
* :func:`~qlib.halfin_whitt.generator.martingale_increments` extracts, from a recorded path of
  :func:`qlib.halfin_whitt.simulate_jsq <qlib.halfin_whitt.simulate.simulate_jsq>`, the increments over unit intervals of
  ``M(t) = X_1 + X_2 − (X_1 + X_2)(0) + ∫ (β + X_1) ds``, the martingale part
  of ``X_1 + X_2`` while ``Q_3 = 0``.
"""
from __future__ import annotations

import numpy as np

from qlib.halfin_whitt._common import _check_beta, _check_n, _check_pos
from typing import TYPE_CHECKING
if TYPE_CHECKING:   # names for the annotations only
    from qlib.halfin_whitt.simulate import JSQResult

__all__ = ["generator_gap", "martingale_increments"]


def generator_gap(n: int, beta: float, *, points: int = 60) -> tuple[np.ndarray, ...]:
    """``L_n f − L f`` on the lattice box, with the bounds of the expansion.

    The box is ``−3 ≤ x_1 < 0 ≤ x_2 ≤ 3`` in the scaled coordinates
    ``x_1 = (Q_1 − n)/√n``, ``x_2 = Q_2/√n`` (sub-sampled to at most
    ``points × points`` lattice states), ``h = 1/√n`` and
    ``f = sin(x_1) e^{−x_2/2}``, whose derivatives are ``±sin`` or ``±cos``
    times powers of ``1/2`` and ``e^{−x_2/2}``; suprema over a step of length
    ``h`` use ``|cos(x_1 + δ)| ≤ min(1, |cos x_1| + h)`` and the like.

    Parameters
    ----------
    n : int
        Number of servers, ``>= 2``.
    beta : float
        ``β > 0`` (``λ_n = n − β√n``).
    points : int
        Lattice states per axis, at most (default 60).

    Returns
    -------
    tuple of numpy.ndarray
        ``(gap, hB, hR1, h2C, rounding)``: ``L_n f − L f`` at every state, the
        first-order bound ``h B(x)``, the first correction ``h R_1(x)``, the
        second-order bound ``h² C(x)``, and the allowance ``16 ε λ_n`` for the
        floating-point evaluation of ``L_n f`` (differences of ``|f| ≤ 1``
        times rates up to ``n``).

    Raises
    ------
    TypeError, ValueError
        If ``n`` is not an integer ``>= 2`` or ``beta`` is not positive.
    """
    n = _check_n(n)
    if n < 2:
        raise ValueError(f"n must be >= 2, got {n}")
    beta = _check_beta(beta, n)
    if isinstance(points, bool) or not isinstance(points, (int, np.integer)) or points < 2:
        raise ValueError(f"points must be an integer >= 2, got {points!r}")
    s = np.sqrt(n)
    k, j = (np.unique(np.linspace(lo, 3 * s, points).astype(np.int64)) for lo in (1, 0))
    Q1, Q2 = (q.ravel() for q in np.meshgrid(n - k, j, indexing="ij"))
    lam = n - beta * s
    a, b, hh = (Q1 - n) / s, Q2 / s, 1 / s

    def F(u, v):
        return np.sin(u) * np.exp(-v / 2)

    Ln = (lam * (F(a + hh, b) - F(a, b)) + (Q1 - Q2) * (F(a - hh, b) - F(a, b))
          + Q2 * (F(a, b - hh) - F(a, b)))
    E, Eh, sn, cs = np.exp(-b / 2), np.exp(-(b - hh) / 2), np.abs(np.sin(a)), np.abs(np.cos(a))
    L = (-beta - a + b) * np.cos(a) * E + b * np.sin(a) * E / 2 - np.sin(a) * E
    B = (beta + b - a) * sn * E / 2 + b * sn * Eh / 8 + np.minimum(1, cs + hh) * E / 3
    R1 = -(a - b - beta) * np.sin(a) * E / 2 + b * np.sin(a) * E / 8
    C = (beta + b - a) * cs * E / 6 + b * sn * Eh / 48 + np.minimum(1, sn + hh) * E / 12
    return Ln - L, hh * B, hh * R1, hh**2 * C, 16 * np.finfo(float).eps * lam


def martingale_increments(result: JSQResult, beta: float, *, burn_in: float,
                          dt: float) -> np.ndarray:
    """Increments over unit intervals of the martingale part of ``X_1 + X_2``.

    ``M(t) = (X_1 + X_2)(t) − (X_1 + X_2)(0) + ∫_0^t (β + X_1(s)) ds`` is a
    martingale while ``Q_3 = 0``; the integral is taken by the trapezoidal
    rule on the recorded grid.

    Parameters
    ----------
    result : qlib.halfin_whitt.simulate.JSQResult
        A run of :func:`qlib.halfin_whitt.simulate_jsq <qlib.halfin_whitt.simulate.simulate_jsq>` recorded every ``dt``
        (``record_dt=dt``), whose ``1/dt`` is an integer.
    beta : float
        The run's ``β``.
    burn_in : float
        Time dropped from the start of the record, ``>= 0``.
    dt : float
        The recording step.

    Returns
    -------
    numpy.ndarray
        The increments of ``M`` over consecutive unit intervals.

    Raises
    ------
    ValueError
        If ``Q_3`` was ever positive (the identity needs ``Q_3 = 0``), or
        ``1/dt`` is not an integer, or the record is shorter than two units.
    """
    dt = _check_pos("dt", dt)
    per = round(1 / dt)
    if abs(per * dt - 1) > 1e-9:
        raise ValueError(f"1/dt must be an integer, got dt = {dt}")
    if np.max(result.x3) > 0:
        raise ValueError("Q_3 > 0 on the path: M is a martingale only while Q_3 = 0")
    k0 = round(burn_in / dt)
    a, b = np.asarray(result.x1)[k0:], np.asarray(result.x2)[k0:]
    if a.size < 2 * per + 1:
        raise ValueError("the record after burn_in is shorter than two time units")
    drift = np.concatenate([[0.0], np.cumsum((2 * beta + a[1:] + a[:-1]) / 2 * dt)])
    M = (a + b) - (a[0] + b[0]) + drift
    return np.diff(M[::per])
