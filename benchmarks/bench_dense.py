"""Cost per event of the dense-graph kernel against the CSR fast path on the same graph (writes bench_dense.json).

At the Halfin–Whitt load ``λ = 1 − 1/√n``, ``n = 20000``, on random circulant
graphs of degree ``√n``, ``√n log n`` and ``n^0.75`` (rounded to even
integers): ``qlib.sim.dense.simulate_dense`` (idle-server tracking) and
``qlib.sim.simulate_uniformized`` on the same graph given as CSR arrays
(``qlib.sim.dense.circulant_graph``), which scans the whole closed
neighbourhood per arrival.  Each is run ``REPEATS`` times, alternating, over
``T_END`` time units after a compile run; the minimum wall time per
uniformized step is kept (the machine is shared; the minimum is the least
disturbed).  Also stored: the entries examined per arrival by the dense kernel.
``nice python benchmarks/bench_dense.py``; ``--smoke``: a small ``n``.
"""
import json
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _smoke  # noqa: E402

from qlib.sim import simulate_uniformized  # noqa: E402
from qlib.sim.dense import circulant_graph, random_circulant, simulate_dense  # noqa: E402

N, T_END, REPEATS = 20000, 10.0, 3
if _smoke.SMOKE:
    N, T_END, REPEATS = 400, 2.0, 1
path = _smoke.out(Path(__file__).with_name("bench_dense.json"))


def main() -> None:
    lam = 1 - 1 / math.sqrt(N)
    rows = []
    for name, x in (("sqrt", math.sqrt(N)), ("sqrtlog", math.sqrt(N) * math.log(N)), ("n075", N ** 0.75)):
        d = int(2 * round(x / 2))
        S = random_circulant(N, d, seed=1)
        g = circulant_graph(N, S)
        simulate_dense(N, S, lam, t_end=1.0, seed=0)
        simulate_uniformized(g, lam, t_end=1.0, seed=0, batches=2, warn=False)
        dense_ns, csr_ns, scanned = [], [], 0.0
        for k in range(REPEATS):
            r = simulate_dense(N, S, lam, t_end=T_END, seed=k + 1)
            dense_ns.append(r.ns_per_event)
            scanned = r.scanned_per_arrival
            t = time.perf_counter()
            simulate_uniformized(g, lam, t_end=T_END, seed=k + 1, batches=2, warn=False)
            csr_ns.append((time.perf_counter() - t) / round(N * (lam + 1) * T_END) * 1e9)   # per uniformized step
        rows.append(dict(sequence=name, n=N, degree=d, lam=lam, dense_ns=min(dense_ns), csr_ns=min(csr_ns),
                         scanned_per_arrival=scanned))
        print(rows[-1], flush=True)
    path.write_text(json.dumps(dict(t_end=T_END, repeats=REPEATS, rows=rows), indent=1))


if __name__ == "__main__":
    main()
