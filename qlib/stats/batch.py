"""Batch means: integrated autocorrelation times, batch lengths from them, and the lag-1 check of the batch means."""
from __future__ import annotations

import math
import numbers
import sys
import warnings
import numpy as np
from dataclasses import dataclass
from qlib._lazy import scipy_stats as _st

from qlib.stats.intervals import _Interval, _as_float_array, _check_dt, _check_level, t_quantile
from typing import TYPE_CHECKING
from qlib.stats._results import fields_eq
if TYPE_CHECKING:   # names for the annotations only
    from numpy.typing import ArrayLike

__all__ = ['iat', 'batch_means', 'BatchMeans', 'lag1_threshold', 'slice_batches', 'SliceBatches',
           'required_batch_length', 'reliable_window']


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


def iat(path: ArrayLike, dt: float = 1.0, method: str = "geyer") -> float | np.ndarray:
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

@fields_eq
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
    lag1_critical : float
        Critical value of the lag-1 test at family-wise ``lag1_alpha`` over
        the non-constant columns (:func:`~qlib.stats.batch.lag1_threshold`).
    reliable : bool
        The path held ``min_batches`` batches of ``batch_factor`` correlation
        lengths and no column's lag-1 correlation exceeds ``lag1_critical``
        (otherwise a ``RuntimeWarning`` said so, with ``check=True``).
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
    lag1_critical: float = float("nan")
    reliable: bool = True


def _lag1(b):
    """Lag-1 correlation of the batch means (columns)."""
    y = b - b.mean(axis=0)
    den = (y * y).sum(axis=0)
    num = (y[1:] * y[:-1]).sum(axis=0)
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def lag1_threshold(k: int, alpha: float = 0.01) -> float:
    """One-sided critical value of the lag-1 correlation of ``k`` independent means.

    Under independence the lag-1 sample correlation is approximately normal
    with mean ``−1/k`` and variance ``(k − 2)²/(k²(k − 1))`` (von Neumann).
    For a family of ``m`` series tested together pass ``alpha / m``
    (Bonferroni), as :func:`~qlib.stats.batch.batch_means` and :func:`~qlib.stats.batch.slice_batches` do.

    Parameters
    ----------
    k : int
        Number of batch means, ``>= 3``.
    alpha : float, default 0.01
        Level of the one-sided test.

    Returns
    -------
    float
    """
    mean = -1.0 / k
    sd = (k - 2) / (k * math.sqrt(k - 1))
    return mean + float(t_quantile(1 - alpha, math.inf)) * sd   # the normal quantile, cached


def batch_means(path: ArrayLike, dt: float = 1.0, *, level: float = 0.95,
                batch_factor: float = 20.0, min_batches: int = 10,
                max_batches: int = 20, tau: float | None = None, lag1_alpha: float = 0.01,
                check: bool = True) -> BatchMeans:
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
        replications (:func:`~qlib.stats.intervals.replication_ci`).
    min_batches : int, default 10
        Fewest batches accepted.
    max_batches : int, default 20
        Most batches used (longer batches when the path allows: less bias).
    tau : float, optional
        Use this correlation length (time units) instead of measuring it,
        e.g. one measured on a longer pilot run.
    lag1_alpha : float, default 0.01
        Family-wise level of the one-sided tests that the batch means are
        uncorrelated: Bonferroni over the non-constant columns, so that a
        correctly sized run of ``m`` series warns with probability about
        ``lag1_alpha``, not ``m · lag1_alpha``.
    check : bool, default True
        Raise when the path is too short for ``min_batches`` batches, and
        warn (``RuntimeWarning``, never an exception: on a correctly sized
        run it fires by chance with probability ``lag1_alpha``) when the
        batch means are still correlated. With ``check=False`` the result is
        returned silently (the caller inspects ``reliable`` and ``lag1``).

    Returns
    -------
    BatchMeans

    Raises
    ------
    ValueError
        With ``check=True``, if the path is shorter than ``min_batches ·
        batch_factor · L`` (the message says how long it must be).

    Warns
    -----
    RuntimeWarning
        With ``check=True``, if some column's lag-1 correlation of the batch
        means exceeds the family-wise critical value ``lag1_critical``.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> bm = batch_means(rng.normal(size=20_000))
    >>> bm.n_batches, float(round(bm.se * np.sqrt(20_000), 1))
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
    thr, lag_ok = _lag1_test(r1, k, lag1_alpha, np.ptp(cols, axis=0) > 0)
    if check and not lag_ok:
        _warn_unreliable(float(np.max(np.asarray(r1)[np.ptp(cols, axis=0) > 0])), thr, k, lag1_alpha,
                         "", "Run longer or pass a larger tau.", stacklevel=2)
    sq = (lambda v: v[0]) if a.ndim == 1 else (lambda v: v)
    return BatchMeans(sq(mean), sq(se), sq(hw), k - 1, level, k, per * dt,
                      sq(taus), sq(r1), t_max, thr, bool(lag_ok and k >= min_batches
                                                         and per * dt >= batch_factor * t_max * (1 - 1e-9)))


def _warn_unreliable(lag1, thr, k, alpha, reason, advice, stacklevel):
    """The one warning text for unreliable batch-means errors (``batch_means`` and ``slice_batches``).

    ``reason`` (may be empty) says why besides the lag-1 test; the lag-1
    part is the same sentence whichever function warns.
    """
    corr = " (the batch means are still correlated)" if lag1 > thr else ""
    warnings.warn(f"standard errors unreliable: {reason}largest lag-1 correlation of the {k} batch "
                  f"means {lag1:.3f} {'>' if lag1 > thr else '<='} {thr:.3f}, the family-wise "
                  f"{alpha:g} critical value{corr}. {advice}", RuntimeWarning,
                  stacklevel=max(stacklevel + 1, _caller_level()))


def _caller_level() -> int:
    """The ``stacklevel`` (for a ``warnings.warn`` in the caller of this function) of the
    first frame outside the ``qlib`` package: the warning names the user's line, however
    deep inside qlib the call was made."""
    f, level = sys._getframe(1), 1
    while f is not None and f.f_globals.get("__name__", "").partition(".")[0] == "qlib":
        f, level = f.f_back, level + 1
    return level


def _lag1_test(r1, k, alpha, tested):
    """The one lag-1 rule: Bonferroni over the tested (non-constant) columns.

    Returns the critical value and whether every tested column passes.
    """
    tested = np.asarray(tested, bool)
    thr = lag1_threshold(k, alpha / max(1, int(tested.sum())))
    return thr, bool(np.all(np.asarray(r1)[tested] <= thr))


# ---------------------------------------------------------------- slices of a run

@fields_eq
@dataclass(frozen=True)
class SliceBatches:
    """Batches of consecutive slices of a simulated window, with their diagnostics.

    Attributes
    ----------
    starts : ndarray of int
        First slice of each batch; every batch holds ``per`` slices and the
        oldest ``n_slices − k · per`` slices are left out (as in
        :func:`~qlib.stats.batch.batch_means`).
    per : int
        Slices per batch.
    n_batches : int
        ``k``.
    batch_length : float
        Time units per batch.
    corr_length : float
        Correlation length ``L`` measured on the series (``nan`` with fixed
        ``batches``).
    lag1 : float
        Largest lag-1 correlation of the batch means over the tested series.
    lag1_critical : float
        Its family-wise critical value (``nan`` with fixed ``batches``).
    reliable : bool
        The window holds at least 10 batches of ``required_batch_length``
        (always True with fixed ``batches``: nothing is checked). The lag-1
        test is reported (``lag1``, ``lag1_critical``) but is not part of
        the flag: it passes when a run's sample correlation happens to be low,
        which is when its variance estimate is low too, so a flag that used it
        would select the runs whose intervals are too narrow.
    tau : float
        Largest integrated autocorrelation time of the tested series (time
        units; ``nan`` with fixed ``batches``).
    required_batch_length : float
        ``max(20 L, 80 τ)``: the batch length the flag asks for (``nan`` with
        fixed ``batches``).
    """

    starts: np.ndarray
    per: int
    n_batches: int
    batch_length: float
    corr_length: float
    lag1: float
    lag1_critical: float
    reliable: bool
    tau: float = float("nan")
    required_batch_length: float = float("nan")

    def sums(self, x):
        """Sums of ``x`` (per slice, axis 0) over each batch."""
        return np.add.reduceat(np.asarray(x), self.starts, axis=0)

    def means(self, x):
        """Means of ``x`` (per-slice averages, axis 0) over each batch."""
        return self.sums(x) / self.per


def slice_batches(series: ArrayLike, window: float, *, batches: int | None = None,
                  lag1_alpha: float = 0.01, warn: bool = True, stacklevel: int = 2,
                  instead: str = "use independent replications (replicate)") -> SliceBatches:
    """Group the slices of a run into batches: one rule for every simulator.

    A simulator cuts its measurement window into ``n`` equal slices and
    records per-slice averages; the batches are groups of consecutive
    slices. The rules, shared by :func:`qlib.simulate <qlib.sim.run.simulate>`, its variants and
    :func:`qlib.halfin_whitt.simulate_jsq <qlib.halfin_whitt.simulate.simulate_jsq>`:

    * **series**: the caller passes the slice averages of the quantities
      whose errors it reports (and linearised residuals of ratios);
      constant columns are dropped, the rest are measured and tested;
    * **batch length**: every batch at least ``B = max(20 L, 80 τ)``, with
      ``τ`` the largest integrated autocorrelation time and ``L`` the largest
      correlation length of the series (as in
      :func:`~qlib.stats.batch.batch_means`); ``k = ⌊window / B⌋`` batches,
      clipped to 10..20, the oldest rest left out;
    * **flag** (``reliable``): the window holds 10 batches of ``B``, i.e.
      ``window >= 10 B``. Both ``τ`` and ``L`` are measured on the run
      itself and are biased low on short windows (on ``K_20`` at
      ``λ = 0.9`` the median ``τ`` measured over 2 500 time units is about
      two thirds of the one measured over 30 000, and its 5–95 % range spans
      a factor 3), and a run whose measured correlation happens to be short
      is one whose batch variance happens to be small too. The factor 80 on
      ``τ`` (four times the 20 that the bias of batch means alone asks for)
      keeps the flag off on windows too short for batch means, but it does
      not make the flagged runs' intervals nominal: see
      :func:`~qlib.stats.batch.reliable_window` for the coverage it achieves;
    * **lag-1 test**: the batch means of every tested series, one-sided at
      family-wise ``lag1_alpha`` (Bonferroni over the series,
      :func:`~qlib.stats.batch.lag1_threshold`), reported in the warning
      and in ``lag1`` but not part of the flag (it selects against
      coverage);
    * **warning**: one ``RuntimeWarning`` starting "standard errors
      unreliable" when the flag is off; never an exception.

    Parameters
    ----------
    series : array_like, shape (n, m)
        Per-slice averages (axis 0: time), ``n >= 2`` (``n >= 4`` unless
        ``batches`` is given).
    window : float
        Length of the measurement window (time units), ``> 0``.
    batches : int, optional
        Force ``batches`` equal batches (no measurement, no check).
    lag1_alpha : float, default 0.01
        Family-wise level of the lag-1 test.
    warn : bool, default True
        Issue the warning.
    stacklevel : int, default 2
        As for ``warnings.warn``, counted from the function that calls
        ``slice_batches`` (2: its caller; point it at the user's call).
    instead : str, default "use independent replications (replicate)"
        The warning's advice besides running longer: what the calling
        simulator offers instead of one long run.

    Returns
    -------
    SliceBatches
    """
    a = _as_float_array(series, "series", min_len=2)
    cols = a[:, None] if a.ndim == 1 else a
    nf = cols.shape[0]
    window = _check_dt(window)
    dt = window / nf
    tested = np.ptp(cols, axis=0) > 0
    if not tested.any():
        tested[0] = True
    if batches is None:
        k, L, tau, need = _slice_rule(cols[:, tested], window)
    else:
        if isinstance(batches, bool) or not (isinstance(batches, numbers.Integral) and 2 <= batches <= nf):
            raise ValueError(f"batches must be None or an integer in [2, {nf}], got {batches!r}")
        k, L, tau, need = int(batches), float("nan"), float("nan"), float("nan")
    per = nf // k
    starts = np.arange(k) * per + (nf - k * per)
    out = SliceBatches(starts, per, k, per * dt, L, float("nan"), float("nan"), True)
    r1 = _lag1(out.means(cols))
    lag1 = float(np.max(r1[tested]))
    if batches is not None:
        return SliceBatches(starts, per, k, per * dt, L, lag1, float("nan"), True)
    thr, _ = _lag1_test(r1, k, lag1_alpha, tested)
    reliable = reliable_window(window, tau, L) and per * dt >= need * (1 - 1e-9) and k >= 10
    if warn and not reliable:
        _warn_unreliable(lag1, thr, k, lag1_alpha,
                         f"the window of {window:.4g} time units holds {window / need:.3g} batches of "
                         f"max(20 L, 80 τ) = {need:.4g} (L = {L:.4g}, τ = {tau:.4g}), 10 such batches "
                         f"need about {10 * need:.4g}; ",
                         f"Run longer (t_end − burn_in >= {10 * need:.4g}) or {instead}.",
                         stacklevel=stacklevel + 1)
    return SliceBatches(starts, per, k, per * dt, L, lag1, thr, reliable, tau, need)


#: Batch length asked for, in correlation lengths ``L`` and in integrated autocorrelation times ``τ``.
LENGTH_FACTOR, TAU_FACTOR = 20.0, 80.0


def required_batch_length(tau: float, length: float) -> float:
    """The batch length :func:`~qlib.stats.batch.slice_batches` asks for: ``max(20 L, 80 τ)``.

    Parameters
    ----------
    tau : float
        Integrated autocorrelation time measured on the run (time units), ``> 0``.
    length : float
        Correlation length ``L`` measured on the run (time units), ``> 0``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``tau`` or ``length`` is not a positive finite number.

    Examples
    --------
    >>> required_batch_length(10.0, 12.0)
    800.0
    """
    for name, v in (("tau", tau), ("length", length)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not (0 < v < math.inf):
            raise ValueError(f"{name} must be a positive finite number, got {v!r}")
    return float(max(LENGTH_FACTOR * length, TAU_FACTOR * tau))


def reliable_window(window: float, tau: float, length: float, *, min_batches: int = 10) -> bool:
    """The ``se_reliable`` rule: does the window hold ``min_batches`` batches of ``max(20 L, 80 τ)``?

    The rule looks only at the window against the correlation the run
    measured, never at a test of the batch means (the lag-1 test passes
    when the run's sample correlation happens to be low, which is when its
    variance estimate is low too; a flag that used it covered 0.85 among the
    runs it trusted on ``K_20`` at ``λ = 0.9`` over 2 500 time units). The
    factor 80 on ``τ`` is meant to cover the downward bias and spread of a
    ``τ`` measured on the run itself (see
    :func:`~qlib.stats.batch.slice_batches`); it was chosen on ``K_20`` at
    ``λ = 0.9``.

    What the flag achieves (``benchmarks/bench_se_reliable.py``: runs
    started in the stationary law, windows from about 250 to 2000 integrated
    autocorrelation times, JSQ on ``K_20`` at ``λ ∈ {0.9, 0.95}`` and the
    M/M/1 queue at ``λ ∈ {0.9, 0.95, 0.99}``, coverage of the 95 % interval
    for the mean response time; 1000 runs per system, 100 at
    ``λ = 0.99``). At the first window where the flag trusts half the runs
    or more, the flagged runs covered 0.90 to 0.93 and the others 0.97 to
    1.00: the flag still selects runs whose intervals are too narrow. At
    the longest windows (1500 to 2000 ``τ``, 86 to 95 % of the runs
    flagged) the flagged runs covered 0.91 (M/M/1, ``λ = 0.99``) to 0.95
    (``K_20``, ``λ = 0.9``). Of the 19 windows with at least 20 flagged
    runs, one (``K_20``, ``λ = 0.9``, the longest window) was shown inside
    [0.93, 0.97] by equivalence (the 90 % Clopper–Pearson interval inside
    the band) and seven were shown below it, among them every window up to
    1000 ``τ`` of the M/M/1 queue at ``λ = 0.9``. The flag rules out
    windows too short for batch means; it does not make a flagged run's
    interval a 95 % interval. Read a flagged run's interval as one that
    covers about 90 % near the threshold and 92 to 95 % at windows of
    1500 ``τ`` or more, and use independent replications
    (:func:`qlib.replicate <qlib.sim.replications.replicate>`) where the
    error matters.

    Parameters
    ----------
    window : float
        Length of the measurement window (time units), ``> 0``.
    tau, length : float
        Integrated autocorrelation time and correlation length measured on
        the run (time units), ``> 0``.
    min_batches : int, default 10
        Batches the window must hold.

    Returns
    -------
    bool

    Raises
    ------
    ValueError
        If an argument is not positive (``min_batches``: an integer ``>= 2``).

    Examples
    --------
    >>> reliable_window(8000.0, 10.0, 12.0), reliable_window(7000.0, 10.0, 12.0)
    (True, False)
    """
    window = _check_dt(window)
    if isinstance(min_batches, bool) or not (isinstance(min_batches, numbers.Integral) and min_batches >= 2):
        raise ValueError(f"min_batches must be an integer >= 2, got {min_batches!r}")
    return bool(window >= min_batches * required_batch_length(tau, length) * (1 - 1e-9))


def _slice_rule(cols, window):
    """Batches for :func:`slice_batches`: ``(k, L, τ, B)`` with ``B = max(20 L, 80 τ)``
    and ``k = ⌊window / B⌋`` clipped to 10..20 (and to the number of slices)."""
    nf = cols.shape[0]
    dt = window / nf
    taus, lens = _iat_and_length(cols, dt)
    tau, L = float(taus.max()), float(max(taus.max(), lens.max()))
    need = required_batch_length(tau, L)
    k = int(min(20, max(10, math.floor(window / need * (1 + 1e-9)))))
    return min(k, nf), L, tau, need
