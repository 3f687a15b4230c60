"""Support code of ``chapters/super_hw.md``: JSQ in the super-Halfin–Whitt window.

Load ``λ_n/n = 1 − β n^{−a}``, ``a ∈ (½, 1)``: the Halfin–Whitt chain at the
effective ``β_eff = β n^{½−a}``.  The exact values are stored by
``benchmarks/bench_super_hw.py`` in ``benchmarks/super_hw_chain.json`` (keys
``"a/β/n"``); this module scales them, measures their approach to the
Gamma(2, β) limit of Zhao, Banerjee and Mukherjee, and draws the figures.
"""
from __future__ import annotations

import json
import math
import pathlib
from dataclasses import dataclass

import numpy as np

__all__ = ["QUANTITIES", "LABELS", "effective_beta", "gamma_limits", "bench_json", "scaled",
           "scaled_table", "RateFit", "fit_rate", "plot_law", "plot_approach", "law_distance",
           "top_row", "values_markdown", "rates_markdown", "link_rows", "identity_gap", "resolve_small",
           "predicted_exponents", "alpha_summary", "reach", "sim_compare", "sim_markdown"]

#: The scaled quantities, each with the limit ``gamma_limits`` gives.
QUANTITIES = ("mean_s", "var_s", "mean_q2", "pwait")
#: Their names in the chapter's tables.
LABELS = {"mean_s": "E[(S−n)/n^a]", "var_s": "Var[(S−n)/n^a]", "mean_q2": "E[Q₂]/n^a",
          "pwait": "n^(1−a) P(wait)"}


def _check(alpha: float, beta: float) -> None:
    if not 0.5 < alpha < 1:
        raise ValueError(f"alpha must be in (0.5, 1), got {alpha}")
    if not beta > 0:
        raise ValueError(f"beta must be > 0, got {beta}")


def effective_beta(n: float, alpha: float, beta: float) -> float:
    """The Halfin–Whitt parameter of the same load, ``β n^{½−a}``.

    Examples
    --------
    >>> round(effective_beta(10_000, 0.75, 1.0), 3)
    0.1
    """
    _check(alpha, beta)
    if not n >= 1:
        raise ValueError(f"n must be >= 1, got {n}")
    return beta * n ** (0.5 - alpha)


def gamma_limits(beta: float) -> dict[str, float]:
    """The limits of the four scaled quantities: Gamma(2, β) has mean ``2/β``
    and variance ``2/β²``; ``Q_2/n^a`` has the limit of ``(S − n)/n^a`` and
    ``n^{1−a} P(wait) = (n/λ_n) E[Q_2]/n^a`` the same mean.

    Examples
    --------
    >>> gamma_limits(2.0)
    {'mean_s': 1.0, 'var_s': 0.5, 'mean_q2': 1.0, 'pwait': 1.0}
    """
    _check(0.75, beta)
    return {"mean_s": 2 / beta, "var_s": 2 / beta ** 2, "mean_q2": 2 / beta, "pwait": 2 / beta}


def bench_json(name: str) -> dict:
    """``benchmarks/<name>`` as a dict (``{}`` if absent)."""
    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / name
    return json.loads(path.read_text()) if path.exists() else {}


def scaled(row: dict, n: int, alpha: float) -> dict[str, float]:
    """The four scaled quantities of one stored chain row, and their error
    estimates (``err_<name>``).

    ``S − n = N − n``; its variance is read from the law where the solver
    kept it (``var_tasks``), else from ``n^{1−2a}(Var X_1 + Var X_2 + 2 Cov)``,
    exact where no server holds three tasks (``E[Q_3] = 0``; NaN otherwise).

    Examples
    --------
    >>> row = {"mean_tasks": 1010.0, "mean_q2": 20.0, "mean_q3": 0.0, "p_wait": 0.02,
    ...        "var_x1": 0.5, "var_x2": 1.0, "cov_x1x2": 0.25, "err": {}}
    >>> round(scaled(row, 1000, 0.5 + 1e-9)["mean_s"], 6)
    0.316228
    """
    s = n ** alpha
    var = row.get("var_tasks")
    if var is None:
        var = n * (row["var_x1"] + row["var_x2"] + 2 * row["cov_x1x2"]) if row["mean_q3"] == 0 else math.nan
    err = row.get("err", {})
    out = {"mean_s": (row["mean_tasks"] - n) / s, "var_s": var / s ** 2,
           "mean_q2": row["mean_q2"] / s, "pwait": n ** (1 - alpha) * row["p_wait"]}
    out.update({"err_mean_s": err.get("mean_tasks", 0.0) / s,
                "err_var_s": n * sum(err.get(k, 0.0) for k in ("var_x1", "var_x2", "cov_x1x2")) * 2 / s ** 2,
                "err_mean_q2": err.get("mean_q2", 0.0) / s,
                "err_pwait": n ** (1 - alpha) * err.get("p_wait", 0.0)})
    return out


def scaled_table(chain: dict, alpha: float, beta: float):
    """A DataFrame indexed by ``n``: the scaled quantities of every solved
    ``(a, β, n)``, their relative gaps to the limit (``gap_<name>``), the
    effective β, the solver's method and wall time."""
    import pandas as pd

    rows = []
    lim = gamma_limits(beta)
    for key, row in chain.items():
        if key.startswith("_") or "mean_tasks" not in row:
            continue
        a, b, n = key.split("/")
        if float(a) != alpha or float(b) != beta:
            continue
        n = int(n)
        r = scaled(row, n, alpha)
        r.update({f"gap_{q}": r[q] / lim[q] - 1 for q in QUANTITIES})
        r.update(n=n, beta_eff=row["beta_eff"], method=row["method"], wall=row["wall"])
        rows.append(r)
    return pd.DataFrame(rows).set_index("n").sort_index() if rows else pd.DataFrame()


@dataclass(frozen=True)
class RateFit:
    """``|y_n/y_∞ − 1| ≈ A n^{−p}``: least squares of ``log|gap|`` on ``log n``.

    ``p_err`` is the largest distance of a local exponent (through two
    consecutive ``n``) from ``p``: the part of the rate the data do not fix
    (an exponent still drifting shows here, not in a regression s.e.).
    """

    p: float
    p_err: float
    amplitude: float
    local: np.ndarray
    ns: np.ndarray


def fit_rate(ns, gaps) -> RateFit:
    """Fit ``|gap_n| = A n^{−p}`` (see :class:`RateFit`).

    Examples
    --------
    >>> f = fit_rate([1e3, 1e4, 1e5], [0.5, 0.25, 0.125])
    >>> round(f.p, 4), round(f.p_err, 4)
    (0.301, 0.0)
    """
    ns, g = np.asarray(ns, float), np.abs(np.asarray(gaps, float))
    if ns.size < 2 or np.any(g <= 0):
        raise ValueError("fit_rate needs at least two n and nonzero gaps")
    slope, icpt = np.polyfit(np.log(ns), np.log(g), 1)
    local = -np.diff(np.log(g)) / np.diff(np.log(ns))
    return RateFit(p=float(-slope), p_err=float(np.max(np.abs(local + slope))),
                   amplitude=float(np.exp(icpt)), local=local, ns=ns)


def law_distance(row: dict, beta: float) -> float:
    """Kolmogorov distance between the stored distribution function of
    ``Q_2/n^a`` (on its grid) and that of Gamma(2, β)."""
    x, F = np.asarray(row["cdf_x"]), np.asarray(row["cdf_q2"])
    G = 1 - np.exp(-beta * x) * (1 + beta * x)
    return float(np.max(np.abs(F - G)))


def plot_law(plt, chain: dict, alpha: float, beta: float, ns, *, every: int = 4, ax=None):
    """The density of ``Q_2/n^a`` (the stored distribution function,
    differenced on every ``every``-th grid point, so that a bin holds several
    integer values of ``Q_2`` even at small ``n``) at several ``n`` against
    the Gamma(2, β) density, on ``ax`` (a new figure if None)."""
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.4, 3.8))
    fig = ax.figure
    for n in ns:
        row = chain[f"{alpha}/{beta}/{n}"]
        x, F = np.asarray(row["cdf_x"])[::every], np.asarray(row["cdf_q2"])[::every]
        ax.step(x[1:], np.diff(F) / np.diff(x), where="pre", lw=1, label=f"n = {n:,}")
    xs = np.linspace(0, x[-1], 400)
    ax.plot(xs, beta ** 2 * xs * np.exp(-beta * xs), "k--", lw=1.5, label=f"Gamma(2, {beta:g})")
    ax.set(xlabel=r"$x = Q_2/n^{a}$", ylabel="density", xlim=(0, 8 / beta), title=f"a = {alpha:g}, β = {beta:g}")
    ax.legend(fontsize=8)
    return fig


def plot_approach(plt, tables: dict, quantities=("mean_q2", "mean_s", "var_s")):
    """Relative gap to the Gamma limit against ``n`` (log-log), one panel per
    quantity, one line per ``(a, β)`` of ``tables``."""
    fig, axes = plt.subplots(1, len(quantities), figsize=(4 * len(quantities), 3.6), sharey=True)
    for ax, q in zip(axes, quantities):
        for (alpha, beta), df in tables.items():
            if df.empty:
                continue
            ls = "-" if alpha == 0.6 else "--"
            ax.loglog(df.index, np.abs(df[f"gap_{q}"]), ls, marker="o", ms=3, label=f"a = {alpha:g}, β = {beta:g}")
        ax.set(xlabel="n", title=LABELS[q], xscale="log", yscale="log")
    axes[0].set_ylabel("relative gap")
    axes[0].legend(fontsize=7)
    return fig


def top_row(tables: dict, alpha: float, beta: float) -> tuple[int, float, float]:
    """``(n, E[(S − n)/n^a], relative gap)`` at the largest ``n`` solved."""
    df = tables[alpha, beta]
    n = int(df.index.max())
    return n, float(df.loc[n, "mean_s"]), float(df.loc[n, "gap_mean_s"])


def values_markdown(tables: dict) -> str:
    """Markdown table of the scaled values with their relative gaps."""
    head = "| a | β | n | β_eff | " + " | ".join(LABELS[q] for q in QUANTITIES) + " |"
    lines = [head, "|" + "---|" * (4 + len(QUANTITIES))]
    for (alpha, beta), df in tables.items():
        lim = gamma_limits(beta)
        for n, r in df.iterrows():
            cells = [f"{r[q]:.4f} ({r[q] / lim[q] - 1:+.1%})" if np.isfinite(r[q]) else "–"
                     for q in QUANTITIES]
            lines.append(f"| {alpha:g} | {beta:g} | {n:,} | {r['beta_eff']:.3f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def rates_markdown(fits: dict, predicted: dict | None = None) -> str:
    """Markdown table of fitted rates ``(a, β, quantity) → RateFit``, with the
    local exponents the Halfin–Whitt limit at ``β_eff`` predicts where given
    (``predicted[(a, β)]``, for ``E[Q_2]/n^a``)."""
    predicted = predicted or {}
    lines = ["| a | β | quantity | n solved | p | ± | local exponents | predicted (HW limit at β_eff) | a − ½ |",
             "|---|---|---|---|---|---|---|---|---|"]
    for (alpha, beta, q), f in fits.items():
        loc = ", ".join(f"{p:.3f}" for p in f.local)
        pred = predicted.get((alpha, beta)) if q == "mean_q2" else None
        pred = "–" if pred is None else ", ".join(f"{p:.3f}" for p in pred)
        lines.append(f"| {alpha:g} | {beta:g} | {LABELS[q]} | {int(f.ns[0]):,}–{int(f.ns[-1]):,} | "
                     f"{f.p:.3f} | {f.p_err:.3f} | {loc} | {pred} | {alpha - 0.5:.2f} |")
    return "\n".join(lines)


def predicted_exponents(df, bc) -> np.ndarray:
    """Local exponents of ``|β_eff c(β_eff)/2 − 1|`` between consecutive ``n`` of
    a table (``bc`` gives ``β c(β)``): the rate of ``E[Q_2]/n^a`` if the chain
    sat at its Halfin–Whitt limit at ``β_eff``."""
    g = np.abs(np.array([bc(b) / 2 - 1 for b in df["beta_eff"]]))
    return -np.diff(np.log(g)) / np.diff(np.log(np.asarray(df.index, float)))


def link_rows(chain: dict, bc, *, min_beta: float = 0.3):
    """The effective-β link on every stored row with ``β_eff >= min_beta``:
    the chain's ``β E[Q_2]/n^a``, the Halfin–Whitt limit ``bc(β_eff)`` (a
    callable giving ``β c(β)``), and ``share = |chain − limit| / |chain − 2|``."""
    import pandas as pd

    rows = []
    for key, row in chain.items():
        if key.startswith("_") or "mean_q2" not in row or row["beta_eff"] < min_beta:
            continue
        a, b, n = key.split("/")
        alpha, beta, n = float(a), float(b), int(n)
        y = beta * row["mean_q2"] / n ** alpha
        lim = bc(row["beta_eff"])
        rows.append({"a": alpha, "β": beta, "n": n, "β_eff": row["beta_eff"], "chain": y,
                     "β_eff c(β_eff)": lim, "share": abs(y - lim) / abs(y - 2)})
    return pd.DataFrame(rows).sort_values(["a", "β", "n"]) if rows else pd.DataFrame(rows)


def identity_gap(chain: dict) -> float:
    """The largest ``|λ_n P(wait) − E[Q_2]|`` over its error estimate in the stored rows
    where no server holds three tasks (``E[Q_3] = 0``), and ``|E[I] − β_eff √n|`` likewise: rate
    balance, which the solver does not build in."""
    worst = 0.0
    for key, row in chain.items():
        if key.startswith("_") or "mean_q2" not in row:
            continue
        n = int(key.split("/")[2])
        lam = n - row["beta_eff"] * math.sqrt(n)
        e = row["err"]
        scale = 1e-12 * row["mean_q2"]          # the sums' rounding
        if row["mean_q3"] == 0:
            worst = max(worst, abs(lam * row["p_wait"] - row["mean_q2"])
                        / (lam * e["p_wait"] + e["mean_q2"] + scale))
        # the truncated chain blocks some arrivals: E[I] − β√n = λ·blocked <= λ·truncated mass
        worst = max(worst, abs(row["mean_idle"] - row["beta_eff"] * math.sqrt(n))
                    / (e["mean_idle"] + lam * row["truncated_mass"] + 1e-12 * row["mean_idle"]))
    return worst


def resolve_small(chain: dict, n_max: int) -> float:
    """Solve every stored row with ``n <= n_max`` again; the largest shift of
    ``E[N]`` over its error estimate (plus the sum's rounding)."""
    from qlib.halfin_whitt import stationary_jsq

    worst = 0.0
    for key, row in chain.items():
        if key.startswith("_") or "mean_tasks" not in row or int(key.split("/")[2]) > n_max:
            continue
        n = int(key.split("/")[2])
        st = stationary_jsq(n, row["beta_eff"], tol=row["tol"], fallback=False)
        tol = row["err"]["mean_tasks"] + float(st.error_estimates["mean_tasks"]) + 1e-12 * n
        worst = max(worst, abs(st.mean_tasks - row["mean_tasks"]) / tol)
    return worst


def alpha_summary(tables: dict, fits: dict, alpha: float, beta: float = 1.0) -> str:
    """One sentence on what the chain reached at ``alpha`` (for the prose)."""
    df = tables.get((alpha, beta))
    if df is None or df.empty:
        return (f"At a = {alpha:g}, β = {beta:g} the solver this chapter's rows were computed "
                "with reached no n, so there is no rate to fit.")
    f = fits.get((alpha, beta, "mean_q2"))
    n_max, gap = int(df.index.max()), float(df["gap_mean_q2"].iloc[-1])
    head = (f"At a = {alpha:g}, β = {beta:g} the chain was solved for {len(df)} values of n up to "
            f"{n_max:,}, where E[Q₂]/n^a is {-gap:.0%} short of its limit")
    if f is None:
        return head + "; too few points for a rate."
    return head + (f"; its gap falls like n^(−p), p = {f.p:.3f} ± {f.p_err:.3f}, "
                   f"against a − ½ = {alpha - 0.5:.2f}.")


def _why(msg: str) -> str:
    """The need and the limit out of the last complete refusal of the solver
    in ``msg`` (refusals joined by ``" | "``), or the message itself.

    Examples
    --------
    >>> _why("tol 1e-06: stationary_jsq(n = 9) needs 2e+09 states, about 1 GB and 900 s of CPU "
    ...      "(10 Q_3 sectors of up to 3e+06 states predicted): above max_seconds = 60; raise it")
    'tol 1e-06: 10 Q₃ sectors, 2e+09 states, 900 s of CPU predicted (above max_seconds)'
    """
    import re

    for part in reversed(msg.split(" | ")):
        m = re.search(r"(tol [0-9e.+-]+): .*?needs (.*?): above (\w+)", part)
        if m:
            need = m.group(2)
            states = re.search(r"([0-9.e+]+) states", need)
            cpu = re.search(r"([0-9.e+]+) s of CPU", need)
            sect = re.search(r"\((\d+) Q_3 sectors", need)
            what = f"{sect.group(1)} Q₃ sectors" if sect else "one sector"
            return (f"{m.group(1)}: {what}, {states.group(1) if states else '?'} states, "
                    f"{cpu.group(1) if cpu else '?'} s of CPU predicted (above {m.group(3)})")
        m = re.search(r"(tol [0-9e.+-]+): the solve is not finite", part)
        if m:
            return f"{m.group(1)}: the Q₃ sectors lost their precision"
        m = re.search(r"CPU limit: the solve was stopped at (\d+) s", part)
        if m:
            return f"stopped at the cap of {m.group(1)} s of CPU"
    return msg[:160]


def reach(chain: dict, alphas, betas, ns):
    """What the stored rows do not give: a DataFrame of the grid's rows that
    are missing or solved at a looser ``tol`` than the first tried, with the
    reason (the solver's refusal: states, bytes, CPU and ``Q_3`` sectors
    predicted, and the limit exceeded; or the CPU cap of the run)."""
    import pandas as pd

    rows = []
    for a in alphas:
        for b in betas:
            for n in ns:
                row = chain.get(f"{a}/{b}/{n}")
                if row is None:
                    rows.append({"a": a, "β": b, "n": n, "stored": "not run", "why": ""})
                elif "mean_tasks" not in row:
                    rows.append({"a": a, "β": b, "n": n, "stored": "refused",
                                 "why": _why(row.get("error", ""))})
                elif row.get("refused"):
                    rows.append({"a": a, "β": b, "n": n, "stored": f"tol {row['tol']:g}",
                                 "why": _why(" | ".join(row["refused"]))})
    return pd.DataFrame(rows, columns=["a", "β", "n", "stored", "why"])


def sim_compare(sim: dict, chain: dict, alpha: float = 0.75, beta: float = 2.0):
    """Independent replications of ``simulate_jsq`` against the exact chain at
    each ``n`` stored in both: a DataFrame indexed by ``n`` with the
    replications, the window (units of ``n^{2a−1}``), the mean of
    ``(S − n)/n^a`` over the replications with its standard error
    (Student-t, ``reps − 1`` degrees of freedom), the chain's value, their
    difference and ``t = difference / se``.

    Examples
    --------
    >>> sim = {"0.75/2.0/1000": {"window_units": 4.0, "rows": [{"s": 0.6}, {"s": 0.7}, {"s": 0.8}]}}
    >>> chain = {"0.75/2.0/1000": {"mean_tasks": 1000 + 0.7 * 1000 ** 0.75, "mean_q2": 1.0,
    ...          "mean_q3": 0.0, "p_wait": 0.1, "var_x1": 0, "var_x2": 0, "cov_x1x2": 0}}
    >>> round(float(sim_compare(sim, chain).loc[1000, "t"]), 9)
    0.0
    """
    import pandas as pd
    from qlib import stats

    rows = []
    for key, run in sim.items():
        if key not in chain or "mean_tasks" not in chain[key]:
            continue
        a, b, n = key.split("/")
        if float(a) != alpha or float(b) != beta:
            continue
        n = int(n)
        ci = stats.replication_ci(np.array([r["s"] for r in run["rows"]]))
        exact = scaled(chain[key], n, alpha)["mean_s"]
        rows.append({"n": n, "reps": len(run["rows"]), "window": run["window_units"],
                     "mean": float(ci.mean), "se": float(ci.se), "exact": exact,
                     "diff": float(ci.mean) - exact, "t": (float(ci.mean) - exact) / float(ci.se)})
    return pd.DataFrame(rows).set_index("n").sort_index() if rows else pd.DataFrame()


def sim_markdown(cmp) -> str:
    """Markdown table of :func:`sim_compare`."""
    lines = ["| n | replications | window | simulated E[(S−n)/n^a] | exact chain | difference / s.e. |",
             "|---|---|---|---|---|---|"]
    for n, r in cmp.iterrows():
        lines.append(f"| {n:,} | {int(r['reps'])} | {r['window']:g} | {r['mean']:.3f} ± {r['se']:.3f} | "
                     f"{r['exact']:.3f} | {r['t']:+.2f} |")
    return "\n".join(lines)
