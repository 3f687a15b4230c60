"""Audits of the equilibrium's tail: the bounds, the geometric ratio and the crossover, against the recursion.

:mod:`~qlib.meanfield.tails` gives bounds on the fluid equilibrium ``q*`` at
any depth, the log-space recursion and its rounding bound ``E_i |log q*(i)|``,
and the crossover level of ``(1 − ω)δ_2 + ωδ_0``. The functions here measure
how those statements hold against an independent evaluation (the recursion in
40-digit arithmetic, or the float equilibrium of :mod:`~qlib.meanfield.fluid`),
each as the worst excess *in units of the rounding allowance*: a statement
holds when its number is at most 1 (or a count of violations is 0). They
return numbers; the caller asserts.

Examples
--------
>>> from qlib.meanfield import DegreeDistribution, log_recursion_audit
>>> a = log_recursion_audit(0.9, DegreeDistribution({0: 0.5, 4: 0.5}), 50)
>>> bool(a.rounding_use <= 1 and a.bound_excess <= 1 and a.equilibrium_use <= 1)
True
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from qlib.meanfield import fluid, tails

if TYPE_CHECKING:   # names for the annotations only
    from qlib.meanfield.degrees import DegreeDistribution

__all__ = ["RecursionAudit", "log_recursion_audit", "GeometricAudit", "geometric_tail_audit",
           "double_exponential_constant", "crossover_violations"]


def _check(lam, p):
    if isinstance(lam, bool) or not isinstance(lam, (int, float, np.integer, np.floating)):
        raise TypeError(f"lam must be a real number, got {type(lam).__name__}")
    if not 0 < lam < 1:
        raise ValueError(f"lam must be in (0, 1), got {lam!r}")
    if not hasattr(p, "pmf") or not hasattr(p, "min_degree"):
        raise TypeError(f"p must be a DegreeDistribution, got {type(p).__name__}")


@dataclass(frozen=True)
class RecursionAudit:
    """The log-space recursion and the bounds against a 40-digit reference.

    Attributes
    ----------
    rounding_use : float
        Largest ``|y_float − y_ref| / (E_i|y_i|)`` over levels ``1..n``.
    bound_excess : float
        Largest excess of a bound over the reference, in units of ``E_i|y_i|``
        (``<= 0`` where the bounds hold strictly; ``<= 1`` up to rounding).
    relative_excess : float
        The same excess in units of ``|log q*(i)|``.
    equilibrium_use : float
        Largest ``|log q_fluid − y_ref| / (E_i|y_i|)`` of ``fluid.equilibrium`` over
        its normal-float levels.
    rounding_at_n : float
        ``E_n``, the relative rounding bound at the deepest level.
    """

    rounding_use: float
    bound_excess: float
    relative_excess: float
    equilibrium_use: float
    rounding_at_n: float


def log_recursion_audit(lam: float, p: DegreeDistribution, n: int, *, digits: int = 40) -> RecursionAudit:
    """Measure the float recursion, the bounds and ``fluid.equilibrium`` against a high-precision reference.

    Parameters
    ----------
    lam : float
        Load, in ``(0, 1)``.
    p : DegreeDistribution
        Degree law.
    n : int
        Deepest level, ``>= 2``.
    digits : int, default 40
        Precision of the reference (``tails.log_equilibrium(..., digits=)``).

    Examples
    --------
    >>> from qlib.meanfield import DegreeDistribution
    >>> log_recursion_audit(0.5, DegreeDistribution.point(2), 1)
    Traceback (most recent call last):
    ...
    ValueError: n must be an int >= 2, got 1
    """
    _check(lam, p)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise ValueError(f"n must be an int >= 2, got {n!r}")
    ref = tails.log_equilibrium(lam, p, n, digits=digits)
    tol = tails.log_equilibrium_rounding(lam, p, n)
    use = float(np.max(np.abs(tails.log_equilibrium(lam, p, n) - ref)[1:] / tol[1:]))
    lo, up = tails.tail_bounds(lam, p, np.arange(n + 1), log=True)
    excess = float(max(np.max((lo - ref)[1:] / tol[1:]), np.max((ref - up)[1:] / tol[1:])))
    rel = float(max(np.max((lo - ref)[1:] / np.abs(ref[1:])), np.max((ref - up)[1:] / np.abs(ref[1:]))))
    q = fluid.equilibrium(lam, p, tol=1e-300)
    K = min(n, int(np.sum(q > 1e-290)) - 1)                      # normal floats only
    eq_use = float(np.max(np.abs(np.log(q[1:K + 1]) - ref[1:K + 1]) / tol[1:K + 1]))
    return RecursionAudit(use, excess, rel, eq_use, float(tol[n] / abs(ref[n])))


@dataclass(frozen=True)
class GeometricAudit:
    """The ``m = 0`` statements of the tail proposition, measured.

    Attributes
    ----------
    ratio_excess : float
        Worst violation, in units of the rounding allowance, of: the ratio
        ``q*(i+1)/q*(i)`` decreases, is at least ``λp(0)`` and at most
        ``λp(0) + λ(1 − p(0))q*(i)`` (``<= 1`` where all hold).
    bound_ratio_excess : float
        Worst ``|Δ log bound − log(λp(0))|`` at levels 200 and 2000, and the
        change of the gap between them, in units of their rounding allowance.
    gap, gap_bound : float
        ``max_i log(V_i/Z_i)`` over levels ``1..2000`` and the a priori bound ``ḡ``.
    log_C, log_C_max : float
        ``log C`` at level 300 and its upper bound ``(1 − p(0))/p(0) Σ q*(k)``.
    """

    ratio_excess: float
    bound_ratio_excess: float
    gap: float
    gap_bound: float
    log_C: float
    log_C_max: float


def geometric_tail_audit(lam: float, p: DegreeDistribution) -> GeometricAudit:
    """Measure the geometric-tail statements for a law with isolated vertices (``p(0) > 0``).

    Parameters
    ----------
    lam : float
        Load, in ``(0, 1)``.
    p : DegreeDistribution
        Degree law with ``min_degree == 0`` and some mass above 0.

    Examples
    --------
    >>> from qlib.meanfield import DegreeDistribution
    >>> a = geometric_tail_audit(0.9, DegreeDistribution({0: 0.5, 4: 0.5}))
    >>> bool(a.ratio_excess <= 1 and a.gap <= a.gap_bound and 0 <= a.log_C <= a.log_C_max)
    True
    """
    _check(lam, p)
    if p.min_degree != 0 or p.pmf[0] >= 1:
        raise ValueError("p must have 0 < p(0) < 1")
    bound = tails.log_equilibrium_rounding
    pm = float(p.pmf[0])
    q = fluid.equilibrium(lam, p, tol=1e-300)
    e = bound(lam, p, len(q) - 1)
    ratio = q[2:] / q[1:-1]
    slack = ratio * (e[2:] + e[1:-1])                         # relative rounding of a ratio
    ex = [np.max(np.diff(ratio) / (slack[1:] + slack[:-1])),   # the ratio decreases ...
          np.max((lam * pm - ratio) / slack),                  # ... to λp(0), from above
          np.max((ratio - lam * pm - lam * (1 - pm) * q[1:-1]) / slack)]
    lev = np.array([200, 201, 2000, 2001])
    e4 = bound(lam, p, 2001)[lev]
    lo, up = tails.tail_bounds(lam, p, lev, log=True)
    bx = [np.max(np.abs(np.diff(b)[[0, 2]] - math.log(lam * pm)) / (e4[[0, 2]] + e4[[1, 3]])) for b in (lo, up)]
    bx.append(abs((up - lo)[2] - (up - lo)[0]) / (2 * (e4[0] + e4[2])))   # the gap is constant
    lo_all, up_all = tails.tail_bounds(lam, p, np.arange(1, 2001), log=True)
    psil = float(p.pgf(lam))
    d = np.nonzero(p.pmf)[0][1:]
    gbar = float(np.sum(p.pmf[d] * (lam**2 * psil) ** d / (1 - (lam * psil) ** d)) / pm)
    logC = tails.log_equilibrium(lam, p, 300)[300] - math.log(lam) - 299 * math.log(lam * pm)
    Cmax = (1 - pm) / pm * math.fsum(q[1:])
    return GeometricAudit(float(max(ex)), float(max(bx)), float(np.max(up_all - lo_all)), gbar,
                          float(logC), float(Cmax))


def double_exponential_constant(lam: float, p: DegreeDistribution, level: int = 30) -> dict:
    """The constant ``c`` of ``q*(i) = exp(−(c + o(1))(m+1)^i)`` (``m >= 1``) from the bounds at ``level``.

    Returns
    -------
    dict
        ``c_lo``, ``c_up`` (from the bootstrapped bounds), ``c_est`` (from the
        recursion), ``crude`` (the proposition's interval), ``Delta`` (how far
        the level-``level`` value may sit below the limit) and ``e`` (the
        rounding allowance, in units of ``c``).

    Examples
    --------
    >>> from qlib.meanfield import DegreeDistribution
    >>> c = double_exponential_constant(0.9, DegreeDistribution({1: 0.5, 3: 0.5}))
    >>> bool(c["c_lo"] <= c["c_est"] + 2 * c["e"] <= c["c_up"] + 4 * c["e"])
    True
    """
    _check(lam, p)
    m = p.min_degree
    if m < 1:
        raise ValueError(f"p must have min_degree >= 1, got {m}")
    if isinstance(level, bool) or not isinstance(level, (int, np.integer)) or level < 2:
        raise ValueError(f"level must be an int >= 2, got {level!r}")
    pm, s = float(p.pmf[m]), (m + 1) ** level
    lo, up = tails.tail_bounds(lam, p, np.arange(level + 1), log=True)
    e = tails.log_equilibrium_rounding(lam, p, level)[level] / s
    y = tails.log_equilibrium(lam, p, level)[level]
    crude = (math.log(1 / lam) / m + math.log(1 / float(p.pgf(lam) / lam**m)) / (m * (m + 1)),
             math.log(1 / lam) / m + math.log(1 / pm) / (m * (m + 1)))
    return {"c_lo": float(-up[level] / s), "c_up": float(-lo[level] / s), "c_est": float(-y / s),
            "crude": crude, "Delta": (math.log(1 / lam) + math.log(1 / pm)) / m / s, "e": float(e)}


def crossover_violations(c: dict, lam: float, eps: float) -> int:
    """Count the statements of the crossover proposition that fail for one ``tails.tail_crossover`` result.

    Parts 1 and 2 (``i* >= j``; ``i* <= j + 1`` when ``κ <= 1``), the location
    ``2λωs < q*(i*) <= s``, the proof's ``S <= S̄`` and its sufficient condition
    for ``i* = j``, and part 3 (cubic before ``i*``, geometric after) at every
    level, each up to the rounding allowance of ``q*``.

    Parameters
    ----------
    c : dict
        ``tails.tail_crossover(lam, eps)``.
    lam, eps : float
        Its load and ``ω``, both in ``(0, 1)``.

    Examples
    --------
    >>> from qlib.meanfield import tails
    >>> crossover_violations(tails.tail_crossover(0.9, 1e-4), 0.9, 1e-4)
    0
    """
    if not isinstance(c, dict):
        raise TypeError(f"c must be the dict of tails.tail_crossover, got {type(c).__name__}")
    if not (0 < lam < 1 and 0 < eps < 1):
        raise ValueError(f"lam and eps must be in (0, 1), got {lam!r}, {eps!r}")
    q, e, i, j = c["q"], c["e"], c["istar"], c["j"]
    bad = [not i >= j, not (c["kappa"] > 1 or i <= j + 1),
           not 2 * lam * eps * c["s"] * (1 - e[i]) < q[i] <= c["s"] * (1 + e[i]),
           not c["S"] <= c["S_bar"], not (i == j or not c["at_j"])]
    lev = np.arange(1, len(q) - 1)
    with np.errstate(divide="ignore", under="ignore", invalid="ignore"):   # q³ underflows deep in the tail
        r, cubic = q[2:] / q[1:-1], q[2:] / q[1:-1] ** 3
    tr, tc = e[2:] + e[1:-1], e[2:] + 3 * e[1:-1]
    b, a = lev < i, lev >= i
    bad += [not np.all(cubic[b] > lam * (1 - eps) * (1 - tc[b])),
            not np.all(cubic[b] < 2 * lam * (1 - eps) * (1 + tc[b])),
            not np.all(r[a] >= lam * eps * (1 - tr[a])),
            not np.all(r[a] <= (lam * eps + lam * (1 - eps) * q[1:-1][a] ** 2) * (1 + tr[a]))]
    return int(sum(bad))
