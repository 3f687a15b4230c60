"""The structured solver of the finite-n JSQ chain against the adaptive one, side by side.

Times qlib.halfin_whitt.stationary_jsq (rank-one level reduction) and the
superseded qlib.halfin_whitt.chain_fsp.stationary_jsq_fsp (adaptive finite
state projection) in one run at n in OLD_NS, beta in OLD_BETAS, and the structured solver alone
at n in NEW_NS, beta in BETAS (Halfin–Whitt) and at the super-Halfin–Whitt
loads 1 − n^(−alpha), alpha in ALPHAS.  For each: CPU and wall seconds, peak
resident memory (the large rows each in a fresh process), P(wait), E[Q_2], Var X_1, the
certified bound on the neglected idle-server mass and the estimated tail
mass, and (where both run) the differences and the larger error estimate.
Writes benchmarks/chain_structured.json.
Run (minutes; the adaptive solver dominates):
    nice .venv/bin/python benchmarks/bench_chain_structured.py [--smoke]
--smoke runs n = 200 (both solvers) and n = 10^4 (structured) at beta = 1, 2, and
alpha = 0.6 at n = 10^4, in seconds, and
writes nothing; --new-only skips the side-by-side rows (the structured solver
alone, a few minutes).  A rerun keeps the rows already in the file (delete it to
start afresh).  The alpha rows run without the adaptive fallback.
"""
import json
import math
import pathlib
import resource
import sys
import time

from qlib.halfin_whitt.chain import stationary_jsq
from qlib.halfin_whitt.chain_fsp import stationary_jsq_fsp

HERE = pathlib.Path(__file__).parent
OUT = HERE / "chain_structured.json"
BETAS = (0.5, 1.0, 2.0)
OLD_NS = (1000, 4000)
OLD_BETAS = (1.0,)          # the side-by-side rows (the adaptive solver takes minutes at beta = 0.5)
NEW_NS = (100_000, 1_000_000)
ALPHAS = (0.6, 0.75)
ALPHA_NS = (10_000, 30_000, 100_000, 300_000, 1_000_000)
KEYS = ("p_wait", "mean_q2", "var_x1", "mean_x1x2", "mean_wait")


def _timed(fn, *a, **k):
    c0, w0 = time.process_time(), time.perf_counter()
    try:
        st = fn(*a, **k)
    except ValueError as e:             # refused: record the estimate it gives
        return {"refused": str(e), "cpu": time.process_time() - c0}
    except RuntimeError as e:           # the adaptive solver gave up
        return {"failed": str(e), "cpu": time.process_time() - c0}
    row = {q: float(getattr(st, q)) for q in KEYS}
    row.update(cpu=time.process_time() - c0, wall=time.perf_counter() - w0,
               peak_rss_gb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6,
               mass_bound=float(st.mass_bound), mass_tail=float(st.mass_tail),
               err={q: float(st.error_estimates[q]) for q in KEYS},
               method=st.method,
               identity_gap=float(st.lam_total * st.p_wait - st.mean_q2))
    return row


def _isolated(n, beta, **kw):
    """The structured solve in a fresh process: its peak RSS is its own."""
    import concurrent.futures
    import multiprocessing
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=ctx) as ex:
        return ex.submit(_timed, stationary_jsq, n, beta, **kw).result()


def main(smoke=False, new_only=False):
    old_ns, new_ns = ((200,), (10_000,)) if smoke else (OLD_NS, NEW_NS)
    old_ns = () if new_only else old_ns
    alpha_ns = (10_000,) if smoke else ALPHA_NS
    betas, alphas = ((1.0, 2.0), (0.6,)) if smoke else (BETAS, ALPHAS)
    rows = {} if smoke or not OUT.exists() else json.loads(OUT.read_text())
    rows.pop("_note", None)             # a rerun keeps the rows already written
    note = "one run, one core, nice'd on a shared 2-core machine (times are upper bounds); " \
           "peak_rss is the process's (the large and alpha rows each in a fresh process)"
    if new_only:
        note += "; --new-only: the structured solver alone"

    def save():
        if not smoke:       # --smoke writes nothing
            OUT.write_text(json.dumps({"_note": note, **rows}, indent=1))

    for beta in betas:
        for n in (old_ns if smoke or beta in OLD_BETAS else ()):
            if f"{n}/{beta}" in rows:
                continue
            new = _timed(stationary_jsq, n, beta)
            old = _timed(stationary_jsq_fsp, n, beta)
            agree = {q: {"diff": abs(new[q] - old[q]),
                         "bound": max(new["err"][q], old["err"][q])} for q in KEYS
                     if "refused" not in new and "refused" not in old}
            rows[f"{n}/{beta}"] = {"structured": new, "adaptive": old, "agreement": agree}
            print(n, beta, "new %.2fs old %.2fs" % (new["cpu"], old["cpu"]), flush=True)
            save()
        for n in new_ns:
            if f"{n}/{beta}" in rows:
                continue
            rows[f"{n}/{beta}"] = {"structured": _isolated(n, beta)}
            print(n, beta, "new %.2fs" % rows[f"{n}/{beta}"]["structured"]["cpu"], flush=True)
            save()
    for alpha in alphas:
        for n in alpha_ns:
            if f"{n}/alpha={alpha}" in rows:
                continue
            beta = n ** (0.5 - alpha)       # load 1 − n^(−alpha) = 1 − beta/√n
            # the structured solver alone (no adaptive fallback): where it stops, and why
            rows[f"{n}/alpha={alpha}"] = {"structured": _isolated(n, beta, fallback=False),
                                          "beta": beta}
            print(n, alpha, "new %.2fs" % rows[f"{n}/alpha={alpha}"]["structured"]["cpu"],
                  flush=True)
            save()


if __name__ == "__main__":
    main(smoke="--smoke" in sys.argv, new_only="--new-only" in sys.argv)
