"""The tables of the performance appendix, read from the stored benchmark results.

Markdown pipe tables (strings) built from ``results.json`` (``bench_peers.py``),
``simulate_results.json`` (``bench_simulate.py``) and ``service_results.json``
(``bench_service.py``); the chapter ``performance.md`` glues them. Standard
library only, except exact_check (qlib, imported when it is called).
"""
from __future__ import annotations

import math

ENGINES = ("qlib", "qlib-tasks", "heapq", "simpy", "ciw")
MUS_INTERLEAVE = ("0", "log n", "inf")


def events_per_s(res: dict, engine: str, model: str, n: int, mu_label: str) -> float:
    """Stored events per CPU second of one cell of ``results.json`` (``nan`` if it was not run)."""
    hit = [r for r in res["speed"] if (r["engine"], r["model"], r["n"], r["mu_label"]) == (engine, model, n, mu_label)]
    return hit[0]["events_per_s"] if hit else math.nan


def speed_table(res: dict) -> str:
    """Events per CPU second, one row per model, n and μ, one column per engine."""
    keys = sorted({(r["model"] == "complete", r["n"], r["mu_label"]) for r in res["speed"]})
    rows = ["| model | n | μ | " + " | ".join(ENGINES) + " |", "|---|---|---|" + "---|" * len(ENGINES)]
    for cplt, n, lab in keys:
        vals = [events_per_s(res, e, "complete" if cplt else "ring", n, lab) for e in ENGINES]
        cells = [f"{v:.3g}" if not math.isnan(v) else "–" for v in vals]
        rows.append(f"| {'(b) complete' if cplt else '(a) ring'} | {n} | {lab} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def interleave_costs(sim: dict) -> tuple[dict, dict, list]:
    """``(cost, best, ns)`` from ``simulate_results.json``: ns per event by (kernel, R, n, μ)
    (fastest round; the single round at the largest n), the best interleaved (cost, R) by
    (n, μ), and the sizes."""
    cost = {(c["kernel"], c["R"], c["n"], c["mu_label"]): c["ns_per_event_min"] for c in sim["interleave"]["summary"]}
    cost.update({(c["kernel"], c["R"], c["n"], c["mu_label"]): c["ns_per_event"] for c in sim["interleave_1e7"]["rows"]})
    ns = sorted({k[2] for k in cost})
    best = {(n, m): min((v, k[1]) for k, v in cost.items() if k[0] == "interleaved" and k[2:] == (n, m))
            for n in ns for m in MUS_INTERLEAVE}
    return cost, best, ns


def interleave_table(cost: dict, best: dict, ns: list, general: dict) -> str:
    """Cost per event alone and interleaved, the hand kernel, and deterministic services
    (heap → ring buffer) from ``general``, the rows of ``service_results.json`` by (law, n)."""
    def gcell(n):
        if ("deterministic", n) not in general:
            return "–"
        return (f"{general[('deterministic-old-heap', n)]['ns_per_event']:.0f} → "
                f"{general[('deterministic', n)]['ns_per_event']:.0f}")
    head = " | ".join(f"μ = {m.replace('inf', '∞')}: alone, interleaved (best R)" for m in MUS_INTERLEAVE)
    rows = [f"| n | hand JSQ(2) | {head} | general, deterministic: heap → ring |",
            "|---" * (len(MUS_INTERLEAVE) + 3) + "|"]
    rows += [f"| {n:.0e} | {cost[('hand', 1, n, '-')]:.0f} | " + " | ".join(
        f"{cost[('alone', 1, n, m)]:.0f}, {best[n, m][0]:.0f} ({best[n, m][1]})" for m in MUS_INTERLEAVE)
        + f" | {gcell(n)} |" for n in ns]
    return "\n".join(rows)


def goals_table(goals: list) -> str:
    """Rows ``(quantity, measured, goal text, bound, sign)``; met when ``sign·(measured − bound) ≥ 0``."""
    rows = ["| quantity | measured | goal | met |", "|---|---|---|---|"]
    rows += [f"| {a} | {v:.3g} | {g} | {'yes' if s * (v - b) >= 0 else 'no'} |" for a, v, g, b, s in goals]
    return "\n".join(rows)


def agreement_table(agreement: list, z: float) -> str:
    """Each peer's q(i) against qlib's on the small case, with the band z·s.e. of the difference."""
    rows = ["| model | engine | i | peer q(i) | qlib q(i) | difference | z · s.e. |", "|---|---|---|---|---|---|---|"]
    rows += [f"| {r['model']} | {r['engine']} | {r['level']} | {r['peer']:.4f} | {r['qlib']:.4f} "
             f"| {r['peer'] - r['qlib']:+.4f} | {z * math.hypot(r['peer_se'], r['qlib_se']):.4f} |"
             for r in agreement]
    return "\n".join(rows)


def exact_table(rows_in: list, exact: dict, t: list, detectable: list) -> str:
    """Every simulator's replication mean on model (b) against the exact chain, with t and detectable deviation."""
    rows = ["| engine | r | T | quantity | estimate ± s.e. | exact | t | detectable |", "|---|---|---|---|---|---|---|---|"]
    rows += [f"| {r['engine']} | {r['r']} | {r['T']:g} | {'E[n − Q₁]/√n' if r['quantity'] == 'idle' else 'E[Q₂]/√n'} "
             f"| {r['estimate']:.3f} ± {r['se']:.3f} | {exact[r['quantity']]:.4f} | {tt:+.2f} | {d:.3f} |"
             for r, tt, d in zip(rows_in, t, detectable)]
    return "\n".join(rows)


def general_values(gen: dict, svc: dict) -> dict:
    """The general-service numbers the performance chapter cites, from
    ``service_results.json`` (``svc``) and its rows by (law, n) (``gen``):
    rounds, millions of events per CPU second at n = 1e4 (deterministic,
    its median, the old heap, the exponential kernel), the ring buffer's
    speed-up over the heap, and ns per event at n = 1e4 and 1e6."""
    det4, heap4, exp4 = (gen[(k, 10**4)] for k in ("deterministic", "deterministic-old-heap", "exp-kernel"))
    return {"rounds": svc["rounds"], "det-meps": det4["events_per_s"] / 1e6,
            "det-meps-median": det4["events_per_s_median"] / 1e6,
            "heap-meps": heap4["events_per_s"] / 1e6, "exp-meps": exp4["events_per_s"] / 1e6,
            "ring-over-heap": heap4["cpu_s_min"] / det4["cpu_s_min"],
            "det-ns": det4["ns_per_event"], "exp-1e6": gen[("exp-kernel", 10**6)]["ns_per_event"],
            "ring-1e6": gen[("deterministic", 10**6)]["ns_per_event"],
            "heap-1e6": gen[("deterministic-old-heap", 10**6)]["ns_per_event"],
            "exp-heap-1e6": gen[("exponential", 10**6)]["ns_per_event"]}


def peer_ratio_values(res: dict) -> dict:
    """The peer-comparison numbers the chapter cites, from ``results.json``:
    qlib's speed ratio over each peer on the ring at n = 1e3 (at μ = log n
    and the worst μ), the engine and total ratios on the complete graph, the
    algorithm ratio at n = 1e3 and 1e4, qlib's events per second on the ring,
    and the drop of events per second from n = 1e3 to 1e4 on the complete
    graph (per server, ``qlib``; as tasks, ``tasks``)."""
    ratio = {(r["model"], r["n"], r["mu_label"], r["engine"]): r["ratio"] for r in res["ratios"]}
    split = {(r["n"], r["engine"]): r for r in res["ratios_complete"]}
    out = {}
    for e in ("heapq", "simpy", "ciw"):
        out[f"ratio-{e}-ring"] = ratio[("ring", 1000, "log n", e)]
        out[f"ratio-{e}-ring-min"] = min(ratio[("ring", 1000, mu, e)] for mu in ("0", "log n", "inf"))
        out[f"engine-ratio-{e}-complete"] = split[(1000, e)]["engine_ratio"]
        out[f"total-ratio-{e}-complete"] = split[(1000, e)]["total"]
    out["algorithm-ratio-complete"] = split[(1000, "heapq")]["algorithm_ratio"]
    out["algorithm-ratio-complete-1e4"] = split[(10000, "heapq")]["algorithm_ratio"]
    out["qlib-eps-ring"] = events_per_s(res, "qlib", "ring", 1000, "log n")
    for key, eng in (("qlib", "qlib"), ("tasks", "qlib-tasks")):
        out[f"complete-{key}-1e3-1e4"] = (events_per_s(res, eng, "complete", 1000, "-")
                                          / events_per_s(res, eng, "complete", 10000, "-"))
    return out


def scaling_values(sim: dict, target_mus: tuple) -> dict:
    """The scaling numbers the chapter cites, from ``simulate_results.json``:
    the growth of the cost per event from the smallest to the largest n per
    kernel (min and max over ``target_mus``; the hand kernel), the pipelined
    kernel's speed-up over the hand kernel (worst μ at each n: min, max, at
    both ends), ns per event at μ = log n at both ends, the worst cost of
    resampling at μ = n over the static cost, and the memory figures."""
    cost = {(c["kernel"], c["n"], c["mu_label"]): c["ns_per_event"] for c in sim["cells"]}
    ns = sorted({c["n"] for c in sim["cells"]})
    if not (all(c["ns_per_event"] > 0 for c in sim["cells"])
            and set(target_mus) <= {c["mu_label"] for c in sim["cells"]}):
        raise ValueError("sim: a cell has no positive cost or a target μ is missing")
    lo, hi = ns[0], ns[-1]
    flat = {k: [cost[(k, hi, m)] / cost[(k, lo, m)] for m in target_mus] for k in ("new", "old")}
    vs_hand = {n: min(cost[("hand", n, "-")] / cost[("new", n, m)] for m in target_mus) for n in ns}
    mem = sim["memory"]
    return {"flat-new-max": max(flat["new"]), "flat-new-min": min(flat["new"]),
            "flat-old-min": min(flat["old"]), "flat-old-max": max(flat["old"]),
            "flat-hand": cost[("hand", hi, "-")] / cost[("hand", lo, "-")],
            "hand-top": vs_hand[hi], "hand-min": min(vs_hand.values()),
            "hand-max": max(vs_hand.values()), "hand-bottom": vs_hand[lo],
            "new-lo": cost[("new", lo, "log n")], "new-hi": cost[("new", hi, "log n")],
            "old-lo": cost[("old", lo, "log n")], "old-hi": cost[("old", hi, "log n")],
            "rss-mib": mem["peak_rss"] / 2**20, "rss-per-server": mem["peak_per_server"],
            "graph-per-server": mem["graph_bytes"] / mem["n"],
            "traced-per-server": mem["simulate_traced_per_server"],
            "resample-overhead": max(cost[("new", n, "n")] / cost[("new", n, "0")] for n in ns)}


def interleave_values(sim: dict) -> dict:
    """The interleaving numbers the chapter cites, from ``simulate_results.json``:
    rounds, the events of the single n = 1e7 round (in all and per server),
    the loads, the growth of the cost per event from the smallest to the
    largest n alone and for the faster of alone and interleaved (min, max
    over μ), how many (n, μ) cells interleaving wins (any R; R >= 4), and
    the speed-up over the hand kernel at both ends and at worst."""
    il, il7 = sim["interleave"], sim["interleave_1e7"]
    c, best, ns = interleave_costs(sim)
    lo, hi, mus = ns[0], ns[-1], MUS_INTERLEAVE
    flat = [c[("alone", 1, hi, m)] / c[("alone", 1, lo, m)] for m in mus]
    fast = {(n, m): min(c[("alone", 1, n, m)], best[n, m][0]) for n in ns for m in mus}
    flat_best = [fast[(hi, m)] / fast[(lo, m)] for m in mus]
    hand = {n: min(c[("hand", 1, n, "-")] / c[("alone", 1, n, m)] for m in mus) for n in ns}
    wins = [best[n, m][0] < c[("alone", 1, n, m)] for n in ns for m in mus]
    wins4 = [min(v for k, v in c.items() if k[0] == "interleaved" and k[1] >= 4 and k[2:] == (n, m))
             < c[("alone", 1, n, m)] for n in ns for m in mus]
    loads = il["load_average_at_start"] + il["load_average_at_end"]
    return {"rounds": len(il["summary"][0]["rounds"]), "events-1e7": il7["events_per_cell"],
            "events-per-server-1e7": il7["events_per_cell"] / hi,
            "load-1e7": max(x[0] for x in il7["load"]), "load-lo": min(loads), "load-hi": max(loads),
            "flat-min": min(flat), "flat-max": max(flat), "flat-best-min": min(flat_best),
            "flat-best-max": max(flat_best), "il-wins": sum(wins), "il-wins4": sum(wins4),
            "il-cells": len(wins), "hand-lo": hand[lo], "hand-hi": hand[hi],
            "hand-min": min(hand.values())}


def goals_rows(sim: dict, newest: dict, gen: dict, cpp: dict) -> list:
    """The rows of the design-goals table (``goals_table``) from the stored runs:
    ``newest`` is ``interleave_values(sim)``, ``gen`` the general-service rows by
    (law, n), ``cpp`` what ``bench_cpp_baseline.cpp_panel`` returned."""
    det4 = gen[("deterministic", 10**4)]
    return [
        ("cost per event at n = 1e7 ÷ at n = 1e3, worst μ, alone", newest["flat-max"], "≤ 2", 2, -1),
        ("same, faster of alone and interleaved", newest["flat-best-max"], "≤ 2", 2, -1),
        ("events per CPU s ÷ hand kernel's, worst n and μ", newest["hand-min"], "≥ 1.5", 1.5, 1),
        ("simulator state, bytes per server", sim["memory_issue31"]["state_bytes_per_server"], "≤ 24", 24, -1),
        ("general service, deterministic, n = 1e4: events per CPU s", det4["events_per_s"], "≥ 8e6", 8e6, 1),
        ("static ring, one neighbour: C++ (hand-picked random numbers) CPU per event ÷ fast path's, worst n",
         cpp["ratio-min"], "≥ 2", 2, 1),
        ("same, C++ with standard-library random numbers", cpp["std-ratio-min"], "≥ 2", 2, 1),
        ("fast path, one neighbour: ns per event at n = 1e7", cpp["new-top"], "≤ 30", 30, -1),
        ("fast path, one neighbour: cost per event at n = 1e7 ÷ at n = 1e3", cpp["growth"], "≤ 1.5", 1.5, -1),
        ("same, whole neighbourhood", cpp["growth-all"], "≤ 1.5", 1.5, -1),
        ("fast path on the implicit ring: peak bytes per server at n = 1e8", cpp["rss-1e8"], "≤ 8", 8, -1)]


def exact_check(res: dict, checks) -> dict:
    """Model (b) against the exact chain: every simulator's replication means of
    ``E[n − Q_1]/√n`` and ``E[Q_2]/√n`` as one ``qlib.stats.simultaneous`` family,
    added to ``checks``; returns the chapter's glued values (the table as Markdown
    under ``"table"``).

    The chain is solved here at the default tolerance; the benchmark stored it at a
    finer one, and the two must agree within this solve's error estimates."""
    import math
    from IPython.display import Markdown
    from qlib import halfin_whitt, stats
    from qlib.stats import Check
    ae = res["agreement_exact"]
    st = halfin_whitt.stationary_jsq(ae["n"], ae["beta"])
    exact = {"idle": st.mean_idle / math.sqrt(st.n), "q2": st.mean_q2 / math.sqrt(st.n)}
    est = {k: st.error_estimates[f"mean_{k}"] / math.sqrt(st.n) for k in ("idle", "q2")}
    assert all(abs(exact[k] - ae["exact"][k]) <= est[k] + 1e-9 for k in exact)
    rx = ae["rows"]
    fam = stats.simultaneous([r["estimate"] for r in rx], [r["se"] for r in rx],
                             [r["df"] for r in rx], [exact[r["quantity"]] for r in rx])
    checks.add("exact", Check.from_family(fam, f"model (b) at n = {st.n}: every simulator equals the exact chain"))
    det = {(r["engine"], r["quantity"]): d for r, d in zip(rx, fam.detectable)}
    ciw = [r for r in res["speed"] if r["engine"] == "ciw" and r["n"] == st.n and r["model"] == "complete"]
    out = {"n": st.n, "states": st.pi.size, "trunc": st.truncated_mass, "q2": exact["q2"],
           "crit": max(fam.crit), "worst-t": max(abs(fam.t)), "ciw-eps": ciw[0]["events_per_s"],
           **{f"det-q2-{e}": det[(e, "q2")] for e in ("heapq", "ciw", "qlib")}}
    out = {k: float(v) for k, v in out.items()}
    out["table"] = Markdown(exact_table(rx, exact, fam.t, fam.detectable))
    return out
