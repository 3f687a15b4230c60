"""Exact chains without a level cap for issue 17 (a script, not a test).

Runs ``qlib.exact.occupancy_chain_adaptive`` (tol = 1e-9) over ranges of n
longer than the chapter *How large must n be?* can afford in its two
minutes, and records for each n the response time, its truncation error
estimate, ``E q_n(2)``, the number of states kept and the seconds taken:

* ``δ_2`` at λ = 0.9, n = 3..16; ``δ_1`` at λ = 0.9, n = 2..9;
* the control: ``δ_1`` *with* replacement at λ = 0.9, n = 2..8, whose
  coefficient ``R_v`` rmftool confirms independently.

The chapter reads the file and extrapolates n(E R_n − R*) as in its Check 1.
It replaces the prototype ``proto_occupancy_fsp.py`` (whose solver is now
the library function).  Usage: python benchmarks/bench_occupancy_adaptive.py
(a few minutes on a loaded 2-core machine).  Writes
benchmarks/occupancy_adaptive_results.json.  ``--smoke``: the smallest n
of each case, written under ``$BENCH_SMOKE_OUT``.
"""

import json
import sys
import time
from pathlib import Path

from qlib import exact
from qlib.meanfield.degrees import DegreeDistribution as D

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _smoke  # noqa: E402

CASES = [("δ_2", 2, 0.9, False, range(3, 17)),
         ("δ_1", 1, 0.9, False, range(2, 10)),
         ("δ_1", 1, 0.9, True, range(2, 9))]
TOL = 1e-9


def main():
    out = {"tol": TOL, "cases": []}
    for name, d, lam, rep, ns in CASES:
        rows = []
        for n in _smoke.pick(ns, ns[:1]):
            t = time.perf_counter()
            r = exact.occupancy_chain_adaptive(n, lam, D.point(d), tol=TOL, replacement=rep)
            dt = time.perf_counter() - t
            rows.append(dict(n=n, R=r.response_time, R_err=r.response_time_error,
                             q2=float(r.occupancy[2]), q_err=r.occupancy_error,
                             states=r.n_states, seconds=dt))
            print(f"{name} λ={lam} replacement={rep} n={n}: R = {r.response_time:.9f} "
                  f"± {r.response_time_error:.1e}, {r.n_states} states, {dt:.2f} s", flush=True)
        out["cases"].append(dict(law=name, degree=d, lam=lam, replacement=rep, rows=rows))
    path = _smoke.out(Path(__file__).with_name("occupancy_adaptive_results.json"))
    path.write_text(json.dumps(out, indent=1, ensure_ascii=False))
    print("wrote", path)


if __name__ == "__main__":
    main()
