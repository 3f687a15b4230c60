"""The mechanics of ``chapters/fluid_heavy_traffic.md``: the constants' glued table, the
library's error against the 50-digit closed form, and the finite-``n`` gain of a degree.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import mpmath

from qlib.meanfield import fluid, refined, saturation

__all__ = ["constant_glues", "library_error", "finite_n_gains"]


def constant_glues(HT: Mapping, point: Mapping[str, int], slug: Mapping[str, str]) -> dict:
    """The glued values of the constants' table: measured ``C`` and half-range per law, and,
    for the point masses, the closed form and the Mellin amplitude.

    Parameters
    ----------
    HT : mapping
        Law name to ``(period mean at depth 1e-8, period mean at depth 1e-11)``, each
        ``(C, half-range)`` as :func:`qlib.meanfield.saturation.period_mean` returns.
    point : mapping
        Law name to ``d`` for the point masses ``δ_d``.
    slug : mapping
        Law name to the slug of its glue keys.

    Returns
    -------
    dict
        Glue key suffix (``C-<slug>``, ``amp-<slug>``, ``Ccl-<slug>``, ``ampM-<slug>``) to value.
    """
    out = {}
    for k, (_, (c, hr)) in HT.items():
        d = point.get(k)
        out |= {f"C-{slug[k]}": float(c), f"amp-{slug[k]}": float(hr),
                f"Ccl-{slug[k]}": float(saturation.point_mass_constant(d)) if d else "no closed form",
                f"ampM-{slug[k]}": float(saturation.oscillation_amplitude(d)) if d else "—"}
    return out


def library_error(laws: Mapping, depths: Sequence[float] = (1e-2, 1e-5, 1e-8)) -> float:
    """Largest ``|fluid.response_time − closed form in 50 digits|`` over ``δ1, δ2, δ3`` at
    ``λ = exp(−depth)``.

    Parameters
    ----------
    laws : mapping
        Holding ``"δ1"``, ``"δ2"``, ``"δ3"``.
    depths : sequence of float
        The values of ``log(1/λ)``.

    Returns
    -------
    float
    """
    return max(abs(fluid.response_time(math.exp(-e), laws[f"δ{d}"]) - float(
        saturation.exact_point_mass(-mpmath.log(mpmath.mpf(math.exp(-e))), d)))
        for e in depths for d in (1, 2, 3))


def finite_n_gains(laws: Mapping, lams: Sequence[float] = (0.9, 0.95, 0.99)) -> dict:
    """The refined ``1/n`` coefficients of δ2 and δ3 against the fluid gain of the third choice.

    Parameters
    ----------
    laws : mapping
        Holding ``"δ2"`` and ``"δ3"``.
    lams : sequence of float
        The loads.

    Returns
    -------
    dict
        Load to ``{"rv2", "rv3", "gain", "n_eq"}``: the two coefficients, the fluid gain
        ``R*(δ2) − R*(δ3)``, and ``n_eq = (rv3 − rv2)/gain``, the ``n`` below which the
        ``1/n`` terms undo the gain.
    """
    out = {}
    for lam in lams:
        rv2, rv3 = (refined(lam, laws[k]).response_time_v for k in ("δ2", "δ3"))
        g = fluid.response_time(lam, laws["δ2"]) - fluid.response_time(lam, laws["δ3"])
        out[lam] = dict(rv2=rv2, rv3=rv3, gain=g, n_eq=(rv3 - rv2) / g)
    return out
