"""Stored solves of the static-graph closures: the ring's window hierarchy and the star against simulation.

Two closures are too slow to solve on every build and are stored with the
library: windows of length ``L`` on the ring (``benchmarks/ring_window_hierarchy.py``,
:func:`window_hierarchy`) and the star of a vertex against the fluid limit,
the pair approximation and simulations of random regular graphs
(``benchmarks/star_closure.py``, :func:`star_closures`).  This module reads
them and lays them out as Markdown tables (:func:`hierarchy_table`,
:func:`star_table`).
"""
from __future__ import annotations

import json
import pathlib
from collections.abc import Iterable, Mapping, Sequence

__all__ = ["stored_benchmark", "window_hierarchy", "hierarchy_table", "star_closures", "star_table"]


def stored_benchmark(name: str) -> dict:
    """The stored benchmark ``benchmarks/<name>`` (next to the ``qlib`` package) as a dict.

    Parameters
    ----------
    name : str
        The file name, ending in ``.json``.

    Returns
    -------
    dict
        The parsed file.

    Raises
    ------
    ValueError
        If ``name`` does not end in ``.json``.
    FileNotFoundError
        If the file does not exist.

    Examples
    --------
    >>> sorted(stored_benchmark("ring_window_hierarchy.json"))
    ['levels', 'rows']
    """
    if not isinstance(name, str) or not name.endswith(".json"):
        raise ValueError(f"name must be a .json file name, got {name!r}")
    return json.loads((pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / name).read_text())


def window_hierarchy() -> dict[tuple[float, int], dict]:
    """The stored ring windows, ``(λ, L) -> row`` (``R``, ``levels``, ``residual``, ``seconds``, …).

    Returns
    -------
    dict
        One row per load and window length solved.

    Examples
    --------
    >>> hier = window_hierarchy()
    >>> sorted({L for _, L in hier})
    [2, 3, 4]
    """
    return {(h["lam"], h["L"]): h for h in stored_benchmark("ring_window_hierarchy.json")["rows"]}


def hierarchy_table(hierarchy: Mapping, simulated: Mapping[float, float], lams: Sequence[float],
                    lengths: Sequence[int] = (2, 3, 4)) -> str:
    """Markdown table of each window's relative error against the simulated ring, a dash where not stored.

    Parameters
    ----------
    hierarchy : Mapping
        ``(λ, L) -> row`` with ``R``, as from :func:`window_hierarchy`.
    simulated : Mapping
        ``λ -> simulated R``.
    lams : sequence of float
        The loads, one column each.
    lengths : sequence of int, default (2, 3, 4)
        The window lengths, one line each.

    Returns
    -------
    str
        A pipe table of ``R_L/R_sim − 1``.

    Raises
    ------
    TypeError
        If ``hierarchy`` or ``simulated`` is not a mapping.

    Examples
    --------
    >>> print(hierarchy_table({(0.5, 2): {"R": 1.1}}, {0.5: 1.0}, [0.5], [2, 3]))
    | $L$ | $\\lambda = 0.5$ |
    |---|---|
    | 2 | +10.00% |
    | 3 | — |
    """
    for x, name in ((hierarchy, "hierarchy"), (simulated, "simulated")):
        if not isinstance(x, Mapping):
            raise TypeError(f"{name} must be a mapping, got {type(x).__name__}")
    cell = lambda lam, L: (f"{hierarchy[lam, L]['R'] / simulated[lam] - 1:+.2%}"  # noqa: E731
                           if (lam, L) in hierarchy else "—")
    return "\n".join(
        ["| $L$ | " + " | ".join(f"$\\lambda = {lam}$" for lam in lams) + " |", "|---" * (len(lams) + 1) + "|"]
        + [f"| {L} | " + " | ".join(cell(lam, L) for lam in lams) + " |" for L in lengths])


def star_closures() -> tuple[dict[tuple[str, float], dict], list[dict]]:
    """The stored star closures against simulation, and the finite-``n`` fits of the simulations.

    Returns
    -------
    cells : dict
        ``(graph, λ) -> row``: ``n``, ``sim`` with its 95 % interval, the
        ``fluid``, ``pair`` and ``star`` predictions, their relative errors
        ``rel_*`` (and ``rel_*_range`` over the interval) and the ``states``
        of each closure.
    fits : list of dict
        Fits ``R(n) = R_inf + c/n`` per degree and load (``R_inf``,
        ``effect_2000_rel``, …).

    Examples
    --------
    >>> cells, fits = star_closures()
    >>> ("random 3-regular", 0.9) in cells and fits[0]["degree"]
    3
    """
    sc = stored_benchmark("star_closure.json")
    return {(r["graph"], r["lam"]): r for r in sc["closures"]["rows"]}, sc["finite_n"]["fits"]


def star_table(rows: Iterable[Mapping]) -> str:
    """Markdown table of the stored star closures: simulated ``R`` ± 95 % half-width and each closure's error.

    Parameters
    ----------
    rows : iterable of Mapping
        Rows as in :func:`star_closures`.

    Returns
    -------
    str
        A pipe table: graph, ``λ``, simulated ``R``, the relative errors of the
        fluid limit, the pair and the star, and the star's number of states.

    Raises
    ------
    TypeError
        If ``rows`` is a mapping or a string rather than rows.

    Examples
    --------
    >>> row = dict(graph="ring", lam=0.7, sim=1.5, sim_high=1.51, rel_fluid=-0.09, rel_pair=-0.03,
    ...            rel_star=0.001, states={"star": 1800})
    >>> print(star_table([row]).splitlines()[-1])
    | ring | 0.7 | 1.5000 ± 0.0100 | -9.00% | -3.00% | +0.10% | 1800 |
    """
    if isinstance(rows, (Mapping, str, bytes)):
        raise TypeError(f"rows must be an iterable of row mappings, got {type(rows).__name__}")
    return "\n".join(
        ["| graph | $\\lambda$ | simulated $R$ | fluid | pair | star | states |", "|---|---|---|---|---|---|---|"]
        + [f"| {r['graph']} | {r['lam']} | {r['sim']:.4f} ± {r['sim_high'] - r['sim']:.4f} | {r['rel_fluid']:+.2%} "
           f"| {r['rel_pair']:+.2%} | {r['rel_star']:+.2%} | {r['states']['star']} |" for r in rows])
