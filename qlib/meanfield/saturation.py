"""Heavy traffic of the fluid equilibrium: ``R*`` as the load tends to 1.

For a degree law ``p`` of mean ``d̄`` the fluid mean response time grows like
``log(1/(1−λ))/log(1+d̄)``. For a point mass ``δ_d`` the Mellin transform of
the harmonic sum ``Σ_i exp(−x (d+1)^i)`` (Flajolet, Gourdon and Dumas 1995)
gives the rest:

.. math:: R^\\star = \\frac{\\log(1/\\varepsilon)}{\\log(d+1)} + C(\\delta_d)
          + P_d(u) + o(1), \\quad
          C(\\delta_d) = \\frac{\\log d - \\gamma}{\\log(d+1)} - \\frac12,

with ``ε = 1 − λ``, ``u = log(d/log(1/λ))/log(d+1)`` and ``P_d`` of period 1,

.. math:: P_d(u) = \\frac{1}{\\log(d+1)} \\sum_{k \\ne 0}
          \\Gamma(\\chi_k)\\, e^{2\\pi i k u}, \\qquad \\chi_k = \\frac{2\\pi i k}{\\log(d+1)}.

:func:`remainder` and :func:`period_mean` measure the same quantities for
any law from :func:`qlib.meanfield.fluid.response_time`; :func:`exact_point_mass`
is the closed-form sum for ``δ_d`` in arbitrary precision (an independent
route to ``R*``).
"""
from __future__ import annotations

import math

import mpmath
import numpy as np

from qlib.meanfield import fluid
from qlib.meanfield.degrees import DegreeDistribution
from typing import TYPE_CHECKING
if TYPE_CHECKING:   # names for the annotations only
    from numpy.typing import ArrayLike

__all__ = ["point_mass_constant", "oscillation", "oscillation_amplitude", "asymptote",
           "remainder", "period_mean", "exact_point_mass"]

_EULER = 0.5772156649015329


def _check_d(d) -> int:
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
        raise TypeError(f"d must be an int, got {type(d).__name__}")
    if d < 1:
        raise ValueError(f"d must be >= 1, got {d}")
    return int(d)


def _check_lam(lam) -> float:
    if not isinstance(lam, (int, float, np.floating)) or isinstance(lam, bool):
        raise TypeError(f"lam must be a float, got {type(lam).__name__}")
    if not 0.0 < lam < 1.0:
        raise ValueError(f"lam must be in (0, 1), got {lam}")
    return float(lam)


def point_mass_constant(d: int) -> float:
    """The heavy-traffic constant ``C(δ_d) = (log d − γ)/log(d+1) − 1/2``.

    Parameters
    ----------
    d : int
        The degree, ``>= 1``.

    Examples
    --------
    >>> round(point_mass_constant(2), 6)
    -0.394475
    """
    d = _check_d(d)
    return (math.log(d) - _EULER) / math.log(d + 1) - 0.5


def oscillation(d: int, u: ArrayLike, harmonics: int = 8) -> float | np.ndarray:
    """The log-periodic part ``P_d(u)`` (period 1, mean 0) from the poles ``χ_k``.

    Parameters
    ----------
    d : int
        The degree, ``>= 1``.
    u : float or array_like
        The phase ``log(d/log(1/λ))/log(d+1)``.
    harmonics : int, default 8
        Number of harmonics ``k = 1..harmonics`` summed (``|Γ(χ_k)|`` falls
        like ``e^{−π|χ_k|/2}``, so a few suffice).

    Examples
    --------
    >>> abs(float(oscillation(1, 0.3))) < 2e-6
    True
    """
    d = _check_d(d)
    if harmonics < 1:
        raise ValueError(f"harmonics must be >= 1, got {harmonics}")
    la = math.log(d + 1)
    u = np.asarray(u, dtype=float)
    out = np.zeros_like(u)
    for k in range(1, harmonics + 1):
        g = complex(mpmath.gamma(2j * math.pi * k / la))
        out += 2 * (g * np.exp(2j * math.pi * k * u)).real / la
    return out if out.ndim else float(out)


def oscillation_amplitude(d: int) -> float:
    """Amplitude of the first harmonic of ``P_d``: ``2|Γ(2πi/log(d+1))|/log(d+1)``.

    Examples
    --------
    >>> round(oscillation_amplitude(2), 6)
    0.000239
    """
    d = _check_d(d)
    la = math.log(d + 1)
    return 2 * abs(complex(mpmath.gamma(2j * math.pi / la))) / la


def asymptote(eta: float, d: int, harmonics: int = 8) -> float:
    """The Mellin asymptotics of ``R*(δ_d)`` at ``log(1/λ) = eta``, without the remainder.

    ``log(1/η)/log(d+1) + C(δ_d) + P_d(u)`` with ``η = log(1/λ)`` and
    ``u = log(d/η)/log(d+1)``; ``R*`` exceeds it by
    ``((d+1)/d)·η·log(1/η)/log(d+1)`` to first order.

    Parameters
    ----------
    eta : float
        ``log(1/λ)``, in ``(0, 1)``.
    d : int
        The degree, ``>= 1``.
    harmonics : int, default 8
        Harmonics of :func:`oscillation` summed.

    Examples
    --------
    >>> from qlib.meanfield import fluid, DegreeDistribution
    >>> eta = 1e-6
    >>> abs(asymptote(eta, 2) - fluid.response_time(math.exp(-eta), DegreeDistribution.point(2))) < 1e-4
    True
    """
    d = _check_d(d)
    if not 0.0 < eta < 1.0:
        raise ValueError(f"eta must be in (0, 1), got {eta}")
    u = math.log(d / eta) / math.log(d + 1)
    return math.log(1 / eta) / math.log(d + 1) + point_mass_constant(d) + oscillation(d, u, harmonics)


def remainder(lam: float, degrees: DegreeDistribution) -> float:
    """``R*(λ) − log(1/log(1/λ))/log(1 + d̄)``, with ``log(1/λ)`` computed from ``lam`` itself.

    Computing ``log(1/λ)`` from the double ``lam`` (exact to rounding) keeps the
    remainder accurate as ``λ → 1``, where ``1 − λ`` typed as a decimal is not.

    Examples
    --------
    >>> from qlib.meanfield import DegreeDistribution
    >>> r = remainder(math.exp(-1e-9), DegreeDistribution.point(2))
    >>> abs(r - point_mass_constant(2)) < 2 * oscillation_amplitude(2)
    True
    """
    lam = _check_lam(lam)
    if not isinstance(degrees, DegreeDistribution):
        raise TypeError(f"degrees must be a DegreeDistribution, got {type(degrees).__name__}")
    return fluid.response_time(lam, degrees) - math.log(-1 / math.log(lam)) / math.log(1 + degrees.mean)


def period_mean(degrees: DegreeDistribution, eta0: float, m: int = 48) -> tuple[float, float]:
    """Mean and half-range of :func:`remainder` over one period of ``log(1/log(1/λ))``.

    The period is ``log(1 + d̄)``; the ``m`` sample points are
    ``log(1/λ) = eta0·(1 + d̄)^(−k/m)``, ``k = 0..m−1``.

    Parameters
    ----------
    degrees : DegreeDistribution
    eta0 : float
        The depth ``log(1/λ)`` at the start of the period, in ``(0, 1)``.
    m : int, default 48
        Sample points per period, ``>= 2``.

    Returns
    -------
    (mean, half_range) : tuple of float

    Examples
    --------
    >>> from qlib.meanfield import DegreeDistribution
    >>> c, h = period_mean(DegreeDistribution.point(1), 1e-8, m=12)
    >>> abs(c - point_mass_constant(1)) < 1e-5 and h < 1e-5
    True
    """
    if not isinstance(degrees, DegreeDistribution):
        raise TypeError(f"degrees must be a DegreeDistribution, got {type(degrees).__name__}")
    if not 0.0 < eta0 < 1.0:
        raise ValueError(f"eta0 must be in (0, 1), got {eta0}")
    if m < 2:
        raise ValueError(f"m must be >= 2, got {m}")
    a = 1 + degrees.mean
    r = [remainder(math.exp(-eta0 * a ** (-k / m)), degrees) for k in range(m)]
    return float(np.mean(r)), float((max(r) - min(r)) / 2)


def exact_point_mass(eta: float | str | mpmath.mpf, d: int, dps: int = 50) -> mpmath.mpf:
    """``R*(δ_d)`` at ``λ = e^{−η}`` from the closed form, in ``dps`` digits.

    For ``δ_d`` the equilibrium is ``q*(i) = λ^{((d+1)^i − 1)/d}``, so
    ``R* = Σ_{i≥1} λ^{((d+1)^i − 1)/d − 1}`` (Little's law); the sum is cut
    where its terms fall below ``10^{−dps}``. No recursion, no rounding of
    ``1 − λ``: an independent route to :func:`qlib.meanfield.fluid.response_time`.

    Parameters
    ----------
    eta : float, str or mpmath.mpf
        ``log(1/λ) > 0``.
    d : int
        The degree, ``>= 1``.
    dps : int, default 50
        Decimal digits of the arithmetic.

    Examples
    --------
    >>> from qlib.meanfield import fluid, DegreeDistribution
    >>> abs(float(exact_point_mass(-math.log(0.9), 2)) - fluid.response_time(0.9, DegreeDistribution.point(2))) < 1e-12
    True
    """
    d = _check_d(d)
    with mpmath.workdps(dps):
        eta = mpmath.mpf(eta)
        if not eta > 0:
            raise ValueError(f"eta must be > 0, got {eta}")
        tiny, total, i = mpmath.mpf(10) ** (-dps), mpmath.mpf(0), 1
        while True:
            term = mpmath.exp(-eta * (((d + 1) ** i - 1) / mpmath.mpf(d) - 1))
            total += term
            if term < tiny:
                return +total
            i += 1
