"""Heavy part of chapters/super_hw.md: JSQ in the super-Halfin–Whitt window.

Load ``1 − β' n^{−α}``, i.e. the Halfin–Whitt chain at ``β = β' n^{1/2−α}``.

``chain`` mode writes benchmarks/super_hw_chain.json: for each (α, β', n) the
exact stationary chain (qlib.halfin_whitt.stationary_jsq, structured, no
adaptive fallback) at the tightest tol of TOLS that the solver accepts within
``--max-seconds`` of its own CPU estimate and that passes rate balance, each
row in a child process capped at ``--cpu-limit`` CPU seconds; with the raw
moments the chapter scales (E[N], E[Q_2], E[Q_3], P(wait), Var X_1, Var X_2,
Cov(X_1, X_2), Var(N) where the law is kept), their error estimates, the
distribution function of Q_2/n^α on a grid (for the figure), the tol, the
refusals of tighter tols, the CPU and wall time, the solver version and
commit; or the refusals when every tol is refused.  Existing rows are kept
unless --redo; a failed redo keeps the solved row (``redo_error`` beside it).

``reps`` mode writes benchmarks/super_hw_sim.json (key ``"a/β/n"``):
independent replications of simulate_jsq, each from the limit's mean with its
own burn-in (burn-in and window in units of the time scale n^{2α−1});
``--append`` adds replications of the same design with new seeds.  ``sim``
mode stores one long run with batch means there (key ``"single/a/β/n"``).

Run (minutes to an hour; most stored rows used --max-seconds 60 --cpu-limit 300, the
rows at a = 0.6, n = 10^6 450 and 600; a refusal names the limit it exceeded):
    PYTHONPATH=$PWD nice -n 10 .venv/bin/python benchmarks/bench_super_hw.py chain --redo [--alpha 0.6] [--n 10000 ...]
    nice -n 10 .venv/bin/python benchmarks/bench_super_hw.py reps --alpha 0.75 --beta 2 --n 1000 3162 10000 --reps 100 --burn 2 --window 10
    nice -n 10 .venv/bin/python benchmarks/bench_super_hw.py sim
    .venv/bin/python benchmarks/bench_super_hw.py --smoke     (n = 2000, α = 0.6, writes nothing)
"""
import argparse
import json
import math
import pathlib
import subprocess
import time

import numpy as np

import qlib
from qlib.halfin_whitt import SOLVER_VERSION, simulate_jsq, stationary_jsq

HERE = pathlib.Path(__file__).parent
OUT_CHAIN = HERE / "super_hw_chain.json"
OUT_SIM = HERE / "super_hw_sim.json"
ALPHAS = (0.6, 0.75)
BETAS = (0.5, 1.0, 2.0)
NS = (1000, 3162, 10_000, 31_623, 100_000, 316_228, 1_000_000)
CDF_POINTS = 241            # the distribution function of Q_2/n^α on [0, 12/β']


def _solver_tree():
    root = pathlib.Path(qlib.__file__).resolve().parent.parent
    if (root / "HEAD").exists():        # a snapshot of a committed tree
        return f"{root} @ {(root / 'HEAD').read_text().strip()}"
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
    except OSError:
        head = "?"
    return f"{root} @ {head}"


TOLS = (1e-12, 1e-10, 1e-8, 1e-6)     # tried in turn: the first the structured solver accepts
MAX_SECONDS = 450.0                   # its own CPU estimate (the child is capped at cpu_limit CPU seconds)


def _sane(st):
    """Finite values and the rate balance ``E[n − Q_1] = β√n`` up to the flux the
    truncation blocks (a solve that lost its precision breaks it)."""
    vals = (st.mean_tasks, st.mean_q2, st.mean_q3, st.p_wait, st.var_x1, st.var_x2)
    allowed = 2 * st.lam_total * st.truncated_mass + 1e-9 * st.beta * math.sqrt(st.n)
    return all(math.isfinite(v) for v in vals) and abs(st.balance_gap) <= allowed \
        and 0 <= st.p_wait <= 1


def chain_row(n, alpha, beta_p, max_seconds=MAX_SECONDS):
    """One exact solve, reduced to what the chapter needs: the structured
    solver (no adaptive fallback) at the tightest tol in TOLS it accepts
    within MAX_SECONDS of estimated CPU; the refusals of tighter tols kept."""
    t0, c0 = time.perf_counter(), time.process_time()
    refused, st, st_tol = [], None, None
    # the tightest tol first; after a refusal the loosest, and where that is refused too (the
    # sectors needed grow as tol falls) so is every tol between: the row is out of reach;
    # else the tols between, for the tightest one accepted
    for tol in TOLS[:1] + TOLS[-1:] + TOLS[1:-1]:
        if st is not None and st_tol <= tol:
            continue
        try:
            cand = stationary_jsq(n, beta_p * n ** (0.5 - alpha), tol=tol, max_seconds=max_seconds,
                                  max_memory=2e10, max_states=2e10, fallback=False)
        except ValueError as e:
            refused.append(f"tol {tol:g}: " + str(e)[:400])
            if tol == TOLS[-1]:
                break
            continue
        if not _sane(cand):
            refused.append(f"tol {tol:g}: the solve is not finite or breaks the rate balance "
                           f"(E[N] = {cand.mean_tasks:.6g}, balance gap {cand.balance_gap:.3g})")
            continue
        st, st_tol = cand, tol
        if tol in TOLS[:2]:
            break
    if st is None:
        raise ValueError(" | ".join(refused))
    keys = ("mean_tasks", "mean_q2", "mean_q3", "mean_idle", "p_wait", "var_x1", "var_x2",
            "cov_x1x2", "mean_waiting")
    row = {k: float(getattr(st, k)) for k in keys}
    row["err"] = {k: float(st.error_estimates[k]) for k in keys}
    if st.pi is not None:
        tasks = np.asarray(st.states, float).sum(axis=1)
        row["var_tasks"] = float(np.asarray(st.pi) @ (tasks - st.mean_tasks) ** 2)
    x = np.linspace(0.0, 12.0 / beta_p, CDF_POINTS)
    cdf = np.cumsum(st.q2_pmf)
    k = np.minimum(np.floor(x * n ** alpha).astype(int), n)
    row["cdf_x"] = x.tolist()
    row["cdf_q2"] = cdf[k].tolist()
    row.update(beta_eff=float(st.beta), method=st.method, levels=int(st.levels),
               truncated_mass=float(st.truncated_mass), tol=st_tol,
               mass_tail=float(st.mass_tail), mass_bound=float(st.mass_bound),
               wall=time.perf_counter() - t0, cpu=time.process_time() - c0,
               solver_version=SOLVER_VERSION, refused=refused)
    return row


def _child(n, alpha, beta_p, max_seconds=MAX_SECONDS):
    """One row in this process (the parent caps its CPU time): JSON on stdout."""
    try:
        row = chain_row(n, alpha, beta_p, max_seconds)
    except Exception as e:  # record what the solver refuses
        row = {"error": f"{type(e).__name__}: {e}"[:2000], "solver_version": SOLVER_VERSION}
    print("ROW " + json.dumps(row), flush=True)


def run_chain(alphas, ns, betas, redo=False, smoke=False, cpu_limit=600, max_seconds=MAX_SECONDS):
    """Each missing row (every selected row with ``redo``) in a child process
    capped at ``cpu_limit`` CPU seconds; a row that hits the cap is stored
    with the error and the cap."""
    import resource
    import sys
    data = json.loads(OUT_CHAIN.read_text()) if OUT_CHAIN.exists() and not smoke else {}
    for alpha in alphas:
        for n in ns:
            for beta_p in betas:
                key = f"{alpha}/{beta_p}/{n}"
                if "mean_tasks" in data.get(key, {}) and not redo:
                    continue
                t0 = time.perf_counter()

                def cap():
                    resource.setrlimit(resource.RLIMIT_CPU, (cpu_limit, cpu_limit + 5))
                p = subprocess.run([sys.executable, __file__, "row", "--alpha", str(alpha), "--beta",
                                    str(beta_p), "--n", str(n), "--max-seconds", str(max_seconds)],
                                   preexec_fn=cap, capture_output=True,
                                   text=True)
                line = [ln for ln in p.stdout.splitlines() if ln.startswith("ROW ")]
                if line:
                    row = json.loads(line[-1][4:])
                else:
                    row = {"error": f"CPU limit: the solve was stopped at {cpu_limit} s of CPU "
                                    f"(exit {p.returncode})", "cpu_limit": cpu_limit,
                           "solver_version": SOLVER_VERSION}
                row["wall_total"] = time.perf_counter() - t0
                row["solver_tree"] = _solver_tree()
                if not smoke:       # read again: another run may have written rows meanwhile
                    data = json.loads(OUT_CHAIN.read_text()) if OUT_CHAIN.exists() else {}
                if "mean_tasks" not in row and "mean_tasks" in data.get(key, {}):
                    # a failed redo keeps the solved row, with the failure beside it
                    row = data[key] | {"redo_error": row.get("error", "")[:2000]}
                data[key] = row
                data["_solver"] = "qlib.halfin_whitt.stationary_jsq, the tightest tol of " + \
                    ", ".join(f"{t:g}" for t in TOLS) + " it accepts"
                if not smoke:
                    tmp = OUT_CHAIN.with_suffix(".tmp")
                    tmp.write_text(json.dumps(data, indent=0))
                    tmp.replace(OUT_CHAIN)
                print(key, {k: v for k, v in row.items() if not k.startswith("cdf") and k != "err"},
                      flush=True)
    return data


def run_reps(n, alpha=0.75, beta_p=2.0, reps=10, burn_units=1.0, window_units=4.0, seed=20261208,
             out_path=None, append=False):
    """Independent replications, each from the limit's mean with its own burn-in;
    burn-in and window in units of the time scale n^{2α−1}.  Per replication:
    the time averages of (N − n)/n^α and Q_2/n^α over the window, P(wait),
    the events and the CPU seconds."""
    scale = n ** (2 * alpha - 1)
    q2 = int(round(2 / beta_p * n ** alpha))
    rows = []
    for r in range(reps):
        c0 = time.process_time()
        res = simulate_jsq(n, beta_p * n ** (0.5 - alpha), t_end=(burn_units + window_units) * scale,
                           burn_in=burn_units * scale, seed=seed + r, initial=[n, q2], batches=2,
                           kernel="event")     # the stream of the stored rows (super_hw_sim.json)
        b = np.asarray(res.batch_averages).mean(axis=0)     # equal batches
        rows.append({"seed": seed + r, "s": float((b[3] - b[0]) / n ** alpha), "q2": float(b[1] / n ** alpha),
                     "pwait": float(res.p_wait), "events": int(res.events),
                     "cpu": time.process_time() - c0})
        print(n, r, rows[-1], flush=True)
    out = {"n": n, "alpha": alpha, "beta_p": beta_p, "scale": scale, "burn_units": burn_units,
           "window_units": window_units, "seed": seed, "reps": reps, "initial_q2": q2,
           "solver_tree": _solver_tree(), "rows": rows}
    if out_path is not None:
        data = json.loads(out_path.read_text()) if out_path.exists() else {}
        old = data.get(f"{alpha}/{beta_p}/{n}")
        if append and old is not None:         # more replications of the same design, new seeds
            same = all(old[k] == out[k] for k in ("burn_units", "window_units", "initial_q2"))
            seeds = {r.get("seed", old["seed"] + i) for i, r in enumerate(old["rows"])}
            if not same or seeds & {r["seed"] for r in rows}:
                raise ValueError("append needs the same design and new seeds")
            out["rows"] = old["rows"] + rows
            out["seed"], out["reps"] = old["seed"], len(out["rows"])
        data[f"{alpha}/{beta_p}/{n}"] = out
        out_path.write_text(json.dumps(data, indent=1))
    return out


def run_sim(n=100_000, alpha=0.75, beta_p=2.0, burn_units=1.0, window_units=16.0, batches=8, seed=20261207):
    """One long run; burn-in and window in units of the time scale n^{2α−1}."""
    scale = n ** (2 * alpha - 1)
    q2 = int(round(2 / beta_p * n ** alpha))          # start at the limit's mean
    t0 = time.perf_counter()
    r = simulate_jsq(n, beta_p * n ** (0.5 - alpha), t_end=(burn_units + window_units) * scale,
                     burn_in=burn_units * scale, seed=seed, initial=[n, q2], record_dt=scale / 20,
                     batches=batches, kernel="event")     # the stored runs' stream
    b = np.asarray(r.batch_averages)                   # n − Q1, Q2, Q3, N − Q1, 1{Q1 = n}
    s_batches = (b[:, 3] - b[:, 0]) / n ** alpha      # (N − n)/n^α per batch
    out = {"n": n, "alpha": alpha, "beta_p": beta_p, "scale": scale, "burn_units": burn_units,
           "window_units": window_units, "seed": seed, "initial_q2": q2,
           "s_batches": s_batches.tolist(), "q2_batches": (b[:, 1] / n ** alpha).tolist(),
           "pwait": r.p_wait, "pwait_se": r.p_wait_se, "batches": int(r.batches),
           "batch_length": float(r.batch_length), "corr_length": float(r.corr_length),
           "batch_lag1": float(r.batch_lag1), "se_reliable": bool(r.se_reliable),
           "events": int(r.events), "wall": time.perf_counter() - t0,
           "path_t": (np.asarray(r.times) / scale).tolist(),
           "path_s": ((np.asarray(r.x1) + np.asarray(r.x2) + np.asarray(r.x3)) * n ** (0.5 - alpha)).tolist()}
    data = json.loads(OUT_SIM.read_text()) if OUT_SIM.exists() else {}
    data[f"single/{alpha}/{beta_p}/{n}"] = {k: v for k, v in out.items() if not k.startswith("path")}
    OUT_SIM.write_text(json.dumps(data, indent=1))
    print({k: v for k, v in out.items() if not k.startswith(("path", "s_b", "q2_b"))}, flush=True)
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", nargs="?", default="chain", choices=("chain", "sim", "reps", "row"))
    ap.add_argument("--cpu-limit", type=int, default=600)
    ap.add_argument("--max-seconds", type=float, default=MAX_SECONDS)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--seed", type=int, default=20261208)
    ap.add_argument("--append", action="store_true")
    ap.add_argument("--burn", type=float, default=1.0)
    ap.add_argument("--alpha", type=float, nargs="*", default=list(ALPHAS))
    ap.add_argument("--beta", type=float, nargs="*", default=list(BETAS))
    ap.add_argument("--n", type=int, nargs="*", default=list(NS))
    ap.add_argument("--window", type=float, default=16.0)
    ap.add_argument("--redo", action="store_true")
    ap.add_argument("--smoke", action="store_true")
    a = ap.parse_args()
    if a.smoke:
        run_chain((0.6,), (2000,), (2.0,), smoke=True)
    elif a.mode == "row":
        _child(a.n[0], a.alpha[0], a.beta[0], a.max_seconds)
    elif a.mode == "chain":
        run_chain(a.alpha, a.n, a.beta, redo=a.redo, cpu_limit=a.cpu_limit, max_seconds=a.max_seconds)
    elif a.mode == "reps":
        for n in a.n:
            run_reps(n, a.alpha[0], a.beta[0], reps=a.reps, burn_units=a.burn, window_units=a.window,
                     seed=a.seed, out_path=OUT_SIM, append=a.append)
    else:
        run_sim(window_units=a.window)
