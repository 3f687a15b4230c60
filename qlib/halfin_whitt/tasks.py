"""JSQ on the complete graph, task by task: per-server FIFO queues.

:func:`qlib.halfin_whitt.simulate_jsq <qlib.halfin_whitt.simulate.simulate_jsq>` simulates the occupancy chain
``(Q_1, Q_2, …)``, which does not know which queue a task sits in; it draws a
waiting task's wait from the law that FIFO implies.  :func:`~qlib.halfin_whitt.tasks.simulate_tasks`
follows every task instead: ``n`` servers, each with its own FIFO queue,
Poisson arrivals of rate ``λ_n = n − β√n``, a service time drawn from Exp(1)
for each task when its service starts, and each arrival joins a shortest
queue, ties broken uniformly at random.  A task's waiting time (arrival to
start of service) and response time (arrival to departure) are *measured* on
the path, not drawn.

Cost per event: O(1) for the routing (servers are kept sorted by queue length
in one array, with the first index of each length, as in the occupancy chain)
and O(log n) for the departure heap (one pending departure per busy server).
Each server keeps the arrival times of its tasks in a ring buffer.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numba
import numpy as np

from qlib.stats._results import BatchIntervals, ResultIO
from qlib import _validate as V
from qlib.halfin_whitt._slices import progress_bar, slice_ends
from qlib.halfin_whitt._common import (_check_beta, _check_n, _check_pos, _check_times,
                                _seed32, _seed_record)
from typing import TYPE_CHECKING
if TYPE_CHECKING:   # names for the annotations only
    from numpy.typing import ArrayLike
    from qlib._types import Seed

__all__ = ["simulate_tasks", "TasksResult", "thinned_waits"]


@numba.njit(cache=True)
def _heap_push(ht, hs, size, t, s):
    i = size
    while i > 0:
        p = (i - 1) // 2
        if ht[p] <= t:
            break
        ht[i] = ht[p]
        hs[i] = hs[p]
        i = p
    ht[i] = t
    hs[i] = s
    return size + 1


@numba.njit(cache=True)
def _heap_pop(ht, hs, size):
    # remove the root; the caller has read ht[0], hs[0]
    size -= 1
    t, s = ht[size], hs[size]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and ht[c + 1] < ht[c]:
            c += 1
        if ht[c] >= t:
            break
        ht[i] = ht[c]
        hs[i] = hs[c]
        i = c
    if size > 0:
        ht[i] = t
        hs[i] = s
    return size


@numba.njit(cache=True)
def _tasks_init(seed, n, lam, X0, K, nbatch, max_waits):
    # the state of a fresh run (_tasks_run goes on from it): the draws of the
    # busy servers' first departures and of the first arrival
    np.random.seed(seed)
    # order: servers sorted by queue length; start[k]: first index of length k
    X = X0.copy()
    order = np.argsort(X, kind="mergesort").astype(np.int64)
    pos = np.empty(n, np.int64)
    for i in range(n):
        pos[order[i]] = i
    start = np.zeros(K + 2, np.int64)
    for k in range(K + 2):
        start[k] = np.searchsorted(X[order], k)
    m = 0
    while start[m + 1] == start[m]:
        m += 1
    # FIFO ring buffers: arrival time and record slot (-1: untagged task)
    buf_a = np.zeros((n, K))
    buf_b = np.full((n, K), -1, np.int64)    # batch of a tagged task
    buf_r = np.full((n, K), -1, np.int64)    # row in the waiting-task record
    head = np.zeros(n, np.int64)
    ht = np.empty(n)
    hs = np.empty(n, np.int64)
    size = 0
    N = 0
    for s in range(n):
        N += X[s]
        if X[s] > 0:
            size = _heap_push(ht, hs, size, np.random.exponential(1.0), s)
    # per batch: arrivals, waiting arrivals, Σ wait, Σ response, Σ wait², Σ resp²
    tk = np.zeros((nbatch, 6))
    # per batch time integrals: N, N − Q_1, 1{Q_1 = n}, Q_2, Q_3
    ti = np.zeros((nbatch, 5))
    rec = np.full((max_waits, 4), np.nan)    # arrival, ahead, wait, response
    nw = 0
    t = 0.0
    t_arr = np.random.exponential(1.0 / lam)
    ist = np.array([m, size, N, nw, 0, 0, 0, 0], np.int64)   # see _tasks_run
    fst = np.array([t, t_arr])
    return X, order, pos, start, buf_a, buf_b, buf_r, head, ht, hs, tk, ti, rec, ist, fst


@numba.njit(cache=True)
def _tasks_run(n, lam, t_end, burn_in, K, nbatch, slice_end, X, order, pos, start, buf_a,
               buf_b, buf_r, head, ht, hs, tk, ti, rec, ist, fst):
    # nbatch equal slices of the window; the Python layer groups them into batches.
    # Goes on from ist = (m, size, N, nw, pending, events, overflow, done) and
    # fst = (t, t_arr) until the first event at or after slice_end (no draw is
    # made before it, so slicing the horizon changes nothing) or the end.
    max_waits = rec.shape[0]
    m, size, N, nw, pending, events, overflow = ist[0], ist[1], ist[2], ist[3], ist[4], ist[5], ist[6]
    t, t_arr = fst[0], fst[1]
    blen = (t_end - burn_in) / nbatch
    done = 1
    while True:
        arrival = t_arr <= t_end and (size == 0 or t_arr < ht[0])
        if not arrival and size == 0:
            break
        te = t_arr if arrival else ht[0]
        if slice_end < t_end and te >= slice_end:
            done = 0
            break
        # time integrals over [t, te] ∩ [burn_in, t_end]
        a = t if t > burn_in else burn_in
        e_all = te if te < t_end else t_end
        q1 = n - start[1]
        while a < e_all:
            b = min(int((a - burn_in) / blen), nbatch - 1)
            while b < nbatch - 1 and burn_in + (b + 1) * blen <= a:
                b += 1   # guard against rounding at a batch boundary
            e = burn_in + (b + 1) * blen
            if e > e_all or b == nbatch - 1:
                e = e_all
            d = e - a
            ti[b, 0] += d * N
            ti[b, 1] += d * (N - q1)
            if q1 == n:
                ti[b, 2] += d
            ti[b, 3] += d * (n - start[2])
            ti[b, 4] += d * (n - start[3])
            a = e
        t = te
        if not arrival and t > t_end and pending == 0:
            break
        events += 1
        if arrival:
            t_arr = t + np.random.exponential(1.0 / lam)
            k = m
            if k + 1 > K - 1:
                overflow = 1
                break
            lo, cnt = start[k], start[k + 1] - start[k]
            s = order[lo + int(np.random.random() * cnt)]
            # move s to the end of bucket k, which becomes the start of bucket k+1
            j = start[k + 1] - 1
            o = order[j]
            order[j], order[pos[s]] = s, o
            pos[o], pos[s] = pos[s], j
            start[k + 1] -= 1
            if start[k + 1] == start[k]:
                m = k + 1
            slot = (head[s] + k) % K
            buf_a[s, slot] = t
            buf_b[s, slot] = -1
            buf_r[s, slot] = -1
            if t >= burn_in:
                b = int((t - burn_in) / blen)
                if b >= nbatch:
                    b = nbatch - 1
                buf_b[s, slot] = b
                pending += 1
                tk[b, 0] += 1
                if k >= 1:
                    tk[b, 1] += 1
                    if nw < max_waits:
                        rec[nw, 0] = t
                        rec[nw, 1] = k
                        buf_r[s, slot] = nw
                        nw += 1
            X[s] = k + 1
            N += 1
            if k == 0:   # service starts at once: wait 0
                size = _heap_push(ht, hs, size, t + np.random.exponential(1.0), s)
        else:
            s = hs[0]
            size = _heap_pop(ht, hs, size)
            k = X[s]
            h = head[s]
            b = buf_b[s, h]
            if b >= 0:
                resp = t - buf_a[s, h]
                tk[b, 3] += resp
                tk[b, 5] += resp * resp
                pending -= 1
                r = buf_r[s, h]
                if r >= 0:
                    rec[r, 3] = resp
            head[s] = (h + 1) % K
            # move s to the start of bucket k, which becomes the end of bucket k-1
            j = start[k]
            o = order[j]
            order[j], order[pos[s]] = s, o
            pos[o], pos[s] = pos[s], j
            start[k] += 1
            if k - 1 < m:
                m = k - 1
            X[s] = k - 1
            N -= 1
            if k > 1:    # the next task starts service now
                h = head[s]
                b = buf_b[s, h]
                if b >= 0:
                    w = t - buf_a[s, h]
                    tk[b, 2] += w
                    tk[b, 4] += w * w
                    r = buf_r[s, h]
                    if r >= 0:
                        rec[r, 2] = w
                size = _heap_push(ht, hs, size, t + np.random.exponential(1.0), s)
    ist[0], ist[1], ist[2], ist[3], ist[4], ist[5], ist[6] = m, size, N, nw, pending, events, overflow
    ist[7] = done
    fst[0], fst[1] = t, t_arr


@dataclass(frozen=True, repr=False, eq=False)
class TasksResult(BatchIntervals, ResultIO):
    """Result of :func:`~qlib.halfin_whitt.tasks.simulate_tasks`.

    Tasks are *tagged* when they arrive in ``[burn_in, t_end]``; every tagged
    task is followed to its departure (after ``t_end`` arrivals stop, which
    under FIFO cannot change a tagged task's wait or response).  Task
    statistics are grouped by the batch of the arrival time; time averages
    are over ``[burn_in, t_end]`` in the same ``batches`` equal batches.

    The names every simulator's result shares (:mod:`qlib.sim.result`):
    ``occupancy`` = ``(1, E Q_1/n, E Q_2/n, E Q_3/n)`` (time averages;
    higher levels are not measured), ``response_time`` = ``mean_response``
    (over tagged tasks), their batch-means standard errors
    ``occupancy_se`` and ``response_time_se`` (for the ratio
    ``Σ response / Σ arrivals`` by the delta method over the batches), and
    the Student-t intervals ``occupancy_ci(level=0.95)`` (shape ``(2, 4)``,
    row 0 lower) and ``response_time_ci(level=0.95)`` with ``batches − 1``
    degrees of freedom.

    Attributes
    ----------
    n, beta, lam, t_end, burn_in : model and window
    arrivals, waiting : int
        Tagged tasks, and those that found every server busy (they wait).
    p_wait : float
        ``waiting / arrivals``, the fraction of tagged tasks that waited.
    mean_wait, mean_response : float
        Mean waiting and response time over all tagged tasks.
    mean_wait_given_wait : float
        Mean wait of the tagged tasks that waited (``nan`` if none).
    mean_tasks, mean_waiting, p_full, mean_q2, mean_q3 : float
        Time averages of ``N`` (tasks in the system), ``N − Q_1`` (tasks
        waiting), ``1{Q_1 = n}``, ``Q_2`` and ``Q_3``.
    batch_tasks : ndarray, shape (batches, 6)
        Per batch of arrival times: arrivals, waiting arrivals, Σ wait,
        Σ response, Σ wait², Σ response².
    batch_time : ndarray, shape (batches, 5)
        Per batch: the time integrals of ``N``, ``N − Q_1``, ``1{Q_1 = n}``,
        ``Q_2``, ``Q_3`` (divide by ``batch_length``).
    batch_length : float
    wait_arrival, wait_ahead, wait_time, wait_response : ndarray
        For the first ``max_waits`` tagged tasks that waited, in order of
        arrival: arrival time, number of tasks ahead in the joined queue
        (``≥ 1``), waiting time, response time.
    final : ndarray
        Queue length of every server when the run stopped.
    events, wall_time, seed
    batches : int
        Number of batches behind the standard errors (``batch_tasks.shape[0]``).
    se_reliable : bool
        Whether the window holds 10 batches of ``max(20 L, 80 τ)``
        (:func:`~qlib.stats.batch.reliable_window`; the lag-1 test of the
        batch means is reported, not part of the flag); True when nothing was
        checked (a fixed number of equal batches, the caller's responsibility).
    """

    n: int
    beta: float
    lam_total: float
    t_end: float
    burn_in: float
    arrivals: int
    waiting: int
    p_wait: float
    mean_wait: float
    mean_response: float
    mean_wait_given_wait: float
    mean_tasks: float
    mean_waiting: float
    p_full: float
    mean_q2: float
    mean_q3: float
    batch_tasks: np.ndarray
    batch_time: np.ndarray
    batch_length: float
    wait_arrival: np.ndarray
    wait_ahead: np.ndarray
    wait_time: np.ndarray
    wait_response: np.ndarray
    final: np.ndarray
    events: int
    wall_time: float
    seed: object
    batches: int = 0
    se_reliable: bool = True

    def __post_init__(self):
        if not self.batches:
            object.__setattr__(self, "batches", int(self.batch_tasks.shape[0]))

    def _batch_occupancy(self):
        x = self.batch_time / self.batch_length    # N, N − Q_1, 1{Q_1 = n}, Q_2, Q_3
        n = self.n
        return np.column_stack([np.ones(x.shape[0]), (x[:, 0] - x[:, 1]) / n,
                                x[:, 3] / n, x[:, 4] / n])

    @property
    def occupancy(self):
        """``(1, E Q_1/n, E Q_2/n, E Q_3/n)`` over the window."""
        n = self.n
        return np.array([1.0, (self.mean_tasks - self.mean_waiting) / n,
                         self.mean_q2 / n, self.mean_q3 / n])

    @property
    def occupancy_se(self):
        """Batch-means standard errors of :attr:`occupancy`."""
        b = self._batch_occupancy()
        return b.std(axis=0, ddof=1) / math.sqrt(b.shape[0])

    @property
    def response_time(self):
        """Mean response time of the tagged tasks (``mean_response``)."""
        return self.mean_response

    @property
    def response_time_se(self):
        """Delta-method batch-means s.e. of ``Σ response / Σ arrivals``."""
        a, r = self.batch_tasks[:, 0], self.batch_tasks[:, 3]
        if a.sum() == 0:
            return float("nan")
        z = r - self.mean_response * a
        return float(z.std(ddof=1) / math.sqrt(z.size) / a.mean())

    @property
    def mean_queue_length(self) -> float:
        """Mean number of tasks per server ``E[N]/n`` (time average)."""
        return self.mean_tasks / self.n

    @property
    def mean_queue_length_se(self) -> float:
        """Its batch-means standard error."""
        x = self.batch_time[:, 0] / self.batch_length / self.n
        return float(x.std(ddof=1) / math.sqrt(x.size))


def _check_int(name, x, lo):
    return V.integer(x, name, lo=lo)


_TASKS_FINE = 4000   # slices of simulate_tasks' window (batch means group them)


def _tasks_batches(tk, ti, window, batches):
    """The batches of :func:`~qlib.halfin_whitt.tasks.simulate_tasks`: :func:`qlib.stats.slice_batches
    <qlib.stats.batch.slice_batches>` on the slice time averages ``ti`` and the
    linearised residuals of the task ratios in ``tk`` (with an int
    ``batches``, every slice is a batch)."""
    from qlib import stats
    nf = ti.shape[0]
    a = tk[:, 0]
    A = a.sum()
    ratios = tk[:, 1:4].sum(axis=0) / A if A > 0 else np.zeros(3)
    lin = tk[:, 1:4] - a[:, None] * ratios          # waiting, Σ wait, Σ response
    return stats.slice_batches(np.column_stack([ti / (window / nf), lin]), window,
                               batches=batches, stacklevel=3,
                               instead="run several seeds and combine them (qlib.stats.replication_ci)")


def simulate_tasks(n: int, beta: float, *, t_end: float, burn_in: float = 0.0, seed: Seed = None,
                   initial: ArrayLike | None = None,
                   batches: int | None = None, max_waits: int = 1_000_000,
                   capacity: int = 32, progress: bool = False) -> TasksResult:
    """Follow every task of JSQ on ``n`` servers with per-server FIFO queues.

    Exact event-driven simulation: Poisson arrivals of rate
    ``λ_n = n − β√n``; an arrival joins a shortest queue (ties uniformly at
    random); each server serves its queue in FIFO order, a task's service
    time is Exp(1), drawn when its service starts.  The waiting time (arrival
    to start of service) and response time (arrival to departure) of every
    task that arrives in ``[burn_in, t_end]`` are measured.

    Parameters
    ----------
    n : int
        Number of servers, ``n >= 1``.
    beta : float
        Halfin–Whitt parameter, ``0 < beta < √n``.
    t_end : float
        End of the arrival window, ``t_end > burn_in``.
    burn_in : float, optional
        Tasks arriving before ``burn_in`` are not recorded.
    seed : None, int, numpy.random.SeedSequence or numpy.random.Generator
        Same seed, same run.
    initial : array_like of int, optional
        Initial occupancy counts ``(Q_1, Q_2, …)``, non-increasing, ``≤ n``
        (server ``j`` starts with ``#{i : Q_i > j}`` tasks); ``None``: empty.
    batches : int, optional
        Default ``None``: the automatic rule of
        :func:`qlib.stats.slice_batches <qlib.stats.batch.slice_batches>`
        (the one :func:`~qlib.halfin_whitt.simulate.simulate_jsq` uses): the
        window is cut into 4000 slices, the correlation length ``L`` is
        measured on the slice averages of ``N``, ``N − Q_1``,
        ``1{Q_1 = n}``, ``Q_2``, ``Q_3`` and on the linearised residuals of
        the three task ratios (waiting arrivals, Σ wait and Σ response
        against arrivals), and ``batch_tasks``, ``batch_time`` hold 10 to 20
        batches of at least ``max(20 L, 80 τ)`` (the oldest rest of slices, fewer than
        20 of 4000, is left out of the batches, not of the means).  A
        ``RuntimeWarning`` says when the window is too short for that.  An
        int ``>= 2`` forces that many equal batches, unchecked (use it when
        the batches are only a time grid, e.g. for a burn-in check over
        independent replications).
    max_waits : int
        At most this many waiting tasks are recorded one by one.
    capacity : int
        Largest queue length a server can hold (``>= 2``); RuntimeError if
        exceeded.
    progress : bool, default False
        Show a tqdm progress bar over simulated time (the run is cut into
        slices; the result is the same, bit for bit).

    Returns
    -------
    TasksResult

    Raises
    ------
    TypeError, ValueError
        For a bad argument, naming it.
    RuntimeError
        If a queue would exceed ``capacity``.

    Examples
    --------
    >>> r = simulate_tasks(1, 0.5, t_end=2000.0, burn_in=50.0, seed=1)
    >>> abs(r.p_wait - 0.5) < 0.05       # M/M/1 at ρ = 0.5
    True
    """
    n = _check_n(n)
    beta = _check_beta(beta, n)
    t_end, burn_in = _check_times(t_end, burn_in)
    if batches is not None:
        batches = _check_int("batches", batches, 2)
    max_waits = _check_int("max_waits", max_waits, 0)
    capacity = _check_int("capacity", capacity, 2)
    V.check_arrays({"n": (n, n * (24 * (capacity + 1) + 80)), "max_waits": (max_waits, 32 * max_waits)}, what="simulate_tasks' per-server FIFO queues")
    X0 = np.zeros(n, np.int64)
    if initial is not None:
        q = V.occupancy_counts(initial, n, max_len=capacity - 1, cap_name="capacity - 1")
        for qi in q:
            X0[:int(qi)] += 1
    seed32, entropy, _ = _seed32(seed)
    lam = n - beta * math.sqrt(n)
    w0 = time.perf_counter()
    nslice = _TASKS_FINE if batches is None else batches
    state = _tasks_init(seed32, n, lam, X0, capacity + 1, nslice, max_waits)
    X, tk, ti, rec, ist = state[0], state[10], state[11], state[12], state[13]
    bar = progress_bar(progress, t_end, "time", f"simulate_tasks n={n}", kernel=_tasks_run)
    try:
        for slice_end in slice_ends(t_end, progress):
            _tasks_run(n, lam, t_end, burn_in, capacity + 1, nslice, slice_end, *state)
            bar.update(slice_end - bar.n)
            if ist[7]:
                break
    finally:
        bar.close()
    rec, events, overflow = rec[:ist[3]], ist[5], ist[6]
    wall = time.perf_counter() - w0
    if overflow:
        raise RuntimeError(f"a queue exceeded capacity = {capacity}; rerun with a larger capacity")
    arr, wt = tk[:, 0].sum(), tk[:, 1].sum()
    nan = float("nan")
    window = t_end - burn_in
    tavg = ti.sum(axis=0) / window
    sb = _tasks_batches(tk, ti, window, batches)
    blen = float(sb.batch_length)
    return TasksResult(
        n=n, beta=beta, lam_total=lam, t_end=t_end, burn_in=burn_in,
        arrivals=int(arr), waiting=int(wt),
        p_wait=float(wt / arr) if arr else nan,
        mean_wait=float(tk[:, 2].sum() / arr) if arr else nan,
        mean_response=float(tk[:, 3].sum() / arr) if arr else nan,
        mean_wait_given_wait=float(tk[:, 2].sum() / wt) if wt else nan,
        mean_tasks=float(tavg[0]), mean_waiting=float(tavg[1]), p_full=float(tavg[2]),
        mean_q2=float(tavg[3]), mean_q3=float(tavg[4]),
        batch_tasks=sb.sums(tk), batch_time=sb.sums(ti), batch_length=blen,
        wait_arrival=rec[:, 0].copy(), wait_ahead=rec[:, 1].astype(np.int64),
        wait_time=rec[:, 2].copy(), wait_response=rec[:, 3].copy(),
        final=X, events=int(events), wall_time=wall, seed=_seed_record(seed, entropy))


def thinned_waits(result: TasksResult) -> tuple[np.ndarray, np.ndarray]:
    """Waits of waiting tasks thinned so that they are independent given their aheads.

    Keep a waiting task when it arrives after the previously kept task
    started service (greedy, in order of arrival).  The wait of a task that
    finds ``k`` tasks ahead is the residual service of the task in service
    plus ``k − 1`` full services, all started or drawn after its arrival, so
    by memorylessness it is Gamma(k, 1) given everything up to its arrival
    time, and the waits of the earlier kept tasks are known by then.  So
    ``U_i = G_{k_i}(W_i)`` (``G_k`` the Gamma(k, 1) distribution function,
    ``scipy.stats.gamma.cdf(waits, ahead)``) is Uniform(0, 1) and
    independent of ``U_1, …, U_{i−1}``: the ``U_i`` are an i.i.d. uniform
    sample, exactly, at every ``n``.

    Parameters
    ----------
    result : TasksResult
        A run of :func:`~qlib.halfin_whitt.tasks.simulate_tasks` (its recorded waiting tasks).

    Returns
    -------
    waits, ahead : ndarray
        The kept waits and the number of tasks ahead of each.
    """
    if not isinstance(result, TasksResult):
        raise TypeError(f"result must be a TasksResult, got {type(result).__name__}")
    a, w = result.wait_arrival, result.wait_time
    keep = np.zeros(a.size, bool)
    free = -np.inf
    for i in range(a.size):
        if a[i] > free:
            keep[i] = True
            free = a[i] + w[i]
    return w[keep].copy(), result.wait_ahead[keep].copy()
