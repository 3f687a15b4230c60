"""The tables of the performance appendix, read from the stored benchmark results.

Markdown pipe tables (strings) built from ``results.json`` (``bench_peers.py``),
``simulate_results.json`` (``bench_simulate.py``) and ``service_results.json``
(``bench_service.py``); the chapter ``performance.md`` glues them. Standard
library only.
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
