"""How large a degree makes a static random graph as good as the complete graph (writes growing_degree.json).

Four parts, each a section of ``benchmarks/growing_degree.json``:

``--fluid``: static random ``d``-regular graphs (``qlib.graphs.random_regular``,
``n = 5000``, one graph per degree) for ``d`` in ``DEGREES``, both policies
(``choices=None``, the whole closed neighbourhood; ``choices=2``, one sampled
neighbour), ``λ ∈ {0.7, 0.9, 0.95}``: independent replications of
``qlib.sim.simulate_uniformized`` per cell (window ``T_END``, burn-in
``BURN``, empty start; ``REPS`` per cell, ``REPS_LARGE_ALL`` for the whole
neighbourhood from degree ``LARGE_ALL_DEGREE``, whose replications cost a
scan of ``d + 1`` queues per arrival and whose pilot already resolved
1 %), storing per replication the mean response time, the
busy fraction q(1) and the response time of each half of the window (for the
halves burn-in test).  Then the closures of the static graph at each degree:
the star (``qlib.meanfield.star``) where ``d <= STAR_MAX_DEGREE`` and its chain has at most
``STAR_STATES`` states, else the pair (``qlib.meanfield.pair``), and for one neighbour the
pair of ``qlib.meanfield.pair_choices``.

``--diffusion``: the Halfin–Whitt load ``λ = 1 − β/√n`` (``β = 1``) on random
circulant graphs (``qlib.sim.dense``) whose degree grows like ``log² n``,
``√n``, ``√n log n`` and ``n^0.75``, for ``n`` in ``NS``: independent
replications of ``qlib.sim.dense.simulate_dense`` (window ``D_T_END`` per sequence:
shorter below the threshold, where the gaps are large) storing per replication
E[Q₂]/√n, √n P(wait) and E[n − Q₁]/√n, against the exact complete-graph chain
(``qlib.halfin_whitt.stationary_jsq``) at the same ``n``; and the exact complete
graph at the fluid part's ``n`` and loads (``fluid_clique``).

``--compare``: at ``n = C_N``, ``d = C_D`` (the ``√n log n`` degree at that
``n``), the same load: the random circulant (``qlib.sim.dense``) against a
uniform random ``d``-regular graph simulated by the CSR kernel
(``simulate_uniformized``), ``C_REPS`` replications each, E[Q₂]/√n.

The replication counts were sized once, on a pilot of ``PILOT_REPS``
replications per cell (8 for ``--compare``), from the pilot's s.d. and the
margins fixed before it: at 80 % power per cell the noisiest fluid cells'
1 % tests needed up to 38 (closures) and 57 (halves, a ring at λ = 0.95)
replications, the whole neighbourhood from ``LARGE_ALL_DEGREE`` at most 17;
the comparison's 10 % needed 13 pairs at the pilot's s.d. and 30 at its
upper 90 % limit.
``--extend`` (with ``--fluid`` or ``--compare``) runs only the replications a
stored section lacks: replication ``i`` of a cell always takes child ``i`` of
the cell's ``SeedSequence``, so the extended section is the one a full run
writes.

Not run by the tests; ``nice python benchmarks/bench_growing_degree.py --fluid``
(about 15 CPU minutes), ``--closures`` (about 2), ``--diffusion`` (about 12),
``--compare`` (about 2).  ``--smoke``: tiny runs of all four, written under
``$BENCH_SMOKE_OUT``.
"""
import json
import math
import sys
import time
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _smoke  # noqa: E402

N_FLUID, T_END, BURN, REPS = 5000, 700.0, 200.0, 48
REPS_LARGE_ALL, LARGE_ALL_DEGREE = 16, 12
PILOT_REPS = 4                  # the pilot the replication counts were sized on (its runs are the first replications)
DEGREES = (2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128)
LAMS = (0.7, 0.9, 0.95)
STAR_STATES, STAR_MAX_DEGREE = 60_000, 6
BETA = 1.0
NS = (1000, 2000, 5000, 10000, 20000)
D_REPS, D_BURN = 4, 100.0
D_T_END = {"log2": 400.0, "sqrt": 400.0, "sqrtlog": 2500.0, "n075": 2500.0}
SEQUENCES = ("log2", "sqrt", "sqrtlog", "n075")
C_N, C_D, C_REPS, C_T_END = 2000, 340, 24, 1500.0
if _smoke.SMOKE:
    N_FLUID, T_END, BURN, REPS, DEGREES, LAMS = 200, 40.0, 10.0, 3, (2, 8), (0.9,)
    REPS_LARGE_ALL, LARGE_ALL_DEGREE = 2, 8
    NS, D_REPS, D_BURN = (400,), 2, 10.0
    D_T_END = dict.fromkeys(SEQUENCES, 40.0)
    C_N, C_D, C_REPS, C_T_END = 200, 34, 2, 40.0
path = _smoke.out(Path(__file__).with_name("growing_degree.json"))


def degree_of(seq: str, n: int) -> int:
    """The even degree of sequence ``seq`` at ``n`` (rounded to the nearest even integer, at most n − 2)."""
    x = {"log2": math.log(n) ** 2, "sqrt": math.sqrt(n), "sqrtlog": math.sqrt(n) * math.log(n),
         "n075": n ** 0.75}[seq]
    return int(min(n - 2, max(2, 2 * round(x / 2))))


def seed_of(*key) -> int:
    return zlib.crc32(" ".join(map(str, key)).encode())


def reps_of(policy: str, d: int) -> int:
    """The replications of fluid cell ``(policy, d)``."""
    return REPS_LARGE_ALL if policy == "all" and d >= LARGE_ALL_DEGREE else REPS


def fluid_runs(previous: dict | None = None, save=None) -> dict:
    """The fluid section; with ``previous``, only the replications its cells lack (``save`` called after each cell)."""
    from qlib import graphs
    from qlib.sim import simulate_uniformized
    old = {(c["degree"], c["policy"], c["lam"]): c for c in (previous or {}).get("cells", [])}
    cells = [old.get((d, pol, lam)) or dict(degree=d, policy=pol, lam=lam, R=[], q1=[], halves=[], seconds=0.0)
             for d in DEGREES for pol in ("all", "one") for lam in LAMS]
    out = dict(n=N_FLUID, t_end=T_END, burn_in=BURN, replications=REPS, replications_large_all=REPS_LARGE_ALL,
               large_all_degree=LARGE_ALL_DEGREE, pilot_replications=PILOT_REPS, cells=cells)
    # the cheap cells first: one neighbour, then the whole neighbourhood by degree
    for c in sorted(cells, key=lambda c: (c["policy"] == "all", c["degree"])):
        d, pol, lam = c["degree"], c["policy"], c["lam"]
        todo = range(len(c["R"]), reps_of(pol, d))
        if not todo:
            continue
        g = graphs.random_regular(N_FLUID, d, seed=seed_of("graph", d))
        t0 = time.process_time()
        ss = np.random.SeedSequence(seed_of("fluid", d, pol, lam)).spawn(reps_of(pol, d))
        for i in todo:
            r = simulate_uniformized(g, lam, t_end=T_END, burn_in=BURN, seed=ss[i], choices=None if pol == "all" else 2,
                                     batches=2, warn=False)
            c["R"].append(float(r.mean_response_time))
            c["q1"].append(float(r.occupancy[1]))
            c["halves"].append([float(x) for x in r.batch_response_time])
        c["seconds"] += time.process_time() - t0
        print("fluid", d, pol, lam, len(c["R"]), np.mean(c["R"]), c["seconds"], flush=True)
        if save is not None:
            save(out)
    return out


def closures() -> list:
    import math as m
    from qlib.meanfield.pair import pair_approximation
    from qlib.meanfield.pair_choices import pair_approximation_choices
    from qlib.meanfield.star import star_approximation
    rows = []
    for d in DEGREES:
        for lam in LAMS:
            t0 = time.perf_counter()
            K = {0.7: 6, 0.9: 8, 0.95: 10}[lam]
            if d <= STAR_MAX_DEGREE and (K + 1) * m.comb(K + d, d) <= STAR_STATES:
                kind, R = "star", star_approximation(lam, d).response_time
            else:
                kind, R = "pair", pair_approximation(lam, d).response_time
            t1 = time.perf_counter()
            R1 = pair_approximation_choices(lam, d).response_time
            rows.append(dict(degree=d, lam=lam, all_kind=kind, all_R=float(R), all_seconds=t1 - t0,
                             one_kind="pair", one_R=float(R1), one_seconds=time.perf_counter() - t1))
            print("closure", d, lam, kind, R, R1, t1 - t0, flush=True)
    return rows


def diffusion_runs() -> dict:
    from qlib.halfin_whitt import stationary_jsq
    from qlib.sim import dense
    cells, exact = [], []
    clique = []                                # the fluid part's complete graph at its n, exact
    for lam in LAMS:
        ex = stationary_jsq(N_FLUID, (1 - lam) * math.sqrt(N_FLUID))
        clique.append(dict(n=N_FLUID, lam=lam, R=float(ex.mean_response), p_wait=float(ex.p_wait),
                           truncated_mass=float(ex.truncated_mass)))
    for n in NS:
        lam = 1 - BETA / math.sqrt(n)
        ex = stationary_jsq(n, BETA)
        exact.append(dict(n=n, q2=float(ex.mean_q2) / math.sqrt(n), pwait=float(ex.p_wait) * math.sqrt(n),
                          idle=float(ex.mean_idle) / math.sqrt(n), R=float(ex.mean_response),
                          truncated_mass=float(ex.truncated_mass)))
        for seq in SEQUENCES:
            d = degree_of(seq, n)
            t0 = time.perf_counter()
            ss = np.random.SeedSequence(seed_of("diffusion", seq, n))
            offsets = dense.random_circulant(n, d, seed=ss.spawn(1)[0])
            rows = []
            for s in ss.spawn(D_REPS):
                r = dense.simulate_dense(n, offsets, lam, t_end=D_T_END[seq], burn_in=D_BURN, seed=s, batches=2)
                rows.append(dict(q2=float(r.q[2]) * math.sqrt(n), pwait=r.wait_probability * math.sqrt(n),
                                 idle=float(1 - r.q[1]) * math.sqrt(n), R=r.mean_response_time,
                                 q2_halves=[float(x) * math.sqrt(n) for x in r.batch_q[:, 2]],
                                 ns_per_event=r.ns_per_event, scanned=r.scanned_per_arrival))
            cells.append(dict(n=n, sequence=seq, degree=d, lam=lam, t_end=D_T_END[seq], reps=rows,
                              seconds=time.perf_counter() - t0))
            print("diffusion", n, seq, d, np.mean([x["q2"] for x in rows]), exact[-1]["q2"],
                  cells[-1]["seconds"], flush=True)
    return dict(beta=BETA, t_end=D_T_END, burn_in=D_BURN, replications=D_REPS, cells=cells, exact=exact,
                fluid_clique=clique)


def compare_runs(previous: dict | None = None, save=None) -> dict:
    """The circulant (dense kernel) against a uniform random regular graph (CSR kernel), same n, d, load.

    With ``previous``, only the replications it lacks.
    """
    from qlib import graphs
    from qlib.sim import simulate_uniformized
    from qlib.sim import dense
    n, d, reps, t_end = C_N, C_D, C_REPS, C_T_END
    lam = 1 - BETA / math.sqrt(n)
    g = graphs.random_regular(n, d, seed=seed_of("compare graph"))
    S = dense.random_circulant(n, d, seed=seed_of("compare circulant"))
    out = dict(n=n, degree=d, lam=lam, t_end=t_end, burn_in=D_BURN, regular=[], circulant=[])
    if previous is not None:
        out["regular"], out["circulant"] = list(previous["regular"]), list(previous["circulant"])
    for s in np.random.SeedSequence(seed_of("compare")).spawn(reps)[len(out["regular"]):]:
        r = simulate_uniformized(g, lam, t_end=t_end, burn_in=D_BURN, seed=s, batches=2, warn=False)
        out["regular"].append(float(r.occupancy[2]) * math.sqrt(n))
        out["circulant"].append(float(dense.simulate_dense(n, S, lam, t_end=t_end, burn_in=D_BURN, seed=s).q[2])
                                * math.sqrt(n))
        print("compare", len(out["regular"]), out["regular"][-1], out["circulant"][-1], flush=True)
        if save is not None:
            save(out)
    return out


def main(argv) -> None:
    out = json.loads(path.read_text()) if path.exists() else {}
    extend = "--extend" in argv and not _smoke.SMOKE
    for section, run in (("fluid", fluid_runs), ("closures", closures), ("diffusion", diffusion_runs),
                         ("compare", compare_runs)):
        if f"--{section}" in argv or _smoke.SMOKE:
            def save(part, section=section):
                out[section] = part
                path.write_text(json.dumps(out, indent=1))
            if section in ("fluid", "compare"):
                out[section] = run(out.get(section) if extend else None, save if extend else None)
            else:
                out[section] = run()
            path.write_text(json.dumps(out, indent=1))     # each section stored as soon as it is done


if __name__ == "__main__":
    main(sys.argv[1:])
