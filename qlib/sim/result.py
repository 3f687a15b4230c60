"""What a run returns: SimulationResult and ReplicationResult, with their batch-means fields and intervals."""
from __future__ import annotations

import math
import numpy as np
from dataclasses import dataclass
from qlib.stats._results import ResultIO
from qlib import stats

__all__ = ['SimulationResult', 'ReplicationResult', 'EVENT_STREAM', 'UNIFORMIZED_STREAM',
           'GENERAL_STREAM']

#: The random streams of the kernels, versioned: every result of a run names the stream
#: that produced it (``SimulationResult.stream``), and a change of what a kernel draws
#: from a seed bumps its number (CHANGELOG).  Same stream and seed, same result, bit for
#: bit.  ``event``: the exponential event kernel (:mod:`qlib.sim.kernel`, and the
#: interleaved loop, which draws the same numbers); ``uniformized``: the fast path
#: (:mod:`qlib.sim.uniformized`); ``general``: the general-service kernel.  This one:
#: the event kernel's.
EVENT_STREAM = "event-1"
#: The fast path's stream (:func:`~qlib.sim.uniformized.simulate_uniformized`); 2: at
#: finite ``mu > 0`` a lazily revealed uniform permutation (1 drew keyed Feistel
#: bijections), at ``mu = 0`` and ``mu = inf`` the draws of 1, bit for bit.
UNIFORMIZED_STREAM = "uniformized-2"
#: The general-service kernel's stream (:func:`~qlib.sim.general.simulate_general`).
GENERAL_STREAM = "general-1"


# the one interval type lives in qlib.stats (re-exported here, where results use it)
from qlib.stats.intervals import Interval, IntervalArray, _t_interval  # noqa: E402,F401


# ------------------------------------------------------------- results ----
@dataclass(frozen=True, repr=False, eq=False)
class SimulationResult(ResultIO):
    """Result of :func:`~qlib.sim.run.simulate`.

    Attributes
    ----------
    occupancy : ndarray, shape (K+1,)
        Time average of q(0..K) over ``[burn_in, t_end]``, where q(i) is the
        fraction of servers with at least i tasks (q(0) = 1).  The last entry
        is 0 unless ``levels`` asked for more.
    occupancy_se : ndarray, shape (K+1,)
        Standard errors by batch means. By default (``batches=None``) the
        batch length is at least ``max(20 L, 80 τ)``, the correlation length
        ``L`` and integrated autocorrelation time ``τ`` measured on the run
        itself (:func:`qlib.stats.batch_means <qlib.stats.batch.batch_means>`), with 10 to 20 batches; the
        s.e. is trustworthy when ``se_reliable`` is True (otherwise a
        ``RuntimeWarning`` said how long the run should be). Measured
        coverage of ``occupancy_ci`` on M/M/1 queues: see
        ``tests/test_simulate_se.py``.
    occupancy_ci : IntervalArray, shape (2, K+1)
        95 % Student-t interval with ``batches − 1`` degrees of freedom: row 0
        lower, row 1 upper.  Called, ``occupancy_ci(level=0.95)`` gives the
        interval at another level (:class:`~qlib.stats.intervals.IntervalArray`).
    mean_response_time, mean_response_time_se : float
        Arrival-side estimator: a task joining a queue that holds k tasks has
        expected response time k+1 (Exp(1) FIFO service); mean over arrivals
        in ``[burn_in, t_end]``, s.e. by batch means (same batches).  Also
        readable as ``response_time`` and ``response_time_se``, the names
        every simulator's result shares.
    response_time_ci : Interval (lo, hi)
        95 % Student-t interval for the mean response time; called,
        ``response_time_ci(level=0.95)`` gives another level
        (:class:`~qlib.stats.intervals.Interval`).
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
        rate mu (for ``mu = inf`` the resamplings are not separate events;
        on the fast path, ``stream`` ``"uniformized-…"``, arrivals +
        departures).
    resamples, arrivals, departures : int
    final_queues : ndarray, shape (n,)
        Queue lengths per server at ``t_end`` (``int64``; ``int32`` on the
        fast path).
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
        Whether the window holds 10 batches of ``max(20 L, 80 τ)``, ``τ`` and
        ``L`` measured on the run (:func:`~qlib.stats.batch.reliable_window`,
        :func:`qlib.stats.slice_batches <qlib.stats.batch.slice_batches>`).
        The lag-1 test of the batch means is reported in ``batch_lag1`` and
        in the warning but is not part of the flag (it selects against
        coverage). A flagged run's interval is not a nominal 95 % interval
        near the threshold: the coverage the flag achieves is in
        :func:`~qlib.stats.batch.reliable_window`.
    wall_time : float
        Seconds spent in the kernel (including compilation on a first call).
    seed : int or numpy.random.SeedSequence
        What reproduces the run when passed as ``seed`` (with the same ``stream``).
    stream : str
        The random stream that produced the run, kernel and version
        (``EVENT_STREAM``, ``UNIFORMIZED_STREAM``, ``GENERAL_STREAM`` of
        :mod:`qlib.sim.result`); ``simulate(..., kernel="event")`` reproduces
        an ``"event-…"`` run, ``kernel="fast"`` an ``"uniformized-…"`` one.
        Empty for a result stored before streams were named.
    """

    #: the inputs shown first by ``repr``
    _inputs = ResultIO._inputs + ("stream",)

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
    occupancy_ci: IntervalArray = None  # type: ignore[assignment]  # set in __post_init__
    response_time_ci: Interval = None  # type: ignore[assignment]  # set in __post_init__
    batch_lag1: float = float("nan")
    batch_length: float = float("nan")
    corr_length: float = float("nan")
    se_reliable: bool = True
    stream: str = ""

    def __post_init__(self):
        _wrap_intervals(self, self.mean_response_time, self.mean_response_time_se,
                        self.batches - 1 if self.batches else 0)

    @property
    def response_time(self) -> float:
        """The mean response time (``mean_response_time``)."""
        return self.mean_response_time

    @property
    def response_time_se(self) -> float:
        """Its batch-means standard error (``mean_response_time_se``)."""
        return self.mean_response_time_se

    @property
    def lam_total(self) -> float:
        """The total arrival rate ``n λ`` (``lam`` is per server)."""
        return self.n * self.lam

    @property
    def mean_queue_length(self) -> float:
        """Mean number of tasks per server, ``Σ_{i≥1} q(i)`` (time average); by
        Little's law it estimates ``lam · response_time``."""
        return float(np.sum(self.occupancy[1:]))

    @property
    def mean_queue_length_se(self) -> float:
        """Its batch-means standard error (same batches as ``occupancy_se``)."""
        return queue_length_se(self.batch_occupancy)

    @property
    def mean_queue_length_ci(self) -> Interval:
        """95 % Student-t :class:`~qlib.stats.intervals.Interval` of ``mean_queue_length``."""
        return _scalar_interval(self.mean_queue_length, self.mean_queue_length_se,
                                self.batches - 1 if self.batches else 0)


def queue_length_se(batch_occupancy: "np.ndarray | None") -> float:
    """Batch-means standard error of the mean queue length ``Σ_{i≥1} q(i)`` from a run's
    ``batch_occupancy`` (batches × levels); NaN with fewer than two batches. The one
    computation for :class:`SimulationResult` and :class:`qlib.sweep.SweepRun`."""
    b = None if batch_occupancy is None else np.asarray(batch_occupancy)
    if b is None or b.ndim != 2 or b.shape[0] < 2:
        return float("nan")
    x = b[:, 1:].sum(axis=1)
    return float(x.std(ddof=1) / math.sqrt(x.size))


def _scalar_interval(center, se, df):
    """The 95 % :class:`Interval` ``center ± t se`` with ``df`` degrees of freedom."""
    return Interval(_t_interval(center, se, df, 0.95), center, se, df)


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
    short for 10 batches of ``max(20 L, 80 τ)`` (the lag-1 test of the batch
    means is reported in the warning), unless ``warn`` is False."""
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
@dataclass(frozen=True, repr=False, eq=False)
class ReplicationResult(ResultIO):
    """Result of :func:`~qlib.sim.replications.replicate`: R independent runs of :func:`~qlib.sim.run.simulate`.

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
    occupancy_ci: IntervalArray
    mean_response_time: float
    response_time_se: float
    response_time_ci: Interval
    replications: int
    seed: object
    results: tuple
    wall_time: float

    def __post_init__(self):
        _wrap_intervals(self, self.mean_response_time, self.response_time_se,
                        self.replications - 1)

    @property
    def response_time(self) -> float:
        """The mean response time (``mean_response_time``)."""
        return self.mean_response_time

    @property
    def n(self) -> int:
        """Number of servers (of the runs)."""
        return self.results[0].n

    @property
    def lam(self) -> float:
        """Arrival rate per server (of the runs)."""
        return self.results[0].lam

    @property
    def lam_total(self) -> float:
        """The total arrival rate ``n λ``."""
        return self.n * self.lam

    @property
    def mean_queue_length(self) -> float:
        """Mean over replications of each run's ``mean_queue_length`` (tasks per server)."""
        return float(np.mean([r.mean_queue_length for r in self.results]))

    @property
    def mean_queue_length_se(self) -> float:
        """Its standard error over replications."""
        x = np.array([r.mean_queue_length for r in self.results])
        return float(x.std(ddof=1) / math.sqrt(x.size))

    @property
    def mean_queue_length_ci(self) -> Interval:
        """95 % Student-t :class:`~qlib.stats.intervals.Interval` over replications."""
        return _scalar_interval(self.mean_queue_length, self.mean_queue_length_se,
                                self.replications - 1)

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

        For runs made outside :func:`~qlib.sim.replications.replicate` (each from
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

    def tail(self, which: int | list[int] | None = None) -> np.ndarray:
        """Per-replication time-averaged occupancy ``q(i)``.

        Parameters
        ----------
        which : int or sequence of int, optional
            Which levels ``i >= 0``; default all, ``0..K``.

        Returns
        -------
        ndarray, shape (replications, len(which))
            Row ``r`` holds run ``r``'s ``q(i)``; a level the run never
            reached is 0.  For one int level, shape (replications,).
        """
        K = max(r.occupancy.size for r in self.results)
        lv = np.arange(K) if which is None else np.atleast_1d(np.asarray(which))
        if lv.ndim != 1 or not np.issubdtype(lv.dtype, np.integer) or np.any(lv < 0):
            raise ValueError(f"which must be a non-negative int or a sequence of them, got {which!r}")
        w = max(K, int(lv.max()) + 1) if lv.size else K
        occ = np.array([np.pad(r.occupancy, (0, w - r.occupancy.size)) for r in self.results])
        return occ[:, lv[0]] if np.ndim(which) == 0 and which is not None else occ[:, lv]

    def tail_ci(self, which: int | list[int] | None = None, level: float = 0.95) -> "stats.ReplicationCI":
        """:func:`qlib.stats.replication_ci <qlib.stats.intervals.replication_ci>` of :meth:`tail`'s columns."""
        return stats.replication_ci(self.tail(which), level)

    def queue_paths(self, after: float = 0.0, which: list[int] | None = None) -> np.ndarray:
        """Per-replication recorded path of ``Σ_i q(t, i)`` from time ``after`` on.

        The input of :func:`qlib.stats.burn_in_check
        <qlib.stats.burn_in.burn_in_check>` with ``replications=True``.

        Parameters
        ----------
        after : float, default 0
            Keep the grid times ``t >= after`` (the burn-in, when the paths
            were recorded from time 0).
        which : sequence of int, optional
            Which levels ``i >= 1`` are summed; default all, so the sum is the mean
            queue length per server. A level a run never reached counts 0.

        Returns
        -------
        ndarray, shape (replications, grid points)

        Raises
        ------
        ValueError
            If the runs recorded no paths (``record_dt`` not given), the
            replications' grids differ, or ``which`` holds a level < 1.
        """
        if any(r.paths is None for r in self.results):
            raise ValueError("queue_paths needs paths: run replicate with record_dt")
        after = float(after)
        lv = None if which is None else np.atleast_1d(np.asarray(which))
        if lv is not None and (lv.ndim != 1 or lv.size == 0
                               or not np.issubdtype(lv.dtype, np.integer) or np.any(lv < 1)):
            raise ValueError(f"which must be a non-empty sequence of ints >= 1, got {which!r}")
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
