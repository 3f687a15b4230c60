"""Heavy parts of chapters/ht_stationary.md: the Halfin–Whitt constants.

Writes, for each beta in BETAS,
  * benchmarks/ht_chain.json: the exact finite-n chain (qlib.heavy_traffic.stationary_jsq) at
    every n in NS that it handles, with c, q2, var_x1, x1x2 (see
    qlib.ou_stationary.chain_constants), the truncation error bounds the
    solver reports (if any), the wall time, or the error it raised;
  * benchmarks/ht_grid.json: the deterministic grid solution of the diffusion
    (qlib.ou_stationary.ou_stationary) at H0 / 2^k, k < LEVELS.
Run (minutes to hours, depending on the solver):
    nice .venv/bin/python benchmarks/bench_ht_constants.py [chain|grid] [beta ...]
Existing entries are kept (delete the file to recompute the chain).
"""
import json
import math
import pathlib
import sys
import time

import numpy as np

import qlib.heavy_traffic
from qlib.halfin_whitt.stationary import chain_constants, ou_stationary

HERE = pathlib.Path(__file__).parent
BETAS = (0.25, 0.5, 1.0, 2.0, 4.0)
NS = (50, 100, 150, 200, 300, 400, 500, 700, 1000, 1400, 2000, 2800, 4000)
H0, LEVELS = 0.05, 5
SOLVER = qlib.heavy_traffic.stationary_jsq


def run_chain(beta, data):
    rows = data.setdefault(str(beta), {})
    for n in NS:
        if str(n) in rows and "c" in rows[str(n)]:
            continue
        t0 = time.perf_counter()
        try:
            st = SOLVER(n, beta)
        except Exception as e:          # record what the solver cannot do
            rows[str(n)] = {"error": repr(e)[:200], "wall": time.perf_counter() - t0}
            yield
            continue
        k = chain_constants(st)
        pmf = k.pop("q2_pmf")
        k["q2_pmf"] = [float(v) for v in pmf[: int(8 * math.sqrt(n)) + 1]]
        k["truncated_mass"] = float(st.truncated_mass)
        k["wall"] = time.perf_counter() - t0
        rows[str(n)] = k
        yield


def run_grid(beta, data):
    r = ou_stationary(beta, H0, levels=LEVELS)
    data[str(beta)] = {
        "hs": list(r.hs), "values": {a: [float(v) for v in b] for a, b in r.values.items()},
        "estimate": r.estimate, "error": r.error,
        "order": {a: [float(v) for v in b] for a, b in r.order.items()},
        "face_top": r.grids[-1].face_top, "residual": r.grids[-1].residual}
    yield


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "grid"
    betas = [float(b) for b in sys.argv[2:]] or BETAS
    out = HERE / f"ht_{what}.json"
    data = json.loads(out.read_text()) if out.exists() else {}
    if what == "chain":
        data.setdefault("_solver", "qlib.heavy_traffic.stationary_jsq, default arguments "
                        "(adaptive finite state projection, tol 1e-10)")
    for beta in betas:
        for _ in (run_chain if what == "chain" else run_grid)(beta, data):
            out.write_text(json.dumps(data, indent=1))
            print(beta, "done", flush=True)
