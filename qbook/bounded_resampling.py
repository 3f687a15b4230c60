"""The mechanics of ``chapters/bounded_resampling.md``: its tables and figures, the
first rates that reach the fluid, the size scan's fits, the tail ratios against the QBD
bound, the burn-in of all its cells and the leftover bias each cell's halves bound allows.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from qlib.stats import (Check, burn_in_family, detectable, iat, leftover_bias, loglog_slope, simultaneous,
                        t_quantile, tau_upper)
from qlib.stats.cells import first_reached

#: the chapter's recorded runs (``qbook.recorded.RecordedRuns`` replays them)
RUNS = Path(__file__).resolve().parents[1] / "benchmarks" / "bounded_resampling_runs.pkl.gz"

__all__ = ["RUNS", "burn_in_bias", "scan_tables", "plot_scan", "first_rates", "distance_fits", "n_slope_checks",
           "plot_distance", "qbd_check", "plot_tails", "all_cells", "long_runs"]


def _fmt(s, t95):
    return f"{s[0]:.4f} ± {t95 * s[1]:.4f}" if s[1] > 0 else f"{s[0]:.4f} (exact)"


def scan_tables(S: Mapping, graphs: Sequence[str], rates: Sequence[float], x_ds: Sequence[float],
                t95: float) -> tuple[str, str]:
    """The Markdown tables of the rate scan (``η ± t95 s.e.`` per rate and graph) and of the
    double star (``η`` and ``q(2)`` per ``x = μ/n``).

    Parameters
    ----------
    S : mapping
        ``(graph, μ)`` (``("double star", x)`` for the double star) to ``(η, s.e., q(2), s.e.)``.
    graphs : sequence of str
    rates, x_ds : sequence of float
    t95 : float
        The 95 % Student-t quantile of the replications.

    Returns
    -------
    scan, double_star : str
    """
    rows = ["| $\\mu$ | " + " | ".join(graphs) + " |", "|---" * (len(graphs) + 1) + "|"]
    rows += [f"| {mu:g} | " + " | ".join(_fmt(S[g, mu], t95) if (g, mu) in S else "" for g in graphs) + " |"
             for mu in rates]
    ds = ["| $x = \\mu/n$ | $\\eta$ | $q(2)$ |", "|---|---|---|"]
    ds += [f"| {x:g} | {_fmt(S['double star', x], t95)} | {S['double star', x][2]:.4f} |" for x in x_ds]
    return "\n".join(rows), "\n".join(ds)


def plot_scan(a0, a1, series: Mapping, q2: float, t95: float) -> None:
    """``η`` (left, symlog) and ``q(2)`` (right) against the rate, one line per graph, with 95 %
    intervals; ``μ = 0`` drawn at ``10⁻²`` and ``∞`` at ``10⁶``; the fluid ``q*(2)`` dashed.

    Parameters
    ----------
    a0, a1 : matplotlib.axes.Axes
    series : mapping
        Graph name to ``[(μ, (η, s.e., q(2), s.e.)), ...]``.
    q2 : float
        The fluid ``q*(2)``.
    t95 : float
    """
    for name, pts in series.items():
        xs = [1e-2 if mu == 0 else 1e6 if math.isinf(mu) else mu for mu, _ in pts]
        p = np.array([s for _, s in pts])
        a0.errorbar(xs, p[:, 0], yerr=t95 * p[:, 1], fmt="o-", ms=4, label=name)
        a1.errorbar(xs, p[:, 2], yerr=t95 * p[:, 3], fmt="o-", ms=4, label=name)
    a1.axhline(q2, color="k", ls="--", lw=0.8)
    for ax in (a0, a1):
        ax.set(xscale="log", xlabel="resampling rate μ")
        ax.set_xticks([1e-2, 1e-1, 1, 10, 1e2, 1e3, 1e4, 1e5, 1e6],
                      ["0", "0.1", "1", "10", "100", "1e3", "1e4", "1e5", "∞"])
    a0.set_yscale("symlog", linthresh=1e-2)
    a0.set(ylabel="η = R/R* − 1", ylim=(-0.02, 10))
    a0.axhline(0, color="k", lw=0.8)
    a1.set(ylabel="q(2)")
    a0.legend(fontsize=8)


def first_rates(series: Mapping, reps: int, level: float, n: int) -> dict:
    """Per graph, the first rate whose ``η`` is not above 0 (one-sided, Bonferroni over the
    graph's rates: ``fluid``) and the first below 1 % (``1pct``); asserts that ``η > 0`` at
    ``μ = 1`` (``μ = n`` for the double star).

    Returns
    -------
    dict
        Glue key suffix (``mu-fluid-<graph>``, ``mu-1pct-<graph>``) to the rate.
    """
    out = {}
    for name, pts in series.items():
        crit = float(t_quantile(1 - (1 - level) / len(pts), reps - 1))  # one-sided, Bonferroni
        key = name.replace(" ", "").replace("-", "")
        for k, reached in (("fluid", lambda p: p[0] - crit * p[1] < 0), ("1pct", lambda p: p[0] < 0.01)):
            out[f"mu-{k}-{key}"] = float(first_reached(pts, reached))
        at = dict(pts)[n if name == "double star" else 1.0]
        assert at[0] > crit * at[1], (name, at)     # η > 0 at μ = 1 (ring, triangles), at μ = n (double star)
    return out


def distance_fits(dist: Mapping, mu_n: Mapping[str, Callable], ns: Sequence[int], a_ring: float,
                  a_se: float) -> tuple[dict, dict, dict, dict]:
    """Power laws of ``η_n`` in ``n`` at ``μ_n = f(n)``, against the slope the ring's ``μ``-law
    ``η ∝ μ^{−a}`` predicts, ``−a log(f(n_max)/f(n_min))/log(n_max/n_min)``.

    Returns
    -------
    fits : dict
        Rule name to :class:`qlib.stats.LogLogFit`.
    pred : dict
        Rule name to the predicted slope.
    gap : dict
        Rule name to ``(fitted − predicted slope, its s.e.)`` (``a``'s s.e. by the delta method).
    glued : dict
        Glue key suffix to value (``n-slope-<rule>``, ``-se``, ``-pred``; ``delta-<rule>-nmin``
        and ``-nmax``; ``mu-<rule>-nmin`` and ``-nmax``).
    """
    fits, pred, gap, glued = {}, {}, {}, {}
    for m, f in mu_n.items():
        d = np.array([dist[m, n] for n in ns])
        fits[m] = loglog_slope(ns, d[:, 0], d[:, 1])
        pred[m] = -a_ring * math.log(f(ns[-1]) / f(ns[0])) / math.log(ns[-1] / ns[0])
        gap[m] = (fits[m].slope - pred[m], math.hypot(fits[m].slope_se, a_se * abs(pred[m]) / a_ring))
        for k, v in (("", fits[m].slope), ("-se", fits[m].slope_se), ("-pred", pred[m])):
            glued[f"n-slope-{m}{k}"] = float(v)
        for k, n in (("nmin", ns[0]), ("nmax", ns[-1])):
            glued[f"delta-{m}-{k}"] = float(dist[m, n][0])
            glued[f"mu-{m}-{k}"] = float(f(n))
    return fits, pred, gap, glued


def n_slope_checks(gap: Mapping, pred: Mapping, reps: int, level: float) -> dict:
    """The size scan's checks: per rule, the fitted slope against the ``μ``-law's (a
    significance test, reported, not required), and the power of the test at
    ``μ_n = log log n`` against the predicted slope (required).

    Returns
    -------
    dict
        Check name to ``(Check, required)``.
    """
    out = {f"n-slope-{m}": (Check.from_family(simultaneous(*gap[m], reps - 1, level=level),
                                              f"slope in n at μ_n = {m} n equals the μ-law's"), False)
           for m in gap}
    det_ll = float(detectable(gap["loglog"][1], reps - 1, level=level))
    out["n-slope-power"] = (Check.bound("the test at μ_n = log log n detects a deviation as large as "
                                        "the predicted slope (ratio)", det_ll / abs(pred["loglog"]), 1.0,
                                        method="detectable deviation / |predicted slope|"), True)
    return out


def plot_distance(ax, dist: Mapping, fits: Mapping, ns: Sequence[int], t95: float) -> None:
    """``η_n`` against ``n`` per rule ``μ_n`` (95 % intervals) with the fitted power laws."""
    nn = np.array(ns, float)
    for c, m in zip(("C0", "C2"), fits):
        d = np.array([dist[m, n] for n in ns])
        ax.errorbar(nn, d[:, 0], yerr=t95 * d[:, 1], fmt="o", color=c, label=f"μ_n = {m} n")
        ax.plot(nn, fits[m].predict(nn), "--", color=c, lw=0.8)
    ax.set(xscale="log", yscale="log", xlabel="number of servers n", ylabel="η_n = R/R* − 1")
    ax.legend(fontsize=8)


def qbd_check(e: np.ndarray, se: np.ndarray, z_levels: np.ndarray, reps: int, level: float) -> Check:
    """Tail ratios ``e`` (s.e. ``se``) not below the QBD bound ``z_levels``: one-sided,
    Bonferroni over the ratios.

    Returns
    -------
    qlib.stats.Check
    """
    t_z = (e - z_levels) / se
    crit1 = float(t_quantile(1 - (1 - level) / e.size, reps - 1))   # one-sided, Bonferroni
    return Check("tail ratios are not below the QBD bound z(μ)", "significance",
                 float(max(0.0, -t_z.min())), crit1,
                 float(detectable(se.max(), reps - 1, 2 * e.size, level)), bool(t_z.min() > -crit1),
                 f"one-sided, Bonferroni, {e.size} checks")


def plot_tails(ax, curves: Sequence, z: Mapping, mm1: Callable, fluid_q: np.ndarray, t95: float,
               levels: np.ndarray) -> None:
    """Simulated ``q_n(i)`` (95 % intervals) per curve, the heuristic ``z(μ)^i`` anchored at
    level 5 for the ``m = 0`` curves with ``μ > 0`` (dotted), the static graph's M/M/1 part
    (solid) and the fluid ``q*`` (dashed).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    curves : sequence of (label, μ, replicated run)
    z : mapping
        ``μ`` to the QBD ratio ``z(μ)``.
    mm1 : callable
        Levels to the M/M/1 part ``(n_0/n) λ^i``.
    fluid_q : numpy.ndarray
        ``q*`` at ``levels``.
    t95 : float
    levels : numpy.ndarray
    """
    ii = levels
    for c, (name, mu, rr) in zip(("C0", "C1", "C2", "C4", "C5"), curves):
        ci = rr.tail_ci(ii)
        ok_ = ci.mean > 0
        ax.errorbar(ii[ok_], ci.mean[ok_], yerr=t95 * ci.se[ok_], fmt="o", ms=4, color=c, label=name)
        if name.startswith("m = 0") and mu > 0:
            ax.plot(ii, ci.mean[4] * z[mu] ** (ii - 5), ":", color=c, lw=1)
    ax.plot(ii, mm1(ii), "-", color="C0", lw=0.8, label="(n₀/n) λ^i")
    ax.plot(ii, fluid_q, "k--", lw=0.8, label="q* (μ = ∞)")
    ax.set(yscale="log", ylim=(1e-6, 1.5), xlabel="level i", ylabel="q_n(i)")
    ax.legend(fontsize=7)


def all_cells(scan: Mapping, ds: Mapping, ring_small: Mapping, conf_runs: Mapping, dist_runs: Mapping,
              tail_runs: Mapping) -> dict:
    """Every replicated cell of the chapter under one key: ``("n = 10^4", graph, μ)``,
    ``("ds", n, x)``, ``("ring 10^3", μ)``, ``("conf", μ)``, ``("n-scan", rule, n)``,
    ``("tails", μ)``."""
    return {**{("n = 10^4",) + k: v for k, v in scan.items()}, **{("ds",) + k: v for k, v in ds.items()},
            **{("ring 10^3", mu): v for mu, v in ring_small.items()},
            **{("conf", mu): v for mu, v in conf_runs.items()}, **{("n-scan",) + k: v for k, v in dist_runs.items()},
            **{("tails", mu): v for mu, v in tail_runs.items()}}


def burn_in_bias(checks, cells: Mapping, r_star: float, long: Mapping, model: Mapping, margin: float,
                 log_margin: float, mu_of: Callable) -> dict[str, float]:
    """Add the chapter's ``burn-in`` and ``bias`` checks to ``checks``; return the values it glues.

    The halves of every cell's ``R/R*`` are shown to agree (margin ``log_margin/2`` for
    the double star's cells, whose claims are on ``log R``, ``margin`` otherwise); each
    halves bound becomes a leftover-bias bound through ``τ_up`` (2 × the upper limit of
    ``τ_int`` of the long runs of the cell's slowest class: the static ring, the double
    star at ``n μ <= 10``, the ring at ``μ = 1`` otherwise), checked against the margin of
    the claims the cell enters.

    Parameters
    ----------
    checks : qlib.stats.Checks
        Gets ``burn-in`` and ``bias``.
    cells : mapping
        Cell key (first entry ``"ds"`` for the double star, ``"n-scan"`` for the size
        scan) to its replicated run.
    r_star : float
        The fluid response time ``R*``.
    long : mapping
        ``"static ring"``, ``"double star"``, ``"ring, μ = 1"`` to their long runs.
    model : mapping
        Class name to a model relaxation time used as a floor of ``τ_up``.
    margin, log_margin : float
        The agreement margins (relative, and on ``log R`` for the double star).
    mu_of : callable
        Cell key to its resampling rate.

    Returns
    -------
    dict
        ``tau-ring``, ``tau-ds``, ``tau-fast`` (the ``τ_up``), ``tau-ring-int``,
        ``bias-bound`` (the worst cell's bias relative to its tolerance) and ``bias-tol``.

    Examples
    --------
    >>> burn_in_bias.__name__
    'burn_in_bias'
    """
    bi = burn_in_family({k: rr.batch_response_times / r_star for k, rr in cells.items()},
                        {k: log_margin / 2 if k[0] == "ds" else margin for k in cells}, relative=True)
    checks.add("burn-in", Check.from_burn_in(bi.checks[bi.worst], f"halves agree in all {len(bi)} cells",
                                             percent=True))
    tau_up = {k: tau_upper([iat(x.batch_response_time, dt=x.batch_length) for x in rr.results],
                           model=model.get(k), factor=2) for k, rr in long.items()}   # 2 × the UCL of τ_int
    # the double star's slow class is its measured μ = 10 cell and below; at μ >= 100 its resampling is faster
    # than the resampled ring's at μ = 1, whose τ_up then bounds it
    cls = [("double star" if k[1] * k[2] <= 10 else "ring, μ = 1") if k[0] == "ds"
           else "static ring" if mu_of(k) < 1 else "ring, μ = 1" for k in cells]
    d_up = np.array([bi.used[k] * (log_margin / 2 if k[0] == "ds" else margin) for k in cells])  # halves bounds / R
    win = np.array([rr.results[0].batch_length * len(rr.results[0].batch_response_time) for rr in cells.values()])
    tau_c = np.array([tau_up[c].value for c in cls])
    tol = np.array([log_margin if k[0] == "ds" else margin for k in cells])   # the margin of the claims it enters
    bias_all = np.array([float(leftover_bias(d, w, t)) for d, w, t in zip(d_up, win, tau_c)])
    worst_b = int(np.argmax(bias_all / tol))
    checks.add("bias", Check.bound("leftover bias of every cell within its claims' margin", bias_all[worst_b],
                                   tol[worst_b], percent=True, method=f"worst cell {list(cells)[worst_b]}; "
                                   f"halves bound through τ_up = {tau_c[worst_b]:.0f}, window {win[worst_b]:.0f}"))
    return {"tau-ring": tau_up["static ring"].value, "tau-ds": tau_up["double star"].value,
            "tau-fast": tau_up["ring, μ = 1"].value, "tau-ring-int": tau_up["static ring"].mean,
            "bias-bound": float(bias_all[worst_b]), "bias-tol": float(tol[worst_b])}


def long_runs(recorded: Callable, replicate: Callable, graphs, lam: float, n: int, q_star: np.ndarray,
              mm1: np.ndarray, seeds) -> dict:
    """Four long replications of each slowest class, for the integrated autocorrelation times
    behind ``τ_up``: the static ring (``n = 10³``), the double star at ``μ = 10`` (size ``n``),
    the ring at ``μ = 1`` (``n = 10³``).

    Parameters
    ----------
    recorded : callable
        The chapter's recorder (replays the stored runs).
    replicate : callable
        ``qlib.replicate``.
    graphs : module
        ``qlib.graphs``.
    lam : float
    n : int
    q_star, mm1 : numpy.ndarray
        The fluid and the M/M/1 starts.
    seeds : iterator of int

    Returns
    -------
    dict
        Class name to its replicated run.
    """
    return {"static ring": recorded(replicate, graphs.ring(10**3), lam, 0.0, replications=4, t_end=2150,
                                    burn_in=150, seed=next(seeds), initial=q_star, batches=200),
            "double star": recorded(replicate, graphs.double_star(n), lam, 10.0, replications=4, t_end=1100,
                                    burn_in=100, seed=next(seeds), initial=mm1, batches=100),
            "ring, μ = 1": recorded(replicate, graphs.ring(10**3), lam, 1.0, replications=4, t_end=1050,
                                    burn_in=50, seed=next(seeds), initial=q_star, batches=200)}
