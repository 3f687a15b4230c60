"""The mechanics of ``chapters/tails.md``: the figures, the double-exponential constants'
widths, the crossover grid, the log-ratio of the simulated ``m = 0`` cell, the burn-in of its
two simulated cells and the leftover bias their halves allow.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from qlib import stats
from qlib.meanfield import crossover_violations, double_exponential_constant, fluid, refined, tails
from qlib.stats import iat, leftover_bias

__all__ = ["burn_in_bias", "plot_bounds", "constant_widths", "crossover_grid", "plot_crossover",
           "log_ratio", "plot_simulated"]


def burn_in_bias(sims: Mapping, lam: float, window: Mapping, burn_in: float = 20.0, margin: float = 0.02):
    """Halves check of each cell's mean queue length and the leftover bias it allows.

    Parameters
    ----------
    sims : mapping
        Cell name to ``(degree law, fluid equilibrium, replicated run)``.
    lam : float
        The load.
    window : mapping
        Cell name to its averaging window.
    burn_in : float
        The burn-in of the runs.
    margin : float
        The halves margin, relative to the mean queue length.

    Returns
    -------
    worst : qlib.stats.BurnIn
        The cell's halves check that uses most of its margin.
    bias : dict
        Cell name to its leftover bias bound, relative to the mean queue length, through
        ``τ_up = max(1/γ, 2 × UCL of τ_int)``.
    wtau : list of float
        Each cell's window over its ``τ_up``.

    Examples
    --------
    >>> burn_in_bias.__name__
    'burn_in_bias'
    """
    burn, bias, wtau = {}, {}, []
    for name, (pn, q, rep) in sims.items():
        h = rep.queue_paths(after=burn_in)
        burn[name] = stats.burn_in_check(h, replications=True, margin=margin * h.mean(), method="iut")
        τ = stats.tau_upper([iat(x) for x in h], model=1 / fluid.relaxation_rate(lam, pn, tol=1e-300), factor=2)
        d_up = float(np.max(np.atleast_1d(burn[name].equivalence.achieved)))       # halves bound
        bias[name] = float(leftover_bias(d_up / h.mean(), window[name], τ.value))
        wtau.append(window[name] / τ.value)
    worst = max(burn.values(), key=lambda b: float(np.max(b.equivalence.achieved / b.equivalence.margin)))
    return worst, bias, wtau


def plot_bounds(axes, laws: Mapping, lam: float = 0.9, colours: Sequence[str] = ("C0", "C1", "C0", "C1")) -> None:
    """``q*(i)`` (dots) between the bounds of the tails proposition (shaded) and the paper's cruder
    forms (dotted): ``m = 0`` laws on ``log10 q*`` (left axis), ``m >= 1`` on ``−log q*`` (right).

    Parameters
    ----------
    axes : (matplotlib.axes.Axes, matplotlib.axes.Axes)
    laws : mapping
        Label to degree law.
    lam : float
    colours : sequence of str
    """
    to10 = 1 / math.log(10)
    for (name, p), c in zip(laws.items(), colours):
        m = p.min_degree
        lev = np.arange(1, (40 if m == 0 else 9) + 1)
        lq, (lo, up) = tails.log_equilibrium(lam, p, lev[-1])[1:], tails.tail_bounds(lam, p, lev, log=True)
        a_i = lev if m == 0 else ((m + 1.0) ** lev - 1) / m
        paper = np.transpose((a_i * math.log(lam * p.pmf[m]), a_i * math.log(lam)))
        ax, f = (axes[0], lambda y: y * to10) if m == 0 else (axes[1], lambda y: -y)
        ax.fill_between(lev, f(lo), f(up), color=c, alpha=0.3)
        ax.plot(lev, f(lq), "o", ms=3, color=c, label=name)
        ax.plot(lev, f(paper), ":", color=c)
    axes[0].set(xlabel="level $i$", ylabel=r"$\log_{10} q^\star(i)$", title="$m = 0$", ylim=(-25, 0.5))
    axes[1].set(xlabel="level $i$", ylabel=r"$-\log q^\star(i)$", yscale="log", title=r"$m \geq 1$")
    axes[0].legend()
    axes[1].legend()


def constant_widths(laws: Mapping, lam: float, levels: int = 30) -> dict:
    """The width of the proved interval for the double-exponential constant ``c`` of each law with
    ``m >= 1``, and how much narrower it is than the crude one; asserts that the intervals nest
    and hold the estimate (up to the rounding ``e``).

    Returns
    -------
    dict
        Label to ``(c_up − c_lo, crude width / width)``.
    """
    narrow = {}
    for name, p in ((k, p) for k, p in laws.items() if p.min_degree > 0):
        c = double_exponential_constant(lam, p, levels)
        e, (crude_lo, crude_up) = c["e"], c["crude"]
        assert crude_lo <= c["c_lo"] + c["Delta"] + e and c["c_up"] <= crude_up + e
        assert c["c_lo"] <= c["c_est"] + 2 * e and c["c_est"] <= c["c_up"] + 2 * e
        narrow[name] = (c["c_up"] - c["c_lo"], (crude_up - crude_lo) / (c["c_up"] - c["c_lo"]))
    return narrow


def crossover_grid(lams: Sequence[float], eps_grid: Sequence[float]) -> tuple[dict, dict]:
    """:func:`qlib.meanfield.tails.tail_crossover` over a grid, with the count of its violations
    of the crossover proposition and the grid's summary.

    Returns
    -------
    table : dict
        ``(λ, ω)`` to the crossover result.
    summary : dict
        ``violations``; ``cases``, ``cases-upper`` (``κ <= 1``), ``at-j`` (``i* = j``),
        ``proved-at-j``; ``eps-part2`` (the largest ``ω`` below which every case has ``κ <= 1``);
        ``kappa-small`` (the largest ``κ/(λω)`` at ``ω <= 10⁻⁶``).
    """
    table = {(lam, eps): tails.tail_crossover(lam, eps) for lam in lams for eps in eps_grid}
    cases = list(table.values())
    eps_all = max(e for e in eps_grid if all(table[lv, f]["kappa"] <= 1 for (lv, f) in table if f <= e))
    return table, {"violations": sum(crossover_violations(c, *k) for k, c in table.items()),
                   "cases": len(cases), "cases-upper": sum(c["kappa"] <= 1 for c in cases),
                   "at-j": sum(c["istar"] == c["j"] for c in cases),
                   "proved-at-j": sum(c["at_j"] for c in cases), "eps-part2": float(eps_all),
                   "kappa-small": float(max(c["kappa"] / (lv * f) for (lv, f), c in table.items()
                                            if f <= 1e-6))}


def plot_crossover(ax0, ax1, table: Mapping, eps_grid: Sequence[float], lams: Sequence[float] = (0.5, 0.9, 0.99),
                   shown: Sequence[float] = (1e-1, 1e-2, 1e-4, 1e-8)) -> None:
    """Left: ``log10 q*(i)`` for ``p_ω`` at ``λ = 0.9`` with the crossover level marked (dashed:
    ``ω = 0``). Right: ``i*`` (steps) against ``x(ω, λ)`` of the crossover proposition (lines)."""
    for eps, c in zip(shown, ("C0", "C1", "C2", "C3")):
        cx = tails.tail_crossover(0.9, eps)
        istar, q = cx["istar"], cx["q"]
        lev = np.arange(1, min(len(q), 13))
        ax0.plot(lev, np.log10(q[lev]), "o-", ms=3, color=c, label=rf"$\omega = 10^{{{round(math.log10(eps))}}}$")
        ax0.plot(istar, math.log10(q[istar]), "s", ms=9, mfc="none", color=c)
    lev = np.arange(1, 7)
    ax0.plot(lev, (3.0**lev - 1) / 2 * math.log10(0.9), "k--", label=r"$\omega = 0$")
    ax0.set(xlabel="level $i$", ylabel=r"$\log_{10} q^\star(i)$", ylim=(-60, 1))
    ax0.legend(fontsize=8)
    e = np.array(eps_grid)
    ee = np.logspace(-1, -12, 200)
    for lam, c in zip(lams, ("C0", "C1", "C2")):
        ax1.step(-np.log10(e), [table[lam, v]["istar"] for v in e], where="mid", color=c,
                 label=rf"$i^\star$, $\lambda={lam}$")
        ax1.plot(-np.log10(ee), np.log1p(np.log((1 - ee) / ee) / math.log(1 / lam)) / math.log(3), ":", color=c)
    ax1.set(xlabel=r"$\log_{10}(1/\omega)$", ylabel="level")
    ax1.legend(fontsize=8)


def log_ratio(cell: tuple, ia: int, ib: int, lam: float, n: int) -> dict:
    """The simulated tail's log-ratio per level between levels ``ia`` and ``ib`` of one cell,
    against that of ``q*(p_n)``, and the refined mean field's shift of it.

    Parameters
    ----------
    cell : (DegreeDistribution, numpy.ndarray, replicated run)
        The graph's degree law ``p_n``, its ``q*`` and the runs.
    ia, ib : int
        The two levels.
    lam : float
    n : int

    Returns
    -------
    dict
        ``theta`` (the estimate), ``z`` (its per-replication delta-method terms), ``se``,
        ``target`` (that of ``q*``), ``shift`` (``|1/n|`` correction to the target, at the deepest
        level ``<= ib`` with ``n q* >= 10``).
    """
    pn, q, rep = cell
    X = np.array([[r.occupancy[ia], r.occupancy[ib]] for r in rep.results])
    theta = float(np.diff(np.log(X.mean(axis=0)))[0] / (ib - ia))
    z = (X[:, 1] / X[:, 1].mean() - X[:, 0] / X[:, 0].mean()) / (ib - ia)   # delta method, per replication
    ic = min(ib, int(np.nonzero(n * q >= 10)[0][-1]))             # expansion parameter 1/(n q*) <= 0.1
    v = np.pad(refined(lam, pn).v, (0, ic + 1))[: ic + 1] / (n * q[: ic + 1])
    return {"theta": theta, "z": z, "se": float(stats.replication_ci(z).se),
            "target": float(math.log(q[ib] / q[ia]) / (ib - ia)),
            "shift": abs(float((math.log1p(v[ic]) - math.log1p(v[ia])) / (ic - ia)))}


def plot_simulated(ax, sims: Mapping, resolved: Mapping, lam: float) -> None:
    """Simulated stationary occupancy with 95 % intervals (filled: resolved levels; open: the
    rest), ``q*(p_n)`` (line) and the bounds of the tails proposition (shaded), per cell."""
    for (name, (pn, q, rep)), c in zip(sims.items(), ("C0", "C1")):
        lev = np.arange(1, min(len(rep.occupancy), len(q)))
        lo, up = tails.tail_bounds(lam, pn, lev)
        ax.fill_between(lev, lo, up, color=c, alpha=0.2)
        ax.plot(lev, q[lev], "-", color=c, label=rf"$q^\star$, {name}")
        est, hw = rep.occupancy[lev], rep.occupancy_ci[1][lev] - rep.occupancy[lev]
        ok = lev <= resolved[name]
        ax.errorbar(lev[ok], est[ok], yerr=hw[ok], fmt="o", ms=4, color=c, label=f"simulation, {name}")
        pos = (~ok) & (est > 0)
        ax.plot(lev[pos], est[pos], "o", mfc="none", ms=4, color=c)
    ax.set(yscale="log", xlabel="level $i$", ylabel="fraction of servers with $\\geq i$ tasks", ylim=(1e-7, 1.5))
    ax.legend(fontsize=8)
