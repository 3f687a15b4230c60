"""Run every benchmark (``make bench``); write ``results.json`` and ``results.png``.

* ``bench_fluid.py`` (the fluid ODE), ``bench_simulate.py`` (the simulator),
  ``bench_heavy_traffic.py`` (the complete-graph model; skipped if absent)
  and the scripts whose stored results the chapters read
  (``bench_refined.py``, ``bench_occupancy_adaptive.py``: finite_n;
  ``bench_service.py``: the performance appendix's general-service column;
  ``bench_ht_constants.py`` in its four modes and
  ``bench_ht_alternatives.py``: Part II) run as subprocesses: their output is
  shown and their exit status and CPU time recorded (``bench_simulate.py``
  may write ``simulate_results.json``, which is copied into
  ``results.json``). The Part II scripts keep the exact-chain entries they
  find (delete a file to recompute it; ``bench_ht_alternatives.py``
  recomputes entries it recognises as stale) and recompute the rest, which
  takes hours at the largest ``n``;
* ``bench_peers.py`` is imported and run in this process: the agreement checks
  against SimPy, Ciw and plain Python, events per CPU second of every engine,
  the ratios to qlib measured in this run, qlib's cost per event across ``n``
  and ``mu``, memory per server and numba compile times.

Usage: ``python benchmarks/run_all.py [--skip-others | --smoke]``.  Exits non-zero if
any script failed (``results.json`` is written all the same).  ``--smoke``:
the machine and version records, one script in its own smoke mode and
``bench_peers``' smoke run; nothing written (every script's own smoke mode
is run by ``tests/test_benchmarks_smoke.py``).
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
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from benchmarks.plots import COLOURS, plot, speed_panels  # noqa: E402,F401  (chapters import them from here)
SCRIPTS = ["bench_fluid.py", "bench_simulate.py", "bench_heavy_traffic.py",
           "bench_refined.py", "bench_occupancy_adaptive.py", "bench_service.py",
           "bench_ht_constants.py chain", "bench_ht_constants.py grid",
           "bench_ht_constants.py tight", "bench_ht_constants.py paths",
           "bench_ht_alternatives.py", "bench_solver_check.py"]   # "script [arguments]"


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
    script, *args = name.split()
    path = HERE / script
    if not path.exists():
        print(f"== {name}: not present, skipped", flush=True)
        return dict(status="missing")
    print(f"== {name}", flush=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    w0 = time.perf_counter()
    p = subprocess.run([sys.executable, str(path), *args], cwd=ROOT,
                       capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return dict(status="ok" if p.returncode == 0 else "failed",
                returncode=p.returncode, cpu_s=cpu,
                wall_s=time.perf_counter() - w0, stdout=p.stdout[-20000:])


def main(argv):
    sys.path.insert(0, str(ROOT))
    if "--smoke" in argv:
        print(machine(), versions())
        r = run_script("bench_fluid.py --smoke")
        from benchmarks import bench_peers
        bench_peers.smoke()
        return 0 if r["status"] == "ok" else 1
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
