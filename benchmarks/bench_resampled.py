"""The resampled fast path against the static fast path and the stored-permutation kernel, in one run.

Run: ``nice python benchmarks/bench_resampled.py [--smoke] [--max-n N]``.
Writes ``benchmarks/resampled_results.json`` (``--smoke``: n = 1000, few
events, one round, under ``$BENCH_SMOKE_OUT`` only) and prints a table.

* Model: JSQ over the whole closed neighbourhood (``choices=None``) on the
  ring, λ = 0.9, Exp(1) services, ``n = 10**3 .. 10**7``; resampling rates
  ``mu = 1, log n, inf``.
* Engines, per cell, interleaved in each round (static, then per ``mu``
  old and new): the static fast path, ``simulate_uniformized(ring(n,
  implicit=True), 0.9, 0)``; the stored-permutation kernel ("old"),
  ``qlib.simulate(ring(n), 0.9, mu, kernel="event")`` (lazy epoch-stamped permutation, 24
  bytes per server); the resampled fast path ("new"),
  ``simulate_uniformized(ring(n, implicit=True), 0.9, mu)`` (a lazily
  revealed uniform permutation at finite ``mu``, distinct uniform servers
  at ``mu = inf``; both exact in law).  With a C++ compiler, the project's C++ baseline
  (``benchmarks/cpp/one_neighbour.cpp``, the static one-neighbour policy)
  runs once per ``n`` for context, beside the static fast path's
  one-neighbour run of as many events.
* Cost per event: process CPU time of the call less that of a call a
  thousandth as long (the set-up cancels), divided by the difference of
  their arrivals plus real departures (the same count for every engine),
  the minimum over 3 rounds.
  Every run starts from the same occupancy (the JSQ(3) fixed point) and
  has about ``max(4 10**6, 5 n)`` events.  The machine is shared: the load
  average is recorded before and after, and the costs are upper bounds;
  the ratio new / static measured in the same run is what counts.
* Peak resident set: a fresh process runs the new kernel at ``mu = log n``
  on the implicit ring of ``n = 10**7`` and ``10**8`` servers; recorded is
  its peak (VmHWM) less its resident set before the call, per server.
"""
from __future__ import annotations

import argparse
import functools
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

import qlib  # noqa: E402
from qlib import graphs  # noqa: E402
from qlib.sim import simulate_uniformized  # noqa: E402
import _smoke  # noqa: E402

LAM = 0.9
OUT = HERE / "resampled_results.json"


# "old" is the event kernel (qlib.simulate's default is kernel="auto" now, which runs the
# fast path at mu = inf)
_EVENT = functools.partial(qlib.simulate, kernel="event")


def mus(n):
    """The resampling rates of a row: 1, log n, inf."""
    return {"1": 1.0, "log n": math.log(n), "inf": math.inf}


def start(levels=12):
    """The JSQ(3) fixed point q(i) = λ^((3^i - 1) / 2), as an occupancy vector."""
    return np.array([LAM ** ((3**i - 1) / 2) for i in range(levels)])


def timed(fn, graph, mu, t_end, seed, **kw):
    """One call: its process CPU time, events (arrivals + real departures), R."""
    c0, w0 = time.process_time(), time.perf_counter()
    r = fn(graph, LAM, mu, t_end=t_end, burn_in=0.2 * t_end, seed=seed, initial=start(),
           warn=False, **kw)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    ev = r.arrivals + r.departures
    return {"events": ev, "cpu_s": cpu, "wall_s": wall,
            "response_time": r.response_time, "response_time_se": r.response_time_se}


def cell(fn, graph, mu, t_end, seed, **kw):
    """CPU ns per event of a run less a run of a thousandth of its length
    (the O(n) set-up, the start state and the result's arrays cancel)."""
    full = timed(fn, graph, mu, t_end, seed, **kw)
    short = timed(fn, graph, mu, t_end / 1000, seed, **kw)
    full["ns_per_event"] = 1e9 * (full["cpu_s"] - short["cpu_s"]) / (full["events"] - short["events"])
    return full


def peak_rss(n):
    """Peak resident set per server of a fresh process running the new kernel."""
    code = f"""
import json, math
from qlib import graphs
from qlib.sim import simulate_uniformized
def kb(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1])
simulate_uniformized(graphs.ring(100, implicit=True), {LAM}, 1.0, t_end=5, seed=0, warn=False)
before = kb("VmRSS")
g = graphs.ring({n}, implicit=True)
r = simulate_uniformized(g, {LAM}, math.log({n}), t_end=0.5, seed=1, warn=False, batches=2)
print(json.dumps({{"n": {n}, "rss_before_kb": before, "hwm_kb": kb("VmHWM"), "events": r.events}}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=1200, cwd=str(HERE.parent)).stdout
    d = json.loads(out.strip().splitlines()[-1])
    d["bytes_per_server"] = 1024 * (d["hwm_kb"] - d["rss_before_kb"]) / n
    return d


def cpp_row(exe, n, events):
    """The C++ baseline (static, one neighbour) for ``events`` events."""
    from bench_cpp_baseline import run_cpp
    return run_cpp(exe, n, events, 1, int(0.2 * events), start())


def resampled_table(res):
    """Markdown table of a stored run: CPU ns per event per ``n`` and ``mu``."""
    lines = ["| $n$ | $\\mu$ | static fast path | stored permutation | resampled fast path "
             "| resampled / static |", "|---:|:---|---:|---:|---:|---:|"]
    mu_tex = {"1": "$1$", "log n": "$\\log n$", "inf": "$\\infty$"}
    for r in res["rows"]:
        lines.append(f"| $10^{{{round(math.log10(r['n']))}}}$ | {mu_tex[r['mu']]} | "
                     f"{r['static_ns']:.1f} | {r['old_ns']:.1f} | {r['new_ns']:.1f} | "
                     f"{r['new_over_static']:.2f} |")
    return "\n".join(lines)


def resampled_values(res):
    """The numbers a text cites from a stored run: the largest ratio
    resampled / static, the largest growth of the resampled path's cost
    from the smallest to the largest ``n``, its speed-up over the stored
    permutation (min, max), peak resident bytes per server, the load."""
    rows = res["rows"]
    rss = {d["n"]: d["bytes_per_server"] for d in res["peak_rss"]}
    out = {"ratio-max": max(r["new_over_static"] for r in rows),
           "ratio-min": min(r["new_over_static"] for r in rows),
           "growth-max": max(res["new_growth"].values()),
           "vs-old-min": min(r["old_over_new"] for r in rows),
           "vs-old-max": max(r["old_over_new"] for r in rows),
           "load": max(res["load_before"][0], res["load_after"][0])}
    for m in (10**7, 10**8):
        if m in rss:
            out[f"rss-1e{round(math.log10(m))}"] = rss[m]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--max-n", type=int, default=10**7)
    a = ap.parse_args()
    ns = [10**3] if a.smoke else [10**k for k in range(3, 8) if 10**k <= a.max_n]
    load0 = os.getloadavg()
    cxx = shutil.which("g++")
    tmp = tempfile.mkdtemp() if cxx else None
    exe = None
    if cxx and not a.smoke:
        from bench_cpp_baseline import build
        exe = build(tmp)[0]
    # compile (or load from the cache) every engine before the timed calls
    for fn, g in ((simulate_uniformized, graphs.ring(100, implicit=True)),
                  (_EVENT, graphs.ring(100))):
        for mu in (0.0, 1.0, math.inf):
            timed(fn, g, mu, 5.0, 0)
    timed(simulate_uniformized, graphs.ring(100, implicit=True), 0.0, 5.0, 0, choices=2)
    rows = []
    for n in ns:
        ev = 2 * 10**4 if a.smoke else max(4 * 10**6, 5 * n)
        t_end = ev / (n * (LAM + 1) * 0.95)        # real events are about 95 % of the steps
        ring, ring_csr = graphs.ring(n, implicit=True), graphs.ring(n)
        reps = 1 if a.smoke else 3
        cells = {}
        for rep in range(reps):
            res = [("static", "0", cell(simulate_uniformized, ring, 0.0, t_end, rep))]
            for name, mu in mus(n).items():
                res.append(("old", name, cell(_EVENT, ring_csr, mu, t_end, rep)))
                res.append(("new", name, cell(simulate_uniformized, ring, mu, t_end, rep)))
            for eng, name, d in res:
                k = (eng, name)
                if k not in cells or d["ns_per_event"] < cells[k]["ns_per_event"]:
                    cells[k] = d
        st = cells[("static", "0")]
        for name in mus(n):
            old, new = cells[("old", name)], cells[("new", name)]
            rows.append({"n": n, "mu": name, "mu_value": mus(n)[name],
                         "static_ns": st["ns_per_event"], "old_ns": old["ns_per_event"],
                         "new_ns": new["ns_per_event"],
                         "new_over_static": new["ns_per_event"] / st["ns_per_event"],
                         "old_over_new": old["ns_per_event"] / new["ns_per_event"],
                         "R_old": old["response_time"], "R_old_se": old["response_time_se"],
                         "R_new": new["response_time"], "R_new_se": new["response_time_se"],
                         "events": {"static": st["events"], "old": old["events"],
                                    "new": new["events"]}, "rounds": reps})
        if exe is not None:
            one = cell(simulate_uniformized, ring, 0.0, t_end, 0, choices=2)
            c = cpp_row(exe, n, one["events"])
            for r in rows[-3:]:
                r["static_one_ns"] = one["ns_per_event"]
                r["cpp_one_ns"] = c["cpu_ns_per_event"]
        for r in rows[-3:]:
            print(f"n={n:>9} mu={r['mu']:>5}  static {r['static_ns']:6.1f}  old "
                  f"{r['old_ns']:6.1f}  new {r['new_ns']:6.1f} ns/event  "
                  f"new/static {r['new_over_static']:.2f}", flush=True)
    growth = {name: max(r["new_ns"] for r in rows if r["mu"] == name)
              / min(r["new_ns"] for r in rows if r["mu"] == name) for name in ("1", "log n", "inf")}
    rss = [] if a.smoke else [peak_rss(m) for m in (10**7, 10**8) if m <= 10 * a.max_n]
    out = {"version": 2, "stream": qlib.sim.result.UNIFORMIZED_STREAM,
           "lam": LAM, "graph": "ring", "policy": "whole closed neighbourhood",
           "rows": rows, "new_growth": growth, "peak_rss": rss,
           "load_before": load0, "load_after": os.getloadavg(),
           "machine": {"cpu": platform.processor() or platform.machine(),
                       "cores": os.cpu_count(), "python": platform.python_version()},
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "command": "nice python benchmarks/bench_resampled.py" + (" --smoke" if a.smoke else "")}
    path = _smoke.out(OUT)
    if not a.smoke:
        path.write_text(json.dumps(out, indent=1))
        print("wrote", path)
    print("load average before", load0, "after", out["load_after"])
    if tmp:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
