"""Timings for qlib.meanfield.fluid (a script, not a test; rerun on a quiet machine).

Targets (issue 4): equilibrium(0.9, point(2)) < 1 ms; solve to t = 50 from the
empty state < 100 ms.  Each figure is the best of several repeats, so it
estimates the cost on an unloaded core; on a shared machine it is noisy.

Usage: python benchmarks/bench_fluid.py [--smoke]  (``--smoke``: one call of each, no repeats)
"""
import sys

import timeit

import numpy as np

from qlib.meanfield import fluid
from qlib.meanfield.degrees import DegreeDistribution


SMOKE = "--smoke" in sys.argv


def best(fn, number, repeat):
    if SMOKE:
        number, repeat = 1, 1
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def main():
    p = DegreeDistribution.point(2)
    pm = DegreeDistribution({0: 0.2, 1: 0.3, 3: 0.5})
    t = np.linspace(0.0, 50.0, 101)
    rows = [
        ("equilibrium(0.9, point(2))", best(lambda: fluid.equilibrium(0.9, p), 2000, 5), 1e-3),
        ("equilibrium(0.99, point(2))", best(lambda: fluid.equilibrium(0.99, p), 2000, 5), 1e-3),
        ("equilibrium(0.9, {0:.2,1:.3,3:.5})", best(lambda: fluid.equilibrium(0.9, pm), 500, 5), 1e-3),
        ("solve(0.9, point(2), empty, t=0..50)", best(lambda: fluid.solve(0.9, p, [1.0], t), 10, 3), 0.1),
        ("solve(0.9, {0:.2,1:.3,3:.5}, empty, t=0..50)", best(lambda: fluid.solve(0.9, pm, [1.0], t), 10, 3), None),
        ("relaxation_rate(0.9, point(2))", best(lambda: fluid.relaxation_rate(0.9, p), 200, 3), None),
    ]
    for name, sec, target in rows:
        tgt = f"(target < {target * 1e3:g} ms)" if target else ""
        print(f"{name:48s} {sec * 1e3:9.3f} ms  {tgt}")


if __name__ == "__main__":
    main()
