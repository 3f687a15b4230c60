"""Events/s of qlib.simulate on the ring (run: python benchmarks/bench_simulate.py)."""
import math
import time
import numpy as np
from qlib import graphs as g
from qlib.simulate import simulate

if __name__ == "__main__":
    t0 = time.perf_counter()
    simulate(g.ring(10), 0.5, 1.0, t_end=1.0, seed=0)
    print(f"first call (compile or cache load): {time.perf_counter() - t0:.2f}s")
    for n in (10**3, 10**4, 10**5, 10**6):
        G = g.ring(n)
        for name, mu in (("0", 0.0), ("loglog n", math.log(math.log(n))),
                         ("log n", math.log(n)), ("n", float(n)), ("inf", np.inf)):
            r = simulate(G, 0.9, mu, t_end=max(2e6 / n, 2.0), seed=1)
            print(f"n={n:>8} mu={name:>8}: {r.events / r.wall_time / 1e6:6.2f} M events/s")
