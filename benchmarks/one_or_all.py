"""The whole-neighbourhood policy on the graphs of pair_choices.py (writes one_or_all.json).

The sibling of ``benchmarks/pair_choices.py``, which simulated ``choices=2``
(the arrival's server and one uniformly drawn neighbour): here the same
graphs (the ring, the 45 × 45 torus, random 3- and 4-regular graphs with
the same seeds, n ≈ 2000), the same loads λ ∈ {0.7, 0.9, 0.95}, the same
window (t_end 2000, burn-in 500, empty start) and the default policy
``choices=None`` (join a shortest queue of the closed neighbourhood), R
independent replications (default 20) with a 95 % Student-t interval.
Per cell it stores the per-replication batch means of the response time
(for a burn-in test in the chapter) and the replications' busy fractions
q(1) (for the rate-balance check E q(1) = λ).  Not run by the tests;
``nice python benchmarks/one_or_all.py [R]``.

The replications of a cell run in blocks of 10, block ``b`` from the root
seed ``seed + 100000 b`` (so block 0 is ``replicate(..., replications=10,
seed=seed)``).  To spread the blocks over processes:
``one_or_all.py --block B --out PART.json`` runs block ``B`` alone, and
``one_or_all.py --merge PART.json ...`` gathers the parts into
``one_or_all.json`` (the same numbers as one run with ``R = 10 × parts``).

``one_or_all.py --confirm`` runs blocks 2 and 3 (20 replications with seeds
disjoint from the main runs' blocks 0 and 1) into ``one_or_all_confirm.json``:
the data of the chapter's burn-in halves test alone, whose size (20) was fixed
before they were run.

``one_or_all.py --smoke``: two replications of short runs on small graphs,
one load, written under ``$BENCH_SMOKE_OUT``.
"""
import json
import sys
import time
from pathlib import Path

import numpy as np

from qlib import graphs, replicate
from qlib.stats import t_quantile

N, T_END, BURN = 2000, 2000.0, 500.0
BLOCK = 10
GRAPHS = {"ring": lambda: graphs.ring(N), "torus 45x45": lambda: graphs.torus(45, 45),
          "random 3-regular": lambda: graphs.random_regular(N, 3, seed=3),
          "random 4-regular": lambda: graphs.random_regular(N, 4, seed=4)}
DEGREE = {"ring": 2, "torus 45x45": 4, "random 3-regular": 3, "random 4-regular": 4}
LAMS = (0.7, 0.9, 0.95)
sys.path.insert(0, str(Path(__file__).resolve().parent))
import _smoke  # noqa: E402
if _smoke.SMOKE:   # the same code on small graphs and short runs
    N, T_END, BURN, BLOCK, LAMS = 36, 40.0, 10.0, 2, (0.9,)
    GRAPHS["torus 45x45"] = lambda: graphs.torus(6, 6)
path = _smoke.out(Path(__file__).with_name("one_or_all.json"))


def cell_seed(i):
    return 5000 + 1000 * i + 11


def run_block(b):
    """Rows of block ``b``: per cell the per-replication response times,
    busy fractions q(1) and batch means of the response time."""
    rows = []
    for name, make in GRAPHS.items():
        g, d = make(), DEGREE[name]
        for lam in LAMS:
            t = time.perf_counter()
            # kernel="event": the stored runs were made on the event kernel
            rr = replicate(g, lam, 0.0, replications=BLOCK, t_end=T_END, burn_in=BURN,
                           seed=cell_seed(len(rows)) + 100000 * b, n_jobs=1, kernel="event")
            rows.append(dict(graph=name, n=g.n, degree=d, lam=lam,
                             rep_response=[float(r.response_time) for r in rr.results],
                             rep_q1=[float(r.occupancy[1]) for r in rr.results],
                             batch_response=np.asarray(rr.batch_response_times).tolist(),
                             seconds=time.perf_counter() - t))
            print(b, name, lam, float(rr.response_time), rows[-1]["seconds"], flush=True)
    return rows


def merge(parts):
    """One row per cell from the blocks ``parts`` (lists of rows in the same order)."""
    out = {"policy": "choices=None (whole closed neighbourhood)", "n": N, "t_end": T_END,
           "burn_in": BURN, "replications": BLOCK * len(parts), "level": 0.95, "rows": []}
    for cells in zip(*parts):
        x = np.concatenate([c["rep_response"] for c in cells])
        m, se = float(x.mean()), float(x.std(ddof=1) / np.sqrt(x.size))
        tq = float(t_quantile(0.975, x.size - 1))
        row = {k: cells[0][k] for k in ("graph", "n", "degree", "lam")}
        row.update(sim=m, sim_se=se, sim_low=m - tq * se, sim_high=m + tq * se,
                   ci_half_rel=tq * se / m, seconds=sum(c["seconds"] for c in cells))
        for k in ("rep_response", "rep_q1", "batch_response"):
            row[k] = [v for c in cells for v in c[k]]
        out["rows"].append(row)
    return out


if __name__ == "__main__":
    args = _smoke.argv()
    if "--merge" in args:
        parts = [json.loads(Path(a).read_text()) for a in args[args.index("--merge") + 1:]]
        path.write_text(json.dumps(merge(parts), indent=1))
    elif "--confirm" in args:
        confirm = path.with_name("one_or_all_confirm.json")
        confirm.write_text(json.dumps(merge([run_block(b) for b in (2, 3)]), indent=1))
    elif "--block" in args:
        b, dest = int(args[args.index("--block") + 1]), Path(args[args.index("--out") + 1])
        dest.write_text(json.dumps(run_block(b)))
    else:
        R = int(args[0]) if args else BLOCK if _smoke.SMOKE else 20
        if R % BLOCK:
            raise SystemExit(f"R must be a multiple of {BLOCK}, got {R}")
        path.write_text(json.dumps(merge([run_block(b) for b in range(R // BLOCK)]), indent=1))
