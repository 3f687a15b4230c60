"""Speed of qlib.simulate on the ring, against a minimal JSQ(2) kernel.

Run: ``python benchmarks/bench_simulate.py [--quick]`` (``make bench``).
Writes ``benchmarks/simulate_results.json`` and prints a table.

* events/s on one core for the ring, n in {1e3, 1e4, 1e5, 1e6} and
  mu in {0, log log n, log n, n, inf}, lam = 0.9, started at the fluid
  equilibrium q* (so the run measures the stationary regime), about
  ``EVENTS`` events per run.  CPU time (``time.process_time``: robust to
  other processes sharing the machine) and wall time are both recorded;
  events/s uses CPU time.  An event is an arrival, a departure or (for
  finite mu) a resampling epoch.
* a baseline: a minimal hand-written numba JSQ(2) kernel on n servers
  (two uniform servers per arrival, the shorter one, ties by a coin; busy
  array for departures; the same O(1) time-integral bookkeeping of the
  occupancy), measured in the same run.  The target of issue 5: qlib on the
  ring at n = 1e4, mu = log n does at least half the baseline's events/s.
* compile time: the first call in a fresh process with an empty numba cache
  (compilation) and with the cache filled (loading), each measured in a
  subprocess.
* memory per server: peak bytes allocated by ``simulate`` (tracemalloc sees
  numpy's buffers) divided by n, at n = 1e6, graph excluded.
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numba
import numpy as np

import qlib
from qlib import graphs as g
from qlib.simulate import simulate

HERE = Path(__file__).resolve().parent
LAM = 0.9
EVENTS = 3e6


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


def _mus(n):
    return [("0", 0.0), ("loglog n", math.log(math.log(n))),
            ("log n", math.log(n)), ("n", float(n)), ("inf", math.inf)]


def _time(fn):
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - c0, time.perf_counter() - w0


def run_ring(n, mu, q):
    G = g.ring(n)
    X0 = _initial(n, q)
    rate = n * (LAM + q[1]) + (mu if math.isfinite(mu) else 0.0)
    t_end = EVENTS / rate
    r, cpu, wall = _time(lambda: simulate(G, LAM, mu, t_end=t_end, seed=1,
                                          initial=X0))
    return dict(n=n, mu=mu, events=r.events, cpu_s=cpu, wall_s=wall,
                events_per_s=r.events / cpu, ns_per_event=1e9 * cpu / r.events)


def run_baseline(n, q):
    X0 = _initial(n, q)
    t_end = EVENTS / (n * (LAM + q[1]))
    (ev, _), cpu, wall = _time(lambda: jsq2_kernel(n, LAM, t_end, 1,
                                                   X0.copy(), 64))
    return dict(n=n, events=int(ev), cpu_s=cpu, wall_s=wall,
                events_per_s=ev / cpu, ns_per_event=1e9 * cpu / ev)


def compile_times():
    """First call in a fresh process: empty cache (compile), then filled."""
    code = ("import time; t=time.perf_counter(); from qlib import graphs, "
            "simulate; simulate(graphs.ring(10), 0.5, 1.0, t_end=1.0, seed=0);"
            " print(time.perf_counter()-t)")
    out = {}
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, NUMBA_CACHE_DIR=d)
        for key in ("compile_s", "cached_s"):
            p = subprocess.run([sys.executable, "-c", code], env=env,
                               capture_output=True, text=True, check=True)
            out[key] = float(p.stdout.strip().splitlines()[-1])
    return out


def memory_per_server(n, q):
    G = g.ring(n)
    X0 = _initial(n, q)
    simulate(g.ring(10), LAM, 1.0, t_end=1.0, seed=0)   # compile/load first
    tracemalloc.start()
    simulate(G, LAM, math.log(n), t_end=0.2, seed=1, initial=X0)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / n


def main(quick=False):
    global EVENTS
    if quick:
        EVENTS = 5e5
    q = qlib.fluid.equilibrium(LAM, qlib.DegreeDistribution.point(2))
    res = {"lam": LAM, "events_per_run": EVENTS,
           "numba": numba.__version__, "machine": os.uname().machine}
    res.update(compile_times())
    # warm both kernels (compile or load from cache) before timing
    simulate(g.ring(10), LAM, 1.0, t_end=1.0, seed=0)
    jsq2_kernel(10, LAM, 1.0, 0, np.zeros(10, np.int64), 64)
    ns = (10**3, 10**4) if quick else (10**3, 10**4, 10**5, 10**6)
    res["ring"] = [run_ring(n, mu, q) for n in ns for _, mu in _mus(n)]
    res["jsq2_baseline"] = [run_baseline(n, q) for n in ns]
    res["memory_bytes_per_server"] = memory_per_server(ns[-1], q)
    base = {b["n"]: b["events_per_s"] for b in res["jsq2_baseline"]}
    tgt = [r for r in res["ring"]
           if r["n"] == 10**4 and r["mu"] == math.log(10**4)][0]
    res["target_ratio"] = tgt["events_per_s"] / base[10**4]
    res["target_met"] = bool(res["target_ratio"] >= 0.5)
    spread = {}
    for n in ns:
        c = [r["ns_per_event"] for r in res["ring"] if r["n"] == n]
        spread[str(n)] = max(c) / min(c)
    res["cost_spread_across_mu"] = spread
    for r in res["ring"]:                    # json has no inf
        r["mu"] = "inf" if math.isinf(r["mu"]) else r["mu"]
    if not quick:
        with open(HERE / "simulate_results.json", "w") as f:
            json.dump(res, f, indent=1)
    # table
    print(f"compile (fresh cache) {res['compile_s']:.2f} s, "
          f"cached first call {res['cached_s']:.2f} s")
    print(f"memory {res['memory_bytes_per_server']:.0f} B/server (n={ns[-1]})")
    names = [nm for nm, _ in _mus(10)]
    print(f"{'n':>8} " + " ".join(f"{'mu=' + nm:>12}" for nm in names)
          + f" {'JSQ(2)':>10}   [M events/s, CPU time]")
    for n in ns:
        row = [r for r in res["ring"] if r["n"] == n]
        print(f"{n:>8} " + " ".join(f"{r['events_per_s'] / 1e6:12.2f}"
                                    for r in row)
              + f" {base[n] / 1e6:10.2f}")
    print(f"target (n=1e4, mu=log n vs JSQ(2)): ratio "
          f"{res['target_ratio']:.2f} (>= 0.5: {res['target_met']})")
    print("cost spread across mu (max/min ns per event): "
          + ", ".join(f"n={k}: {v:.2f}" for k, v in spread.items()))
    return res


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
