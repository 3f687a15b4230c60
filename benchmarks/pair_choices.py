"""Pair approximation of choices=2 at μ = 0 against simulation (writes pair_choices.json).

Graphs: the ring (d = 2), the 45 × 45 torus (d = 4, short cycles) and
random 3- and 4-regular graphs, n ≈ 2000; λ ∈ {0.7, 0.9, 0.95}.  For each: the pair approximation
(qlib.meanfield.pair_choices), the supermarket fluid at μ = ∞ with two
choices (qlib.meanfield.choices) and R independent replications of
simulate(..., choices=2) with a 95 % Student-t interval.  Not run by the
tests; `python benchmarks/pair_choices.py [R]`.  A second part (key
"burn_in_check"; alone: `python benchmarks/pair_choices.py --burn-in-check`)
reruns the λ = 0.95 cells with burn-in 2000 of 4000 to bound the bias
left by the burn-in of the main runs (which start empty, below equilibrium).
``--smoke``: two replications of short runs on small graphs at one load,
written under ``$BENCH_SMOKE_OUT``.
"""
import json
import sys
import time
from pathlib import Path

from qlib import DegreeDistribution, graphs, replicate
from qlib.meanfield import choices
from qlib.meanfield.pair_choices import pair_approximation_choices

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _smoke  # noqa: E402

N, T_END, BURN = 2000, 2000.0, 500.0
LAMS = (0.7, 0.9, 0.95)
if _smoke.SMOKE:   # the same code on small graphs and short runs
    N, T_END, BURN, LAMS = 36, 40.0, 10.0, (0.95,)
ONLY_CHECK = "--burn-in-check" in sys.argv
args = [a for a in sys.argv[1:] if not a.startswith("--")]
R = int(args[0]) if args else _smoke.pick(20, 2)
GRAPHS = {"ring": lambda: graphs.ring(N),
          "torus 45x45": lambda: graphs.torus(6, 6) if _smoke.SMOKE else graphs.torus(45, 45),
          "random 3-regular": lambda: graphs.random_regular(N, 3, seed=3),
          "random 4-regular": lambda: graphs.random_regular(N, 4, seed=4)}
DEGREE = {"ring": 2, "torus 45x45": 4, "random 3-regular": 3, "random 4-regular": 4}
path = _smoke.out(Path(__file__).with_name("pair_choices.json"))
out = json.loads(path.read_text()) if ONLY_CHECK else {"n": N, "t_end": T_END, "burn_in": BURN, "replications": R, "level": 0.95, "rows": []}
for name, make in ({} if ONLY_CHECK else GRAPHS).items():
    g, d = make(), DEGREE[name]
    for lam in LAMS:
        pair = pair_approximation_choices(lam, d).response_time
        fluid = choices.response_time(lam, DegreeDistribution.point(d), 2)
        t = time.perf_counter()
        # kernel="event": the stored runs were made on the event kernel
        rr = replicate(g, lam, 0.0, replications=R, t_end=T_END, burn_in=BURN, choices=2,
                       seed=1000 * len(out["rows"]) + 7, n_jobs=1, kernel="event")
        ci = rr.response_time_ci(0.95)
        sim = float(rr.response_time)
        row = dict(graph=name, n=g.n, degree=d, lam=lam, pair=pair, fluid=fluid, sim=sim,
                   sim_low=ci.low, sim_high=ci.high, pair_rel_err=pair / sim - 1,
                   fluid_rel_err=fluid / sim - 1, ci_half_rel=(ci.high - ci.low) / 2 / sim,
                   seconds=time.perf_counter() - t)
        print(row, flush=True)
        out["rows"].append(row)
        path.write_text(json.dumps(out, indent=1))

out["burn_in_check"] = {"t_end": 2 * T_END, "burn_in": 4 * BURN, "replications": 10, "rows": []}
for name, make in GRAPHS.items():
    g, d, lam = make(), DEGREE[name], 0.95
    rr = replicate(g, lam, 0.0, replications=_smoke.pick(10, 2), t_end=2 * T_END, burn_in=4 * BURN, choices=2,
                   seed=99 + d * 7 + len(name), n_jobs=1, kernel="event")   # as stored: the event kernel
    ci = rr.response_time_ci(0.95)
    main = next(r for r in out["rows"] if r["graph"] == name and r["lam"] == lam)
    row = dict(graph=name, lam=lam, sim=float(rr.response_time), sim_low=ci.low, sim_high=ci.high,
               main_sim=main["sim"], pair=main["pair"],
               pair_rel_err=main["pair"] / float(rr.response_time) - 1,
               shift=main["sim"] / float(rr.response_time) - 1)
    print(row, flush=True)
    out["burn_in_check"]["rows"].append(row)
    path.write_text(json.dumps(out, indent=1))
