"""Exact chains and simulations against the refined mean field's 1/n coefficient.

The refined mean field (:func:`qlib.meanfield.expansion.refined`) predicts
``E R_n = R* + R_v/n + O(1/n²)`` at ``μ = ∞``. Two independent routes test
it: the occupancy chain solved without a level cap
(:func:`~qlib.exact.occupancy.occupancy_chain_adaptive`), whose
``y_n = n(E R_n − R*)`` is extrapolated to ``n = ∞`` by
:func:`extrapolate_quadratic`, and replicated simulations
(:func:`refined_cell`).
"""
from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from qlib.exact.occupancy import occupancy_chain_adaptive
from qlib.meanfield.expansion import Refined, refined
from qbook.ht_constants import bench_json

if TYPE_CHECKING:   # names for the annotations only
    from numpy.typing import ArrayLike

    from qlib.graphs import Graph
    from qlib.meanfield.degrees import DegreeDistribution

__all__ = ["refined_gaps", "stored_gaps", "extrapolate_quadratic", "refined_cell", "coefficient_table",
           "long_chain_glues", "rmftool_gaps"]


def refined_gaps(lam: float, law: DegreeDistribution, ns: Sequence[int], *,
                 tol: float = 1e-9) -> tuple[Refined, np.ndarray]:
    """``n(E R_n − R*)`` and ``n(E q_n(2) − q*(2))`` from exact chains, per ``n``.

    Parameters
    ----------
    lam : float
        Load per server, in ``(0, 1)``.
    law : DegreeDistribution
        The degree law ``p``.
    ns : sequence of int
        Numbers of servers, each ``>= 2``.
    tol : float, default 1e-9
        Threshold of the adaptive projection.

    Returns
    -------
    ref : Refined
        The refined mean field of ``(lam, law)``.
    rows : ndarray, shape (len(ns), 6)
        Per ``n``: ``n(E R_n − R*)``, ``n`` × its truncation error estimate,
        ``n(E q_n(2) − q*(2))``, ``n`` × its truncation error estimate, the
        number of states and the seconds the solve took.

    Raises
    ------
    ValueError
        If ``ns`` is empty or holds an ``n < 2``.
    TypeError
        If ``ns`` holds a non-integer.

    Examples
    --------
    >>> from qlib import DegreeDistribution
    >>> ref, rows = refined_gaps(0.7, DegreeDistribution.point(1), [3, 4])
    >>> rows.shape, bool(rows[0, 0] > 0)
    ((2, 6), True)
    """
    ns = list(ns)
    if not ns:
        raise ValueError("ns must hold at least one n")
    for n in ns:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise TypeError(f"ns must hold integers, got {n!r}")
        if n < 2:
            raise ValueError(f"ns must hold n >= 2, got {n}")
    ref, rows = refined(lam, law), []
    for n in ns:
        t = time.perf_counter()
        r = occupancy_chain_adaptive(int(n), lam, law, tol=tol)
        rows.append((n * (r.response_time - ref.response_time), n * r.response_time_error,
                     n * (r.occupancy[2] - ref.q[2]), n * r.occupancy_error,
                     r.n_states, time.perf_counter() - t))
    return ref, np.array(rows, dtype=float)


def stored_gaps(name: str, lam: float, law: DegreeDistribution,
                ns: Sequence[int]) -> tuple[Refined, np.ndarray]:
    """:func:`refined_gaps` (distinct servers, ``tol = 1e-9``) from the exact chains stored
    by ``benchmarks/bench_occupancy_adaptive.py`` (``occupancy_adaptive_results.json``)
    instead of solving them; the seconds are those of the stored solve.

    Parameters
    ----------
    name : str
        The law's name as stored (``"δ_1"``, ``"δ_2"``).
    lam : float
        Load per server, as stored.
    law : DegreeDistribution
        The degree law ``p`` of ``name`` (for the refined mean field).
    ns : sequence of int
        Numbers of servers, each stored for the case.

    Returns
    -------
    ref : Refined
    rows : ndarray, shape (len(ns), 6)
        As :func:`refined_gaps`.

    Raises
    ------
    ValueError
        If the store lacks the case or one of the ``n``.

    Examples
    --------
    >>> from qlib import DegreeDistribution
    >>> ref, rows = stored_gaps("δ_2", 0.9, DegreeDistribution.point(2), [3, 4])
    >>> rows.shape, int(rows[0, 4])
    ((2, 6), 1724)
    """
    store = bench_json("occupancy_adaptive_results.json")
    if store.get("tol") != 1e-9:
        raise ValueError("the stored exact chains are not those of tol = 1e-9")
    case = [c for c in store["cases"] if c["law"] == name and c["lam"] == lam and not c["replacement"]]
    if not case:
        raise ValueError(f"no stored exact chains for name={name!r}, lam={lam}")
    by_n = {r["n"]: r for r in case[0]["rows"]}
    missing = [n for n in ns if n not in by_n]
    if missing:
        raise ValueError(f"ns must be stored for ({name}, {lam}); missing {missing}")
    ref = refined(lam, law)
    rows = [(n * (r["R"] - ref.response_time), n * r["R_err"], n * (r["q2"] - ref.q[2]),
             n * r["q_err"], r["states"], r["seconds"]) for n, r in ((n, by_n[n]) for n in ns)]
    return ref, np.array(rows, dtype=float)


def extrapolate_quadratic(ns: ArrayLike, y: ArrayLike, e: ArrayLike) -> tuple[float, float, float]:
    """Extrapolate ``y_n`` to ``n = ∞`` by the quadratic in ``1/n`` through all points.

    Parameters
    ----------
    ns : array_like
        At least three distinct ``n > 0``, increasing.
    y : array_like
        The values ``y_n``.
    e : array_like
        Their (non-negative) error estimates.

    Returns
    -------
    estimate : float
        The quadratic's intercept.
    tolerance : float
        Its distance to the intercept of the line through the two largest
        ``n``, plus the errors ``e`` carried through the fit's weights.
    propagated : float
        The second part alone.

    Raises
    ------
    ValueError
        If the lengths differ, fewer than three points are given, ``ns`` is
        not positive and increasing, or ``e`` is negative.

    Examples
    --------
    >>> ns = np.array([2.0, 4.0, 8.0])
    >>> est, tol, _ = extrapolate_quadratic(ns, 1.5 + 2 / ns + 1 / ns**2, np.zeros(3))
    >>> round(est, 12)
    1.5
    """
    ns, y, e = (np.asarray(a, dtype=float).ravel() for a in (ns, y, e))
    if not (ns.size == y.size == e.size):
        raise ValueError("ns, y and e must have the same length")
    if ns.size < 3:
        raise ValueError(f"ns must hold at least three points, got {ns.size}")
    if np.any(ns <= 0) or np.any(np.diff(ns) <= 0):
        raise ValueError("ns must be positive and increasing")
    if np.any(e < 0):
        raise ValueError("e must be >= 0")
    w = np.linalg.pinv(np.vander(1 / ns, 3))[-1]          # intercept = w @ y
    quad, lin = float(w @ y), float(np.polyfit(1 / ns[-2:], y[-2:], 1)[-1])
    prop = float(np.abs(w) @ e)
    return quad, abs(quad - lin) + prop, prop


def refined_cell(graph: Graph, lam: float, window: float, burn: float, *,
                 seed: int | np.random.SeedSequence, replications: int,
                 batches: int = 4) -> dict:
    """Replicated runs at ``μ = ∞`` from ``q*(p_n)``, with the refined target of the graph's law.

    Parameters
    ----------
    graph : Graph
        The base graph; its degree law ``p_n`` sets ``R*`` and ``R_v``.
    lam : float
        Load per server, in ``(0, 1)``.
    window, burn : float
        Averaging window and burn-in, ``> 0`` and ``>= 0``.
    seed : int or SeedSequence
        Root seed of the replications.
    replications : int
        Independent runs, ``>= 2``.
    batches : int, default 4
        Batches per window (their means are the halves of the burn-in audit).

    Returns
    -------
    dict
        ``n, lam, R, se, q1, q1_se`` (means over the runs and their s.e.),
        ``T, burn``, ``Rs`` and ``Rv`` (``R*`` and ``R_v`` of ``p_n``),
        ``p`` (the law), ``R0`` (the response time of the start) and
        ``halves`` (the batch means of every run).

    Raises
    ------
    ValueError
        If ``window`` is not positive, ``burn`` is negative or
        ``replications < 2``.

    Examples
    --------
    >>> from qlib import graphs
    >>> c = refined_cell(graphs.ring(30), 0.7, 50.0, 10.0, seed=1, replications=2)
    >>> sorted(k for k in c if k.startswith("R"))
    ['R', 'R0', 'Rs', 'Rv']
    """
    from qlib.sim.replications import replicate
    from qlib.stats.intervals import replication_ci
    if not window > 0:
        raise ValueError(f"window must be > 0, got {window}")
    if not burn >= 0:
        raise ValueError(f"burn must be >= 0, got {burn}")
    if isinstance(replications, bool) or int(replications) != replications or replications < 2:
        raise ValueError(f"replications must be an integer >= 2, got {replications!r}")
    p = graph.degree_distribution()
    ref = refined(lam, p)
    start = ref.q[ref.q * graph.n >= 0.5]
    rr = replicate(graph, lam, math.inf, replications=int(replications), seed=seed,
                   t_end=burn + window, burn_in=burn, initial=start, batches=batches)
    ci = replication_ci([(r.mean_response_time, r.occupancy[1]) for r in rr.results])
    return dict(n=graph.n, lam=lam, R=ci.mean[0], se=ci.se[0], q1=ci.mean[1], q1_se=ci.se[1],
                T=window, burn=burn, Rs=ref.response_time, Rv=ref.response_time_v, p=p,
                R0=np.round(start * graph.n)[1:].sum() / graph.n / lam,
                halves=rr.batch_response_times)


def coefficient_table(ds: Sequence[int] = (1, 2), lams: Sequence[float] = (0.7, 0.9)) -> tuple[str, dict]:
    """The refined coefficients of the point masses ``δ_d``, sampled without and with replacement.

    Parameters
    ----------
    ds, lams : sequence
        The degrees and the loads.

    Returns
    -------
    table : str
        A Markdown table: law, load, ``R*``, ``R_v`` (distinct), ``R_v`` (with replacement).
    coef : dict
        ``(d, lam, replacement)`` to the :class:`~qlib.meanfield.expansion.Refined` result.
    """
    from qlib.meanfield.degrees import DegreeDistribution
    coef = {(d, lam, rep): refined(lam, DegreeDistribution.point(d), replacement=rep)
            for d in ds for lam in lams for rep in (False, True)}
    import pandas as pd
    table = pd.DataFrame(
        [{"law": f"$\\delta_{d}$", "$\\lambda$": lam, "$R^\\star$": f"{coef[d, lam, False].response_time:.4f}",
          "$R_v$ (distinct)": f"{coef[d, lam, False].response_time_v:.4f}",
          "$R_v$ (with replacement)": f"{coef[d, lam, True].response_time_v:.4f}"}
         for d in ds for lam in lams]).to_markdown(index=False)
    return table, coef


def long_chain_glues(laws: dict) -> dict:
    """The stored long exact chains (``benchmarks/occupancy_adaptive_results.json``) extrapolated
    to ``n = ∞`` against ``R_v``.

    Parameters
    ----------
    laws : dict
        Law name (as stored) to its degree law.

    Returns
    -------
    dict
        Glue key suffix (``long-nmax-<key>``, ``long-gap-<key>`` in %, ``long-reltol-<key>`` in %,
        ``long-ratio-<key>``) to value, ``<key>`` as ``d2-without``.
    """
    out = {}
    for c in bench_json("occupancy_adaptive_results.json")["cases"]:
        ref = refined(c["lam"], laws[c["law"]], replacement=c["replacement"])
        ns = np.array([r["n"] for r in c["rows"]], float)
        a, tol, _ = extrapolate_quadratic(ns, ns * (np.array([r["R"] for r in c["rows"]]) - ref.response_time),
                                          ns * np.array([r["R_err"] for r in c["rows"]]))
        key, rv = f"{'d1' if c['law'] == 'δ_1' else 'd2'}-{'with' if c['replacement'] else 'without'}", \
            ref.response_time_v
        out |= {f"long-nmax-{key}": int(ns[-1]), f"long-gap-{key}": float(100 * (a - rv) / rv),
                f"long-reltol-{key}": float(100 * tol / rv), f"long-ratio-{key}": float(abs(a - rv) / tol)}
    return out


def rmftool_gaps() -> tuple[float, float]:
    """The refined mean field against rmftool (``benchmarks/refined_results.json``).

    Returns
    -------
    gap : float
        Largest ``|0.9 R(N) − printed|`` over rmftool's printed values (δ1 with replacement,
        ``λ = 0.9``).
    vdiff : float
        Largest stored ``|v − v_rmftool|`` over the rows compared with rmftool.
    """
    from qlib.meanfield.degrees import DegreeDistribution
    bench = bench_json("refined_results.json")
    r1 = refined(0.9, DegreeDistribution.point(1), replacement=True)
    gap = max(abs(0.9 * r1.at(p["N"]).response_time - p["rmftool_printed"]) for p in bench["published"])
    return gap, max(r["max_abs_diff_v"] for r in bench["rows"] if "rmftool_s" in r)
