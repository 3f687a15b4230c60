"""qlib against a hand-written C++ simulator of the one-neighbour policy, in one run.

Run: ``python benchmarks/bench_cpp_baseline.py [--quick | --smoke] [--max-n N]``.
Writes ``benchmarks/cpp_baseline.json`` (not with ``--quick`` or ``--smoke``;
``--smoke``: n = 1000, few events, one round, no peak-RSS processes) and
prints a table.  Builds ``benchmarks/cpp/one_neighbour.cpp`` with
``g++ -O3 -march=native`` into a temporary folder (never by ``make book`` or
``make test``).

* Policy: ``choices=2`` (an arrival at a uniform server compares it with one
  uniformly chosen neighbour and joins the shorter, ties uniform), Exp(1)
  services, static ring (mu = 0), lambda = 0.9, n = 1e3 ... 1e7.  qlib runs
  ``qlib.simulate(qlib.graphs.ring(n), 0.9, 0.0, t_end=T, choices=2, kernel="event")``; the
  C++ program runs exactly as many events (arrivals + real departures) as
  qlib's run reported.  Both uniformize departures (a departure candidate is
  a uniform server; no busy list).
* Start: both draw the start i.i.d. from the same occupancy (the ring's
  equilibrium, measured by a pilot qlib run at n = 1e3), so the two runs have
  the same initial law and burn-in fraction, and their mean queue lengths
  have the same expectation whatever bias the burn-in leaves.
* Cost per event: process CPU time per event (the machine is shared; wall
  time is recorded too).  qlib's CPU time is that of the whole
  ``simulate`` call (its O(n) set-up included), after one warm-up call whose
  time is the compile (or cache-load) time, recorded separately.  The C++
  time is its event loop's.  Cells are interleaved (qlib, C++, qlib ...),
  ``REPS`` rounds at n <= 1e6, the minimum is reported, all rounds kept.
* Speed ratio = C++ CPU time per event / qlib CPU time per event (> 1: qlib
  is faster; the target of the kernel work is >= 2).
* Agreement of the mean queue lengths: the asymptotic variance of the time
  average, sigma2 = n W se^2 (W the averaged window), is measured on the
  long n = 1e3 runs (W of about 300 correlation times), pooled over qlib and
  C++; at every n the standard error of each run is taken as
  sqrt(sigma2 / (n W)) (an upper bound when W is not long against the
  correlation time), and the runs agree when |difference| <= 3 sqrt(2) of it.
  Each run's own batch-means standard error is recorded too.
* Memory: the peak bytes per server that a short qlib ``simulate`` call
  allocates (``tracemalloc``, which sees numpy's arrays; run after the timed
  calls, the graph's own bytes per server recorded apart); the C++ process's
  peak resident set (VmHWM, its 4 bytes per server plus the program).
* Context: qlib's whole-neighbourhood policy (``choices=None``) on the same
  ring, lambda and ``t_end``, same timing.
* Version 2: qlib's uniformized fast path for static graphs,
  ``qlib.sim.simulate_uniformized`` (one 64-bit draw per step, a ``uint8``
  queue length per server, ring neighbours computed), both policies, timed
  in the same rounds (order per round: new one-neighbour, C++, new
  whole-neighbourhood, old one-neighbour, old whole-neighbourhood; the C++
  runs as many events as the new one-neighbour run).  The fields of
  version 1 keep their meaning (``qlib_*``: ``qlib.simulate``'s event kernel);
  ``qlib_new_*`` are the fast path's, ``speed_ratio_new`` = C++ CPU time
  per event / the fast path's, ``state_bytes_per_server`` its running
  state (the returned ``int32`` final queues come on top: see
  ``qlib_new_memory``).
* Version 3: the fast path runs on the implicit ring
  (``qlib.graphs.ring(n, implicit=True)``: no adjacency arrays; the old
  kernel keeps the CSR ring), and a second C++ build joins every round:
  the same program compiled with ``-DSTD_RANDOM``, which draws its random
  numbers the textbook way (``std::mt19937_64`` with the standard
  library's distributions) instead of the hand-picked xoshiro256** and
  multiply-shift of the default build (``cpp_std_*``, ``speed_ratio_std``
  = its CPU time per event / the fast path's).  Order per round: fast path
  one-neighbour, C++, C++ textbook, fast path whole-neighbourhood, old one,
  old whole.  ``peak_rss``: at n = 1e7 and 1e8, a fresh process imports
  qlib, compiles the fast path at n = 100, reads its resident set, runs
  the fast path on the implicit ring (one-neighbour, about 2 steps per
  server) and reads its peak resident set (VmHWM); the bytes per server
  are the growth over n.  The C++ builds' peak resident sets at the same n
  are recorded too.
"""
import argparse
import json
import functools
import os
import platform
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

import qlib  # noqa: E402
from qlib import graphs as g  # noqa: E402
from qlib.sim import simulate_uniformized  # noqa: E402
from qlib.sim.uniformized import STATE_BYTES_PER_SERVER  # noqa: E402

LAM = 0.9
NS = (10**3, 10**4, 10**5, 10**6, 10**7)
REPS = 2                      # timing rounds at n <= 1e6 (one at 1e7)
BURN = 0.2                    # burn-in fraction of t_end


def events_for(n):
    """Events per cell: 2e7, and at least 20 per server (t_end >= 11)."""
    return max(2 * 10**7, 20 * n)


def status_kb(*keys):
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            k = line.split(":")[0]
            if k in keys:
                out[k] = int(line.split()[1])
    return out


def build(tmp, std=False):
    exe = Path(tmp) / ("one_neighbour_std" if std else "one_neighbour")
    flags = ["-O3", "-march=native"] + (["-DSTD_RANDOM"] if std else [])
    subprocess.run(["g++", *flags, "-o", str(exe), str(HERE / "cpp" / "one_neighbour.cpp")],
                   check=True)
    ver = subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    return exe, " ".join(["g++", *flags]), ver


def peak_rss(n):
    """Peak resident set of a fresh process that runs the fast path on the
    implicit ring of ``n`` servers (see the module notes): a dict."""
    code = f"""
import json, numpy as np
from qlib import graphs
from qlib.sim import simulate_uniformized
def kb(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1])
simulate_uniformized(graphs.ring(100, implicit=True), {LAM}, t_end=5, seed=0, choices=2, warn=False)
before = kb("VmRSS")
g = graphs.ring({n}, implicit=True)
r = simulate_uniformized(g, {LAM}, t_end=1.0, seed=1, choices=2, warn=False, batches=2)
print(json.dumps({{"n": {n}, "rss_before_kb": before, "hwm_kb": kb("VmHWM"),
                  "events": r.events, "graph_built": g._csr is not None}}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=900, cwd=str(HERE.parent)).stdout
    d = json.loads(out.strip().splitlines()[-1])
    d["bytes_per_server"] = 1024 * (d["hwm_kb"] - d["rss_before_kb"]) / n
    return d


def run_cpp(exe, n, events, seed, burn, q):
    qs = ",".join(f"{x:.10g}" for x in q[1:])
    out = subprocess.run([str(exe), str(n), str(LAM), str(events), str(seed), str(burn), qs],
                         capture_output=True, text=True, check=True, timeout=600).stdout
    d = dict(kv.split("=") for kv in out.split())
    return {k: (int(v) if k in ("n", "events", "steps", "maxrss_kb") else float(v))
            for k, v in d.items()}


# the event kernel, as the stored numbers were made (qlib.simulate's default is kernel='auto'
# now, which would run the fast path here; the fast path is timed as simulate_uniformized)
_EVENT = functools.partial(qlib.simulate, kernel="event")


def run_qlib(graph, t_end, seed, x0, choices, fn=_EVENT):
    c0, w0 = time.process_time(), time.perf_counter()
    r = fn(graph, LAM, 0.0, t_end=t_end, burn_in=BURN * t_end, seed=seed,
           initial=x0, choices=choices, warn=False)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    return {"events": r.events, "cpu_s": cpu, "wall_s": wall, "kernel_wall_s": r.wall_time,
            "cpu_ns_per_event": 1e9 * cpu / r.events, "ns_per_event": 1e9 * wall / r.events,
            "mean_queue": r.mean_queue_length, "mean_queue_se": r.mean_queue_length_se}


def qlib_memory(graph, x0, choices, fn=_EVENT):
    """Peak bytes per server that one short ``simulate`` call allocates
    (tracemalloc sees numpy's arrays; the graph, built before, is not
    counted), and the process's resident set before and after."""
    rss0 = status_kb("VmRSS")["VmRSS"]
    tracemalloc.start()
    fn(graph, LAM, 0.0, t_end=1.0, seed=3, initial=x0, choices=choices, warn=False)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {"call_peak_bytes_per_server": peak / graph.n, "rss_before_kb": rss0,
            "rss_after_kb": status_kb("VmRSS")["VmRSS"],
            "graph_bytes_per_server": 0.0 if isinstance(graph, g.ImplicitGraph)
            else (graph.indptr.nbytes + graph.indices.nbytes) / graph.n}


def cpp_panel(res, ax, glue=None, prefix=""):
    """Draw CPU ns per event against n from a stored ``cpp_baseline.json``
    (version 3) on ``ax``; return the numbers a text cites (and glue each
    as ``prefix + key`` when ``glue`` is given): the C++ / fast path speed
    ratios (min, max, at the largest n; the textbook C++ build's min and
    max), the peak resident bytes per server at n = 1e7 and 1e8 (fast
    path; the C++ at 1e8), the fast path's ns per event at the
    largest n, its growth from the smallest to the largest n (both
    policies) and its speed-up over ``qlib.simulate`` (min, max)."""
    pts = res["points"]
    ns = [p["n"] for p in pts]
    for key, label, style in (("qlib_new_ns", "qlib fast path, one neighbour", "C0-o"),
                              ("qlib_new_all_ns", "qlib fast path, whole neighbourhood", "C0--s"),
                              ("cpp_ns", "C++, one neighbour, hand-picked random numbers", "k-^"),
                              ("cpp_std_ns", "C++, one neighbour, standard-library random numbers",
                               "k:v"),
                              ("qlib_ns", "qlib.simulate, one neighbour", "0.6")):
        ax.plot(ns, [p[key] for p in pts], style, label=label)
    ax.set(xscale="log", yscale="log", xlabel="servers $n$", ylabel="CPU ns per event")
    ax.legend(fontsize=8)
    ratio = [p["speed_ratio_new"] for p in pts]
    std = [p["speed_ratio_std"] for p in pts]
    rss = {d["n"]: d for d in res["peak_rss"]}
    out = {"ratio-min": min(ratio), "ratio-max": max(ratio), "ratio-top": ratio[-1],
           "std-ratio-min": min(std), "std-ratio-max": max(std),
           "rss-1e7": rss[10**7]["bytes_per_server"], "rss-1e8": rss[10**8]["bytes_per_server"],
           "cpp-rss-1e8": 1024 * rss[10**8]["cpp_maxrss_kb"] / 10**8,
            "new-top": pts[-1]["qlib_new_ns"],
            "growth": pts[-1]["qlib_new_ns"] / pts[0]["qlib_new_ns"],
            "growth-all": pts[-1]["qlib_new_all_ns"] / pts[0]["qlib_new_all_ns"],
            "vs-old-min": min(p["speed_ratio_new_vs_old"] for p in pts),
            "vs-old-max": max(p["speed_ratio_new_vs_old"] for p in pts),
            "bytes-top": pts[-1]["qlib_new_memory"]["call_peak_bytes_per_server"],
            "load": max(p["load"][0] for p in pts)}
    for key, val in out.items() if glue is not None else ():
        glue(prefix + key, float(val), display=False)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--max-n", type=float, default=1e7)
    ap.add_argument("--new-only", action="store_true",
                    help="time only the fast path and the C++ (no old kernel)")
    ap.add_argument("--smoke", action="store_true")
    a = ap.parse_args()
    global REPS
    if a.smoke:
        a.quick, a.max_n, REPS = True, 1e3, 1
    ns = [n for n in NS if n <= a.max_n]
    ev = (lambda n: 2 * 10**4) if a.smoke else (lambda n: 10**6) if a.quick else events_for
    res = {"version": 2, "lam": LAM, "mu": 0.0, "graph": "ring", "burn_fraction": BURN,
           "qlib_new_function": "qlib.sim.simulate_uniformized",
           "state_bytes_per_server": STATE_BYTES_PER_SERVER,
           "machine": {"cpu": platform.processor() or platform.machine(),
                       "load_start": os.getloadavg()}, "points": []}
    res["version"] = 3
    tmp = tempfile.mkdtemp()
    exe, res["cpp_flags"], res["cpp_compiler"] = build(tmp)
    exe_std, res["cpp_std_flags"], _ = build(tmp, std=True)
    # warm-up: compile (or load from numba's cache), both policies
    c0, w0 = time.process_time(), time.perf_counter()
    for ch in (2, None):
        _EVENT(g.ring(100), LAM, 0.0, t_end=5, seed=0, choices=ch, warn=False)
    res["qlib_compile"] = {"cpu_s": time.process_time() - c0, "wall_s": time.perf_counter() - w0}
    c0, w0 = time.process_time(), time.perf_counter()
    for ch in (2, None):     # the fast path: both state widths of the index arrays' kernels
        simulate_uniformized(g.ring(100), LAM, t_end=5, seed=0, choices=ch, warn=False)
        simulate_uniformized(g.ring(2**17), LAM, t_end=1e-3, seed=0, choices=ch, warn=False,
                             batches=2)
    res["qlib_new_compile"] = {"cpu_s": time.process_time() - c0, "wall_s": time.perf_counter() - w0}
    # pilot: the ring's equilibrium occupancy, the start of every run
    p = _EVENT(g.ring(1000), LAM, 0.0, t_end=2000, burn_in=200, seed=0, choices=2,
                      warn=False)
    q = np.asarray(p.occupancy)
    q = q[q > 1e-9]
    res["start_occupancy"] = q.tolist()
    for n in ns:
        graph = g.ring(n)
        implicit = g.ring(n, implicit=True)
        E = ev(n)
        t_end = E / (2 * LAM * n)
        rng = np.random.default_rng(n)
        x0 = (rng.random(n)[:, None] < q[None, 1:]).sum(axis=1).astype(np.int32)
        rounds = {"qlib_new": [], "cpp": [], "cpp_std": [], "qlib_new_all": [], "qlib": [],
                  "qlib_all": []}
        for rep in range(REPS if n <= 10**6 else 1):
            rounds["qlib_new"].append(run_qlib(implicit, t_end, 1, x0, 2, simulate_uniformized))
            nev = rounds["qlib_new"][0]["events"]
            rounds["cpp"].append(run_cpp(exe, n, nev, 2, round(BURN * nev), q))
            rounds["cpp_std"].append(run_cpp(exe_std, n, nev, 2, round(BURN * nev), q))
            rounds["qlib_new_all"].append(run_qlib(implicit, t_end, 1, x0, None,
                                                   simulate_uniformized))
            if not a.new_only:
                rounds["qlib"].append(run_qlib(graph, t_end, 1, x0, 2))
                rounds["qlib_all"].append(run_qlib(graph, t_end, 1, x0, None))
            print(n, "load", os.getloadavg(), flush=True)
            for k in rounds:
                if rounds[k]:
                    print(n, k, {x: round(y, 4) for x, y in rounds[k][-1].items()}, flush=True)
        if a.new_only:
            del rounds["qlib"], rounds["qlib_all"]
        best = {k: min(v, key=lambda d: d["cpu_s"]) for k, v in rounds.items()}
        new = {
            "qlib_new_ns": best["qlib_new"]["cpu_ns_per_event"],
            "qlib_new_all_ns": best["qlib_new_all"]["cpu_ns_per_event"],
            "speed_ratio_new": best["cpp"]["cpu_ns_per_event"] / best["qlib_new"]["cpu_ns_per_event"],
            "speed_ratio_new_all": best["cpp"]["cpu_ns_per_event"]
            / best["qlib_new_all"]["cpu_ns_per_event"],
            "cpp_std_ns": best["cpp_std"]["cpu_ns_per_event"],
            "cpp_std_mean_queue": best["cpp_std"]["mean_queue"],
            "speed_ratio_std": best["cpp_std"]["cpu_ns_per_event"]
            / best["qlib_new"]["cpu_ns_per_event"],
            "qlib_new_mean_queue": best["qlib_new"]["mean_queue"],
            "qlib_new_all_mean_queue": best["qlib_new_all"]["mean_queue"],
            "qlib_new_memory": qlib_memory(implicit, x0, 2, simulate_uniformized),
            "load": os.getloadavg()}
        if a.new_only:
            res["points"].append({"n": n, "t_end": t_end, "events": best["qlib_new"]["events"],
                                  "cpp_ns": best["cpp"]["cpu_ns_per_event"],
                                  "cpp_mean_queue": best["cpp"]["mean_queue"],
                                  "cpp_maxrss_kb": best["cpp"]["maxrss_kb"], **new,
                                  "rounds": rounds})
            del graph, implicit
            continue
        res["points"].append({
            "n": n, "t_end": t_end, "events": rounds["qlib"][0]["events"],
            "qlib_ns": best["qlib"]["cpu_ns_per_event"], "cpp_ns": best["cpp"]["cpu_ns_per_event"],
            "speed_ratio": best["cpp"]["cpu_ns_per_event"] / best["qlib"]["cpu_ns_per_event"],
            "qlib_all_ns": best["qlib_all"]["cpu_ns_per_event"],
            "qlib_mean_queue": best["qlib"]["mean_queue"], "cpp_mean_queue": best["cpp"]["mean_queue"],
            "qlib_all_mean_queue": best["qlib_all"]["mean_queue"],
            "qlib_memory": qlib_memory(graph, x0, 2),
            "cpp_maxrss_kb": best["cpp"]["maxrss_kb"],
            "speed_ratio_new_vs_old": best["qlib"]["cpu_ns_per_event"]
            / best["qlib_new"]["cpu_ns_per_event"], **new, "rounds": rounds})
        del graph, implicit
    # agreement of the mean queue lengths (see the docstring): sigma2 pooled
    # over the one-neighbour runs at the smallest n (old kernel, fast path, C++)
    p0 = res["points"][0]
    W = (1 - BURN) * p0["t_end"]
    se2 = [p0["rounds"][k][0]["mean_queue_se"] ** 2 for k in ("qlib", "qlib_new", "cpp")
           if k in p0["rounds"]]
    sigma2 = p0["n"] * W * float(np.mean(se2))
    res["sigma2_time_average"] = sigma2
    for pt in res["points"]:
        se = (sigma2 / (pt["n"] * (1 - BURN) * pt["t_end"])) ** 0.5
        pt["mean_queue_se_model"] = se
        for key, pre in (("qlib_mean_queue", "mean_queue"), ("qlib_new_mean_queue", "new_mean_queue")):
            if key in pt:
                pt[pre + "_z"] = (pt[key] - pt["cpp_mean_queue"]) / (2 ** 0.5 * se)
                pt[pre + "_agree"] = bool(abs(pt[pre + "_z"]) <= 3)
    res["peak_rss"] = []
    for n in (10**7, 10**8) if not a.quick else () if a.smoke else (10**6,):
        d = peak_rss(n)
        for key, ex in (("cpp_maxrss_kb", exe), ("cpp_std_maxrss_kb", exe_std)):
            d[key] = run_cpp(ex, n, 10**6, 2, 0, q)["maxrss_kb"]
        res["peak_rss"].append(d)
        print("peak RSS", d, flush=True)
    res["machine"]["load_end"] = os.getloadavg()
    print("n | events | new ns/ev | C++ ns/ev | C++/new | C++ textbook ns/ev | textbook/new | new all-nbhd ns/ev | old ns/ev | "
          "old all ns/ev | new/old speed | E[Q] new | E[Q] C++ | z | new B/server | load")
    for pt in res["points"]:
        old = (f"{pt['qlib_ns']:.1f} | {pt['qlib_all_ns']:.1f} | {pt['speed_ratio_new_vs_old']:.2f}"
               if "qlib_ns" in pt else "- | - | -")
        print(f"{pt['n']:.0e} | {pt['events']:.3g} | {pt['qlib_new_ns']:.1f} | {pt['cpp_ns']:.1f} | "
              f"{pt['speed_ratio_new']:.2f} | {pt['cpp_std_ns']:.1f} | {pt['speed_ratio_std']:.2f} | "
              f"{pt['qlib_new_all_ns']:.1f} | {old} | "
              f"{pt['qlib_new_mean_queue']:.4f} | {pt['cpp_mean_queue']:.4f} | "
              f"{pt['new_mean_queue_z']:+.2f} | "
              f"{pt['qlib_new_memory']['call_peak_bytes_per_server']:.2f} | "
              f"{pt['load'][0]:.1f}")
    print("compile", res["qlib_compile"], res["qlib_new_compile"], "load", res["machine"])
    if not a.quick:
        (HERE / "cpp_baseline.json").write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
