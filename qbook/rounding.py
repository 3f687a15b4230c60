"""The equilibrium recursion for a point mass in floating point, against 50 digits.

For ``p = δ_d`` the equilibrium has the closed form ``q*(i) = λ^{a_i}``,
``a_i = ((d+1)^i − 1)/d``. The plain recursion ``q(i) = λ q(i−1) φ(q(i−1))``
in double precision (``φ`` by Horner) makes at most ``d + 1`` roundings a
step, so ``q̂(i) = q*(i)(1 + e_i)`` with ``|e_i| ≤ (1 + θ_{d+1})^{a_i} − 1``,
``θ_k = k u/(1 − k u)``, ``u = 2⁻⁵³``. :func:`recursion_rounding` runs the
recursion down to a floor, measures ``|e_i|`` against ``λ^{a_i}`` in 50-digit
arithmetic (``mpmath``), and compares
:func:`~qlib.meanfield.fluid.equilibrium` with the recursion within that
bound plus ``2u``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath

from qlib import _validate as V
from qlib.meanfield import fluid
from qlib.meanfield.degrees import DegreeDistribution

__all__ = ["RecursionRounding", "recursion_rounding"]

U = 2.0**-53


@dataclass(frozen=True)
class RecursionRounding:
    """Rounding of the point-mass recursion.

    Attributes
    ----------
    levels : int
        Levels computed (until the recursion falls below the floor).
    worst_ratio : float
        ``max_i |e_i| / bound_i`` (``|e_i|/u`` where the bound is 0); at most
        1 when the rounding analysis holds.
    worst_equilibrium : float
        ``max_i |q_eq(i)/q̂(i) − 1| / (bound_i + 2u)`` over the levels
        :func:`~qlib.meanfield.fluid.equilibrium` returns; at most 1 when it
        meets the recursion.
    """

    levels: int
    worst_ratio: float
    worst_equilibrium: float


def recursion_rounding(degree: int, lam: float, floor: float = 1e-300) -> RecursionRounding:
    """Run the recursion for ``δ_degree`` at load ``lam`` and measure its rounding.

    Parameters
    ----------
    degree : int
        ``d ≥ 1``.
    lam : float
        ``λ ∈ (0, 1)``.
    floor : float, default 1e-300
        Stop once the recursion falls below it.

    Returns
    -------
    RecursionRounding

    Examples
    --------
    >>> r = recursion_rounding(2, 0.9)
    >>> bool(r.worst_ratio <= 1 and r.worst_equilibrium <= 1), r.levels > 5
    (True, True)
    """
    d = V.integer(degree, "degree", lo=1)
    lam = V.real(lam, "lam", lo=0, hi=1, lo_open=True, hi_open=True)
    floor = V.real(floor, "floor", lo=0, hi=1, lo_open=True, hi_open=True)
    p = DegreeDistribution.point(d)
    theta = (d + 1) * U / (1 - (d + 1) * U)
    fe = fluid.equilibrium(lam, p)
    with mpmath.workdps(50):
        q, level, worst, worst_eq = 1.0, 0, 0.0, 0.0
        while q > floor:
            a = ((d + 1) ** level - 1) // d
            rel = float(abs(mpmath.mpf(q) / mpmath.mpf(lam) ** a - 1))
            bound = math.expm1(a * math.log1p(theta))
            worst = max(worst, rel / bound if bound else rel / U)
            if level < fe.size:
                worst_eq = max(worst_eq, abs(fe[level] / q - 1) / (bound + 2 * U))
            q, level = lam * q * float(p.pgf(q)), level + 1
    return RecursionRounding(level, float(worst), float(worst_eq))
