"""The Halfin–Whitt constants table of ``chapters/ht_stationary.md``: the
exact chain's values extrapolated in ``n^{−1/2}`` by a rule fixed in advance,
and its comparison with the grid solution of the diffusion.

The extrapolation rule (issue 33; fixed before the comparison with the grid):
for each constant, least-squares quadratics in ``x = n^{−1/2}`` on the windows
``n >= n₀``, ``n₀ ∈`` :data:`~qbook.ht_constants.WINDOWS`; the estimate is the intercept of the
last window, the error the spread of the intercepts plus the points'
truncation errors through the fit weights (:func:`~qbook.ht_constants.extrapolate_windows`).  A
constant counts as *pinned* by the chain when its local exponents have
settled at ``½`` (:func:`~qbook.ht_constants.settled`).

The benchmark files are ``benchmarks/ht_chain.json`` (tol ``1e-10``),
``benchmarks/ht_chain_tight.json`` (tol ``1e-12``, large ``n``) and
``benchmarks/ht_grid.json``, written by ``benchmarks/bench_ht_constants.py``.
"""
from __future__ import annotations

import json
import math
import numbers
import pathlib
from dataclasses import dataclass

import numpy as np

from qlib.halfin_whitt.stationary import CONSTANTS, _points, intercept_weights, local_exponents
from typing import TYPE_CHECKING
if TYPE_CHECKING:   # names for the annotations only
    from collections.abc import Iterable
    from collections.abc import Mapping
    from collections.abc import Sequence
    from numpy.typing import ArrayLike
    from qlib._types import Seed
    from qlib.halfin_whitt.chain import StationaryJSQ
    from qlib.halfin_whitt.stationary import OUGrid

__all__ = ["WINDOWS", "GRID_NAME", "settled", "extrapolate_windows", "WindowedExtrapolation",
           "stationary_start", "bench_json", "chain_points", "tight_covers", "chain_extrapolations",
           "chain_grid_ratios", "tight_shifts", "grid_coarse_fine", "grid_identities",
           "ks_to_grid", "table_cell", "stationary_replications", "common_window_shift",
           "LARGE_NS", "LARGE_WINDOWS", "chain_row", "large_extrapolations", "identity_gaps",
           "large_table"]

#: The diffusion moment (name in :class:`~qlib.halfin_whitt.stationary.OUStationary`)
#: that is the limit of each of :data:`~qlib.halfin_whitt.stationary.CONSTANTS`.
GRID_NAME = dict(zip(CONSTANTS, ("mean_x2", "mean_x2", "var_x1", "mean_x1x2")))


def settled(exponents: ArrayLike, rate: float = 0.5, *, last: int = 3, tol: float = 0.1) -> bool:
    """Whether a sequence of local exponents has settled at ``rate``: its
    ``last`` values are within ``tol`` of ``rate`` and none is farther from it
    than the one before (a monotone approach).  A rate ``n^{−1}`` or
    ``n^{−1/4}``, or exponents that turn away from ``rate``, fail."""
    p = np.asarray(exponents, dtype=float)[-last:]
    dist = np.abs(p - rate)
    return bool(p.size == last and np.all(np.isfinite(p)) and np.all(dist <= tol)
                and np.all(np.diff(dist) <= 0))


#: The fit windows ``n >= n₀`` of :func:`~qbook.ht_constants.extrapolate_windows`, fixed before
#: the chain was compared with the grid (issue 33): the estimate is the
#: intercept of the last window, the others give the spread.
WINDOWS = (300, 500, 700, 1000)


@dataclass(frozen=True)
class WindowedExtrapolation:
    """Result of :func:`~qbook.ht_constants.extrapolate_windows`.

    ``n0s`` the windows used (``n >= n₀``), ``intercepts`` their intercepts,
    ``weight_sums`` their ``Σ |w_i|`` and ``truncation`` their ``Σ |w_i| e_i``;
    ``estimate`` the intercept of the last window, ``spread`` the largest
    distance of another window's intercept from it, ``error = spread +
    truncation[-1]``; ``exponents`` and ``exponent_n`` the local exponents of
    all points (:func:`~qlib.halfin_whitt.stationary.local_exponents`)."""

    estimate: float
    error: float
    spread: float
    n0s: tuple
    intercepts: np.ndarray
    weight_sums: np.ndarray
    truncation: np.ndarray
    exponents: np.ndarray
    exponent_n: np.ndarray


def extrapolate_windows(ns: ArrayLike, y: ArrayLike, err: ArrayLike | None = None, *,
                        n0s: Sequence[int] = WINDOWS, degree: int = 2,
                        min_points: int = 5) -> WindowedExtrapolation:
    """Extrapolate exact finite-``n`` values to ``n = ∞`` by least-squares
    polynomials in ``x = n^{−1/2}`` on the windows ``n >= n₀``.

    The rule is fixed in advance: the estimate is the intercept of the
    window with the largest ``n₀`` (the least biased), its error the spread of
    the intercepts over the windows plus the truncation error of the points
    carried through the fit weights, ``Σ |w_i| e_i`` (:func:`~qlib.halfin_whitt.stationary.intercept_weights`).
    The spread is an estimate of the bias that the polynomial leaves, not a
    bound: it is small when the windows agree.

    Parameters
    ----------
    ns : array_like of int
        At least 4 increasing values of ``n``.
    y, err : array_like
        The values at ``ns`` and their error bounds (NaN or missing: 0).
    n0s : sequence of int
        Window starts; a window with fewer than ``min_points`` points is left
        out, and at least two must remain.
    degree : int
        Degree of the polynomial.
    min_points : int
        Fewest points a window must hold, ``> degree``.

    Returns
    -------
    WindowedExtrapolation
    """
    ns, y, e = _points(ns, y, err)
    if min_points <= degree:
        raise ValueError(f"min_points must exceed degree = {degree}, got {min_points}")
    rows = []
    for n0 in sorted(n0s):
        sel = ns >= n0
        if sel.sum() >= min_points:
            w = intercept_weights(ns[sel], degree)
            rows.append((int(n0), float(w @ y[sel]), float(np.abs(w).sum()),
                         float(np.abs(w) @ e[sel])))
    if len(rows) < 2:
        raise ValueError(f"n0s must leave at least two windows of {min_points} points, got {n0s}")
    n0, a, ws, tr = (np.array(c) for c in zip(*rows))
    spread = float(np.max(np.abs(a[:-1] - a[-1])))
    p, pn = local_exponents(ns, y)
    return WindowedExtrapolation(estimate=float(a[-1]), error=spread + float(tr[-1]),
                                 spread=spread, n0s=tuple(int(v) for v in n0), intercepts=a,
                                 weight_sums=ws, truncation=tr, exponents=p, exponent_n=pn)


def stationary_start(st: StationaryJSQ,
                     seed: int | Sequence[np.random.SeedSequence]) -> list[list[int]]:
    """Occupancy vectors ``[Q_1, Q_2, …]`` drawn from the law ``st.pi`` on
    ``st.states`` of a :func:`qlib.halfin_whitt.stationary_jsq <qlib.halfin_whitt.chain.stationary_jsq>` result, one
    per child of ``numpy.random.SeedSequence(seed)``: starts of simulations
    that are stationary from time 0 (up to the truncation of ``st``).

    Parameters
    ----------
    st : StationaryJSQ
        Needs ``states`` (rows ``Q_1, Q_2, …``) and ``pi``.
    seed : int or sequence of numpy.random.SeedSequence
        One start per sequence (an int: a single start).

    Returns
    -------
    list of list of int
        Each with its trailing zeros dropped.
    """
    for name in ("states", "pi"):
        if not hasattr(st, name):
            raise TypeError(f"st must be a stationary_jsq result with .{name}")
    Q = np.asarray(st.states)
    pi = np.clip(np.asarray(st.pi, dtype=float), 0.0, None)
    pi = pi / pi.sum()
    seqs = [np.random.SeedSequence(seed)] if isinstance(seed, numbers.Integral) else list(seed)
    out = []
    for sq in seqs:
        row = Q[np.random.default_rng(sq).choice(pi.size, p=pi)]
        k = int(np.flatnonzero(row).max()) + 1 if row.any() else 1
        out.append([int(v) for v in row[:k]])
    return out


def bench_json(name: str) -> dict:
    """The stored benchmark ``benchmarks/<name>`` (next to the ``qlib``
    package) as a dict; ``{}`` when the file does not exist."""
    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / name
    return json.loads(path.read_text()) if path.exists() else {}


def chain_points(chain: Mapping, beta: float, key: str,
                 tight: Mapping | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(ns, y, err)`` of the constant ``key`` at ``beta`` from a stored
    chain file, the entries of ``tight`` (a finer solve) replacing those at
    the same ``n``.  Entries without values (the solver raised) are skipped."""
    if key not in CONSTANTS:
        raise ValueError(f"key must be one of {CONSTANTS}, got {key!r}")
    rows = {int(n): r for n, r in chain.get(str(beta), {}).items() if "c" in r}
    rows.update({int(n): r for n, r in (tight or {}).get(str(beta), {}).items() if "c" in r})
    ns = sorted(rows)
    return (np.array(ns), np.array([rows[n][key] for n in ns]),
            np.array([rows[n]["err"][key] for n in ns]))


def tight_covers(chain: Mapping, tight: Mapping | None, beta: float) -> bool:
    """Whether the finer solves ``tight`` hold every ``n >= WINDOWS[-1]`` of
    ``chain`` at ``beta`` (then they replace the whole estimate window; a
    window of mixed tolerances would put kinks into the local exponents)."""
    big = {n for n in chain_points(chain, beta, "c")[0] if n >= WINDOWS[-1]}
    have = {int(n) for n, r in (tight or {}).get(str(beta), {}).items() if "c" in r}
    return bool(big) and big <= have


def chain_extrapolations(chain: Mapping, betas: Iterable[float],
                         tight: Mapping | None = None) -> dict:
    """:func:`~qbook.ht_constants.extrapolate_windows` of every constant at every ``beta`` that
    has enough points, as a dict ``(beta, key) -> WindowedExtrapolation``;
    the finer solves ``tight`` are used at a ``beta`` only where they cover
    the estimate window (:func:`~qbook.ht_constants.tight_covers`)."""
    out = {}
    for b in betas:
        tt = tight if tight_covers(chain, tight, b) else None
        for k in CONSTANTS:
            ns, y, e = chain_points(chain, b, k, tt)
            if ns.size >= 4 and np.sum(ns >= WINDOWS[0]) >= 5:
                try:
                    out[b, k] = extrapolate_windows(ns, y, e)
                except ValueError:
                    continue
    return out


def chain_grid_ratios(extrap: Mapping, grid: Mapping) -> dict:
    """``(beta, key) -> (|chain − grid|, chain error + grid error)`` for each
    extrapolation; ``grid`` is the stored grid file (estimate, error)."""
    out = {}
    for (b, k), f in extrap.items():
        g = grid[str(b)]
        out[b, k] = (abs(f.estimate - g["estimate"][GRID_NAME[k]]),
                     f.error + g["error"][GRID_NAME[k]])
    return out


def tight_shifts(chain: Mapping, tight: Mapping,
                 beta: float) -> list[tuple[int, str, float, float]]:
    """For every ``n`` solved at both tolerances: ``(n, key, |v − v_tight|,
    err)`` with ``err`` the error bound the coarser solve reported."""
    rows = []
    for n, r in sorted(tight.get(str(beta), {}).items(), key=lambda kv: int(kv[0])):
        c = chain.get(str(beta), {}).get(n, {})
        if "c" in r and "c" in c:
            rows += [(int(n), k, abs(c[k] - r[k]), c["err"][k]) for k in CONSTANTS]
    return rows


def grid_coarse_fine(grid: Mapping, fine: Mapping, betas: Iterable[float]) -> float:
    """Largest ``|coarse − fine| / (sum of errors)`` of the grid
    extrapolations (``grid[b]``: OUStationary; ``fine``: the stored file)."""
    r = [abs(grid[b].estimate[m] - fine[str(b)]["estimate"][m])
         / (grid[b].error[m] + fine[str(b)]["error"][m])
         for b in betas for m in ("mean_x2", "var_x1", "mean_x1x2")]
    return float(max(r))


def grid_identities(fine: Mapping, betas: Iterable[float]) -> np.ndarray:
    """``|Var(X_1) − 1 + βE[X_2]/2|`` and ``|E[X_1X_2] + βE[X_2]/2|`` of the
    stored grid values over their error bounds, one row per ``beta``."""
    out = []
    for b in betas:
        e, r = fine[str(b)]["estimate"], fine[str(b)]["error"]
        half = b * e["mean_x2"] / 2
        out.append((abs(e["var_x1"] - 1 + half) / (r["var_x1"] + b * r["mean_x2"] / 2),
                    abs(e["mean_x1x2"] + half) / (r["mean_x1x2"] + b * r["mean_x2"] / 2)))
    return np.array(out)


def ks_to_grid(chain: Mapping, g: OUGrid, beta: float) -> dict[int, float]:
    """Kolmogorov distance between the stored law of ``Q_2/√n`` of the chain
    and the grid's ``X_2`` (an :class:`~qlib.halfin_whitt.stationary.OUGrid`), for every stored ``n``."""
    ks = {}
    for n, r in sorted(chain.get(str(beta), {}).items(), key=lambda kv: int(kv[0])):
        if "q2_pmf" in r:
            pmf = np.array(r["q2_pmf"])
            y = np.arange(pmf.size) / math.sqrt(int(n))
            ks[int(n)] = float(np.max(np.abs(np.cumsum(pmf) - g.cdf_x2(y))))
    return ks


def table_cell(v: float, e: float, note: str = "") -> str:
    """``'value ± error'`` with the error to two significant digits, and an
    optional note in parentheses."""
    d = max(0, 1 - int(math.floor(math.log10(e)))) if e > 0 else 6
    return f"{v:.{d}f} ± {e:.2g}" + (f" ({note})" if note else "")


def stationary_replications(st: StationaryJSQ, beta: float, reps: int, seed: Seed, *,
                            t_end: float) -> np.ndarray:
    """Independent runs of :func:`qlib.halfin_whitt.simulate_jsq <qlib.halfin_whitt.simulate.simulate_jsq>`, each
    started from a state drawn from the exact law ``st``
    (:func:`~qbook.ht_constants.stationary_start`), so stationary from time 0 with no burn-in.

    Returns
    -------
    numpy.ndarray
        One row per run: ``E[n − Q_1]/√n``, ``E[Q_2]/√n`` and ``√n P(wait)``
        (time averages over ``[0, t_end]``).
    """
    import warnings
    from qlib.halfin_whitt.simulate import simulate_jsq
    n = int(st.n)
    ss = np.random.SeedSequence(seed)
    run_seeds, start_seeds = ss.spawn(2)
    starts = stationary_start(st, start_seeds.spawn(reps))
    with warnings.catch_warnings():
        # each run's own batch-means s.e. is not used (the replications give it)
        warnings.filterwarnings("ignore", "standard errors unreliable", RuntimeWarning)
        runs = [simulate_jsq(n, beta, t_end=t_end, seed=s, initial=x0)
                for s, x0 in zip(run_seeds.spawn(reps), starts)]
    return np.array([(r.mean_idle, r.mean_q2, r.p_wait * n) for r in runs]) / math.sqrt(n)


def common_window_shift(chain: Mapping, tight: Mapping, beta: float, grid: Mapping) -> dict:
    """How the finer solves move the chain's extrapolation: the intercepts of
    the least-squares quadratic in ``n^{−1/2}`` through the ``n`` solved at
    both tolerances, from the coarse and from the fine values, and the grid's
    limit, per constant: ``key -> (coarse, fine, grid)``.  (A diagnostic on
    the common ``n``, not the rule of :func:`~qbook.ht_constants.extrapolate_windows`.)"""
    have = {int(n) for n, r in tight.get(str(beta), {}).items() if "c" in r}
    ns = np.array(sorted(have & {int(n) for n in chain.get(str(beta), {})}))
    if ns.size < 3:
        raise ValueError(f"need at least 3 n solved at both tolerances, got {ns.tolist()}")
    w = intercept_weights(ns)
    out = {}
    for k in CONSTANTS:
        yc = np.array([chain[str(beta)][str(n)][k] for n in ns])
        yt = np.array([tight[str(beta)][str(n)][k] for n in ns])
        out[k] = (float(w @ yc), float(w @ yt), float(grid[str(beta)]["estimate"][GRID_NAME[k]]))
    return out


#: The ``n`` of the exact chain beyond the main sequence (``benchmarks/ht_chain_large.json``)
#: and the fit windows ``n >= n₀`` of :func:`~qbook.ht_constants.large_extrapolations`, fixed
#: before the large-``n`` values were compared with the grid.
LARGE_NS = (8000, 16000, 32000, 64000, 125_000, 250_000, 500_000, 1_000_000)
LARGE_WINDOWS = (1000, 4000, 16000, 64000)


def chain_row(n: int, beta: float, **kw) -> dict:
    """One stored row of the exact chain: :func:`~qlib.halfin_whitt.stationary.chain_constants`
    of :func:`qlib.halfin_whitt.stationary_jsq <qlib.halfin_whitt.chain.stationary_jsq>` at ``(n, beta)`` (keyword
    arguments passed on) without the law of ``Q_2``, with the certified and the
    estimated truncated mass, the identity gap ``λ P(wait) − E[Q_2]`` and the
    CPU and wall seconds.

    Examples
    --------
    >>> r = chain_row(400, 1.0)
    >>> sorted(k for k in r if k in ("c", "q2", "identity_gap"))
    ['c', 'identity_gap', 'q2']
    """
    import time
    from qlib.halfin_whitt import SOLVER_VERSION, stationary_jsq
    from qlib.halfin_whitt.stationary import chain_constants
    c0, w0 = time.process_time(), time.perf_counter()
    st = stationary_jsq(n, beta, **kw)
    row = chain_constants(st)
    row.pop("q2_pmf")
    row.update(mass_bound=float(st.mass_bound), mass_tail=float(st.mass_tail),
               identity_gap=float(st.lam_total * st.p_wait - st.mean_q2),
               mean_q2=float(st.mean_q2), p_wait=float(st.p_wait),
               mean_wait=float(st.mean_wait), method=st.method,
               cpu=time.process_time() - c0, wall=time.perf_counter() - w0,
               solver_version=SOLVER_VERSION)
    return row


def large_extrapolations(chain: Mapping, large: Mapping, grid: Mapping,
                         betas: Iterable[float]) -> list[dict]:
    """The exact chain's sequence carried to the largest stored ``n``,
    extrapolated to ``n = ∞``, against the grid solution of the diffusion.

    For every ``beta`` and constant: the points of ``chain`` (``n <= 4000``)
    and ``large`` (:data:`~qbook.ht_constants.LARGE_NS`) together,
    :func:`~qbook.ht_constants.extrapolate_windows` on the windows
    :data:`~qbook.ht_constants.LARGE_WINDOWS`, and the grid's estimate.

    Returns
    -------
    list of dict
        One per ``(beta, key)``: ``beta, key, n_max, estimate, error, grid,
        grid_error, ratio`` (``|estimate − grid|`` over ``error + grid_error``)
        and ``exponent`` (the last local exponent).
    """
    out = []
    for b in betas:
        for k in CONSTANTS:
            ns, y, e = chain_points({str(b): {**chain.get(str(b), {}), **large.get(str(b), {})}}, b, k)
            f = extrapolate_windows(ns, y, e, n0s=LARGE_WINDOWS)
            g, ge = grid[str(b)]["estimate"][GRID_NAME[k]], grid[str(b)]["error"][GRID_NAME[k]]
            out.append({"beta": b, "key": k, "n_max": int(ns[-1]), "estimate": f.estimate,
                        "error": f.error, "grid": float(g), "grid_error": float(ge),
                        "ratio": abs(f.estimate - g) / (f.error + ge),
                        "exponent": float(f.exponents[-1])})
    return out


def identity_gaps(rows: Mapping, betas: Iterable[float]) -> list[float]:
    """``|λP(wait) − E[Q_2]|`` of every stored cell at ``betas``, over the
    cell's error estimates carried to the identity plus four ulps of
    ``E[Q_2]`` (the two sums' rounding): at most 1 where the identity holds
    within the solver's errors.  In the scaled constants ``λ/n · c − q2``."""
    out = []
    for b in betas:
        for n, r in rows.get(str(b), {}).items():
            if "c" in r:
                f = (int(n) - b * math.sqrt(int(n))) / int(n)
                out.append(abs(f * r["c"] - r["q2"])
                           / (f * r["err"]["c"] + r["err"]["q2"] + 4 * np.finfo(float).eps * r["q2"]))
    return out


def large_table(rows: Iterable[Mapping]) -> str:
    """The Markdown table of :func:`~qbook.ht_constants.large_extrapolations`'s rows."""
    import pandas as pd
    name = {"c": "√n P(wait)", "q2": "E[Q₂]/√n", "var_x1": "Var X₁", "x1x2": "E[X₁X₂]"}
    return pd.DataFrame([{"β": f"{r['beta']:g}", "constant": name[r["key"]],
                          "chain, n → ∞": table_cell(r["estimate"], r["error"]),
                          "diffusion, grid": table_cell(r["grid"], r["grid_error"]),
                          "ratio": f"{r['ratio']:.2f}", "last exponent": f"{r['exponent']:.2f}"}
                         for r in rows]).to_markdown(index=False)


CONSTANT_NAMES = {"c": "√n P(wait)", "q2": "E[Q₂]/√n", "var_x1": "Var X₁", "x1x2": "E[X₁X₂]"}


def chain_diag_table(extrap: Mapping, pinned: Mapping, ratio: Mapping) -> str:
    """The chain's extrapolation diagnostics as a Markdown table: per (β, constant) the
    windows' intercepts, their spread, the truncation term, the last local exponents,
    whether the constant is pinned and |chain − grid| over the sum of errors."""
    rows = ["| β | constant | window intercepts | spread | Σ\\|w\\|e | last local exponents | pinned "
            "| \\|chain − grid\\| / errors |", "|---|---|---|---|---|---|---|---|"]
    for (b, k), f in extrap.items():
        rows.append(f"| {b:g} | {CONSTANT_NAMES[k]} | {', '.join(f'{v:.6f}' for v in f.intercepts)} | "
                    f"{f.spread:.1e} | {f.truncation[-1]:.1e} | "
                    f"{', '.join(f'{v:.3f}' for v in f.exponents[-3:])} | "
                    f"{'yes' if pinned[b, k] else 'no'} | {ratio[b, k]:.2f} |")
    return "\n".join(rows)


def plot_q2_approach(plt, chain: Mapping, tight: Mapping | None, grid_fine: Mapping,
                     betas: Iterable[float] = (0.25, 0.5, 1.0, 2.0)):
    """√n P(wait) of the exact chain against n^{-1/2} per β, the quadratic in n^{-1/2} on
    the narrowest window (dotted, continued to 0) and the grid's limit (crosses at 0)."""
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for b in betas:
        ns, y, _ = chain_points(chain, b, "c", tight if tight_covers(chain, tight, b) else None)
        w, xx = ns >= WINDOWS[-1], np.linspace(0, WINDOWS[-1] ** -0.5, 50)
        ax.plot(ns ** -0.5, y, "o", ms=4, label=f"β = {b:g}")
        ax.plot(xx, np.polyval(np.polyfit(ns[w] ** -0.5, y[w], 2), xx), ":", color="0.4")
        ax.plot(0, grid_fine[str(b)]["estimate"]["mean_x2"], "kx")
    ax.set_xlabel("n$^{-1/2}$")
    ax.set_ylabel("√n P(wait)")
    ax.legend(fontsize=8)
    return fig


def plot_c_beta(plt, bs, cs, ce, al):
    """Left: c(β) with its errors and the pooled queue's α(β); right: βc(β) (with the
    level 2) and βc(β)/α(β)."""
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.4))
    a1.errorbar(bs, cs, ce, fmt="o-", ms=3, label="c(β), JSQ")
    a1.plot(bs, al, "s--", ms=3, label="α(β), pooled M/M/n")
    a1.set(xscale="log", yscale="log", xlabel="β", ylabel="constant")
    a1.legend()
    a2.plot(bs, bs * cs, "o-", ms=3, label="β c(β)")
    a2.plot(bs, bs * cs / al, "s--", ms=3, label="β c(β) / α(β)")
    a2.axhline(2, color="0.5", ls=":", lw=1)
    a2.set(xscale="log", xlabel="β", ylabel="ratio")
    a2.legend()
    return fig


def plot_x2_law(plt, chain: Mapping, ks: Mapping, g) -> object:
    """The distribution function of Q₂/√n of the exact chain at β = 1 at the smallest and
    largest n of ``ks`` (steps) against the grid's X₂ (line)."""
    fig, ax = plt.subplots(figsize=(6, 3.4))
    for n, st in ((min(ks), ":"), (max(ks), "-")):
        pmf = np.array(chain["1.0"][str(n)]["q2_pmf"])
        ax.step(np.arange(pmf.size) / math.sqrt(n), np.cumsum(pmf), st, where="post",
                color="0.4", label=f"exact chain, n = {n}")
    ax.plot(g.x2, g.cdf_x2(g.x2), "k", lw=1.2, label="diffusion (grid)")
    ax.set(xlim=(0, 4), xlabel="x", ylabel="P(X₂ ≤ x)")
    ax.legend(fontsize=8)
    return fig


def box_values(beta: float, g) -> dict:
    """The grid's truncation box at ``beta`` (``x1_min``, ``x2_max`` of
    ``qlib.halfin_whitt.stationary.default_box``) and the stationary mass on its two
    cut faces in the grid solution ``g``, as the chapter's glued values."""
    from qlib.halfin_whitt.stationary import default_box
    x1, x2 = default_box(beta)[:2]
    return {f"x1-{beta}": float(x1), f"x2-{beta}": float(x2), f"face-{beta}": float(g.face_low + g.face_top)}
