"""False-alarm rate and power of ht_waiting's θ_n (= ε_n) check over fresh seeds.

The chapter compares ``ε_n = E[Q_3]/E[Q_2]`` from ``R`` independent replications
started from the exact stationary law (``qbook.wait_runs.eps_replications``)
with the exact chain, as a Holm family over the ``n`` whose replications each
expect at least ``K_MIN`` entries into ``Q_3 ≥ 1`` (from the exact chain). This
study reruns that design at one ``n`` with fresh seeds and counts the runs whose
``|t|`` (after the chapter's allowance for the exact value's error) exceeds the
per-test 0.05 critical value and the family's first Holm critical value, and,
for power, the runs that reject a target 25 % off the exact value.

Usage: ``PYTHONPATH=. python benchmarks/bench_eps_replications.py N SEEDS [EVENTS [M [SEED0]]]``;
prints one JSON line. ``--smoke``: ``n = 16``, two seeds of 10^6 events (seconds).
"""
import json
import sys
import time

import numpy as np

from qlib import stats as qs
from qlib.halfin_whitt.waiting import shrink
from qbook.wait_runs import eps_replications, exact_eps

R, BETA = 10, 1.0
if "--smoke" in sys.argv:
    sys.argv[1:] = ["16", "2", "1e6"]
n, seeds = int(sys.argv[1]), int(sys.argv[2])
events = float(sys.argv[3]) if len(sys.argv) > 3 else 3e8
m = int(sys.argv[4]) if len(sys.argv) > 4 else 4      # the family's size in the chapter
base = int(sys.argv[5]) if len(sys.argv) > 5 else 10_000   # the first seed
lam = n - BETA * np.sqrt(n)
t = events / (2 * lam * R)
eps, err, entries = (a[0] for a in exact_eps([n], BETA))
c0 = time.process_time()
est = np.array([eps_replications(n, BETA, t, replications=R, seed=base + s)[:2] for s in range(seeds)])
cpu = time.process_time() - c0
tt = (shrink(est[:, 0], eps, err) - eps) / est[:, 1]
crit1, critm = qs.t_quantile(0.975, R - 1), qs.t_quantile(1 - 0.025 / m, R - 1)
pw = {f: int(np.sum(np.abs(est[:, 0] - f * eps) / est[:, 1] > critm)) for f in (0.8, 1.25)}
print(json.dumps({"n": n, "beta": BETA, "replications": R, "events": events, "seeds": seeds, "seed0": base,
                  "entries_per_replication": float(entries * t), "eps_exact": float(eps),
                  "mean_est": float(est[:, 0].mean()), "sd_est": float(est[:, 0].std(ddof=1)),
                  "mean_se": float(est[:, 1].mean()), "t_mean": float(tt.mean()), "t_sd": float(tt.std(ddof=1)),
                  "over_crit_0.05": int(np.sum(np.abs(tt) > crit1)), "crit_0.05": float(crit1),
                  f"over_crit_holm_m{m}": int(np.sum(np.abs(tt) > critm)), "crit_holm": float(critm),
                  "expected_over_crit_0.05": 0.05 * seeds, "expected_over_holm": 0.05 / m * seeds,
                  "reject_0.8eps": pw[0.8], "reject_1.25eps": pw[1.25], "cpu_s": cpu,
                  "t": [round(float(x), 3) for x in tt]}))
