"""The mechanics of ``chapters/equilibrium.md``: the table of fluid response times and the
chapter's figures (the cobweb, the brackets, the decay to ``q*``, the simulated slow mode).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from qlib.meanfield import fluid

__all__ = ["response_table", "plot_cobweb", "plot_brackets", "plot_decay", "plot_sim_rate"]


def response_table(laws: Mapping, lams: Sequence[float]) -> tuple[dict, str]:
    """The fluid mean response time ``R*`` of each law at each load.

    Parameters
    ----------
    laws : mapping
        Row label to degree law.
    lams : sequence of float
        The loads (columns).

    Returns
    -------
    R : dict
        ``(label, λ)`` to ``R*``.
    table : str
        A Markdown table, five decimals.

    Examples
    --------
    >>> from qlib import DegreeDistribution
    >>> R, md = response_table({"δ0": DegreeDistribution.point(0)}, (0.5,))
    >>> round(R["δ0", 0.5], 12)
    2.0
    """
    R = {(name, lam): fluid.response_time(lam, p) for name, p in laws.items() for lam in lams}
    rows = ["| law | " + " | ".join(f"$\\lambda = {lam}$" for lam in lams) + " |",
            "|---" * (len(lams) + 1) + "|"]
    rows += [f"| {name} | " + " | ".join(f"{R[name, lam]:.5f}" for lam in lams) + " |" for name in laws]
    return R, "\n".join(rows)


def plot_cobweb(axes, laws: Sequence[tuple[str, object, str]], lam: float = 0.9, steps: int = 15) -> None:
    """The cobweb of ``F(x) = λ x φ(x)`` from ``x = 1`` for each law (one axis each), and the
    resulting ``q*(i)`` on a log scale in the last axis.

    Parameters
    ----------
    axes : sequence of matplotlib.axes.Axes
        One per law, and one more.
    laws : sequence of (label, DegreeDistribution, colour)
    lam : float
    steps : int
        The steps of the cobweb drawn.
    """
    xs = np.linspace(0, 1, 400)
    for ax, (name, p, c) in zip(axes, laws):
        qs = fluid.equilibrium(lam, p, tol=1e-300)
        ax.plot(xs, xs, color="grey", lw=0.8)
        ax.plot(xs, lam * xs * p.pgf(xs), color=c, label="$F(x)$")
        web = np.repeat(qs[:steps], 2)                      # (q_j, q_j) -> (q_j, q_{j+1}) -> ...
        ax.plot(web[:-1], web[1:], "k-", lw=0.7)
        ax.set(xlabel="$x$", ylabel="$F(x)$", title=name, xlim=(0, 1), ylim=(0, 1))
        axes[-1].semilogy(np.arange(qs.size), qs, "o-", ms=3, color=c, label=name)
    axes[-1].set(xlabel="level $i$", ylabel="$q^\\star(i)$", xlim=(0, 30), ylim=(1e-30, 2))
    axes[-1].legend(fontsize=8)


def plot_brackets(axes, bracket, starts: Mapping, t: np.ndarray, levels: Sequence[int] = (1, 2, 3),
                  xmax: float = 80) -> None:
    """The fluid ODE's solutions at ``levels`` (one axis each): the other starts (colours)
    between the solutions from ``e`` (black) and the upper start (black dashed), and ``q*`` (grey).

    Parameters
    ----------
    axes : sequence of matplotlib.axes.Axes
    bracket : the :func:`qlib.meanfield.attraction.brackets` result of one law
    starts : mapping
        The law's starts by name (the first, the empty start, drawn in black).
    t : numpy.ndarray
        The times of the solutions.
    levels : sequence of int
    xmax : float
        The time axis' end.
    """
    sols, qs = bracket.solutions, bracket.q_star
    for lv, ax in zip(levels, axes):
        for c, start in enumerate(list(starts)[1:], 1):
            ax.plot(t, sols[start][:, lv], color=f"C{c}", lw=1, label=start)
        ax.plot(t, sols["empty"][:, lv], "k", t, sols["upper"][:, lv], "k--")
        ax.axhline(qs[lv], color="grey", lw=0.8)
        ax.set(xlim=(0, xmax), xlabel="t", ylabel=f"q(t, {lv})")
    axes[0].legend(fontsize=7)


def plot_decay(axes, decay: Mapping, starts: Mapping, t: np.ndarray) -> None:
    """The distance ``max_i |q(t, i) − q*(i)|`` per law (one axis each) and start (colours), with
    the slope ``−γ`` (grey dashed).

    Parameters
    ----------
    axes : sequence of matplotlib.axes.Axes
    decay : mapping
        ``(law, start)`` to its :func:`qlib.meanfield.attraction.slow_decay` result.
    starts : mapping
        Law to its starts by name.
    t : numpy.ndarray
    """
    for ax, name in zip(axes, starts):
        for c, start in enumerate(starts[name]):
            ax.semilogy(t, decay[name, start].error, color=f"C{c}", label=start)
        γ = decay[name, "empty"].gamma
        ax.semilogy(t, 10 * np.exp(-γ * (t - 60)), "--", color="grey")
        ax.set(title=f"{name}, γ = {γ:.3f}", xlabel="t", ylim=(1e-13, 10))
    axes[0].set(ylabel="max error")
    axes[0].legend(fontsize=7)


def plot_sim_rate(ax, times: np.ndarray, Z: np.ndarray, ode_z: np.ndarray, gamma: float,
                  window: tuple[float, float]) -> None:
    """``|z(t)|`` of the runs (thin), their mean (thick), the fluid ODE (black dashed) and the
    slope ``−γ`` (grey), the fitting window shaded.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    times : numpy.ndarray
    Z : numpy.ndarray
        The runs' projections, one row per run.
    ode_z : numpy.ndarray
        The ODE's projection.
    gamma : float
    window : (float, float)
    """
    ax.semilogy(times, np.abs(Z.T), color="C0", lw=0.4, alpha=0.4)
    ax.semilogy(times, np.abs(Z.mean(axis=0)), color="C0", lw=2, label="simulation, mean")
    ax.semilogy(times, np.abs(ode_z), "k--", label="fluid ODE")
    ax.semilogy(times, abs(ode_z[0]) * np.exp(-gamma * times), color="grey", label="slope −γ")
    ax.axvspan(*window, color="0.9")
    ax.set(xlabel="t", ylabel="|z(t)|", ylim=(3e-3, 0.5))
    ax.legend(fontsize=8)
