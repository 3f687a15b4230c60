"""Run the two Part I experiment chapters with ``FULL = True``.

``chapters/experiments.md`` (FULL: 20 replications per cell instead of 10,
averaging windows twice as long, so the families of checks get more power) and
``chapters/bounded_resampling.md`` (FULL: 20 replications per cell, averaging
windows five times as long, ``n = 10^6`` added to the n-scan) are converted to
scripts with jupytext, their ``FULL = False`` line is switched on, and they are
executed in turn with the chapter directory as working directory; every
``assert`` of the chapter still applies.  With ``FULL = True``
``experiments`` runs its grid of cells through :func:`qlib.sweep` (a Dask
``LocalCluster`` with one process per core; the starts, M/M/1 queues or the
fluid law, are drawn on the workers); ``bounded_resampling`` runs its cells
through :func:`qlib.replicate` as in the build, each replication drawing its
own start.  The script is run by ``runpy`` from ``python -c``, so the
cluster's spawned workers do not re-execute it.  The CPU time (user + sys of
the child; the workers are its children) and the wall time of each are
printed.  Expect many minutes of CPU per chapter.

Usage: ``python benchmarks/experiments_full.py [experiments|bounded_resampling]``
(default: both).  Exits non-zero if a chapter fails.  ``--smoke``: convert
both chapters and check their ``FULL`` switch, and build the paper grid's
points, without running anything (seconds).

The paper's grid itself runs on :func:`qlib.sweep` (Dask; on one machine or a
cluster, resumable from a Zarr store)::

    python benchmarks/experiments_full.py grid [--workers 1,2] [--reps 20]
        [--ns 1500,5000] [--store DIR] [--scheduler tcp://host:8786]
    python benchmarks/experiments_full.py overhead [--points 16]

``grid``: the 18 cells of ``chapters/experiments.md`` (ring, triangles,
double star × n × μ ∈ {0, log log n, log n}, λ = 0.9) with the chapter's
FULL burn-ins, windows and starts (the double star from M/M/1 queues,
``initial="mm1"``), ``--reps`` replications per cell, once per worker count
of ``--workers`` (a LocalCluster of single-threaded processes, started before
the clock runs), printing the wall time and the speed-up. The chapter's
asserts are not applied: that is what the chapter mode is for.
``overhead``: the same cheap points through ``qlib.sweep`` on one worker and
through ``qlib.replicate`` in this process; prints the overhead per point.
``benchmarks/bench_sweep.py`` runs both and writes ``sweep_results.json``.
"""
from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ("experiments", "bounded_resampling")


def run(stem, smoke=False):
    src = ROOT / "chapters" / f"{stem}.md"
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / f"{stem}_full.py"
        subprocess.run([sys.executable, "-m", "jupytext", "--quiet", "--to", "py:percent",
                        "-o", str(script), str(src)], check=True)
        text = script.read_text()
        if "FULL = False" not in text:
            raise RuntimeError(f"{src} has no 'FULL = False' switch")
        script.write_text(text.replace("FULL = False", "FULL = True", 1))
        if smoke:
            print(f"{stem}: converted, FULL switch found")
            return 0
        env = dict(os.environ, MPLBACKEND="Agg")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        w0 = time.perf_counter()
        # from -c, not as __main__ of a file: Dask's spawned workers would import that file
        code = "import runpy, sys; runpy.run_path(sys.argv[1], run_name='chapter_full')"
        rc = subprocess.run([sys.executable, "-c", code, str(script)], cwd=ROOT / "chapters",
                            env=env).returncode
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(f"{stem}: exit {rc}, CPU {cpu:.0f} s, wall {time.perf_counter() - w0:.0f} s", flush=True)
    return rc


# ------------------------------------------------------- qlib.sweep ----
LAM = 0.9


def paper_points(ns=(1500, 5000), full=True):
    """The 18 cells of chapters/experiments.md as explicit sweep points."""
    import math
    mus = {"static": lambda n: 0.0, "loglog": lambda n: math.log(math.log(n)),
           "log": lambda n: math.log(n)}
    pts = []
    for top in ("ring", "triangles", "double star"):
        for n in ns:
            for m, mu_of in mus.items():
                start = "empty"
                if top == "double star":   # hub cap K(n), burn-in 2 K(n) / (1 - λ), M/M/1 start
                    K = round(math.log(LAM * (n - 2) * (1 - LAM) / 2) / math.log(1 / LAM))
                    burn, window, start = round(2 * K / (1 - LAM)), 750, "mm1"
                elif m == "static":
                    burn, window = (250, 400) if top == "ring" else (750, 1000)
                else:
                    burn, window = 200, 300
                window *= 2 if full else 1
                p = {"graph": {"ring": "ring", "triangles": "cliques",
                               "double star": "double_star"}[top],
                     "n": n + (-n) % 3 if top == "triangles" else n,
                     "lam": LAM, "mu": mu_of(n), "burn_in": float(burn),
                     "t_end": float(burn + window), "initial": start}
                if top == "triangles":
                    p["k"] = 3
                pts.append(p)
    return pts


def _cluster(workers):
    from dask.distributed import Client, LocalCluster
    cl = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=":0")
    return cl, Client(cl)


def grid(workers=(1, 2), reps=20, ns=(1500, 5000), store=None, scheduler=None):
    """Time the paper grid on qlib.sweep at each worker count; returns {workers: dict}."""
    import qlib
    pts = paper_points(ns)
    walls, out = {}, {}
    for w in ([None] if scheduler else workers):
        if scheduler:
            from dask.distributed import Client
            cl, client = None, Client(scheduler)
        else:
            cl, client = _cluster(w)
        try:
            client.run(lambda: __import__("qlib.sim.run"))   # imports and numba cache, off the clock
            w0 = time.perf_counter()
            ds = qlib.sweep(pts, replications=reps, t_end=1.0, batches=20, seed=1001,
                            client=client, store=store, progress=False)
            walls[w] = time.perf_counter() - w0
        finally:
            client.close()
            if cl is not None:
                cl.close()
        ev = int(ds.events.sum())
        out[w or scheduler] = dict(points=len(pts), replications=reps, events=ev,
                                   wall_s=walls[w], worker_cpu_s=float(ds.cpu_seconds.sum()),
                                   point_cpu_s=[float(x) for x in ds.cpu_seconds.values])
        print(f"workers {w or scheduler}: {len(pts)} points x {reps} replications, "
              f"{ev / 1e6:.0f} M events, wall {walls[w]:.1f} s, CPU on workers "
              f"{float(ds.cpu_seconds.sum()):.1f} s", flush=True)
    if 1 in walls:
        for w, t in walls.items():
            print(f"speed-up at {w} workers: {walls[1] / t:.2f}")
    return out


def overhead(npts=16):
    import warnings
    import qlib
    from qlib.sim import replicate
    from qlib.sweep import graph_for, point_seed
    pts = [{"graph": "ring", "n": 100, "lam": 0.5, "mu": 1.0 + i} for i in range(npts)]
    kw = dict(replications=2, t_end=10.0)
    cl, client = _cluster(1)
    try:
        client.run(lambda: __import__("qlib.sim.run"))
        qlib.sweep(pts[:1], **kw, seed=0, client=client, progress=False)   # warm the kernel
        w0 = time.perf_counter()
        qlib.sweep(pts, **kw, seed=1, client=client, progress=False)
        t_sweep = time.perf_counter() - w0
    finally:
        client.close()
        cl.close()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        replicate(graph_for(pts[0], 0), 0.5, 1.0, seed=0, n_jobs=1, **kw)   # warm the kernel
        w0 = time.perf_counter()
        for p in pts:
            replicate(graph_for(p, 1), p["lam"], p["mu"], seed=point_seed(1, p), n_jobs=1, **kw)
        t_direct = time.perf_counter() - w0
    print(f"{npts} cheap points (ring n=100, t_end=10, 2 replications): sweep on 1 worker "
          f"{t_sweep:.2f} s, direct replicate {t_direct:.2f} s; overhead per point "
          f"{(t_sweep - t_direct) / npts * 1e3:.0f} ms")
    return dict(points=npts, sweep_s=t_sweep, direct_s=t_direct,
                overhead_per_point_s=(t_sweep - t_direct) / npts)


def _opts(argv):
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("mode")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--ns", default="1500,5000")
    ap.add_argument("--store")
    ap.add_argument("--scheduler")
    ap.add_argument("--points", type=int, default=16)
    return ap.parse_args(argv)


def main(argv):
    if "--smoke" in argv:
        print(f"{len(paper_points())} paper points")
        return max(run(s, smoke=True) for s in CHAPTERS)
    if argv and argv[0] in ("grid", "overhead"):
        o = _opts(argv)
        if o.mode == "overhead":
            overhead(o.points)
        else:
            grid(tuple(int(w) for w in o.workers.split(",")), o.reps,
                 tuple(int(n) for n in o.ns.split(",")), o.store, o.scheduler)
        return 0
    stems = argv or list(CHAPTERS)
    bad = [s for s in stems if s not in CHAPTERS]
    if bad:
        raise SystemExit(f"unknown chapter(s) {bad}; choose from {CHAPTERS}")
    return max(run(s) for s in stems)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
