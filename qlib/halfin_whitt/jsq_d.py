"""simulate_jsq_d: JSQ(d) at the same load, d servers sampled without replacement, independent replications."""
from __future__ import annotations

import math
import numbers
import time
import numba
import numpy as np
from dataclasses import dataclass

from qlib.stats._results import BatchIntervals, ResultIO
from qlib import _validate as V
from qlib.halfin_whitt._slices import progress_bar, slice_ends
from qlib.halfin_whitt._common import _check_beta, _check_times, _seed32, _seed_record
from typing import TYPE_CHECKING
if TYPE_CHECKING:   # names for the annotations only
    from collections.abc import Sequence
    from qlib._types import Seed

__all__ = ['simulate_jsq_d', 'JSQdResult']


def _sample_table(n, d):
    """``h[m] = C(m, d)/C(n, d)``, ``m = 0..n``: the chance that ``d`` servers
    drawn without replacement all lie among ``m`` given ones."""
    from scipy.special import gammaln
    m = np.arange(n + 1, dtype=float)
    h = np.zeros(n + 1)
    ok = m >= d
    logc = gammaln(m[ok] + 1) - gammaln(m[ok] - d + 1)
    h[ok] = np.exp(logc - logc[-1])
    h[n] = 1.0
    return h


@numba.njit(cache=True)
def _jsq_d_kernel(seed, lam, H, t_end, burn_in, Q, nblocks, out, slice_end, st, fst):
    """Occupancy chains of JSQ(d) for several ``d`` on common random numbers.

    Row ``j`` of ``H`` is ``_sample_table`` for the ``j``-th ``d``; row
    ``j`` of ``Q`` its occupancy: ``Q[j, 0] = n``, ``Q[j, i]`` = number of
    queues with ``>= i`` tasks, ``Q[j, K+1] = 0`` a sentinel.  Events come at
    the constant rate ``λ + n`` (uniformization): an arrival with chance
    ``λ/(λ + n)``, else a departure candidate ``x`` uniform on ``[0, n)``,
    a real departure in chain ``j`` when ``x < Q_1``.  An arrival joins a queue
    of length ``>= i`` when ``v < H[j, Q_i]`` (all ``d`` sampled queues are
    that long), so its level is found by walking up from ``i = 1``; a
    departure leaves a queue of length exactly ``i`` when
    ``Q_1 − Q_i <= x < Q_1 − Q_{i+1}``.  All chains use the same ``(x, v)``:
    each is exact in law, and they stay close when their policies are.
    ``out[j, k]`` accumulates, over block ``k`` of ``[burn_in, t_end]``, the
    integrals of ``H[j, Q_1]`` (an arrival waits), ``Q_1``, ``Q_2``, ``Q_3``
    and ``N = Σ Q_i``.  ``st = (events, overflow, pending, done)`` and
    ``fst = (t, pending event time)`` carry the run from one call to the next:
    ``seed >= 0`` starts it, ``seed < 0`` goes on (numba's thread-local random
    stream goes on too); a call returns at the first event at or after
    ``slice_end`` (kept pending) or at ``t_end``, so slicing the horizon
    (``progress=True``) gives the draws and sums of one call.
    """
    if seed >= 0:
        np.random.seed(seed)
        st[:] = 0
        fst[:] = 0.0
    m = Q.shape[0]
    K = Q.shape[1] - 2
    n = Q[0, 0]
    blen = (t_end - burn_in) / nblocks
    N = np.zeros(m, np.int64)
    for j in range(m):
        for i in range(1, K + 1):
            N[j] += Q[j, i]
    rate = lam + n
    t, tn = fst[0], fst[1]
    events, pend = st[0], st[2]
    while True:
        if pend:
            pend = 0
        else:
            tn = t - math.log(1.0 - np.random.random()) / rate
            if slice_end <= tn < t_end:
                st[0], st[2], fst[0], fst[1] = events, 1, t, tn
                return
        a = max(t, burn_in)
        b = min(tn, t_end)
        while a < b:
            k = min(int((a - burn_in) / blen), nblocks - 1)
            while k < nblocks - 1 and burn_in + (k + 1) * blen <= a:
                k += 1  # rounding put a on the boundary below it
            e = b if k == nblocks - 1 else min(b, burn_in + (k + 1) * blen)
            w = e - a
            for j in range(m):
                out[j, k, 0] += w * H[j, Q[j, 1]]
                out[j, k, 1] += w * Q[j, 1]
                out[j, k, 2] += w * Q[j, 2]
                out[j, k, 3] += w * Q[j, 3]
                out[j, k, 4] += w * N[j]
            a = e
        if tn >= t_end:
            st[0], st[3] = events, 1
            return
        t = tn
        events += 1
        u = np.random.random() * rate
        v = np.random.random()
        if u < lam:
            for j in range(m):
                i = 1
                while i <= K and v < H[j, Q[j, i]]:
                    i += 1
                if i > K:
                    st[0], st[1], st[3] = events, 1, 1
                    return
                Q[j, i] += 1
                N[j] += 1
        else:
            x = u - lam
            for j in range(m):
                if x < Q[j, 1]:
                    i = 1
                    while x >= Q[j, 1] - Q[j, i + 1]:
                        i += 1
                    Q[j, i] -= 1
                    N[j] -= 1


@dataclass(frozen=True, repr=False, eq=False)
class JSQdResult(BatchIntervals, ResultIO):
    """Result of :func:`~qlib.halfin_whitt.jsq_d.simulate_jsq_d`.

    Per replication, time averages over ``[burn_in, t_end]`` (shape
    ``(replications,)`` for one ``d``, ``(replications, len(d))`` for a
    sequence): ``p_wait`` = the time average of ``C(Q_1, d)/C(n, d)``, the
    chance that all ``d`` sampled servers are busy, which by PASTA is the
    fraction of arrivals that wait; ``mean_q1``, ``mean_q2``, ``mean_q3`` and
    ``mean_tasks = E[N]``; ``mean_wait = E[N − Q_1]/λ_n`` (Little's law) and
    ``cond_wait = mean_wait / p_wait`` (the mean wait of a task that waits).
    ``blocks``: shape ``(replications, nblocks, 5)`` (one ``d``) or
    ``(replications, len(d), nblocks, 5)``: the five time averages
    ``(p_wait, Q_1, Q_2, Q_3, N)`` over ``nblocks`` equal blocks of the
    window, for :func:`qlib.stats.burn_in_check <qlib.stats.burn_in.burn_in_check>`.  ``events``: total over
    replications (uniformized: dummy events included).

    The names every simulator's result shares (:mod:`qlib.sim.result`), as
    means over the replications: ``occupancy`` = ``(1, E Q_1/n, E Q_2/n,
    E Q_3/n)`` (shape ``(4,)``, or ``(len(d), 4)`` for a sequence; higher
    levels are not measured) and ``response_time = E[N]/λ_n`` (Little's
    law); ``occupancy_se``, ``response_time_se`` and the Student-t intervals
    ``occupancy_ci(level=0.95)`` (row 0 lower) and
    ``response_time_ci(level=0.95)`` over the replications; ``batches`` is
    the number of replications (the intervals have ``batches − 1`` degrees
    of freedom) and ``se_reliable`` is always True (independent
    replications need no batch-length condition; burn-in is tested with
    ``blocks``).
    """

    n: int
    beta: float
    d: object
    lam_total: float
    t_end: float
    burn_in: float
    p_wait: np.ndarray
    mean_q1: np.ndarray
    mean_q2: np.ndarray
    mean_q3: np.ndarray
    mean_tasks: np.ndarray
    mean_wait: np.ndarray
    cond_wait: np.ndarray
    blocks: np.ndarray
    events: int
    wall_time: float
    seed: object

    def _occ_reps(self):
        n = self.n
        q = np.stack([np.ones_like(self.mean_q1), self.mean_q1 / n, self.mean_q2 / n,
                      self.mean_q3 / n], axis=-1)
        return q                                   # (replications, [len(d),] 4)

    @property
    def batches(self):
        """The number of replications (independent means behind every s.e.)."""
        return int(np.shape(self.p_wait)[0])

    @property
    def se_reliable(self):
        """True: independent replications need no batch-length condition."""
        return True

    @property
    def occupancy(self):
        """Mean over replications of ``(1, E Q_1/n, E Q_2/n, E Q_3/n)``."""
        return self._occ_reps().mean(axis=0)

    @property
    def occupancy_se(self):
        """Standard error over replications of :attr:`occupancy`."""
        return self._occ_reps().std(axis=0, ddof=1) / math.sqrt(self.batches)

    @property
    def response_time(self):
        """Mean over replications of ``E[N]/λ_n`` (Little's law)."""
        return np.mean(self.mean_tasks / self.lam_total, axis=0)

    @property
    def response_time_se(self):
        """Standard error over replications of :attr:`response_time`."""
        return np.std(self.mean_tasks / self.lam_total, axis=0, ddof=1) / math.sqrt(self.batches)

    @property
    def mean_queue_length(self):
        """Mean over replications of ``E[N]/n`` (tasks per server; one per ``d``)."""
        return np.mean(self.mean_tasks / self.n, axis=0)

    @property
    def mean_queue_length_se(self):
        """Its standard error over replications."""
        return np.std(self.mean_tasks / self.n, axis=0, ddof=1) / math.sqrt(self.batches)


    def ci(self, name, level=0.95):
        """:func:`qlib.stats.replication_ci <qlib.stats.intervals.replication_ci>` of the per-replication values of
        attribute ``name`` (e.g. ``"p_wait"``)."""
        from qlib import stats
        return stats.replication_ci(getattr(self, name), level)


def simulate_jsq_d(n: int, beta: float, d: int | Sequence[int], *, t_end: float,
                   burn_in: float = 0.0, replications: int = 8, nblocks: int = 10,
                   initial: Sequence[int] | None = None, seed: Seed = None,
                   capacity: int = 64, progress: bool = False) -> JSQdResult:
    """Simulate JSQ(d) (``d`` servers sampled without replacement, join the
    shortest) with ``n`` servers at ``λ_n = n − β√n``, Exp(1) services.

    The occupancy ``(Q_1, Q_2, …)`` is itself a Markov chain (the servers are
    exchangeable), so the kernel simulates it exactly at ``O(levels in use)``
    per event, whatever ``d``: the chance that the ``d`` sampled queues all
    hold ``>= i`` tasks is ``C(Q_i, d)/C(n, d)``, tabulated once.  ``d = n`` is
    JSQ, ``d = 1`` random routing.  Several ``d`` run side by side on common
    random numbers, so their differences have a small variance.

    Parameters
    ----------
    n : int
        ``n >= 2``.
    beta : float
        ``0 < beta < √n``.
    d : int or sequence of int
        ``1 <= d <= n``; a sequence runs coupled chains, one per entry.
    t_end : float
        Length of each replication.
    burn_in : float
        Time averages over ``[burn_in, t_end]``.
    replications : int
        Independent replications, ``>= 2`` (seeds spawned from ``seed``).
    nblocks : int
        Blocks of the window recorded for the burn-in check, ``>= 2``.
    initial : sequence of int, optional
        Initial ``(Q_1, Q_2, …)`` of every chain, non-increasing, ``<= n``;
        default empty.
    seed : None, int, numpy.random.SeedSequence or numpy.random.Generator
    capacity : int
        Largest queue length the kernel can hold (``RuntimeError`` beyond).
    progress : bool, default False
        Show a tqdm progress bar over simulated time (each run is cut into
        slices; the result is the same, bit for bit).

    Returns
    -------
    JSQdResult

    Examples
    --------
    >>> r = simulate_jsq_d(100, 1.0, (100, 2), t_end=200.0, burn_in=20.0, seed=1,
    ...                    replications=2)
    >>> r.d, r.p_wait.shape                       # (replication, policy)
    ((100, 2), (2, 2))
    >>> bool(r.p_wait[:, 0].mean() < r.p_wait[:, 1].mean())   # JSQ waits less often than JSQ(2)
    True
    """
    n = V.integer(n, "n", lo=2)
    beta = _check_beta(beta, n)
    scalar = isinstance(d, numbers.Integral) and not isinstance(d, bool)
    ds = [d] if scalar else list(np.atleast_1d(np.asarray(d, dtype=object)))
    for x in ds:
        if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral) \
                or not 1 <= x <= n:
            raise ValueError(f"d must be an integer in [1, n] = [1, {n}] or a non-empty "
                             f"sequence of them, got {d!r}")
    if not ds:
        raise ValueError("d must not be an empty sequence")
    t_end, burn_in = _check_times(t_end, burn_in)
    for name, v, lo in (("replications", replications, 2), ("nblocks", nblocks, 2),
                        ("capacity", capacity, 3)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < lo:
            raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
    V.check_arrays({"n": (n, (n + 1) * (16 * len(ds) + 40))}, what="simulate_jsq_d's sampling tables")
    Q0 = np.zeros((len(ds), int(capacity) + 2), np.int64)
    Q0[:, 0] = n
    if initial is not None:
        q = V.occupancy_counts(initial, n, max_len=capacity, cap_name="capacity")
        Q0[:, 1:q.size + 1] = q
    ss = _seed32(seed)[2]
    lam = n - beta * math.sqrt(n)
    H = np.vstack([_sample_table(n, int(x)) for x in ds])
    out = np.zeros((int(replications), len(ds), int(nblocks), 5))
    events = 0
    st, fst = np.zeros(4, np.int64), np.zeros(2)
    bar = progress_bar(progress, int(replications) * t_end, "time", f"simulate_jsq_d n={n}",
                       kernel=_jsq_d_kernel)
    w0 = time.perf_counter()
    try:
        for r, child in enumerate(ss.spawn(int(replications))):
            Q, seed_r = Q0.copy(), int(child.generate_state(1)[0])
            for j, slice_end in enumerate(slice_ends(t_end, progress)):
                _jsq_d_kernel(seed_r if j == 0 else -1, lam, H, t_end, burn_in, Q,
                              int(nblocks), out[r], slice_end, st, fst)
                bar.update(r * t_end + slice_end - bar.n)
                if st[3]:
                    break
            if st[1]:
                raise RuntimeError(f"a queue exceeded capacity = {capacity}; rerun with a larger capacity")
            events += int(st[0])
    finally:
        bar.close()
    wall = time.perf_counter() - w0
    blocks = out / ((t_end - burn_in) / nblocks)
    avg = blocks.mean(axis=2)
    mw = (avg[..., 4] - avg[..., 1]) / lam
    cw = mw / avg[..., 0]
    if scalar:
        avg, mw, cw, blocks = avg[:, 0], mw[:, 0], cw[:, 0], blocks[:, 0]
    return JSQdResult(
        n=n, beta=beta, d=int(d) if scalar else tuple(int(x) for x in ds), lam_total=lam,
        t_end=t_end, burn_in=burn_in, p_wait=avg[..., 0], mean_q1=avg[..., 1],
        mean_q2=avg[..., 2], mean_q3=avg[..., 3], mean_tasks=avg[..., 4], mean_wait=mw,
        cond_wait=cw, blocks=blocks, events=int(events), wall_time=wall,
        seed=_seed_record(seed, ss.entropy))
