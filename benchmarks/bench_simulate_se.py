"""Coverage of simulate()'s own 95 % intervals where the truth is known (issue 22).

The empty graph makes every server an M/M/1 queue, so q(i) = lam**i and the
mean response time is 1/(1 - lam). For each setting, `seeds` independent runs;
the share of runs whose ``occupancy_ci`` covers q(i) (levels 1-5) and whose
``response_time_ci`` covers 1/(1 - lam).

* "fixed 20": the old scheme (20 equal batches, ``batches=20``) in the setting
  where it was found to undercover (n = 50, lam = 0.9, window 3000);
* "auto, short": the new default in the same short run (it warns);
* "auto, long": the new default in runs long enough for it (no warning).

Run: ``.venv/bin/python benchmarks/bench_simulate_se.py`` (about 5 minutes);
writes benchmarks/simulate_se_results.json. ``--smoke`` (with ``simulate``,
``jsq`` or neither): two seeds of one short setting each, written under
``$BENCH_SMOKE_OUT``.

``qlib.halfin_whitt.simulate_jsq`` (``... bench_simulate_se.py jsq``, about
4 minutes; writes benchmarks/simulate_jsq_se_results.json): JSQ on n = 20
servers, truth ``E[n − Q_1] = β√n`` (rate balance) and the exact chain
``stationary_jsq(20, β, tol=1e-8)`` for ``E[Q_2]``, ``E[N − Q_1]``,
``P(Q_1 = n)`` (``p_full``, a time average, and ``p_wait``, over arrivals);
1000 seeds per setting, "fixed 20" (``batches=20``, the scheme before issue
22) against the default "auto", at windows of about 40, 80, 400 and 1500
correlation lengths.
"""
import sys
import json
import time
import warnings
from pathlib import Path

import numpy as np

from qlib import graphs, simulate

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _smoke  # noqa: E402

SETTINGS = [
    ("fixed 20, short", 50, 0.9, 4000.0, 1000.0, 20),
    ("auto, short", 50, 0.9, 4000.0, 1000.0, None),
    ("auto, long", 2, 0.9, 250_000.0, 5000.0, None),
    ("auto, long", 2, 0.5, 20_000.0, 1000.0, None),
]


def coverage(n, lam, t_end, burn_in, batches, seeds):
    true = lam ** np.arange(1, 6)
    occ, resp, reliable = [], [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for s in range(seeds):
            # kernel="event": the stored coverage was measured on the event kernel
            r = simulate(graphs.empty(n), lam, 0.0, t_end=t_end, burn_in=burn_in,
                         seed=s, batches=batches, levels=6, kernel="event")
            occ.append((r.occupancy_ci[0, 1:6] <= true) & (true <= r.occupancy_ci[1, 1:6]))
            lo, hi = r.response_time_ci
            resp.append(lo <= 1 / (1 - lam) <= hi)
            reliable.append(r.se_reliable)
    return (np.mean(occ, axis=0).tolist(), float(np.mean(resp)), float(np.mean(reliable)))


def main(seeds=400):
    out = []
    for name, n, lam, t_end, burn_in, batches in _smoke.pick(SETTINGS, [("auto, short", 5, 0.9, 400.0,
                                                                         100.0, None)]):
        t0 = time.perf_counter()
        occ, resp, rel = coverage(n, lam, t_end, burn_in, batches, seeds)
        row = dict(setting=name, n=n, lam=lam, t_end=t_end, burn_in=burn_in, seeds=seeds,
                   coverage_levels_1_5=occ, coverage_response_time=resp,
                   share_reliable=rel, seconds=time.perf_counter() - t0)
        print(row, flush=True)
        out.append(row)
    _smoke.out(Path(__file__).with_name("simulate_se_results.json")).write_text(json.dumps(out, indent=1))


JSQ_QUANTITIES = ("mean_idle", "mean_q2", "mean_waiting", "p_full", "p_wait")
JSQ_SETTINGS = [  # n, beta, window, burn-in (L is about 1.5 at beta = 2, 13 at 0.5)
    (20, 2.0, 3000.0, 20.0),
    (20, 0.5, 1000.0, 200.0),
    (20, 0.5, 5000.0, 200.0),
    (20, 0.5, 20_000.0, 200.0),
]


def coverage_jsq(n, beta, window, burn_in, batches, seeds):
    from qlib.halfin_whitt import simulate_jsq, stationary_jsq
    st = stationary_jsq(n, beta, tol=1e-8)
    true = dict(mean_idle=beta * n ** 0.5, mean_q2=st.mean_q2,
                mean_waiting=st.mean_waiting, p_full=st.p_wait, p_wait=st.p_wait)
    hits = {q: [] for q in JSQ_QUANTITIES}
    reliable, ks = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for s in range(seeds):
            r = simulate_jsq(n, beta, t_end=window + burn_in, burn_in=burn_in, seed=s,
                             batches=batches, kernel="event")   # the stored results' stream
            for q in JSQ_QUANTITIES:
                lo, hi = getattr(r, q + "_ci")
                hits[q].append(lo <= true[q] <= hi)
            reliable.append(r.se_reliable)
            ks.append(r.batches)
    return ({q: float(np.mean(v)) for q, v in hits.items()}, float(np.mean(reliable)),
            float(np.mean(ks)))


def main_jsq(seeds=1000):
    out = []
    for n, beta, window, burn_in in _smoke.pick(JSQ_SETTINGS, [(5, 1.0, 100.0, 10.0)]):
        for name, batches in (("fixed 20", 20), ("auto", None)):
            t0 = time.perf_counter()
            cov, rel, k = coverage_jsq(n, beta, window, burn_in, batches, seeds)
            row = dict(setting=name, n=n, beta=beta, window=window, burn_in=burn_in,
                       seeds=seeds, coverage=cov, share_reliable=rel, mean_batches=k,
                       seconds=time.perf_counter() - t0)
            print(row, flush=True)
            out.append(row)
    _smoke.out(Path(__file__).with_name("simulate_jsq_se_results.json")).write_text(
        json.dumps(out, indent=1))


if __name__ == "__main__":
    a = _smoke.argv()
    what = a[0] if a else "all"
    if what in ("simulate", "all"):
        main(_smoke.pick(400, 2))
    if what in ("jsq", "all"):
        main_jsq(_smoke.pick(1000, 2))
