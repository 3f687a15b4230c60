"""Coverage of batch-means intervals and the rate of spurious lag-1 alarms (issue 28 §4).

Before issue 28, ``qlib.stats.batch_means`` *raised* when the lag-1
correlation of any column's batch means exceeded its one-sided 1 % critical
value, and ``simulate``'s batches warned on the same per-column rule; on a
correctly sized run of ``m`` series that fires by chance with probability
up to ``m · 1 %``. Now both use one rule (``qlib.stats.slice_batches`` /
``batch_means``): a warning at family-wise 1 % (Bonferroni over the tested
series), an exception only for a run too short for 10 batches.

The intervals themselves are unchanged by the new rule, so one set of runs
gives both: for each process whose mean is known we record whether the 95 %
interval covers it, whether the *old* rule (``lag1 > lag1_threshold(k,
0.01)`` in some column) would have fired, and whether the *new* one does.

* AR(1), unit variance, ``φ = 0.9`` (4000 and 20 000 steps) and ``0.99``
  (40 000 steps), one column; and three independent ``φ = 0.9`` columns batched
  together (the multi-series case);
* the M/M/1 queue length at ``ρ = 0.9`` over 240 000 time units (about 1300
  ``τ_int``), sampled every 2;
* ``qlib.simulate`` on the empty graph (every server an M/M/1 queue, so
  ``q(i) = λ^i``), ``n = 2``: ``λ = 0.5`` over 20 000 and ``λ = 0.9`` over
  250 000 time units, both long enough for ``se_reliable`` (the series are
  the levels holding >= 1 % of the servers and the mean queue length).

Coverage is per quantity (averaged over the columns, or over q(1..5)); its
s.e. is the binomial one over runs (an under-statement for correlated
columns).

Run: ``.venv/bin/python benchmarks/bench_batch_coverage.py [runs | --smoke]`` (default
400 runs per setting; about 10 minutes on one core); prints a table and
writes ``benchmarks/batch_coverage_results.json``.
"""
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_stats import ar1_paths, mm1_path  # noqa: E402

from qlib import graphs, simulate, stats  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parent))
import _smoke  # noqa: E402
from qlib.stats.batch import _lag1  # noqa: E402


def _rates(cover, short, old, new):
    """cover: per run, one bool per covered quantity (coverage is per quantity);
    short: the run was too short for 10 batches of 20 L; old/new: the lag-1
    alarm by the old (per-column 1 %) and the new (family-wise 1 %) rule. The
    alarm rates are over the runs that were long enough (the runs on which an
    alarm is spurious)."""
    n = len(cover)
    c = float(np.mean(cover))
    ok = ~np.asarray(short, bool)
    return dict(runs=n, coverage=c, coverage_se=float(np.sqrt(c * (1 - c) / n)),
                too_short=float(np.mean(short)), long_runs=int(ok.sum()),
                old_alarm=float(np.mean(np.asarray(old)[ok])) if ok.any() else float("nan"),
                new_alarm=float(np.mean(np.asarray(new)[ok])) if ok.any() else float("nan"))


def batch_means_setting(paths, mean, dt=1.0):
    """Coverage and alarm rates of batch_means over paths (each (N,) or (N, m))."""
    cover, short, old, new = [], [], [], []
    for x in paths:
        bm = stats.batch_means(x, dt, check=False)
        cover.append(np.atleast_1d(bm.covers(mean)))
        r1 = np.atleast_1d(bm.lag1)
        short.append(not (bm.n_batches >= 10 and bm.batch_length >= 20 * bm.length * (1 - 1e-9)))
        old.append(bool(np.any(r1 > stats.lag1_threshold(bm.n_batches, 0.01))))
        new.append(bool(np.any(r1 > bm.lag1_critical)))
    return _rates(cover, short, old, new)


def simulate_setting(lam, t_end, burn_in, runs):
    """Coverage of q(1..5) and R and alarm rates of simulate() on the empty graph, n = 2."""
    true = lam ** np.arange(1, 6)
    cover, cover_r, short, old, new = [], [], [], [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for s in range(runs):
            # kernel="event": the stored coverage was measured on the event kernel
            r = simulate(graphs.empty(2), lam, 0.0, t_end=t_end, burn_in=burn_in, seed=s, levels=6,
                         kernel="event")
            lo, hi = r.occupancy_ci[:, 1:6]
            cover.append((lo <= true) & (true <= hi))
            cover_r.append(r.response_time_ci[0] <= 1 / (1 - lam) <= r.response_time_ci[1])
            b = r.batch_occupancy
            cols = [j for j in range(1, b.shape[1]) if r.occupancy[j] >= 0.01]
            series = np.column_stack([b[:, cols], b[:, 1:].sum(axis=1)])
            short.append(not (r.batch_length >= 20 * r.corr_length * (1 - 1e-9) and r.batches >= 10))
            old.append(bool(np.any(_lag1(series) > stats.lag1_threshold(r.batches, 0.01))))
            new.append(not r.se_reliable and not short[-1])
    out = _rates(cover, short, old, new)
    out["coverage_R"] = float(np.mean(cover_r))
    return out


def main(runs=400):
    t0 = time.perf_counter()
    res = {}
    if _smoke.SMOKE:       # a few short runs through the same code
        res["AR(1) phi=0.9, N=4000"] = batch_means_setting(ar1_paths(0.9, 4000, runs, 11), 0.0)
        res["simulate, empty graph, lam=0.5, window 1900"] = simulate_setting(0.5, 2000.0, 100.0, runs)
        _smoke.out(Path(__file__).with_name("batch_coverage_results.json")).write_text(json.dumps(res))
        return res
    res["AR(1) phi=0.9, N=4000"] = batch_means_setting(ar1_paths(0.9, 4000, runs, 11), 0.0)
    res["AR(1) phi=0.9, N=20000"] = batch_means_setting(ar1_paths(0.9, 20_000, runs, 14), 0.0)
    res["AR(1) phi=0.99, N=40000"] = batch_means_setting(ar1_paths(0.99, 40_000, runs, 12), 0.0)
    three = ar1_paths(0.9, 4000, 3 * runs, 13).reshape(runs, 3, 4000).transpose(0, 2, 1)
    res["AR(1) phi=0.9, 3 columns"] = batch_means_setting(three, 0.0)
    res["M/M/1 rho=0.9, T=240000"] = batch_means_setting(
        (mm1_path(0.9, 240_000.0, 2.0, 1000 + s) for s in range(runs)), 9.0, 2.0)
    res["simulate, empty graph, lam=0.5, window 19000"] = simulate_setting(0.5, 20_000.0, 1000.0, runs)
    res["simulate, empty graph, lam=0.9, window 245000"] = simulate_setting(0.9, 250_000.0, 5000.0,
                                                                           max(50, runs // 2))
    res["_seconds"] = time.perf_counter() - t0
    print(f"{'setting':46s} {'runs':>5s} {'coverage':>15s} {'short':>6s} "
          f"{'old alarms':>11s} {'new alarms':>11s}  (alarm rates over the long runs)")
    for k, v in res.items():
        if k.startswith("_"):
            continue
        print(f"{k:46s} {v['runs']:5d} {v['coverage']:8.3f} ± {v['coverage_se']:.3f} "
              f"{v['too_short']:6.3f} {v['old_alarm']:11.3f} {v['new_alarm']:11.3f}"
              + (f"   (R covered {v['coverage_R']:.3f})" if "coverage_R" in v else ""))
    Path(__file__).with_name("batch_coverage_results.json").write_text(json.dumps(res, indent=1))
    return res


if __name__ == "__main__":
    a = _smoke.argv()
    main(3 if _smoke.SMOKE else int(a[0]) if a else 400)
