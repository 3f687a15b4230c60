"""JSQ with many servers in the Halfin–Whitt regime (Eschenfeldt–Gamarnik).

The model: ``n`` servers on the complete graph, Exp(1) services, Poisson
arrivals of total rate ``λ_n = n − β√n``; every task joins a shortest queue.
The state is the occupancy vector ``Q_1 ≥ Q_2 ≥ …`` with ``Q_i`` the number of
queues holding at least ``i`` tasks (``Q_0 = n``).  An arrival increments
``Q_{s+1}`` where ``s`` (the length of a shortest queue) is the largest ``i``
with ``Q_i = n``; a departure happens at rate ``Q_1`` and comes from a queue of
length exactly ``i`` with probability ``(Q_i − Q_{i+1}) / Q_1``.  Because the
chain at occupancy level is itself Markov, simulating it is exact.

Simulation of the chain:

* ``simulate_jsq``: exact event-driven simulation of the occupancy chain;

its diffusion limit, the two-dimensional reflected OU process of
``X_1 = (Q_1 − n)/√n`` and ``X_2 = Q_2/√n``:

* ``reflected_ou``: one path (bridge scheme, optional forcing term);
* ``reflected_ou_crn``: the same scheme at ``Δt, 2Δt, 4Δt`` on one Brownian
  path (common random numbers, for Richardson extrapolation in ``Δt``);
* ``ou_halving``: independent runs at ``Δt, Δt/2, …`` (a step-bias check);

exact laws of the finite-``n`` chain:

* ``stationary_jsq``: the stationary law, adaptive truncation with error
  bounds;
* ``transient_jsq``: transient means of the chain truncated to three levels,
  by uniformization;

and the alternatives at the same load (chapter ``ht_alternatives``):

* ``erlang_c``, ``halfin_whitt_alpha``: the pooled M/M/n queue and its
  Halfin–Whitt limit;
* ``simulate_jsq_d``: JSQ(d), ``d`` servers sampled without replacement;
* ``jsq_d_fixed_point``: the mean-field fixed point of JSQ(d) at load
  ``λ_n/n``.
"""
from __future__ import annotations

import math
import numbers
import time
from dataclasses import dataclass

import numba
import numpy as np

__all__ = ["simulate_jsq", "JSQResult", "reflected_ou", "OUResult",
           "reflected_ou_crn", "OUCRN", "transient_jsq", "TransientJSQ",
           "ou_halving", "stationary_jsq", "StationaryJSQ",
           "erlang_c", "halfin_whitt_alpha", "simulate_jsq_d", "JSQdResult",
           "jsq_d_fixed_point"]


# ---------------------------------------------------------------- validation

def _check_n(n):
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"n must be an integer >= 1, got {n!r}")
    n = int(n)
    if n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n}")
    return n


def _check_beta(beta, n=None):
    if isinstance(beta, bool) or not isinstance(beta, numbers.Real):
        raise TypeError(f"beta must be a real number > 0, got {beta!r}")
    beta = float(beta)
    if not (np.isfinite(beta) and beta > 0):
        raise ValueError(f"beta must be finite and > 0, got {beta}")
    if n is not None and not n - beta * math.sqrt(n) > 0:
        raise ValueError(f"beta must be < sqrt(n) = {math.sqrt(n):.6g} so that "
                         f"lam_n = n - beta*sqrt(n) > 0, got beta = {beta}")
    return beta


def _check_pos(name, x):
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a real number > 0, got {x!r}")
    x = float(x)
    if not (np.isfinite(x) and x > 0):
        raise ValueError(f"{name} must be finite and > 0, got {x}")
    return x


def _check_x0(x0):
    """The diffusion's starting point ``(X_1, X_2)`` with ``X_1 <= 0 <= X_2``."""
    try:
        x1, x2 = (float(v) for v in x0)
    except (TypeError, ValueError):
        raise TypeError(f"x0 must be a pair of numbers (X_1, X_2), got {x0!r}") from None
    if not (np.isfinite(x1) and np.isfinite(x2) and x1 <= 0 <= x2):
        raise ValueError(f"x0 must satisfy X_1 <= 0 <= X_2, got {x0!r}")
    return x1, x2


def _check_times(t_end, burn_in):
    t_end = _check_pos("t_end", t_end)
    if isinstance(burn_in, bool) or not isinstance(burn_in, numbers.Real):
        raise TypeError(f"burn_in must be a real number >= 0, got {burn_in!r}")
    burn_in = float(burn_in)
    if not (np.isfinite(burn_in) and burn_in >= 0):
        raise ValueError(f"burn_in must be finite and >= 0, got {burn_in}")
    if not t_end > burn_in:
        raise ValueError(f"t_end must be > burn_in = {burn_in}, got {t_end}")
    return t_end, burn_in


def _seed32(seed):
    """A 32-bit seed for numba's generator, drawn through SeedSequence."""
    if isinstance(seed, np.random.SeedSequence):
        ss = seed
    elif seed is None:
        ss = np.random.SeedSequence()
    elif isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        if seed < 0:
            raise ValueError(f"seed must be >= 0, got {seed}")
        ss = np.random.SeedSequence(int(seed))
    else:
        raise TypeError(f"seed must be None, an int >= 0 or a SeedSequence, got {seed!r}")
    return int(ss.generate_state(1)[0]), ss.entropy


def _seed_record(seed, entropy):
    """What the result records as its seed: the int given, else the entropy
    of the SeedSequence (an int, or a tuple of ints for a list entropy)."""
    if isinstance(seed, numbers.Integral):
        return int(seed)
    if isinstance(entropy, numbers.Integral):
        return int(entropy)
    return tuple(int(e) for e in entropy)


# ---------------------------------------------------------------- simulation

@numba.njit(cache=True)
def _jsq_kernel(seed, n, lam, t_end, burn_in, Q, K, nfine, rec_dt, nrec,
                max_waits):
    # Q[0] = n, Q[1..K] the occupancy counts, Q[K+1] = 0 stays a sentinel.
    np.random.seed(seed)
    s = 0  # length of a shortest queue: largest i with Q[i] == n
    while s < K and Q[s + 1] == n:
        s += 1
    N = 0  # number of tasks
    for i in range(1, K + 1):
        N += Q[i]
    sq = math.sqrt(n)
    # per slice of the window (nfine equal slices, grouped into batches
    # afterwards): ∫ idle, Q_2, Q_3, waiting tasks (N - Q_1), 1{Q_1 = n} dt,
    # and the arrivals and waiting arrivals in the slice
    acc = np.zeros((nfine, 5))
    arr = np.zeros(nfine)
    warr = np.zeros(nfine)
    waits = np.empty(max_waits)
    nw = 0
    paths = np.zeros((nrec, 4))
    blen = (t_end - burn_in) / nfine
    cb = 0
    nextb = burn_in + blen if nfine > 1 else t_end
    cumw = 0.0  # ∫_0^t (N - Q_1) ds, the waiting accrued by time t
    t = 0.0
    irec = 0
    events = 0
    arrivals = 0
    overflow = 0
    t3 = 0.0 if Q[3] == 0 else -1.0  # first time Q_3 = 0
    while True:
        rate = lam + Q[1]
        tn = t + np.random.exponential(1.0 / rate)
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
            break
        t = tn
        events += 1
        u = np.random.random() * rate
        if u < lam:  # arrival joins a queue of length s
            if s + 1 > K:
                overflow = 1
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
    return acc, arr, warr, waits[:nw], paths, events, arrivals, cumw, t3, overflow


@dataclass(frozen=True)
class JSQResult:
    """Result of :func:`simulate_jsq`.

    Time averages are over ``[burn_in, t_end]``; ``*_se`` are batch-means
    standard errors and ``*_ci`` the 95 % Student-t intervals ``(lo, hi)``
    with ``batches − 1`` degrees of freedom (see *Standard errors* in
    :func:`simulate_jsq`: by default the batch length follows the
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
    ``se_reliable`` (the batches are at least ``20 L`` long, at least 10, and
    their lag-1 correlations pass a 1 % test, Bonferroni over the
    quantities; always True with a fixed ``batches``, which is not checked)
    and ``batch_averages``, shape ``(batches, 5)``: per-batch time averages
    of ``n − Q_1``, ``Q_2``, ``Q_3``, ``N − Q_1`` and ``1{Q_1 = n}`` (for the
    standard error of a derived quantity, e.g. a ratio).
    """

    n: int
    beta: float
    lam: float
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
    mean_idle_ci: tuple = None
    mean_q2_ci: tuple = None
    mean_q3_ci: tuple = None
    mean_waiting_ci: tuple = None
    p_wait_ci: tuple = None
    p_full_ci: tuple = None
    batches: int = 0
    batch_length: float = float("nan")
    corr_length: float = float("nan")
    batch_lag1: float = float("nan")
    se_reliable: bool = True
    batch_averages: np.ndarray = None


def _mean_se(x):
    x = np.asarray(x, float)
    if x.size < 2:
        return float(x.mean()), float("nan")
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))


_JSQ_FINE = 4000   # slices of simulate_jsq's window (batch means group them)


def _jsq_batch_fields(acc, arr, warr, window, batches):
    """The standard errors, intervals and batch diagnostics of a
    :class:`JSQResult` from the kernel's per-slice integrals ``acc`` (shape
    ``(nfine, 5)``), arrivals ``arr`` and waiting arrivals ``warr``.

    With ``batches=None`` the batch length comes from
    :func:`qlib.stats.batch_means` (at least 20 correlation lengths, 10 to
    20 batches), measured on the five time averages and on the linearised
    ratio ``warr − p̂ arr`` of ``p_wait``; warns when the window is too
    short. With an int, every slice is a batch (``nfine == batches``).
    """
    import warnings

    from qlib import stats
    nf = acc.shape[0]
    dt = window / nf
    x = acc / dt                                   # per-slice time averages
    A = arr.sum()
    R = float(warr.sum() / A) if A > 0 else float("nan")
    lin = warr - (R if A > 0 else 0.0) * arr       # p_wait's linearised residual
    if batches is None:
        series = np.column_stack([x, lin])
        cols = [j for j in range(series.shape[1]) if np.ptp(series[:, j]) > 0] or [0]
        bm = stats.batch_means(series[:, cols], dt, check=False)
        k, L = bm.n_batches, float(bm.length)
    else:
        cols, k, L = None, nf, float("nan")
    # k near-equal groups covering every slice (at most one slice apart)
    starts = (np.arange(k) * nf) // k
    sizes = np.diff(np.append(starts, nf))
    xb = np.add.reduceat(x, starts, axis=0) / sizes[:, None]
    ab = np.add.reduceat(arr, starts)
    zb = np.add.reduceat(lin, starts)
    se = xb.std(axis=0, ddof=1) / math.sqrt(k)
    # delta method for the ratio Σ warr / Σ arr: the batch residuals
    # Σ_b (warr − p̂ arr) over the mean arrivals per batch
    p_se = float(zb.std(ddof=1) / math.sqrt(k) / ab.mean()) if A > 0 else float("nan")
    lag = stats._lag1(np.column_stack([xb, zb]))
    if cols is None:
        lag1, reliable = float(np.max(lag)), True
    else:
        lag1 = float(np.max(lag[cols]))
        thr = stats.lag1_threshold(k, 0.01 / len(cols))
        blen = window / k
        reliable = bool(blen >= 20 * L * (1 - 1e-9) and k >= 10 and lag1 <= thr)
        if not reliable:
            warnings.warn(
                f"standard errors unreliable: the window of {window:.4g} time units "
                f"holds {window / L:.3g} correlation lengths (L = {L:.4g}); 10 "
                f"decorrelated batches need about {200 * L:.4g} (largest lag-1 "
                f"correlation of the batch means {lag1:.2f}, 1 % critical value "
                f"{thr:.2f}). Run longer (t_end − burn_in >= {200 * L:.4g}) or use "
                "independent replications", RuntimeWarning, stacklevel=3)
    tq = float(stats.t_quantile(0.975, k - 1))
    means = x.mean(axis=0)
    ci = [(float(m - tq * s), float(m + tq * s)) for m, s in zip(means, se)]
    return dict(
        se=[float(s) for s in se], ci=ci, p_wait=R, p_wait_se=p_se,
        p_wait_ci=(R - tq * p_se, R + tq * p_se), batches=int(k),
        batch_length=window / k, corr_length=L, batch_lag1=lag1,
        se_reliable=reliable, batch_averages=xb)


def simulate_jsq(n, beta, *, t_end, burn_in=0.0, seed=None, initial=None,
                 record_dt=None, batches=None, max_waits=100_000, levels=64):
    """Simulate JSQ on ``n`` servers (complete graph) in the Halfin–Whitt regime.

    Exact event-driven simulation of the occupancy chain ``(Q_1, Q_2, …)``
    with arrival rate ``λ_n = n − β√n`` and Exp(1) services; each event costs
    O(1) (a departure scans the levels in use, a handful).

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
    seed : None, int or numpy.random.SeedSequence
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
    levels : int
        Largest queue length the kernel can hold.

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

    Standard errors: the window ``[burn_in, t_end]`` is cut into 4000
    slices, and the batches are groups of consecutive slices. By default
    :func:`qlib.stats.batch_means` measures the correlation length ``L`` on
    the slice averages of the five time averages and of ``p_wait``'s
    linearised ratio, and takes 10 to 20 batches of at least ``20 L`` each.
    ``mean_*_se`` and ``p_full_se`` are the standard deviation of the batch
    means over ``√k``; ``p_wait_se`` is the delta-method (linearised ratio)
    error of ``Σ waiting arrivals / Σ arrivals`` over the same batches. The
    intervals ``*_ci`` use Student-t with ``k − 1`` degrees of freedom.

    Trust them when ``se_reliable`` is True: the window then holds at least
    ``200 L`` and the batch means show no lag-1 correlation. Otherwise a
    ``RuntimeWarning`` (never an exception) gives the window needed; the
    errors are then too small (correlated batches), and independent
    replications (:func:`qlib.stats.replication_ci`) are the honest choice.
    Even then the intervals assume a stationary start: ``burn_in`` must be
    long against the relaxation from ``initial`` (test it with
    :func:`qlib.stats.burn_in_check`). Measured coverage of the 95 %
    intervals against the exact chain (:func:`stationary_jsq`) at
    ``n = 20``, 1000 seeds (``benchmarks/bench_simulate_se.py``; a quick
    version in ``tests/test_simulate_jsq_se.py``): 0.935–0.95 for every
    quantity at ``β = 2`` (window 3000, about 2000 ``L``) and at ``β = 0.5``
    (window 20 000, about 1500 ``L``); at ``β = 0.5`` and a window of 5000
    (about 400 ``L``, ``se_reliable`` in most runs) ``E[N − Q_1]`` covers
    only about 0.91 (its correlation tail is longer than the measured ``L``
    and its batch means are skewed), the other quantities 0.93–0.94. For a
    slowly mixing chain (small ``β``) prefer windows of thousands of ``L``.
    """
    n = _check_n(n)
    beta = _check_beta(beta, n)
    t_end, burn_in = _check_times(t_end, burn_in)
    if batches is not None:
        if isinstance(batches, bool) or not isinstance(batches, numbers.Integral):
            raise TypeError(f"batches must be None or an integer >= 2, got {batches!r}")
        if batches < 2:
            raise ValueError(f"batches must be None or an integer >= 2, got {batches!r}")
        batches = int(batches)
    if isinstance(max_waits, bool) or not isinstance(max_waits, numbers.Integral) \
            or max_waits < 0:
        raise ValueError(f"max_waits must be an integer >= 0, got {max_waits!r}")
    if isinstance(levels, bool) or not isinstance(levels, numbers.Integral) or levels < 3:
        raise ValueError(f"levels must be an integer >= 3, got {levels!r}")
    levels = int(levels)
    Q = np.zeros(levels + 2, np.int64)
    Q[0] = n
    if initial is not None:
        q = np.asarray(initial)
        if q.ndim != 1 or (q.size and not np.issubdtype(q.dtype, np.integer)):
            raise TypeError("initial must be a 1-d sequence of integers (Q_1, Q_2, ...)")
        if q.size > levels:
            raise ValueError(f"initial has {q.size} levels, more than levels = {levels}")
        if np.any(q < 0) or np.any(q > n) or np.any(np.diff(q) > 0):
            raise ValueError(f"initial must be non-increasing with 0 <= Q_i <= n = {n}")
        Q[1:q.size + 1] = q
    if record_dt is not None:
        record_dt = _check_pos("record_dt", record_dt)
        nrec = int(math.floor(t_end / record_dt + 1e-9)) + 1
    else:
        nrec, record_dt = 0, 1.0
    seed32, entropy = _seed32(seed)
    lam = n - beta * math.sqrt(n)
    w0 = time.perf_counter()
    nfine = _JSQ_FINE if batches is None else batches
    acc, arr, warr, waits, paths, events, arrivals, cumw, t3, overflow = _jsq_kernel(
        seed32, n, lam, t_end, burn_in, Q, levels, nfine, record_dt, nrec,
        int(max_waits))
    wall = time.perf_counter() - w0
    if overflow:
        raise RuntimeError(f"a queue exceeded levels = {levels}; rerun with more levels")
    window = t_end - burn_in
    f = _jsq_batch_fields(acc, arr, warr, window, batches)
    m = acc.sum(axis=0) / window
    se, ci = f["se"], f["ci"]
    times = np.arange(nrec) * record_dt if nrec else None
    return JSQResult(
        n=n, beta=beta, lam=lam, t_end=t_end, burn_in=burn_in,
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
        final=Q[1:levels + 1][Q[1:levels + 1] > 0].copy(),
        events=int(events), arrivals=int(arrivals), wall_time=wall,
        seed=_seed_record(seed, entropy))


# ---------------------------------------------------------------- diffusion

@numba.njit(cache=True)
def _ou_kernel(seed, beta, x1, x2, nsteps, dt, burn_steps, every, nrec, bridge,
               nbatch, force):
    np.random.seed(seed)
    path = np.zeros((nrec, 3))
    sig = math.sqrt(2.0 * dt)
    u = 0.0
    acc = np.zeros((nbatch, 2))
    per = (nsteps - burn_steps) // nbatch
    irec = 0
    for k in range(nsteps + 1):
        if irec < nrec and k % every == 0:
            path[irec, 0] = x1
            path[irec, 1] = x2
            path[irec, 2] = u
            irec += 1
        if k == nsteps:
            break
        if k >= burn_steps:
            b = (k - burn_steps) // per if per > 0 else 0
            if b < nbatch:
                acc[b, 0] += x1
                acc[b, 1] += x2
        drift = -beta - (x1 - x2)
        w = drift * dt + sig * np.random.standard_normal()
        if bridge:
            # exact maximum of the frozen-coefficient Brownian step given its
            # endpoint w (Brownian-bridge maximum, variance 2 dt)
            v = np.random.random()
            mx = 0.5 * (w + math.sqrt(w * w - 4.0 * dt * math.log(1.0 - v)))
            du = x1 + mx
            if du < 0.0:
                du = 0.0
        else:
            du = x1 + w
            if du < 0.0:
                du = 0.0
        x3 = force[k] if force.size > 0 else 0.0  # forcing X_3 at the step's midpoint
        x2 = x2 + du - (x2 - x3) * dt
        x1 = x1 + w - du
        u += du
    return path, acc, per


def _ou_forcing(forcing, nsteps, dt):
    """The forcing ``X_3`` at the step midpoints (empty array: none)."""
    if forcing is None:
        return np.zeros(0)
    mid = (np.arange(nsteps) + 0.5) * dt
    if callable(forcing):
        f = np.asarray(forcing(mid), dtype=float)
        if f.shape != mid.shape or not np.all(np.isfinite(f)) or np.any(f < 0):
            raise ValueError("forcing(t) must return finite values >= 0 of the shape of t")
        return f
    if isinstance(forcing, bool) or not isinstance(forcing, numbers.Real):
        raise TypeError(f"forcing must be None, a number >= 0 or a callable, got {forcing!r}")
    if not (np.isfinite(forcing) and forcing >= 0):
        raise ValueError(f"forcing must be finite and >= 0, got {forcing}")
    return float(forcing) * np.exp(-mid) if forcing > 0 else np.zeros(0)


@dataclass(frozen=True)
class OUResult:
    """Result of :func:`reflected_ou`.

    ``times, x1, x2, u``: the path on the grid (``u`` = the pushing process
    ``U``).  ``mean_x1, mean_x2`` (and ``*_se``, batch means): step averages
    over ``[burn_in, t_end]``.
    """

    beta: float
    dt: float
    t_end: float
    burn_in: float
    scheme: str
    times: np.ndarray | None
    x1: np.ndarray | None
    x2: np.ndarray | None
    u: np.ndarray | None
    mean_x1: float
    mean_x1_se: float
    mean_x2: float
    mean_x2_se: float
    seed: object


def reflected_ou(beta, x0, *, t_end, dt, seed=None, burn_in=0.0, record_dt=None,
                 scheme="bridge", batches=20, forcing=None):
    """Simulate the reflected OU limit of JSQ in the Halfin–Whitt regime.

    ``dX_1 = √2 dB − β dt − (X_1 − X_2) dt − dU``, ``X_1 ≤ 0``,
    ``dX_2 = dU − (X_2 − X_3) dt``, ``U`` nondecreasing, growing only at
    ``X_1 = 0``; ``X_3 ≡ 0`` unless ``forcing`` is given.

    Parameters
    ----------
    beta : float
        ``beta > 0``.
    x0 : pair of float
        ``(X_1(0), X_2(0))`` with ``X_1(0) <= 0 <= X_2(0)``.
    t_end, dt : float
        Horizon and step, ``0 < dt <= t_end``.
    seed : None, int or numpy.random.SeedSequence
    burn_in : float
        Averages are over the steps in ``[burn_in, t_end)``.
    record_dt : float, optional
        Grid of the recorded path, rounded to a multiple of ``dt``;
        ``None``: every step (at most ``2·10^6`` points); ``0``: no path.
    scheme : {"bridge", "projected"}
        ``"projected"``: Euler step, then projection onto ``X_1 <= 0``
        (the discrete Skorokhod map); ``"bridge"``: the same, but the push
        ``dU`` is the exact one of the step's frozen-drift Brownian motion,
        through the law of its maximum given its endpoint.
    batches : int
        Batches for the standard errors.
    forcing : None, float or callable, optional
        The deterministic forcing ``X_3(t)`` of ``X_2``: the scaled number of
        queues of length three, which in the limit of Eschenfeldt and
        Gamarnik drains as ``X_3(0) e^{−t}``.  A number ``x3`` means
        ``X_3(t) = x3 · e^{−t}``; a callable ``f`` is called once with the
        array of the steps' midpoints ``(k + ½) dt`` and must return finite
        values ``X_3 >= 0`` of the same shape.  The scheme uses ``X_3`` at
        each step's midpoint.  ``None`` (or ``0``): no forcing, the
        two-dimensional limit.

    Returns
    -------
    OUResult

    Notes
    -----
    Both schemes keep ``X_1 + X_2`` free of the push: summing the two
    updates, ``d(X_1 + X_2) = −(β + X_1) dt + √2 dB`` exactly, so in
    stationarity ``E[X_1] = −β`` holds for the scheme as for the diffusion
    (no discretisation error in this functional).
    """
    beta = _check_beta(beta)
    x1, x2 = _check_x0(x0)
    t_end, burn_in = _check_times(t_end, burn_in)
    dt = _check_pos("dt", dt)
    if dt > t_end:
        raise ValueError(f"dt must be <= t_end = {t_end}, got {dt}")
    if scheme not in ("bridge", "projected"):
        raise ValueError(f"scheme must be 'bridge' or 'projected', got {scheme!r}")
    nsteps = int(round(t_end / dt))
    burn_steps = int(round(burn_in / dt))
    if isinstance(batches, bool) or not isinstance(batches, numbers.Integral) \
            or batches < 2 or nsteps - burn_steps < batches:
        raise ValueError(f"batches must be an integer in [2, steps after burn-in], got {batches!r}")
    if record_dt is None:
        every = 1
        nrec = nsteps + 1
        if nrec > 2_000_001:
            raise ValueError("record_dt=None records every step: too many; give record_dt")
    elif record_dt == 0:
        every, nrec = 1, 0
    else:
        record_dt = _check_pos("record_dt", record_dt)
        every = max(1, int(round(record_dt / dt)))
        nrec = nsteps // every + 1
    force = _ou_forcing(forcing, nsteps, dt)
    seed32, entropy = _seed32(seed)
    path, acc, per = _ou_kernel(seed32, beta, x1, x2, nsteps, dt, burn_steps, every,
                                nrec, scheme == "bridge", int(batches), force)
    m1 = _mean_se(acc[:, 0] / per)
    m2 = _mean_se(acc[:, 1] / per)
    return OUResult(
        beta=beta, dt=dt, t_end=nsteps * dt, burn_in=burn_steps * dt, scheme=scheme,
        times=np.arange(nrec) * every * dt if nrec else None,
        x1=path[:, 0].copy() if nrec else None, x2=path[:, 1].copy() if nrec else None,
        u=path[:, 2].copy() if nrec else None,
        mean_x1=m1[0], mean_x1_se=m1[1], mean_x2=m2[0], mean_x2_se=m2[1],
        seed=_seed_record(seed, entropy))


@numba.njit(cache=True)
def _ou_crn_kernel(seed, beta, x1_0, x2_0, nfine, dt, levels, burn_fine, block_fine,
                   nblocks):
    # Level l steps by dt·2^l; all levels see the same Brownian increments and
    # the same bridge uniforms of the finest grid (common random numbers).
    np.random.seed(seed)
    x1 = np.full(levels, x1_0)
    x2 = np.full(levels, x2_0)
    c = np.zeros(levels)    # frozen drift of the level's current step
    W = np.zeros(levels)    # frozen-drift Brownian increment so far in the step
    mx = np.zeros(levels)   # its running maximum over the step
    acc = np.zeros((nblocks, levels, 5))
    cnt = np.zeros((nblocks, levels))
    sig = math.sqrt(2.0 * dt)
    for k in range(nfine):
        for lv in range(levels):
            if k % (1 << lv) == 0:          # a step of level lv starts
                c[lv] = -beta - (x1[lv] - x2[lv])
                W[lv] = 0.0
                mx[lv] = 0.0
                if k >= burn_fine:
                    b = (k - burn_fine) // block_fine
                    if b < nblocks:
                        a, y = x1[lv], x2[lv]
                        acc[b, lv, 0] += a
                        acc[b, lv, 1] += y
                        acc[b, lv, 2] += a * a
                        acc[b, lv, 3] += a * y
                        acc[b, lv, 4] += y * y
                        cnt[b, lv] += 1.0
        g = sig * np.random.standard_normal()
        e = -4.0 * dt * math.log(1.0 - np.random.random())
        for lv in range(levels):
            w = c[lv] * dt + g
            # the maximum of a fine sub-step given its endpoint (bridge); the
            # level's maximum is the largest over its sub-steps
            m = W[lv] + 0.5 * (w + math.sqrt(w * w + e))
            if m > mx[lv]:
                mx[lv] = m
            W[lv] += w
            if (k + 1) % (1 << lv) == 0:    # the step of level lv ends
                big = dt * (1 << lv)
                du = x1[lv] + mx[lv]
                if du < 0.0:
                    du = 0.0
                x2[lv] = x2[lv] + du - x2[lv] * big
                x1[lv] = x1[lv] + W[lv] - du
    for b in range(nblocks):
        for lv in range(levels):
            for j in range(5):
                acc[b, lv, j] /= cnt[b, lv]
    return acc


@dataclass(frozen=True)
class OUCRN:
    """Result of :func:`reflected_ou_crn`.

    ``dt[l] = dt · 2^l`` is the step of level ``l``; ``moments[b, l, j]`` is
    the average over the steps of level ``l`` in block ``b`` of the ``j``-th of
    ``names = ("x1", "x2", "x1x1", "x1x2", "x2x2")``.  The blocks have length
    ``block`` and follow each other after ``burn_in``; a linear combination
    of the moments, per block, is a series for :func:`qlib.stats.batch_means`
    (with ``dt = block``).
    """

    beta: float
    dt: np.ndarray
    block: float
    burn_in: float
    t_end: float
    names: tuple
    moments: np.ndarray
    seed: object

    def series(self, coef, level):
        """Block series of ``Σ_j coef[name_j] · moment_j`` at ``level`` (a dict
        name -> coefficient; the key ``"1"`` adds a constant)."""
        out = np.full(self.moments.shape[0], float(coef.get("1", 0.0)))
        for j, name in enumerate(self.names):
            out = out + float(coef.get(name, 0.0)) * self.moments[:, level, j]
        return out


def reflected_ou_crn(beta, x0, *, t_end, dt, levels=3, burn_in=0.0, block=1.0, seed=None):
    """The bridge scheme of :func:`reflected_ou` at ``dt, 2dt, 4dt, …``, with
    common random numbers, for the discretisation error of stationary means.

    Level ``l`` steps by ``dt · 2^l``.  Every level is driven by the same
    Brownian path, sampled on the finest grid, and the push of a coarse step
    is the exact maximum of its frozen-drift Brownian motion given the fine
    increments (the largest of the fine sub-steps' bridge maxima), so each
    level is, in law, the bridge scheme at its own step, and the levels are
    strongly coupled: differences between levels have a small variance.  With
    a bias ``a·dt + b·dt² + …`` of a stationary mean, Richardson extrapolation
    ``2 m(dt) − m(2dt)`` removes the first term, and a third level estimates
    what remains (see Notes).

    Parameters
    ----------
    beta : float
        ``beta > 0``.
    x0 : pair of float
        ``(X_1(0), X_2(0))`` with ``X_1(0) <= 0 <= X_2(0)``.
    t_end : float
        Horizon, ``> burn_in``.
    dt : float
        The finest step, ``> 0``.
    levels : int
        Number of levels, ``1 <= levels <= 8``.
    burn_in : float
        Averages start here (rounded down to a multiple of the coarsest step).
    block : float
        Length of the blocks of the averages, rounded to a multiple of the
        coarsest step ``dt · 2^(levels − 1)``.
    seed : None, int or numpy.random.SeedSequence

    Returns
    -------
    OUCRN

    Notes
    -----
    With ``m_l`` the stationary mean at level ``l`` and a bias expansion
    ``m_l = m + a h_l + b h_l² + O(h_l³)``, ``h_l = dt · 2^l``:
    ``R = 2 m_0 − m_1 = m − 2 b dt² + O(dt³)`` and
    ``E = (m_1 − m_2 − 2(m_0 − m_1)) / 3 = −2 b dt² + O(dt³)`` estimates the
    remaining bias of ``R`` (so ``R − E`` is the second-order extrapolation).
    """
    beta = _check_beta(beta)
    x1, x2 = _check_x0(x0)
    t_end, burn_in = _check_times(t_end, burn_in)
    dt = _check_pos("dt", dt)
    if isinstance(levels, bool) or not isinstance(levels, numbers.Integral) \
            or not 1 <= levels <= 8:
        raise ValueError(f"levels must be an integer in [1, 8], got {levels!r}")
    block = _check_pos("block", block)
    coarse = 1 << (int(levels) - 1)
    block_fine = max(1, int(round(block / (dt * coarse)))) * coarse
    burn_fine = int(burn_in / (dt * coarse)) * coarse
    nblocks = (int(round(t_end / dt)) - burn_fine) // block_fine
    if nblocks < 2:
        raise ValueError(f"t_end - burn_in must hold at least 2 blocks of {block_fine * dt:g}")
    nfine = burn_fine + nblocks * block_fine
    seed32, entropy = _seed32(seed)
    mom = _ou_crn_kernel(seed32, beta, x1, x2, nfine, dt, int(levels), burn_fine,
                         block_fine, nblocks)
    return OUCRN(beta=beta, dt=dt * 2.0 ** np.arange(levels), block=block_fine * dt,
                 burn_in=burn_fine * dt, t_end=nfine * dt,
                 names=("x1", "x2", "x1x1", "x1x2", "x2x2"), moments=mom,
                 seed=_seed_record(seed, entropy))


@numba.njit(cache=True)
def _jsq_transient_kernel(n, lam, a, b, q0, weights, kmax, trim_every, drop):
    # p[i, j, k] = P(Q_1 = a + i, Q_2 = j, Q_3 = k, not yet removed), pushed
    # through the chain uniformised at rate Λ = λ_n + n.  Mass that leaves the
    # box (Q_1 < a or Q_2 > b) or that a trim drops is counted in `lost`.
    n1, n2, n3 = n - a + 1, b + 1, q0[2] + 1
    p = np.zeros((n1, n2, n3))
    new = np.zeros((n1, n2, n3))
    p[q0[0] - a, q0[1], q0[2]] = 1.0
    lo = np.array([q0[0] - a, q0[1], q0[2]])
    hi = lo.copy()
    size = np.array([n1, n2, n3])
    Lam = lam + n
    nt = weights.shape[0]
    out = np.zeros((nt, 4))      # E Q_1, E Q_2, E Q_3, P(Q_1 = n) (removed mass: 0)
    lost = np.zeros(kmax + 1)    # mass removed before step k
    gone = 0.0
    for k in range(kmax + 1):
        lost[k] = gone
        s1 = s2 = s3 = full = 0.0
        for i in range(lo[0], hi[0] + 1):
            q1 = a + i
            for j in range(lo[1], min(hi[1], q1) + 1):
                for l in range(lo[2], min(hi[2], j) + 1):
                    v = p[i, j, l]
                    if v == 0.0:
                        continue
                    p[i, j, l] = 0.0
                    s1 += v * q1
                    s2 += v * j
                    s3 += v * l
                    if q1 == n:
                        full += v
                    new[i, j, l] += v * (n - q1) / Lam             # fictitious jump
                    if q1 < n:                                     # arrival to an idle server
                        new[i + 1, j, l] += v * lam / Lam
                    elif j < b:                                    # arrival waits: Q_2 + 1
                        new[i, j + 1, l] += v * lam / Lam
                    else:
                        gone += v * lam / Lam
                    if q1 > j:                                     # departure, queue of length 1
                        if i > 0:
                            new[i - 1, j, l] += v * (q1 - j) / Lam
                        else:
                            gone += v * (q1 - j) / Lam
                    if j > l:                                      # departure, queue of length 2
                        new[i, j - 1, l] += v * (j - l) / Lam
                    if l > 0:                                      # departure, queue of length 3
                        new[i, j, l - 1] += v * l / Lam
        for t in range(nt):
            w = weights[t, k]
            out[t, 0] += w * s1
            out[t, 1] += w * s2
            out[t, 2] += w * s3
            out[t, 3] += w * full
        p, new = new, p
        for d in range(3):
            lo[d] = max(lo[d] - 1, 0)
            hi[d] = min(hi[d] + 1, size[d] - 1)
        if (k + 1) % trim_every == 0:
            gone += _trim_box(p, lo, hi, drop)
    return out, lost


@numba.njit(cache=True)
def _trim_box(p, lo, hi, drop):
    # Shrink the box from each side, cutting slices whose marginal mass sums
    # to at most drop/6 per side; zero what is cut and return its mass.
    m = np.zeros((3, max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]) + 1))
    for i in range(lo[0], hi[0] + 1):
        for j in range(lo[1], hi[1] + 1):
            for l in range(lo[2], hi[2] + 1):
                v = p[i, j, l]
                m[0, i - lo[0]] += v
                m[1, j - lo[1]] += v
                m[2, l - lo[2]] += v
    nlo, nhi = lo.copy(), hi.copy()
    for d in range(3):
        c = 0.0
        while nlo[d] < nhi[d] and c + m[d, nlo[d] - lo[d]] <= drop / 6:
            c += m[d, nlo[d] - lo[d]]
            nlo[d] += 1
        c = 0.0
        while nhi[d] > nlo[d] and c + m[d, nhi[d] - lo[d]] <= drop / 6:
            c += m[d, nhi[d] - lo[d]]
            nhi[d] -= 1
    cut = 0.0
    for i in range(lo[0], hi[0] + 1):
        for j in range(lo[1], hi[1] + 1):
            for l in range(lo[2], hi[2] + 1):
                if (i < nlo[0] or i > nhi[0] or j < nlo[1] or j > nhi[1]
                        or l < nlo[2] or l > nhi[2]):
                    cut += p[i, j, l]
                    p[i, j, l] = 0.0
    lo[:] = nlo
    hi[:] = nhi
    return cut


@dataclass(frozen=True)
class TransientJSQ:
    """Result of :func:`transient_jsq`.

    At each of ``times``: ``mean_x1 = (E[Q_1] − n)/√n``, ``mean_x2 =
    E[Q_2]/√n``, ``mean_x3 = E[Q_3]/√n`` and ``p_full = P(Q_1 = n)``,
    computed on the truncated chain.  ``error``: a bound on the error of
    each of the three scaled means (and of ``√n · p_full``) at each time: the
    true value lies in ``[computed, computed + error]``.  ``removed``: the
    mass the computation lost by each time (left the box, trimmed, or in
    the Poisson tail), of which ``error = √n · removed``.
    """

    n: int
    beta: float
    times: np.ndarray
    mean_x1: np.ndarray
    mean_x2: np.ndarray
    mean_x3: np.ndarray
    p_full: np.ndarray
    error: np.ndarray
    removed: np.ndarray
    box: tuple
    steps: int
    wall_time: float


def transient_jsq(n, beta, initial, times, *, q1_min=None, q2_max=None, tol=1e-12):
    """Exact transient means of the JSQ occupancy chain, by uniformization.

    The chain ``(Q_1, Q_2, Q_3)`` of :func:`simulate_jsq` (``Q_4 = 0``) is
    uniformised at rate ``Λ = λ_n + n``: its law at time ``t`` is
    ``Σ_k Poisson(k; Λt) · p_0 P^k`` with ``P = I + A/Λ``.  The law is pushed
    through ``P`` on the box ``q1_min <= Q_1 <= n``, ``Q_2 <= q2_max``,
    ``Q_3 <= Q_3(0)``; mass that leaves the box is removed and counted, and so
    is the mass below ``tol/10`` per trim that is cut from the edges of the
    support to save time.  While ``Q_2 < n`` no queue reaches length three
    (an arrival joins a shortest queue), so ``Q_3`` never exceeds ``Q_3(0)``
    and ``Q_4`` stays 0: the box is closed except at its two cut faces.

    Parameters
    ----------
    n : int
        ``n >= 2``.
    beta : float
        ``0 < beta < √n``.
    initial : sequence of int
        ``(Q_1, Q_2[, Q_3])`` at time 0, non-increasing, ``<= n``,
        ``Q_2 < n``.
    times : array_like
        Times ``>= 0``.
    q1_min, q2_max : int, optional
        The cut faces.  Defaults: ``Q_1 >= min(Q_1(0), n − 10√n)`` and
        ``Q_2 <= Q_2(0) + 16√n`` (at most ``n − 1``): at ``n = 100`` the
        maximum of ``Q_2`` over ``[0, 10]`` from the empty system exceeds
        ``8√n`` with probability about ``10^{-4}``.
    tol : float
        Poisson tail mass left out, and total mass trimmed, each at most
        ``tol`` (the error bound reports what was actually lost).

    Returns
    -------
    TransientJSQ

    Notes
    -----
    Every scaled coordinate lies in ``[−√n, √n]`` and the computed law is
    the true one minus a non-negative measure of total mass ``removed(t)``,
    so the true mean exceeds the computed one by between 0 and
    ``√n · removed(t)`` (``Q_i >= 0``).  The cost is ``Λ · max(times)``
    steps over the cells of the support, e.g. a few seconds at ``n = 1000``
    and ``t = 6``.
    """
    n = _check_n(n)
    if n < 2:
        raise ValueError(f"n must be >= 2, got {n}")
    beta = _check_beta(beta, n)
    q = np.asarray(initial)
    if q.ndim != 1 or not 1 <= q.size <= 3 or not np.issubdtype(q.dtype, np.integer):
        raise TypeError("initial must be a sequence of 1 to 3 integers (Q_1, Q_2, Q_3)")
    q = np.concatenate([q.astype(np.int64), np.zeros(3 - q.size, np.int64)])
    if np.any(q < 0) or q[0] > n or np.any(np.diff(q) > 0) or q[1] >= n:
        raise ValueError(f"initial must be non-increasing with 0 <= Q_i <= n = {n} and Q_2 < n")
    t = np.asarray(times, dtype=float)
    if t.ndim != 1 or t.size == 0 or not np.all(np.isfinite(t)) or np.any(t < 0):
        raise ValueError("times must be a non-empty 1-d array of finite times >= 0")
    tol = _check_pos("tol", tol)
    sq = math.sqrt(n)
    a = int(min(q[0], max(0, math.floor(n - 10 * sq)))) if q1_min is None else int(q1_min)
    b = int(min(n - 1, q[1] + math.ceil(16 * sq))) if q2_max is None else int(q2_max)
    if not 0 <= a <= q[0]:
        raise ValueError(f"q1_min must be in [0, Q_1(0) = {q[0]}], got {q1_min}")
    if not q[1] <= b <= n - 1:
        raise ValueError(f"q2_max must be in [Q_2(0), n - 1] = [{q[1]}, {n - 1}], got {q2_max}")
    lam = n - beta * sq
    Lam = lam + n
    from scipy import stats as _sst
    kmax = int(_sst.poisson.isf(tol, Lam * t.max())) + 1 if t.max() > 0 else 0
    k = np.arange(kmax + 1)
    weights = np.array([_sst.poisson.pmf(k, Lam * ti) if ti > 0 else (k == 0).astype(float)
                        for ti in t])
    tail = np.maximum(1.0 - weights.sum(axis=1), 0.0)
    w0 = time.perf_counter()
    drop = tol / 10 / max(1, kmax // 64)          # per trim; trims every 64 steps
    out, lost = _jsq_transient_kernel(n, lam, a, b, q, weights, kmax, 64, drop)
    removed = weights @ lost + tail
    return TransientJSQ(
        n=n, beta=beta, times=t, mean_x1=(out[:, 0] - n) / sq, mean_x2=out[:, 1] / sq,
        mean_x3=out[:, 2] / sq, p_full=out[:, 3], error=sq * removed, removed=removed,
        box=(a, b, int(q[2])), steps=kmax, wall_time=time.perf_counter() - w0)


def ou_halving(beta, dt, *, t_end, burn_in, seed=None, scheme="bridge", halvings=2):
    """Discretisation error of :func:`reflected_ou` by halving ``dt``.

    Runs the stationary scheme at ``dt, dt/2, …, dt/2^halvings`` (independent
    streams from one SeedSequence) and returns, for each step, the stationary
    means of ``X_1`` and ``X_2`` with standard errors.  The differences of
    successive rows estimate the discretisation error (their s.e. is the
    root-sum-square of the two rows' s.e.).

    Returns
    -------
    dict
        ``dt, mean_x1, mean_x1_se, mean_x2, mean_x2_se`` (arrays).
    """
    dt = _check_pos("dt", dt)
    if isinstance(halvings, bool) or not isinstance(halvings, numbers.Integral) \
            or halvings < 1:
        raise ValueError(f"halvings must be an integer >= 1, got {halvings!r}")
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    out = {k: [] for k in ("dt", "mean_x1", "mean_x1_se", "mean_x2", "mean_x2_se")}
    for h, child in enumerate(ss.spawn(halvings + 1)):
        d = dt / 2 ** h
        r = reflected_ou(beta, (-beta, 0.0), t_end=t_end, dt=d, seed=child,
                         burn_in=burn_in, record_dt=0, scheme=scheme)
        out["dt"].append(d)
        for k in ("mean_x1", "mean_x1_se", "mean_x2", "mean_x2_se"):
            out[k].append(getattr(r, k))
    return {k: np.array(v) for k, v in out.items()}


# ---------------------------------------------------------------- stationary

@dataclass(frozen=True)
class StationaryJSQ:
    """Result of :func:`stationary_jsq`.

    ``states``: the truncated state space as occupancy rows
    ``(Q_1, …, Q_L)``; ``pi`` its stationary law.  ``truncated_mass``: the
    estimated stationary mass of the states just outside the final set (the
    flux the solved law sends out of the set, divided by those states' exit
    rates).  ``blocked``: the fraction of arrivals blocked at the highest
    number of tasks in the set.  ``balance_gap = E[n − Q_1] − β√n``: zero for
    the exact law (rate balance for the number of tasks); in the truncated
    chain it equals ``λ_n · blocked`` up to round-off, a check of the solve.

    Quantities (``X_1 = (Q_1 − n)/√n``, ``X_2 = Q_2/√n``, ``N = Σ_i Q_i``):
    ``p_wait = π(Q_1 = n)`` (an arrival waits; PASTA), ``mean_q1``,
    ``mean_idle = E[n − Q_1]``, ``mean_q2``, ``mean_q3``, ``mean_tasks = E[N]``,
    ``mean_waiting = E[N − Q_1]``, ``mean_response = E[N]/λ_n`` and
    ``mean_wait = E[N − Q_1]/λ_n`` (Little), ``mean_x1``, ``mean_x2``,
    ``var_x1``, ``var_x2``, ``mean_x1x2 = E[X_1 X_2]``, ``cov_x1x2``, and
    ``q2_pmf[k] = π(Q_2 = k)``, ``k = 0..n``.

    ``error_bounds``: quantity name → bound on its truncation error (for
    ``"q2_pmf"``: on every entry), from a second solve on a smaller set (see
    :func:`stationary_jsq`, Notes).  ``tol``: the admission threshold used;
    ``rounds``: solves of the final growth; ``levels``: number of occupancy
    levels ``L``; ``spread``: the largest difference between a longest and a
    shortest queue in the set.  ``cpu_time``, ``wall_time``: of the whole
    call, both solves included.
    """

    n: int
    beta: float
    lam: float
    p_wait: float
    mean_q1: float
    mean_idle: float
    mean_q2: float
    mean_q3: float
    mean_tasks: float
    mean_waiting: float
    mean_response: float
    mean_wait: float
    mean_x1: float
    mean_x2: float
    var_x1: float
    var_x2: float
    mean_x1x2: float
    cov_x1x2: float
    q2_pmf: np.ndarray
    error_bounds: dict
    truncated_mass: float
    blocked: float
    balance_gap: float
    tol: float
    rounds: int
    levels: int
    spread: int
    states: np.ndarray
    pi: np.ndarray
    cpu_time: float
    wall_time: float


def _occupancy(W, n):
    """Occupancy rows ``(Q_1, …, Q_L)`` of window states ``(s, p_1..p_d)``."""
    s = W[:, 0]
    d = W.shape[1] - 1
    L = int(s.max()) + d
    Q = np.zeros((W.shape[0], L), np.int64)
    lev = np.arange(1, L + 1)
    Q[lev[None, :] <= s[:, None]] = n
    for j in range(1, d + 1):
        Q[np.arange(W.shape[0]), s + j - 1] = W[:, j]
    return Q


_QUANTITIES = ("p_wait", "mean_q1", "mean_idle", "mean_q2", "mean_q3", "mean_tasks",
               "mean_waiting", "mean_response", "mean_wait", "mean_x1", "mean_x2",
               "var_x1", "var_x2", "mean_x1x2", "cov_x1x2")


def _quantities(Q, pi, n, lam):
    """The quantities of :class:`StationaryJSQ` under the law ``pi`` on the
    occupancy rows ``Q``, and the largest |integrand| of each on the rows."""
    sq = math.sqrt(n)
    q1 = Q[:, 0].astype(float)
    q2 = Q[:, 1].astype(float) if Q.shape[1] >= 2 else np.zeros(Q.shape[0])
    q3 = Q[:, 2].astype(float) if Q.shape[1] >= 3 else np.zeros(Q.shape[0])
    tasks = Q.sum(axis=1).astype(float)
    x1, x2 = (q1 - n) / sq, q2 / sq
    f = {"p_wait": float(pi[Q[:, 0] == n].sum()), "mean_q1": float(pi @ q1),
         "mean_idle": float(pi @ (n - q1)), "mean_q2": float(pi @ q2),
         "mean_q3": float(pi @ q3), "mean_tasks": float(pi @ tasks),
         "mean_waiting": float(pi @ (tasks - q1)), "mean_x1": float(pi @ x1),
         "mean_x2": float(pi @ x2), "mean_x1x2": float(pi @ (x1 * x2))}
    f["mean_response"] = f["mean_tasks"] / lam
    f["mean_wait"] = f["mean_waiting"] / lam
    # central moments from centred values (no cancellation)
    f["var_x1"] = float(pi @ (x1 - f["mean_x1"]) ** 2)
    f["var_x2"] = float(pi @ (x2 - f["mean_x2"]) ** 2)
    f["cov_x1x2"] = float(pi @ ((x1 - f["mean_x1"]) * (x2 - f["mean_x2"])))
    a1, a2 = float(np.abs(x1).max()), float(np.abs(x2).max())
    top = {"p_wait": 1.0, "mean_q1": float(n), "mean_idle": float(n),
           "mean_q2": float(q2.max()), "mean_q3": float(q3.max()),
           "mean_tasks": float(tasks.max()), "mean_waiting": float((tasks - q1).max()),
           "mean_response": float(tasks.max()) / lam,
           "mean_wait": float((tasks - q1).max()) / lam, "mean_x1": a1, "mean_x2": a2,
           "var_x1": 4 * a1 ** 2, "var_x2": 4 * a2 ** 2, "mean_x1x2": a1 * a2,
           "cov_x1x2": 4 * a1 * a2}
    pmf = np.bincount(Q[:, 1] if Q.shape[1] >= 2 else np.zeros(Q.shape[0], np.int64),
                      weights=pi, minlength=n + 1)
    return f, pmf, top


def _blocked(W, pi, n, lam):
    """Fraction of arrivals blocked: π of the rows at the highest N whose
    arrival leaves the set (no row at N + 1)."""
    N = W[:, 0] * n + W[:, 1:].sum(axis=1)
    return float(pi[N == N.max()].sum()) if not np.any(N == N.max() + 1) else 0.0


def stationary_jsq(n, beta, *, tol=1e-10, max_states=3_000_000):
    """Exact stationary law of the finite-``n`` JSQ occupancy chain, with
    bounds on the truncation error of every returned quantity.

    Works for every ``n >= 2`` and ``0 < β < √n``; at ``n <= 2000`` and
    ``β`` in ``[0.25, 4]`` it takes seconds to about half a minute with the
    default ``tol`` (see ``benchmarks/bench_heavy_traffic.py --stationary``
    and its ``benchmarks/stationary_results.json``).

    Parameters
    ----------
    n : int
        ``n >= 2``.
    beta : float
        ``0 < beta < √n``; the arrival rate is ``λ_n = n − β√n``.
    tol : float, default 1e-10
        Admission threshold in ``(0, 1)``: every state whose estimated
        stationary probability exceeds ``tol`` is in the final set (a round
        that admits states admits down to ``tol / 100``).  At the default
        the reported relative error bounds are about ``10⁻⁷–10⁻⁴`` (largest
        at large ``n``); ``tol = 1e-14`` gives about ``10⁻⁹`` at small
        ``n`` (slower).  See ``error_bounds``.
    max_states : int
        Give up (RuntimeError) when the set would exceed this many states.

    Returns
    -------
    StationaryJSQ
        The quantities (``p_wait``, ``mean_q2``, ``var_x1``, ``mean_x1x2``,
        ``q2_pmf``, …), each with its entry in ``error_bounds``.

    Raises
    ------
    TypeError, ValueError
        For a bad ``n``, ``beta``, ``tol`` or ``max_states``, naming it.
    RuntimeError
        If the set would need more than ``max_states`` states, or if a final
        solve leaves a relative balance residual above ``1e-9`` (an
        ill-conditioned truncation; not seen on the benchmark grid).

    Notes
    -----
    *State.*  A window ``(s, p_1, …, p_D)``: ``s`` full levels (``Q_i = n``
    for ``i <= s``; ``s`` is the length of a shortest queue) and
    ``Q_{s+j} = p_j < n`` above them.  Every occupancy vector has exactly one
    window, of any spread ``D``.

    *Truncation* (finite state projection, adaptive).  Start from a box
    around the bulk (``Q_1 >= n − (β + 5)√n``, ``Q_2`` up to a few
    ``√n/β``).  Solve the chain truncated to the set; every transition that
    leaves the set is redirected to a fixed representative state with the
    same number of tasks ``N`` as its target (every move changes ``N`` by
    one, so the dynamics of ``N`` stay exact except for arrivals blocked at
    the top).  Each state ``y`` just outside gets the estimate
    ``Σ_x π(x) r(x, y) / out(y)``; those above ``tol`` are admitted, with a
    geometric extension along slowly decaying directions and a
    breadth-first wave.  Repeat until no estimate exceeds ``tol``.

    *Solve.*  The generator is block tridiagonal in ``N``.  When every level
    holds at most a few hundred states (small ``n``, where queues of large
    spread matter) it is solved by linear level reduction
    (``π_N = π_{N−1} R_N``, non-singular M-matrices only); otherwise (the
    two-dimensional sheets of large ``n``) by a sparse LU with COLAMD
    ordering and two steps of iterative refinement.

    *Error bounds.*  The returned values come from the final set ``S_2``.
    ``S_1 ⊂ S_2`` keeps the states of ``S_2`` whose probability is at least
    ``10 · tol`` (what a ten times coarser threshold keeps) and is solved
    again.  ``error_bounds[q] = |q(S_2) − q(S_1)| + m_2 · max|q-integrand on
    S_2|`` with ``m_2`` the estimated mass just outside ``S_2``.  The
    truncation error falls about tenfold per decade of the threshold, so the
    change from ``S_1`` to ``S_2`` exceeds the error of ``S_2``; this is an
    a-posteriori estimate, not a theorem: the tests check it against an
    independent brute-force solve at ``n <= 25``, against a solve at a 100
    times smaller ``tol``, and through two identities of the exact chain.
    """
    n = _check_n(n)
    if n < 2:
        raise ValueError(f"n must be >= 2 for stationary_jsq, got {n}")
    beta = _check_beta(beta, n)
    tol = _check_pos("tol", tol)
    if not tol < 1:
        raise ValueError(f"tol must be in (0, 1), got {tol}")
    if isinstance(max_states, bool) or not isinstance(max_states, numbers.Integral):
        raise TypeError(f"max_states must be an integer >= 1, got {max_states!r}")
    if max_states < 1:
        raise ValueError(f"max_states must be an integer >= 1, got {max_states}")
    from . import _jsq_chain
    lam = n - beta * math.sqrt(n)
    w0, c0 = time.perf_counter(), time.process_time()
    W, pi, _, rounds, tmass, res = _jsq_chain.grow(_jsq_chain.seed(n, beta, lam), n, lam,
                                                   tol, max_states=max_states)
    # the coarser truncation: the states of the final set with probability
    # >= 10 tol (what a ten times coarser threshold keeps), solved again
    W1, pi1, _, res1 = _jsq_chain._solve(W[pi >= 10 * tol], n, lam)
    res = max(res, res1)
    if res > _jsq_chain._MAX_RESIDUAL:
        raise RuntimeError(f"the truncated chain at n = {n}, beta = {beta} was solved with a "
                           f"relative balance residual of {res:.1e}; try another tol")
    f1, pmf1, _ = _quantities(_occupancy(W1, n), pi1, n, lam)
    Q = _occupancy(W, n)
    f, pmf, top = _quantities(Q, pi, n, lam)
    err = {k: abs(f[k] - f1[k]) + tmass * top[k] for k in _QUANTITIES}
    err["q2_pmf"] = float(np.max(np.abs(pmf - pmf1))) + tmass
    spread = int((Q > 0).sum(axis=1).max() - (Q == n).sum(axis=1).min())
    return StationaryJSQ(
        n=n, beta=beta, lam=lam, **f, q2_pmf=pmf, error_bounds=err,
        truncated_mass=tmass, blocked=_blocked(W, pi, n, lam),
        balance_gap=f["mean_idle"] - beta * math.sqrt(n), tol=tol, rounds=rounds,
        levels=Q.shape[1], spread=spread, states=Q, pi=pi,
        cpu_time=time.process_time() - c0, wall_time=time.perf_counter() - w0)


# ------------------------------------------------------- the alternatives
# Pooled M/M/n (Erlang C), its Halfin–Whitt limit, and JSQ(d) at the load
# λ_n = n − β√n (chapter ``ht_alternatives``).

@numba.njit(cache=True)
def _erlang_b(n, a):
    """Erlang B by the recursion ``B_k = a B_{k−1} / (k + a B_{k−1})``, ``B_0 = 1``;
    every step is a ratio of positive terms, so the relative error grows at
    most linearly in ``n`` (no cancellation, no overflow)."""
    b = 1.0
    for k in range(1, n + 1):
        b = a * b / (k + a * b)
    return b


def erlang_c(n, lam):
    """Probability of waiting in the M/M/n queue (Erlang C), unit service rate.

    Parameters
    ----------
    n : int
        Number of servers, ``n >= 1``.
    lam : float
        Arrival rate, ``0 < lam < n`` (the queue is stable).

    Returns
    -------
    float
        ``C(n, λ) = P(all n servers busy)``, which by PASTA is the chance that
        an arrival waits.

    Raises
    ------
    TypeError, ValueError
        For a bad ``n`` or ``lam`` (``lam >= n`` is unstable).

    Notes
    -----
    ``C = B / (1 − ρ(1 − B))`` with ``ρ = λ/n`` and ``B`` the Erlang B
    probability, computed by the stable recursion
    ``B_k = λ B_{k−1} / (k + λ B_{k−1})`` (no factorials, no powers): ``O(n)``
    operations, relative error about ``n`` units of rounding, so accurate to
    ``n = 10⁶`` and beyond.
    """
    n = _check_n(n)
    if isinstance(lam, bool) or not isinstance(lam, numbers.Real):
        raise TypeError(f"lam must be a real number in (0, n), got {lam!r}")
    lam = float(lam)
    if not (np.isfinite(lam) and 0 < lam < n):
        raise ValueError(f"lam must be in (0, n) = (0, {n}) for a stable M/M/n queue, "
                         f"got {lam}")
    b = _erlang_b(n, lam)
    rho = lam / n
    return float(b / (1.0 - rho * (1.0 - b)))


def halfin_whitt_alpha(beta):
    """The Halfin–Whitt limit ``α(β) = [1 + βΦ(β)/φ(β)]⁻¹`` of Erlang C.

    ``erlang_c(n, n − β√n) → α(β)`` as ``n → ∞`` (Halfin & Whitt 1981).

    Parameters
    ----------
    beta : float or array_like
        ``beta > 0``.

    Returns
    -------
    float or ndarray
        ``α(β)``, in ``(0, 1)``.

    Notes
    -----
    Evaluated as ``expit(−log(βΦ(β)/φ(β)))`` with ``log Φ`` from
    ``scipy.special.log_ndtr``, so it neither overflows nor loses
    precision for large ``β`` (where ``Φ/φ`` grows like ``e^{β²/2}``).
    """
    from scipy.special import expit, log_ndtr
    b = np.asarray(beta)
    if b.dtype == bool or not (np.issubdtype(b.dtype, np.integer)
                               or np.issubdtype(b.dtype, np.floating)):
        raise TypeError(f"beta must be a real number or array of them, got {beta!r}")
    b = b.astype(float)
    if not np.all(np.isfinite(b) & (b > 0)):
        raise ValueError(f"beta must be finite and > 0, got {beta!r}")
    logr = np.log(b) + log_ndtr(b) + 0.5 * b * b + 0.5 * math.log(2 * math.pi)
    out = expit(-logr)
    return float(out) if out.ndim == 0 else out


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
def _jsq_d_kernel(seed, lam, H, t_end, burn_in, Q, nblocks, out):
    """Occupancy chains of JSQ(d) for several ``d`` on common random numbers.

    Row ``j`` of ``H`` is :func:`_sample_table` for the ``j``-th ``d``; row
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
    and ``N = Σ Q_i``.  Returns (events, overflow flag).
    """
    np.random.seed(seed)
    m = Q.shape[0]
    K = Q.shape[1] - 2
    n = Q[0, 0]
    blen = (t_end - burn_in) / nblocks
    N = np.zeros(m, np.int64)
    for j in range(m):
        for i in range(1, K + 1):
            N[j] += Q[j, i]
    rate = lam + n
    t = 0.0
    events = 0
    while True:
        tn = t - math.log(1.0 - np.random.random()) / rate
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
            return events, False
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
                    return events, True
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


@dataclass(frozen=True)
class JSQdResult:
    """Result of :func:`simulate_jsq_d`.

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
    window, for :func:`qlib.stats.burn_in_check`.  ``events``: total over
    replications (uniformized: dummy events included).
    """

    n: int
    beta: float
    d: object
    lam: float
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

    def ci(self, name, level=0.95):
        """:func:`qlib.stats.replication_ci` of the per-replication values of
        attribute ``name`` (e.g. ``"p_wait"``)."""
        from qlib import stats
        return stats.replication_ci(getattr(self, name), level)


def jsq_d_fixed_point(n, beta, d):
    """Mean-field (Vvedenskaya–Mitzenmacher) prediction for JSQ(d) at load
    ``ρ = 1 − β/√n``: ``q_i = ρ^{(d^i − 1)/(d − 1)}`` (``q_i = ρ^i`` for
    ``d = 1``), the fraction of queues with ``>= i`` tasks.

    Parameters
    ----------
    n : int
        ``n >= 1`` (only ``ρ`` depends on it).
    beta : float
        ``0 < beta < √n``.
    d : int
        ``d >= 1``.

    Returns
    -------
    dict
        ``q`` (the sequence until it drops below ``1e-300``), ``p_wait = ρ^d``
        (``q_1^d``: all ``d`` samples busy), ``mean_wait = Σ_{i≥2} q_i / ρ``
        (Little) and ``cond_wait = mean_wait / p_wait``.  A heuristic at
        finite ``n``: the fixed point is the ``n → ∞`` limit at *fixed* ``ρ``.
    """
    n = _check_n(n)
    beta = _check_beta(beta, n)
    if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 1:
        raise ValueError(f"d must be an integer >= 1, got {d!r}")
    rho = 1.0 - beta / math.sqrt(n)
    # levels until q_i < 1e-300: exponent (d^i − 1)/(d − 1) > 690/(−log ρ)
    emax = 690.8 / -math.log(rho)
    if d == 1:
        e = np.arange(1, int(emax) + 2, dtype=float)
    else:
        e = (float(d) ** np.arange(1, int(math.log(emax * (d - 1) + 1, d)) + 3) - 1) / (d - 1)
    q = rho ** e
    q = q[q >= 1e-300]
    pw = rho ** d
    mw = float(q[1:].sum() / rho) if d > 1 else rho / (1 - rho)
    return {"q": q, "p_wait": float(pw), "mean_wait": mw, "cond_wait": mw / pw}


def simulate_jsq_d(n, beta, d, *, t_end, burn_in=0.0, replications=8, nblocks=10,
                   initial=None, seed=None, levels=64):
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
    seed : None, int or numpy.random.SeedSequence
    levels : int
        Largest queue length the kernel can hold (``RuntimeError`` beyond).

    Returns
    -------
    JSQdResult
    """
    n = _check_n(n)
    if n < 2:
        raise ValueError(f"n must be >= 2, got {n}")
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
                        ("levels", levels, 3)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < lo:
            raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
    Q0 = np.zeros((len(ds), int(levels) + 2), np.int64)
    Q0[:, 0] = n
    if initial is not None:
        q = np.asarray(initial)
        if q.ndim != 1 or (q.size and not np.issubdtype(q.dtype, np.integer)):
            raise TypeError("initial must be a 1-d sequence of integers (Q_1, Q_2, ...)")
        if q.size > levels or np.any(q < 0) or np.any(q > n) or np.any(np.diff(q) > 0):
            raise ValueError(f"initial must be non-increasing with 0 <= Q_i <= n = {n} "
                             f"and at most levels = {levels} entries")
        Q0[:, 1:q.size + 1] = q
    if isinstance(seed, np.random.SeedSequence):
        ss = seed
    else:
        _seed32(seed)  # validates
        ss = np.random.SeedSequence(None if seed is None else int(seed))
    lam = n - beta * math.sqrt(n)
    H = np.vstack([_sample_table(n, int(x)) for x in ds])
    out = np.zeros((int(replications), len(ds), int(nblocks), 5))
    events = 0
    w0 = time.perf_counter()
    for r, child in enumerate(ss.spawn(int(replications))):
        ev, overflow = _jsq_d_kernel(int(child.generate_state(1)[0]), lam, H, t_end,
                                     burn_in, Q0.copy(), int(nblocks), out[r])
        if overflow:
            raise RuntimeError(f"a queue exceeded levels = {levels}; rerun with more levels")
        events += ev
    wall = time.perf_counter() - w0
    blocks = out / ((t_end - burn_in) / nblocks)
    avg = blocks.mean(axis=2)
    mw = (avg[..., 4] - avg[..., 1]) / lam
    cw = mw / avg[..., 0]
    if scalar:
        avg, mw, cw, blocks = avg[:, 0], mw[:, 0], cw[:, 0], blocks[:, 0]
    return JSQdResult(
        n=n, beta=beta, d=int(d) if scalar else tuple(int(x) for x in ds), lam=lam,
        t_end=t_end, burn_in=burn_in, p_wait=avg[..., 0], mean_q1=avg[..., 1],
        mean_q2=avg[..., 2], mean_q3=avg[..., 3], mean_tasks=avg[..., 4], mean_wait=mw,
        cond_wait=cw, blocks=blocks, events=int(events), wall_time=wall,
        seed=_seed_record(seed, ss.entropy))
