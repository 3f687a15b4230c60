"""Coverage of ``simulate``'s batch-means interval for R, overall and among the runs it flags ``se_reliable``.

Issue 39 §5. On the complete graph ``K_n`` (JSQ(n): the exact mean response
time from the chain, :func:`qlib.halfin_whitt.stationary_jsq` at
``β = (1 − λ)√n``) and on the M/M/1 queue (``n = 1``, ``R = 1/(1 − λ)``),
``runs`` seeded runs per cell; for each run, whether the 95 %
``response_time_ci`` covers the exact ``R`` and whether the run is flagged
``se_reliable``, under two rules applied to the same run (the same slices):

* **old**: batches of at least ``20 L`` (``L`` the correlation length the run
  measured), 10 to 20 of them, and the flag = enough such batches *and* the
  family-wise 1 % lag-1 test of the batch means passed;
* **new** (today's :func:`qlib.stats.slice_batches
  <qlib.stats.batch.slice_batches>`): batches of at least ``max(20 L, 80 τ)``,
  10 to 20 of them, and the flag = the window holds 10 such batches
  (:func:`qlib.stats.batch.reliable_window`); the lag-1 test is reported, not
  used.

Cells: ``K_20`` at ``λ = 0.9`` with the short window of the issue
(``t_end = 3000``, ``burn_in = 500``) and a long one, ``K_20`` and ``K_50``
at ``λ ∈ {0.9, 0.95}`` with windows long enough for the new flag, and the
M/M/1 queue at ``λ = 0.9``. The coverage's binomial half-width is
``1.96 √(c(1 − c)/runs)``.

Run: ``nice .venv/bin/python benchmarks/bench_se_coverage.py [runs [cells out.json]]``,
or ``... bench_se_coverage.py --smoke`` (a few short runs of two small cells, seconds,
written under ``$BENCH_SMOKE_OUT``)
(default 300 runs; the slow cells use half as many; about ten minutes on one
quiet core); writes ``benchmarks/se_coverage_results.json``. To split the work,
run subsets of cells (``cells``: comma-separated indices into ``CELLS``) into
partial files and join them with ``... bench_se_coverage.py merge a.json b.json``.
"""
import functools
import json
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from qlib import graphs, simulate, stats
from qlib.sim import result as _result
from qlib.stats import batch as _batch

# (name, n, λ, t_end, burn_in, share of the runs)
CELLS = [
    ("K20, lam=0.9, t_end=3000", 20, 0.9, 3000.0, 500.0, 1.0),
    ("K20, lam=0.9, t_end=12000", 20, 0.9, 12000.0, 500.0, 1.0),
    ("K20, lam=0.95, t_end=60000", 20, 0.95, 60000.0, 1000.0, 0.5),
    ("K50, lam=0.9, t_end=10000", 50, 0.9, 10000.0, 500.0, 1.0),
    ("K50, lam=0.95, t_end=40000", 50, 0.95, 40000.0, 1000.0, 0.5),
    ("M/M/1, lam=0.9, t_end=300000", 1, 0.9, 300000.0, 5000.0, 1.0),
]


def old_slice_batches(series, window, *, batches=None, lag1_alpha=0.01, warn=True, stacklevel=2):
    """The rule before issue 39 §5: batches of ``20 L`` (10..20), flag = length and lag-1 test."""
    cols = np.asarray(series, float)
    cols = cols[:, None] if cols.ndim == 1 else cols
    nf = cols.shape[0]
    dt = window / nf
    tested = np.ptp(cols, axis=0) > 0
    if not tested.any():
        tested[0] = True
    bm = stats.batch_means(cols[:, tested], dt, check=False, lag1_alpha=lag1_alpha)
    k, L = bm.n_batches, float(bm.length)
    per = nf // k
    starts = np.arange(k) * per + (nf - k * per)
    out = _batch.SliceBatches(starts, per, k, per * dt, L, float("nan"), float("nan"), True)
    r1 = _batch._lag1(out.means(cols))
    thr, lag_ok = _batch._lag1_test(r1, k, lag1_alpha, tested)
    reliable = bool(per * dt >= 20 * L * (1 - 1e-9) and k >= 10 and lag_ok)
    return _batch.SliceBatches(starts, per, k, per * dt, L, float(np.max(r1[tested])), thr, reliable)


@functools.lru_cache(maxsize=None)
def exact_R(n, lam):
    if n == 1:
        return 1.0 / (1.0 - lam)
    from qlib.halfin_whitt import stationary_jsq
    return float(stationary_jsq(n, (1.0 - lam) * math.sqrt(n)).mean_response)


def _summary(cover, flag, z):
    cover, flag = np.asarray(cover, bool), np.asarray(flag, bool)

    def rate(m):
        k = int(m.sum())
        if k == 0:
            return dict(runs=0, coverage=None, half_width=None)
        c = float(cover[m].mean())
        return dict(runs=k, coverage=c, half_width=1.96 * math.sqrt(max(c * (1 - c), 0.25 / k) / k))

    return dict(overall=rate(np.ones_like(cover)), flagged=rate(flag), unflagged=rate(~flag),
                flagged_share=float(flag.mean()), z_sd=float(np.std(z, ddof=1)))


def run_cell(n, lam, t_end, burn_in, runs, seed0=7000):
    truth = exact_R(n, lam)
    g = graphs.complete(n) if n > 1 else graphs.empty(1)
    cap = {}
    orig = _result._batch_fields       # looked up in qlib.sim.result by every simulator at call time

    def capture(*args, **kw):
        cap["args"], cap["kw"] = args, kw
        return orig(*args, **kw)

    rec = {"old": ([], [], []), "new": ([], [], [])}
    _result._batch_fields = capture
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            for s in range(runs):
                # kernel="event": the stored coverage was measured on the event kernel
                r = simulate(g, lam, 0.0, t_end=t_end, burn_in=burn_in, seed=seed0 + s,
                             kernel="event")
                for name, rule in (("new", None), ("old", old_slice_batches)):
                    if rule is None:
                        f = dict(response_time_ci=r.response_time_ci, se_reliable=r.se_reliable,
                                 mean_response_time=r.mean_response_time, batches=r.batches)
                    else:
                        saved = stats.slice_batches
                        _result.stats.slice_batches = rule
                        try:
                            f = orig(*cap["args"], **cap["kw"])
                        finally:
                            _result.stats.slice_batches = saved
                    lo, hi = f["response_time_ci"]
                    R = f["mean_response_time"]
                    cov, fl, z = rec[name]
                    cov.append(lo <= truth <= hi)
                    fl.append(bool(f["se_reliable"]))
                    # z in standard errors: the half-width is t_{k-1} · se, not 1.96 · se
                    se = (hi - lo) / 2 / float(stats.t_quantile(0.975, f["batches"] - 1))
                    z.append((R - truth) / se)
    finally:
        _result._batch_fields = orig
    return truth, {k: _summary(*v) for k, v in rec.items()}


def main(runs=300, only=None, out_path=None):
    """Run the cells (``only``: their indices in ``CELLS``) and write the JSON
    (``out_path``; by default ``se_coverage_results.json`` beside this file).
    Partial files written with ``only`` are merged by ``merge``."""
    t0 = time.perf_counter()
    path = Path(out_path) if out_path else Path(__file__).with_name("se_coverage_results.json")
    out = dict(runs_per_cell=runs, cells={})
    for i, (name, n, lam, t_end, burn_in, share) in enumerate(CELLS):
        if only is not None and i not in only:
            continue
        t1 = time.perf_counter()
        m = max(20, int(round(runs * share)))
        truth, res = run_cell(n, lam, t_end, burn_in, m)
        out["cells"][name] = dict(n=n, lam=lam, t_end=t_end, burn_in=burn_in, window=t_end - burn_in,
                                  runs=m, exact_R=truth, seconds=time.perf_counter() - t1, **res)
        o, w = res["old"], res["new"]
        fmt = lambda d: "  -  " if d["coverage"] is None else f"{d['coverage']:.3f}"  # noqa: E731
        print(f"{name:32s} runs {m:4d} | old: all {fmt(o['overall'])} flagged {o['flagged_share']:.2f} "
              f"cov|flag {fmt(o['flagged'])} | new: all {fmt(w['overall'])} flagged {w['flagged_share']:.2f} "
              f"cov|flag {fmt(w['flagged'])}  ({time.perf_counter() - t1:.0f} s)", flush=True)
        path.write_text(json.dumps(out, indent=1))
    out["seconds"] = time.perf_counter() - t0
    path.write_text(json.dumps(out, indent=1))
    return out


def merge(paths):
    """Merge partial result files (in the order of ``CELLS``) into ``se_coverage_results.json``."""
    parts = [json.loads(Path(p).read_text()) for p in paths]
    cells = {}
    for p in parts:
        cells.update(p["cells"])
    out = dict(runs_per_cell=parts[0]["runs_per_cell"],
               cells={c[0]: cells[c[0]] for c in CELLS if c[0] in cells},
               seconds=sum(p.get("seconds", 0.0) for p in parts))
    Path(__file__).with_name("se_coverage_results.json").write_text(json.dumps(out, indent=1))
    return out


SMOKE_CELLS = [("K3, lam=0.9, t_end=300", 3, 0.9, 300.0, 50.0, 1.0),
               ("M/M/1, lam=0.9, t_end=3000", 1, 0.9, 3000.0, 100.0, 1.0)]


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--smoke":   # writes under $BENCH_SMOKE_OUT only
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import _smoke
        CELLS[:] = SMOKE_CELLS
        main(4, None, _smoke.out(Path(__file__).with_name("se_coverage_results.json")))
    elif len(sys.argv) > 1 and sys.argv[1] == "merge":
        merge(sys.argv[2:])
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 300,
             {int(i) for i in sys.argv[2].split(",")} if len(sys.argv) > 2 else None,
             sys.argv[3] if len(sys.argv) > 3 else None)
