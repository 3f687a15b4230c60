"""Intervals and families: Student-t replication intervals, Holm/Bonferroni families, detectable deviations, sample sizes, log-log fits."""
from __future__ import annotations

import functools
import math
import numbers
import numpy as np
from dataclasses import dataclass
from scipy import integrate, optimize, stats as _st

__all__ = ['replication_ci', 'ReplicationCI', 'simultaneous', 'Family', 'detectable', 'loglog_slope', 'LogLogFit', 't_quantile']


# ---------------------------------------------------------------- validation

def _check_level(level, name="level"):
    if isinstance(level, bool) or not isinstance(level, numbers.Real):
        raise TypeError(f"{name} must be a real number in (0, 1), got {level!r}")
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"{name} must be in (0, 1), got {level}")
    return level


def _check_dt(dt):
    if isinstance(dt, bool) or not isinstance(dt, numbers.Real):
        raise TypeError(f"dt must be a real number > 0, got {dt!r}")
    dt = float(dt)
    if not (math.isfinite(dt) and dt > 0):
        raise ValueError(f"dt must be finite and > 0, got {dt}")
    return dt


def _as_float_array(x, name, min_len=2):
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be array-like of real numbers") from None
    if a.ndim == 0 or a.ndim > 2:
        raise ValueError(f"{name} must be 1-D or 2-D, got shape {a.shape}")
    if a.shape[0] < min_len:
        raise ValueError(f"{name} needs at least {min_len} entries along axis 0, "
                         f"got {a.shape[0]}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite (no nan/inf)")
    return a


def _check_df(df):
    d = np.asarray(df, dtype=float)
    if np.any(~(d > 0)):
        raise ValueError(f"df must be > 0 (np.inf for a normal quantile), got {df!r}")
    return d


def t_quantile(p, df):
    """Student-t quantile ``t_{df}^{-1}(p)``; ``df = inf`` gives the normal one.

    Parameters
    ----------
    p : float or array_like
        Probability in (0, 1).
    df : float or array_like
        Degrees of freedom, > 0; ``numpy.inf`` for the normal quantile.
    """
    d = _check_df(df)
    return np.where(np.isinf(d), _st.norm.ppf(p), _st.t.ppf(p, np.where(np.isinf(d), 1, d)))


def _scalar(a):
    a = np.asarray(a)
    return float(a) if a.ndim == 0 else a


# ---------------------------------------------------------------- replications

class _Interval:
    """``lo``, ``hi`` and ``covers`` of ``mean ± half_width`` (shared by the results)."""

    @property
    def lo(self):
        """Lower end of the interval."""
        return self.mean - self.half_width

    @property
    def hi(self):
        """Upper end of the interval."""
        return self.mean + self.half_width

    def covers(self, value):
        """True where ``value`` lies in the interval."""
        return (self.lo <= value) & (value <= self.hi)


@dataclass(frozen=True)
class ReplicationCI(_Interval):
    """Mean of independent replications with its Student-t interval.

    Attributes
    ----------
    mean, se, half_width : float or ndarray
        Sample mean, its standard error ``s/√r`` and the half-width
        ``t_{r-1, (1+level)/2} · se``.
    df : int
        Degrees of freedom ``r − 1``.
    level : float
        Confidence level of the interval.
    """

    mean: object
    se: object
    half_width: object
    df: int
    level: float


def replication_ci(x, level=0.95):
    """Mean, standard error and Student-t half-width over replications.

    Parameters
    ----------
    x : array_like, shape (r,) or (r, m)
        One value per independent replication (axis 0); a 2-D array holds
        ``m`` quantities per replication.
    level : float, default 0.95
        Two-sided confidence level.

    Returns
    -------
    ReplicationCI
        ``mean``, ``se``, ``half_width`` (scalars or arrays of length ``m``),
        ``df = r − 1`` and ``level``.

    Raises
    ------
    ValueError
        If there are fewer than 2 replications, a value is not finite, or
        ``level`` is outside (0, 1).

    Examples
    --------
    >>> ci = replication_ci([1.0, 2.0, 3.0, 4.0])
    >>> round(ci.half_width, 3)          # t_3 = 3.182, s.e. = 0.645
    2.054
    """
    level = _check_level(level)
    a = _as_float_array(x, "x", min_len=2)
    r = a.shape[0]
    mean = a.mean(axis=0)
    se = a.std(axis=0, ddof=1) / math.sqrt(r)
    hw = float(t_quantile(0.5 + level / 2, r - 1)) * se
    return ReplicationCI(_scalar(mean), _scalar(se), _scalar(hw), r - 1, level)


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
        # (scipy's nct returns nan far in the tails)
        def f(nc):
            g = lambda v: (_st.norm.sf(c * math.sqrt(v / d) - nc)  # noqa: E731
                           + _st.norm.cdf(-c * math.sqrt(v / d) - nc)) * _st.chi2.pdf(v, d)
            # integrate over the bulk of χ²_d: over (0, ∞) quad misses the peak
            # once d is large (a hang for d ≳ 200)
            lo, hi = _st.chi2.ppf(1e-14, d), _st.chi2.isf(1e-14, d)
            return integrate.quad(g, lo, hi, limit=200, points=[d])[0] - power
    hi = c + 1.0
    while f(hi) < 0:                                  # bracket the root
        hi *= 1.5
    return optimize.brentq(f, 0.0, hi, xtol=1e-10)


def detectable(se, df=np.inf, m=1, level=0.95, power=0.8):
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


# ---------------------------------------------------------------- families

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


def simultaneous(estimate, se, df=np.inf, target=0.0, *, level=0.95, method="holm"):
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


# ---------------------------------------------------------------- rates

@dataclass(frozen=True)
class LogLogFit:
    """Weighted least-squares line ``log y = intercept + slope · log x``.

    Attributes
    ----------
    slope, slope_se, intercept, intercept_se : float
        Estimates and standard errors (from the given s.e. of ``y``; not
        rescaled by the fit's χ²).
    cov : ndarray, shape (2, 2)
        Covariance of (intercept, slope).
    chi2 : float
        Weighted residual sum of squares.
    dof : int
        ``len(x) − number of fitted parameters``.
    p_fit : float
        χ² goodness-of-fit p-value (small: the line does not describe the
        points within their errors).
    """

    slope: float
    slope_se: float
    intercept: float
    intercept_se: float
    cov: np.ndarray
    chi2: float
    dof: int
    p_fit: float

    def predict(self, x):
        """``exp(intercept) · x**slope``."""
        return np.exp(self.intercept) * np.asarray(x, dtype=float) ** self.slope


def loglog_slope(x, y, se, *, slope=None):
    """Weighted fit of ``log y`` against ``log x``, with standard errors.

    Parameters
    ----------
    x, y : array_like
        Positive abscissae and ordinates (at least 3 points, or 2 with
        ``slope`` fixed).
    se : array_like
        Standard errors of ``y``; the s.e. of ``log y`` is ``se / y`` (delta
        method). The points must be independent.
    slope : float, optional
        Fix the slope (e.g. ``-0.5``) and fit only the intercept.

    Returns
    -------
    LogLogFit

    Raises
    ------
    ValueError
        If the arrays differ in length, ``x``, ``y`` or ``se`` are not
        positive, or there are too few points.
    """
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    s = np.broadcast_to(np.asarray(se, dtype=float), y.shape).ravel()
    if not (len(x) == len(y) == len(s)):
        raise ValueError("x, y and se must have the same length")
    npar = 1 if slope is not None else 2
    if len(x) < npar + 1:
        raise ValueError(f"need at least {npar + 1} points, got {len(x)}")
    for name, v in (("x", x), ("y", y), ("se", s)):
        if np.any(~(v > 0)) or not np.all(np.isfinite(v)):
            raise ValueError(f"{name} must be finite and > 0")
    lx, ly, w = np.log(x), np.log(y), (y / s) ** 2
    if slope is not None:
        b = float(slope)
        a = float(np.sum(w * (ly - b * lx)) / w.sum())
        cov = np.array([[1.0 / w.sum(), 0.0], [0.0, 0.0]])
    else:
        X = np.column_stack([np.ones_like(lx), lx])
        cov = np.linalg.inv(X.T @ (w[:, None] * X))
        a, b = cov @ (X.T @ (w * ly))
    res = ly - a - b * lx
    chi2 = float(np.sum(w * res ** 2))
    dof = len(x) - npar
    return LogLogFit(float(b), float(math.sqrt(cov[1, 1])), float(a), float(math.sqrt(cov[0, 0])),
                     cov, chi2, dof, float(_st.chi2.sf(chi2, dof)))
