"""Intervals and families: Student-t replication intervals, Holm/Bonferroni families, detectable deviations, sample sizes, log-log fits."""
from __future__ import annotations

import functools
import math
import numbers
import numpy as np
from dataclasses import dataclass
from scipy import integrate, optimize, stats as _st

__all__ = ['replication_ci', 'ReplicationCI', 'simultaneous', 'Family', 'detectable', 'loglog_slope',
           'LogLogFit', 't_quantile', 'critical_value', 'replications_needed', 'equivalence',
           'Equivalence']


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


def _check_m(m):
    if isinstance(m, bool) or not (isinstance(m, numbers.Integral) and m >= 1):
        raise ValueError(f"m must be an integer >= 1, got {m!r}")
    return int(m)


def critical_value(m, df, level=0.95):
    """Bonferroni critical value ``t_{df, 1 − α/(2m)}`` of a family of ``m`` two-sided t tests.

    The value every check of :func:`simultaneous` compares ``|t|`` with
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


def replications_needed(se_pilot, delta, *, m=1, level=0.95, power=0.8, r_pilot=None,
                        r_max=10_000):
    """Independent replications so that a family of t tests detects ``delta``.

    Returns the smallest ``r >= 2`` for which :func:`detectable` with
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
        The number of replications ``r``; print :func:`critical_value` with
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


# ---------------------------------------------------------------- equivalence

@functools.lru_cache(maxsize=1024)
def _equiv_factor(d, m, level, power):
    """``M/se`` at which TOST (Bonferroni over ``m``) shows equivalence with ``power`` at θ = 0."""
    c = float(t_quantile(1 - (1 - level) / m, d))
    if math.isinf(d):
        return c + float(_st.norm.ppf(0.5 + power / 2))

    def f(x):
        # P(|Z| < x − c·S), S = sqrt(χ²_d / d), integrated over S
        g = lambda v: max(2 * _st.norm.cdf(x - c * math.sqrt(v / d)) - 1, 0.0) * _st.chi2.pdf(v, d)  # noqa: E731
        lo, hi = _st.chi2.ppf(1e-14, d), _st.chi2.isf(1e-14, d)
        return integrate.quad(g, lo, hi, limit=200, points=[d])[0] - power
    hi = c + 3.0
    while f(hi) < 0:
        hi *= 1.5
    return optimize.brentq(f, c, hi, xtol=1e-10)


@dataclass(frozen=True, repr=False)
class Equivalence:
    """Result of :func:`equivalence`: is ``|θ| < margin`` shown, check by check?

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
        """One line: checks, largest |bound| against the margin, the verdict."""
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


def equivalence(estimate, se, df, margin, *, level=0.95, power=0.8, method="bonferroni"):
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
