"""Heavy parts of chapters/ht_stationary.md: the Halfin–Whitt constants.

Writes, for each beta in BETAS,
  * benchmarks/ht_chain.json: the exact finite-n chain (qlib.halfin_whitt.stationary_jsq) at
    every n in NS that it handles, with c, q2, var_x1, x1x2 (see
    qlib.halfin_whitt.stationary.chain_constants), the truncation error bounds the
    solver reports (if any), the wall time, or the error it raised;
  * benchmarks/ht_grid.json: the deterministic grid solution of the diffusion
    (qlib.halfin_whitt.stationary.ou_stationary) at H0 / 2^k, k < LEVELS.
  * benchmarks/ht_chain_tight.json ("tight"): the same chain at TIGHT_TOL
    for n in TIGHT_NS (issue 33: does the chain's value at large n move when
    the truncation is a hundred times finer?), beta 1 by default.
  * benchmarks/ht_paths_exact.json ("paths", for chapters/ht_paths.md): the
    exact transient means of the chain (qlib.halfin_whitt.transient_jsq) at
    beta = 1, n = 1000, from the empty and the overloaded start of that chapter.
  * benchmarks/ht_chain_large.json ("large"): the chain from n = 8000 to 10^6
    (qbook.ht_constants.LARGE_NS, rows of qbook.ht_constants.chain_row), beta 0.5, 1, 2, 4.
Run (minutes; the grid takes longest):
    nice .venv/bin/python benchmarks/bench_ht_constants.py [chain|grid|tight|paths|large] [beta ...]
    nice .venv/bin/python benchmarks/bench_ht_constants.py --smoke   (seconds, writes nothing)
Existing entries are kept unless an older solver wrote them: every chain row
records the ``solver_version`` (qlib.halfin_whitt.SOLVER_VERSION) that wrote it,
and the file's ``_solver_version`` is the oldest of its rows
(tests/test_stored_chain_versions.py fails when it is older than the code's).
"""
import json
import math
import pathlib
import sys
import time

import numpy as np

import qlib.halfin_whitt
from qlib.halfin_whitt import SOLVER_VERSION
from qlib.halfin_whitt.stationary import chain_constants, ou_stationary

HERE = pathlib.Path(__file__).parent
BETAS = (0.25, 0.5, 1.0, 2.0, 4.0)
NS = (50, 100, 150, 200, 300, 400, 500, 700, 1000, 1400, 2000, 2800, 4000)
H0, LEVELS = 0.05, 5
SOLVER = qlib.halfin_whitt.stationary_jsq
FAST = "--fast" in sys.argv     # skip the rows that need the adaptive solver (a first pass)
# --redo=N1,N2,...: solve these n again even where a row of today's version is stored
REDO = {int(v) for a in sys.argv if a.startswith("--redo=") for v in a[7:].split(",") if v}
# --kw={"max_seconds": 900}: keyword arguments for the solver (recorded in the row)
KW = next((json.loads(a[5:]) for a in sys.argv if a.startswith("--kw=")), {})
# --ns=N1,N2,...: the chain's n in this order (default NS)
ORDER = next((tuple(int(v) for v in a[5:].split(",")) for a in sys.argv if a.startswith("--ns=")), NS)
TIGHT_NS, TIGHT_TOL = (1000, 1400, 2000, 2800, 4000), 1e-14


def run_chain(beta, data, ns=NS, tol=None):
    rows = data.setdefault(str(beta), {})
    for n in ns:
        if rows.get(str(n), {}).get("solver_version") == SOLVER_VERSION and "c" in rows[str(n)] \
                and n not in REDO:
            continue
        t0 = time.perf_counter()
        c0 = time.process_time()
        st = None
        if FAST:    # the structured solve alone: skip rows that need the adaptive fallback
            try:
                st = SOLVER(n, beta, fallback=False, **({} if tol is None else {"tol": tol}), **KW)
            except ValueError:          # more Q_3 sectors than fit: the adaptive fallback
                continue
            if st.mass_tail > 1e-8:     # (the call with fallback would redo it adaptively)
                continue
        try:
            if st is None:
                st = SOLVER(n, beta, **KW) if tol is None else SOLVER(n, beta, tol=tol, **KW)
        except Exception as e:          # record what the solver cannot do
            rows[str(n)] = {"error": repr(e)[:200], "wall": time.perf_counter() - t0,
                            "solver_version": SOLVER_VERSION}
            yield
            continue
        k = chain_constants(st)
        four = four_task_mass(st)
        if four > 0:    # the chain capped at three tasks a server: its neglected mass in the errors
            scale = (st.truncated_mass + four) / st.truncated_mass
            k["err"] = {a: float(v * scale) for a, v in k["err"].items()}
            k["four_task_mass"] = four
        if KW:
            k["solver_kw"] = KW
        pmf = k.pop("q2_pmf")
        k["q2_pmf"] = [float(v) for v in pmf[: int(8 * math.sqrt(n)) + 1]]
        k["truncated_mass"] = float(st.truncated_mass)
        k["wall"] = time.perf_counter() - t0
        k["cpu"] = time.process_time() - c0
        k["states"] = int(len(st.pi)) if getattr(st, "pi", None) is not None else None
        k["mass_bound"] = float(st.mass_bound)
        k["mass_tail"] = float(st.mass_tail)
        k["p_wait"], k["mean_wait"] = float(st.p_wait), float(st.mean_wait)   # E[W | wait] >= 1
        k["method"] = st.method
        k["solver_version"] = SOLVER_VERSION
        rows[str(n)] = k
        yield


def four_task_mass(st):
    """Estimated stationary mass of servers with four tasks left out by the
    structured solve that reached every ``Q_3`` sector (``rounds = n + 1``).

    The solver's ``mass_tail`` there is the flux ``λ π(corner)`` into four
    tasks over ``n + 1``, the rate at which the state entered leaves; but the
    set ``Q_4 >= 1`` is left only when that one server finishes (rate 1), so
    its mass is about ``λ π(corner) = (n + 1) mass_tail`` (the brute-force chain
    capped at five tasks: 0.84 to 1.05 times that at n = 8..20).  Zero for the
    other solves."""
    if st.method != "qbd" or st.rounds != st.n + 1:
        return 0.0
    return float((st.n + 1) * st.mass_tail)


def run_grid(beta, data):
    r = ou_stationary(beta, H0, depth=LEVELS)
    data[str(beta)] = {
        "hs": list(r.hs), "values": {a: [float(v) for v in b] for a, b in r.values.items()},
        "estimate": r.estimate, "error": r.error,
        "order": {a: [float(v) for v in b] for a, b in r.order.items()},
        "face_top": r.grids[-1].face_top, "residual": r.grids[-1].residual}
    yield


def run_large(beta, data):
    """The exact chain from n = 8000 to 10^6 (qbook.ht_constants.LARGE_NS), one row per n."""
    from qbook.ht_constants import LARGE_NS, chain_row
    rows = data.setdefault(str(beta), {})
    for n in LARGE_NS:
        if rows.get(str(n), {}).get("solver_version") == SOLVER_VERSION:
            continue
        rows[str(n)] = chain_row(n, beta)
        yield


PATHS_N = 1000
PATHS_TIMES = {"empty": (1, 2, 3, 4, 6, 8, 10.0), "overloaded": (0.5, 1, 2, 3, 4, 6.0)}


def run_paths(beta, data):
    from qbook.ht_paths import overloaded_start
    for kind, times in PATHS_TIMES.items():
        key = f"{PATHS_N}/{beta}/{kind}"
        if key in data:
            continue
        c0 = time.process_time()
        x0 = [0, 0] if kind == "empty" else overloaded_start(PATHS_N)
        r = qlib.halfin_whitt.transient_jsq(PATHS_N, beta, x0, list(times))
        data[key] = {"initial": x0, "times": list(times), "cpu": time.process_time() - c0,
                     **{a: [float(v) for v in getattr(r, a)]
                        for a in ("mean_x1", "mean_x2", "mean_x3", "p_full", "error")}}
        yield


def smoke():
    """Two chain rows at beta = 1 (n = 50, 100), kept in memory."""
    data = {}
    for _ in run_chain(1.0, data, ns=(50, 100)):
        pass
    assert all("c" in r for r in data["1.0"].values()), data
    print("smoke ok", {n: round(r["c"], 6) for n, r in data["1.0"].items()})


if __name__ == "__main__" and "--smoke" in sys.argv:
    smoke()
elif __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "grid"
    betas = [float(b) for b in sys.argv[2:] if not b.startswith("--")] or (
        BETAS if what in ("chain", "grid") else (0.5, 1.0, 2.0, 4.0) if what == "large" else (1.0,))
    out = HERE / {"tight": "ht_chain_tight.json", "paths": "ht_paths_exact.json",
                  "large": "ht_chain_large.json"}.get(
        what, f"ht_{what}.json")
    data = json.loads(out.read_text()) if out.exists() else {}
    if what == "chain":
        data["_solver"] = ("qlib.halfin_whitt.stationary_jsq, default arguments "
                           "(structured level reduction, tol 1e-12)")
    if what == "large":
        data["_solver"] = "qlib.halfin_whitt.stationary_jsq, default arguments (tol 1e-12)"
    if what == "tight":
        data["_solver"] = f"qlib.halfin_whitt.stationary_jsq, tol {TIGHT_TOL:g}"
    run = {"chain": lambda b, d: run_chain(b, d, ORDER), "grid": run_grid, "paths": run_paths, "large": run_large,
           "tight": lambda b, d: run_chain(b, d, TIGHT_NS, TIGHT_TOL)}[what]
    def oldest(d):
        return min((r.get("solver_version", 1) for b, rows in d.items() if not b.startswith("_")
                    for r in rows.values()), default=SOLVER_VERSION)

    for beta in betas:
        for _ in run(beta, data):
            if what in ("chain", "tight", "large"):
                data["_solver_version"] = oldest(data)
            out.write_text(json.dumps(data, indent=1))
            print(beta, "done", flush=True)
