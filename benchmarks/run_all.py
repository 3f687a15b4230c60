"""Run every benchmark (``make bench``); write ``results.json`` and ``results.png``.

* ``bench_fluid.py`` (the fluid ODE), ``bench_simulate.py`` (the simulator) and
  ``bench_heavy_traffic.py`` (the complete-graph model; skipped if absent) run
  as subprocesses: their output is shown and their exit status and CPU time
  recorded (``bench_simulate.py`` may write ``simulate_results.json``, which is
  copied into ``results.json``);
* ``bench_peers.py`` is imported and run in this process: the agreement checks
  against SimPy, Ciw and plain Python, events per CPU second of every engine,
  the ratios to qlib measured in this run, qlib's cost per event across ``n``
  and ``mu``, memory per server and numba compile times.

Usage: ``python benchmarks/run_all.py [--skip-others]``.  Exits non-zero if
any script failed (``results.json`` is written all the same).
"""
from __future__ import annotations

import datetime
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SCRIPTS = ["bench_fluid.py", "bench_simulate.py", "bench_heavy_traffic.py"]


def machine():
    info = dict(platform=platform.platform(), machine=platform.machine(),
                python=sys.version.split()[0], cpu_count=os.cpu_count())
    try:
        info["cpu_model"] = next(
            line.split(":", 1)[1].strip()
            for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        info["cpu_model"] = platform.processor() or "unknown"
    try:
        mem = next(line for line in open("/proc/meminfo")
                   if line.startswith("MemTotal:"))
        info["memory_gib"] = round(int(mem.split()[1]) / 2**20, 1)
    except (OSError, StopIteration):
        pass
    try:
        info["load_average_at_start"] = list(os.getloadavg())
    except OSError:
        pass
    return info


def versions():
    import numba
    import numpy
    import scipy
    import qlib
    v = dict(numpy=numpy.__version__, numba=numba.__version__,
             scipy=scipy.__version__)
    try:
        from importlib.metadata import version
        v["qlib"] = version("qlib")
    except Exception:  # not installed as a distribution
        v["qlib"] = getattr(qlib, "__version__", "unknown")
    try:
        v["qlib_git"] = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
            capture_output=True, text=True).stdout.strip() or None
    except OSError:
        v["qlib_git"] = None
    # the working tree may differ from HEAD: fingerprint what was measured
    import hashlib
    h = hashlib.sha1()
    for f in sorted((ROOT / "qlib").glob("*.py")):
        h.update(f.name.encode())
        h.update(f.read_bytes())
    v["qlib_sources_sha1"] = h.hexdigest()[:12]
    return v


def run_script(name):
    path = HERE / name
    if not path.exists():
        print(f"== {name}: not present, skipped", flush=True)
        return dict(status="missing")
    print(f"== {name}", flush=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    w0 = time.perf_counter()
    p = subprocess.run([sys.executable, str(path)], cwd=ROOT,
                       capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return dict(status="ok" if p.returncode == 0 else "failed",
                returncode=p.returncode, cpu_s=cpu,
                wall_s=time.perf_counter() - w0, stdout=p.stdout[-20000:])


COLOURS = {"qlib": "C0", "qlib-tasks": "C4", "heapq": "C2", "simpy": "C1", "ciw": "C3"}


def speed_panels(res, ax):
    """Draw events per CPU second (``ax[0]``) and the ratios at n = 1000 (``ax[1]``).

    (a): qlib ÷ peer, the same algorithm in both.  (b): split into the engine
    ratio (per-server qlib ÷ peer, the same algorithm) and the algorithm
    ratio (occupancy chain ÷ per-server qlib, the same engine); the ratio of
    the chain to a peer is their product.  Used by :func:`plot` and by the
    chapter ``performance.md``.
    """
    import numpy as np

    colours = COLOURS
    sp = res["speed"]
    for engine, c in colours.items():
        for model, mk, ls in (("ring", "o", "-"), ("complete", "s", "--")):
            pts = sorted((r["n"], r["events_per_s"]) for r in sp
                         if r["engine"] == engine and r["model"] == model
                         and r["mu_label"] in ("log n", "-"))
            if pts:
                x, y = zip(*pts)
                name = {("qlib", "complete"): "qlib occupancy chain",
                        ("qlib-tasks", "complete"): "qlib per server"}.get((engine, model), engine)
                ax[0].plot(x, y, ls, marker=mk, color=c,
                           label=f"{name}, {'(a) μ = log n' if model == 'ring' else '(b)'}")
    ax[0].set(xscale="log", yscale="log", xlabel="n", ylabel="events per CPU second",
              title="Events per CPU second")
    ax[0].legend(fontsize=6)
    groups = [("ring", "0", "(a) μ = 0"), ("ring", "log n", "(a) μ = log n"),
              ("ring", "inf", "(a) μ = ∞")]
    ratio = {(r["model"], r["mu_label"], r["engine"]): r["ratio"]
             for r in res["ratios"] if r["n"] == 1000}
    split = {r["engine"]: r for r in res.get("ratios_complete", []) if r["n"] == 1000}
    for k, engine in enumerate(("heapq", "simpy", "ciw")):
        vals = [ratio.get((m, lab, engine), np.nan) for m, lab, _ in groups]
        vals.append(split[engine]["engine_ratio"] if engine in split else np.nan)
        ax[1].bar(np.arange(4) + (k - 1) * 0.27, vals, width=0.27,
                  color=colours[engine], label=engine)
    if split:
        ax[1].bar([4], [next(iter(split.values()))["algorithm_ratio"]], width=0.27,
                  color=colours["qlib"], label="chain ÷ qlib per server")
    ax[1].set_xticks(range(5), [g[2] for g in groups]
                     + ["(b) engine:\nqlib per server\n÷ peer",
                        "(b) algorithm:\nchain ÷\nqlib per server"], fontsize=7)
    ax[1].set(yscale="log", ylabel="ratio of events per CPU second",
              title="Speed-up at n = 1000 ((a): qlib ÷ peer)")
    allv = list(ratio.values()) + [r["engine_ratio"] for r in split.values()]
    ax[1].set_ylim(1, 30 * max(allv))
    ax[1].legend(fontsize=7, loc="upper center", ncol=2)
    for y in (100, 1e4):
        ax[1].axhline(y, color="grey", lw=0.8, ls=":")


def plot(res, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 3, figsize=(16, 4.6))
    speed_panels(res, ax)
    for k, lab in enumerate(("0", "log log n", "log n", "n", "inf")):
        pts = sorted((r["n"], r["ns_per_event"]) for r in res["scaling"]
                     if r["mu_label"] == lab)
        if pts:
            x, y = zip(*pts)
            ax[2].plot(x, y, "o-", color=f"C{k}", label=f"μ = {lab}")
    ax[2].set(xscale="log", xlabel="n", ylabel="CPU ns per event",
              title="qlib.simulate on the ring: cost per event")
    ax[2].set_ylim(bottom=0)
    ax[2].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv):
    sys.path.insert(0, str(ROOT))
    skip_others = "--skip-others" in argv
    started = datetime.datetime.now(datetime.timezone.utc)
    res = dict(generated=started.isoformat(timespec="seconds"),
               machine=machine(), versions=versions(),
               note=("events = arrivals + departures + resampling epochs; "
                     "events/s per process CPU second (time.process_time); "
                     "ratio = qlib events/s / peer events/s, same run"))
    others = {}
    if not skip_others:
        for name in SCRIPTS:
            others[name] = run_script(name)
    res["other_benchmarks"] = others
    sim_json = HERE / "simulate_results.json"
    if sim_json.exists():
        try:
            res["simulate_results"] = json.loads(sim_json.read_text())
        except ValueError:
            res["simulate_results"] = "unreadable"
    print("== bench_peers.py", flush=True)
    from benchmarks import bench_peers
    c0 = time.process_time()
    failed = False
    try:
        peers = bench_peers.run()
    except Exception as e:  # still write what there is
        import traceback
        traceback.print_exc()
        peers = dict(error=repr(e))
        failed = True
    res["versions"].update(peers.pop("versions", {}))
    res.update(peers)
    res["bench_peers_cpu_s"] = time.process_time() - c0
    res["total_wall_s"] = (datetime.datetime.now(datetime.timezone.utc)
                           - started).total_seconds()
    out = HERE / "results.json"
    out.write_text(json.dumps(res, indent=1, default=float) + "\n")
    print(f"wrote {out}")
    if "speed" in res:
        plot(res, HERE / "results.png")
        print(f"wrote {HERE / 'results.png'}")
        print(json.dumps(res.get("targets"), indent=1))
    failed |= any(v.get("status") == "failed" for v in others.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
