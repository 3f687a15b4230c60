"""The book's table of check margins (``chapters/how_we_check.md``): each claim
a margin is fixed for, its size, why that size, and the chapters that use it.
"""
from __future__ import annotations

import numpy as np
from IPython.display import Markdown

__all__ = ["MARGINS", "margins_table", "monotone_arrivals", "coverage_glue", "se_scan", "plot_coverage"]

MARGINS: list[tuple[str, str, str, str]] = [
    ("simulated R agrees with the mean-field or cavity value", "2 % of R",
     "below the gaps between the neighbouring degree laws and resampling rates the comparisons order",
     "bounded_resampling, general_service"),
    ("the double star's R agrees between sizes at equal μ/n", "5 % of R",
     "far less than the change of its R over the decade of μ that separates the sizes at equal μ/n",
     "bounded_resampling"),
    ("the static part of the tail is the M/M/1 tail", "5 % of p(0)λ^i",
     "smaller than the ratio between successive levels of a geometric tail at the reference load",
     "bounded_resampling"),
    ("the response-time tail exponent equals the service exponent (Pareto(2.5), the one heavy-tailed law)",
     "10 % of the exponent",
     "far below the unit gap between α and α − 1, the exponent a single FCFS queue's waiting time would show",
     "general_service"),
    ("the slope of the gap to the fluid limit at μ = ∞ is −1/2", "1/4 on the slope",
     "half the distance to the competing exponents 0 (a gap that does not shrink) and −1", "fluid_limit"),
    ("burn-in is over / the two starts agree (degree laws)", "g*/2, g* the smallest fluid gap",
     "a bias within a third of g* cannot close a gap between the laws the chapter ranks", "best_degree"),
    ("the start's leftover bias", "R_v/(10n) (tolerance)",
     "a tenth of the finite-n correction R_v/n the chapter measures", "finite_n"),
    ("burn-in is over (halves of R)", "2 % of R",
     "the chapter's agreement margin; the bias it leaves through τ_up is checked against it (and fails for the H2 cells at μ < ∞, which the chapter reports)",
     "general_service"),
    ("burn-in is over (halves of R; ring, triangles and double star, resampled ring)", "1 %, 3 %, 2 % of R",
     "below the effect each claim is about: about 1 % for the ring, tens of percent for the others",
     "static_graphs"),
    ("the ring's leftover bias at λ = 0.9", "0.5 % of R (tolerance)",
     "half the ring's 1 % claims", "static_graphs"),
    ("burn-in is over (halves of P(wait) and E[Q₂] of coupled JSQ(d) chains)", "10 % of the mean",
     "smaller than the factors between policies the conclusions rest on; at n = 10⁴ the bias is "
     "checked against the growth of the gap it could mask", "ht_alternatives"),
    ("burn-in is over (halves of n − Q₁, Q₂, 1{Q₁ = n})", "5 % of the mean",
     "the bias it leaves is checked against half the deviation the generator check detects",
     "solver_check"),
    ("burn-in is over (halves of the mean queue length)", "2-3 % of the mean",
     "a halves margin m bounds the bias only by m·leftover_bias ratio ≥ m/2 (1-1.5 % at best); "
     "each chapter checks that bound against a tolerance of its own claims (τ_up)",
     "tails, experiments, simulator_check, static_graphs"),
    ("burn-in is over (Halfin-Whitt paths)", "5-10 % of the mean",
     "the scaled quantities are compared with limits whose finite-n corrections are larger; "
     "ht_waiting carries the bias into its intercept against the deviation that family detects",
     "many_servers, ht_waiting"),
]


def margins_table() -> str:
    """The margins as a Markdown table.

    Returns
    -------
    str
        A table with the columns claim, margin, why this size, chapter.

    Examples
    --------
    >>> margins_table().splitlines()[0]
    '| claim | margin | why this size | chapter |'
    """
    return ("| claim | margin | why this size | chapter |\n|---|---|---|---|\n"
            + "\n".join(f"| {a} | {b} | {c} | {d} |" for a, b, c, d in MARGINS))


def coverage_glue(cov_res: dict) -> dict:
    """The comparison of the lag-1 and window rules, as the chapter's glued values.

    Parameters
    ----------
    cov_res : dict
        ``benchmarks/se_coverage_results.json``, loaded.

    Returns
    -------
    dict
        Glue key to value (the table as Markdown, the short window's shares).

    Examples
    --------
    >>> import json; from pathlib import Path
    >>> g = coverage_glue(json.loads(Path("benchmarks/se_coverage_results.json").read_text()))
    >>> 0 <= g["how_we_check-old-short-share"] <= 1
    True
    """
    out: dict = {}
    cells_cov = cov_res["cells"]
    fmt = lambda d: "–" if d["coverage"] is None else f"{d['coverage']:.3f} ± {d['half_width']:.3f}"  # noqa: E731
    rows = ["| cell | window | runs | lag-1 rule: all | lag-1 rule: flagged (share) | window rule: all | window rule: flagged (share) |",
            "|---|---|---|---|---|---|---|"]
    for name, c in cells_cov.items():
        o, w = c["old"], c["new"]
        rows.append(f"| {name.split(',')[0]}, λ = {c['lam']} | {c['window']:.0f} | {c['runs']} | "
                    f"{fmt(o['overall'])} | {fmt(o['flagged'])} ({o['flagged_share']:.2f}) | "
                    f"{fmt(w['overall'])} | {fmt(w['flagged'])} ({w['flagged_share']:.2f}) |")
    out["how_we_check-coverage"] = (Markdown("\n".join(rows)))
    old_short = cells_cov["K20, lam=0.9, t_end=3000"]["old"]
    out["how_we_check-old-short-cov"] = (old_short["flagged"]["coverage"])
    out["how_we_check-old-short-share"] = (old_short["flagged_share"])
    out["how_we_check-new-short-share"] = (cells_cov["K20, lam=0.9, t_end=3000"]["new"]["flagged_share"])
    return out


def se_scan(ev: dict) -> tuple[list, list, dict]:
    """The coverage scan across the flag's threshold: table rows, points and glued values.

    Parameters
    ----------
    ev : dict
        ``benchmarks/se_reliable_eval.json``, loaded.

    Returns
    -------
    pts : list of dict
        One per system and window: name, ``x`` = W/τ, flagged and unflagged coverage, verdict.
    judged : list of dict
        The points with at least 20 flagged runs.
    out : dict
        Glue key to value.

    Examples
    --------
    >>> import json; from pathlib import Path
    >>> pts, judged, g = se_scan(json.loads(Path("benchmarks/se_reliable_eval.json").read_text()))
    >>> g["how_we_check-se-judged"] == len(judged) <= len(pts)
    True
    """
    out: dict = {}
    band = ev["band"]
    cp = lambda d: "–" if d["coverage"] is None else f"{d['coverage']:.3f} [{d['ci95'][0]:.3f}, {d['ci95'][1]:.3f}]"  # noqa: E731
    rows, pts = ["| system | $W/\\tau_{\\rm true}$ | runs | flagged share | flagged: coverage [95 % CI] | in band | unflagged: coverage [95 % CI] | all | OBM, all |",
                 "|---|---|---|---|---|---|---|---|---|"], []
    for name, p in ev["points"].items():
        for w in p["windows"].values():
            fl, un = w["flagged"], w["unflagged"]
            verdict = ("–" if fl["runs"] < 20 else "yes" if fl["in_band"] else
                       "no" if fl["ci90"][1] < band[0] or fl["ci90"][0] > band[1] else "undecided")
            rows.append(f"| {name.replace(', lam=', ', λ = ')} | {w['w_over_tau']:.0f} | {w['runs']} | "
                        f"{w['flagged_share']:.2f} | {cp(fl)} | {verdict} | {cp(un)} | "
                        f"{w['overall']['coverage']:.3f} | {w['obm']['coverage']:.3f} |")
            pts.append(dict(name=name, x=w["w_over_tau"], fl=fl, un=un, verdict=verdict,
                            all=w["overall"]["coverage"], obm=w["obm"]["coverage"]))
    out["how_we_check-se-scan"] = (Markdown("\n".join(rows)))
    judged = [q for q in pts if q["verdict"] != "–"]
    out["how_we_check-se-points"] = (len(pts))
    out["how_we_check-se-judged"] = (len(judged))
    out["how_we_check-se-in-band"] = (sum(q["verdict"] == "yes" for q in judged))
    out["how_we_check-se-below"] = (sum(q["verdict"] == "no" and q["fl"]["coverage"] < band[0] for q in judged))
    out["how_we_check-flagged-cov-min"] = (min(q["fl"]["coverage"] for q in judged))
    out["how_we_check-flagged-cov-max"] = (max(q["fl"]["coverage"] for q in judged))
    out["how_we_check-se-runs-min"] = (min(p["runs"] for p in ev["points"].values()))
    out["how_we_check-se-runs-max"] = (max(p["runs"] for p in ev["points"].values()))
    # near the threshold (the first window where the flag trusts at least half the runs) and at the longest window
    NEAR, BIG = 0.5, 100
    out["how_we_check-se-near-share"] = (NEAR)
    out["how_we_check-se-big"] = (BIG)
    out["how_we_check-se-w-min"] = (min(q["x"] for q in pts))
    out["how_we_check-se-w-max"] = (max(q["x"] for q in pts))
    near, last = [], []
    for nm in ev["points"]:
        qq = [q for q in pts if q["name"] == nm]
        first = next((q for q in qq if q["fl"]["runs"] >= NEAR * (q["fl"]["runs"] + q["un"]["runs"])), None)
        if first is not None and first["fl"]["runs"] >= 20:
            near.append(first)
        if qq[-1]["fl"]["runs"] >= 20:
            last.append(qq[-1])
    out["how_we_check-se-near-min"] = (min(q["fl"]["coverage"] for q in near))
    out["how_we_check-se-near-max"] = (max(q["fl"]["coverage"] for q in near))
    out["how_we_check-se-near-un-min"] = (min(q["un"]["coverage"] for q in near if q["un"]["runs"]))
    out["how_we_check-se-last-min"] = (min(q["fl"]["coverage"] for q in last))
    out["how_we_check-se-last-max"] = (max(q["fl"]["coverage"] for q in last))
    big = [q for q in pts if q["fl"]["runs"] + q["un"]["runs"] >= BIG]
    out["how_we_check-se-all-min"] = (min(q["all"] for q in big))
    out["how_we_check-se-all-max"] = (max(q["all"] for q in big))
    out["how_we_check-se-obm-min"] = (min(q["obm"] for q in big))
    out["how_we_check-se-obm-max"] = (max(q["obm"] for q in big))
    return pts, judged, out


def plot_coverage(ev: dict, pts: list, plt) -> None:
    """Coverage against the window, flagged and unflagged runs, one panel per system.

    Parameters
    ----------
    ev : dict
        ``benchmarks/se_reliable_eval.json``, loaded.
    pts : list of dict
        The points of :func:`se_scan`.
    plt : module
        ``matplotlib.pyplot``.

    Examples
    --------
    >>> import json, matplotlib.pyplot as plt; from pathlib import Path
    >>> ev = json.loads(Path("benchmarks/se_reliable_eval.json").read_text())
    >>> plot_coverage(ev, se_scan(ev)[0], plt)
    """
    band = ev["band"]
    names = list(ev["points"])
    fig, axs = plt.subplots(1, len(names), figsize=(11, 3.2), sharey=True)
    for ax, nm in zip(np.atleast_1d(axs), names):
        for key, mk, lab in (("fl", "o", "flagged"), ("un", "o", "unflagged")):
            qq = [q for q in pts if q["name"] == nm and q[key]["runs"] >= 5]
            x = np.array([q["x"] for q in qq]) + (25 if key == "un" else 0)
            c = np.array([q[key]["coverage"] for q in qq])
            err = np.array([[q[key]["coverage"] - q[key]["ci95"][0], q[key]["ci95"][1] - q[key]["coverage"]]
                            for q in qq]).T.reshape(2, -1)
            ax.errorbar(x, c, yerr=err, fmt=mk, mfc="C0" if key == "fl" else "none", color="C0" if key == "fl" else "C1",
                        ms=4, label=lab)
        ax.axhspan(*band, color="0.9", zorder=0)
        ax.set(xlim=(0, 2200), title=nm.replace(", lam=", ", λ = "), xlabel="$W/\\tau_{\\rm true}$")
    axs[0].set_ylabel("coverage of the 95 % interval")
    axs[0].legend(fontsize=7)
    fig.tight_layout()
    plt.show()


def _join(q, nb, rank):
    """The highest-ranked shortest queue of nb."""
    m = min(q[w] for w in nb)
    return max((w for w in nb if q[w] == m), key=lambda w: rank[w])


def monotone_arrivals(trials: int = 5000, seed: int = 0) -> dict[str, int]:
    """Count the ordered pairs an arrival breaks, with a common ranking and with independent tie-breaks.

    On random small graphs (2 to 5 servers) and ordered pairs of states ``lo <= hi``,
    one arrival at a random server joins the highest-ranked shortest queue of its
    neighbourhood in each copy; a pair is broken when afterwards ``lo > hi`` somewhere.

    Parameters
    ----------
    trials : int
        Number of random graphs and pairs.
    seed : int
        Seed of the generator.

    Returns
    -------
    dict
        ``{"common": broken pairs, "independent": broken pairs}``.

    Examples
    --------
    >>> b = monotone_arrivals(500)
    >>> b["common"]
    0
    """
    rng, broken = np.random.default_rng(seed), {"common": 0, "independent": 0}
    for _ in range(trials):
        k = int(rng.integers(2, 6))
        A = rng.random((k, k)) < 0.5
        lo = rng.integers(0, 3, k)
        hi = lo + rng.integers(0, 2, k)                      # an ordered pair lo <= hi
        u = int(rng.integers(k))
        nb = [u] + [w for w in range(k) if w != u and (A[u, w] or A[w, u])]
        r1, r2 = rng.random(k), rng.random(k)
        for key, r_hi in (("common", r1), ("independent", r2)):
            lo2, hi2 = lo.copy(), hi.copy()
            lo2[_join(lo, nb, r1)] += 1
            hi2[_join(hi, nb, r_hi)] += 1
            broken[key] += bool(np.any(lo2 > hi2))
    return broken
