"""simulate_jsq: exact simulation of JSQ's occupancy chain on the complete graph, λ_n = n − β√n (uniformized where that pays, else event by event)."""
from __future__ import annotations

import math
import numbers
import time
import numba
import numpy as np
from dataclasses import dataclass

from qlib._feedback import compile_notice
from qlib.stats._results import BatchIntervals, ResultIO
from qlib.stats.intervals import Interval
from qlib import _validate as V
from qlib.halfin_whitt._slices import progress_bar, slice_ends
from qlib.halfin_whitt._common import _check_beta, _check_n, _check_pos, _check_times, _seed32, _seed_record
from qlib.halfin_whitt import _jsq_fast as F
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qlib._types import Seed

__all__ = ['simulate_jsq', 'JSQResult', 'EVENT_STREAM', 'UNIFORMIZED_STREAM']

#: The random streams of :func:`simulate_jsq`'s kernels, versioned as in
#: :mod:`qlib.sim.result`: every :class:`JSQResult` names the stream that produced it
#: (``stream``), and a change of what a kernel draws from a seed bumps its number
#: (CHANGELOG). Same stream and seed, same result, bit for bit. This one: the event
#: kernel's (``kernel="event"``, and ``"auto"`` where the uniformized kernel
#: would not pay), one exponential holding time per event.
EVENT_STREAM = "event-1"
#: The uniformized kernel's stream (``kernel="uniformized"``, and ``"auto"``
#: where it pays): the private module ``qlib.halfin_whitt._jsq_fast``.
UNIFORMIZED_STREAM = "uniformized-1"
_KERNELS = ("auto", "uniformized", "event")
# kernel="auto" takes the uniformized kernel where it pays (measured, CPU per run):
# at most _AUTO_LOOPS of its steps per event of the chain in stationarity, where
# the chain jumps at rate λ_n + E[Q_1] = 2 λ_n (n = 4, β = 1.9: 10.5 steps per
# event, 0.8 times the event kernel's speed; n = 100, β = 9: 5.5, 1.1 times), and
# at least _AUTO_STEPS steps per cell of its grid on average (its cost per cell, a
# Poisson draw, is a few events': 0.7 steps per cell, 0.9 times; 2, 1.1; 3.5, 1.3)
_AUTO_LOOPS = 2.0
_AUTO_STEPS = 4.0


def _auto_uniformized(n: int, lam: float, t_end: float, cells: int) -> bool:
    """Whether ``kernel="auto"`` runs the uniformized kernel: few self-loops and
    cells that hold several steps (module constants ``_AUTO_LOOPS``, ``_AUTO_STEPS``)."""
    return (lam + n) <= _AUTO_LOOPS * 2.0 * lam and (lam + n) * t_end >= _AUTO_STEPS * cells


# ---------------------------------------------------------------- simulation

# the kernel's state between slices of the horizon (progress=True runs it in
# slices; each call goes on from the stored state, so the draws and sums are
# those of one call): integers and floats
_S, _N, _NW, _CB, _IREC, _EV, _ARRS, _OVF, _PEND, _DONE = range(10)
_NEXTB, _CUMW, _T, _T3, _TN = range(5)


@numba.njit(cache=True)
def _jsq_kernel(seed, n, lam, t_end, burn_in, Q, K, nfine, rec_dt, nrec,
                slice_end, acc, arr, warr, waits, paths, ist, fst):
    # Q[0] = n, Q[1..K] the occupancy counts, Q[K+1] = 0 stays a sentinel.
    # per slice of the window (nfine equal slices, grouped into batches
    # afterwards) acc holds ∫ idle, Q_2, Q_3, waiting tasks (N - Q_1),
    # 1{Q_1 = n} dt, and arr, warr the arrivals and waiting arrivals in it.
    # seed >= 0: a fresh run; seed < 0: go on from ist, fst (numba's random
    # stream, thread-local, goes on too). Returns at the first event at or
    # after slice_end (kept pending for the next call) or at t_end.
    sq = math.sqrt(n)
    max_waits = waits.size
    blen = (t_end - burn_in) / nfine
    if seed >= 0:
        np.random.seed(seed)
        s = 0  # length of a shortest queue: largest i with Q[i] == n
        while s < K and Q[s + 1] == n:
            s += 1
        N = 0  # number of tasks
        for i in range(1, K + 1):
            N += Q[i]
        nw = 0
        cb = 0
        nextb = burn_in + blen if nfine > 1 else t_end
        cumw = 0.0  # ∫_0^t (N - Q_1) ds, the waiting accrued by time t
        t = 0.0
        irec = 0
        events = 0
        arrivals = 0
        overflow = 0
        pend = 0
        tn = 0.0
        t3 = 0.0 if Q[3] == 0 else -1.0  # first time Q_3 = 0
    else:
        s, N, nw, cb, irec = ist[_S], ist[_N], ist[_NW], ist[_CB], ist[_IREC]
        events, arrivals, overflow, pend = ist[_EV], ist[_ARRS], ist[_OVF], ist[_PEND]
        nextb, cumw, t, t3, tn = fst[_NEXTB], fst[_CUMW], fst[_T], fst[_T3], fst[_TN]
    done = 0
    while True:
        rate = lam + Q[1]
        if pend:
            pend = 0
        else:
            tn = t + np.random.exponential(1.0 / rate)
            if slice_end <= tn < t_end:
                pend = 1
                break
        tc = tn if tn < t_end else t_end
        wq = N - Q[1]
        while irec < nrec and irec * rec_dt <= tc:
            paths[irec, 0] = (Q[1] - n) / sq
            paths[irec, 1] = Q[2] / sq
            paths[irec, 2] = Q[3] / sq
            paths[irec, 3] = cumw + (irec * rec_dt - t) * wq
            irec += 1
        a = t
        while a < tc:
            if a < burn_in:
                a = tc if tc < burn_in else burn_in
                continue
            e = tc if tc < nextb else nextb
            d = e - a
            acc[cb, 0] += d * (n - Q[1])
            acc[cb, 1] += d * Q[2]
            acc[cb, 2] += d * Q[3]
            acc[cb, 3] += d * wq
            if s >= 1:
                acc[cb, 4] += d
            a = e
            if a >= nextb and cb < nfine - 1:
                cb += 1
                nextb = burn_in + (cb + 1) * blen if cb < nfine - 1 else t_end
        cumw += (tc - t) * wq
        if tn >= t_end:
            done = 1
            break
        t = tn
        events += 1
        u = np.random.random() * rate
        if u < lam:  # arrival joins a queue of length s
            if s + 1 > K:
                overflow = 1
                done = 1
                break
            if t >= burn_in:
                arr[cb] += 1
                if s >= 1:
                    warr[cb] += 1
                    if nw < max_waits:
                        # FIFO: the residual service of the task in service and
                        # the s - 1 full services ahead, i.i.d. Exp(1)
                        w = 0.0
                        for _ in range(s):
                            w += np.random.exponential(1.0)
                        waits[nw] = w
                        nw += 1
            arrivals += 1
            Q[s + 1] += 1
            N += 1
            if Q[s + 1] == n:
                s += 1
        else:  # departure from a uniform busy server
            v = int(u - lam)
            if v >= Q[1]:
                v = Q[1] - 1
            i = 1  # the level i with Q[i+1] <= v < Q[i]
            while Q[i + 1] > v:
                i += 1
            Q[i] -= 1
            N -= 1
            if i <= s:
                s = i - 1
            if i == 3 and Q[3] == 0 and t3 < 0:
                t3 = t
    ist[_S], ist[_N], ist[_NW], ist[_CB], ist[_IREC] = s, N, nw, cb, irec
    ist[_EV], ist[_ARRS], ist[_OVF], ist[_PEND], ist[_DONE] = events, arrivals, overflow, pend, done
    fst[_NEXTB], fst[_CUMW], fst[_T], fst[_T3], fst[_TN] = nextb, cumw, t, t3, tn


@dataclass(frozen=True, repr=False, eq=False)
class JSQResult(BatchIntervals, ResultIO):
    """Result of :func:`~qlib.halfin_whitt.simulate.simulate_jsq`.

    Time averages are over ``[burn_in, t_end]``; ``*_se`` are batch-means
    standard errors and ``*_ci`` the 95 % Student-t intervals ``(lo, hi)``
    with ``batches − 1`` degrees of freedom (see *Standard errors* in
    :func:`~qlib.halfin_whitt.simulate.simulate_jsq`: by default the batch length follows the
    correlation length measured on the run).  ``p_wait`` is the fraction
    of the arrivals in the window that found every server busy (they wait);
    by PASTA it estimates ``P(Q_1 = n)``, which ``p_full`` estimates as a
    time average.  ``waits`` holds the waiting times of (at most
    ``max_waits``) waiting tasks that arrived in the window.
    ``cumulative_wait`` is ``∫_0^{t_end} (N − Q_1) dt``, the total waiting
    time accrued by all tasks over the run (``N`` = number of tasks).
    ``times, x1, x2, x3, cum_wait_path``: the scaled paths
    ``(Q_1 − n)/√n``, ``Q_2/√n``, ``Q_3/√n`` and the accrued waiting on the
    grid ``record_dt`` (``None`` without a grid).  ``t_q3_zero``: first time
    ``Q_3 = 0`` (``nan`` if never in the run).

    Batch diagnostics: ``batches`` (the number ``k`` of batches behind the
    standard errors), ``batch_length`` (time units), ``corr_length`` (the
    correlation length ``L`` measured on the run, the largest over the
    quantities; ``nan`` with a fixed ``batches``), ``batch_lag1`` (the largest
    lag-1 correlation of the batch means over the quantities),
    ``se_reliable`` (the window holds 10 batches of ``max(20 L, 80 τ)``, with
    ``τ`` the largest integrated autocorrelation time measured on the run:
    :func:`~qlib.stats.batch.reliable_window`; the lag-1 test of the batch
    means is reported in ``batch_lag1`` and the warning, not part of the flag;
    always True with a fixed ``batches``, which is not checked)
    and ``batch_averages``, shape ``(batches, 5)``: per-batch time averages
    of ``n − Q_1``, ``Q_2``, ``Q_3``, ``N − Q_1`` and ``1{Q_1 = n}`` (for the
    standard error of a derived quantity, e.g. a ratio).

    ``stream``: the random stream that produced the run, kernel and version
    (``"uniformized-1"``, ``"event-1"``: :data:`UNIFORMIZED_STREAM`,
    :data:`EVENT_STREAM`); ``simulate_jsq(..., kernel="event")`` reproduces an
    ``"event-…"`` run, ``kernel="uniformized"`` an ``"uniformized-…"`` one.
    Empty for a result stored before streams were named. ``events`` counts
    the chain's jumps (arrivals and departures) on either kernel.

    The names every simulator's result shares (:mod:`qlib.sim.result`):
    ``occupancy`` = ``(1, E Q_1/n, E Q_2/n, E Q_3/n)``, the levels the
    kernel integrates (higher levels are not measured, which is not the
    same as zero); ``response_time = E[N]/λ_n`` (Little's law, with
    ``E[N] = n − mean_idle + mean_waiting``); their batch-means standard
    errors ``occupancy_se`` and ``response_time_se``; the Student-t
    intervals ``occupancy_ci(level=0.95)`` (shape ``(2, 4)``, row 0 lower)
    and ``response_time_ci(level=0.95)`` (``(lo, hi)``) with ``batches − 1``
    degrees of freedom; ``se_reliable`` and ``batches`` as above.
    """

    #: the inputs shown first by ``repr``
    _inputs = ResultIO._inputs + ("stream",)

    n: int
    beta: float
    lam_total: float
    t_end: float
    burn_in: float
    mean_idle: float
    mean_idle_se: float
    mean_q2: float
    mean_q2_se: float
    mean_q3: float
    mean_q3_se: float
    mean_waiting: float
    mean_waiting_se: float
    p_wait: float
    p_wait_se: float
    p_full: float
    p_full_se: float
    waits: np.ndarray
    cumulative_wait: float
    times: np.ndarray | None
    x1: np.ndarray | None
    x2: np.ndarray | None
    x3: np.ndarray | None
    cum_wait_path: np.ndarray | None
    t_q3_zero: float
    final: np.ndarray
    events: int
    arrivals: int
    wall_time: float
    seed: object
    mean_idle_ci: Interval = None  # type: ignore[assignment]  # set by simulate_jsq
    mean_q2_ci: Interval = None  # type: ignore[assignment]  # set by simulate_jsq
    mean_q3_ci: Interval = None  # type: ignore[assignment]  # set by simulate_jsq
    mean_waiting_ci: Interval = None  # type: ignore[assignment]  # set by simulate_jsq
    p_wait_ci: Interval = None  # type: ignore[assignment]  # set by simulate_jsq
    p_full_ci: Interval = None  # type: ignore[assignment]  # set by simulate_jsq
    batches: int = 0
    batch_length: float = float("nan")
    corr_length: float = float("nan")
    batch_lag1: float = float("nan")
    se_reliable: bool = True
    batch_averages: np.ndarray = None
    stream: str = ""

    @property
    def occupancy(self):
        """``(1, E Q_1/n, E Q_2/n, E Q_3/n)`` over the window."""
        n = self.n
        return np.array([1.0, 1.0 - self.mean_idle / n, self.mean_q2 / n, self.mean_q3 / n])

    @property
    def occupancy_se(self):
        """Batch-means standard errors of :attr:`occupancy` (0 for ``q(0) = 1``)."""
        n = self.n
        return np.array([0.0, self.mean_idle_se / n, self.mean_q2_se / n, self.mean_q3_se / n])

    @property
    def response_time(self):
        """``E[N]/λ_n`` (Little's law), ``N = n − (n − Q_1) + (N − Q_1)``."""
        return (self.n - self.mean_idle + self.mean_waiting) / self.lam_total

    @property
    def response_time_se(self):
        """Batch-means standard error of :attr:`response_time`."""
        b = self.batch_averages
        if b is None or b.shape[0] < 2:
            return float("nan")
        x = (self.n - b[:, 0] + b[:, 3]) / self.lam_total
        return float(x.std(ddof=1) / math.sqrt(x.size))

    def __post_init__(self):
        # the per-quantity intervals are stored as Interval (unpack as before; call for a level)
        df = self.batches - 1 if self.batches else 0
        for name in ("mean_idle", "mean_q2", "mean_q3", "mean_waiting", "p_wait", "p_full"):
            ci = getattr(self, name + "_ci")
            if ci is not None and not isinstance(ci, Interval):
                object.__setattr__(self, name + "_ci", Interval(ci, getattr(self, name),
                                                                getattr(self, name + "_se"), df))

    @property
    def mean_queue_length(self) -> float:
        """Mean number of tasks per server ``E[N]/n`` (``= (λ_n/n) response_time``)."""
        return (self.n - self.mean_idle + self.mean_waiting) / self.n

    @property
    def mean_queue_length_se(self) -> float:
        """Its batch-means standard error."""
        return self.response_time_se * self.lam



_JSQ_FINE = 4000   # slices of simulate_jsq's window (batch means group them)


def _jsq_batch_fields(acc, arr, warr, window, batches):
    """The standard errors, intervals and batch diagnostics of a
    :class:`~qlib.halfin_whitt.simulate.JSQResult` from the kernel's per-slice integrals ``acc`` (shape
    ``(nfine, 5)``), arrivals ``arr`` and waiting arrivals ``warr``.

    The batches are :func:`qlib.stats.slice_batches <qlib.stats.batch.slice_batches>` (the rules shared with
    :func:`qlib.simulate <qlib.sim.run.simulate>`) on the five time averages and on the linearised
    ratio ``warr − p̂ arr`` of ``p_wait``: batches of at least
    ``max(20 L, 80 τ)``, 10 to 20 of them, a family-wise 1 % lag-1 test
    (reported), and a warning when the window is too short. With an int, every slice is a batch (``nfine ==
    batches``).
    """
    from qlib import stats
    nf = acc.shape[0]
    dt = window / nf
    x = acc / dt                                   # per-slice time averages
    A = arr.sum()
    R = float(warr.sum() / A) if A > 0 else float("nan")
    lin = warr - (R if A > 0 else 0.0) * arr       # p_wait's linearised residual
    sb = stats.slice_batches(np.column_stack([x, lin]), window, batches=batches, stacklevel=3,
                             instead="run several seeds and combine them (qlib.stats.replication_ci)")
    k = sb.n_batches
    xb = sb.means(x)
    ab = sb.sums(arr)
    zb = sb.sums(lin)
    se = xb.std(axis=0, ddof=1) / math.sqrt(k)
    # delta method for the ratio Σ warr / Σ arr: the batch residuals
    # Σ_b (warr − p̂ arr) over the mean arrivals per batch
    p_se = float(zb.std(ddof=1) / math.sqrt(k) / ab.mean()) if A > 0 else float("nan")
    tq = float(stats.t_quantile(0.975, k - 1))
    means = x.mean(axis=0)
    ci = [(float(m - tq * s), float(m + tq * s)) for m, s in zip(means, se)]
    return dict(
        se=[float(s) for s in se], ci=ci, p_wait=R, p_wait_se=p_se,
        p_wait_ci=(R - tq * p_se, R + tq * p_se), batches=int(k),
        batch_length=float(sb.batch_length), corr_length=float(sb.corr_length),
        batch_lag1=float(sb.lag1), se_reliable=bool(sb.reliable), batch_averages=xb)


def _uniformized_grid(t_end: float, burn_in: float, batches: int | None) -> tuple[int, int]:
    """The uniformized kernel's cells in the window and before ``burn_in``."""
    # the same cells with or without batches (so is its stream) where batches divides
    # _JSQ_FINE; its slices are summed per batch
    nfine = _JSQ_FINE if batches is None else batches * math.ceil(_JSQ_FINE / batches)
    # the cells before burn_in: as long as the window's slices, at most nfine of them
    nburn = min(nfine, math.ceil(burn_in * nfine / (t_end - burn_in))) if burn_in > 0 else 0
    return nfine, nburn


def simulate_jsq(n: int, beta: float, *, t_end: float, burn_in: float = 0.0, seed: Seed = None,
                 initial: object = None, record_dt: float | None = None,
                 batches: int | None = None, max_waits: int = 100_000,
                 capacity: int = 64, progress: bool = False,
                 kernel: str = "auto") -> JSQResult:
    """Simulate JSQ on ``n`` servers (complete graph) in the Halfin–Whitt regime.

    Exact simulation of the occupancy chain ``(Q_1, Q_2, …)`` with arrival
    rate ``λ_n = n − β√n`` and Exp(1) services; each event costs O(1) (a
    departure scans the levels in use, a handful). Two kernels simulate the
    same chain, exactly in law, from different random streams (see
    ``kernel`` and *Kernels*); by default the faster one.

    Parameters
    ----------
    n : int
        Number of servers, ``n >= 1``.
    beta : float
        Halfin–Whitt parameter, ``0 < beta < √n``.
    t_end : float
        Length of the run, ``t_end > burn_in``.
    burn_in : float, optional
        Statistics are taken over ``[burn_in, t_end]``.
    seed : None, int, numpy.random.SeedSequence or numpy.random.Generator
        Same seed, same run.
    initial : sequence of int, optional
        Initial counts ``(Q_1, Q_2, …)``, non-increasing, ``≤ n``;
        ``None``: the empty system.
    record_dt : float, optional
        Grid step for the scaled paths (from ``t = 0``).
    batches : int, optional
        Default ``None``: the batch length follows the correlation length
        measured on the run (see *Standard errors*), and a
        ``RuntimeWarning`` says when the run is too short. An int ``>= 2``
        forces that many equal batches (the scheme before issue 22, then
        ``batches=20``), with no check that they are long enough.
    max_waits : int
        At most this many waiting times are kept.
    capacity : int
        Largest queue length the kernel can hold.
    progress : bool, default False
        Show a tqdm progress bar over simulated time (the run is cut into
        slices; the result is the same, bit for bit).
    kernel : {"auto", "uniformized", "event"}, default "auto"
        ``"uniformized"``: the chain uniformized at the constant rate
        ``λ_n + n``, one uniform per step and the holding times summed per
        cell (stream ``"uniformized-1"``, :data:`UNIFORMIZED_STREAM`);
        ``"event"``: one exponential holding time per event (stream
        ``"event-1"``, :data:`EVENT_STREAM`, the numbers of qlib 0.2 bit for
        bit). Both are exact in law (see *Kernels*). ``"auto"`` takes the
        uniformized kernel where it pays, 3 to 4 times less CPU per event at
        ``β = 1`` and ``n = 10^2 … 10^6``
        (``benchmarks/bench_simulate_jsq.py``), and the event kernel where
        it would not: when the uniformization's self-loops are many,
        ``λ_n + n > 4 λ_n`` (over two steps per event of the chain, which
        jumps at rate ``λ_n + E[Q_1] = 2 λ_n`` in stationarity; that is
        ``β√n > 2n/3``), or when its grid's cells are short,
        ``(λ_n + n) t_end`` below 4 steps per cell on average (the cells:
        the 4000 slices of the window, as many before ``burn_in``, and the
        ``record_dt`` points; a fine ``record_dt`` in a short run). The
        result's ``stream`` says which ran.

    Returns
    -------
    JSQResult

    Notes
    -----
    A task that joins a queue holding ``k >= 1`` tasks waits, under FIFO, for
    the residual service of the task in service plus the ``k − 1`` services
    ahead.  Services are i.i.d. Exp(1) and independent of the past, and the
    residual is Exp(1) by memorylessness, so the wait is exactly Gamma(k, 1)
    in distribution; it is drawn at arrival.  (This is exact for each wait's
    law; the draw is not coupled to the later departures of the occupancy
    chain, which does not track which queue a task sits in.)

    Kernels (``kernel="auto"`` picks one by the rule above): the event kernel
    draws each holding time, Exp(``λ_n + Q_1``), and the kind of event. The uniformized kernel
    (the private module ``qlib.halfin_whitt._jsq_fast``) runs the chain's potential events at
    the constant rate ``Λ = λ_n + n``, a Poisson process independent of the
    states, each an arrival, a departure or (an idle server's) a self-loop by
    one uniform; the number of steps in each cell of a grid fixed by the
    inputs (the slices below, as many before ``burn_in``, the ``record_dt``
    points) is Poisson, so the state at every grid point, the arrivals,
    ``p_wait``, the waits and ``t_q3_zero`` are exact in law, and a time
    integral over a cell is its conditional mean given the steps,
    ``h/(m + 1)`` times the sum over the ``m + 1`` states the cell visits:
    the same mean from any start, with no more variance than the integral
    itself (``cumulative_wait`` and ``cum_wait_path`` too). No approximation.
    Its stream depends on the grid: not on ``progress``, nor on ``batches``
    where ``batches`` divides 4000 (the cells are the 4000 slices, summed per
    batch), but on ``record_dt`` (its points are cell ends), unlike the
    event kernel's, which neither changes.

    Standard errors: the window ``[burn_in, t_end]`` is cut into 4000
    slices, and the batches are groups of consecutive slices. By default
    :func:`qlib.stats.batch_means <qlib.stats.batch.batch_means>` measures the correlation length ``L`` on
    the slice averages of the five time averages and of ``p_wait``'s
    linearised ratio, and takes 10 to 20 batches of at least ``max(20 L, 80 τ)``
    each (``τ`` the integrated autocorrelation time).
    ``mean_*_se`` and ``p_full_se`` are the standard deviation of the batch
    means over ``√k``; ``p_wait_se`` is the delta-method (linearised ratio)
    error of ``Σ waiting arrivals / Σ arrivals`` over the same batches. The
    intervals ``*_ci`` use Student-t with ``k − 1`` degrees of freedom.

    Trust them when ``se_reliable`` is True: the window then holds 10 batches
    of ``max(20 L, 80 τ)`` (:func:`~qlib.stats.batch.reliable_window`; the
    lag-1 correlation of the batch means is reported, not part of the
    flag, since it selects against coverage). Otherwise a
    ``RuntimeWarning`` (never an exception) gives the window needed; the
    errors are then too small (correlated batches), and independent
    replications (:func:`qlib.stats.replication_ci <qlib.stats.intervals.replication_ci>`) are the honest choice.
    Even then the intervals assume a stationary start: ``burn_in`` must be
    long against the relaxation from ``initial`` (test it with
    :func:`qlib.stats.burn_in_check <qlib.stats.burn_in.burn_in_check>`). Measured coverage of the 95 %
    intervals against the exact chain (:func:`~qlib.halfin_whitt.chain.stationary_jsq`) at
    ``n = 20``, 1000 seeds of the event kernel (``benchmarks/bench_simulate_se.py``;
    the uniformized kernel's chain has the same law, checked at 600 to 1500
    seeds in ``tests/test_simulate_jsq_se.py``): 0.935–0.95 for every
    quantity at ``β = 2`` (window 3000, about 2000 ``L``) and at ``β = 0.5``
    (window 20 000, about 1500 ``L``); at ``β = 0.5`` and a window of 5000
    (about 400 ``L``, ``se_reliable`` in most runs) ``E[N − Q_1]`` covers
    only about 0.91 (its correlation tail is longer than the measured ``L``
    and its batch means are skewed), the other quantities 0.93–0.94. For a
    slowly mixing chain (small ``β``) prefer windows of thousands of ``L``.

    Examples
    --------
    >>> from qlib import simulate_jsq
    >>> r = simulate_jsq(50, 1.0, t_end=4100, burn_in=100, seed=1)
    >>> r.n, r.response_time_ci.level, r.stream
    (50, 0.95, 'uniformized-1')
    >>> bool(r.p_wait_ci.low < r.p_wait < r.p_wait_ci.high)
    True

    The event kernel's stream (the numbers of qlib 0.2), asked for, and
    taken by ``"auto"`` where the grid is too fine to pay (a ``record_dt`` of
    0.001 here: under 0.1 steps per cell):

    >>> simulate_jsq(50, 1.0, t_end=4100, burn_in=100, seed=1, kernel="event").stream
    'event-1'
    >>> simulate_jsq(50, 1.0, t_end=20, seed=1, record_dt=0.001, batches=2).stream
    'event-1'
    """
    n = _check_n(n)
    beta = _check_beta(beta, n)
    t_end, burn_in = _check_times(t_end, burn_in)
    if not isinstance(kernel, str) or kernel not in _KERNELS:
        raise ValueError(f"kernel must be one of {_KERNELS}, got {kernel!r}")
    fast = kernel == "uniformized"
    if batches is not None:
        if isinstance(batches, bool) or not isinstance(batches, numbers.Integral):
            raise TypeError(f"batches must be None or an integer >= 2, got {batches!r}")
        if batches < 2:
            raise ValueError(f"batches must be None or an integer >= 2, got {batches!r}")
        batches = int(batches)
    if isinstance(max_waits, bool) or not isinstance(max_waits, numbers.Integral) \
            or max_waits < 0:
        raise ValueError(f"max_waits must be an integer >= 0, got {max_waits!r}")
    if isinstance(capacity, bool) or not isinstance(capacity, numbers.Integral) or capacity < 3:
        raise ValueError(f"capacity must be an integer >= 3, got {capacity!r}")
    capacity = int(capacity)
    V.check_arrays({"capacity": (capacity, 8 * capacity), "max_waits": (max_waits, 8 * max_waits)}, what="simulate_jsq's arrays")
    Q = np.zeros(capacity + 2, np.int64)
    Q[0] = n
    if initial is not None:
        q = V.occupancy_counts(initial, n, max_len=capacity, cap_name="capacity")
        Q[1:q.size + 1] = q
    if record_dt is not None:
        record_dt = _check_pos("record_dt", record_dt)
        nrec = int(math.floor(t_end / record_dt + 1e-9)) + 1
        V.check_memory(32 * nrec, "record_dt", record_dt, what=f"the {nrec} recorded points")
    else:
        nrec, record_dt = 0, 1.0
    seed32, entropy, ss = _seed32(seed)
    lam = n - beta * math.sqrt(n)
    w0 = time.perf_counter()
    nfine = _JSQ_FINE if batches is None else batches
    ufine, nburn = _uniformized_grid(t_end, burn_in, batches)
    if kernel == "auto":
        fast = _auto_uniformized(n, lam, t_end, ufine + nburn + nrec)
    if fast:
        nfine = ufine
    kern = F._uniformized_kernel if fast else _jsq_kernel
    compile_notice(kern, "simulate_jsq")
    acc, arr, warr = np.zeros((nfine, 5)), np.zeros(nfine), np.zeros(nfine)
    waits, paths = np.empty(int(max_waits)), np.zeros((nrec, 4))
    ist, fst = np.zeros(10, np.int64), np.zeros(5)
    bar = progress_bar(progress, t_end, "time", f"simulate_jsq n={n}", kernel=kern)
    if fast:
        # the counter's start: 62 further bits of the same SeedSequence
        ctr0 = int(ss.generate_state(2, np.uint64)[1]) >> 2
    try:
        for j, slice_end in enumerate(slice_ends(t_end, progress)):
            if fast:
                F._uniformized_kernel(seed32 if j == 0 else -1, ctr0, n, lam, t_end, burn_in, Q,
                                      capacity, nfine, nburn, record_dt, nrec, slice_end, acc, arr,
                                      warr, waits, paths, ist, fst)
            else:
                _jsq_kernel(seed32 if j == 0 else -1, n, lam, t_end, burn_in, Q, capacity, nfine,
                            record_dt, nrec, slice_end, acc, arr, warr, waits, paths, ist, fst)
            bar.update(slice_end - bar.n)
            if ist[_DONE if not fast else F._DONE]:
                break
    finally:
        bar.close()
    if fast:
        waits = waits[:ist[F._NW]]
        arrivals, overflow = ist[F._ARRS], ist[F._OVF]
        events = arrivals + ist[F._DEPS]
        cumw, t3 = fst[F._CUMW], fst[F._T3]
    else:
        waits = waits[:ist[_NW]]
        events, arrivals, cumw, t3, overflow = ist[_EV], ist[_ARRS], fst[_CUMW], fst[_T3], ist[_OVF]
    wall = time.perf_counter() - w0
    if overflow:
        raise RuntimeError(f"a queue exceeded capacity = {capacity}; rerun with a larger capacity")
    window = t_end - burn_in
    if nfine != (_JSQ_FINE if batches is None else batches):
        acc, arr, warr = (x.reshape((batches, -1) + x.shape[1:]).sum(axis=1) for x in (acc, arr, warr))
    f = _jsq_batch_fields(acc, arr, warr, window, batches)
    m = acc.sum(axis=0) / window
    se, ci = f["se"], f["ci"]
    times = np.arange(nrec) * record_dt if nrec else None
    return JSQResult(
        n=n, beta=beta, lam_total=lam, t_end=t_end, burn_in=burn_in,
        mean_idle=float(m[0]), mean_idle_se=se[0], mean_q2=float(m[1]),
        mean_q2_se=se[1], mean_q3=float(m[2]), mean_q3_se=se[2],
        mean_waiting=float(m[3]), mean_waiting_se=se[3],
        p_wait=f["p_wait"], p_wait_se=f["p_wait_se"], p_full=float(m[4]),
        p_full_se=se[4], mean_idle_ci=ci[0], mean_q2_ci=ci[1], mean_q3_ci=ci[2],
        mean_waiting_ci=ci[3], p_wait_ci=f["p_wait_ci"], p_full_ci=ci[4],
        batches=f["batches"], batch_length=f["batch_length"],
        corr_length=f["corr_length"], batch_lag1=f["batch_lag1"],
        se_reliable=f["se_reliable"], batch_averages=f["batch_averages"],
        waits=np.asarray(waits).copy(), cumulative_wait=float(cumw), times=times,
        x1=paths[:, 0].copy() if nrec else None,
        x2=paths[:, 1].copy() if nrec else None,
        x3=paths[:, 2].copy() if nrec else None,
        cum_wait_path=paths[:, 3].copy() if nrec else None,
        t_q3_zero=float(t3) if t3 >= 0 else float("nan"),
        final=Q[1:capacity + 1][Q[1:capacity + 1] > 0].copy(),
        events=int(events), arrivals=int(arrivals), wall_time=wall,
        seed=_seed_record(seed, entropy), stream=UNIFORMIZED_STREAM if fast else EVENT_STREAM)
