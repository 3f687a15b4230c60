"""The heavy solve of chapters/solver_check.md, stored: ``stationary_jsq(20, 0.5, tol=1e-6)``.

At ``n = 20``, ``β = 0.5`` servers with four tasks matter and the adaptive solver
answers, at its admission threshold 1e-10: half a minute of CPU, the chapter's
largest cost. Writes ``benchmarks/solver_check_fsp.json`` (``qbook.solver_check.solve_20``:
the quantities, their error estimates, the ``solver_version``); the chapter reads it
and compares it with the brute force it solves itself, and solves the chain again
where ``FULL`` is set or the file is from an older solver.
Run (a minute):
    nice .venv/bin/python benchmarks/bench_solver_check.py
    nice .venv/bin/python benchmarks/bench_solver_check.py --smoke   (n = 9, beta = 1: a second)
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _smoke  # noqa: E402
from qbook.solver_check import STORE, solve_20  # noqa: E402

if __name__ == "__main__":
    row = solve_20(*_smoke.pick((20, 0.5), (9, 1.0)))
    _smoke.out(STORE).write_text(json.dumps(row, indent=1) + "\n")
    print(row)
