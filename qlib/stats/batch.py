"""Batch means: integrated autocorrelation times, batch lengths from them, and the lag-1 check of the batch means."""
from __future__ import annotations

import math
import numbers
import numpy as np
from dataclasses import dataclass
from scipy import stats as _st

from qlib.stats.intervals import _Interval, _as_float_array, _check_dt, _check_level, t_quantile

__all__ = ['iat', 'batch_means', 'BatchMeans', 'lag1_threshold']


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
