"""Cost per event of qlib.simulate from n = 1e3 to 1e7, before and after the pipeline.

Run: ``python benchmarks/bench_simulate.py [--quick | --issue31 | --smoke]`` (``make bench``).
Writes ``benchmarks/simulate_results.json`` (not with ``--quick`` or
``--smoke``; ``--smoke``: one round of few events at n = 1000, seconds) and
prints a table.

* Three kernels on the ring, lambda = 0.9, started near the fluid
  equilibrium, about ``EVENTS`` events per cell, n in {1e3, ..., 1e7}:
  ``new``: ``qlib.simulate`` (the pipelined kernel), ``old``: the kernel of
  qlib before issue 19, kept verbatim in ``old_simulate_kernel.py``, and
  ``hand``: a plain numba JSQ(2) kernel written the way a user would write
  it (numba's RNG, two uniform servers per arrival, a busy array with
  swap-removal; deliberately not tuned).  ``new`` and ``old`` run for
  mu in {0, log log n, log n, n, inf} (the targets of issue 19 are about
  the four without n).
* Cost per event = user CPU time (``getrusage``) per event, measured as
  the difference between a run of ``t_end`` and one of ``t_end / 10`` (same
  seed, same set-up), so the O(n) set-up (allocation, initial state) is not
  counted.  An event is an arrival, a departure or a resampling epoch of
  finite mu; the new kernel's empty departure candidates are not events.
* The machine may be shared: the cells are interleaved (every kernel and mu
  at one n, then the next n, ``REPS`` rounds), the minimum over rounds is
  reported with all rounds kept, and the load average is recorded at the
  start and at the end.
* ``--issue31`` (issue 31): the interleaved loop of
  :mod:`qlib.sim.interleave` for R = 1, 4, 16 against the lone
  ``simulate`` and the hand JSQ(2) kernel in the same run (process CPU
  time, rounds, min and median), and the set-up time at n = 1e7; merged
  into the JSON under the new keys ``interleave`` and ``setup``.
* Memory: the peak resident set size of a fresh process that builds the
  ring at n = 1e7 and runs ``qlib.simulate`` (mu = log n), against the RSS
  just before the call; and the bytes per server of the kernel's arrays.
"""
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numba
import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

import qlib  # noqa: E402
from benchmarks import old_simulate_kernel as old  # noqa: E402
from qlib import graphs as g  # noqa: E402
from qlib.sim import simulate  # noqa: E402
from qlib.sim.interleave import simulate_interleaved  # noqa: E402

LAM = 0.9
EVENTS = 4e6
REPS = 2
NS = (10**3, 10**4, 10**5, 10**6, 10**7)
MUS = ("0", "log log n", "log n", "n", "inf")
TARGET_MUS = ("0", "log log n", "log n", "inf")   # the targets of issue 19


# ------------------------------------------------------------ baseline ----
@numba.njit(cache=True)
def jsq2_kernel(n, lam, t_end, seed, X, K):
    """Minimal JSQ(2): returns (events, time integral of Q(1..K-1))."""
    np.random.seed(seed)
    B = np.empty(n, np.int64)       # busy servers
    pos = np.full(n, -1, np.int64)  # index of a server in B
    Q = np.zeros(K, np.int64)       # Q[i] = #servers with >= i tasks
    integ = np.zeros(K)
    last = np.zeros(K)
    nb = 0
    for s in range(n):
        for i in range(1, X[s] + 1):
            Q[i] += 1
        if X[s] > 0:
            B[nb] = s
            pos[s] = nb
            nb += 1
    lamn = lam * n
    t = 0.0
    events = 0
    while True:
        rate = lamn + nb
        t -= math.log(1.0 - np.random.random()) / rate
        if t >= t_end:
            break
        events += 1
        u = np.random.random() * rate
        if u < lamn:
            a = np.random.randint(0, n)
            b = np.random.randint(0, n)
            if X[b] < X[a] or (X[b] == X[a] and np.random.random() < 0.5):
                a = b
            lv = X[a] + 1
            integ[lv] += Q[lv] * (t - last[lv])
            last[lv] = t
            Q[lv] += 1
            X[a] = lv
            if lv == 1:
                B[nb] = a
                pos[a] = nb
                nb += 1
        else:
            i = int(u - lamn)
            if i >= nb:
                i = nb - 1
            s = B[i]
            lv = X[s]
            integ[lv] += Q[lv] * (t - last[lv])
            last[lv] = t
            Q[lv] -= 1
            X[s] = lv - 1
            if lv == 1:
                nb -= 1
                B[i] = B[nb]
                pos[B[i]] = i
                pos[s] = -1
    return events, integ


def _initial(n, q):
    """Per-server queue lengths with round(n q(i)) servers >= i, shuffled
    (fixed seed) so that the loaded servers are spread over the ring."""
    cnt = np.minimum.accumulate(np.round(n * q).astype(np.int64))
    X = np.zeros(n, np.int64)
    for i in range(1, cnt.size):
        X[:cnt[i]] = i
    np.random.default_rng(0).shuffle(X)
    return X


def _mu(label, n):
    return {"0": 0.0, "log log n": math.log(math.log(n)), "log n": math.log(n),
            "n": float(n), "inf": math.inf}[label]


def _user():
    return resource.getrusage(resource.RUSAGE_SELF).ru_utime


def _cost(fn, t_end):
    """User CPU ns per event: (run of t_end) - (run of t_end / 10), set-up
    cancels.  User time, not process time: at n = 1e7 the kernel's page
    faults (and the compaction of huge pages behind them) vary by tenths of
    a second of system time on a loaded machine and would swamp the
    difference."""
    out = []
    for t in (t_end / 10, t_end):
        c0 = _user()
        ev = fn(t)
        out.append((_user() - c0, ev))
    (c1, e1), (c2, e2) = out
    return 1e9 * (c2 - c1) / (e2 - e1), int(e2)


def cells_at(n, q, G, X0):
    """One round at size n: every kernel and mu, interleaved."""
    rows = []
    t_end = EVENTS / (n * (LAM + q[1]))
    for lab in MUS:
        mu = _mu(lab, n)
        te = EVENTS / (n * (LAM + q[1]) + (mu if math.isfinite(mu) else 0.0))
        for kern in ("new", "old"):
            if kern == "new":
                # kernel="event": the stored timings are the event kernel's
                fn = lambda t: simulate(G, LAM, mu, t_end=t, seed=1, initial=X0,  # noqa: E731
                                        batches=4, kernel="event").events
            else:
                fn = lambda t: old.run(G, LAM, mu, t, 1, X0)[0]  # noqa: E731
            ns_ev, ev = _cost(fn, te)
            rows.append(dict(kernel=kern, n=n, mu_label=lab, ns_per_event=ns_ev, events=ev))
    ns_ev, ev = _cost(lambda t: jsq2_kernel(n, LAM, t, 1, X0.copy(), 64)[0], t_end)
    rows.append(dict(kernel="hand", n=n, mu_label="-", ns_per_event=ns_ev, events=ev))
    return rows


_RSS = r"""
import gc, json, math, sys, tracemalloc, warnings
sys.path.insert(0, {root!r})
import numpy as np
from qlib import graphs
from qlib.sim import simulate
from benchmarks.bench_simulate import _initial
warnings.simplefilter("ignore")
n = {n}
simulate(graphs.ring(10), 0.9, 1.0, t_end=1.0, seed=0)
G = graphs.ring(n)
X0 = _initial(n, np.array({q}))
gc.collect()
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024
# building the graph peaks higher than the simulation: reset the peak
# (VmHWM) to the current RSS first (Linux >= 4.0)
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
before = status("VmRSS:")
tracemalloc.start()
r = simulate(G, 0.9, math.log(n), t_end=0.5, seed=1, initial=X0)
traced = tracemalloc.get_traced_memory()[1]
peak = status("VmHWM:")
print(json.dumps(dict(n=n, rss_before=before, peak_rss=peak, events=r.events,
                      simulate_traced_peak=traced,
                      graph_bytes=G.indptr.nbytes + G.indices.nbytes)))
"""


def memory(n, q):
    """Peak RSS of a fresh process while it runs simulate at size n (bytes),
    with the graph and the initial state already built (their own
    construction peaks higher and is not counted)."""
    code = _RSS.format(root=str(HERE.parent), n=n, q=[float(x) for x in q])
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       check=True)
    m = json.loads(p.stdout.strip().splitlines()[-1])
    m["peak_minus_before_per_server"] = (m["peak_rss"] - m["rss_before"]) / n
    m["peak_per_server"] = m["peak_rss"] / n
    # every array simulate allocates (numpy reports them to tracemalloc)
    m["simulate_traced_per_server"] = m["simulate_traced_peak"] / n
    # the kernel's per-server arrays: one 16-byte record (slot A, queue
    # length X) and the stamped position entry P (int64); before: X and the
    # busy list (int32), P and A (int64)
    m["state_bytes_per_server"] = 16 + 8
    m["old_state_bytes_per_server"] = 4 + 4 + 8 + 8
    return m


def compile_times():
    """First call in a fresh process: empty cache (compile), then filled."""
    code = ("import time; t=time.process_time(); from qlib import graphs, "
            "simulate; simulate(graphs.ring(10), 0.5, 1.0, t_end=1.0, seed=0);"
            " print(time.process_time()-t)")
    out = {}
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, NUMBA_CACHE_DIR=d)
        for key in ("compile_s", "cached_s"):
            p = subprocess.run([sys.executable, "-c", code], env=env,
                               capture_output=True, text=True, check=True)
            out[key] = float(p.stdout.strip().splitlines()[-1])
    return out


def summarise(cells):
    """Minimum over rounds per (kernel, n, mu); the table; the targets."""
    best = {}
    for c in cells:
        key = (c["kernel"], c["n"], c["mu_label"])
        best.setdefault(key, []).append(c["ns_per_event"])
    rows = [dict(kernel=k, n=n, mu_label=m, ns_per_event=min(v), rounds=v,
                 events_per_s=1e9 / min(v)) for (k, n, m), v in sorted(best.items())]
    cost = {(r["kernel"], r["n"], r["mu_label"]): r["ns_per_event"] for r in rows}
    ns = sorted({r["n"] for r in rows})
    table = []
    for n in ns:
        row = dict(n=n, hand=cost[("hand", n, "-")])
        for k in ("new", "old"):
            for m in MUS:
                row[f"{k} {m}"] = cost[(k, n, m)]
                row[f"{k} {m} / hand speed"] = cost[("hand", n, "-")] / cost[(k, n, m)]
        table.append(row)
    lo, hi = ns[0], ns[-1]
    flat = {k: {m: cost[(k, hi, m)] / cost[(k, lo, m)] for m in MUS} for k in ("new", "old")}
    vs_hand = {k: {str(n): min(cost[("hand", n, "-")] / cost[(k, n, m)] for m in TARGET_MUS)
                   for n in ns} for k in ("new", "old")}
    targets = dict(flat_n=[lo, hi], flat_ratio=flat,
                   flat_met=all(flat["new"][m] <= 2 for m in TARGET_MUS),
                   speed_vs_hand_min_over_mu=vs_hand,
                   speed_vs_hand_met=all(v >= 1.5 for v in vs_hand["new"].values()))
    return rows, table, targets


def scaling_panel(res, ax):
    """CPU ns per event against n from a results dict of :func:`main`: the
    new kernel (solid), the old one (dashed), one colour per mu, and the hand
    JSQ(2) kernel (black, dotted).  Used by ``chapters/performance.md``."""
    cost = {(c["kernel"], c["n"], c["mu_label"]): c["ns_per_event"] for c in res["cells"]}
    ns = sorted({c["n"] for c in res["cells"]})
    for k, m in enumerate(MUS):
        for kern, ls in (("new", "o-"), ("old", "s--")):
            ax.plot(ns, [cost[(kern, n, m)] for n in ns], ls, color=f"C{k}", ms=4,
                    label=f"{'after' if kern == 'new' else 'before'}, μ = {m}")
    ax.plot(ns, [cost[("hand", n, "-")] for n in ns], "k^:", ms=4, label="hand JSQ(2) kernel")
    ax.set(xscale="log", yscale="log", xlabel="n", ylabel="user CPU ns per event")
    ax.legend(fontsize=7, ncol=2)


def main(quick=False, smoke=False):
    global EVENTS, REPS
    ns = NS
    if quick:
        EVENTS, REPS, ns = 5e5, 1, (10**3, 10**5)
    if smoke:
        EVENTS, REPS, ns, quick = 2e4, 1, (10**3,), True
    q = np.asarray(qlib.meanfield.fluid.equilibrium(LAM, qlib.DegreeDistribution.point(2)), float)
    res = {"lam": LAM, "events_per_cell": EVENTS, "rounds": REPS, "numba": numba.__version__,
           "machine": dict(machine=os.uname().machine, cpu_count=os.cpu_count(),
                           load_average_at_start=list(os.getloadavg())),
           "note": ("user CPU ns per event (getrusage), run of t_end minus run of "
                    "t_end/10; minimum over interleaved rounds; the machine was shared "
                    "with other jobs (see the load averages)")}
    for x in open("/proc/cpuinfo"):
        if x.startswith("model name"):
            res["machine"]["cpu_model"] = x.split(":", 1)[1].strip()
            break
    w0 = time.perf_counter()
    if not quick:
        res.update(compile_times())
    # warm every kernel (compile or load from the cache) before timing
    G10 = g.ring(10)
    simulate(G10, LAM, 1.0, t_end=1.0, seed=0)
    old.run(G10, LAM, 1.0, 1.0, 0, np.zeros(10, np.int64))
    jsq2_kernel(10, LAM, 1.0, 0, np.zeros(10, np.int64), 64)
    cells = []
    graphs = {}
    for rnd in range(REPS):
        for n in ns:
            if n not in graphs:
                graphs[n] = (g.ring(n), _initial(n, q))
            cells += cells_at(n, q, *graphs[n])
            print(f"round {rnd} n={n:>8}: " + ", ".join(
                f"{c['kernel']} {c['mu_label']} {c['ns_per_event']:.0f}"
                for c in cells if c["n"] == n)[-400:], flush=True)
            if rnd == REPS - 1:
                del graphs[n]
    res["cells"], res["table"], res["targets"] = summarise(cells)
    res["memory"] = memory(ns[-1], q)
    res["machine"]["load_average_at_end"] = list(os.getloadavg())
    res["cpu_s_total"] = resource.getrusage(resource.RUSAGE_SELF).ru_utime
    res["wall_s_total"] = time.perf_counter() - w0
    if not quick:
        (HERE / "simulate_results.json").write_text(json.dumps(res, indent=1) + "\n")
    print(f"{'n':>9} {'hand':>6} " + " ".join(f"{'new ' + m:>12}" for m in MUS)
          + " " + " ".join(f"{'old ' + m:>12}" for m in MUS) + "   [CPU ns per event]")
    for r in res["table"]:
        print(f"{r['n']:>9} {r['hand']:6.0f} " + " ".join(f"{r['new ' + m]:12.0f}" for m in MUS)
              + " " + " ".join(f"{r['old ' + m]:12.0f}" for m in MUS))
    print(json.dumps(res["targets"], indent=1))
    m = res["memory"]
    print(f"peak RSS at n={m['n']}: {m['peak_rss'] / 2**20:.0f} MiB "
          f"({m['peak_per_server']:.1f} B/server; graph {m['graph_bytes'] / m['n']:.0f} "
          f"B/server; simulate added {m['peak_minus_before_per_server']:.1f} B/server)")
    return res


# ------------------------------------------------------- issue 31 ----
IL_NS = (10**3, 10**4, 10**5, 10**6)
IL_RS = (1, 4, 16)
IL_MUS = ("0", "log n", "inf")
IL_EVENTS = 2e6
IL_REPS = 3


def _cpu():
    return time.process_time()


def _cost_cpu(fn, t_end):
    """User CPU ns per event, run of t_end minus run of t_end / 10 with the
    same set-up: the set-up cancels (user time, as in :func:`_cost`: the
    system time of the page faults of R copies of the state varies by more
    than the difference)."""
    out = []
    for t in (t_end / 10, t_end):
        c0 = _user()
        ev = fn(t)
        out.append((_user() - c0, ev))
    (c1, e1), (c2, e2) = out
    return 1e9 * (c2 - c1) / (e2 - e1)


def _il_events(n):
    """Events per cell at size n: at least IL_EVENTS, and at least 3 per
    server of the largest group (R = 16 copies of n servers)."""
    return max(IL_EVENTS, 3.0 * n * max(IL_RS))


def interleave_cells(n, q, G, X0, rs=IL_RS, mus=IL_MUS):
    """One round at size n: the lone simulate, the interleaved loop for
    each R (R runs of EVENTS / R events each, so every cell runs about the
    same number of events) and the hand JSQ(2) kernel, in one run."""
    rows = []
    for lab in mus:
        mu = _mu(lab, n)
        te = _il_events(n) / (n * (LAM + q[1]) + (mu if math.isfinite(mu) else 0.0))
        # kernel="event": the lone event kernel, as stored (and as the interleaved loop runs)
        ns_ev = _cost_cpu(lambda t: simulate(G, LAM, mu, t_end=t, seed=1, initial=X0,  # noqa: E731
                                             batches=4, kernel="event").events, te)
        rows.append(dict(kernel="alone", R=1, n=n, mu_label=lab, ns_per_event=ns_ev))
        for R in rs:
            seeds = list(range(1, R + 1))
            ns_ev = _cost_cpu(lambda t: sum(r.events for r in simulate_interleaved(  # noqa: E731
                G, LAM, mu, t_end=t / R, seeds=seeds, initial=X0, batches=4)), te)
            rows.append(dict(kernel="interleaved", R=R, n=n, mu_label=lab, ns_per_event=ns_ev))
    te = _il_events(n) / (n * (LAM + q[1]))
    ns_ev = _cost_cpu(lambda t: jsq2_kernel(n, LAM, t, 1, X0.copy(), 64)[0], te)
    rows.append(dict(kernel="hand", R=1, n=n, mu_label="-", ns_per_event=ns_ev))
    return rows


def setup_times(n, q, reps=3):
    """CPU seconds of the set-up at size n: building the ring, and a call
    of simulate with t_end so short that it runs no event (argument checks,
    start state, arrays, result), empty start and occupancy start."""
    out = dict(n=n, ring_s=[], simulate_empty_s=[], simulate_occupancy_s=[])
    for _ in range(reps):
        c0 = _cpu()
        G = g.ring(n)
        out["ring_s"].append(_cpu() - c0)
        for key, init in (("simulate_empty_s", None), ("simulate_occupancy_s", q)):
            c0 = _cpu()
            simulate(G, LAM, math.log(n), t_end=1e-12, seed=1, initial=init, batches=4)
            out[key].append(_cpu() - c0)
        del G
    for k in ("ring_s", "simulate_empty_s", "simulate_occupancy_s"):
        v = sorted(out[k])
        out[k + "_min"], out[k + "_median"] = v[0], v[len(v) // 2]
    return out


def issue31(ns=IL_NS, reps=IL_REPS, setup_n=10**7, write=True):
    """The measurements of issue 31, merged into simulate_results.json
    under new keys (``interleave``, ``setup``): the interleaved loop for
    R = 1, 4, 16 against the lone simulate and the hand JSQ(2) kernel, CPU
    time, ``reps`` interleaved rounds with min and median; the set-up time
    at ``setup_n``."""
    q = np.asarray(qlib.meanfield.fluid.equilibrium(LAM, qlib.DegreeDistribution.point(2)), float)
    G10 = g.ring(10)
    simulate(G10, LAM, 1.0, t_end=1.0, seed=0, batches=4)
    simulate_interleaved(G10, LAM, 1.0, t_end=1.0, seeds=[0, 1], batches=4)
    jsq2_kernel(10, LAM, 1.0, 0, np.zeros(10, np.int64), 64)
    load0 = list(os.getloadavg())
    w0 = time.perf_counter()
    cells = []
    for rnd in range(reps):
        for n in ns:
            G, X0 = g.ring(n), _initial(n, q)
            rows = interleave_cells(n, q, G, X0)
            for r in rows:
                r["round"] = rnd
            cells += rows
            print(f"round {rnd} n={n:>8}: " + ", ".join(
                f"{r['kernel']} R={r['R']} {r['mu_label']} {r['ns_per_event']:.0f}"
                for r in rows), flush=True)
            del G, X0
    best = {}
    for c in cells:
        best.setdefault((c["kernel"], c["R"], c["n"], c["mu_label"]), []).append(c["ns_per_event"])
    summary = []
    for (k, R, n, m), v in sorted(best.items()):
        v = sorted(v)
        summary.append(dict(kernel=k, R=R, n=n, mu_label=m, ns_per_event_min=v[0],
                            ns_per_event_median=v[len(v) // 2],
                            events_per_s_per_core=1e9 / v[0], rounds=v))
    cost = {(s["kernel"], s["R"], s["n"], s["mu_label"]): s["ns_per_event_min"] for s in summary}
    ratio = {f"R={R}": {str(n): {m: cost[("alone", 1, n, m)] / cost[("interleaved", R, n, m)]
                                 for m in IL_MUS} for n in ns} for R in IL_RS}
    res = dict(
        interleave=dict(
            note=("user CPU ns per event (getrusage), run of t_end minus run of "
                  "t_end/10 (set-up cancels), max(2e6, 3 n 16) events per cell; ring, lam = 0.9, start near the fluid "
                  "equilibrium; 'interleaved' R: simulate_interleaved with R seeds, each "
                  "run t_end/R, default depth and block; 'alone': simulate; 'hand': the "
                  "plain JSQ(2) kernel; all in one process, cells interleaved, "
                  f"{reps} rounds; the 2-core machine was shared with other jobs "
                  "(load averages)"),
            events_per_cell={str(n): _il_events(n) for n in ns}, load_average_at_start=load0,
            load_average_at_end=list(os.getloadavg()), wall_s=time.perf_counter() - w0,
            cells=cells, summary=summary, interleaved_speed_over_alone=ratio,
            interleaved_always_at_least_as_fast=all(
                x >= 1 for r in ratio.values() for d in r.values() for x in d.values())),
    )
    if setup_n:
        res["setup"] = setup_times(setup_n, q)
        res["setup"]["load_average"] = list(os.getloadavg())
    if write:
        path = HERE / "simulate_results.json"
        d = json.loads(path.read_text())
        d.update(res)
        path.write_text(json.dumps(d, indent=1) + "\n")
    return res


if __name__ == "__main__":
    if "--issue31" in sys.argv:
        issue31()
    else:
        main(quick="--quick" in sys.argv, smoke="--smoke" in sys.argv)
