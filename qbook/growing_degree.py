"""How large a degree makes a static random graph as good as the complete graph: the chapter's stored runs and their reading.

The runs are stored by ``benchmarks/bench_growing_degree.py`` in
``benchmarks/growing_degree.json`` (sections ``fluid``, ``closures``,
``diffusion``) and ``benchmarks/bench_dense.py`` in ``bench_dense.json``.
Fluid-scale *cells* are ``(policy, d, λ) -> (mean, s.e., df)`` with
``policy`` ``"all"`` (the whole closed neighbourhood) or ``"one"`` (one
sampled neighbour); the *excess* of a cell is ``R / R_lim − 1`` against the
complete-graph limit of its policy (1 for all neighbours, the supermarket
model's ``R`` for one).  Diffusion-scale cells are ``(sequence, n) -> dict``
of E[Q₂]/√n and √n P(wait) with their standard errors.  Intervals are 95 %
Student-``t`` over independent replications.  The ``plot_*`` functions draw
on axes the caller owns; the ``*_check`` functions return the chapter's
:class:`~qlib.stats.Check` records, their margins passed in by the chapter.
"""
from __future__ import annotations

import functools
import json
import math
import pathlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from qlib.meanfield import choices, fluid
from qlib.meanfield.degrees import DegreeDistribution
from qlib.stats import Check, burn_in_family, equivalence, replication_ci, t_quantile
from qlib.stats.tost import replications_for_equivalence

__all__ = ["stored", "glue_numbers", "fluid_cells", "limit", "resampled", "excess", "crossing", "fluid_crossing",
           "closure_degree", "cross_table", "fluid_table", "closure_errors", "closure_check", "fluid_halves",
           "diffusion_halves", "burn_in_verdict", "reps_needed", "design_hours", "diffusion_cells", "degree_table",
           "gap_check", "above_check", "compare_check", "plot_excess", "plot_diffusion", "plot_ratio", "slopes",
           "SEQUENCE_LABELS"]

#: How each diffusion-scale degree sequence is written in the text.
SEQUENCE_LABELS = {"log2": r"$\log^2 n$", "sqrt": r"$\sqrt{n}$", "sqrtlog": r"$\sqrt{n}\,\log n$",
                   "n075": r"$n^{3/4}$"}
_BASE = pathlib.Path(__file__).resolve().parents[1] / "benchmarks"


def stored(name: str = "growing_degree.json", root: str | pathlib.Path | None = None) -> dict:
    """The stored runs (a JSON file of ``benchmarks/``).

    Examples
    --------
    >>> "fluid" in stored()
    True
    """
    return json.loads(((_BASE if root is None else pathlib.Path(root)) / name).read_text())


def glue_numbers(prefix: str, values: Mapping[str, Any]) -> None:
    """Glue each value under ``f"{prefix}-{key}"`` (integers as ``int``, the rest as ``float``), not displayed."""
    from myst_nb import glue
    for k, v in values.items():
        glue(f"{prefix}-{k}", int(v) if isinstance(v, (int, np.integer)) else float(v), display=False)


def fluid_cells(data: Mapping) -> dict[tuple[str, int, float], tuple[float, float, int]]:
    """``(policy, d, λ) -> (mean R, s.e., df)`` from the ``fluid`` section.

    Examples
    --------
    >>> cells = fluid_cells({"cells": [dict(policy="all", degree=2, lam=0.9, R=[2.0, 2.2])]})
    >>> cells["all", 2, 0.9]
    (2.1, 0.1, 1)
    """
    out = {}
    for c in data["cells"]:
        R = np.asarray(c["R"], float)
        out[c["policy"], c["degree"], c["lam"]] = (round(float(R.mean()), 12),
                                                   round(float(R.std(ddof=1) / math.sqrt(R.size)), 12), R.size - 1)
    return out


@functools.cache
def limit(policy: str, lam: float) -> float:
    """The complete-graph limit of ``R`` as ``n → ∞``: 1 (all neighbours), the supermarket model's (one).

    Examples
    --------
    >>> limit("all", 0.9), round(limit("one", 0.9), 4)
    (1.0, 2.6141)
    """
    if policy == "all":
        return 1.0
    return float(choices.response_time(lam, DegreeDistribution.point(1), 2))


@functools.cache
def resampled(policy: str, lam: float, d: int) -> float:
    """``R`` of the fluid limit on resampled ``d``-regular graphs (μ = ∞), the policy's.

    Examples
    --------
    >>> round(resampled("all", 0.9, 2), 4), resampled("one", 0.9, 8) == limit("one", 0.9)
    (2.0279, True)
    """
    if policy == "all":
        return float(fluid.response_time(lam, DegreeDistribution.point(d)))
    return float(choices.response_time(lam, DegreeDistribution.point(d), 2))


def excess(cells: Mapping) -> dict[tuple[str, int, float], tuple[float, float, float]]:
    """``key -> (R/R_lim − 1, lower, upper)``: the excess over the policy's limit with its 95 % interval.

    Examples
    --------
    >>> e = excess({("all", 2, 0.9): (2.0, 0.1, 3)})
    >>> tuple(round(x, 3) for x in e["all", 2, 0.9])
    (1.0, 0.682, 1.318)
    """
    out = {}
    for (pol, d, lam), (m, se, df) in cells.items():
        L, h = limit(pol, lam), float(t_quantile(0.975, df)) * se
        out[pol, d, lam] = ((m - L) / L, (m - h - L) / L, (m + h - L) / L)
    return out


def crossing(exc: Mapping, policy: str, lam: float, degrees: Sequence[int], target: float = 0.01) -> dict[str, Any]:
    """Where the excess falls below ``target``: the interpolated degree and its bracket.

    ``d`` interpolates ``log(excess)`` linearly in ``d`` between the last grid
    degree at or above ``target`` and the next; the bracket runs from the
    largest degree whose interval lies above ``target`` to the smallest
    from which every interval lies below it.  ``None`` where the grid ends first.

    Examples
    --------
    >>> e = {("all", d, 0.9): (x, x * 0.9, x * 1.1) for d, x in ((8, 0.04), (16, 0.02), (32, 0.005))}
    >>> c = crossing(e, "all", 0.9, (8, 16, 32))
    >>> round(c["d"], 1), c["low"], c["high"]
    (24.0, 16, 32)
    """
    degs = sorted(degrees)
    ex = [exc[policy, d, lam] for d in degs]
    above = [d for d, (_, lo, _) in zip(degs, ex) if lo > target]
    below_from = [d for i, d in enumerate(degs) if all(hi < target for _, _, hi in ex[i:])]
    i = max((i for i, (e, _, _) in enumerate(ex) if e >= target), default=None)
    if i is None or i + 1 >= len(degs):
        return dict(d=None, low=max(above, default=None), high=min(below_from, default=None))
    (d0, e0), (d1, e1) = (degs[i], ex[i][0]), (degs[i + 1], max(ex[i + 1][0], 1e-12))
    d = d0 + (d1 - d0) * math.log(e0 / target) / math.log(e0 / e1)
    return dict(d=d, low=max(above, default=None), high=min(below_from, default=None))


def fluid_crossing(policy: str, lam: float, target: float = 0.01, d_max: int = 2000) -> int | None:
    """The smallest degree at which the resampled fluid value is within ``target`` of the limit.

    Examples
    --------
    >>> fluid_crossing("all", 0.7), fluid_crossing("one", 0.7)
    (12, 1)
    """
    for d in range(1, d_max + 1):
        if resampled(policy, lam, d) <= (1 + target) * limit(policy, lam):
            return d
    return None


def fluid_table(cells: Mapping, closures: Sequence[Mapping], policies: Sequence[str], lams: Sequence[float]) -> str:
    """Markdown: per policy, degree and load the simulated ``R`` ± half-width, the static closure, the resampled value.

    Examples
    --------
    >>> cl = [dict(degree=2, lam=0.9, all_kind="star", all_R=2.5, one_R=3.3)]
    >>> print(fluid_table({("all", 2, 0.9): (2.52, 0.005, 3)}, cl, ["all"], (0.9,)).splitlines()[2])
    | all | 2 | star | 2.520 ± 0.016 | 2.500 | 2.028 |
    """
    cl = {(c["degree"], c["lam"]): c for c in closures}
    head = "| policy | $d$ | closure | " + " | ".join(f"$\\lambda = {l}$: simulated | closure | resampled"
                                                    for l in lams) + " |"
    rows = [head, "|" + "---|" * (3 + 3 * len(lams))]
    for policy in policies:
        for d in sorted({d for p, d, _ in cells if p == policy}):
            parts = []
            for l in lams:
                m, se, df = cells[policy, d, l]
                parts += [f"{m:.3f} ± {float(t_quantile(0.975, df)) * se:.3f}", f"{cl[d, l][f'{policy}_R']:.3f}",
                          f"{resampled(policy, l, d):.3f}"]
            kinds = sorted({cl[d, l][f"{policy}_kind"] for l in lams}) if policy == "all" else ["pair"]
            rows.append(f"| {policy} | {d} | {'/'.join(kinds)} | " + " | ".join(parts) + " |")
    return "\n".join(rows)


def closure_degree(closures: Sequence[Mapping], policy: str, lam: float, degrees: Sequence[int],
                   target: float = 0.01) -> int | None:
    """The first grid degree at which the static closure's ``R`` is within ``target`` of the limit.

    Examples
    --------
    >>> cl = [dict(degree=d, lam=0.9, all_R=1 + 0.1 / d) for d in (2, 8, 16)]
    >>> closure_degree(cl, "all", 0.9, (2, 8, 16))
    16
    """
    cl = {(c["degree"], c["lam"]): c for c in closures}
    return min((d for d in sorted(degrees) if cl[d, lam][f"{policy}_R"] <= (1 + target) * limit(policy, lam)),
               default=None)


def cross_table(cross: Mapping, closures: Sequence[Mapping], degrees: Sequence[int]) -> str:
    """Markdown: per ``(policy, λ)`` of ``cross`` the interpolated 1 % degree, its bracket, the closure's and the
    resampled graph's degree (``None`` brackets end past the grid: ``>d_max``).

    Examples
    --------
    >>> cl = [dict(degree=d, lam=0.7, all_R=1.001) for d in (8, 16)]
    >>> print(cross_table({("all", 0.7): dict(d=12.6, low=8, high=None)}, cl, (8, 16)).splitlines()[2])
    | all | 0.7 | 13 | 8–>16 | 8 | 12 |
    """
    rows = ["| policy | λ | degree | bracket | closure | resampled |", "|---|---|---|---|---|---|"]
    for (p, lam), c in cross.items():
        d = "–" if c["d"] is None else f"{c['d']:.0f}"
        rows.append(f"| {p} | {lam} | {d} | {c['low']}–{c['high'] or f'>{max(degrees)}'} | "
                    f"{closure_degree(closures, p, lam, degrees)} | {fluid_crossing(p, lam)} |")
    return "\n".join(rows)


def closure_errors(cells: Mapping, closures: Sequence[Mapping]) -> dict[tuple, tuple[float, str, float, float, int]]:
    """``(policy, d, λ) -> (closure R, kind, closure/simulation − 1, its s.e. (delta method), df)``.

    Examples
    --------
    >>> cl = [dict(degree=3, lam=0.9, all_R=2.2, all_kind="star", one_R=3.0, one_kind="pair")]
    >>> e = closure_errors({("all", 3, 0.9): (2.0, 0.02, 9)}, cl)["all", 3, 0.9]
    >>> e[1], round(e[2], 3), round(e[3], 4)
    ('star', 0.1, 0.011)
    """
    cl = {(p, c["degree"], c["lam"]): (c[f"{p}_R"], c[f"{p}_kind"]) for c in closures for p in ("all", "one")}
    out = {}
    for k, (m, se, df) in cells.items():
        R, kind = cl[k]
        out[k] = (R, kind, R / m - 1, R * se / m ** 2, df)
    return out


def closure_check(errors: Mapping, keys: Sequence, margin: float, claim: str) -> Check:
    """TOST (Bonferroni over ``keys``): every closure within ``margin`` (relative) of its simulated ``R``."""
    e = np.array([errors[k][2:] for k in keys], float)
    return Check.from_equivalence(equivalence(e[:, 0], np.maximum(e[:, 1], 1e-9), e[:, 2], margin), claim,
                                  percent=True)


def fluid_halves(data: Mapping, keep=None) -> dict[tuple, np.ndarray]:
    """``(policy, d, λ) -> (replications, 2)`` half-window response times of the fluid cells in which some task
    waited (``np.ptp > 0``), restricted to the keys for which ``keep(key)`` is true."""
    out = {}
    for c in data["cells"]:
        k, h = (c["policy"], c["degree"], c["lam"]), np.asarray(c["halves"], float)
        if np.ptp(h) > 0 and (keep is None or keep(k)):
            out[k] = h
    return out


def diffusion_halves(data: Mapping, sequences: Sequence[str]) -> dict[tuple, np.ndarray]:
    """``(sequence, n) -> (replications, 2)`` half-window E[Q₂]/√n of the diffusion cells of ``sequences``."""
    return {(c["sequence"], c["n"]): np.array([r["q2_halves"] for r in c["reps"]], float)
            for c in data["cells"] if c["sequence"] in sequences}


def burn_in_verdict(halves: Mapping, margin: float, claim: str) -> Check:
    """The halves test of every cell (intersection–union, ``margin`` relative to each cell's mean), as the line of
    its worst cell, with ``claim`` followed by ``", worst of <cells>"``."""
    b = burn_in_family(halves, margin, relative=True)
    return Check.from_burn_in(b.checks[b.worst], f"{claim}, worst of {len(b)}")


def reps_needed(halves: Mapping, margin: float) -> tuple[int, Any]:
    """Replications for which every cell's halves test would resolve ``margin`` (relative to the cell's mean) with
    80 % power at its present s.d. (intersection–union, per cell), and the cell that needs most.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> h = {"a": 1 + rng.normal(0, 0.01, (4, 2)), "b": 1 + rng.normal(0, 0.05, (4, 2))}
    >>> reps_needed(h, 0.05)[1]
    'b'
    """
    need = {}
    for k, h in halves.items():
        d = h[:, 0] - h[:, 1]
        need[k] = replications_for_equivalence(max(float(d.std(ddof=1)), 1e-12), margin * abs(float(h.mean())),
                                               method="iut", per="check", r_max=10 ** 6)
    k = max(need, key=need.get)
    return need[k], k


def design_hours(data: Mapping, sequences: Sequence[str], reps: int) -> float:
    """Hours of one core that ``reps`` replications of every diffusion cell of ``sequences`` would take, at the
    stored runs' seconds per replication.

    Examples
    --------
    >>> design_hours({"cells": [dict(sequence="sqrt", seconds=36.0, reps=[{}] * 4)]}, ["sqrt"], 400)
    1.0
    """
    return sum(reps * c["seconds"] / len(c["reps"]) for c in data["cells"] if c["sequence"] in sequences) / 3600


def diffusion_cells(data: Mapping) -> tuple[dict, dict]:
    """``(sequence, n) -> dict`` (degree, ``q2``, ``pwait``, their s.e. and df) and ``n -> exact clique values``.

    Examples
    --------
    >>> data = {"cells": [dict(n=100, sequence="sqrt", degree=10, reps=[dict(q2=1.0, pwait=2.0), dict(q2=1.2, pwait=2.2)])],
    ...         "exact": [dict(n=100, q2=0.9, pwait=1.9)]}
    >>> cells, exact = diffusion_cells(data)
    >>> round(cells["sqrt", 100]["q2"], 3), exact[100]["q2"]
    (1.1, 0.9)
    """
    cells = {}
    for c in data["cells"]:
        row = dict(degree=c["degree"], df=len(c["reps"]) - 1)
        for k in ("q2", "pwait"):
            ci = replication_ci([r[k] for r in c["reps"]])
            row[k], row[k + "_se"] = float(ci.mean), float(ci.se)
        cells[c["sequence"], c["n"]] = row
    return cells, {e["n"]: e for e in data["exact"]}


def gap_check(cells: Mapping, exact: Mapping, sequences: Sequence[str], n: int, margin: float, claim: str) -> Check:
    """TOST (Bonferroni over sequences × {E[Q₂], P(wait)}): the graphs at ``n`` within ``margin`` of the complete graph."""
    est = [cells[s, n][k] / exact[n][k] - 1 for k in ("q2", "pwait") for s in sequences]
    se = [cells[s, n][k + "_se"] / exact[n][k] for k in ("q2", "pwait") for s in sequences]
    return Check.from_equivalence(equivalence(est, se, cells[sequences[0], n]["df"], margin), claim, percent=True)


def above_check(cells: Mapping, exact: Mapping, sequences: Sequence[str], n: int, margin: float, claim: str) -> Check:
    """One-sided (Bonferroni over sequences × {E[Q₂], P(wait)}): every graph at ``n`` more than ``margin`` above the
    complete graph.

    The line's error is the complete graph's value over the graph's at the lowest 95 % lower bound of
    ``graph / complete``, against ``1 / (1 + margin)``: the check passes when it is below.
    """
    gap = np.array([[cells[s, n][k] / exact[n][k] - 1, cells[s, n][k + "_se"] / exact[n][k]]
                    for s in sequences for k in ("q2", "pwait")])
    low = float(np.min(gap[:, 0] - float(t_quantile(1 - 0.05 / len(gap), cells[sequences[0], n]["df"])) * gap[:, 1]))
    return Check.bound(claim, 1 / (1 + low) if low > -1 else math.inf, 1 / (1 + margin),
                       method=f"one-sided t, Bonferroni over {len(gap)}", percent=True)


def compare_check(data: Mapping, margin: float) -> Check:
    """TOST: E[Q₂] on the circulant within ``margin`` (relative) of a uniform random regular graph's (``compare``)."""
    cc, cr = replication_ci(data["circulant"]), replication_ci(data["regular"])
    est = cc.mean / cr.mean - 1
    se = math.hypot(cc.se / cr.mean, cc.mean * cr.se / cr.mean ** 2)
    claim = f"circulant equals a random regular graph: E[Q2], n = {data['n']}, d = {data['degree']}"
    return Check.from_equivalence(equivalence(est, se, cc.df + cr.df, margin), claim, percent=True)


def degree_table(cells: Mapping, ns: Sequence[int]) -> str:
    """Markdown: the degree of each sequence at each ``n`` (with ``√n`` for scale).

    Examples
    --------
    >>> c = {(s, 100): dict(degree=d) for s, d in zip(SEQUENCE_LABELS, (22, 10, 46, 32))}
    >>> print(degree_table(c, [100]).splitlines()[2])
    | 100 | 22 | 10 | 46 | 32 | 10 |
    """
    rows = ["| $n$ | " + " | ".join(SEQUENCE_LABELS.values()) + r" | $\sqrt n$ |", "|---" * 6 + "|"]
    rows += [f"| {n} | " + " | ".join(str(cells[s, n]["degree"]) for s in SEQUENCE_LABELS) + f" | {math.sqrt(n):.0f} |"
             for n in ns]
    return "\n".join(rows)


def plot_excess(ax, exc: Mapping, policy: str, lams: Sequence[float], degrees: Sequence[int],
                target: float = 0.01) -> None:
    """The excess ``R/R_lim − 1`` against ``d`` (log–log), simulated (points, 95 % bars) and resampled (lines)."""
    grid = np.unique(np.geomspace(min(degrees), max(degrees), 60).astype(int))
    for lam, col in zip(lams, ("C0", "C1", "C3")):
        ds = [d for d in degrees if exc[policy, d, lam][0] > 1e-5]
        e = np.array([exc[policy, d, lam] for d in ds])
        ax.errorbar(ds, e[:, 0], yerr=[e[:, 0] - np.maximum(e[:, 1], 1e-6), e[:, 2] - e[:, 0]], fmt="o", ms=4,
                    color=col, label=f"$\\lambda = {lam}$")
        if policy == "all":
            fl = np.array([resampled(policy, lam, int(d)) - 1 for d in grid])
            ax.plot(grid[fl > 1e-5], fl[fl > 1e-5], color=col, lw=1)
    ax.axhline(target, color="k", ls=":", lw=1)
    ax.set(xscale="log", yscale="log", xlabel="degree $d$", ylabel=r"$R / R_{\rm lim} - 1$")


def plot_diffusion(axs, cells: Mapping, exact: Mapping, key: str, ylabel: str) -> None:
    """``key`` (``"q2"`` or ``"pwait"``) against ``n`` per degree sequence (95 % bars), the exact clique (black)."""
    ns = sorted(exact)
    for seq, col in zip(SEQUENCE_LABELS, ("C3", "C1", "C0", "C2")):
        c = [cells[seq, n] for n in ns]
        hw = [float(t_quantile(0.975, x["df"])) * x[key + "_se"] for x in c]
        axs.errorbar(ns, [x[key] for x in c], yerr=hw, fmt="o-", ms=4, color=col, label=f"$d \\sim$ {SEQUENCE_LABELS[seq]}")
    axs.plot(ns, [exact[n][key] for n in ns], "k-", lw=2, label="complete graph (exact)")
    axs.set(xscale="log", yscale="log", xlabel="$n$", ylabel=ylabel)


def plot_ratio(ax, cells: Mapping, exact: Mapping) -> None:
    """E[Q₂] on the graph over the complete graph's against ``n``, per degree sequence, with a ``√n`` guide."""
    ns = sorted(exact)
    for seq, col in zip(SEQUENCE_LABELS, ("C3", "C1", "C0", "C2")):
        ax.plot(ns, [cells[seq, n]["q2"] / exact[n]["q2"] for n in ns], "o-", color=col,
                label=f"$d \\sim$ {SEQUENCE_LABELS[seq]}")
    ref = cells["sqrt", ns[0]]["q2"] / exact[ns[0]]["q2"]
    ax.plot(ns, [ref * math.sqrt(n / ns[0]) for n in ns], "k:", lw=1, label=r"$\propto \sqrt{n}$")
    ax.axhline(1, color="k", lw=1)
    ax.set(xscale="log", yscale="log", xlabel="$n$", ylabel=r"E$[Q_2]$ / complete graph")


def slopes(cells: Mapping, exact: Mapping) -> dict[str, float]:
    """Per sequence, the least-squares slope of log(E[Q₂]/complete graph's) against log n.

    Examples
    --------
    >>> cells = {("sqrt", n): dict(q2=n ** 0.5) for n in (100, 400)}
    >>> round(slopes(cells, {100: dict(q2=1.0), 400: dict(q2=1.0)})["sqrt"], 3)
    0.5
    """
    out = {}
    for seq in {s for s, _ in cells}:
        ns = sorted(n for s, n in cells if s == seq)
        y = [math.log(cells[seq, n]["q2"] / exact[n]["q2"]) for n in ns]
        out[seq] = float(np.polyfit(np.log(ns), y, 1)[0])
    return out
