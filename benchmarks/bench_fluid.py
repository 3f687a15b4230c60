"""Timings for qlib.fluid (a script, not a test).

Targets: equilibrium(0.9, point(2)) < 1 ms; solve to t = 50 from the empty
state < 100 ms.
"""

import timeit

import numpy as np

from qlib import fluid
from qlib.degrees import DegreeDistribution


def main():
    p = DegreeDistribution.point(2)
    n = 2000
    t_eq = min(timeit.repeat(lambda: fluid.equilibrium(0.9, p), number=n, repeat=5)) / n
    print(f"equilibrium(0.9, point(2)): {t_eq * 1e6:8.1f} us  (target < 1000 us)")
    t = np.linspace(0.0, 50.0, 101)
    n = 10
    t_solve = min(timeit.repeat(lambda: fluid.solve(0.9, p, [1.0], t), number=n, repeat=3)) / n
    print(f"solve(0.9, point(2), empty, t=0..50): {t_solve * 1e3:8.1f} ms  (target < 100 ms)")
    pm = DegreeDistribution({0: 0.2, 1: 0.3, 3: 0.5})
    t_solve2 = min(timeit.repeat(lambda: fluid.solve(0.9, pm, [1.0], t), number=n, repeat=3)) / n
    print(f"solve(0.9, {{0:.2,1:.3,3:.5}}, empty, t=0..50): {t_solve2 * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()
