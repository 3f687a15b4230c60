"""Helpers of the performance appendix (``chapters/performance.md``): the
stored ``simulate_jsq`` timings as a table, the lazy permutation's uniformity
and the live run's agreement, each computed from its data."""
from __future__ import annotations

import json
import math
import random
from pathlib import Path

from scipy.stats import chisquare, t as student_t

__all__ = ["agreement_worst", "jsq_table", "lazy_chi2", "live_deviation", "machine_line"]


def jsq_table(root: Path) -> tuple[str, dict]:
    """The Markdown table of ``benchmarks/bench_simulate_jsq.json`` (CPU ns per
    event of both kernels) and its glue values (``ratio-min``, ``ratio-max``,
    ``load``)."""
    jsq = json.loads((Path(root) / "benchmarks" / "bench_simulate_jsq.json").read_text())
    rows = [f"| $10^{round(math.log10(r['n']))}$ | {r['event_ns']:.1f} | {r['uniformized_ns']:.1f} "
            f"| {r['speedup']:.2f} |" for r in jsq["rows"]]
    head = "| $n$ | one holding time per event | uniformized | ratio |\n|---|---|---|---|\n"
    vals = {"ratio-min": min(r["speedup"] for r in jsq["rows"]),
            "ratio-max": max(r["speedup"] for r in jsq["rows"]), "load": jsq["load_average"][0]}
    return head + "\n".join(rows), {k: float(v) for k, v in vals.items()}


def lazy_chi2(perm_class, epochs: int = 24_000, seed: int = 2026) -> float:
    """χ² p-value of the ordered pair of servers at positions 2 and 0 of a lazy
    permutation of four, over ``epochs`` resamplings (12 pairs, uniform if
    the permutation is); asserts that a position is cached within an epoch and
    that the two servers differ."""
    perm = perm_class(4, random.Random(seed))
    counts: dict = {}
    for _ in range(epochs):
        perm.resample()
        pair = (perm.server(2), perm.server(0))
        assert perm.server(2) == pair[0]                 # cached within the epoch
        counts[pair] = counts.get(pair, 0) + 1
    assert len(counts) == 12 and all(a != b for a, b in counts)
    return float(chisquare(list(counts.values())).pvalue)


def live_deviation(rh, rq, levels=(1, 2, 3), df: int = 9) -> float:
    """Worst ``|difference| / band`` of two runs' occupancies at ``levels``:
    the band is the Bonferroni t quantile (``df`` degrees of freedom, the
    coarser run's) times the two standard errors combined."""
    z = float(student_t.ppf(1 - 0.05 / (2 * len(levels)), df))
    return max(abs(rh.occupancy[i] - rq.occupancy[i]) / (z * math.hypot(rh.occupancy_se[i], rq.occupancy_se[i]))
               for i in levels)


def agreement_worst(ag: list, z_stored: float, m: int = 18, df: int = 19) -> tuple[float, float]:
    """The Bonferroni quantile ``z`` of ``m`` comparisons (Student t, ``df``
    degrees of freedom) and the worst ``|peer − qlib| / (z·s.e.)`` of the
    stored small-case rows ``ag``; asserts the stored ``z`` and that every row
    lies within its band with a combined s.e. of at most 0.01."""
    z = float(student_t.ppf(1 - 0.05 / (2 * len(ag)), df))
    assert len(ag) == m and abs(z - z_stored) < 1e-12
    worst = 0.0
    for r in ag:
        s = math.hypot(r["peer_se"], r["qlib_se"])
        assert abs(r["peer"] - r["qlib"]) <= z * s and s <= 0.01, r
        worst = max(worst, abs(r["peer"] - r["qlib"]) / (z * s))
    return z, worst


def machine_line(sim: dict) -> str:
    """One line on the machine and the rounds of a stored ``bench_simulate`` run."""
    m = sim["machine"]
    return (f"{m['cpu_model']}, {m['cpu_count']} cores; load average {m['load_average_at_start'][0]:.1f} "
            f"at the start, {m['load_average_at_end'][0]:.1f} at the end; {sim['rounds']} rounds of "
            f"{sim['events_per_cell']:.0e} events per cell")
