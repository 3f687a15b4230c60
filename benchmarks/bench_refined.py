"""qlib.meanfield.expansion.refined against rmftool (a script, not a test).

Model: the supermarket model JSQ(2) with sampling *with* replacement, i.e.
``refined(lam, point(1), replacement=True)``, truncated at K levels, the
model of Gast & Van Houdt (2017) and of rmftool's two-choice example.  For
K = 10..60 the script times ``refined`` (best of several repeats) and
rmftool's ``DDPP.meanFieldExpansionSteadyState(order=1)`` (one run: it
differentiates symbolically), compares the two ``V`` vectors, and compares
the mean number of tasks per server ``Σ q* + Σ v / N`` for N = 10..100 with
the values printed in rmftool's two-choice example notebook.  It also times
``refined(0.9, point(2))`` (our model, automatic truncation; target 10 ms)
and ``refined(0.9, point(2), truncation=K)``.

Usage: python benchmarks/bench_refined.py [--full | --smoke]   (--smoke: K = 10
once, rmftool skipped when absent, written under ``$BENCH_SMOKE_OUT``; --full: rmftool up to
K = 60; default up to K = 30, since rmftool's time grows like K^3 or worse).
Writes benchmarks/refined_results.json.  Needs ``pip install -r
benchmarks/requirements.txt`` (rmftool 0.5).
"""

import json
import sys
import time
import timeit
from pathlib import Path

import numpy as np


from qlib.meanfield.degrees import DegreeDistribution
from qlib.meanfield.expansion import refined

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _smoke  # noqa: E402

#: rmftool's Example_2choice notebook, JSQ(2), rho = 0.9, K = 9: refined
#: mean field (1/N) mean queue length at N = 10, 20, 30, 50, 100, and the
#: simulations printed next to it (mean, half-width).
PUBLISHED = {10: (2.751294338309056, 2.8002988932432435, 0.0008554573286234731),
             20: (2.551972988950278, 2.5661521090476196, 0.0006952912345058972),
             30: (2.4855325391640175, 2.4917483370634965, 0.0006116985135404344),
             50: (2.4323801793350093, 2.4349531542857137, 0.000561281776808115),
             100: (2.3925159094632535, 2.3930885321739144, 0.0005005628334353826)}


def best(fn, number, repeat):
    if _smoke.SMOKE:
        number, repeat = 1, 1
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def rmftool_V(K, rho):
    from rmftool import population_processes as rmf
    ddpp = rmf.DDPP()

    def e(i):
        x = np.zeros(K)
        x[i] = 1
        return x
    for i in range(K):
        if i >= 1:
            ddpp.add_transition(e(i), lambda x, i=i: rho * (x[i - 1] ** 2 - x[i] ** 2))
        if i < K - 1:
            ddpp.add_transition(-e(i), lambda x, i=i: x[i] - x[i + 1])
    ddpp.add_transition(e(0), lambda x: rho * (1 - x[0] ** 2))
    ddpp.add_transition(-e(K - 1), lambda x: x[K - 1])
    ddpp.set_initial_state(e(0))
    t0 = time.perf_counter()
    pi, V, _ = ddpp.meanFieldExpansionSteadyState(order=1)
    return np.asarray(pi), np.asarray(V), time.perf_counter() - t0


def main():
    full = "--full" in sys.argv
    rho, d1, d2 = 0.9, DegreeDistribution.point(1), DegreeDistribution.point(2)
    out = {"note": "best-of-repeats for qlib, one run for rmftool; machine shared and loaded",
           "rows": []}
    try:
        import rmftool  # noqa: F401
        have_rmf = True
    except ImportError:
        if not _smoke.SMOKE:
            raise
        have_rmf = False
    for K in _smoke.pick((10, 20, 30, 40, 50, 60), (10,)):
        t_q = best(lambda: refined(rho, d1, replacement=True, truncation=K), 20, 3)
        t_q2 = best(lambda: refined(rho, d2, truncation=K), 20, 3)
        row = {"K": K, "qlib_s": t_q, "qlib_delta2_s": t_q2}
        if (K <= 30 or full) and have_rmf:
            ours = refined(rho, d1, replacement=True, truncation=K)
            pi, V, t_r = rmftool_V(K, rho)
            row.update(rmftool_s=t_r, speedup=t_r / t_q,
                       max_abs_diff_q=float(np.max(np.abs(ours.q[1:] - pi))),
                       max_abs_diff_v=float(np.max(np.abs(ours.v[1:] - V))))
        out["rows"].append(row)
        print(row, flush=True)
    auto = refined(rho, d2)
    out["delta2_auto"] = {"levels": auto.levels, "seconds": best(lambda: refined(rho, d2), 50, 5),
                          "target_s": 0.01}
    r = refined(rho, d1, replacement=True)
    out["published"] = [{"N": N, "qlib": float(rho * r.at(N).response_time), "rmftool_printed": a,
                         "diff": float(rho * r.at(N).response_time) - a, "simulation": s, "sim_hw": h}
                        for N, (a, s, h) in PUBLISHED.items()]
    print(out["delta2_auto"], out["published"], sep="\n")
    _smoke.out(Path(__file__).with_name("refined_results.json")).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
