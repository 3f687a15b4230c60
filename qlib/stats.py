"""Honest error bars: the statistics every chapter's checks use.

One home for the conventions of the book:

* **Independent replications** give a Student-t interval with ``r − 1``
  degrees of freedom (:func:`replication_ci`). A normal quantile over a
  handful of replications is wrong: ``t_3`` at 99.9 % is 12.9, not 3.3.
* **Time averages of one path** get their standard error from batch means
  whose batch length is many times the path's *measured* integrated
  autocorrelation time (:func:`iat`, :func:`batch_means`). The lag-1
  correlation of the batch means is returned and tested.
* **Families of checks** are tested together at a family-wise level
  (Bonferroni or Holm) with t quantiles (:func:`simultaneous`).
* Every check reports the **smallest deviation it could detect** with 80 %
  power (:func:`detectable`), so a reader can see that it could have failed.
* Burn-in is **tested, not guessed** (:func:`burn_in_check`).
* Rates are fitted on log-log axes with weights and a standard error
  (:func:`loglog_slope`).

Conventions
-----------
The integrated autocorrelation time follows Sokal: for a stationary process
with autocorrelation ``ρ(t)``, ``τ_int = ∫_0^∞ ρ(t) dt`` (in discrete time
with step ``dt``: ``dt·(1/2 + Σ_{k≥1} ρ_k)``), so that the variance of a time
average over a window of length ``T ≫ τ_int`` is ``2 τ_int σ² / T``. For the
queue length of an M/M/1 queue at load ``ρ`` it is ``(1 + ρ)/(1 − ρ)²``
(190 at ``ρ = 0.9``); for an AR(1) process with coefficient ``φ`` sampled at
unit steps it is ``(1 + φ) / (2 (1 − φ))``.
"""
from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass

import numpy as np
from scipy import integrate, optimize
from scipy import stats as _st

__all__ = ["replication_ci", "ReplicationCI", "iat", "batch_means", "BatchMeans",
           "simultaneous", "Family", "detectable", "loglog_slope", "LogLogFit",
           "burn_in_check", "BurnIn", "t_quantile", "lag1_threshold"]


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


# ---------------------------------------------------------------- autocorrelation

def _autocorr(x):
    """Autocorrelation of a 1-D series at all lags (FFT, biased estimator)."""
    n = len(x)
    y = x - x.mean()
    f = np.fft.rfft(y, 2 * n)
    acov = np.fft.irfft(f * np.conj(f))[:n] / n
    if acov[0] <= 0:
        return None
    return acov / acov[0]


def _geyer_window(rho):
    """Number of leading lags kept by Geyer's initial positive sequence."""
    m = len(rho) // 2
    pairs = rho[0:2 * m:2] + rho[1:2 * m:2]          # Γ_j = ρ_2j + ρ_2j+1
    neg = np.nonzero(pairs <= 0)[0]
    return pairs, (neg[0] if len(neg) else len(pairs))


def _iat_geyer(rho):
    """Geyer's initial monotone sequence estimate of ``1/2 + Σ ρ_k``."""
    pairs, k = _geyer_window(rho)
    g = np.minimum.accumulate(pairs[:k])             # initial monotone sequence
    return -0.5 + g.sum()                            # ρ_0 = 1 counted once in Γ_0


def _corr_length(rho, tau):
    """``Σ k ρ_k / (1/2 + Σ ρ_k)`` over Geyer's window (in steps).

    For ``ρ_k = φ^k`` it is about ``τ_int``; for processes with a long
    correlation tail (an M/M/1 queue near saturation) it is several times
    ``τ_int``, and it is what sets the bias of batch means, which is about
    ``L / b`` for batches of length ``b``.
    """
    _, k = _geyer_window(rho)
    w = 2 * k
    lags = np.arange(w)
    return float(np.sum(lags * np.clip(rho[:w], 0, None)) / max(tau, 0.5))


def _iat_sokal(rho, c=6.0):
    tau = 0.5
    for w in range(1, len(rho)):
        tau += rho[w]
        if w >= c * tau:
            return tau
    return tau


def _iat_and_length(cols, dt):
    taus, lens = [], []
    for j in range(cols.shape[1]):
        rho = _autocorr(cols[:, j])
        if rho is None:
            taus.append(0.5 * dt)
            lens.append(0.5 * dt)
            continue
        t = max(_iat_geyer(rho), 0.5)
        taus.append(dt * t)
        lens.append(dt * max(_corr_length(rho, t), 0.5))
    return np.array(taus), np.array(lens)


def iat(path, dt=1.0, method="geyer"):
    """Integrated autocorrelation time of a stationary path.

    Parameters
    ----------
    path : array_like, shape (N,) or (N, m)
        Equally spaced samples (axis 0 is time); for 2-D input each column is
        a separate series.
    dt : float, default 1.0
        Time between samples; the result is in the same time unit.
    method : {"geyer", "sokal"}
        Geyer's initial monotone sequence estimator (default) or Sokal's
        self-consistent window with ``c = 6``.

    Returns
    -------
    float or ndarray
        ``τ_int = dt · (1/2 + Σ_{k≥1} ρ_k)`` (the module's convention: the
        variance of a time average over ``T`` is ``2 τ_int σ² / T``). A
        constant column has ``τ_int = dt/2``.

    Raises
    ------
    ValueError
        If ``path`` has fewer than 4 samples or ``method`` is unknown.
    """
    dt = _check_dt(dt)
    if method not in ("geyer", "sokal"):
        raise ValueError(f"method must be 'geyer' or 'sokal', got {method!r}")
    a = _as_float_array(path, "path", min_len=4)
    cols = a[:, None] if a.ndim == 1 else a
    out = []
    for j in range(cols.shape[1]):
        rho = _autocorr(cols[:, j])
        if rho is None:
            out.append(0.5 * dt)
            continue
        tau = _iat_geyer(rho) if method == "geyer" else _iat_sokal(rho)
        out.append(dt * max(tau, 0.5))
    return out[0] if a.ndim == 1 else np.array(out)


# ---------------------------------------------------------------- batch means

@dataclass(frozen=True)
class BatchMeans(_Interval):
    """A time average with its batch-means standard error.

    Attributes
    ----------
    mean, se, half_width : float or ndarray
        Time average, its standard error and the Student-t half-width with
        ``df = n_batches − 1``.
    df : int
        ``n_batches − 1``.
    level : float
        Confidence level of ``half_width``.
    n_batches : int
        Number of batches used.
    batch_length : float
        Length of one batch, in time units.
    tau : float or ndarray
        Measured integrated autocorrelation time (time units) per series.
    lag1 : float or ndarray
        Lag-1 correlation of the batch means per series.
    length : float
        The correlation length ``L`` that set the batch length (time units).
    """

    mean: object
    se: object
    half_width: object
    df: int
    level: float
    n_batches: int
    batch_length: float
    tau: object
    lag1: object
    length: float


def _lag1(b):
    """Lag-1 correlation of the batch means (columns)."""
    y = b - b.mean(axis=0)
    den = (y * y).sum(axis=0)
    num = (y[1:] * y[:-1]).sum(axis=0)
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def lag1_threshold(k, alpha=0.01):
    """One-sided critical value of the lag-1 correlation of ``k`` independent means.

    Under independence the lag-1 sample correlation is approximately normal
    with mean ``−1/k`` and variance ``(k − 2)²/(k²(k − 1))`` (von Neumann).
    """
    mean = -1.0 / k
    sd = (k - 2) / (k * math.sqrt(k - 1))
    return mean + float(_st.norm.ppf(1 - alpha)) * sd


def batch_means(path, dt=1.0, *, level=0.95, batch_factor=20.0, min_batches=10,
                max_batches=20, tau=None, lag1_alpha=0.01, check=True):
    """Mean and standard error of a time average by batch means.

    The batch length is ``b ≥ batch_factor · L`` where ``L = max(τ_int,
    Σ t ρ(t) / Σ ρ(t))`` is the correlation length measured on the path
    itself (Geyer's window; the largest over the columns of a 2-D path), and
    the number of batches is ``k = min(max_batches, ⌊T / (batch_factor ·
    L)⌋)``. The variance of batch means of length ``b`` is biased low by
    about ``L / b``: for an exponential correlation ``L = τ_int``, but a
    queue near saturation has a long correlation tail (an M/M/1 queue at
    ``ρ = 0.9`` has ``τ_int = 190`` and ``L`` about five times that), and
    batches of a few ``τ_int`` then give intervals that cover 90 % instead of
    95 %. The interval uses Student-t with ``k − 1`` degrees of freedom.

    Parameters
    ----------
    path : array_like, shape (N,) or (N, m)
        Equally spaced samples of a stationary process (burn-in already
        removed); each column of a 2-D path is a separate quantity, all
        batched alike.
    dt : float, default 1.0
        Time between samples.
    level : float, default 0.95
        Two-sided level of ``half_width``.
    batch_factor : float, default 20
        Minimum batch length in units of the correlation length ``L``.
        Measured coverage of the 95 % interval (``tests/test_stats.py``):
        AR(1) with ``φ = 0.9`` and ``0.99``, and the M/M/1 queue length at
        ``ρ = 0.9`` over 240 000 time units (about 1300 ``τ_int``) all lie in
        [0.93, 0.97]; the M/M/1 queue over 60 000 time units covers about
        0.92, because Geyer's window underestimates its long correlation
        tail. For short runs of slowly mixing processes prefer independent
        replications (:func:`replication_ci`).
    min_batches : int, default 10
        Fewest batches accepted.
    max_batches : int, default 20
        Most batches used (longer batches when the path allows: less bias).
    tau : float, optional
        Use this correlation length (time units) instead of measuring it,
        e.g. one measured on a longer pilot run.
    lag1_alpha : float, default 0.01
        Level of the one-sided test that the batch means are uncorrelated.
    check : bool, default True
        Raise when there are too few batches or the batch means are still
        correlated; with ``check=False`` the result is returned anyway (the
        caller inspects ``n_batches`` and ``lag1``).

    Returns
    -------
    BatchMeans

    Raises
    ------
    ValueError
        If the path is shorter than ``min_batches · batch_factor · τ_int``
        (the message says how long it must be), or if the lag-1 correlation
        of the batch means exceeds the ``lag1_alpha`` critical value.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> bm = batch_means(rng.normal(size=20_000))
    >>> bm.n_batches, round(bm.se * np.sqrt(20_000), 1)
    (20, 1.0)
    """
    dt = _check_dt(dt)
    level = _check_level(level)
    a = _as_float_array(path, "path", min_len=4)
    if not (isinstance(min_batches, numbers.Integral) and min_batches >= 2):
        raise ValueError(f"min_batches must be an integer >= 2, got {min_batches!r}")
    if not (isinstance(max_batches, numbers.Integral) and max_batches >= min_batches):
        raise ValueError(f"max_batches must be an integer >= min_batches, got {max_batches!r}")
    if not batch_factor > 0:
        raise ValueError(f"batch_factor must be > 0, got {batch_factor}")
    cols = a[:, None] if a.ndim == 1 else a
    n = cols.shape[0]
    if tau is None:
        taus, lens = _iat_and_length(cols, dt)
    else:
        taus = np.full(cols.shape[1], _check_dt(tau))
        lens = taus
    t_max = float(max(taus.max(), lens.max()))
    per = max(1, int(math.ceil(batch_factor * t_max / dt)))     # samples per batch
    k = min(max_batches, n // per)
    if k < min_batches:
        need = min_batches * batch_factor * t_max
        msg = (f"path too short for {min_batches} batches of {batch_factor:g} "
               f"correlation lengths (L = {t_max:.4g}): it spans {n * dt:.4g} "
               f"time units, needs at least {need:.4g}")
        if check:
            raise ValueError(msg)
        k = max(2, min(min_batches, n))
    per = n // k
    b = cols[n - k * per:].reshape(k, per, -1).mean(axis=1)     # drop the oldest rest
    mean = b.mean(axis=0)
    se = b.std(axis=0, ddof=1) / math.sqrt(k)
    hw = float(t_quantile(0.5 + level / 2, k - 1)) * se
    r1 = _lag1(b)
    if check and np.any(r1 > lag1_threshold(k, lag1_alpha)):
        raise ValueError(f"batch means are still correlated: lag-1 correlation "
                         f"{float(r1.max()):.3f} > {lag1_threshold(k, lag1_alpha):.3f} "
                         f"(the {lag1_alpha:g} critical value for {k} batches); "
                         f"run longer or pass a larger tau")
    sq = (lambda v: v[0]) if a.ndim == 1 else (lambda v: v)
    return BatchMeans(sq(mean), sq(se), sq(hw), k - 1, level, k, per * dt,
                      sq(taus), sq(r1), t_max)


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


# ---------------------------------------------------------------- burn-in

@dataclass(frozen=True)
class BurnIn:
    """First half against second half of the measurement window.

    Attributes
    ----------
    diff, se, df : float or ndarray
        Mean of the first half minus mean of the second half, its s.e. and
        degrees of freedom.
    t, p : float or ndarray
        Test statistic and two-sided p-value.
    crit : float
        Critical value at the family level (Bonferroni over the columns).
    final_half_width : float or ndarray
        Half-width of the interval of the whole window (the one the chapter
        reports); the leftover bias is judged against it.
    detectable : float or ndarray
        Smallest first-vs-second-half difference detected with 80 % power.
    passed : bool
        No column's halves differ significantly.
    """

    diff: object
    se: object
    df: object
    t: object
    p: object
    crit: float
    final_half_width: object
    detectable: object
    passed: bool

    def report(self, name="burn-in"):
        """One line to print next to the check."""
        d = np.atleast_1d(self.diff)
        return (f"{name}: first - second half = {float(np.max(np.abs(d))):.3g} (largest), "
                f"worst |t| = {float(np.max(np.abs(np.atleast_1d(self.t)))):.2f} vs "
                f"{self.crit:.2f}; detectable {float(np.max(np.atleast_1d(self.detectable))):.3g}, "
                f"final half-width {float(np.max(np.atleast_1d(self.final_half_width))):.3g}; "
                f"{'passed' if self.passed else 'FAILED'}")

    def __str__(self):
        return self.report()


def burn_in_check(path, dt=1.0, *, replications=False, level=0.95, **batch_kw):
    """Test that the first and second halves of the measurement window agree.

    A burn-in that is too short leaves a trend in the window: the first half
    is further from equilibrium than the second. The check fails when the
    difference of the two half-window means is significant at ``1 − level``
    (Bonferroni over columns).

    Parameters
    ----------
    path : array_like
        Either one path, shape (N,) or (N, m) (time on axis 0; each half gets
        batch-means errors, :func:`batch_means`), or, with
        ``replications=True``, independent replications of shape (r, N) or
        (r, N, m) (the paired half difference is tested with ``r − 1``
        degrees of freedom, the recommended form).
    dt : float, default 1.0
        Time between samples.
    replications : bool, default False
        Whether axis 0 indexes independent replications.
    level : float, default 0.95
        Family-wise level of the test.
    **batch_kw
        Passed to :func:`batch_means` for a single path.

    Returns
    -------
    BurnIn
    """
    level = _check_level(level)
    dt = _check_dt(dt)
    if replications:
        a = np.asarray(path, dtype=float)
        if a.ndim not in (2, 3) or a.shape[0] < 2 or a.shape[1] < 2:
            raise ValueError("with replications=True, path must have shape (r >= 2, N >= 2[, m])")
        if not np.all(np.isfinite(a)):
            raise ValueError("path must be finite (no nan/inf)")
        h = a.shape[1] // 2
        d = a[:, :h].mean(axis=1) - a[:, a.shape[1] - h:].mean(axis=1)
        ci = replication_ci(d, level)
        full = replication_ci(a.mean(axis=1), level)
        diff, se, df, fhw = ci.mean, ci.se, ci.df, full.half_width
    else:
        a = _as_float_array(path, "path", min_len=8)
        h = a.shape[0] // 2
        tau = batch_kw.pop("tau", None)
        if tau is None:
            # measured on the second half: a trend in the first would inflate it
            taus, lens = _iat_and_length(a[a.shape[0] - h:].reshape(h, -1), dt)
            tau = float(max(taus.max(), lens.max()))
        kw = dict(level=level, tau=tau, check=False, **batch_kw)
        b1 = batch_means(a[:h], dt, **kw)
        b2 = batch_means(a[a.shape[0] - h:], dt, **kw)
        full = batch_means(a, dt, **kw)
        diff = b1.mean - b2.mean
        se = np.sqrt(b1.se ** 2 + b2.se ** 2)
        df = min(b1.df, b2.df)
        fhw = full.half_width
    se_a = np.maximum(np.atleast_1d(np.asarray(se, dtype=float)), 1e-300)
    m = se_a.size
    t = np.atleast_1d(diff) / se_a
    p = 2 * _st.t.sf(np.abs(t), df)
    crit = float(t_quantile(1 - (1 - level) / (2 * m), df))
    det = detectable(se_a, df, m, level)
    passed = bool(np.all(np.abs(t) <= crit))
    return BurnIn(diff, se, df, _scalar(t) if m > 1 else float(t[0]),
                  _scalar(p) if m > 1 else float(p[0]), crit, fhw,
                  det if m > 1 else float(np.atleast_1d(det)[0]), passed)
