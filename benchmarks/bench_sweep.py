"""qlib.sweep: speed-up of the paper grid with the number of workers, and the
overhead per point against calling ``replicate`` directly.

* **Paper grid.** The 18 cells of ``chapters/experiments.md`` as its FULL run
  defines them (``experiments_full.paper_points``: ring, triangles, double
  star × n ∈ {1500, 5000} × μ ∈ {0, log log n, log n}, λ = 0.9, the FULL
  burn-ins, windows twice the quick ones, the double star from M/M/1 queues),
  on a LocalCluster of 1 and of 2 single-threaded worker processes (started,
  and the kernels loaded, before the clock runs). The FULL run has 20
  replications per cell; ``--reps R`` (default 4) times the same grid with R
  replications and extrapolates to 20 by the measured cost: a point's work is
  R runs of the same length, so its time is proportional to R, and the
  per-point overhead (below) is added once per point. ``--reps 20`` times the
  FULL run itself.
* **Overhead per point.** Cheap points (ring, n = 100, t_end = 10, two
  replications) through ``qlib.sweep`` on one worker, with and without a Zarr
  store, against ``replicate`` on the same points and seeds in this process;
  ``--rounds`` alternating rounds, median per point.

Writes ``benchmarks/sweep_results.json`` (or ``--out``). The machine's load
average is recorded before and after: on a shared machine the walls, and
above all the speed-up, are lower bounds of what an idle machine gives. So
the JSON also holds a *model* of the idle machine (``idle_estimate``): each
point's measured thread CPU time (``cpu_seconds`` of the sweep, which the
load does not inflate), scaled to 20 replications, plus the measured
per-point overhead, assigned in submission order to the first free worker
(as Dask's scheduler does with equal workers); the makespan at w workers and
the speed-up it implies. ``--recompute`` adds that model to an existing JSON
without timing anything.

Earlier timings of the grid in the same file are kept under ``earlier_runs``.
``benchmarks/sweep_results_full20.json`` holds the FULL grid itself (20
replications, 2 workers: ``--reps 20 --workers 2 --out ...``), which checks
the extrapolation from fewer replications.

Usage: ``python benchmarks/bench_sweep.py [--reps 4] [--workers 1,2]
[--points 32] [--rounds 3] [--skip-grid] [--recompute] [--out FILE] [--smoke]``
(``--smoke``: the overhead of two points, one round, no grid, written under
``$BENCH_SMOKE_OUT``).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from experiments_full import _cluster, grid  # noqa: E402
import _smoke  # noqa: E402

FULL_REPS = 20


def overhead(npts=32, rounds=3):
    """Seconds per point: sweep (1 worker), sweep with a store, direct replicate."""
    import qlib
    from qlib.sim import replicate
    from qlib.sweep import graph_for, point_seed
    pts = [{"graph": "ring", "n": 100, "lam": 0.5, "mu": 1.0 + i} for i in range(npts)]
    kw = dict(replications=2, t_end=10.0)
    t = {"sweep": [], "sweep_store": [], "direct": []}
    cl, client = _cluster(1)
    try:
        client.run(lambda: __import__("qlib.sim.run"))
        qlib.sweep(pts[:1], **kw, seed=0, client=client, progress=False)   # warm the kernel
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            replicate(graph_for(pts[0], 0), 0.5, 1.0, seed=0, n_jobs=1, **kw)
        for r in range(rounds):
            seed = 1 + r   # fresh seeds each round: Dask must not reuse earlier results
            w0 = time.perf_counter()
            qlib.sweep(pts, **kw, seed=seed, client=client, progress=False)
            t["sweep"].append((time.perf_counter() - w0) / npts)
            with tempfile.TemporaryDirectory() as tmp:
                w0 = time.perf_counter()
                qlib.sweep(pts, **kw, seed=seed + 100, client=client, progress=False,
                           store=Path(tmp) / "s.zarr")
                t["sweep_store"].append((time.perf_counter() - w0) / npts)
            w0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                for p in pts:
                    replicate(graph_for(p, seed), p["lam"], p["mu"], seed=point_seed(seed, p),
                              n_jobs=1, **kw)
            t["direct"].append((time.perf_counter() - w0) / npts)
    finally:
        client.close()
        cl.close()
    med = {k: statistics.median(v) for k, v in t.items()}
    out = dict(points=npts, rounds=rounds, point="ring n=100, lam=0.5, t_end=10, 2 replications",
               per_point_s={k: v for k, v in t.items()}, median_per_point_s=med,
               overhead_per_point_s=med["sweep"] - med["direct"],
               overhead_per_point_with_store_s=med["sweep_store"] - med["direct"])
    print(f"overhead per point: sweep {out['overhead_per_point_s'] * 1e3:.0f} ms, "
          f"with a Zarr store {out['overhead_per_point_with_store_s'] * 1e3:.0f} ms "
          f"(direct replicate {med['direct'] * 1e3:.1f} ms per point)", flush=True)
    return out


def idle_estimate(point_cpu_s, reps, overhead_s, workers=(1, 2, 4, 8)):
    """Makespan of the FULL grid on an idle machine, by list scheduling (a model)."""
    import heapq
    cost = [c * FULL_REPS / reps + overhead_s for c in point_cpu_s]
    out = {}
    for w in workers:
        free = [0.0] * w
        for c in cost:   # submission order, each task to the first free worker
            heapq.heappush(free, heapq.heappop(free) + c)
        out[str(w)] = max(free)
    return dict(model="list scheduling of measured per-point CPU x 20/reps + overhead",
                total_cpu_s=sum(cost), makespan_s=out,
                speed_up={w: out["1"] / t for w, t in out.items()},
                largest_point_s=max(cost))


def _add_estimate(res):
    g = res.get("paper_grid")
    if g and "1" in g["by_workers"]:
        one = g["by_workers"]["1"]
        res["idle_estimate"] = idle_estimate(one["point_cpu_s"], g["replications_timed"],
                                             res["overhead"]["overhead_per_point_s"])


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=4)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--points", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--skip-grid", action="store_true")
    ap.add_argument("--recompute", action="store_true")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "sweep_results.json"))
    ap.add_argument("--smoke", action="store_true")
    o = ap.parse_args(argv)
    if o.smoke:
        o.points, o.rounds, o.skip_grid, o.out = 2, 1, True, str(_smoke.out(o.out))
    if o.recompute:
        res = json.loads(Path(o.out).read_text())
        _add_estimate(res)
        Path(o.out).write_text(json.dumps(res, indent=1) + "\n")
        print(json.dumps(res["idle_estimate"], indent=1))
        return 0
    res = dict(date=datetime.now(timezone.utc).isoformat(timespec="seconds"),
               machine=dict(cpus=os.cpu_count(), python=platform.python_version(),
                            platform=platform.platform()),
               load_average_before=os.getloadavg(),
               note="timed on a shared machine (other jobs running: see the load averages); "
                    "walls and speed-ups are lower bounds of an idle machine's")
    res["overhead"] = overhead(o.points, o.rounds)
    if o.skip_grid and Path(o.out).exists():   # keep the grid timed earlier
        old = json.loads(Path(o.out).read_text())
        if "paper_grid" in old:
            res["paper_grid"] = old["paper_grid"]
            res["paper_grid_timed"] = old.get("paper_grid_timed", old["date"])
    if not o.skip_grid:
        workers = tuple(int(w) for w in o.workers.split(","))
        g = grid(workers, o.reps)
        ov = res["overhead"]["overhead_per_point_s"]
        for w, d in g.items():
            npts = d["points"]
            # extrapolate to the FULL run: the work scales with the replications, the
            # per-point overhead does not
            d["wall_full_extrapolated_s"] = (d["wall_s"] - npts * ov / w) * FULL_REPS / o.reps \
                + npts * ov / w if o.reps != FULL_REPS else d["wall_s"]
        res["paper_grid_timed"] = res["date"]
        res["paper_grid"] = dict(
            replications_timed=o.reps, replications_full=FULL_REPS,
            extrapolated=o.reps != FULL_REPS, by_workers={str(w): d for w, d in g.items()})
        if 1 in g:
            res["paper_grid"]["speed_up"] = {str(w): g[1]["wall_s"] / d["wall_s"]
                                             for w, d in g.items()}
    _add_estimate(res)
    if not o.skip_grid and Path(o.out).exists():   # keep earlier timings of the grid
        old = json.loads(Path(o.out).read_text())
        res["earlier_runs"] = old.pop("earlier_runs", []) + (
            [{k: old[k] for k in ("date", "load_average_before", "load_average_after",
                                  "overhead", "paper_grid", "idle_estimate") if k in old}]
            if "paper_grid" in old else [])
    res["load_average_after"] = os.getloadavg()
    Path(o.out).write_text(json.dumps(res, indent=1) + "\n")
    print(f"wrote {o.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
