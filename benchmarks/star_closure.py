"""Fluid → pair → star against simulation on static regular graphs (writes star_closure.json).

The closed-neighbourhood policy (``choices=None``) at μ = 0.  Predictions:
the fluid limit for the point mass δ_d (``qlib.meanfield.fluid``), the pair
approximation (``qlib.meanfield.pair``) and the star approximation
(``qlib.meanfield.star``), all models of the infinite d-regular tree.
Simulation: ``benchmarks/one_or_all.json`` (n ≈ 2000: one random 3- and one
random 4-regular graph, the 45 × 45 torus, the ring; 20 replications of
t_end 2000 after a burn-in of 500; 95 % Student-t interval), not rerun here.

Parts (``nice python benchmarks/star_closure.py PART ...``; each part
replaces its own key of the JSON and keeps the others):

* ``closures``: the three predictions per graph and λ ∈ {0.7, 0.9, 0.95},
  their relative errors against the simulated R with the interval's ends,
  solve times and state sizes (seconds).
* ``finite_n``: the size of the finite-n effect that the n ≈ 2000
  simulation carries: random 3- and 4-regular graphs at λ = 0.9 with
  n ∈ {500, 1000, 2000, 4000} (16 independent graphs per n, 2 replications
  each, the same window), fitted by R(n) = R_∞ + c/n (several minutes).
* ``ring``: the ring's window hierarchy ``ring_window`` L = 2, 3, 4 at
  λ ∈ {0.7, 0.9} (K = 12, 14) with wall and CPU seconds per level, and
  L = 5 ((K + 1)^5 states) in a child process stopped after
  ``--l5-limit SECONDS`` (default 600).

``--smoke``: the ``closures`` part on the first simulated row only, written
under ``$BENCH_SMOKE_OUT``.
"""
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

from qlib import DegreeDistribution, graphs, replicate
from qlib.meanfield import fluid, pair_approximation, ring_window
from qlib.meanfield.star import star_approximation
from qlib.stats import t_quantile

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.resolve()))
import _smoke  # noqa: E402
OUT = _smoke.out(HERE / "star_closure.json")
DEGREE = {"ring": 2, "torus 45x45": 4, "random 3-regular": 3, "random 4-regular": 4}
LAMS = (0.7, 0.9, 0.95)


def load():
    return json.loads(OUT.read_text()) if OUT.exists() else {}


def save(out):
    OUT.write_text(json.dumps(out, indent=1))


def closures():
    sim = json.loads((HERE / "one_or_all.json").read_text())
    rows = []
    for s in _smoke.pick(sim["rows"], sim["rows"][:1]):
        if s["lam"] not in LAMS:
            continue
        d, lam = DEGREE[s["graph"]], s["lam"]
        t = time.perf_counter()
        R_fluid = fluid.response_time(lam, DegreeDistribution.point(d))
        t_fluid = time.perf_counter() - t
        t = time.perf_counter()
        pair = pair_approximation(lam, d)
        t_pair = time.perf_counter() - t
        star = star_approximation(lam, d)
        row = dict(graph=s["graph"], n=s["n"], degree=d, lam=lam, sim=s["sim"], sim_se=s["sim_se"],
                   sim_low=s["sim_low"], sim_high=s["sim_high"], replications=len(s["rep_response"]),
                   fluid=R_fluid, pair=pair.response_time, star=star.response_time,
                   seconds=dict(fluid=t_fluid, pair=t_pair, star=star.seconds),
                   levels=dict(pair=pair.truncation, star=star.truncation),
                   states=dict(pair=(pair.truncation + 1) ** 2, star=star.states),
                   star_top_mass=star.top_mass, star_throughput_gap=star.throughput_gap,
                   star_residual=star.residual)
        for k in ("fluid", "pair", "star"):
            # relative error, and its range over the simulation's 95 % interval
            row[f"rel_{k}"] = row[k] / s["sim"] - 1
            row[f"rel_{k}_range"] = [row[k] / s["sim_high"] - 1, row[k] / s["sim_low"] - 1]
        print(f"{s['graph']:18s} λ={lam}: sim {s['sim']:.4f} fluid {row['rel_fluid']:+.2%} "
              f"pair {row['rel_pair']:+.2%} star {row['rel_star']:+.2%} "
              f"({star.states} states, K={star.truncation}, {star.seconds:.1f} s)", flush=True)
        rows.append(row)
    return dict(source="benchmarks/one_or_all.json", rows=rows)


def finite_n(ns=(500, 1000, 2000, 4000), graphs_per_cell=16, reps=2, lam=0.9):
    """R(n) on independent random graphs (the graph is the independent unit),
    and the weighted least-squares fit R(n) = R_inf + c/n."""
    rows, fits = [], []
    for d in (3, 4):
        cells = []
        for n in ns:
            t = time.perf_counter()
            per_graph = []
            for k in range(graphs_per_cell):
                g = graphs.random_regular(n, d, seed=700 + 10 * d + k + 1000 * n)
                # kernel="event": the stored runs were made on the event kernel
                rr = replicate(g, lam, 0.0, replications=reps, t_end=2000.0, burn_in=500.0,
                               seed=9000 + 100 * d + k + 1000 * n, n_jobs=1, kernel="event")
                per_graph.append([float(r.response_time) for r in rr.results])
            means = np.array(per_graph).mean(axis=1)
            row = dict(degree=d, lam=lam, n=n, graphs=graphs_per_cell, replications=reps,
                       R=float(means.mean()), se=float(means.std(ddof=1) / math.sqrt(means.size)),
                       per_graph=per_graph, seconds=time.perf_counter() - t)
            print({k: v for k, v in row.items() if k != "per_graph"}, flush=True)
            rows.append(row)
            cells.append(row)
        x = np.array([1.0 / c["n"] for c in cells])
        y = np.array([c["R"] for c in cells])
        w = 1.0 / np.array([c["se"] for c in cells]) ** 2
        A = np.stack([np.ones_like(x), x], axis=1)
        cov = np.linalg.inv(A.T @ (A * w[:, None]))
        R_inf, c = cov @ (A.T @ (w * y))
        chi2 = float(np.sum(w * (y - A @ np.array([R_inf, c])) ** 2))
        fit = dict(degree=d, lam=lam, R_inf=float(R_inf), R_inf_se=float(math.sqrt(cov[0, 0])),
                   c=float(c), c_se=float(math.sqrt(cov[1, 1])), chi2=chi2, dof=len(ns) - 2,
                   effect_2000=float(c) / 2000, effect_2000_rel=float(c) / 2000 / float(R_inf),
                   effect_2000_se=math.sqrt(cov[1, 1]) / 2000)
        print(fit, flush=True)
        fits.append(fit)
    return dict(note="R(n) from independent random graphs (graph = unit); fit R(n) = R_inf + c/n "
                "by weighted least squares; effect_2000 = c/2000", rows=rows, fits=fits)


def _ring_L5(lam, K, q):
    """L = 5 in a child process (so that a time limit can stop it)."""
    t, c = time.perf_counter(), time.process_time()
    prev = None
    for L in (3, 4, 5):
        prev = ring_window(lam, L, truncation=K, tol=1e-9, start=prev)
    q.put(dict(R=prev.response_time, residual=prev.residual, iterations=prev.iterations,
               seconds=time.perf_counter() - t, cpu_seconds=time.process_time() - c))


def ring(l5_limit=600.0, lams=(0.7, 0.9)):
    """Window hierarchy L = 2, 3, 4 (and 5 within ``l5_limit`` wall seconds)."""
    import multiprocessing as mp
    KS = {0.7: 12, 0.9: 14}
    sim = {r["lam"]: r for r in json.loads((HERE / "one_or_all.json").read_text())["rows"]
           if r["graph"] == "ring"}
    rows = []
    for lam in lams:
        K, prev = KS[lam], None
        # truncation: the L = 3 window at K and K + 2
        trunc = abs(ring_window(lam, 3, truncation=K).response_time
                    - ring_window(lam, 3, truncation=K + 2).response_time)
        for L in (2, 3, 4):
            t, c = time.perf_counter(), time.process_time()
            r = ring_window(lam, L, truncation=K, tol=1e-9, start=prev)
            rows.append(dict(lam=lam, L=L, levels=K, states=(K + 1) ** L, R=r.response_time,
                             rel=r.response_time / sim[lam]["sim"] - 1, residual=r.residual,
                             iterations=r.iterations, seconds=time.perf_counter() - t,
                             cpu_seconds=time.process_time() - c, truncation_L3=trunc))
            print(rows[-1], flush=True)
            prev = r
        q = mp.Queue()
        proc = mp.Process(target=_ring_L5, args=(lam, K, q))
        t = time.perf_counter()
        proc.start()
        proc.join(l5_limit)
        row = dict(lam=lam, L=5, levels=K, states=(K + 1) ** 5)
        if proc.is_alive():
            proc.terminate()
            proc.join()
            row["skipped"] = f"not done within {l5_limit:.0f} wall seconds (L = 3, 4, 5 from scratch)"
        else:
            res = q.get()
            row.update(res, rel=res["R"] / sim[lam]["sim"] - 1)
        rows.append(row)
        print(row, flush=True)
    return dict(levels={str(k): v for k, v in KS.items()}, simulated={str(k): v["sim"] for k, v in sim.items()},
                note="relative errors against the n = 2000 ring of one_or_all.json; machine shared "
                     "(2 cores, load ~10 while measured): compare cpu_seconds", rows=rows)


if __name__ == "__main__":
    parts = [a for a in sys.argv[1:] if not a.startswith("--")] or ["closures"]
    limit = 600.0
    if "--l5-limit" in sys.argv:
        limit = float(sys.argv[sys.argv.index("--l5-limit") + 1])
        parts = [p for p in parts if p != sys.argv[sys.argv.index("--l5-limit") + 1]]
    out = load()
    for part in parts:
        out[part] = {"closures": closures, "finite_n": finite_n,
                     "ring": lambda: ring(limit)}[part]()
        save(out)
