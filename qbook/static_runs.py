"""Simulated static graphs against the predictions: runs, rows, tables, test families and figures.

A *cell* is one graph at one load ``λ`` and resampling rate ``μ``, simulated
with independent replications (:func:`qlib.replicate <qlib.sim.replications.replicate>`, possibly from
independent M/M/1 queues, :func:`mm1_start`).  Each simulated cell at
``μ = 0`` becomes a *row* (:func:`prediction_rows`): the simulated mean ``R``
and its standard error beside the fluid limit, the refined mean field, the
pair approximation and a local model.  The rows feed a table
(:func:`sim_table`), significance families against one prediction
(:func:`family_against`) or against the midpoint of two
(:func:`midpoint_family`), and a figure (:func:`plot_predictions`).
:func:`plot_resampling` draws the ring under slow resampling;
:func:`worst_cell_relative` and :func:`relaxation_time` serve the burn-in
checks.  The ``plot_*`` functions draw on Matplotlib axes the caller owns.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

from qlib import _validate as V
from qlib._validate import mapping
from qlib.meanfield import fluid
from qlib.meanfield.expansion import refined
from qlib.stats.batch import iat
from qlib.stats.families import simultaneous

__all__ = ["mm1_start", "prediction_rows", "sim_table", "family_against",
           "midpoint_family", "plot_predictions", "plot_resampling", "worst_cell_relative",
           "relaxation_time"]




def _rows(rows: object) -> list[Mapping]:
    if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Sequence):
        raise TypeError(f"rows must be a sequence of row mappings, got {type(rows).__name__}")
    return list(rows)


def mm1_start(n: int, lam: float, seed: int = 7) -> np.ndarray:
    """Independent queue lengths with the stationary M/M/1 law at load ``λ``, ``P(x) = (1 − λ) λ^x``.

    Parameters
    ----------
    n : int
        Number of queues, ``>= 1``.
    lam : float
        The load, ``0 < λ < 1``.
    seed : int, default 7
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    ndarray of int
        ``n`` queue lengths, a start for :func:`qlib.replicate <qlib.sim.replications.replicate>` (``initial``).

    Raises
    ------
    TypeError
        If ``n`` is not an integer.
    ValueError
        If ``n < 1`` or ``λ`` is not in ``(0, 1)``.

    Examples
    --------
    >>> x = mm1_start(10**5, 0.5)
    >>> x.min(), round(float(x.mean()), 1)
    (np.int64(0), 1.0)
    """
    n = V.integer(n, "n", lo=1)
    lam = V.real(lam, "lam", lo=0, hi=1, lo_open=True, hi_open=True)
    return np.random.default_rng(seed).geometric(1 - lam, n) - 1


def prediction_rows(sim: Mapping, fluid_law: Any, refined_laws: Mapping, sizes: Mapping[str, int],
                    pair: Mapping[float, float], local: Mapping) -> list[dict]:
    """One row per simulated cell: simulated ``R`` and its s.e. beside four predictions.

    Parameters
    ----------
    sim : Mapping
        ``(name, λ) -> ReplicationResult`` (``mean_response_time``, ``response_time_se``).
    fluid_law : DegreeDistribution
        The degree law of the fluid limit, the same for every graph.
    refined_laws : Mapping
        ``name -> DegreeDistribution`` of the refined mean field.
    sizes : Mapping
        ``name -> n``, the size at which the refined mean field is evaluated.
    pair : Mapping
        ``λ -> R`` of the pair approximation.
    local : Mapping
        ``(name, λ) -> R`` of the graph's local model.

    Returns
    -------
    list of dict
        Keys ``top`` (the name), ``lam``, ``R``, ``se``, ``fluid``, ``refined``,
        ``pair`` and ``local``, in the order of ``sim``.

    Raises
    ------
    TypeError
        If an argument that must be a mapping is not.

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> from qlib import DegreeDistribution
    >>> law = DegreeDistribution.point(2)
    >>> rows = prediction_rows({("ring", 0.5): NS(mean_response_time=1.2, response_time_se=0.01)},
    ...                        law, {"ring": law}, {"ring": 100}, {0.5: 1.16}, {("ring", 0.5): 1.19})
    >>> sorted(rows[0]), round(rows[0]["fluid"], 4)
    (['R', 'fluid', 'lam', 'local', 'pair', 'refined', 'se', 'top'], 1.1252)
    """
    sim, refined_laws = mapping(sim, "sim"), mapping(refined_laws, "refined_laws")
    sizes, pair, local = mapping(sizes, "sizes"), mapping(pair, "pair"), mapping(local, "local")
    return [dict(top=name, lam=lam, R=rr.mean_response_time, se=rr.response_time_se,
                 fluid=fluid.response_time(lam, fluid_law),
                 refined=refined(lam, refined_laws[name]).at(sizes[name]).response_time,
                 pair=pair[lam], local=local[name, lam]) for (name, lam), rr in sim.items()]


def sim_table(rows: Sequence[Mapping], t: float) -> str:
    """Markdown table of the rows: simulated ``R`` ± ``t`` s.e. and the four predictions.

    Parameters
    ----------
    rows : sequence of Mapping
        As from :func:`prediction_rows`.
    t : float
        The Student-``t`` quantile of the interval, ``> 0``.

    Returns
    -------
    str
        A pipe table, one line per row.

    Raises
    ------
    TypeError
        If ``rows`` is not a sequence.
    ValueError
        If ``t`` is not positive.

    Examples
    --------
    >>> row = dict(top="ring", lam=0.5, R=1.2, se=0.01, fluid=1.1, refined=1.15, pair=1.16, local=1.19)
    >>> print(sim_table([row], 2.0).splitlines()[-1])
    | ring | 0.5 | 1.2000 ± 0.0200 | 1.1000 | 1.1500 | 1.1600 | 1.1900 |
    """
    rows = _rows(rows)
    if not t > 0:
        raise ValueError(f"t must be > 0, got {t!r}")
    return "\n".join(
        ["| graph | $\\lambda$ | simulated $R$ | fluid | refined | pair | local |", "|---|---|---|---|---|---|---|"]
        + [f"| {r['top']} | {r['lam']} | {r['R']:.4f} ± {t * r['se']:.4f} | {r['fluid']:.4f} | {r['refined']:.4f} "
           f"| {r['pair']:.4f} | {r['local']:.4f} |" for r in rows])


def family_against(rows: Sequence[Mapping], key: str, df: int) -> Any:
    """Simultaneous test (Holm) of simulated ``R = prediction`` over some rows.

    Parameters
    ----------
    rows : sequence of Mapping
        As from :func:`prediction_rows`.
    key : str
        The prediction tested: ``"fluid"``, ``"refined"``, ``"pair"`` or ``"local"``.
    df : int
        Degrees of freedom of each standard error (replications less one).

    Returns
    -------
    Family
        As from :func:`qlib.stats.simultaneous <qlib.stats.families.simultaneous>`.

    Raises
    ------
    TypeError
        If ``rows`` is not a sequence.
    ValueError
        If ``key`` is not a prediction.

    Examples
    --------
    >>> row = dict(top="g", lam=0.5, R=1.2, se=0.01, fluid=1.1, refined=1.15, pair=1.16, local=1.2)
    >>> family_against([row], "local", 15).passed, family_against([row], "fluid", 15).passed
    (True, False)
    """
    rows = _rows(rows)
    if key not in ("fluid", "refined", "pair", "local"):
        raise ValueError(f"key must be 'fluid', 'refined', 'pair' or 'local', got {key!r}")
    return simultaneous([r["R"] for r in rows], [r["se"] for r in rows], df, target=[r[key] for r in rows])


def midpoint_family(rows: Sequence[Mapping], near: str, far: str, df: int) -> Any:
    """Simultaneous test of simulated ``R`` against the midpoint of two predictions, signed towards ``near``.

    Each row's ``R`` and midpoint are multiplied by ``sign(near − far)``, so
    that ``estimate > target`` means ``R`` lies on ``near``'s side: closer to
    ``near`` than to ``far``.

    Parameters
    ----------
    rows : sequence of Mapping
        As from :func:`prediction_rows`.
    near, far : str
        The two predictions (keys of the rows).
    df : int
        Degrees of freedom of each standard error.

    Returns
    -------
    Family
        As from :func:`qlib.stats.simultaneous <qlib.stats.families.simultaneous>`; one-sided claims read
        ``reject`` and ``estimate > target``.

    Raises
    ------
    TypeError
        If ``rows`` is not a sequence.

    Examples
    --------
    >>> row = dict(R=1.19, se=0.001, fluid=1.1, local=1.2)
    >>> fam = midpoint_family([row], "local", "fluid", 15)
    >>> bool(fam.reject[0] and fam.estimate[0] > fam.target[0])
    True
    """
    rows = _rows(rows)
    mid = [(r[far] + r[near]) / 2 for r in rows]
    side = np.sign([r[near] - r[far] for r in rows])
    return simultaneous([s * r["R"] for s, r in zip(side, rows)], [r["se"] for r in rows], df,
                        target=[s * m for s, m in zip(side, mid)])


_LINES = (("fluid", "k", "-"), ("refined", "0.6", ":"), ("pair", "C0", "--"), ("local", "C3", "-"))


def plot_predictions(axs: Sequence[Any], rows: Sequence[Mapping], names: Sequence[str], t: float) -> None:
    """Draw ``R`` against ``λ`` per graph: simulation (points, ``t`` s.e.) and the four predictions.

    Parameters
    ----------
    axs : sequence of matplotlib.axes.Axes
        One axes per graph (log scale); the first gets the ``R`` label and the legend.
    rows : sequence of Mapping
        As from :func:`prediction_rows`.
    names : sequence of str
        The graphs, one per axes.
    t : float
        The Student-``t`` quantile of the error bars.

    Raises
    ------
    ValueError
        If ``axs`` and ``names`` differ in length.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> row = dict(top="g", lam=0.5, R=1.2, se=0.01, fluid=1.1, refined=1.15, pair=1.16, local=1.2)
    >>> fig, axs = plt.subplots(1, 1, squeeze=False)
    >>> plot_predictions(axs[0], [row], ["g"], 2.0)
    >>> axs[0, 0].get_title(), len(axs[0, 0].lines)
    ('g', 5)
    """
    rows = _rows(rows)
    if len(axs) != len(names):
        raise ValueError(f"axs must have one axes per name ({len(names)}), got {len(axs)}")
    for ax, name in zip(axs, names):
        rs = [r for r in rows if r["top"] == name]
        x = [r["lam"] for r in rs]
        ax.errorbar(x, [r["R"] for r in rs], yerr=[t * r["se"] for r in rs], fmt="ko", ms=5, label="simulation")
        for k, c, ls in _LINES:
            ax.plot(x, [r[k] for r in rs], color=c, ls=ls, label=k)
        ax.set(title=name, xlabel="λ", yscale="log")
    axs[0].set_ylabel("R")
    axs[0].legend(fontsize=8)


def plot_resampling(ax: Any, sim: Mapping[float, tuple[float, float]], window: Mapping[float, float],
                    mu_grid: np.ndarray, pair: Sequence[float], r_star: float, w: Mapping[str, float],
                    static_window: float, *, sim_label: str) -> None:
    """Draw ``R`` against the resampling rate: simulation, window, pair, ``R* + w/μ`` and the two limits.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes (log ``μ`` axis).
    sim : Mapping
        ``μ -> (mean, half-width)`` of the simulated cells.
    window : Mapping
        ``μ -> R`` of the window of three at the simulated rates (crosses).
    mu_grid : ndarray
        The rates of the pair's curve.
    pair : sequence of float
        ``R`` of the pair approximation on ``mu_grid`` (dashed).
    r_star : float
        The fluid ``R*`` (``μ = ∞``).
    w : Mapping
        ``{"window": w, "pair": w}``: first-order coefficients, drawn as
        ``R* + w/μ`` for ``μ >= 1``.
    static_window : float
        The window's ``R`` at ``μ = 0`` (dotted).
    sim_label : str
        The legend entry of the simulation.

    Raises
    ------
    ValueError
        If ``w`` lacks ``"window"`` or ``"pair"``, or ``pair`` and ``mu_grid`` differ in length.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> grid = np.geomspace(0.1, 10, 5)
    >>> plot_resampling(ax, {1.0: (3.0, 0.1)}, {1.0: 3.1}, grid, [3.0] * 5, 2.0, {"window": 1.0, "pair": 0.8},
    ...                 4.0, sim_label="simulation")
    >>> ax.get_xscale(), len(ax.get_legend().get_texts())
    ('log', 6)
    """
    if set(w) != {"window", "pair"}:
        raise ValueError(f"w must have the keys 'window' and 'pair', got {sorted(w)}")
    if len(pair) != len(mu_grid):
        raise ValueError(f"pair must have one value per rate of mu_grid ({len(mu_grid)}), got {len(pair)}")
    mus = list(sim)
    ax.errorbar(mus, [sim[m][0] for m in mus], yerr=[sim[m][1] for m in mus], fmt="ko", ms=5, label=sim_label)
    ax.plot(mus, [window[m] for m in mus], "x", color="C3", ms=9, mew=2, label="window $L = 3$")
    ax.plot(mu_grid, pair, "--", color="C0", label="pair approximation")
    mg = mu_grid[mu_grid >= 1]
    ax.plot(mg, r_star + w["window"] / mg, "-", lw=0.8, color="C3", label="$R^\\star + w/\\mu$ (window)")
    ax.plot(mg, r_star + w["pair"] / mg, "-", lw=0.8, color="C0", label="$R^\\star + w/\\mu$ (pair)")
    ax.axhline(static_window, color="C3", ls=":", lw=0.8)
    ax.axhline(r_star, color="k", lw=0.8, label="fluid $R^\\star$")
    ax.set(xscale="log", xlabel="resampling rate $\\mu$", ylabel="mean response time $R$")
    ax.legend(fontsize=7)


def worst_cell_relative(family: Any, margin: Mapping) -> SimpleNamespace:
    """The worst cell of a relative burn-in family, restated relative to its mean.

    :func:`~qlib.stats.burn_in.burn_in_family` with ``relative=True`` tests each cell
    with the margin ``margin · mean``; this divides the worst cell's achieved
    and resolvable differences by its mean, so that they read against the
    relative margin itself (for :meth:`~qlib.stats.verdict.Check.from_equivalence`,
    ``percent=True``).

    Parameters
    ----------
    family : BurnInFamily
        As from :func:`~qlib.stats.burn_in.burn_in_family` (``.checks``, ``.worst``,
        ``.passed``, ``len``).
    margin : Mapping
        The relative margins, one per cell.

    Returns
    -------
    SimpleNamespace
        ``achieved``, ``margin``, ``resolvable``, ``passed``, ``m`` (the
        family's size) and ``method = "iut"``.

    Raises
    ------
    TypeError
        If ``margin`` is not a mapping.

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> eq = NS(achieved=[0.02], margin=[0.04], resolvable=[0.01])
    >>> class Fam(NS):
    ...     def __len__(self):
    ...         return 1
    >>> r = worst_cell_relative(Fam(checks={"a": NS(equivalence=eq)}, worst="a", passed=True), {"a": 0.01})
    >>> r.achieved.tolist(), r.margin, r.resolvable.tolist(), r.m
    ([0.005], 0.01, [0.0025], 1)
    """
    margin = mapping(margin, "margin")
    eqw = family.checks[family.worst].equivalence
    rel_w = margin[family.worst] / float(np.max(eqw.margin))
    return SimpleNamespace(achieved=np.asarray(eqw.achieved) * rel_w, margin=margin[family.worst],
                           resolvable=np.asarray(eqw.resolvable) * rel_w, passed=family.passed,
                           m=len(family), method="iut")


def relaxation_time(rr: Any) -> float:
    """Integrated autocorrelation time of the batch means of the response time, worst replication.

    Parameters
    ----------
    rr : ReplicationResult
        Replications with batch means (``results[i].batch_response_time``,
        ``results[0].batch_length``).

    Returns
    -------
    float
        The largest integrated autocorrelation time over the replications, in
        time units and at least one batch length.

    Raises
    ------
    ValueError
        If the runs hold no batch means.

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> rng = np.random.default_rng(1)
    >>> runs = [NS(batch_response_time=rng.normal(size=20), batch_length=5.0) for _ in range(3)]
    >>> relaxation_time(NS(results=runs)) >= 5.0
    True
    """
    if not rr.results or rr.results[0].batch_response_time is None:
        raise ValueError("rr must hold runs with batch means (simulate with batches=...)")
    paths = np.array([r.batch_response_time for r in rr.results]).T                 # batches × replications
    b_len = rr.results[0].batch_length
    return max(float(np.max(iat(paths, dt=b_len))), b_len)
