"""The simulated runs of ``chapters/ht_alternatives.md`` and their burn-in verdict.

* :func:`d_sequences`: the three ``d(n)`` around the universality threshold
  ``√n log n`` (above, at, below);
* :func:`coupled_run`: JSQ and JSQ(``d(n)``) on common random numbers, started
  near the stationary means of the diffusion;
* :func:`jsq2_run`: JSQ(2) started at its mean-field fixed point;
* :func:`resolved_burn_in`: the halves test of many runs as one equivalence
  verdict, over the runs whose replications resolve the margin.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from qlib._validate import servers_and_beta as _n_beta

from qlib.halfin_whitt.classical import jsq_d_fixed_point
from qlib.halfin_whitt.jsq_d import JSQdResult, simulate_jsq_d

if TYPE_CHECKING:   # names for the annotations only
    import pandas as pd
    from numpy.typing import ArrayLike

    from qlib.stats import Check

__all__ = ["d_sequences", "coupled_run", "jsq2_run", "resolved_burn_in", "comparison_table",
           "erlang_decades", "plot_universality", "cost_per_event", "chain_family"]


def d_sequences(n: int) -> dict[str, int]:
    """The numbers of sampled servers ``d(n)`` above, at and below ``√n log n``.

    Parameters
    ----------
    n : int
        Number of servers, at least 2.

    Returns
    -------
    dict
        ``{"n^0.8": ⌈n^0.8⌉, "sqrt(n) log n": ⌈√n log n⌉, "sqrt(n)": ⌈√n⌉}``.

    Examples
    --------
    >>> d_sequences(10_000)
    {'n^0.8': 1585, 'sqrt(n) log n': 922, 'sqrt(n)': 100}
    """
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise TypeError(f"n must be an int, got {n!r}")
    if n < 2:
        raise ValueError(f"n must be >= 2, got {n!r}")
    s = math.sqrt(n)
    return {"n^0.8": math.ceil(n**0.8), "sqrt(n) log n": math.ceil(s * math.log(n)),
            "sqrt(n)": math.ceil(s)}


def coupled_run(n: int, beta: float, c: float, *, t_end: float, below: bool = False,
                replications: int = 10, seed: int | np.random.SeedSequence | None = None
                ) -> tuple[list[str], JSQdResult]:
    """JSQ (``d = n``) and JSQ(``⌈n^0.8⌉``), with ``below`` also ``⌈√n log n⌉`` and
    ``⌈√n⌉``, on common random numbers at ``λ_n = n − β√n``.

    The chains start at ``Q_1 = n − β√n``, ``Q_2 = c√n`` (the diffusion's
    stationary means, ``c = E[X_2]``). The burn-in is 10 time units, or ``√n``
    when ``below`` (chains at and below the threshold relax on a time scale of
    order ``√n``).

    Parameters
    ----------
    n : int
        Number of servers.
    beta : float
        Halfin–Whitt parameter, in ``(0, √n)``.
    c : float
        Starting value of ``Q_2/√n``, non-negative.
    t_end : float
        Length of the measurement window (after the burn-in), positive.
    below : bool
        Add the two sequences at and below the threshold.
    replications : int
        Independent replications.
    seed : int or numpy.random.SeedSequence, optional

    Returns
    -------
    names : list of str
        The chains' names, ``"JSQ"`` first.
    result : JSQdResult

    Examples
    --------
    >>> names, r = coupled_run(100, 1.0, 0.5, t_end=5.0, replications=2, seed=1)
    >>> names
    ['JSQ', 'n^0.8']
    """
    _n_beta(n, beta)
    if not isinstance(c, numbers.Real) or not c >= 0:
        raise ValueError(f"c must be >= 0, got {c!r}")
    if not isinstance(t_end, numbers.Real) or not t_end > 0:
        raise ValueError(f"t_end must be > 0, got {t_end!r}")
    names = ["JSQ", "n^0.8"] + (["sqrt(n) log n", "sqrt(n)"] if below else [])
    ds = [n] + [d_sequences(n)[k] for k in names[1:]]
    x0 = [n - round(beta * math.sqrt(n)), round(c * math.sqrt(n))]
    burn = math.sqrt(n) if below else 10.0
    r = simulate_jsq_d(n, beta, ds, t_end=t_end + burn, burn_in=burn, replications=replications,
                       initial=x0, seed=seed)
    return names, r


def jsq2_run(n: int, beta: float, *, t_end: float, replications: int = 10,
             seed: int | np.random.SeedSequence | None = None) -> JSQdResult:
    """JSQ(2) at ``λ_n = n − β√n`` started at its mean-field fixed point, burn-in 10.

    Parameters
    ----------
    n : int
        Number of servers.
    beta : float
        Halfin–Whitt parameter, in ``(0, √n)``.
    t_end : float
        End of the run (the burn-in of 10 time units included), above 10.
    replications : int
        Independent replications.
    seed : int or numpy.random.SeedSequence, optional

    Returns
    -------
    JSQdResult

    Examples
    --------
    >>> r = jsq2_run(50, 1.0, t_end=12.0, replications=2, seed=1)
    >>> r.mean_wait.shape[0]
    2
    """
    _n_beta(n, beta)
    if not isinstance(t_end, numbers.Real) or not t_end > 10:
        raise ValueError(f"t_end must be > 10 (the burn-in), got {t_end!r}")
    q = np.round(n * jsq_d_fixed_point(n, beta, 2)["q"]).astype(np.int64)
    return simulate_jsq_d(n, beta, 2, t_end=t_end, burn_in=10.0, replications=replications,
                          initial=q[q > 0], seed=seed)


def resolved_burn_in(halves: Iterable[ArrayLike], margin_frac: float = 0.10, *,
                     claim: str = "burn-in over") -> tuple[Check, int]:
    """The halves test of several runs as one equivalence verdict.

    Each run's block averages (shape ``(replications, blocks, quantities)``,
    at least two blocks, e.g. from :func:`~qbook.ht_compare.burn_in_halves`)
    are split into halves and tested with
    :func:`qlib.stats.burn_in.burn_in_check` (TOST, intersection–union) against the
    margin ``margin_frac · |mean|`` per quantity. Runs whose replications
    cannot resolve that margin are counted, not passed; the verdict covers the
    others (intersection–union: every tested run must pass).

    Parameters
    ----------
    halves : sequence of array_like
        One array of shape ``(r, blocks, k)`` per run.
    margin_frac : float
        The margin as a fraction of each quantity's mean, in ``(0, 1)``.
    claim : str
        The claim of the returned check.

    Returns
    -------
    check : qlib.stats.Check
        Equivalence verdict: worst achieved bound over margin, against 1.
    unresolved : int
        Runs left out because they cannot resolve the margin.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> H = 1.0 + 0.001 * rng.standard_normal((10, 2, 1))
    >>> chk, left = resolved_burn_in([H, H])
    >>> chk.passed, left
    (True, 0)
    """
    from qlib.stats import Check, burn_in_check

    if not isinstance(margin_frac, numbers.Real) or not 0 < margin_frac < 1:
        raise ValueError(f"margin_frac must be in (0, 1), got {margin_frac!r}")
    tested, unresolved = [], 0
    for H in halves:
        H = np.asarray(H, dtype=float)
        if H.ndim != 3 or H.shape[1] < 2:
            raise ValueError(f"halves must hold arrays of shape (r, blocks >= 2, k), got {H.shape}")
        margin = margin_frac * np.abs(H.mean(axis=(0, 1)))
        probe = burn_in_check(H, replications=True, margin=margin, method="iut")
        if np.all(np.atleast_1d(probe.equivalence.resolvable) < margin):
            tested.append(probe)
        else:
            unresolved += 1
    if not tested:              # nothing shown: a failed verdict, not a vacuous pass
        return Check(f"{claim}: no run resolves a {margin_frac:.0%} margin", "equivalence",
                     math.nan, 1.0, math.nan, False), unresolved
    used = max(float(b.margin_used) for b in tested)
    res = max(float(b.margin_resolvable) for b in tested)
    return (Check(f"{claim}, {len(tested)} runs that resolve a {margin_frac:.0%} margin (bound / margin)",
                  "equivalence", used, 1.0, res, all(b.passed for b in tested), "TOST, intersection-union"),
            unresolved)


POLICIES = {"pooled M/M/n": "pooled", "random": "random", "JSQ": "JSQ", "JSQ(2)": "JSQ(2)",
            r"JSQ($\lceil n^{0.8}\rceil$)": "JSQ(n^0.8)"}


def comparison_table(exact: dict, runs: dict, runs2: dict, betas: Sequence[float], ns: Sequence[int]
                     ) -> tuple[pd.DataFrame, dict[tuple[str, int, float], float]]:
    """The table ``P(wait) / E[W | wait] / E[W]`` of every policy at every ``(β, n)``.

    Pooled M/M/n and random routing are exact (:func:`~qbook.ht_compare.pooled`,
    :func:`~qbook.ht_compare.random_routing`); JSQ comes from ``exact``
    where it holds ``(n, β)`` (marked "chain", with the largest relative error
    *estimate*), otherwise from the simulation, as do JSQ(2) and
    JSQ(``⌈n^0.8⌉``) (marked with the 95 % half-width of ``E[W]``).

    Parameters
    ----------
    exact : dict
        ``(n, β) -> (values, errors)`` from :func:`~qbook.ht_compare.jsq_chain_row`.
    runs : dict
        ``(n, β) -> (names, JSQdResult)`` from :func:`coupled_run` (chain 0 JSQ,
        chain 1 JSQ(``⌈n^0.8⌉``)).
    runs2 : dict
        ``(n, β) -> JSQdResult`` from :func:`jsq2_run`.
    betas, ns : sequence
        Rows' ``β`` and columns' ``n``; every ``(n, β)`` must be in ``runs``
        and ``runs2``.

    Returns
    -------
    table : pandas.DataFrame
        One row per policy and ``β``, one column per ``n``.
    mean_wait : dict
        ``(policy, n, β) -> E[W]``, the numbers the table shows.

    Examples
    --------
    >>> t, w = comparison_table({(100, 1.0): ((0.1, 1.0, 0.1), (0.0, 0.0, 0.0))},
    ...                         {}, {}, [1.0], [100]) # doctest: +SKIP
    """
    import pandas as pd

    from qbook.ht_compare import pooled, random_routing, replication_cis

    for name, d in (("exact", exact), ("runs", runs), ("runs2", runs2)):
        if not isinstance(d, dict):
            raise TypeError(f"{name} must be a dict, got {type(d).__name__}")
    missing = [(n, b) for b in betas for n in ns if (n, b) not in runs or (n, b) not in runs2]
    if missing:
        raise ValueError(f"runs and runs2 must hold every (n, beta); missing {missing}")
    rows, mean_wait = [], {}
    for label, pol in POLICIES.items():
        for b in betas:
            row = {"policy": label, r"$\beta$": f"{b:g}"}
            for n in ns:
                if pol in ("pooled", "random"):
                    vals, note = (pooled if pol == "pooled" else random_routing)(n, b), ""
                elif pol == "JSQ" and (n, b) in exact:
                    vals, errs = exact[n, b]
                    note = f" (chain, ± estimate {max(errs[k] / vals[k] for k in range(3)):.0e} rel.)"
                else:
                    r, j = (runs2[n, b], None) if pol == "JSQ(2)" else (runs[n, b][1], 0 if pol == "JSQ" else 1)
                    c = replication_cis(r, j)
                    vals, note = tuple(float(x.mean) for x in c), f" ± {c[2].half_width:.2g}"
                mean_wait[pol, n, b] = float(vals[2])
                row[f"$n = {n}$"] = " / ".join(f"{x:.3g}" for x in vals) + note
            rows.append(row)
    return pd.DataFrame(rows), mean_wait


def erlang_decades(betas: Sequence[float], ns: Sequence[int]) -> dict:
    """``√n (C(n, λ_n) − α(β))`` over the sizes ``ns``: the pooled system's Erlang C probability of
    waiting against its Halfin–Whitt limit ``α(β)``, one array per ``β``.

    Parameters
    ----------
    betas : sequence of float
    ns : sequence of int

    Returns
    -------
    dict
        ``β`` to ``numpy.ndarray`` over ``ns``.
    """
    from qlib.halfin_whitt import halfin_whitt_alpha
    from qbook.ht_compare import pooled
    return {b: np.array([math.sqrt(n) * (pooled(n, b)[0] - halfin_whitt_alpha(b)) for n in ns])
            for b in betas}


def plot_universality(ax, G: dict, ns: Sequence[int]) -> None:
    """The gap to JSQ in ``E[Q_2]/√n`` at ``β = 1`` for ``d(n)`` above, at and below the
    universality threshold, with 95 % intervals.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    G : dict
        ``n`` to :func:`qbook.ht_compare.coupled_gaps` at that ``n``.
    ns : sequence of int
    """
    for k, lab in (("n^0.8", "d = ⌈n^0.8⌉ (above)"), ("sqrt(n) log n", "d = ⌈√n log n⌉ (at)"),
                   ("sqrt(n)", "d = ⌈√n⌉ (below)")):
        ns_k = [n for n in ns if k in G[n]]
        ax.errorbar(ns_k, [G[n][k][1].mean for n in ns_k], [G[n][k][1].half_width for n in ns_k],
                    fmt="o-", capsize=3, label=lab)
    ax.set_yscale("symlog", linthresh=0.01)
    ax.set(xscale="log", xlabel="$n$", ylabel="gap in $E[Q_2]/\\sqrt{n}$ to JSQ")
    ax.legend(fontsize=8)


def cost_per_event(n: int = 10_000, degrees: Sequence[int] = (3, 10, 30, 100), lam: float = 0.99,
                   t_end: float = 2.0) -> dict:
    """Wall time per event of the graph simulator on random ``(d − 1)``-regular graphs (the
    dispatcher sees ``d`` queues), after a warm-up call that compiles it. Timing only.

    Parameters
    ----------
    n : int
    degrees : sequence of int
    lam : float
    t_end : float

    Returns
    -------
    dict
        ``d`` to seconds per event.
    """
    from qlib.graphs import random_regular
    from qlib.sim import simulate
    # the event kernel at every k: auto would switch kernels at 64 looked positions
    simulate(random_regular(100, 2, seed=1), 0.9, math.inf, t_end=1.0, batches=2, kernel="event")   # JIT
    cost = {}
    for d in degrees:
        res = simulate(random_regular(n, d - 1, seed=d), lam, math.inf, t_end=t_end, seed=d, batches=2,
                       kernel="event")
        cost[d] = res.wall_time / res.events
    return cost


def chain_family(est: Sequence[float], se: Sequence[float], target: Sequence[float],
                 err: Sequence[float], df: int = 9, level: float = 0.99):
    """Simulated means against the exact chain as one simultaneous family, with the chain's own
    error in units of the deviation the family detects.

    Parameters
    ----------
    est, se : sequence of float
        The replication means and their standard errors.
    target, err : sequence of float
        The chain's values and their error estimates.
    df : int
        Degrees of freedom (replications − 1).
    level : float

    Returns
    -------
    family : qlib.stats.Family
    ratio : float
        ``max(err / detectable)``: the chain's error against what the family can detect.
    """
    from qlib import stats
    fam = stats.simultaneous(est, se, df=df, target=target, level=level)
    return fam, float(np.max(np.asarray(err) / fam.detectable))
