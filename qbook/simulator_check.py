"""The mechanics of ``chapters/simulator_check.md``: its runs, tables, figures and glued values.

Each recorded run goes through the chapter's store (``runs``,
:class:`qbook.recorded.RecordedRuns`) with the call the chapter made, so that
the store replays it; the short small-``n`` bias runs of :func:`ring_bias_rows`
run live:

* :func:`tiny_row`, :func:`tiny_table`, :func:`tiny_figure`, :func:`ring_gaps`:
  the 24 four-server systems against their exact chains;
* :func:`solver_gap`, :func:`kn_row`: the complete graph against JSQ(n);
* :func:`mm1_runs`, :func:`q1_inputs`: the empty graph against M/M/1, and the
  cells of the check ``E q(1) = λ``;
* :func:`ring_bias_rows`, :func:`bias_table`, :func:`resolved`,
  :func:`against_fluid`: the ``μ = ∞`` occupancy against ``q*`` and its bias;
* :func:`noise_mse`, :func:`fluid_figure`: the ``n^{-1/2}`` noise;
* :func:`tiny_summary`, :func:`kn_summary`, :func:`mm1_summary`,
  :func:`bias_summary`: the ``(key, value)`` pairs a cell glues.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

import qlib
from qlib import exact, graphs, replicate, stats
from qlib.exact.converge import stationary_converged
from qlib.halfin_whitt import stationary_jsq
from qlib.meanfield import refined

from qbook.audit import audited_replicate

if TYPE_CHECKING:   # names for the annotations only
    from matplotlib.figure import Figure

__all__ = ["tiny_row", "tiny_table", "tiny_figure", "ring_gaps", "tiny_summary", "solver_gap", "kn_row",
           "kn_summary", "mm1_runs", "mm1_summary", "q1_inputs", "ring_bias_rows", "bias_summary", "bias_table",
           "resolved", "against_fluid", "noise_mse", "fluid_figure"]


def tiny_row(runs: Any, tiny: Mapping, name: str, lam: float, mu: float, k: int, *, replications: int,
             burn_in: float, window: float, record_dt: float, burn_margin: float, systems: int) -> dict:
    """Tiny system ``k`` (its own seed) against its exact chain, with the runs' audit.

    Parameters
    ----------
    runs : qbook.recorded.RecordedRuns
        The chapter's store (the replications and the exact chain go through it).
    tiny : mapping
        Name -> graph of the tiny systems.
    name : str
        The graph.
    lam, mu : float
        Arrival and resampling rates.
    k : int
        The system's index; the seed is ``SeedSequence([2024, k])``.
    replications : int
        Replications.
    burn_in, window, record_dt, burn_margin : float
        As in :func:`qbook.audit.audited_replicate`.
    systems : int
        Number of systems (the level of ``τ``'s interval is ``1 − 0.05 / systems``).

    Returns
    -------
    dict
        ``name, lam, mu, L`` (level cap), ``m`` (levels compared), ``cell``,
        ``tau``, ``est, se, exact`` (levels, then ``R``), ``trunc`` (the cap's
        worst share of the errors) and ``q1`` (``q(1)`` and its s.e.).
    """
    c = audited_replicate(tiny[name], lam, mu, replications=replications, seed=np.random.SeedSequence([2024, k]),
                          burn_in=burn_in, window=window, record_dt=record_dt, burn_margin=burn_margin,
                          tau_level=1 - 0.05 / systems, recorded=runs)
    sim = c.result
    se = np.pad(sim.occupancy_se, (0, 60 - sim.occupancy_se.size))
    ex = runs.value(stationary_converged, tiny[name], lam, mu, se, sim.response_time_se,
                    truncation=6 if lam < 0.6 else 9)
    lv, est = ex.levels, np.pad(sim.occupancy, (0, 60 - sim.occupancy.size))
    return dict(name=name, lam=lam, mu=mu, L=ex.result.truncation, m=lv.size, cell=c, tau=c.tau,
                est=np.append(est[lv], sim.mean_response_time), se=np.append(se[lv], sim.response_time_se),
                exact=np.append(ex.result.occupancy[lv], ex.result.mean_response_time),
                trunc=ex.worst_share, q1=(sim.occupancy[1], sim.occupancy_se[1]))


def tiny_table(rows: Sequence[dict], tau_mm1: Callable[[float], float]) -> pd.DataFrame:
    """The table of the tiny systems: cap, levels, largest ``|t|``, ``R`` and ``τ``.

    Parameters
    ----------
    rows : sequence of dict
        :func:`tiny_row` results.
    tau_mm1 : callable
        ``λ ->`` the integrated autocorrelation time of an M/M/1 queue.

    Returns
    -------
    pandas.DataFrame
    """
    return pd.DataFrame({
        "λ": [r["lam"] for r in rows], "graph": [r["name"] for r in rows],
        "μ": [f"{r['mu']:g}".replace("inf", "∞") for r in rows], "cap L": [r["L"] for r in rows],
        "levels": [r["m"] for r in rows],
        "max abs t": [f"{np.abs((r['est'] - r['exact']) / r['se']).max():.2f}" for r in rows],
        "R simulated": [f"{r['est'][-1]:.4f} ± {r['se'][-1]:.4f}" for r in rows],
        "R exact": [f"{r['exact'][-1]:.4f}" for r in rows],
        "τ (upper)": [f"{r['tau'].high:.1f}" for r in rows],
        "τ of M/M/1": [f"{tau_mm1(r['lam']):.1f}" for r in rows]})


def tiny_figure(rows: Sequence[dict], crit: float) -> "Figure":
    """Every comparison of the tiny systems in standard errors, with ``±3`` and ``±crit``.

    Parameters
    ----------
    rows : sequence of dict
        :func:`tiny_row` results.
    crit : float
        The family's critical value.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7.5, 3))
    for k, r in enumerate(rows):
        t = (r["est"] - r["exact"]) / r["se"]
        ax.plot(np.full(t.size - 1, k), t[:-1], ".", color=f"C{k % 4}")
        ax.plot(k, t[-1], "x", color="k")
    for y, ls in ((3, "--"), (crit, ":")):
        ax.axhline(y, ls=ls, color="gray", lw=1)
        ax.axhline(-y, ls=ls, color="gray", lw=1)
    ax.set_xticks(range(len(rows)), [f"{r['name'][:4]} μ={r['mu']:g}\nλ={r['lam']}" for r in rows],
                  fontsize=6, rotation=90)
    ax.set(xlabel="system", ylabel="(simulated − exact) / s.e.")
    plt.tight_layout()
    return fig


def ring_gaps(tiny: Mapping) -> tuple[float, float]:
    """How far the exact laws at ``λ = 0.8`` move with ``μ``: the 4-ring, and the others.

    Parameters
    ----------
    tiny : mapping
        Name -> graph, with ``"ring"``, ``"matching"`` and ``"star"``.

    Returns
    -------
    ring_gap : float
        The ring's largest change from ``μ = 0`` to ``μ = 1`` or ``10``.
    other_gap : float
        The smaller of the matching's and the star's largest change to ``μ = 10``.

    Examples
    --------
    >>> from qlib import graphs
    >>> tiny = {"ring": graphs.ring(4), "matching": graphs.from_edges(4, [(0, 1), (2, 3)]),
    ...         "star": graphs.from_edges(4, [(0, 1), (0, 2), (0, 3)])}
    >>> ring, other = ring_gaps(tiny)
    >>> bool(ring < 1e-10 < 1e-3 < other)
    True
    """
    def q_at(g, mu):
        return exact.stationary(tiny[g], 0.8, mu, 10).occupancy
    ring_gap = max(np.abs(q_at("ring", mu) - q_at("ring", 0.0)).max() for mu in (1.0, 10.0))
    other_gap = min(np.abs(q_at(g, 10.0) - q_at(g, 0.0)).max() for g in ("matching", "star"))
    return ring_gap, other_gap


def tiny_summary(fam: Any, burn_margin: float) -> list[tuple[str, Any]]:
    """The glued values of the tiny-systems family.

    Parameters
    ----------
    fam : qlib.stats family
        The simultaneous family of the tiny systems.
    burn_margin : float
        The burn-in margin.

    Returns
    -------
    list of (str, value)
    """
    return [("burn-margin", burn_margin), ("n-comparisons", int(fam.m)), ("max-abs-z", float(np.abs(fam.t).max())),
            ("holm-crit", float(fam.crit.max())), ("tiny-detectable-sd", float(np.max(fam.detectable / fam.se)))]


def solver_gap(n: int, lam: float, beta: float) -> float:
    """The occupancy chain against ``stationary_jsq`` on ``K_n``: largest gap over the error estimates.

    Parameters
    ----------
    n : int
        Servers.
    lam : float
        Load per server, for the occupancy chain.
    beta : float
        The Halfin–Whitt parameter of the same system, for ``stationary_jsq``.

    Returns
    -------
    float
        The largest ``|gap| / (sum of error estimates)`` over ``E Q_2``, ``E Q_3`` and ``R``.
    """
    hw = stationary_jsq(n, beta)
    ad = exact.occupancy_chain_adaptive(n, lam, qlib.DegreeDistribution.point(n - 1), tol=1e-10)
    pairs = [(n * ad.occupancy[2], hw.mean_q2, n * ad.occupancy_error + hw.error_estimates["mean_q2"]),
             (n * ad.occupancy[3], hw.mean_q3, n * ad.occupancy_error + hw.error_estimates["mean_q3"]),
             (ad.response_time, hw.mean_response, ad.response_time_error + hw.error_estimates["mean_response"])]
    return max(abs(a - b) / e for a, b, e in pairs)


def kn_row(runs: Any, n: int, mu: float, k: int, jsq: Any, *, lam: float, replications: int, burn_in: float,
           window: float, record_dt: float, burn_margin: float) -> dict:
    """Replications of ``K_n`` at resampling rate ``mu`` (seed ``SeedSequence([99, k])``) against exact JSQ(n).

    Parameters
    ----------
    runs : qbook.recorded.RecordedRuns
        The chapter's store.
    n : int
        Servers.
    mu : float
        Resampling rate.
    k : int
        The cell's index.
    jsq : result of ``qlib.exact.occupancy_chain_adaptive``
        Exact JSQ(n) at ``lam``.
    lam : float
        Load per server.
    replications : int
        Replications.
    burn_in, window, record_dt, burn_margin : float
        As in :func:`qbook.audit.audited_replicate` (``τ`` at level ``1 − 0.05 / 4``).

    Returns
    -------
    dict
        ``cell``, ``q1``, ``est, se, exact`` (levels with exact ``q ≥ 10⁻³`` above
        level 1, then ``R``) and ``err`` (the exact chain's error bounds).
    """
    c = audited_replicate(graphs.complete(n), lam, mu, replications=replications, seed=np.random.SeedSequence([99, k]),
                          burn_in=burn_in, window=window, record_dt=record_dt, burn_margin=burn_margin,
                          tau_level=1 - 0.05 / 4, recorded=runs)
    sim, ex = c.result, jsq
    lv = np.nonzero(ex.occupancy >= 1e-3)[0][1:]
    return dict(cell=c, q1=(sim.occupancy[1], sim.occupancy_se[1]),
                est=np.append(sim.occupancy[lv], sim.mean_response_time),
                se=np.append(sim.occupancy_se[lv], sim.response_time_se),
                exact=np.append(ex.occupancy[lv], ex.response_time),
                err=np.append(np.full(lv.size, ex.occupancy_error), ex.response_time_error))


def kn_summary(fam: Any, windows: Mapping[int, float], exact_values: np.ndarray,
               trunc: float) -> list[tuple[str, Any]]:
    """The glued values of the ``K_n`` family.

    Parameters
    ----------
    fam : qlib.stats family
        The family.
    windows : mapping
        ``n ->`` window (keys 20 and 50).
    exact_values : numpy.ndarray
        The exact targets.
    trunc : float
        The truncation of JSQ(n) in standard errors.

    Returns
    -------
    list of (str, value)
    """
    return [("T-20", windows[20]), ("T-50", windows[50]), ("m", int(fam.m)),
            ("max-t", float(np.abs(fam.t).max())), ("crit", float(fam.crit.max())), ("trunc", trunc),
            ("det-rel", float(np.max(fam.detectable / exact_values)))]


def mm1_runs(runs: Any, lams: Sequence[float] = (0.5, 0.8)) -> tuple[list, list, list, dict]:
    """The empty graph on 1000 servers, 20 replications per ``λ``, against M/M/1.

    Parameters
    ----------
    runs : qbook.recorded.RecordedRuns
        The chapter's store.
    lams : sequence of float, default (0.5, 0.8)
        The loads.

    Returns
    -------
    est, se, target : list
        Levels with ``λ^i ≥ 10⁻³``, then ``R``, for every ``λ``.
    mm1 : dict
        ``λ -> (R, its 95 % interval, (q(1), its s.e.))``.
    """
    est, se, target, mm1 = [], [], [], {}
    for lam in lams:
        tau = 1 / (1 - math.sqrt(lam)) ** 2
        K = int(math.log(1e-3) / math.log(lam))
        sim = runs(replicate, graphs.empty(1000), lam, 1.0, replications=20,
                   seed=np.random.SeedSequence([7, int(10 * lam)]),
                   t_end=22 * tau, burn_in=2 * tau, initial=lam ** np.arange(K + 12.0))
        i = np.arange(1, K + 1)
        est += [*sim.occupancy[i], sim.mean_response_time]
        se += [*sim.occupancy_se[i], sim.response_time_se]
        target += [*lam ** i, 1 / (1 - lam)]
        mm1[lam] = (sim.mean_response_time, sim.response_time_ci(0.95), (sim.occupancy[1], sim.occupancy_se[1]))
    return est, se, target, mm1


def mm1_summary(fam: Any, mm1: Mapping) -> list[tuple[str, Any]]:
    """The glued values of the M/M/1 family (``R`` at ``λ = 0.8``).

    Parameters
    ----------
    fam : qlib.stats family
        The family.
    mm1 : mapping
        As from :func:`mm1_runs`.

    Returns
    -------
    list of (str, value)
    """
    return [("max-abs-z", float(np.abs(fam.t).max())), ("crit", float(fam.crit.max())),
            ("R-08", float(mm1[0.8][0])), ("R-08-low", float(mm1[0.8][1].low)),
            ("R-08-high", float(mm1[0.8][1].high)), ("R-08-det", float(fam.detectable[-1]))]


def q1_inputs(rows: Sequence[dict], kn_rows: Sequence[dict], mm1: Mapping, replications: int,
              kn_lam: float) -> tuple[list, list]:
    """The cells of the check ``E q(1) = λ``: ``(λ, q(1), s.e.)`` and degrees of freedom.

    Parameters
    ----------
    rows, kn_rows : sequence of dict
        :func:`tiny_row` and :func:`kn_row` results.
    mm1 : mapping
        As from :func:`mm1_runs` (20 replications each).
    replications : int
        Replications of the tiny systems and of ``K_n``.
    kn_lam : float
        The load of ``K_n``.

    Returns
    -------
    q1 : list of tuple
    df : list of int

    Examples
    --------
    >>> q1_inputs([], [], {0.5: (2.0, None, (0.5, 0.01))}, 40, 0.9)
    ([(0.5, 0.5, 0.01)], [19])
    """
    q1 = [(r["lam"], *r["q1"]) for r in rows] + [(kn_lam, *r["q1"]) for r in kn_rows] \
        + [(lam, *v[2]) for lam, v in mm1.items()]
    df = [replications - 1] * (len(rows) + len(kn_rows)) + [19] * len(mm1)
    return q1, df


def ring_bias_rows(small: Sequence[int], lam: float, q_ring: np.ndarray, v: np.ndarray) -> list[dict]:
    """The ring at ``μ = ∞``: measured bias of levels 0–5 against ``q*``, eight long replications per ``n``.

    Parameters
    ----------
    small : sequence of int
        The ``n``.
    lam : float
        Load.
    q_ring : numpy.ndarray
        The fluid equilibrium (the start).
    v : numpy.ndarray
        The refined mean field's ``v`` (six levels).

    Returns
    -------
    list of dict
        ``n``, ``bias``, ``se`` and ``pred = v / n`` per ``n``.
    """
    rows = []
    for n in small:
        sim = replicate(graphs.ring(n), lam, math.inf, replications=8, seed=n, t_end=2e4 + 50,
                        burn_in=50.0, initial=q_ring[:8], record_dt=1.0)
        occ, se_n = (np.pad(a, (0, 6))[:6] for a in (sim.occupancy, sim.occupancy_se))
        rows.append(dict(n=n, bias=occ - q_ring[:6], se=se_n, pred=v / n))
    return rows


def bias_summary(fit_b: Any, fam_b: Any, fam_bias: Any, fam_0: Any, b3: np.ndarray, v: np.ndarray,
                 b1: Any) -> list[tuple[str, Any]]:
    """The glued values of the small-``n`` bias study.

    Parameters
    ----------
    fit_b : slope fit
        The log-log fit of the level-3 bias.
    fam_b, fam_bias, fam_0 : qlib.stats families
        Slope against ``−1``, bias against ``v_i/n``, level-3 bias against 0.
    b3 : numpy.ndarray
        The level-3 bias at each ``n`` (the second is ``n = 100``).
    v : numpy.ndarray
        The refined mean field's ``v``.
    b1 : qlib.stats.Check
        The level-one check.

    Returns
    -------
    list of (str, value)
    """
    return [("bias-slope", fit_b.slope), ("bias-slope-se", fit_b.slope_se),
            ("bias-slope-det", float(fam_b.detectable[0])), ("bias-max-t", float(np.abs(fam_bias.t).max())),
            ("n-bias-100", float(100 * b3[1])), ("v3", float(v[3])), ("b1-max-t", b1.value),
            ("b1-crit", b1.threshold), ("bias-min-t0", float(np.min(np.abs(fam_0.t))))]


def bias_table(small: Sequence[int], bias_rows: Sequence[dict]) -> pd.DataFrame:
    """The table of the small-``n`` bias of levels 2 and 3 against ``v_i/n``.

    Parameters
    ----------
    small : sequence of int
        The ``n``.
    bias_rows : sequence of dict
        :func:`ring_bias_rows` results.

    Returns
    -------
    pandas.DataFrame
    """
    return pd.DataFrame({
        "n": small, "bias of q(2)": [f"{r['bias'][2]:.2e} ± {r['se'][2]:.1e}" for r in bias_rows],
        "v₂/n": [f"{r['pred'][2]:.2e}" for r in bias_rows],
        "bias of q(3)": [f"{r['bias'][3]:.2e} ± {r['se'][3]:.1e}" for r in bias_rows],
        "v₃/n": [f"{r['pred'][3]:.2e}" for r in bias_rows]})


def resolved(rr: Any, size: int, reps: int = 20) -> np.ndarray:
    """Levels ``1..top`` whose 95 % half-width is below a fifth of the estimate (first ``size`` levels).

    Parameters
    ----------
    rr : replicated result
        With ``occupancy`` and ``occupancy_se``.
    size : int
        Levels considered.
    reps : int, default 20
        Replications (the ``t`` quantile's degrees of freedom are ``reps − 1``).

    Returns
    -------
    numpy.ndarray
        The resolved levels.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> rr = SimpleNamespace(occupancy=np.array([1, 0.5, 0.2, 0.01]), occupancy_se=np.array([0, 0.01, 0.01, 0.01]))
    >>> resolved(rr, 4).tolist()
    [1, 2]
    """
    L = min(rr.occupancy.size, size)
    est, se = rr.occupancy[:L], rr.occupancy_se[:L]
    ok = (se[1:] > 0) & (stats.t_quantile(0.975, reps - 1) * se[1:] < 0.2 * est[1:])
    return np.arange(1, (L - 1 if ok.all() else int(np.argmin(ok))) + 1)


def against_fluid(c: Any, q: np.ndarray, lam: float, pn: Any, n: int) -> dict:
    """The resolved levels of an audited ``μ = ∞`` cell, with ``q*(p_n)`` and its first-order bias.

    Parameters
    ----------
    c : qbook.audit.AuditedCell
        The cell.
    q : numpy.ndarray
        ``q*(p_n)``.
    lam : float
        Load.
    pn : qlib.DegreeDistribution
        The graph's degree law.
    n : int
        Servers.

    Returns
    -------
    dict
        ``lev, est, se, q, bias, cell``.
    """
    lev = resolved(c.result, q.size)
    bias = np.pad(refined(lam, pn).v, (0, lev[-1] + 1))[lev] / n
    assert q[1] == lam and abs(bias[0]) < 1e-12        # level 1 is tested against λ itself
    return dict(lev=lev, est=c.result.occupancy[lev], se=c.result.occupancy_se[lev], q=q[lev], bias=bias, cell=c)


def noise_mse(runs: Any, ns: Sequence[int], reps: Sequence[int], lam: float, q_ring: np.ndarray, *,
              t_burn: float, t_win: float) -> list:
    """The squared error of levels 1–4 of a window on the ring at ``μ = ∞`` (seed ``n``), per ``n``.

    Parameters
    ----------
    runs : qbook.recorded.RecordedRuns
        The chapter's store.
    ns, reps : sequence of int
        The ``n`` and their replications.
    lam : float
        Load.
    q_ring : numpy.ndarray
        The fluid equilibrium (start and target).
    t_burn, t_win : float
        Burn-in and window.

    Returns
    -------
    list of qlib.stats.ReplicationCI
        The mean squared error per ``n``.
    """
    mse = []
    for n, r_ in zip(ns, reps):
        sim = runs(replicate, graphs.ring(n), lam, math.inf, replications=r_, seed=n,
                   t_end=t_burn + t_win, burn_in=t_burn, initial=q_ring[:8])
        e2 = [float(np.sum((np.pad(r.occupancy, (0, 8))[1:5] - q_ring[1:5]) ** 2)) for r in sim.results]
        mse.append(stats.replication_ci(e2))
    return mse


def fluid_figure(ns: Sequence[int], mse: Sequence, fit_n: Any, small: Sequence[int], b3: np.ndarray,
                 s3: np.ndarray, bias_rows: Sequence[dict]) -> "Figure":
    """The rms error of a window against ``n``, with the level-3 bias and its prediction.

    Parameters
    ----------
    ns : sequence of int
        The ``n`` of the noise study.
    mse : sequence of qlib.stats.ReplicationCI
        As from :func:`noise_mse`.
    fit_n : slope fit
        The log-log fit of the MSE.
    small : sequence of int
        The ``n`` of the bias study.
    b3, s3 : numpy.ndarray
        The level-3 bias and its s.e.
    bias_rows : sequence of dict
        :func:`ring_bias_rows` results.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    rms = np.sqrt(np.array([m.mean for m in mse]))
    lo = np.sqrt(np.maximum([m.low for m in mse], 1e-12))
    ax.errorbar(ns, rms, yerr=[rms - lo, np.sqrt([m.high for m in mse]) - rms], fmt="o",
                label="rms error, $T = 20$")
    ax.loglog(ns, np.sqrt(fit_n.predict(ns)), "-", color="C0", lw=1, label=f"fit, slope {fit_n.slope / 2:.2f}")
    ax.errorbar(small, b3, yerr=stats.t_quantile(0.975, 7) * s3, fmt="s", color="C3", label="bias of $q(3)$")
    ax.plot(small, [r["pred"][3] for r in bias_rows], "^", color="C1", label="first-order prediction")
    xb = np.array([30, 3000])
    ax.loglog(xb, 100 * b3[1] / xb, ":", color="C3", lw=1, label="$\\propto 1/n$")
    ax.set(xlabel="number of servers $n$", ylabel="error of the occupancy")
    ax.legend(fontsize=8)
    return fig
