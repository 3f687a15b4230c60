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
writes benchmarks/simulate_se_results.json.
"""
import json
import time
import warnings
from pathlib import Path

import numpy as np

from qlib import graphs, simulate

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
            r = simulate(graphs.empty(n), lam, 0.0, t_end=t_end, burn_in=burn_in,
                         seed=s, batches=batches, levels=6)
            occ.append((r.occupancy_ci[0, 1:6] <= true) & (true <= r.occupancy_ci[1, 1:6]))
            lo, hi = r.response_time_ci
            resp.append(lo <= 1 / (1 - lam) <= hi)
            reliable.append(r.se_reliable)
    return (np.mean(occ, axis=0).tolist(), float(np.mean(resp)), float(np.mean(reliable)))


def main(seeds=400):
    out = []
    for name, n, lam, t_end, burn_in, batches in SETTINGS:
        t0 = time.perf_counter()
        occ, resp, rel = coverage(n, lam, t_end, burn_in, batches, seeds)
        row = dict(setting=name, n=n, lam=lam, t_end=t_end, burn_in=burn_in, seeds=seeds,
                   coverage_levels_1_5=occ, coverage_response_time=resp,
                   share_reliable=rel, seconds=time.perf_counter() - t0)
        print(row, flush=True)
        out.append(row)
    Path(__file__).with_name("simulate_se_results.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
