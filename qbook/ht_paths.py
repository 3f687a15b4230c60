"""The mechanics of ``chapters/ht_paths.md``: replications of the JSQ chain
and of its diffusion limit from two starts, the comparisons of their means
(with the exact transient means, with the M/M/∞ phase, with the limit under a
bias allowance), and the drain times of the queues of length three.

The limit's step bias is removed, not allowed for: :func:`~qbook.ht_paths.limit_richardson`
combines independent runs of the bridge scheme at ``dt`` and ``2 dt`` into
``2 m(dt) − m(2dt)``, whose bias is ``O(dt²)`` for a first-order scheme, and
whose standard error counts both runs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as _st

from qlib.halfin_whitt._common import _check_n
from typing import TYPE_CHECKING
if TYPE_CHECKING:   # names for the annotations only
    from collections.abc import Callable
    from collections.abc import Mapping
    from collections.abc import Sequence
    from numpy.typing import ArrayLike
    from qlib.halfin_whitt.transient import TransientJSQ

__all__ = ["overloaded_start", "chain_replications", "mminf_phase", "limit_replications",
           "limit_richardson", "limit_means", "LimitMeans", "grid_index", "shrink", "ExactMeans",
           "exact_means", "exact_comparison", "bias_bound", "limit_comparison",
           "drain_checks", "harmonic", "interior_richardson_bias", "limit_paths", "plot_empty",
           "plot_overloaded"]


def overloaded_start(n: int) -> list[int]:
    """The overloaded start of ``ht_paths``: ``[Q_1, Q_2, Q_3] = [n, ⌈2√n⌉,
    ⌈√n⌉]``, so ``X(0) ≈ (0, 2)`` and ``Q_3(0)/√n ≈ 1``."""
    n = _check_n(n)
    s = math.sqrt(n)
    return [n, int(math.ceil(2 * s)), int(math.ceil(s))]


def chain_replications(n: int, beta: float, reps: int, seed0: int, *, t_end: float,
                       record_dt: float, initial: Sequence[int] | None = None) -> dict:
    """Independent runs of :func:`qlib.halfin_whitt.simulate_jsq <qlib.halfin_whitt.simulate.simulate_jsq>` (seeds
    ``seed0, seed0 + 1, …``) recorded on the grid ``record_dt``.

    Returns
    -------
    dict
        ``x1, x2, x3``: arrays (replication × time) of the scaled paths;
        ``times``; ``t0``: each run's first time with ``Q_3 = 0``;
        ``events`` and ``wall``: totals over the runs; ``reps``.
    """
    from qlib.halfin_whitt.simulate import simulate_jsq
    if isinstance(reps, bool) or not isinstance(reps, int) or reps < 2:
        raise ValueError(f"reps must be an integer >= 2, got {reps!r}")
    # the runs' own batch-means s.e. of time averages is not used here (the
    # replications give the s.e.): two fixed batches skip the measurement of the
    # correlation length (most of a small run's cost); the paths are the same, bit for bit
    runs = [simulate_jsq(n, beta, t_end=t_end, seed=seed0 + i, record_dt=record_dt,
                         initial=initial, batches=2) for i in range(reps)]
    out = {k: np.array([getattr(r, k) for r in runs]) for k in ("x1", "x2", "x3")}
    out.update(times=runs[0].times, t0=np.array([r.t_q3_zero for r in runs]), reps=reps,
               events=sum(r.events for r in runs), wall=sum(r.wall_time for r in runs))
    return out


def mminf_phase(runs: Mapping, n: int, beta: float, sds: float = 8.0) -> tuple[np.ndarray,
                np.ndarray, np.ndarray]:
    """The M/M/∞ phase of runs from the empty start: at the recorded times
    ``t > 0`` where the exact mean of ``X_1`` (``Q_1`` Poisson with mean
    ``λ_n (1 − e^{−t})``) lies at least ``sds`` standard deviations below 0.

    Returns
    -------
    est, se, target : numpy.ndarray
        The mean of ``X_1`` over the runs, its exact standard error and the
        exact mean, at those times.

    Raises
    ------
    RuntimeError
        If some run has ``X_2 > 0`` there (the boundary was touched: the
        phase is not M/M/∞).
    """
    s = math.sqrt(n)
    lam = n - beta * s
    t = runs["times"]
    mean = (lam * (1 - np.exp(-t)) - n) / s
    sd = np.sqrt(lam * (1 - np.exp(-t)) / n)
    far = (mean + sds * sd <= 0) & (t > 0)
    if np.any(runs["x2"][:, far] != 0):
        raise RuntimeError("a run touched the boundary inside the M/M/inf phase")
    return runs["x1"][:, far].mean(0), sd[far] / math.sqrt(runs["reps"]), mean[far]


def limit_replications(beta: float, x0: Sequence[float], paths: int, dt: float, t_end: float,
                       seed0: int, *, forcing: float | Callable[..., float] | None = None,
                       record_dt: float = 0.25) -> dict:
    """``paths`` independent runs of :func:`qlib.halfin_whitt.reflected_ou <qlib.halfin_whitt.diffusion.reflected_ou>`
    (bridge scheme, step ``dt``, seeds ``seed0, seed0 + 1, …``).

    Returns
    -------
    dict
        ``x1, x2``: arrays (path × time) on the grid ``record_dt``; ``dt``.
    """
    from qlib.halfin_whitt.diffusion import reflected_ou
    # only the paths are used: two fixed batches skip the batch-means diagnostics
    # (half a run's cost); the paths are the same, bit for bit
    rs = [reflected_ou(beta, x0, t_end=t_end, dt=dt, seed=seed0 + i, record_dt=record_dt,
                       forcing=forcing, batches=2) for i in range(paths)]
    return {"x1": np.array([r.x1 for r in rs]), "x2": np.array([r.x2 for r in rs]), "dt": dt}


@dataclass(frozen=True)
class LimitMeans:
    """Result of :func:`~qbook.ht_paths.limit_richardson`, per coordinate (``x1``, ``x2``) and
    recorded time: ``mean = 2 m(dt) − m(2dt)``, ``se`` its standard error
    from both runs, ``df`` Welch's degrees of freedom, ``step = m(dt) −
    m(2dt)`` (the estimated first-order step bias of the ``dt`` run)."""

    mean: dict
    se: dict
    df: dict
    step: dict


def limit_richardson(fine: Mapping, coarse: Mapping) -> LimitMeans:
    """Richardson extrapolation in the step of two independent sets of
    limit paths (:func:`~qbook.ht_paths.limit_replications` at ``dt`` and ``2 dt``)."""
    if not math.isclose(coarse["dt"], 2 * fine["dt"]):
        raise ValueError(f"coarse dt must be twice the fine dt, got {coarse['dt']} and {fine['dt']}")
    mean, se, df, step = {}, {}, {}, {}
    for k in ("x1", "x2"):
        a, b = fine[k], coarse[k]
        va, vb = 4 * a.var(0, ddof=1) / a.shape[0], b.var(0, ddof=1) / b.shape[0]
        mean[k] = 2 * a.mean(0) - b.mean(0)
        se[k] = np.sqrt(va + vb)
        with np.errstate(invalid="ignore", divide="ignore"):
            df[k] = np.nan_to_num((va + vb) ** 2 / (va**2 / (a.shape[0] - 1)
                                                     + vb**2 / (b.shape[0] - 1)), nan=1.0)
        step[k] = a.mean(0) - b.mean(0)
    return LimitMeans(mean=mean, se=se, df=df, step=step)


def limit_means(beta: float, x0: Sequence[float], paths: int, dt: float, t_end: float, seed0: int,
                *, forcing: float | Callable[..., float] | None = None,
                record_dt: float = 0.25) -> LimitMeans:
    """:func:`~qbook.ht_paths.limit_richardson` of ``paths`` runs at ``dt`` (seeds from
    ``seed0``) and ``paths`` independent runs at ``2 dt`` (seeds from
    ``seed0 + 10⁶``)."""
    fine = limit_replications(beta, x0, paths, dt, t_end, seed0, forcing=forcing,
                              record_dt=record_dt)
    coarse = limit_replications(beta, x0, paths, 2 * dt, t_end, seed0 + 10**6, forcing=forcing,
                                record_dt=record_dt)
    return limit_richardson(fine, coarse)


def interior_richardson_bias(x0: Sequence[float], beta: float, dt: float,
                             times: ArrayLike) -> np.ndarray:
    """Bias of ``2 m(dt) − m(2dt)`` for the mean of ``X_1`` started at
    ``x0 = (x1, 0)`` while no path has touched the boundary, where the
    scheme's mean follows ``m' = m + dt (−β − m)`` exactly and the diffusion's
    ``m(t) = −β + (x1 + β) e^{−t}``: the remaining step bias of the empty
    start's transient (largest at large ``|x1|``)."""
    x1 = float(x0[0])
    t = np.asarray(times, dtype=float)
    exact = -beta + (x1 + beta) * np.exp(-t)
    fine = -beta + (x1 + beta) * (1 - dt) ** np.round(t / dt)
    coarse = -beta + (x1 + beta) * (1 - 2 * dt) ** np.round(t / (2 * dt))
    return 2 * fine - coarse - exact


def grid_index(times: np.ndarray, tt: ArrayLike) -> np.ndarray:
    """Indices of the recorded ``times`` at the times ``tt`` (which must be on
    the grid up to ``1e-9``)."""
    i = np.searchsorted(times, np.asarray(tt) - 1e-9)
    if np.any(i >= len(times)) or np.any(np.abs(times[np.minimum(i, len(times) - 1)] - tt) > 1e-9):
        raise ValueError("tt must lie on the recorded grid")
    return i


def shrink(d: ArrayLike, allowance: ArrayLike) -> np.ndarray:
    """A difference moved towards 0 by a known bound on its bias."""
    return np.sign(d) * np.maximum(np.abs(d) - allowance, 0.0)


@dataclass(frozen=True)
class ExactMeans:
    """Exact transient means of the chain (``transient_jsq`` or its stored
    JSON): ``mean_x1, mean_x2`` at ``times``; the true values lie in
    ``[mean, mean + error]``."""

    times: np.ndarray
    mean_x1: np.ndarray
    mean_x2: np.ndarray
    error: np.ndarray


def exact_means(r: TransientJSQ | Mapping) -> ExactMeans:
    """An :class:`~qbook.ht_paths.ExactMeans` from a ``TransientJSQ`` or a stored dict."""
    get = (lambda k: r[k]) if isinstance(r, dict) else (lambda k: getattr(r, k))
    return ExactMeans(*(np.asarray(get(k), dtype=float)
                        for k in ("times", "mean_x1", "mean_x2", "error")))


def exact_comparison(exact: Mapping, chain: Mapping, cap: float = 150) -> tuple[np.ndarray,
                     np.ndarray, np.ndarray, np.ndarray]:
    """Simulated chain against exact means, as inputs of
    :func:`qlib.stats.simultaneous <qlib.stats.families.simultaneous>`.

    ``exact``: dict ``(n, kind) -> ExactMeans``; ``chain``: dict ``(n, kind) ->``
    :func:`~qbook.ht_paths.chain_replications` result.  Each exact value is moved to the middle
    of its bracket and each difference shrunk by the bracket's half-width;
    checks where every run has the same value (``X_2 = 0`` early from the
    empty start) are dropped.

    Returns
    -------
    d, se, df, err : numpy.ndarray
        Shrunk differences, standard errors, degrees of freedom (capped at
        ``cap``: that only raises the critical values) and the exact means'
        error bounds.
    """
    d, se, df, err = [], [], [], []
    for key, ex in exact.items():
        c = chain[key]
        for k in ("x1", "x2"):
            a = c[k][:, grid_index(c["times"], ex.times)]
            mid = getattr(ex, "mean_" + k) + ex.error / 2
            d += list(shrink(a.mean(0) - mid, ex.error / 2))
            se += list(a.std(0, ddof=1) / math.sqrt(c["reps"]))
            df += [c["reps"] - 1] * len(mid)
            err += list(ex.error)
    d, se, df, err = (np.array(v, dtype=float) for v in (d, se, df, err))
    keep = se > 0
    return d[keep], se[keep], np.minimum(df[keep], cap), err


def bias_bound(exact: ExactMeans, lim: LimitMeans, key: str,
               level: float = 0.99) -> tuple[np.ndarray, np.ndarray]:
    """Upper bound on ``|b_n(t)|``, the chain's bias against the limit, at
    the exact ``n``: ``|exact − limit| + t_{(1+level)/2} se + error/2`` with
    the exact value at the middle of its bracket and the limit's Richardson
    mean (:class:`~qbook.ht_paths.LimitMeans`, recorded every ``0.25``).

    Returns
    -------
    bhat, bound : numpy.ndarray
        The estimated bias and its upper bound at ``exact.times``.
    """
    idx = np.round(exact.times / 0.25).astype(int)
    m, s, df = lim.mean[key][idx], lim.se[key][idx], lim.df[key][idx]
    bhat = getattr(exact, "mean_" + key) + exact.error / 2 - m
    q = _st.t.isf((1 - level) / 2, np.maximum(df, 1.0))
    return bhat, np.abs(bhat) + q * s + exact.error / 2


def limit_comparison(chain: Mapping, lim: LimitMeans, times: ArrayLike, allowance: Sequence[float],
                     cap: float = 150) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Simulated chain against the limit's Richardson means at ``times``,
    each difference shrunk by ``allowance`` (one value per coordinate).

    Returns
    -------
    d, se, df : numpy.ndarray
        Shrunk differences, Welch standard errors and degrees of freedom
        (capped at ``cap``), for both coordinates; checks where both sides
        have no spread (``X_2 = 0`` early from the empty start) are dropped
        after checking that their difference is 0.
    """
    out = []
    idx = np.round(np.asarray(times) / 0.25).astype(int)
    for k in ("x1", "x2"):
        a = chain[k][:, grid_index(chain["times"], times)]
        va = a.var(0, ddof=1) / chain["reps"]
        vb = lim.se[k][idx] ** 2
        dd = a.mean(0) - lim.mean[k][idx]
        with np.errstate(invalid="ignore", divide="ignore"):
            welch = (va + vb) ** 2 / (va**2 / (chain["reps"] - 1) + vb**2 / lim.df[k][idx])
        out += list(zip(shrink(dd, allowance[k]), np.sqrt(va + vb), welch, dd))
    d, se, df, raw = (np.array([r[i] for r in out]) for i in range(4))
    if np.any(raw[se == 0] != 0):
        raise RuntimeError("a check without spread has a nonzero difference")
    keep = se > 0
    return d[keep], se[keep], np.minimum(np.nan_to_num(df[keep], nan=1.0), cap)


def harmonic(j: int) -> float:
    """``H_j = Σ_{i <= j} 1/i``."""
    return float(np.sum(1.0 / np.arange(1, int(j) + 1)))


def drain_checks(c: Mapping, n: int, eps: float = 0.1, grid: float = 0.01,
                 t0_recorded: bool = True) -> tuple[list, list, list, tuple]:
    """The checks of the drain of ``Q_3`` from the overloaded start against
    the pure death process (``prop-ht-paths-drain``), for runs ``c`` of
    :func:`~qbook.ht_paths.chain_replications` recorded every ``grid``.

    Returns
    -------
    est, se, target : list
        ``Q_3(t)/√n`` at ``t = 1, 2, 3`` against ``(m/√n) e^{−t}`` (binomial
        s.e.); the grid time of the first ``Q_3 <= k = ⌊ε√n⌋`` minus half a
        step, shrunk by the other half, against ``H_m − H_k``; and, when
        ``t0_recorded``, the time of ``Q_3 = 0`` against ``H_m``.
    row : tuple
        ``(n, m, k, mean T_k, s.e., H_m − H_k, log(m/k), mean T_0, s.e., H_m)``.
    """
    s, R = math.sqrt(n), c["reps"]
    m, k = overloaded_start(n)[2], int(math.floor(eps * s))
    # the drain is a pure death process while Q_2 < n; it is read up to t = 3 and to Q_3 = 0
    t0 = np.nan_to_num(c["t0"], nan=np.inf) if t0_recorded else np.full(R, np.inf)
    live = c["times"][None, :] <= np.maximum(3.0, t0)[:, None] + grid
    if np.max(c["x2"] * live) >= s:
        raise RuntimeError("Q_2 reached n before the drain ended: it is no longer a pure death process")
    est, se, tgt = [], [], []
    for t_ in (1.0, 2.0, 3.0):
        p = math.exp(-t_)
        est.append(c["x3"][:, round(t_ / grid)].mean())
        tgt.append(m / s * p)
        se.append(math.sqrt(m * p * (1 - p) / R) / s)
    V = lambda lo: float(np.sum(1.0 / np.arange(lo + 1, m + 1) ** 2))
    first = np.argmax(c["x3"] * s <= k + 0.5, axis=1)
    if not np.all(c["x3"][np.arange(R), first] * s <= k + 0.5):
        raise RuntimeError("some run never reached Q_3 <= k")
    Tk = c["times"][first]
    est.append(float(shrink(Tk.mean() - grid / 2 - (harmonic(m) - harmonic(k)), grid / 2)))
    tgt.append(0.0)
    se.append(math.sqrt(V(k) / R))
    T0 = np.nan
    if t0_recorded:
        if np.isnan(c["t0"]).any():
            raise RuntimeError("some run did not reach Q_3 = 0")
        T0 = float(c["t0"].mean())
        est.append(T0)
        tgt.append(harmonic(m))
        se.append(math.sqrt(V(0) / R))
    row = (n, m, k, float(Tk.mean()), math.sqrt(V(k) / R), harmonic(m) - harmonic(k),
           math.log(m / k), T0, math.sqrt(V(0) / R), harmonic(m))
    return est, se, tgt, row



def limit_paths(beta: float, ns: Sequence[int], paths: Mapping[str, int] | None = None) -> dict:
    """The limit's Richardson means from the scaled starts of the chain: from the empty start
    ``(−√n, 0)`` at ``dt = 5·10⁻⁴`` over 10 time units, from :func:`overloaded_start` at
    ``dt = 10⁻³`` over 6 with the forcing ``X_3(0) e^{−t}``.

    Parameters
    ----------
    beta : float
    ns : sequence of int
        The sizes; the ``j``-th draws its seeds from ``30 000 + 10 000 j``.
    paths : mapping, optional
        Runs per step size and start (default 600 empty, 1200 overloaded).

    Returns
    -------
    dict
        ``(n, "empty" | "overloaded")`` to :class:`LimitMeans`.
    """
    paths = paths or {"empty": 4 * 150, "overloaded": 4 * 300}
    out = {}
    for j, n in enumerate(ns):
        over = overloaded_start(n)
        out[n, "empty"] = limit_means(beta, (-math.sqrt(n), 0.0), paths["empty"], 5e-4, 10.0,
                                      30_000 + 10_000 * j)
        out[n, "overloaded"] = limit_means(beta, (0.0, over[1] / math.sqrt(n)), paths["overloaded"],
                                           1e-3, 6.0, 30_000 + 10_000 * j, forcing=over[2] / math.sqrt(n))
    return out


def plot_empty(axes, chain: Mapping, limit: Mapping, ns: Sequence[int]) -> None:
    """Means of ``X_1`` and ``X_2`` from the empty start: the chain per ``n`` (solid), the limit
    (black dashed) and one path of the chain at the largest ``n`` (grey)."""
    for n in ns:
        c = chain[n, "empty"]
        for ax, key in zip(axes, ("x1", "x2")):
            ax.plot(c["times"], c[key].mean(0), label=f"n = 10$^{int(np.log10(n))}$")
            ax.plot(c["times"], limit[n, "empty"].mean[key], "k--", lw=0.8)
    big = chain[ns[-1], "empty"]
    for ax, key in zip(axes, ("x1", "x2")):
        ax.plot(big["times"], big[key][0], color="0.6", lw=0.8)
        ax.set_xlabel("t")
    axes[0].set_ylim(-6, 0.2)
    axes[0].set_ylabel("$X_1$")
    axes[1].set_ylabel("$X_2$")
    axes[0].legend(fontsize=8)


def plot_overloaded(axes, chain: Mapping, limit: Mapping, ns: Sequence[int], t_end: float = 6.0) -> None:
    """One path of ``X_1``, ``X_2``, ``Q_3/√n`` per ``n`` from the overloaded start, with the
    limit's means at the largest ``n`` and ``e^{−t}`` (black dashed)."""
    for n in ns:
        c = chain[n, "overloaded"]
        sel = c["times"] <= t_end + 1e-9
        for ax, key in zip(axes, ("x1", "x2", "x3")):
            ax.plot(c["times"][sel], c[key][0, sel], lw=0.8, label=f"n = 10$^{int(np.log10(n))}$")
    tg = np.arange(int(round(t_end / 0.25)) + 1) * 0.25
    for ax, mean, lab in zip(axes, (*limit[ns[-1], "overloaded"].mean.values(), np.exp(-tg)),
                             ("$X_1$", "$X_2$", "$Q_3/\\sqrt{n}$")):
        ax.plot(tg, mean, "k--")
        ax.set_xlabel("t")
        ax.set_ylabel(lab)
    axes[2].legend(fontsize=8)
