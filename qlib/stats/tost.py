"""Equivalence tests (TOST, intersection–union): showing that a difference lies within a stated margin."""
from __future__ import annotations

import functools
import numbers
import math
import numpy as np
from dataclasses import dataclass
from qlib._lazy import scipy_integrate as integrate, scipy_optimize as optimize, scipy_stats as _st

from qlib.stats.intervals import _check_df, _check_level, _scalar, t_quantile
from typing import TYPE_CHECKING
from qlib.stats._results import fields_eq
if TYPE_CHECKING:   # names for the annotations only
    from numpy.typing import ArrayLike

__all__ = ['equivalence', 'Equivalence', 'replications_for_equivalence']


# ---------------------------------------------------------------- equivalence

@functools.lru_cache(maxsize=1024)
def _equiv_factor(d, m, level, power):
    """``M/se`` at which TOST (Bonferroni over ``m``) shows equivalence with ``power`` at θ = 0."""
    c = float(t_quantile(1 - (1 - level) / m, d))
    if math.isinf(d):
        return c + float(_st.norm.ppf(0.5 + power / 2))

    # P(|Z| < x − c·S), S = sqrt(χ²_d / d), integrated over the χ²_d law of
    # V = d S². The integrand is plain `math` (2Φ(z) − 1 = erf(z/√2), the χ²
    # density from its logarithm): scipy.stats' per-point calls made one
    # factor cost seconds, and `equivalence` needs one per distinct df.
    v_lo, v_hi = float(_st.chi2.ppf(1e-14, d)), float(_st.chi2.isf(1e-14, d))
    log_norm = (d / 2) * math.log(2.0) + math.lgamma(d / 2)
    root2 = math.sqrt(2.0)

    def f(x):
        def g(v):
            z = x - c * math.sqrt(v / d)
            if z <= 0.0:
                return 0.0
            return math.erf(z / root2) * math.exp((d / 2 - 1) * math.log(v) - v / 2 - log_norm)
        return integrate.quad(g, v_lo, v_hi, limit=200, points=[d])[0] - power
    hi = c + 3.0
    while f(hi) < 0:
        hi *= 1.5
    return optimize.brentq(f, c, hi, xtol=1e-10)


@fields_eq
@dataclass(frozen=True, repr=False)
class Equivalence:
    """Result of :func:`~qlib.stats.tost.equivalence`: is ``|θ| < margin`` shown, check by check?

    Attributes
    ----------
    estimate, se, df, margin : float or ndarray
        Per check (``margin`` broadcast to the estimate's shape).
    lower, upper : float or ndarray
        Confidence bounds ``estimate ∓ crit · se``: together the
        ``1 − 2α/m`` interval whose inclusion in ``(−margin, margin)`` is
        the two one-sided tests.
    crit : float or ndarray
        One-sided critical value ``t_{df, 1 − α/m}``.
    equivalent : bool or ndarray of bool
        Per check: both one-sided tests reject, i.e. ``−margin < lower`` and
        ``upper < margin``.
    achieved : float or ndarray
        ``max(|lower|, |upper|)``: the smallest margin these data establish.
    resolvable : float or ndarray
        The margin that the test establishes with ``power`` (80 %) when the
        true value is 0, per check (the s.e. taken as the true one, its
        estimate's χ² law integrated over): a margin well below it could
        hardly have been shown.
    m : int
        Number of checks.
    level : float
        Family-wise level: the probability of declaring some non-equivalent
        check equivalent (``"bonferroni"``), or of declaring all equivalent
        when one is not (``"iut"``), is at most ``1 − level``.
    method : str
        ``"bonferroni"`` or ``"iut"``.
    """

    estimate: object
    se: object
    df: object
    margin: object
    lower: object
    upper: object
    crit: object
    equivalent: object
    achieved: object
    resolvable: object
    m: int
    level: float
    method: str = "bonferroni"

    @property
    def passed(self):
        """True when every check of the family is shown equivalent."""
        return bool(np.all(self.equivalent))

    def report(self, name="equivalence"):
        """One line: checks, the largest bound against the margin, the verdict."""
        ach = np.atleast_1d(self.achieved)
        mar = np.broadcast_to(np.atleast_1d(self.margin), ach.shape)
        i = int(np.argmax(ach / mar))
        how = "Bonferroni" if self.method == "bonferroni" else "intersection-union"
        return (f"{name}: {self.m} check(s) (TOST, {how}, family level {self.level:g}); "
                f"worst: estimate {float(np.atleast_1d(self.estimate)[i]):.3g}, bounds "
                f"[{float(np.atleast_1d(self.lower)[i]):.3g}, {float(np.atleast_1d(self.upper)[i]):.3g}] "
                f"vs margin ±{float(mar[i]):.3g} (critical {float(np.max(self.crit)):.2f}); "
                f"resolvable margin {float(np.max(self.resolvable)):.3g}; "
                f"{'equivalent' if self.passed else 'NOT shown equivalent'}")

    def __repr__(self):
        return f"Equivalence({self.report('')[2:]})"

    __str__ = report


def equivalence(estimate: ArrayLike, se: ArrayLike, df: ArrayLike, margin: ArrayLike, *,
                level: float = 0.95, power: float = 0.8, method: str = "bonferroni") -> Equivalence:
    """Two one-sided tests (TOST): is ``|θ| < margin`` shown for every check?

    A significance test that does not reject says nothing about agreement
    (it cannot fail when the data are noisy); an equivalence test can: it
    declares check ``j`` equivalent only when both ``H₀: θ_j ≤ −margin_j``
    and ``H₀: θ_j ≥ margin_j`` are rejected by one-sided Student-t tests at
    ``α/m`` (Bonferroni over the ``m`` checks, ``α = 1 − level``), i.e. when
    ``estimate ∓ t_{df, 1 − α/m} · se`` lies inside ``(−margin, margin)``.
    The probability that some check is declared equivalent while its
    ``|θ| ≥ margin`` is at most ``α``.

    With ``method="iut"`` (intersection–union) every check is tested at
    ``α`` itself: then only the *global* verdict ``passed`` ("every check is
    within its margin") has error at most ``α`` (Berger & Hsu 1996), not the
    per-check verdicts. Use it when the claim is that all checks agree, as
    for a burn-in over all cells of a study; it needs no multiplicity
    correction and so resolves much smaller margins.

    Parameters
    ----------
    estimate : float or array_like
        Estimated differences ``θ̂`` (e.g. first minus second half).
    se : float or array_like
        Their standard errors, ``> 0``.
    df : float or array_like
        Degrees of freedom of each s.e. (``inf``: normal).
    margin : float or array_like
        Equivalence margins, ``> 0``, in the units of ``estimate``.
    level : float, default 0.95
        Family-wise level.
    power : float, default 0.8
        Power behind ``resolvable``.
    method : {"bonferroni", "iut"}
        Per-check verdicts at family-wise ``level`` (Bonferroni), or only
        the global one (intersection–union).

    Returns
    -------
    Equivalence
        ``.equivalent`` per check, ``.passed`` for all, ``.report()``.

    Raises
    ------
    ValueError
        On non-finite estimates, ``se <= 0``, ``margin <= 0`` or shapes that
        do not broadcast.

    Examples
    --------
    >>> e = equivalence(0.1, 0.2, 19, 0.5)
    >>> bool(e.equivalent), round(e.upper, 3)        # 0.1 + 1.729 · 0.2
    (True, 0.446)
    """
    level = _check_level(level)
    power = _check_level(power, "power")
    if method not in ("bonferroni", "iut"):
        raise ValueError(f"method must be 'bonferroni' or 'iut', got {method!r}")
    try:
        est, s, mar = np.broadcast_arrays(np.asarray(estimate, dtype=float),
                                          np.asarray(se, dtype=float),
                                          np.asarray(margin, dtype=float))
        d = np.broadcast_to(_check_df(df), est.shape).astype(float)
    except (TypeError, ValueError) as e:
        if "df must" in str(e):
            raise
        raise ValueError("estimate, se, df and margin must be real and broadcast together") from None
    if est.size == 0 or not np.all(np.isfinite(est)):
        raise ValueError("estimate must hold at least one finite value")
    if np.any(~(s > 0)) or not np.all(np.isfinite(s)):
        raise ValueError("se must be finite and > 0 for every check")
    if np.any(~(mar > 0)):
        raise ValueError(f"margin must be > 0, got {margin!r}")
    m = est.size
    mb = m if method == "bonferroni" else 1           # the divisor of α
    crit = np.asarray(t_quantile(1 - (1 - level) / mb, d), dtype=float)
    lo, hi = est - crit * s, est + crit * s
    eq = (-mar < lo) & (hi < mar)
    res = s * np.vectorize(lambda x: _equiv_factor(float(x), mb, level, power))(d)
    sc = _scalar
    return Equivalence(sc(est), sc(s), sc(d), sc(mar), sc(lo), sc(hi), sc(crit),
                       bool(eq) if eq.ndim == 0 else eq, sc(np.maximum(np.abs(lo), np.abs(hi))),
                       sc(res), m, level, method)


def replications_for_equivalence(sigma: ArrayLike, margin: ArrayLike, *, m: int = 1,
                                 level: float = 0.95, power: float = 0.8, method: str = "iut",
                                 r_max: int = 10_000, per: str = "family") -> int:
    """Independent replications so that an equivalence family shows ``|θ| < margin``.

    The counterpart of :func:`~qlib.stats.families.replications_needed` for
    TOST: the smallest ``r >= 2`` whose *resolvable* margin (see
    :func:`equivalence`) with ``se = σ/√r`` and ``df = r − 1`` is at most
    ``margin``, i.e. the design shows equivalence with probability ``power``
    when the true difference is 0. Size ``σ`` from a pilot's upper
    confidence limit (:func:`~qlib.stats.families.sigma_upper`), not from the
    pilot's ``s`` itself.

    A family of ``m`` checks passes only when every check does, so with
    independent checks its power is about the *product* of the per-check
    powers: eight checks at 80 % each pass together only about 17 % of the
    time. ``per="family"`` (the default) therefore sizes each check at
    power ``power**(1/m)``, so that the whole family passes with
    probability about ``power`` when every difference is 0; ``per="check"``
    sizes each check at ``power`` (say "per check" where it is used). The
    level is split only under ``method="bonferroni"``; under ``"iut"`` each
    check is tested at ``level``.

    Parameters
    ----------
    sigma : float or array_like
        Per-replication s.d. of the tested difference (``> 0``); for an array
        the check that needs most replications decides.
    margin : float or array_like
        The equivalence margin(s), ``> 0``, fixed before the runs.
    m : int, default 1
        Checks in the family.
    level, power : float
        Family-wise level, and the power (of the family or of each check,
        see ``per``).
    method : {"iut", "bonferroni"}
        As in :func:`equivalence`.
    r_max : int, default 10 000
    per : {"family", "check"}, default "family"
        Whether ``power`` is the family's (each check sized at
        ``power**(1/m)``) or each check's.

    Returns
    -------
    int

    Examples
    --------
    >>> replications_for_equivalence(1.0, 1.0)
    11
    >>> replications_for_equivalence(1.0, 1.0, m=8, per="check")
    11
    >>> replications_for_equivalence(1.0, 1.0, m=8)       # family power 80 %
    17
    """
    level = _check_level(level)
    power = _check_level(power, "power")
    if method not in ("bonferroni", "iut"):
        raise ValueError(f"method must be 'bonferroni' or 'iut', got {method!r}")
    if isinstance(m, bool) or not (isinstance(m, numbers.Integral) and m >= 1):
        raise ValueError(f"m must be an integer >= 1, got {m!r}")
    if per not in ("family", "check"):
        raise ValueError(f"per must be 'family' or 'check', got {per!r}")
    if per == "family":
        power = power ** (1.0 / int(m))
    s, mar = np.broadcast_arrays(np.asarray(sigma, dtype=float), np.asarray(margin, dtype=float))
    if s.size == 0 or np.any(~(s > 0)) or not np.all(np.isfinite(s)):
        raise ValueError("sigma must be finite and > 0")
    if np.any(~(mar > 0)):
        raise ValueError(f"margin must be > 0, got {margin!r}")
    need = float(np.max(s / mar))
    mb = int(m) if method == "bonferroni" else 1
    for r in range(2, int(r_max) + 1):
        if _equiv_factor(float(r - 1), mb, level, power) / math.sqrt(r) <= 1.0 / need:
            return r
    raise ValueError(f"r_max = {r_max} replications do not resolve the margin: "
                     f"resolvable at r_max is {need * _equiv_factor(float(r_max - 1), mb, level, power) / math.sqrt(r_max):.3g} × margin")
