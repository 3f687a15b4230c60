"""One neighbour or all of them: stored simulations of two policies against their closures.

Two policies share a static graph: a task asks **one** uniformly drawn
neighbour and joins the shorter of the two queues (``choices=2``), or it
asks **all** neighbours and joins a shortest queue of the closed
neighbourhood (``choices=None``).  Their simulations are stored by
``benchmarks/pair_choices.py`` and ``benchmarks/one_or_all.py``; this module
reads them into *cells* ``(policy, graph, λ) -> (mean, s.e., df)`` with
``policy`` ``"one"`` or ``"all"``, and compares them with each other (the
price of asking one, :func:`price_of_one`) and with the pair approximations
of :mod:`qlib.meanfield.pair` and :mod:`qlib.meanfield.pair_choices`
(:func:`pair_errors`).  The ``plot_*`` functions draw on a Matplotlib axes
the caller owns.  All intervals are two-sided 95 % Student-``t`` intervals.
"""
from __future__ import annotations

import functools
import json
import pathlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from qlib._validate import mapping
from qlib.meanfield import choices, fluid
from qlib.meanfield.degrees import DegreeDistribution
from qlib.meanfield.pair import pair_approximation
from qlib.meanfield.pair_choices import pair_approximation_choices
from qlib.stats.intervals import t_quantile

__all__ = ["POLICY_CHOICES", "stored_runs", "policy_cells", "pair_response_time", "supermarket_gap",
           "price_of_one", "fluid_price", "pair_errors", "error_arrays", "longer_burn_in_shift",
           "relative_halves", "busy_fraction", "design_numbers", "plot_policies", "plot_price",
           "plot_messages"]

#: The ``choices`` argument of each policy: ``"one"`` asks one neighbour, ``"all"`` all of them.
POLICY_CHOICES = {"one": 2, "all": None}

Cell = tuple[float, float, int]      # (mean, standard error, degrees of freedom)




def _policy(policy: str) -> str:
    if policy not in POLICY_CHOICES:
        raise ValueError(f"policy must be one of {sorted(POLICY_CHOICES)}, got {policy!r}")
    return policy


def stored_runs(root: str | pathlib.Path | None = None) -> tuple[dict, dict, dict]:
    """The stored runs of both policies, ``(one, every, confirm)``.

    Parameters
    ----------
    root : str or Path, optional
        The folder holding ``pair_choices.json``, ``one_or_all.json`` and
        ``one_or_all_confirm.json``; by default ``benchmarks/`` next to the
        ``qlib`` package.

    Returns
    -------
    tuple of dict
        The one-neighbour runs (``choices=2``), the all-neighbours runs and
        the all-neighbours runs made for the burn-in test alone.

    Raises
    ------
    FileNotFoundError
        If a file is missing.

    Examples
    --------
    >>> one, every, confirm = stored_runs()
    >>> one["replications"] > 1 and every["n"] == one["n"]
    True
    """
    base = (pathlib.Path(__file__).resolve().parents[1] / "benchmarks" if root is None
            else pathlib.Path(root))
    return tuple(json.loads((base / f).read_text())          # type: ignore[return-value]
                 for f in ("pair_choices.json", "one_or_all.json", "one_or_all_confirm.json"))


def policy_cells(one: Mapping, every: Mapping) -> tuple[dict[tuple[str, str, float], Cell], dict[str, int]]:
    """Cells ``(policy, graph, λ) -> (mean, s.e., df)`` of both policies, and each graph's degree.

    Parameters
    ----------
    one : Mapping
        The one-neighbour runs: ``replications`` and ``rows`` with ``graph``,
        ``lam``, ``sim`` and its 95 % interval ``sim_low``, ``sim_high``
        (the standard error is the half-width over the ``t`` quantile).
    every : Mapping
        The all-neighbours runs: ``replications`` and ``rows`` with ``graph``,
        ``degree``, ``lam``, ``sim`` and ``sim_se``.

    Returns
    -------
    cells : dict
        ``(policy, graph, λ) -> (mean, s.e., df)``, ``policy`` ``"one"`` or ``"all"``,
        ``df`` the replications less one.
    degree : dict
        ``graph -> d``.

    Raises
    ------
    TypeError
        If ``one`` or ``every`` is not a mapping.

    Examples
    --------
    >>> one = {"replications": 3, "rows": [dict(graph="ring", lam=0.5, sim=2.0, sim_low=1.9, sim_high=2.1)]}
    >>> every = {"replications": 3, "rows": [dict(graph="ring", degree=2, lam=0.5, sim=1.5, sim_se=0.01)]}
    >>> cells, deg = policy_cells(one, every)
    >>> round(float(cells["one", "ring", 0.5][1]), 4), cells["all", "ring", 0.5], deg
    (0.0232, (1.5, 0.01, 2), {'ring': 2})
    """
    one, every = mapping(one, "one"), mapping(every, "every")
    t1 = t_quantile(0.975, one["replications"] - 1)
    cells: dict = {}
    for r in one["rows"]:
        cells["one", r["graph"], r["lam"]] = (r["sim"], (r["sim_high"] - r["sim_low"]) / 2 / t1,
                                              one["replications"] - 1)
    for r in every["rows"]:
        cells["all", r["graph"], r["lam"]] = (r["sim"], r["sim_se"], every["replications"] - 1)
    return cells, {r["graph"]: r["degree"] for r in every["rows"]}


@functools.cache
def pair_response_time(lam: float, d: int, policy: str) -> float:
    """Mean response time of a policy's pair approximation on a ``d``-regular graph (cached).

    Parameters
    ----------
    lam : float
        Load per server, ``0 < λ < 1``.
    d : int
        Degree, ``>= 1``.
    policy : {"one", "all"}
        ``"one"``: :func:`~qlib.meanfield.pair_choices.pair_approximation_choices`
        with ``choices=2``; ``"all"``: :func:`~qlib.meanfield.pair.pair_approximation`.

    Returns
    -------
    float
        ``R`` of the pair approximation at ``μ = 0``.

    Raises
    ------
    ValueError
        If ``policy`` is not ``"one"`` or ``"all"`` (the solvers check ``lam`` and ``d``).

    Examples
    --------
    >>> pair_response_time(0.5, 2, "one") > pair_response_time(0.5, 2, "all") > 1
    True
    """
    k = POLICY_CHOICES[_policy(policy)]
    if k is None:
        return pair_approximation(lam, d).response_time
    return pair_approximation_choices(lam, d, choices=k).response_time


def supermarket_gap(lam: float, law: DegreeDistribution) -> tuple[float, float]:
    """Relative distance of the ``choices=2`` equilibrium from ``λ^(2^i − 1)``, and its rounding bound.

    Parameters
    ----------
    lam : float
        Load per server, ``0 < λ < 1``.
    law : DegreeDistribution
        A degree law without degree zero (the closed form holds for every such law).

    Returns
    -------
    error : float
        ``max |q(i)/λ^(2^i − 1) − 1|`` over the levels with ``q(i) > 10⁻¹²``
        (those that matter to ``R``).
    tolerance : float
        ``2^(i_max + 1) ε``: each level squares the one below, so the relative
        rounding at most doubles per level.

    Raises
    ------
    TypeError
        If ``law`` is not a :class:`~qlib.meanfield.degrees.DegreeDistribution`.

    Examples
    --------
    >>> err, tol = supermarket_gap(0.9, DegreeDistribution.point(3))
    >>> bool(err <= tol < 1e-10)
    True
    """
    if not isinstance(law, DegreeDistribution):
        raise TypeError(f"law must be a DegreeDistribution, got {type(law).__name__}")
    q = choices.equilibrium(lam, law, 2)
    i = np.arange(q.size)
    keep = q > 1e-12
    closed = lam ** (2.0 ** i[keep] - 1)
    return float(np.max(np.abs(q[keep] / closed - 1))), 2.0 ** (i[keep].max() + 1) * np.finfo(float).eps


def price_of_one(cells: Mapping, graphs: Sequence[str], lams: Sequence[float]) -> dict[tuple[str, float],
                                                                                      tuple[float, float]]:
    """The price of asking one neighbour, ``R_one/R_all``, per cell, with its 95 % half-width.

    The two policies' runs are independent; the half-width is the delta
    method's, ``t · ratio · hypot(s_one/R_one, s_all/R_all)`` with the smaller
    of the two degrees of freedom.

    Parameters
    ----------
    cells : Mapping
        ``(policy, graph, λ) -> (mean, s.e., df)`` as from :func:`policy_cells`.
    graphs, lams : sequence
        The graphs and loads to compare.

    Returns
    -------
    dict
        ``(graph, λ) -> (ratio, half-width)``.

    Raises
    ------
    TypeError
        If ``cells`` is not a mapping.

    Examples
    --------
    >>> cells = {("one", "g", 0.5): (2.0, 0.01, 9), ("all", "g", 0.5): (1.0, 0.01, 9)}
    >>> ratio, half = price_of_one(cells, ["g"], [0.5])["g", 0.5]
    >>> ratio, round(half, 4)
    (2.0, 0.0506)
    """
    cells = mapping(cells, "cells")
    price = {}
    for g in graphs:
        for lam in lams:
            (m1, s1, f1), (ma, sa, fa) = cells["one", g, lam], cells["all", g, lam]
            ratio = m1 / ma
            half = t_quantile(0.975, min(f1, fa)) * ratio * np.hypot(s1 / m1, sa / ma)
            price[g, lam] = (float(ratio), float(half))
    return price


def fluid_price(lam: float, d: int) -> float:
    """The price of asking one neighbour at ``μ = ∞`` on ``d``-regular graphs, ``R*(δ₁)/R*(δ_d)``.

    Parameters
    ----------
    lam : float
        Load per server, ``0 < λ < 1``.
    d : int
        Degree, ``>= 1``.

    Returns
    -------
    float
        The ``choices=2`` fluid response time over the all-neighbours one.

    Examples
    --------
    >>> fluid_price(0.9, 1)
    1.0
    >>> fluid_price(0.9, 3) > fluid_price(0.9, 2) > 1
    True
    """
    law = DegreeDistribution.point(d)
    return float(choices.response_time(lam, law, 2) / fluid.response_time(lam, law))


def pair_errors(cells: Mapping, degree: Mapping[str, int], graphs: Sequence[str],
                lams: Sequence[float]) -> tuple[dict, list[dict]]:
    """Relative error of each policy's pair approximation against the simulation, and a table.

    Parameters
    ----------
    cells : Mapping
        ``(policy, graph, λ) -> (mean, s.e., df)`` as from :func:`policy_cells`.
    degree : Mapping
        ``graph -> d``.
    graphs, lams : sequence
        The graphs and loads of the table, in its order.

    Returns
    -------
    errors : dict
        ``(policy, graph, λ) -> (pair/sim − 1, its s.e., df)`` (the s.e. of the
        simulated mean carried to the ratio).
    rows : list of dict
        One row per ``(graph, λ)``: the simulated ``R`` ± its 95 % half-width
        and the pair's relative error, for both policies.

    Raises
    ------
    TypeError
        If ``cells`` or ``degree`` is not a mapping.

    Examples
    --------
    >>> cells = {("one", "ring", 0.5): (1.4, 0.001, 9), ("all", "ring", 0.5): (1.2, 0.001, 9)}
    >>> err, rows = pair_errors(cells, {"ring": 2}, ["ring"], [0.5])
    >>> list(rows[0])
    ['graph', 'λ', 'R sim, one', 'pair error, one', 'R sim, all', 'pair error, all']
    """
    cells, degree = mapping(cells, "cells"), mapping(degree, "degree")
    rows, err = [], {}
    for g in graphs:
        for lam in lams:
            line: dict = {"graph": g, "λ": lam}
            for pol in ("one", "all"):
                m, se, df = cells[pol, g, lam]
                pr = pair_response_time(lam, degree[g], pol)
                err[pol, g, lam] = (float(pr / m - 1), pr * se / m**2, df)
                line[f"R sim, {pol}"] = f"{m:.4f} ± {t_quantile(0.975, df) * se:.4f}"
                line[f"pair error, {pol}"] = f"{err[pol, g, lam][0]:+.2%}"
            rows.append(line)
    return err, rows


def error_arrays(errors: Mapping, policy: str, where: Sequence[tuple[str, float]]) -> tuple[np.ndarray, ...]:
    """The relative errors of one policy's pair approximation over some cells, as arrays.

    Parameters
    ----------
    errors : Mapping
        ``(policy, graph, λ) -> (error, s.e., df)`` as from :func:`pair_errors`.
    policy : {"one", "all"}
        The policy.
    where : sequence of (graph, λ)
        The cells.

    Returns
    -------
    tuple of ndarray
        ``(errors, standard errors, degrees of freedom)``, one entry per cell,
        ready for :func:`~qlib.stats.tost.equivalence`.

    Raises
    ------
    ValueError
        If ``policy`` is not ``"one"`` or ``"all"``.

    Examples
    --------
    >>> e, s, df = error_arrays({("one", "g", 0.5): (0.01, 0.002, 9)}, "one", [("g", 0.5)])
    >>> e.tolist(), s.tolist(), df.tolist()
    ([0.01], [0.002], [9.0])
    """
    pol = _policy(policy)
    return tuple(np.array([mapping(errors, "errors")[pol, g, lam] for g, lam in where]).T)


def longer_burn_in_shift(check: Mapping, cells: Mapping) -> tuple[np.ndarray, np.ndarray]:
    """Relative shift of the main one-neighbour runs from reruns with a longer burn-in, and its s.e.

    Parameters
    ----------
    check : Mapping
        The reruns (``burn_in_check`` of ``pair_choices.json``):
        ``replications`` and ``rows`` with ``graph``, ``lam``, ``sim``,
        ``sim_low``, ``sim_high`` (95 % interval) and the main runs' ``main_sim``.
    cells : Mapping
        ``(policy, graph, λ) -> (mean, s.e., df)`` of the main runs.

    Returns
    -------
    shift : ndarray
        ``main/rerun − 1`` per row.
    se : ndarray
        Its standard error, the two runs' relative standard errors combined.

    Raises
    ------
    TypeError
        If ``check`` or ``cells`` is not a mapping.

    Examples
    --------
    >>> check = {"replications": 5, "rows": [dict(graph="g", lam=0.95, sim=2.0, sim_low=1.9,
    ...                                            sim_high=2.1, main_sim=2.02)]}
    >>> shift, se = longer_burn_in_shift(check, {("one", "g", 0.95): (2.02, 0.03, 9)})
    >>> round(float(shift[0]), 4), round(float(se[0]), 4)
    (0.01, 0.0234)
    """
    check, cells = mapping(check, "check"), mapping(cells, "cells")
    shift = np.array([r["main_sim"] / r["sim"] - 1 for r in check["rows"]])
    tl = t_quantile(0.975, check["replications"] - 1)
    se_long = np.array([(r["sim_high"] - r["sim_low"]) / 2 / tl / r["sim"] for r in check["rows"]])
    se_main = np.array([cells["one", r["graph"], r["lam"]][1] / r["sim"] for r in check["rows"]])
    return shift, np.hypot(se_long, se_main)


def relative_halves(runs: Mapping) -> dict[tuple[str, float], np.ndarray]:
    """Each cell's batch means of the response time relative to the cell's mean.

    Parameters
    ----------
    runs : Mapping
        Stored runs with ``rows`` holding ``graph``, ``lam``, ``sim`` and
        ``batch_response`` (replications × batches).

    Returns
    -------
    dict
        ``(graph, λ) -> batch_response / sim``, for
        :func:`~qlib.stats.burn_in.burn_in_family`.

    Raises
    ------
    TypeError
        If ``runs`` is not a mapping.

    Examples
    --------
    >>> relative_halves({"rows": [dict(graph="g", lam=0.5, sim=2.0, batch_response=[[1.0, 3.0]])]})
    {('g', 0.5): array([[0.5, 1.5]])}
    """
    return {(r["graph"], r["lam"]): np.array(r["batch_response"]) / r["sim"]
            for r in mapping(runs, "runs")["rows"]}


def busy_fraction(runs: Mapping) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    """Mean busy fraction ``q(1)`` of each stored cell over its replications, for the level-one check.

    Parameters
    ----------
    runs : Mapping
        Stored runs with ``rows`` holding ``lam`` and ``rep_q1`` (one value per replication).

    Returns
    -------
    tuple
        ``(mean, s.e., df, λ)``, the first two and the last one per cell, as
        :func:`~qlib.stats.verdict.level_one_check` takes them.

    Raises
    ------
    TypeError
        If ``runs`` is not a mapping.

    Examples
    --------
    >>> m, se, df, lam = busy_fraction({"rows": [dict(lam=0.5, rep_q1=[0.49, 0.51])]})
    >>> m.tolist(), round(float(se[0]), 3), df, lam.tolist()
    ([0.5], 0.01, 1, [0.5])
    """
    rows = mapping(runs, "runs")["rows"]
    q1 = np.array([r["rep_q1"] for r in rows])
    return (q1.mean(axis=1), q1.std(axis=1, ddof=1) / np.sqrt(q1.shape[1]), q1.shape[1] - 1,
            np.array([r["lam"] for r in rows]))


def design_numbers(one: Mapping, every: Mapping, confirm: Mapping) -> dict[str, float]:
    """The simulation design of both policies' stored runs, keyed for the chapter's text.

    Parameters
    ----------
    one, every, confirm : Mapping
        The stored runs, as from :func:`stored_runs`.

    Returns
    -------
    dict
        Burn-in rerun horizon and burn-in (``bi-t-end``, ``bi-burn``),
        replications (``reps-one``, ``reps-all``, ``reps-confirm``), horizon and
        burn-in of the main runs (``t-end``, ``burn``) and the widest relative
        95 % half-width (``ci-max``).

    Raises
    ------
    TypeError
        If an argument is not a mapping.

    Examples
    --------
    >>> one = {"burn_in_check": {"t_end": 4, "burn_in": 2}, "replications": 3, "rows": [{"ci_half_rel": 0.1}]}
    >>> every = {"replications": 5, "t_end": 2, "burn_in": 1, "rows": [{"ci_half_rel": 0.2}]}
    >>> design_numbers(one, every, {"replications": 7})["ci-max"]
    0.2
    """
    one, every = mapping(one, "one"), mapping(every, "every")
    bi = one["burn_in_check"]
    return {"bi-t-end": bi["t_end"], "bi-burn": bi["burn_in"], "reps-one": one["replications"],
            "reps-all": every["replications"], "t-end": every["t_end"], "burn": every["burn_in"],
            "reps-confirm": mapping(confirm, "confirm")["replications"],
            "ci-max": max(r["ci_half_rel"] for r in every["rows"] + one["rows"])}


_STYLE = (("one", "C3", "one neighbour"), ("all", "C0", "all neighbours"))


def plot_policies(ax: Any, cells: Mapping, graph: str, d: int, lam_grid: Sequence[float],
                  lams: Sequence[float]) -> None:
    """Draw ``R`` against ``λ`` for both policies: pair (solid), fluid (dashed), simulation (points).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes to draw on.
    cells : Mapping
        ``(policy, graph, λ) -> (mean, s.e., df)`` as from :func:`policy_cells`.
    graph : str
        The simulated graph, ``d``-regular.
    d : int
        Its degree, ``>= 1``.
    lam_grid : sequence of float
        Loads of the two curves.
    lams : sequence of float
        Loads of the simulated cells (95 % intervals).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> cells = {(p, "ring", 0.5): (1.2, 0.001, 9) for p in ("one", "all")}
    >>> fig, ax = plt.subplots()
    >>> plot_policies(ax, cells, "ring", 2, [0.4, 0.5], [0.5])
    >>> len(ax.lines) >= 4
    True
    """
    law = DegreeDistribution.point(d)
    for pol, c, lab in _STYLE:
        ax.plot(lam_grid, [pair_response_time(lam, d, pol) for lam in lam_grid], c,
                label=f"{lab}: pair, μ = 0")
        fl = [choices.response_time(lam, law, 2) if pol == "one" else fluid.response_time(lam, law)
              for lam in lam_grid]
        ax.plot(lam_grid, fl, c, ls="--", lw=1, label=f"{lab}: fluid, μ = ∞")
        m, se, df = np.array([cells[pol, graph, lam] for lam in lams]).T
        ax.errorbar(lams, m, yerr=t_quantile(0.975, df[0]) * se, fmt="o", color=c, ms=4, capsize=2)
    ax.set_xlabel("load per server $\\lambda$")
    ax.set_ylabel("mean response time $R$")
    ax.legend(fontsize=7)


def plot_price(ax: Any, price: Mapping, at_infinity: Mapping, graphs: Sequence[str],
               lams: Sequence[float], labels: Sequence[str]) -> None:
    """Draw the price ``R_one/R_all`` per graph and load (points, 95 % intervals) and at ``μ = ∞`` (squares).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes to draw on.
    price : Mapping
        ``(graph, λ) -> (ratio, half-width)`` as from :func:`price_of_one`.
    at_infinity : Mapping
        ``(graph, λ) -> price at μ = ∞`` (:func:`fluid_price` at the graph's degree).
    graphs, lams : sequence
        The graphs (on the x axis) and loads (one colour each).
    labels : sequence of str
        The graphs' tick labels.

    Raises
    ------
    ValueError
        If ``labels`` and ``graphs`` differ in length.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> plot_price(ax, {("g", 0.5): (1.2, 0.01)}, {("g", 0.5): 1.1}, ["g"], [0.5], ["g"])
    >>> [t.get_text() for t in ax.get_xticklabels()]
    ['g']
    """
    if len(labels) != len(graphs):
        raise ValueError(f"labels must have one entry per graph ({len(graphs)}), got {len(labels)}")
    for j, lam in enumerate(lams):
        x = np.arange(len(graphs)) + 0.2 * (j - 1)
        y, h = np.array([price[g, lam] for g in graphs]).T
        ax.errorbar(x, y, yerr=h, fmt="o", color=f"C{j}", ms=4, capsize=2, label=f"λ = {lam}")
        ax.plot(x, [at_infinity[g, lam] for g in graphs], "s", mfc="none", color=f"C{j}", ms=5)
    ax.set_xticks(range(len(graphs)), list(labels), fontsize=8)
    ax.plot([], [], "s", mfc="none", color="gray", label="μ = ∞")
    ax.set_ylabel("$R_{\\mathrm{one}} / R_{\\mathrm{all}}$")
    ax.legend(fontsize=7)


def plot_messages(ax: Any, cells: Mapping, degree: Mapping[str, int], graphs: Sequence[str],
                  lam: float) -> None:
    """Draw ``R`` against the messages per task: one neighbour (1) and all ``d`` of them, per graph.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes to draw on.
    cells : Mapping
        ``(policy, graph, λ) -> (mean, s.e., df)`` as from :func:`policy_cells`.
    degree : Mapping
        ``graph -> d``.
    graphs : sequence of str
        The graphs, one line each.
    lam : float
        The load.

    Raises
    ------
    TypeError
        If ``degree`` is not a mapping.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> cells = {("one", "g", 0.9): (3.0, 0.1, 9), ("all", "g", 0.9): (2.0, 0.1, 9)}
    >>> plot_messages(ax, cells, {"g": 3}, ["g"], 0.9)
    >>> ax.lines[0].get_xydata().tolist()
    [[1.0, 3.0], [3.0, 2.0]]
    """
    degree = mapping(degree, "degree")
    for j, g in enumerate(graphs):
        ax.plot([1, degree[g]], [cells["one", g, lam][0], cells["all", g, lam][0]], "o-",
                color=f"C{j + 3}", label=g)
    ax.set_xticks([1, 2, 3, 4])
    ax.set_xlabel("neighbours asked per task (messages)")
    ax.set_ylabel(f"mean response time $R$ at $\\lambda = {lam}$")
    ax.legend(fontsize=7)
