"""What a run returns: SimulationResult and ReplicationResult, with their batch-means fields and intervals."""
from __future__ import annotations

import math
import numpy as np
from dataclasses import dataclass
from qlib import stats

__all__ = ['SimulationResult', 'ReplicationResult', 'Interval', 'IntervalArray']


# ----------------------------------------------------------- intervals ----
def _t_interval(center, se, dof, level):
    """``center ∓ t_{(1+level)/2, dof} se`` (nan when ``dof < 1``)."""
    level = stats.intervals._check_level(level)
    c, s = np.asarray(center, float), np.asarray(se, float)
    tq = float(stats.t_quantile(0.5 + level / 2, dof)) if dof >= 1 else math.nan
    return c - tq * s, c + tq * s


class Interval(tuple):
    """A 95 % interval ``(lo, hi)`` that, called with a level, gives the
    Student-t interval at that level: ``r.response_time_ci`` is the 95 %
    pair, ``r.response_time_ci(0.99)`` the 99 % one (same centre, same
    standard error, ``dof`` degrees of freedom).

    Attributes
    ----------
    center, se : float
        The point estimate and its standard error.
    dof : int
        Degrees of freedom of the t quantile (``batches − 1``).
    """

    def __new__(cls, pair, center=math.nan, se=math.nan, dof=0):
        self = super().__new__(cls, tuple(pair))
        self.center, self.se, self.dof = center, se, int(dof)
        return self

    def __call__(self, level=0.95):
        if level == 0.95:
            return self
        lo, hi = _t_interval(self.center, self.se, self.dof, level)
        return Interval((float(lo), float(hi)), self.center, self.se, self.dof)

    def __reduce__(self):
        return (Interval, (tuple(self), self.center, self.se, self.dof))


def _interval_array(data, center, se, dof):
    return IntervalArray(data, center, se, dof)


class IntervalArray(np.ndarray):
    """The 95 % intervals of a vector, shape ``(2, K+1)`` (row 0 lower, row 1
    upper), that, called with a level, give the Student-t intervals at that
    level: ``r.occupancy_ci[1]`` is the 95 % upper row, ``r.occupancy_ci(0.99)``
    the 99 % array.  Indexing and arithmetic give plain arrays.

    Attributes
    ----------
    center, se : ndarray, shape (K+1,)
        The point estimates and their standard errors.
    dof : int
        Degrees of freedom of the t quantile (``batches − 1``).
    """

    def __new__(cls, data, center=None, se=None, dof=0):
        obj = np.array(data, dtype=float, copy=True).view(cls)
        obj.center = None if center is None else np.asarray(center, float)
        obj.se = None if se is None else np.asarray(se, float)
        obj.dof = int(dof)
        return obj

    def __array_finalize__(self, obj):
        self.center = getattr(obj, "center", None)
        self.se = getattr(obj, "se", None)
        self.dof = getattr(obj, "dof", 0)

    def __array_wrap__(self, arr, context=None, return_scalar=False):
        out = np.asarray(arr)
        return out[()] if return_scalar else out

    def __getitem__(self, key):
        return np.asarray(self)[key]

    def __repr__(self):
        return repr(np.asarray(self))

    def __call__(self, level=0.95):
        if level == 0.95:
            return self
        if self.center is None or self.se is None or self.shape != (2,) + self.center.shape:
            raise ValueError("this array does not carry the centres and standard errors of "
                             "its intervals (a reshaped view?), so it has no other level")
        return IntervalArray(np.vstack(_t_interval(self.center, self.se, self.dof, level)),
                             self.center, self.se, self.dof)

    def __reduce__(self):
        return (_interval_array, (np.asarray(self), self.center, self.se, self.dof))


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
    occupancy_ci : IntervalArray, shape (2, K+1)
        95 % Student-t interval with ``batches − 1`` degrees of freedom: row 0
        lower, row 1 upper.  Called, ``occupancy_ci(level=0.95)`` gives the
        interval at another level (:class:`~qlib.sim.result.IntervalArray`).
    mean_response_time, mean_response_time_se : float
        Arrival-side estimator: a task joining a queue that holds k tasks has
        expected response time k+1 (Exp(1) FIFO service); mean over arrivals
        in ``[burn_in, t_end]``, s.e. by batch means (same batches).  Also
        readable as ``response_time`` and ``response_time_se``, the names
        every simulator's result shares.
    response_time_ci : Interval (lo, hi)
        95 % Student-t interval for the mean response time; called,
        ``response_time_ci(level=0.95)`` gives another level
        (:class:`~qlib.sim.result.Interval`).
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

    def __post_init__(self):
        _wrap_intervals(self, self.mean_response_time, self.mean_response_time_se,
                        self.batches - 1 if self.batches else 0)

    @property
    def response_time(self):
        """The mean response time (``mean_response_time``)."""
        return self.mean_response_time

    @property
    def response_time_se(self):
        """Its batch-means standard error (``mean_response_time_se``)."""
        return self.mean_response_time_se


def _wrap_intervals(r, R, R_se, dof):
    """Store ``r``'s ``occupancy_ci`` and ``response_time_ci`` as callable
    intervals (the 95 % values unchanged; filled in when missing)."""
    occ_ci = r.occupancy_ci
    if occ_ci is None and r.occupancy_se is not None and dof >= 1:
        occ_ci = np.vstack(_t_interval(r.occupancy, r.occupancy_se, dof, 0.95))
    if occ_ci is not None:
        object.__setattr__(r, "occupancy_ci", IntervalArray(occ_ci, r.occupancy, r.occupancy_se, dof))
    rt_ci = r.response_time_ci
    if rt_ci is None and dof >= 1:
        rt_ci = tuple(float(x) for x in _t_interval(R, R_se, dof, 0.95))
    if rt_ci is not None:
        object.__setattr__(r, "response_time_ci", Interval(rt_ci, R, R_se, dof))


# ------------------------------------------------------------ helpers ----
_FINE = 4000   # slices of the measurement window (batch means group them)


def _batch_series(occ_f):
    """The series the batches are sized and tested on: the occupancy levels
    holding at least 1 % of the servers (rarer levels carry little weight and
    a noisy correlation estimate) and the mean queue length."""
    cols = [j for j in range(1, occ_f.shape[1]) if occ_f[:, j].mean() >= 0.01]
    return np.column_stack([occ_f[:, cols], occ_f[:, 1:].sum(axis=1)]) if cols else occ_f[:, :1]


def _batch_fields(occ, occ_f, rsum, rcnt, nfine, blen, batches, window, warn=True):
    """The batch-means fields of a :class:`~qlib.sim.result.SimulationResult` (s.e., Student-t
    intervals, batch series and their diagnostics) from the fine slices of a
    run: ``occ_f`` (time averages of the occupancy per slice), ``rsum`` and
    ``rcnt`` (response-time sums and counts per slice).

    The batches are :func:`qlib.stats.slice_batches <qlib.stats.batch.slice_batches>` on ``_batch_series``
    (the rules shared with ``simulate_jsq``); it warns when the window is too
    short for 10 batches of 20 correlation lengths or the batch means stay
    correlated (family-wise 1 % lag-1 test), unless ``warn`` is False."""
    sb = stats.slice_batches(_batch_series(occ_f[:nfine]), window, batches=batches,
                             warn=warn, stacklevel=3)
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
    occupancy_ci : IntervalArray, shape (2, K+1)
        95% Student-t confidence interval (t with R-1 degrees of freedom):
        row 0 lower, row 1 upper; ``occupancy_ci(level=0.95)`` gives another
        level.
    mean_response_time, response_time_se : float
        Also readable as ``response_time`` and ``mean_response_time_se``.
    response_time_ci : Interval (lo, hi)
        Same for the arrival-side mean response time;
        ``response_time_ci(level=0.95)`` gives another level.
    replications : int
    batches : int
        The number of independent means behind the standard errors: here
        ``replications`` (the intervals have ``batches − 1`` degrees of
        freedom, as in :class:`~qlib.sim.result.SimulationResult`).
    se_reliable : bool
        Always True: the standard errors come from independent replications,
        which need no batch-length condition.  They still assume each run is
        past its burn-in, which is the caller's to test
        (:func:`qlib.stats.burn_in_check <qlib.stats.burn_in.burn_in_check>`).
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

    def __post_init__(self):
        _wrap_intervals(self, self.mean_response_time, self.response_time_se,
                        self.replications - 1)

    @property
    def response_time(self):
        """The mean response time (``mean_response_time``)."""
        return self.mean_response_time

    @property
    def mean_response_time_se(self):
        """Its standard error over replications (``response_time_se``)."""
        return self.response_time_se

    @property
    def batches(self):
        """Independent means behind the standard errors: ``replications``."""
        return self.replications

    @property
    def se_reliable(self):
        """True: independent replications need no batch-length condition."""
        return True

    @classmethod
    def from_runs(cls, results, seed=None, wall_time=math.nan):
        """Gather independent runs of :func:`~qlib.sim.run.simulate` into one result.

        For runs made outside :func:`~qlib.sim.replicate.replicate` (each from
        a start of its own, say); the runs must be independent.

        Parameters
        ----------
        results : sequence of SimulationResult
            At least two runs.
        seed : optional
            The root seed, recorded as ``seed``.
        wall_time : float, optional
            Seconds the runs took.

        Returns
        -------
        ReplicationResult

        Raises
        ------
        TypeError
            If a run is not a :class:`~qlib.sim.result.SimulationResult`.
        ValueError
            If fewer than two runs are given.
        """
        results = tuple(results)
        if len(results) < 2:
            raise ValueError(f"results must hold at least 2 runs, got {len(results)}")
        if not all(isinstance(r, SimulationResult) for r in results):
            raise TypeError("results must be SimulationResult objects (runs of simulate)")
        R = len(results)
        occ = np.zeros((R, max(r.occupancy.size for r in results)))
        for k, r in enumerate(results):
            occ[k, :r.occupancy.size] = r.occupancy
        m, se = occ.mean(axis=0), occ.std(axis=0, ddof=1) / math.sqrt(R)
        tq = float(stats.t_quantile(0.975, R - 1))
        resp = np.array([r.mean_response_time for r in results])
        rm, rse = float(resp.mean()), float(resp.std(ddof=1) / math.sqrt(R))
        return cls(occupancy=m, occupancy_se=se, occupancy_ci=np.vstack([m - tq * se, m + tq * se]),
                   mean_response_time=rm, response_time_se=rse,
                   response_time_ci=(rm - tq * rse, rm + tq * rse), replications=R,
                   seed=seed, results=results, wall_time=wall_time)

    @property
    def batch_response_times(self):
        """Per-replication batch means of the response time, shape (replications, batches).

        The input of a burn-in test across replications
        (:func:`qlib.stats.burn_in_check <qlib.stats.burn_in.burn_in_check>` with
        ``replications=True``; :func:`~qlib.stats.burn_in.burn_in_family`).
        """
        return np.array([r.batch_response_time for r in self.results])

    def tail(self, levels=None):
        """Per-replication time-averaged occupancy ``q(i)``.

        Parameters
        ----------
        levels : int or sequence of int, optional
            The levels ``i >= 0``; default all, ``0..K``.

        Returns
        -------
        ndarray, shape (replications, len(levels))
            Row ``r`` holds run ``r``'s ``q(i)``; a level the run never
            reached is 0.  For one int level, shape (replications,).
        """
        K = max(r.occupancy.size for r in self.results)
        lv = np.arange(K) if levels is None else np.atleast_1d(np.asarray(levels))
        if lv.ndim != 1 or not np.issubdtype(lv.dtype, np.integer) or np.any(lv < 0):
            raise ValueError(f"levels must be a non-negative int or a sequence of them, got {levels!r}")
        w = max(K, int(lv.max()) + 1) if lv.size else K
        occ = np.array([np.pad(r.occupancy, (0, w - r.occupancy.size)) for r in self.results])
        return occ[:, lv[0]] if np.ndim(levels) == 0 and levels is not None else occ[:, lv]

    def tail_ci(self, levels=None, level=0.95):
        """:func:`qlib.stats.replication_ci <qlib.stats.intervals.replication_ci>` of :meth:`tail`'s columns."""
        return stats.replication_ci(self.tail(levels), level)

    def queue_paths(self, after=0.0, levels=None):
        """Per-replication recorded path of ``Σ_i q(t, i)`` from time ``after`` on.

        The input of :func:`qlib.stats.burn_in_check
        <qlib.stats.burn_in.burn_in_check>` with ``replications=True``.

        Parameters
        ----------
        after : float, default 0
            Keep the grid times ``t >= after`` (the burn-in, when the paths
            were recorded from time 0).
        levels : sequence of int, optional
            The levels ``i >= 1`` summed; default all, so the sum is the mean
            queue length per server. A level a run never reached counts 0.

        Returns
        -------
        ndarray, shape (replications, grid points)

        Raises
        ------
        ValueError
            If the runs recorded no paths (``record_dt`` not given), the
            replications' grids differ, or ``levels`` holds a level < 1.
        """
        if any(r.paths is None for r in self.results):
            raise ValueError("queue_paths needs paths: run replicate with record_dt")
        after = float(after)
        lv = None if levels is None else np.atleast_1d(np.asarray(levels))
        if lv is not None and (lv.ndim != 1 or lv.size == 0
                               or not np.issubdtype(lv.dtype, np.integer) or np.any(lv < 1)):
            raise ValueError(f"levels must be a non-empty sequence of ints >= 1, got {levels!r}")
        out = []
        for r in self.results:
            p = r.paths[r.times >= after]
            if lv is None:
                out.append(p[:, 1:].sum(axis=1))
            else:
                p = np.pad(p, ((0, 0), (0, max(0, int(lv.max()) + 1 - p.shape[1]))))
                out.append(p[:, lv].sum(axis=1))
        if len({o.size for o in out}) != 1:
            raise ValueError("the replications' recorded grids differ in length after `after`")
        return np.array(out)
