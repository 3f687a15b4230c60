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
on axes the caller owns.
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
from qlib.stats import replication_ci, t_quantile

__all__ = ["stored", "fluid_cells", "limit", "resampled", "excess", "crossing", "fluid_crossing",
           "fluid_table", "diffusion_cells", "plot_excess", "plot_diffusion", "plot_ratio", "slopes",
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


def fluid_table(cells: Mapping, closures: Sequence[Mapping], policy: str, lams: Sequence[float]) -> str:
    """Markdown: per degree and load the simulated ``R`` ± half-width, the static closure, the resampled value.

    Examples
    --------
    >>> cl = [dict(degree=2, lam=0.9, all_kind="star", all_R=2.5, one_R=3.3)]
    >>> print(fluid_table({("all", 2, 0.9): (2.52, 0.005, 3)}, cl, "all", (0.9,)).splitlines()[2])
    | 2 | star | 2.520 ± 0.016 | 2.500 | 2.028 |
    """
    cl = {(c["degree"], c["lam"]): c for c in closures}
    degs = sorted({d for p, d, _ in cells if p == policy})
    head = "| $d$ | closure | " + " | ".join(f"$\\lambda = {l}$: simulated | closure | resampled" for l in lams) + " |"
    rows = [head, "|" + "---|" * (2 + 3 * len(lams))]
    for d in degs:
        kind = cl[d, lams[0]][f"{policy}_kind"] if policy == "all" else "pair"
        parts = []
        for l in lams:
            m, se, df = cells[policy, d, l]
            parts += [f"{m:.3f} ± {float(t_quantile(0.975, df)) * se:.3f}", f"{cl[d, l][f'{policy}_R']:.3f}",
                      f"{resampled(policy, l, d):.3f}"]
        kinds = {cl[d, l][f"{policy}_kind"] for l in lams} if policy == "all" else {"pair"}
        rows.append(f"| {d} | {'/'.join(sorted(kinds)) if len(kinds) > 1 else kind} | " + " | ".join(parts) + " |")
    return "\n".join(rows)


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
