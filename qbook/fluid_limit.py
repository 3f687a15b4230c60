"""The mechanics of ``chapters/fluid_limit.md``: the replicated path runs against the fluid
ODE, the gap's slopes and constants, the exact M/M/1 transient check and the figures.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping

import numpy as np

import qlib
from qlib import DegreeDistribution
from qlib.exact import mm1_transient
from qlib.meanfield import fluid
from qlib.meanfield.path_gap import fluid_deviation
from qlib.stats.welch import welch_difference

__all__ = ["path_runs", "gap_slopes", "gap_constants", "mm1_comparison", "plot_paths", "plot_scaling"]

MUS = (("∞", math.inf), ("log n", None))   # None: μ_n = log n


def path_runs(make_graph: Mapping[str, Callable], reps: Mapping[int, int], starts: Mapping,
              lam: float, t_end: float, dt: float, n_jobs: int = 2) -> dict:
    """Replicated runs of every graph family, size, start and service rate (``μ_n = ∞`` and
    ``log n``), each with its sup gap to the fluid ODE of the graph's degree law.

    Parameters
    ----------
    make_graph : mapping
        Family name to ``n -> Graph``.
    reps : mapping
        ``n`` to replications.
    starts : mapping
        Start name to initial occupancy.
    lam, t_end, dt : float
        Load, horizon, recording step.
    n_jobs : int

    Returns
    -------
    dict
        ``(family, n, start, "∞" | "log n")`` to ``{"gap", "excess", "z", "path", "ode"}``: the
        :func:`qlib.meanfield.path_gap.fluid_deviation` fields (levels 1 to 3, counts of at least
        10), the first replication and the ODE's solution. Seeds count the runs.
    """
    runs = {}
    for law, make in make_graph.items():
        for n, r in reps.items():
            G = make(n)
            for (start, q0), (mu_name, mu) in itertools.product(starts.items(), MUS):
                rr = qlib.replicate(G, lam, math.log(n) if mu is None else mu, replications=r,
                                    seed=len(runs), t_end=t_end, record_dt=dt, initial=q0, n_jobs=n_jobs)
                ode = fluid.solve(lam, DegreeDistribution.from_graph(G), q0, rr.results[0].times)
                dev = fluid_deviation([x.paths for x in rr.results], ode.q, n, min_count=10,
                                      which_levels=(1, 2, 3))
                runs[law, n, start, mu_name] = dict(gap=dev.gap, excess=dev.excess, z=dev.z,
                                                    path=rr.results[0], ode=ode)
    return runs


def gap_slopes(runs: Mapping, ns: tuple[int, int] = (10**3, 10**4)) -> dict:
    """The slope of ``log(sup gap)`` per decade of ``n`` between two sizes (Welch), per setting.

    Parameters
    ----------
    runs : mapping
        As :func:`path_runs` returns.
    ns : (int, int)
        The two sizes, a decade apart.

    Returns
    -------
    dict
        ``(family, start, μ)`` to ``(slope, s.e., df)``.
    """
    keys = dict.fromkeys((k[0], k[2], k[3]) for k in runs)      # (family, start, μ), in run order
    scale = math.log(ns[1] / ns[0])
    out = {}
    for law, start, mu in keys:
        diff, se, df = welch_difference(*(np.log(runs[law, n, start, mu]["gap"]) for n in ns))
        out[law, start, mu] = (diff / scale, se / scale, df)
    return out


def gap_constants(runs: Mapping, make_graph: Mapping, starts: Mapping, ns) -> tuple[list, list]:
    """Per family and start at ``μ = ∞``: the constant ``C`` (mean over ``n`` of ``√n`` times the
    mean sup gap) and ``σ``, the largest pooled standard deviation of the scaled deviations ``z``.

    Returns
    -------
    C, sigma : list of float
    """
    C, sig = [], []
    for law, start in itertools.product(make_graph, starts):
        C.append(float(np.mean([math.sqrt(n) * runs[law, n, start, "∞"]["gap"].mean() for n in ns])))
        z = [runs[law, n, start, "∞"]["z"] for n in ns]
        pooled = sum(((a - a.mean(axis=0)) ** 2).sum(axis=0) for a in z) / sum(len(a) - 1 for a in z)
        sig.append(float(np.sqrt(pooled).max()))
    return C, sig


def mm1_comparison(lams=(0.5, 0.9), starts=([1.0], [1.0, 1.0, 1.0, 1.0]),
                   t_grid: np.ndarray | None = None) -> tuple[float, float, float]:
    """``fluid.solve`` with ``φ ≡ 1`` (``δ_0``) against the exact M/M/1 transient
    (:func:`qlib.exact.mm1_transient`, uniformization), and with ``φ(x) = x`` (``δ_1``), which
    must miss.

    Returns
    -------
    worst : float
        Largest sup gap of ``δ_0``.
    bound : float
        Largest error bound of the exact transient.
    wrong : float
        Smallest sup gap of ``δ_1``.
    """
    t_grid = np.arange(0.0, 20.25, 0.5) if t_grid is None else t_grid
    worst, bound, wrong = 0.0, 0.0, math.inf
    for lam, q0 in itertools.product(lams, starts):
        ex = mm1_transient(lam, q0, t_grid, tol=1e-12)
        for law in (DegreeDistribution.point(0), DegreeDistribution.point(1)):
            ode = fluid.solve(lam, law, q0, t_grid).q
            w = max(ode.shape[1], ex.tail.shape[1])
            gap = float(np.abs(np.pad(ode, ((0, 0), (0, w - ode.shape[1])))
                               - np.pad(ex.tail, ((0, 0), (0, w - ex.tail.shape[1])))).max())
            if law.max_degree == 0:
                worst, bound = max(worst, gap), max(bound, float(ex.error_bound.max()))
            else:
                wrong = min(wrong, gap)
    return worst, bound, wrong


def plot_paths(axes, runs: Mapping, make_graph: Mapping, starts: Mapping, n: int) -> None:
    """Occupancy ``q(t, i)``, ``i = 1..4``, at size ``n``: one path at ``μ = ∞`` (solid) and at
    ``log n`` (dotted) against the ODE (black dashed), one axis per start (rows) and family."""
    for (col, law), (row, start) in itertools.product(enumerate(make_graph), enumerate(starts)):
        ax = axes[row, col]
        for mu_name, ls in (("∞", "-"), ("log n", ":")):
            r, ode = runs[law, n, start, mu_name]["path"], runs[law, n, start, mu_name]["ode"]
            P = np.pad(r.paths, ((0, 0), (0, max(0, 5 - r.paths.shape[1]))))
            for i in range(1, 5):
                ax.plot(r.times, P[:, i], ls, color=f"C{i - 1}", lw=1.2,
                        label=f"q(t, {i})" if mu_name == "∞" else None)
        ax.plot(ode.t, np.pad(ode.q, ((0, 0), (0, max(0, 5 - ode.q.shape[1]))))[:, 1:5], "k--", lw=0.8)
        ax.set_title(f"{law}, {start}", fontsize=9)
    axes[0, 0].legend(fontsize=8)
    for ax in axes[1]:
        ax.set_xlabel("t")
    for ax in axes[:, 0]:
        ax.set_ylabel("occupancy")


def plot_scaling(ax, ci: Mapping, make_graph: Mapping, starts: Mapping, ns, C_mean: float) -> None:
    """Mean sup gap against ``n`` with 95 % intervals, per family (colour), start (marker) and
    ``μ`` (solid ``∞``, dotted ``log n``), and ``C_mean/√n`` (grey)."""
    nn = np.array(list(ns), float)
    for (c, law), (start, marker), (mu_name, ls) in itertools.product(
            enumerate(make_graph), zip(starts, "os"), (("∞", "-"), ("log n", ":"))):
        cis = [ci[law, n, start, mu_name] for n in ns]
        ax.errorbar(nn, [c_.mean for c_ in cis], yerr=[c_.half_width for c_ in cis], fmt=marker + ls,
                    color=f"C{c}", ms=4, capsize=2, label=f"{law}, {start}" if mu_name == "∞" else None)
    ax.plot(nn, C_mean / np.sqrt(nn), color="grey", lw=3, alpha=0.4)
    ax.set(xscale="log", yscale="log", xlabel="n", ylabel="mean of sup gap")
    ax.legend(fontsize=7)
