"""Closures of static graphs against exact chains: small graphs, and the two exact cases of the pair.

A static graph small enough for the exact chain (:func:`qlib.exact.stationary <qlib.exact.tiny.stationary>`
at ``μ = 0``) tests the predictions built for large graphs: the fluid limit
and the refined mean field for the graph's degree law and, on 2-regular
graphs, the pair approximation and the window of three of the infinite ring
(:func:`exact_with_change`, :func:`prediction_errors`, :func:`exact_table`).
Two cases of the pair approximation are exact and checked against their
exact counterparts: with the correlation switched off it is the fluid limit
(:func:`independent_closure_gap`), and at degree one it is JSQ with two
servers (:func:`two_server_gap`).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from qlib import _validate as V
from qlib._validate import mapping
from qlib import graphs as _graphs
from qlib.exact.tiny import stationary
from qlib.meanfield import fluid
from qlib.meanfield.degrees import DegreeDistribution
from qlib.meanfield.expansion import refined
from qlib.meanfield.pair import pair_approximation

__all__ = ["exact_with_change", "prediction_errors", "exact_table", "independent_closure_gap",
           "two_server_gap"]




def exact_with_change(graphs: Mapping, cases: Sequence[tuple[str, float, int]]) -> dict[tuple[str, float],
                                                                                       tuple[float, float]]:
    """Exact mean response time of small static graphs, and its change from truncation ``K − 2`` to ``K``.

    Parameters
    ----------
    graphs : Mapping
        ``name -> graph`` (anything :func:`qlib.exact.stationary <qlib.exact.tiny.stationary>` takes).
    cases : sequence of (name, λ, K)
        The graph, the load per server and the truncation ``K >= 3``.

    Returns
    -------
    dict
        ``(name, λ) -> (R at K, |R(K) − R(K − 2)|)``, ``R`` by Little's law
        (``little_response_time``) at ``μ = 0``.

    Raises
    ------
    TypeError
        If ``graphs`` is not a mapping.
    ValueError
        If a truncation is below 3.

    Examples
    --------
    >>> from qlib import graphs
    >>> R, change = exact_with_change({"edge": graphs.cliques(2, 2)}, [("edge", 0.5, 12)])["edge", 0.5]
    >>> round(R, 3), change < 1e-4
    (1.426, True)
    """
    graphs = mapping(graphs, "graphs")
    out = {}
    for name, lam, K in cases:
        K = V.integer(K, f"the truncation K of case {name!r}", lo=3)
        a, b = (stationary(graphs[name], lam, 0.0, truncation=k).little_response_time for k in (K - 2, K))
        out[name, lam] = (b, abs(b - a))
    return out


def prediction_errors(exact_R: Mapping, graphs: Mapping, pair: Mapping[float, float],
                      window: Mapping[float, float]) -> dict[tuple[str, float], dict[str, float]]:
    """Relative error of each prediction against the exact ``R`` of small static graphs.

    Parameters
    ----------
    exact_R : Mapping
        ``(name, λ) -> (R, ...)`` as from :func:`exact_with_change`.
    graphs : Mapping
        ``name -> graph`` (anything
        :meth:`DegreeDistribution.from_graph <qlib.meanfield.degrees.DegreeDistribution.from_graph>`
        takes, with ``.n``).
    pair, window : Mapping
        ``λ -> R`` of the pair approximation and of the window of three of the
        infinite ring; they predict 2-regular graphs only.

    Returns
    -------
    dict
        ``(name, λ) -> {"fluid", "refined", "pair", "window"}``: prediction/exact − 1,
        the fluid limit and the refined mean field (at the graph's ``n``) for the
        graph's degree law, the ring's predictions ``nan`` on a graph that is
        not 2-regular.

    Raises
    ------
    TypeError
        If an argument is not a mapping.

    Examples
    --------
    >>> from qlib import graphs
    >>> g = {"star": graphs.from_edges(3, [(0, 1), (0, 2)])}
    >>> err = prediction_errors({("star", 0.5): (1.5, 0.0)}, g, {}, {})["star", 0.5]
    >>> list(err), math.isnan(err["pair"])
    (['fluid', 'refined', 'pair', 'window'], True)
    """
    exact_R, graphs = mapping(exact_R, "exact_R"), mapping(graphs, "graphs")
    pair, window = mapping(pair, "pair"), mapping(window, "window")
    out = {}
    for (name, lam), (R, *_) in exact_R.items():
        g, law = graphs[name], DegreeDistribution.from_graph(graphs[name])
        ring = law.min_degree == law.max_degree == 2
        out[name, lam] = dict(fluid=fluid.response_time(lam, law) / R - 1,
                              refined=refined(lam, law).at(g.n).response_time / R - 1,
                              pair=pair[lam] / R - 1 if ring else math.nan,
                              window=window[lam] / R - 1 if ring else math.nan)
    return out


def exact_table(exact_R: Mapping, errors: Mapping) -> str:
    """Markdown table of the exact ``R`` and each prediction's relative error (a dash for none).

    Parameters
    ----------
    exact_R : Mapping
        ``(name, λ) -> (R, ...)``, the rows in its order.
    errors : Mapping
        ``(name, λ) -> {"fluid", "refined", "pair", "window"}`` as from :func:`prediction_errors`.

    Returns
    -------
    str
        A pipe table: graph, ``λ``, exact ``R``, then the four relative errors.

    Raises
    ------
    TypeError
        If an argument is not a mapping.

    Examples
    --------
    >>> err = {("C4", 0.5): dict(fluid=-0.1, refined=-0.05, pair=0.01, window=math.nan)}
    >>> print(exact_table({("C4", 0.5): (1.25, 0.0)}, err).splitlines()[-1])
    | C4 | 0.5 | 1.2500 | -10.0% | -5.0% | +1.0% | — |
    """
    exact_R, errors = mapping(exact_R, "exact_R"), mapping(errors, "errors")
    pct = lambda v: "—" if math.isnan(v) else f"{v:+.1%}"  # noqa: E731
    return "\n".join(
        ["| graph | $\\lambda$ | exact $R$ | fluid | refined | pair | window $L = 3$ |", "|---|---|---|---|---|---|---|"]
        + [f"| {n} | {lam} | {exact_R[n, lam][0]:.4f} | " + " | ".join(pct(v) for v in errors[n, lam].values()) + " |"
           for n, lam in exact_R])


def independent_closure_gap(lams: Sequence[float], degrees: Sequence[int], levels: int = 12) -> float:
    """Largest distance of the pair approximation with independent neighbours from the fluid equilibrium.

    With ``closure="independent"`` the pair approximation of a ``d``-regular
    graph is the fluid limit of the degree law ``δ_d``; the two occupancy
    vectors ``q(0), q(1), …`` must agree.

    Parameters
    ----------
    lams : sequence of float
        Loads per server, each in ``(0, 1)``.
    degrees : sequence of int
        Degrees ``d >= 1``.
    levels : int, default 12
        The levels compared, ``q(0)`` to ``q(levels − 1)``; ``>= 1``.

    Returns
    -------
    float
        ``max |q_pair(i) − q*(i)|`` over the loads, degrees and levels.

    Raises
    ------
    ValueError
        If ``levels < 1``.

    Examples
    --------
    >>> bool(independent_closure_gap([0.5], [2]) < 1e-9)
    True
    """
    levels = V.integer(levels, "levels", lo=1)
    return max(np.max(np.abs(pair_approximation(lam, d, closure="independent").occupancy[:levels]
                             - np.pad(fluid.equilibrium(lam, DegreeDistribution.point(d), tol=1e-14),
                                      (0, levels))[:levels])) for lam in lams for d in degrees)


def two_server_gap(lams: Sequence[float], truncation: int = 30) -> float:
    """Largest relative distance of the degree-one pair approximation from JSQ with two servers.

    At ``d = 1`` the graph is a set of disjoint edges, nothing is closed, and
    the pair approximation is the exact chain of two servers.

    Parameters
    ----------
    lams : sequence of float
        Loads per server, each in ``(0, 1)``.
    truncation : int, default 30
        The truncation of both chains, ``>= 2``.

    Returns
    -------
    float
        ``max |R_pair / R_exact − 1|`` over the loads.

    Raises
    ------
    ValueError
        If ``truncation < 2``.

    Examples
    --------
    >>> two_server_gap([0.5]) < 1e-10
    True
    """
    truncation = V.integer(truncation, "truncation", lo=2)
    pairs = [(pair_approximation(lam, 1, truncation=truncation),
              stationary(_graphs.cliques(2, 2), lam, 0.0, truncation=truncation)) for lam in lams]
    return max(abs(a.response_time / b.little_response_time - 1) for a, b in pairs)
