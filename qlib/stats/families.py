"""Families of checks: Holm/Bonferroni with t quantiles, the smallest detectable deviation, critical values, replications needed."""
from __future__ import annotations

import functools
import math
import numbers
import numpy as np
from dataclasses import dataclass
from qlib._lazy import scipy_integrate as integrate, scipy_optimize as optimize, scipy_stats as _st

from qlib.stats.intervals import _check_df, _check_level, _scalar, t_quantile
from typing import TYPE_CHECKING
from qlib.stats._results import fields_eq
if TYPE_CHECKING:   # names for the annotations only
    from numpy.typing import ArrayLike

__all__ = ['simultaneous', 'Family', 'detectable', 'critical_value', 'replications_needed', 'sigma_upper']


# ---------------------------------------------------------------- power

@functools.lru_cache(maxsize=1024)
def _detect_factor(d, m, level, power):
    """Noncentrality at which the two-sided Bonferroni t test has ``power``."""
    alpha = (1 - level) / m
    c = float(t_quantile(1 - alpha / 2, d))
    if math.isinf(d):
        f = lambda nc: _st.norm.sf(c - nc) + _st.norm.cdf(-c - nc) - power  # noqa: E731
    else:
        # P(|Z + nc| > c·S) with S = sqrt(χ²_d / d), integrated over S
        # (scipy's nct returns nan far in the tails). Integrate over the bulk
        # of χ²_d: over (0, ∞) quad misses the peak once d is large (a hang
        # for d ≳ 200). The integrand is plain `math` (Φ through erfc, the χ²
        # density from its logarithm): scipy.stats' per-point calls made one
        # factor cost seconds.
        v_lo, v_hi = float(_st.chi2.ppf(1e-14, d)), float(_st.chi2.isf(1e-14, d))
        log_norm = (d / 2) * math.log(2.0) + math.lgamma(d / 2)
        root2 = math.sqrt(2.0)

        def f(nc):
            def g(v):
                cs = c * math.sqrt(v / d)
                # P(Z > cs − nc) + P(Z < −cs − nc)
                tails = 0.5 * (math.erfc((cs - nc) / root2) + math.erfc((cs + nc) / root2))
                return tails * math.exp((d / 2 - 1) * math.log(v) - v / 2 - log_norm)
            return integrate.quad(g, v_lo, v_hi, limit=200, points=[d])[0] - power
    hi = c + 1.0
    while f(hi) < 0:                                  # bracket the root
        hi *= 1.5
    return optimize.brentq(f, 0.0, hi, xtol=1e-10)


def detectable(se: ArrayLike, df: ArrayLike = np.inf, m: int = 1, level: float = 0.95,
               power: float = 0.8) -> float | np.ndarray:
    """Smallest deviation a two-sided test detects with the given power.

    The test rejects when ``|estimate − target| / se > c`` with
    ``c = t_{df, 1 − α/(2m)}`` (Bonferroni over ``m`` checks, ``α = 1 −
    level``). The returned ``δ`` solves ``P(|T'| > c) = power`` for the
    noncentral t variable ``T'`` with noncentrality ``δ/se`` (normal when
    ``df = inf``). Print it next to the effect a check claims: a check whose
    detectable deviation is larger than any plausible error could not have
    failed.

    Parameters
    ----------
    se : float or array_like
        Standard error(s) of the estimate.
    df : float, default inf
        Degrees of freedom of the s.e. (``r − 1`` replications, ``k − 1``
        batches).
    m : int, default 1
        Number of checks in the family.
    level : float, default 0.95
        Family-wise confidence level.
    power : float, default 0.8
        Power at the returned deviation.

    Returns
    -------
    float or ndarray
        ``δ`` in the units of ``se``.
    """
    level = _check_level(level)
    power = _check_level(power, "power")
    if not (isinstance(m, numbers.Integral) and m >= 1):
        raise ValueError(f"m must be an integer >= 1, got {m!r}")
    se_a = np.asarray(se, dtype=float)
    if np.any(~(se_a >= 0)):
        raise ValueError("se must be >= 0")
    d = float(_check_df(df))
    nc = _detect_factor(d, int(m), level, power)
    return _scalar(nc * se_a)


def _check_m(m):
    if isinstance(m, bool) or not (isinstance(m, numbers.Integral) and m >= 1):
        raise ValueError(f"m must be an integer >= 1, got {m!r}")
    return int(m)


def critical_value(m: int, df: ArrayLike, level: float = 0.95) -> float | np.ndarray:
    """Bonferroni critical value ``t_{df, 1 − α/(2m)}`` of a family of ``m`` two-sided t tests.

    The value every check of :func:`~qlib.stats.families.simultaneous` compares ``|t|`` with
    (Holm's first step uses it too); print it next to a family so a reader
    sees how large a deviation must be to count.

    Parameters
    ----------
    m : int
        Number of checks in the family, ``>= 1``.
    df : float or array_like
        Degrees of freedom (``r − 1`` for ``r`` replications; ``inf``: normal).
    level : float, default 0.95
        Family-wise confidence level, ``α = 1 − level``.

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> round(critical_value(1, 9), 3), round(critical_value(18, 9), 2)
    (2.262, 4.08)
    """
    m = _check_m(m)
    level = _check_level(level)
    return _scalar(np.asarray(t_quantile(1 - (1 - level) / (2 * m), df), dtype=float))


def replications_needed(se_pilot: ArrayLike, delta: ArrayLike, *, m: int = 1, level: float = 0.95,
                        power: float = 0.8, r_pilot: int | None = None,
                        r_max: int = 10_000) -> int:
    """Independent replications so that a family of t tests detects ``delta``.

    Returns the smallest ``r >= 2`` for which :func:`~qlib.stats.families.detectable` with
    ``se = σ/√r``, ``df = r − 1`` and a Bonferroni family of ``m`` checks at
    family-wise ``level`` is at most ``delta``: a true deviation of
    ``delta`` is then rejected with probability at least ``power`` (Holm is
    at least as powerful). ``σ`` is the standard deviation of *one*
    replication of the tested statistic:

    * ``r_pilot=None``: ``se_pilot`` **is** that per-replication s.d. ``σ``;
    * ``r_pilot = r₀``: ``se_pilot`` is the standard error of a pilot mean
      over ``r₀`` replications, and ``σ = se_pilot · √r₀``.

    The pilot's ``σ`` is itself an estimate (with ``r₀ − 1`` degrees of
    freedom); a small pilot can under-state it, so round up generously.

    Parameters
    ----------
    se_pilot : float or array_like
        Per-replication s.d. or pilot s.e. (see above), ``>= 0``; for an
        array (one per check) the check that needs most replications decides.
    delta : float or array_like
        Deviation to detect (``> 0``), in the units of ``se_pilot``;
        broadcast against ``se_pilot``.
    m : int, default 1
        Number of checks in the family.
    level : float, default 0.95
        Family-wise confidence level.
    power : float, default 0.8
        Power at ``delta``.
    r_pilot : int, optional
        Replications behind ``se_pilot`` (see above), ``>= 2``.
    r_max : int, default 10 000
        Largest ``r`` considered.

    Returns
    -------
    int
        The number of replications ``r``; print :func:`~qlib.stats.families.critical_value` with
        ``df = r − 1`` next to the family.

    Raises
    ------
    ValueError
        If an argument is out of range, or ``r_max`` replications do not
        suffice (the message gives the detectable deviation at ``r_max``).

    Examples
    --------
    >>> replications_needed(1.0, 1.0)          # one t test, σ = δ
    10
    """
    m = _check_m(m)
    level = _check_level(level)
    power = _check_level(power, "power")
    if isinstance(r_max, bool) or not (isinstance(r_max, numbers.Integral) and r_max >= 2):
        raise ValueError(f"r_max must be an integer >= 2, got {r_max!r}")
    try:
        sd, dl = np.broadcast_arrays(np.asarray(se_pilot, dtype=float),
                                     np.asarray(delta, dtype=float))
    except (TypeError, ValueError):
        raise ValueError("se_pilot and delta must be real and broadcast together") from None
    if sd.size == 0 or np.any(~(sd >= 0)) or not np.all(np.isfinite(sd)):
        raise ValueError(f"se_pilot must be finite and >= 0, got {se_pilot!r}")
    if np.any(~(dl > 0)) or not np.all(np.isfinite(dl)):
        raise ValueError(f"delta must be finite and > 0, got {delta!r}")
    if r_pilot is not None:
        if isinstance(r_pilot, bool) or not (isinstance(r_pilot, numbers.Integral) and r_pilot >= 2):
            raise ValueError(f"r_pilot must be None or an integer >= 2, got {r_pilot!r}")
        sd = sd * math.sqrt(r_pilot)
    ratio = float(np.max(sd / dl))                    # σ / δ of the hardest check

    def ok(r):
        return _detect_factor(float(r - 1), m, level, power) * ratio / math.sqrt(r) <= 1.0

    if ratio == 0.0:
        return 2
    # the normal test detects less than the t test, so r >= (nc_normal · σ/δ)²;
    # gallop up from that bound (each evaluation is a quadrature), then bisect
    r_lb = max(2, math.ceil((_detect_factor(math.inf, m, level, power) * ratio) ** 2 - 1e-9))
    if r_lb > r_max or not ok(r_max):
        worst = _detect_factor(float(r_max - 1), m, level, power) * ratio / math.sqrt(r_max)
        raise ValueError(f"r_max = {r_max} replications detect only {worst:.3g} × delta; "
                         f"raise r_max or delta")
    if ok(r_lb):
        return r_lb
    lo, step, hi = r_lb, 1, min(r_max, r_lb + 1)
    while not ok(hi):
        lo, step = hi, 2 * step
        hi = min(r_max, hi + step)
    while hi - lo > 1:                                # ok(hi), not ok(lo): bisect
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


# ---------------------------------------------------------------- families

@fields_eq
@dataclass(frozen=True)
class Family:
    """A family of checks ``estimate ≈ target`` at a family-wise level.

    Attributes
    ----------
    estimate, target, se, df : ndarray
        Per check.
    t : ndarray
        ``(estimate − target) / se``.
    p : ndarray
        Two-sided p-values (Student-t with ``df``).
    reject : ndarray of bool
        Rejections by ``method`` at family-wise level ``1 − level``.
    crit : ndarray
        Bonferroni critical values ``t_{df, 1 − α/(2m)}``.
    half_width : ndarray
        Simultaneous (Bonferroni) half-widths ``crit · se``.
    detectable : ndarray
        Smallest deviation per check detected with 80 % power (Bonferroni).
    method : str
    level : float
    """

    estimate: np.ndarray
    target: np.ndarray
    se: np.ndarray
    df: np.ndarray
    t: np.ndarray
    p: np.ndarray
    reject: np.ndarray
    crit: np.ndarray
    half_width: np.ndarray
    detectable: np.ndarray
    method: str
    level: float

    @property
    def passed(self):
        """True when no check of the family is rejected."""
        return not bool(np.any(self.reject))

    @property
    def m(self):
        """Number of checks."""
        return len(self.estimate)

    def report(self, name="family"):
        """One line: checks, worst ``|t|``, critical value and detectable deviation."""
        i = int(np.argmax(np.abs(self.t))) if self.m else 0
        return (f"{name}: {self.m} checks ({self.method}, family level {self.level:g}); "
                f"largest |dev| = {float(np.max(np.abs(self.estimate - self.target))):.3g}, "
                f"worst |t| = {abs(float(self.t[i])):.2f} vs critical "
                f"{float(np.max(self.crit)):.2f}; detectable deviation "
                f"{float(np.min(self.detectable)):.3g}..{float(np.max(self.detectable)):.3g}; "
                f"{'passed' if self.passed else 'REJECTED'}")

    def __str__(self):
        return self.report()


def simultaneous(estimate: ArrayLike, se: ArrayLike, df: ArrayLike = np.inf,
                 target: ArrayLike = 0.0, *, level: float = 0.95, method: str = "holm") -> Family:
    """Family-wise test of ``estimate ≈ target`` with Student-t quantiles.

    Parameters
    ----------
    estimate : array_like
        One estimate per check.
    se : array_like
        Their standard errors (> 0).
    df : float or array_like, default inf
        Degrees of freedom of each s.e. (``r − 1`` for ``r`` replications,
        ``k − 1`` for ``k`` batches). Use ``inf`` only for an s.e. that is
        known exactly (e.g. from a binomial count with a large sample).
    target : float or array_like, default 0
        Values claimed (exact values, fluid limits, ...).
    level : float, default 0.95
        Family-wise confidence level: the probability that no true claim is
        rejected is at least ``level``.
    method : {"holm", "bonferroni"}
        Holm's step-down (uniformly more powerful) or Bonferroni. The
        reported ``half_width`` and ``detectable`` are Bonferroni's either way.

    Returns
    -------
    Family
        ``.passed`` is the verdict; ``.report()`` is the line to print.

    Raises
    ------
    ValueError
        On mismatched shapes, ``se <= 0`` or an unknown ``method``.

    Examples
    --------
    >>> f = simultaneous([0.1, -0.05], [0.04, 0.04], df=9)
    >>> f.reject.tolist()                         # Holm: neither differs from 0
    [False, False]
    """
    level = _check_level(level)
    if method not in ("holm", "bonferroni"):
        raise ValueError(f"method must be 'holm' or 'bonferroni', got {method!r}")
    est = np.atleast_1d(np.asarray(estimate, dtype=float)).ravel()
    m = len(est)
    if m == 0:
        raise ValueError("estimate must hold at least one check")
    try:
        se_a = np.broadcast_to(np.asarray(se, dtype=float), est.shape).astype(float).ravel()
        tg = np.broadcast_to(np.asarray(target, dtype=float), est.shape).astype(float).ravel()
        df_a = np.broadcast_to(_check_df(df), est.shape).astype(float).ravel()
    except ValueError as e:
        if "df must" in str(e):
            raise
        raise ValueError(f"se, df and target must broadcast to estimate's shape {est.shape}") from None
    if np.any(~(se_a > 0)):
        raise ValueError("se must be > 0 for every check")
    if not (np.all(np.isfinite(est)) and np.all(np.isfinite(tg))):
        raise ValueError("estimate and target must be finite")
    alpha = 1 - level
    t = (est - tg) / se_a
    dfn = np.where(np.isinf(df_a), 1.0, df_a)
    p = np.where(np.isinf(df_a), 2 * _st.norm.sf(np.abs(t)), 2 * _st.t.sf(np.abs(t), dfn))
    if method == "bonferroni":
        reject = p < alpha / m
    else:
        order = np.argsort(p)
        reject = np.zeros(m, bool)
        for rank, j in enumerate(order):
            if p[j] < alpha / (m - rank):
                reject[j] = True
            else:
                break
    crit = np.asarray(t_quantile(1 - alpha / (2 * m), df_a), dtype=float).ravel()
    det = np.array([detectable(s, d, m, level) for s, d in zip(se_a, df_a)], dtype=float)
    return Family(est, tg, se_a, df_a, t, p, reject, crit, crit * se_a, det, method, level)


def sigma_upper(sd: ArrayLike, r_pilot: int, *, level: float = 0.9) -> float | np.ndarray:
    """One-sided upper confidence limit of a standard deviation estimated from a pilot.

    A pilot of ``r₀`` replications estimates ``σ`` with ``r₀ − 1`` degrees of
    freedom and often under-states it (a 4-run pilot's ``s`` is below ``σ/2.27``
    one time in ten). Sizing a design from ``s`` itself then gives too
    few replications; sizing it from ``s·√((r₀−1)/χ²_{r₀−1, 1−level})`` gives
    enough with probability ``level``. Pilot runs are not reused as data.

    Parameters
    ----------
    sd : float or array_like
        The pilot's sample standard deviation(s), ``>= 0``.
    r_pilot : int
        Replications of the pilot, ``>= 2``.
    level : float, default 0.9
        Confidence that the returned value is at least ``σ``.

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> round(sigma_upper(1.0, 4), 2)
    2.27
    """
    level = _check_level(level)
    if isinstance(r_pilot, bool) or not (isinstance(r_pilot, numbers.Integral) and r_pilot >= 2):
        raise ValueError(f"r_pilot must be an integer >= 2, got {r_pilot!r}")
    s = np.asarray(sd, dtype=float)
    if np.any(~(s >= 0)):
        raise ValueError("sd must be >= 0")
    f = math.sqrt((r_pilot - 1) / float(_st.chi2.ppf(1 - level, r_pilot - 1)))
    return _scalar(s * f)
