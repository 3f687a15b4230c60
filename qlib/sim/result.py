"""What a run returns: SimulationResult and ReplicationResult, with their batch-means fields and intervals."""
from __future__ import annotations

import numpy as np
from dataclasses import dataclass
from qlib import stats

__all__ = ['SimulationResult', 'ReplicationResult']


# ------------------------------------------------------------- results ----
@dataclass(frozen=True)
class SimulationResult:
    """Result of :func:`~qlib.sim.run.simulate`.

    Attributes
    ----------
    occupancy : ndarray, shape (K+1,)
        Time average of q(0..K) over ``[burn_in, t_end]``, where q(i) is the
        fraction of servers with at least i tasks (q(0) = 1).  The last entry
        is 0 unless ``levels`` asked for more.
    occupancy_se : ndarray, shape (K+1,)
        Standard errors by batch means. By default (``batches=None``) the
        batch length is at least 20 correlation lengths measured on the run
        itself (:func:`qlib.stats.batch_means <qlib.stats.batch.batch_means>`), with 10 to 20 batches; the
        s.e. is trustworthy when ``se_reliable`` is True (otherwise a
        ``RuntimeWarning`` said how long the run should be). Measured
        coverage of ``occupancy_ci`` on M/M/1 queues: see
        ``tests/test_simulate_se.py``.
    occupancy_ci : ndarray, shape (2, K+1)
        95 % Student-t interval with ``batches − 1`` degrees of freedom: row 0
        lower, row 1 upper.
    mean_response_time, mean_response_time_se : float
        Arrival-side estimator: a task joining a queue that holds k tasks has
        expected response time k+1 (Exp(1) FIFO service); mean over arrivals
        in ``[burn_in, t_end]``, s.e. by batch means (same batches).
    response_time_ci : tuple (lo, hi)
        95 % Student-t interval for the mean response time.
    batch_occupancy : ndarray, shape (batches, K+1)
        Per-batch time averages (for s.e. of derived quantities).
    batch_response_time : ndarray, shape (batches,)
        Per-batch arrival-side mean response times (nan if a batch saw no
        arrival).
    times, paths : ndarray or None
        Grid ``0, record_dt, 2 record_dt, ... <= t_end`` and the occupancy
        on it, shape (len(times), K+1), when ``record_dt`` is given.
    events : int
        Arrivals + departures + resampling epochs of the Poisson process of
        rate mu (for ``mu = inf`` the resamplings are not separate events).
    resamples, arrivals, departures : int
    final_queues : ndarray, shape (n,)
        Queue lengths per server at ``t_end``.
    levels : int
        Number of levels tracked at the end (grown as needed).
    batches : int
        Number of batches behind the standard errors.
    batch_length : float
        Length of one batch (time units).
    corr_length : float
        Measured correlation length ``L`` (:func:`qlib.stats.batch_means <qlib.stats.batch.batch_means>`;
        nan with a fixed ``batches``).
    batch_lag1 : float
        Largest lag-1 correlation of the batch means over the series the
        batches are tested on (the occupancy levels holding at least 1 % of
        the servers and the mean queue length).
    se_reliable : bool
        Whether the batches are at least 20 correlation lengths long, at
        least 10, and their lag-1 correlations pass the family-wise 1 % test
        (:func:`qlib.stats.slice_batches <qlib.stats.batch.slice_batches>`).
    wall_time : float
        Seconds spent in the kernel (including compilation on a first call).
    seed : int or numpy.random.SeedSequence
        What reproduces the run when passed as ``seed``.
    """

    occupancy: np.ndarray
    occupancy_se: np.ndarray
    mean_response_time: float
    mean_response_time_se: float
    times: np.ndarray | None
    paths: np.ndarray | None
    events: int
    resamples: int
    arrivals: int
    departures: int
    final_queues: np.ndarray
    wall_time: float
    seed: object
    n: int
    lam: float
    mu: float
    t_end: float
    burn_in: float
    batch_occupancy: np.ndarray = None
    batch_response_time: np.ndarray = None
    levels: int = 0
    batches: int = 0
    occupancy_ci: np.ndarray = None
    response_time_ci: tuple = None
    batch_lag1: float = float("nan")
    batch_length: float = float("nan")
    corr_length: float = float("nan")
    se_reliable: bool = True


# ------------------------------------------------------------ helpers ----
_FINE = 4000   # slices of the measurement window (batch means group them)


def _batch_series(occ_f):
    """The series the batches are sized and tested on: the occupancy levels
    holding at least 1 % of the servers (rarer levels carry little weight and
    a noisy correlation estimate) and the mean queue length."""
    cols = [j for j in range(1, occ_f.shape[1]) if occ_f[:, j].mean() >= 0.01]
    return np.column_stack([occ_f[:, cols], occ_f[:, 1:].sum(axis=1)]) if cols else occ_f[:, :1]


def _batch_fields(occ, occ_f, rsum, rcnt, nfine, blen, batches, window):
    """The batch-means fields of a :class:`~qlib.sim.result.SimulationResult` (s.e., Student-t
    intervals, batch series and their diagnostics) from the fine slices of a
    run: ``occ_f`` (time averages of the occupancy per slice), ``rsum`` and
    ``rcnt`` (response-time sums and counts per slice).

    The batches are :func:`qlib.stats.slice_batches <qlib.stats.batch.slice_batches>` on ``_batch_series``
    (the rules shared with ``simulate_jsq``); it warns when the window is too
    short for 10 batches of 20 correlation lengths or the batch means stay
    correlated (family-wise 1 % lag-1 test)."""
    sb = stats.slice_batches(_batch_series(occ_f[:nfine]), window, batches=batches, stacklevel=3)
    occ_b = sb.means(occ_f[:nfine])
    k = sb.n_batches
    rs_b = sb.sums(rsum[:nfine])
    rc_b = sb.sums(rcnt[:nfine])
    occ_se = occ_b.std(axis=0, ddof=1) / np.sqrt(k)
    with np.errstate(invalid="ignore", divide="ignore"):
        rb = rs_b / rc_b
    R = rs_b.sum() / rc_b.sum() if rc_b.sum() > 0 else np.nan
    ok = rc_b > 0
    R_se = rb[ok].std(ddof=1) / np.sqrt(ok.sum()) if ok.sum() > 1 else np.nan
    tq = float(stats.t_quantile(0.975, k - 1))
    return dict(
        occupancy_se=occ_se, mean_response_time=float(R), mean_response_time_se=float(R_se),
        batch_occupancy=occ_b, batch_response_time=rb, batches=k,
        occupancy_ci=np.vstack([occ - tq * occ_se, occ + tq * occ_se]),
        response_time_ci=(float(R - tq * R_se), float(R + tq * R_se)),
        batch_lag1=float(sb.lag1), batch_length=float(sb.batch_length),
        corr_length=float(sb.corr_length), se_reliable=bool(sb.reliable))


# ----------------------------------------------------------- replicate ----
@dataclass(frozen=True)
class ReplicationResult:
    """Result of :func:`~qlib.sim.replicate.replicate`: R independent runs of :func:`~qlib.sim.run.simulate`.

    Attributes
    ----------
    occupancy : ndarray, shape (K+1,)
        Mean over replications of the time-averaged occupancy (levels padded
        with zeros to a common length).
    occupancy_se : ndarray, shape (K+1,)
        Standard error of that mean, ``std(ddof=1) / sqrt(R)``.
    occupancy_ci : ndarray, shape (2, K+1)
        95% Student-t confidence interval (t with R-1 degrees of freedom):
        row 0 lower, row 1 upper.
    mean_response_time, response_time_se : float
    response_time_ci : tuple (lo, hi)
        Same for the arrival-side mean response time.
    replications : int
    seed : int or numpy.random.SeedSequence
        The root seed; replication r used ``SeedSequence(seed).spawn(R)[r]``.
    results : tuple of SimulationResult
    wall_time : float
        Seconds for the whole call.
    """

    occupancy: np.ndarray
    occupancy_se: np.ndarray
    occupancy_ci: np.ndarray
    mean_response_time: float
    response_time_se: float
    response_time_ci: tuple
    replications: int
    seed: object
    results: tuple
    wall_time: float
