"""The simulation studies of ``chapters/ht_waiting.md``, one function each.

* :func:`pwait_replications`: ``√n P(wait)`` and the rate-balance gap of the
  simulated chain over independent replications started at the diffusion's
  stationary means, with the halves of each replication's window;
* :func:`intercept_fit`: the weighted fit ``c + d n^{-1/2}`` to such points and
  the bias its intercept inherits from the next terms of the expansion, read
  off the exact chain;
* :func:`stationary_cumulative_wait`: ``W_n(t)`` from states drawn from the
  exact stationary law, against the chain's exact ``t E[N − Q_1]``;
* :func:`exact_eps`, :func:`eps_replications`: ``θ_n = ε_n = E[Q_3]/E[Q_2]``
  from the exact chain (with the rate of entries into ``Q_3 ≥ 1`` that sizes
  its simulation) and from independent replications started from its law;
* :func:`pwait_grid`, :func:`cumulative_waits`: those runs over the chapter's
  grids, through its store of recorded runs; :func:`fraction_figure`,
  :func:`cumulative_figure`, :func:`eps_figure`, :func:`glue_floats`: its
  figures and glue.
"""
from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

import qlib
from qlib._validate import servers_and_beta as _n_beta

from qlib.halfin_whitt.waiting import intercept_model_bias, wls

if TYPE_CHECKING:   # names for the annotations only
    from matplotlib.figure import Figure
    from numpy.typing import ArrayLike

    from qlib.stats import ReplicationCI

__all__ = ["RECORDED_CODE", "pwait_replications", "intercept_fit", "stationary_cumulative_wait", "exact_eps",
           "eps_replications", "eps_figure",
           "burn_in_intercept_bias", "BurnBias", "pwait_grid", "cumulative_waits", "glue_floats",
           "fraction_figure", "cumulative_figure"]

#: the qlib modules behind the chapter's recorded calls (the Halfin–Whitt package: its
#: simulators, exact chains and waiting-time routes), with which its store is stamped
RECORDED_CODE = tuple(sorted(f"halfin_whitt/{p.name}"
                             for p in (Path(qlib.__file__).resolve().parent / "halfin_whitt").glob("*.py")))


def pwait_replications(n: int, beta: float, c: float, *, events: float, replications: int = 10,
                       burn_in: float = 50.0, seed: int | np.random.SeedSequence | None = None
                       ) -> tuple[ReplicationCI, np.ndarray]:
    """``√n P(wait)`` of the simulated chain and the gap of ``λ_n P(wait) = E[Q_2]``.

    Each replication of :func:`~qlib.halfin_whitt.simulate.simulate_jsq` starts at
    ``Q_1 = n − β√n``, ``Q_2 = c√n`` and runs ``events / (2 n replications)``
    time units after ``burn_in``; ``P(wait)`` is the time fraction with all
    servers busy (PASTA).

    Parameters
    ----------
    n : int
        Number of servers.
    beta : float
        Halfin–Whitt parameter, in ``(0, √n)``.
    c : float
        Starting ``Q_2/√n``, non-negative (the diffusion's ``E[X_2]``).
    events : float
        Approximate number of events over all replications, positive.
    replications : int
        Independent replications, at least 2.
    burn_in : float
        Time dropped at the start of each replication, non-negative.
    seed : int or numpy.random.SeedSequence, optional

    Returns
    -------
    ci : qlib.stats.ReplicationCI
        Over replications, of ``[√n P(wait), √n P(wait) − (n/λ_n) E[Q_2]/√n]``.
    halves : numpy.ndarray
        ``√n 1{Q_1 = n}`` on the two halves of each window, shape ``(replications, 2)``.

    Examples
    --------
    >>> ci, halves = pwait_replications(50, 1.0, 0.5, events=2e4, replications=3, seed=1)
    >>> halves.shape
    (3, 2)
    """
    from qlib import stats as qs

    from qlib.halfin_whitt import simulate_jsq

    _n_beta(n, beta)
    if not isinstance(c, numbers.Real) or not c >= 0:
        raise ValueError(f"c must be >= 0, got {c!r}")
    if not isinstance(events, numbers.Real) or not events > 0:
        raise ValueError(f"events must be > 0, got {events!r}")
    if not isinstance(replications, numbers.Integral) or replications < 2:
        raise ValueError(f"replications must be an int >= 2, got {replications!r}")
    if not isinstance(burn_in, numbers.Real) or not burn_in >= 0:
        raise ValueError(f"burn_in must be >= 0, got {burn_in!r}")
    T, s = events / (2 * n) / replications, math.sqrt(n)
    seeds = np.random.SeedSequence(seed).spawn(replications)
    runs = [simulate_jsq(n, beta, t_end=T + burn_in, burn_in=burn_in, seed=sd, batches=2,
                         initial=[n - round(beta * s), round(c * s)]) for sd in seeds]
    ci = qs.replication_ci([[s * r.p_full, s * r.p_full - n / r.lam_total * r.mean_q2 / s] for r in runs])
    return ci, np.array([s * r.batch_averages[:, 4] for r in runs])


def intercept_fit(ns: ArrayLike, y: ArrayLike, se: ArrayLike, chain_ns: ArrayLike,
                  chain_y: ArrayLike) -> dict[str, float]:
    """Weighted fit ``y = c + d n^{-1/2}`` and the bias of its intercept.

    Parameters
    ----------
    ns : array_like
        The simulated ``n``, at least 2 distinct, positive.
    y, se : array_like
        Estimates at ``ns`` and their standard errors (positive).
    chain_ns, chain_y : array_like
        Exact values of the same quantity at other ``n`` (at least 4 points),
        from which :func:`~qlib.halfin_whitt.waiting.intercept_model_bias` reads
        the bias the two-term fit leaves.

    Returns
    -------
    dict
        ``c``, ``c_se``, ``d``, ``d_se``, ``chi2`` and ``bias``.

    Examples
    --------
    >>> ns = np.array([100.0, 1000.0, 10000.0])
    >>> f = intercept_fit(ns, 1 - ns**-0.5, [0.01] * 3, [100, 200, 400, 800, 1600], [0.9, 0.929, 0.95, 0.965, 0.975])
    >>> round(f["c"], 6), round(f["d"], 6)
    (1.0, -1.0)
    """
    ns = np.asarray(ns, dtype=float)
    if ns.ndim != 1 or ns.size < 2 or np.any(ns <= 0):
        raise ValueError(f"ns must be at least 2 positive values, got {ns!r}")
    x = ns ** -0.5
    se = np.asarray(se, dtype=float)
    coef, cov, chi2 = wls(np.column_stack([np.ones_like(x), x]), np.asarray(y, dtype=float), se)
    bias = intercept_model_bias(np.asarray(chain_ns), list(chain_y), x, se)
    return {"c": float(coef[0]), "c_se": float(np.sqrt(cov[0, 0])), "d": float(coef[1]),
            "d_se": float(np.sqrt(cov[1, 1])), "chi2": float(chi2), "bias": float(bias)}


def stationary_cumulative_wait(n: int, beta: float, t: float, *, replications: int,
                               seed: int | np.random.SeedSequence | None = None
                               ) -> tuple[float, float, float, float]:
    """Simulated ``W_n(t) = ∫_0^t (N − Q_1) ds`` from the exact stationary law.

    Starts are drawn from :func:`~qlib.halfin_whitt.chain.stationary_jsq`'s law
    (:func:`~qbook.ht_constants.stationary_start`), so ``E W_n(t) =
    t E[N − Q_1]`` exactly.

    Parameters
    ----------
    n : int
        Number of servers.
    beta : float
        Halfin–Whitt parameter, in ``(0, √n)``.
    t : float
        Horizon, positive.
    replications : int
        Independent replications, at least 2.
    seed : int or numpy.random.SeedSequence, optional

    Returns
    -------
    tuple of float
        ``(mean, se, exact, exact_error)``: the replications' mean of
        ``W_n(t)`` and its standard error, and the chain's ``t E[N − Q_1]``
        with its truncation-error estimate.

    Examples
    --------
    >>> m, se, ex, err = stationary_cumulative_wait(20, 1.0, 0.5, replications=50, seed=1)
    >>> abs(m - ex) < 5 * se
    True
    """
    st, rs = _stationary_runs(n, beta, t, replications, seed)
    W = np.array([r.cumulative_wait for r in rs])
    return (float(W.mean()), float(W.std(ddof=1) / math.sqrt(replications)),
            t * st.mean_waiting, t * st.error_estimates["mean_waiting"])


def exact_eps(ns: Sequence[int], beta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``ε_n = E[Q_3]/E[Q_2]`` of the exact chain, its error estimate, and the rate of entries into ``Q_3 ≥ 1``.

    The error combines the truncation-error estimates of
    :func:`~qlib.halfin_whitt.chain.stationary_jsq`, ``(e_{Q_3} + ε e_{Q_2}) / E[Q_2]``
    (an estimate, not a bound). The entry rate, ``λ_n π(Q_2 = n, Q_3 = 0)``
    (an arrival that finds every queue at two or more starts an excursion of
    ``Q_3``), per unit time, is what a simulation of ``ε_n`` must collect many
    of: it sizes the runs before any is made.

    Parameters
    ----------
    ns : sequence of int
        Numbers of servers, each at least 2.
    beta : float
        Halfin–Whitt parameter, in ``(0, √n)`` for every ``n``.

    Returns
    -------
    eps, err, entries : numpy.ndarray

    Examples
    --------
    >>> eps, err, entries = exact_eps([16], 1.0)
    >>> bool(0 < eps[0] < 1 and err[0] < 0.1 * eps[0] and entries[0] > 0)
    True
    """
    from qlib.halfin_whitt import stationary_jsq

    ns = list(ns)
    if not ns:
        raise ValueError("ns must not be empty")
    for n in ns:
        _n_beta(n, beta)
    sts = [stationary_jsq(n, beta) for n in ns]
    eps = np.array([st.mean_q3 / st.mean_q2 for st in sts])
    err = np.array([(st.error_estimates["mean_q3"] + e * st.error_estimates["mean_q2"]) / st.mean_q2
                    for st, e in zip(sts, eps)])
    entries = []
    for st in sts:
        Q = np.asarray(st.states)
        q3 = Q[:, 2] if Q.shape[1] > 2 else np.zeros(len(Q))
        entries.append(st.lam_total * float(np.asarray(st.pi)[(Q[:, 1] == st.n) & (q3 == 0)].sum()))
    return eps, err, np.array(entries)


def eps_replications(n: int, beta: float, t: float, *, replications: int,
                     seed: int | np.random.SeedSequence | None = None) -> tuple[float, float, int]:
    """``ε_n = E[Q_3]/E[Q_2]`` over independent replications from the exact stationary law.

    Each replication of :func:`~qlib.halfin_whitt.simulate.simulate_jsq` (its
    default kernel) starts from a state drawn from
    :func:`~qlib.halfin_whitt.chain.stationary_jsq`'s law
    (:func:`~qbook.ht_constants.stationary_start`), so no burn-in is needed, and
    runs ``t`` time units; the estimate is the ratio of the replications' summed
    time averages, with its delta-method standard error over replications
    (:func:`~qlib.halfin_whitt.waiting.ratio_se`, Student-t with
    ``replications − 1`` degrees of freedom).

    Parameters
    ----------
    n : int
        Number of servers.
    beta : float
        Halfin–Whitt parameter, in ``(0, √n)``.
    t : float
        Length of each replication, positive.
    replications : int
        Independent replications, at least 2.
    seed : int or numpy.random.SeedSequence, optional

    Returns
    -------
    eps, se, df : float, float, int

    Examples
    --------
    >>> e, se, df = eps_replications(16, 1.0, 200.0, replications=3, seed=1)
    >>> df
    2
    """
    from qlib.halfin_whitt.waiting import ratio_se

    _, rs = _stationary_runs(n, beta, t, replications, seed)
    return ratio_se([r.mean_q3 for r in rs], [r.mean_q2 for r in rs])


def _stationary_runs(n, beta, t, replications, seed):
    """The exact chain at ``(n, beta)`` and ``replications`` runs of ``simulate_jsq`` of
    length ``t``, each from a state drawn from that chain's law (checked inputs)."""
    from qlib.halfin_whitt import simulate_jsq, stationary_jsq
    from qbook.ht_constants import stationary_start

    _n_beta(n, beta)
    if not isinstance(t, numbers.Real) or not t > 0:
        raise ValueError(f"t must be > 0, got {t!r}")
    if not isinstance(replications, numbers.Integral) or replications < 2:
        raise ValueError(f"replications must be an int >= 2, got {replications!r}")
    st = stationary_jsq(n, beta)
    run_ss, start_ss = np.random.SeedSequence(seed).spawn(2)
    with warnings.catch_warnings():   # each run's own batch s.e. is not used (replications are)
        warnings.simplefilter("ignore", RuntimeWarning)
        rs = [simulate_jsq(n, beta, t_end=t, seed=s, initial=x0)
              for s, x0 in zip(run_ss.spawn(replications), stationary_start(st, start_ss.spawn(replications)))]
    return st, rs


@dataclass(frozen=True)
class BurnBias:
    """The burn-in of the ``√n P(wait)`` runs and the bias it leaves in the intercepts.

    Attributes
    ----------
    burn : qlib.stats.BurnIn
        The halves check over the runs that resolve the margin.
    ok : numpy.ndarray
        Per run (``(β, n)`` in the order of the runs): whether it resolves the margin.
    c_share : numpy.ndarray
        Per ``β``: the intercept's bias bound over half the family's detectable deviation.
    unres_weight : list of float
        Per ``β``: the share of the intercept's weight on the runs that do not resolve.
    """
    burn: object
    ok: np.ndarray
    c_share: np.ndarray
    unres_weight: list


def burn_in_intercept_bias(halves: Sequence, sim: Mapping, betas: Sequence[float], ns: Sequence[int],
                           events: float, detectable: ArrayLike, tau_up: float = 50.0,
                           margin: float = 0.10) -> BurnBias:
    """Burn-in of the runs behind the intercepts, and its bias carried through the fit's weights.

    The halves of each run's window are checked (intersection-union) with a margin
    of ``margin`` times their mean, over the runs that resolve it; each resolved
    run's halves bound becomes a bias bound (``leftover_bias`` with ``tau_up``), and
    the WLS weights of the intercept ``c + d n^{-1/2}`` carry it into the intercept,
    which is compared with half the family's detectable deviation.

    Parameters
    ----------
    halves : sequence of array_like
        Per run, in the order ``(β, n) for β in betas for n in ns``: an array
        (replication, half) of the run's two half-window means.
    sim : mapping
        ``sim[β, n] = (mean, se, df)`` of the points the intercept is fitted to.
    betas, ns : sequence
        The β values and system sizes.
    events : float
        Events per run (the window is ``events / (2 n 10)`` per half).
    detectable : array_like
        Per β, the deviation of the intercept the family detects.
    tau_up : float
        Upper bound of the relaxation time.
    margin : float
        The halves margin, relative to the mean.

    Returns
    -------
    BurnBias

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> h = [1 + 0.01 * rng.standard_normal((10, 2)) for _ in range(4)]
    >>> sim = {(b, n): (1.0, 0.01, 9) for b in (1.0, 2.0) for n in (100, 1000)}
    >>> bb = burn_in_intercept_bias(h, sim, (1.0, 2.0), (100, 1000), 2e7, [0.1, 0.1])
    >>> bool(bb.ok.all()), bb.c_share.shape
    (True, (2,))
    """
    from qlib import stats as qs
    H = np.stack(halves, axis=-1)                       # (replication, half, run)
    marg = margin * H.mean(axis=(0, 1))
    probe = qs.burn_in_check(H, replications=True, margin=marg, method="iut")
    ok = np.atleast_1d(probe.equivalence.resolvable) / marg < 1
    bi = qs.burn_in_check(H[..., ok], replications=True, margin=marg[ok], method="iut")
    runs_bn = [(b_, n) for b_ in betas for n in ns]
    win = np.array([events / (2 * n * 10) for _, n in runs_bn])
    b_pt = np.zeros(len(runs_bn))
    b_pt[ok] = [qs.leftover_bias(d_, w_, tau_up) for d_, w_ in zip(np.atleast_1d(bi.equivalence.achieved), win[ok])]
    c_bias, unres_w = [], []
    for b_ in betas:
        i = [k for k, (bb, _) in enumerate(runs_bn) if bb == b_]
        se = np.array([sim[b_, n][1] for n in ns])
        X = np.column_stack([np.ones(len(i)), np.array(ns, float) ** -0.5]) / se[:, None]
        a = np.linalg.pinv(X)[0] / se                   # intercept = a · y
        c_bias.append(float(np.abs(a) @ b_pt[i]))
        unres_w.append(float(np.abs(a)[~ok[i]].sum() / np.abs(a).sum()))
    c_share = np.array(c_bias) / (np.asarray(detectable) / 2)
    return BurnBias(bi, ok, c_share, unres_w)


def pwait_grid(runs: Any, betas: Sequence[float], ns: Sequence[int], c_ou: Mapping, *,
               events: float) -> tuple[dict, list, list]:
    """:func:`pwait_replications` at every ``(β, n)`` of the chapter, through a store.

    Parameters
    ----------
    runs : qbook.recorded.RecordedRuns
        The chapter's store; each call is ``runs.value(pwait_replications, n, β,
        c_ou[β][0], events=events, seed=400 + 10 k + j)`` for the ``k``-th ``β`` and
        the ``j``-th ``n``.
    betas, ns : sequences
        The ``β`` and ``n`` of the grid.
    c_ou : mapping
        ``β -> (c(β), its error)``, the diffusion's pushing rate (the start).
    events : float
        Events per replication.

    Returns
    -------
    sim : dict
        ``(β, n) -> (mean, se, df)`` of ``√n P(wait)``.
    bal : list
        ``(mean, se, df)`` of the rate-balance gap, one per run.
    halves : list
        The halves of each run's window.

    Examples
    --------
    >>> pwait_grid(None, (), (), {}, events=1e3)
    ({}, [], [])
    """
    sim, bal, halves = {}, [], []
    for k, b in enumerate(betas):
        for j, n in enumerate(ns):
            ci, h = runs.value(pwait_replications, n, b, c_ou[b][0], events=events, seed=400 + 10 * k + j)
            sim[b, n] = (ci.mean[0], ci.se[0], ci.df)
            bal.append((ci.mean[1], ci.se[1], ci.df))
            halves.append(h)
    return sim, bal, halves


def cumulative_waits(runs: Any, ns: Sequence[int], beta: float, t: float, *, replications: int,
                     seed: int = 600) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`stationary_cumulative_wait` at each ``n`` through a store, as rows of an array.

    Parameters
    ----------
    runs : qbook.recorded.RecordedRuns
        The chapter's store; the ``k``-th call has seed ``seed + k``.
    ns : sequence of int
        The numbers of servers.
    beta, t : float
        The Halfin–Whitt parameter and the horizon.
    replications : int
        Replications per ``n``.
    seed : int, default 600
        The first seed.

    Returns
    -------
    ns : numpy.ndarray
        The ``n``, as floats.
    mean, se : numpy.ndarray
        The simulated ``W_n(t)`` and its standard error, one per ``n``.
    exact : numpy.ndarray
        One row per ``n``: the exact value and its error bound.

    Examples
    --------
    >>> cumulative_waits(None, [], 1.0, 1.0, replications=2)[0].size
    0
    """
    cum = np.array([runs.value(stationary_cumulative_wait, n, beta, t, replications=replications, seed=seed + k)
                    for k, n in enumerate(ns)]).reshape(-1, 4)
    return np.array(ns, float), cum[:, 0], cum[:, 1], cum[:, 2:]


def glue_floats(prefix: str, values: Mapping[str, Any]) -> None:
    """Glue each value, as a float, under ``prefix + key``, without display.

    Parameters
    ----------
    prefix : str
        The glue key's start, e.g. ``"ht_waiting-"``.
    values : mapping
        Key ends and numbers.

    Examples
    --------
    >>> glue_floats("doc-", {})
    """
    from myst_nb import glue
    for key, v in values.items():
        glue(f"{prefix}{key}", float(v), display=False)


def _legend(ax, **kw) -> None:
    """A legend on ``ax`` where it has labelled artists (none with empty data)."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**kw)


def fraction_figure(sim: Mapping, fits: Mapping, c_ou: Mapping, betas: Sequence[float],
                    ns: Sequence[int]) -> "Figure":
    """The chapter's figure of ``√n P(wait)`` against ``n``: runs, fits and ``c(β)``.

    Parameters
    ----------
    sim : mapping
        ``(β, n) -> (mean, se, df)``, as from :func:`pwait_grid`.
    fits : mapping
        ``β ->`` :func:`intercept_fit` result (keys ``"c"``, ``"d"``).
    c_ou : mapping
        ``β -> (c(β), error)``.
    betas, ns : sequences
        The grid.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = fraction_figure({}, {}, {}, (), (100,))
    """
    import matplotlib.pyplot as plt
    from qlib import stats as qs
    fig, ax = plt.subplots(figsize=(6, 3.8))
    grid = np.logspace(1.8, np.log10(max(ns)) + 0.5, 100)
    for b_, col in zip(betas, ("#4c72b0", "#dd8452", "#55a868")):
        ax.axhline(c_ou[b_][0], color=col, ls=":", lw=1)
        ax.errorbar(ns, [sim[b_, n][0] for n in ns],
                    [qs.t_quantile(0.975, 9) * sim[b_, n][1] for n in ns],
                    fmt="o", color=col, capsize=3, label=f"β = {b_}")
        ax.plot(grid, fits[b_]["c"] + fits[b_]["d"] / np.sqrt(grid), "--", color=col, lw=1)
    ax.set_xscale("log"); ax.set_yscale("log")
    ax.set_xlabel("n"); ax.set_ylabel("√n P(wait)"); _legend(ax, loc="lower right")
    return fig


def cumulative_figure(n_all: ArrayLike, lam_p: ArrayLike, ns_c: ArrayLike, Wm: ArrayLike, Wse: ArrayLike,
                      pred: Any, tr: Mapping) -> "Figure":
    """The chapter's figure of cumulative waiting: stationary start (left), empty start (right).

    Parameters
    ----------
    n_all, lam_p : array_like
        The exact chain's ``n`` and ``E[N − Q_1]``.
    ns_c, Wm, Wse : array_like
        The simulated ``n``, mean ``W_n(1)`` and its standard error.
    pred : callable
        ``n -> c√n + (d − βc)``, the prediction.
    tr : mapping
        ``n ->`` transient result with ``times`` and ``mean`` (``E W_n(t)``).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = cumulative_figure([100], [1.0], [100], [1.0], [0.1], lambda m: m ** 0.5, {})
    """
    import matplotlib.pyplot as plt
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.6))
    a1.loglog(n_all, lam_p, "kx", label="exact chain")
    a1.errorbar(ns_c, Wm, 1.96 * np.asarray(Wse), fmt="o", ms=3, capsize=2, label="simulation")
    mm = np.logspace(np.log10(50), np.log10(4000), 100)
    a1.loglog(mm, pred(mm), "-", lw=1, label="c√n + (d − βc)")
    a1.set_xlabel("n"); a1.set_ylabel("E W$_n$(1)"); _legend(a1, fontsize=8)
    for m in tr:
        a2.plot(tr[m].times, tr[m].mean / math.sqrt(m), label=f"n = {m}")
    a2.set_xlabel("t"); a2.set_ylabel("E W$_n$(t) / √n"); _legend(a2, fontsize=8)
    return fig


def eps_figure(ns: Sequence[int], eps_sim: Mapping, eps_ex: ArrayLike, keep: ArrayLike) -> "Figure":
    """The chapter's figure of ``θ_n = ε_n`` against ``√n``: exact chain and simulation.

    Parameters
    ----------
    ns : sequence of int
        The ``n``.
    eps_sim : mapping
        ``(β, n) -> (estimate, se, df)`` for ``β = 0.5`` and ``1``, as from
        :func:`eps_replications`.
    eps_ex : array_like
        The exact chain's ``ε_n`` at ``β = 1``.
    keep : array_like of bool
        Per ``n``: whether the ``β = 1`` simulation is checked (filled marker)
        or only shown (open marker).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = eps_figure([], {}, [], [])
    """
    import matplotlib.pyplot as plt
    from qlib import stats as qs
    fig, ax = plt.subplots(figsize=(6, 3.8))
    rt, keep = np.sqrt(np.asarray(ns, float)), np.asarray(keep, bool)
    ax.semilogy(rt, eps_ex, "kx", ms=8, label="exact chain, β = 1")
    for b_, col in ((0.5, "#dd8452"), (1.0, "#4c72b0")):
        if not ns:
            break
        e, se, df = (np.array(v, float) for v in zip(*(eps_sim[b_, n] for n in ns)))
        hw = qs.t_quantile(0.975, df) * se
        for sel, face, lab in ((keep | (b_ != 1.0), col, f"simulation, β = {b_:g}"),
                               (~keep & (b_ == 1.0), "white", "simulation, β = 1, not checked")):
            if sel.any():
                ax.errorbar(rt[sel], e[sel], hw[sel], fmt="o", color=col, mfc=face, capsize=3, label=lab)
    ax.set_xlabel("√n"); ax.set_ylabel("θ$_n$ = E[Q$_3$]/E[Q$_2$]"); _legend(ax, fontsize=8)
    return fig
