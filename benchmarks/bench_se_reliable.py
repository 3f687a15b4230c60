"""Coverage of the batch-means interval for R among the runs ``se_reliable`` flags, scanned across the flag's threshold.

The referee's evaluation of :func:`qlib.stats.batch.reliable_window` (the
flag of :func:`qlib.simulate <qlib.sim.run.simulate>`): for each *point*
(a system and a window ``W``), ``runs`` independent runs started in the
stationary law, and for each run the library's own batch-means code
(``qlib.sim.result._batch_fields``, the function ``simulate`` calls on its
4000 slices of the window) gives the 95 % interval for the mean response
time ``R`` and the flag. Reported per point: the coverage of the exact ``R``
among flagged and unflagged runs, each with its Clopper–Pearson 95 %
interval and its 90 % interval (the equivalence test of the target band
[0.93, 0.97] at level 5 %: the 90 % interval inside the band), the share of
runs flagged, the spread of ``z = (R̂ − R)/se`` and the coverage of an
overlapping-batch-means (OBM) interval on the same slices with the same
batch length (variance of Meketon and Schmeiser, ``1.5 (k − 1)`` degrees
of freedom).

Systems: JSQ on ``K_20`` at ``λ ∈ {0.9, 0.95}`` (exact ``R`` and the
stationary start from :func:`qlib.halfin_whitt.stationary_jsq`; ``τ_true``,
the integrated autocorrelation time of the number of tasks, from the
Poisson equation of the truncated occupancy generator
:func:`qlib.halfin_whitt.brute.occupancy_generator`) and the M/M/1 queue at
``λ ∈ {0.9, 0.95, 0.99}`` (``R = 1/(1 − λ)``, geometric start,
``τ_true = (1 + ρ)/(1 − ρ)²``). Windows ``W = j · W_0`` with
``W_0 = 250 τ_true`` and ``j`` in ``SCAN``: one run of ``max(SCAN) · W_0``
per seed, its prefixes of length ``W`` being runs of length ``W`` (each
point's runs are independent; points of one system share seeds). The paths
come from the small event loops below (the M/M/1 queue and JSQ on ``K_n``
as continuous-time chains), slice-averaged exactly as ``simulate`` does;
only the batch-means step is the library's.

Run: ``nice .venv/bin/python benchmarks/bench_se_reliable.py [--smoke] [--runs N] [--points i,j] [--out PATH]``
(default: 1000 runs per point, 100 at ``λ = 0.99``, in rounds until done); writes
``benchmarks/se_reliable_eval.json`` after every block of runs. To spread the
points over processes, run each with ``--points i --out PART.json`` and join
the parts with ``... bench_se_reliable.py merge PART.json ...``; a process
stopped early leaves the runs it finished (each point records ``runs`` and
``target_runs``).
"""
from __future__ import annotations

import argparse
import json
import math
import time
import warnings
from pathlib import Path

import numba
import numpy as np
from scipy import sparse, stats as sst
from scipy.sparse.linalg import spsolve

from qlib.sim.result import _FINE, _batch_fields
from qlib import stats

# (name, n, λ, share of the runs)
POINTS = [("K20, lam=0.9", 20, 0.9, 1.0), ("K20, lam=0.95", 20, 0.95, 1.0),
          ("M/M/1, lam=0.9", 1, 0.9, 1.0), ("M/M/1, lam=0.95", 1, 0.95, 1.0),
          ("M/M/1, lam=0.99", 1, 0.99, 0.1)]
SCAN = (1, 2, 3, 4, 6)                # windows W = j · W0
W0_TAU = 250.0                        # W0 in units of τ_true
BAND = (0.93, 0.97)


# ---------------------------------------------------------------- the event loops
@numba.njit(cache=True)
def _mm1(lam, q0, T, nfine, kcap, seed):
    """M/M/1 (μ = 1) on [0, T] from ``q0``: per fine slice the time spent at each
    queue length (capped at ``kcap``), the area of Q, and the arrival-side
    response-time sums (an arrival finding k has expected response k + 1)."""
    np.random.seed(seed)
    dt = T / nfine
    hist = np.zeros((nfine, kcap + 1), np.float32)
    area = np.zeros(nfine)
    rsum = np.zeros(nfine)
    rcnt = np.zeros(nfine)
    t, q, s, rate, pa = 0.0, q0, 0, lam + 1.0, lam / (lam + 1.0)
    while True:
        tn = t - math.log(1.0 - np.random.random()) / rate
        while s < nfine and tn >= (s + 1) * dt:
            seg = (s + 1) * dt - t
            hist[s, min(q, kcap)] += seg
            area[s] += q * seg
            t = (s + 1) * dt
            s += 1
        if s >= nfine:
            break
        seg = tn - t
        hist[s, min(q, kcap)] += seg
        area[s] += q * seg
        t = tn
        if np.random.random() < pa:
            rsum[s] += q + 1
            rcnt[s] += 1
            q += 1
        elif q > 0:
            q -= 1
    return hist, area, rsum, rcnt


@numba.njit(cache=True)
def _jsq_kn(n, lam, start, burn, T, nfine, L, seed):
    """JSQ on K_n (per-server rate λ, μ = 1) from the occupancy ``start``
    (``start[i]`` servers with at least i + 1 tasks), run for ``burn``, then
    on ``[0, T]``: per fine slice the time integral of the occupancy counts
    ``Q_1..Q_L`` and the arrival-side response-time sums, and the integrals of
    ``N`` and ``N²`` over ``[0, T]``. Uniformized at rate ``n(λ + 1)``."""
    np.random.seed(seed)
    dt = T / nfine
    occ = np.zeros((nfine, L))
    rsum = np.zeros(nfine)
    rcnt = np.zeros(nfine)
    Q = np.zeros(L + 1, np.int64)            # Q[i] = servers with >= i + 1 tasks; Q[L] = 0 guard
    N = 0
    for i in range(len(start)):
        Q[i] = start[i]
        N += start[i]
    t, s, rate, pa = -burn, 0, n * (lam + 1.0), lam / (lam + 1.0)
    m1, m2 = 0.0, 0.0
    while True:
        tn = t - math.log(1.0 - np.random.random()) / rate
        if tn > 0.0:
            if t < 0.0:
                t = 0.0
            while s < nfine and tn >= (s + 1) * dt:
                seg = (s + 1) * dt - t
                for i in range(L):
                    if Q[i] == 0:              # Q is nonincreasing: the levels above are empty
                        break
                    occ[s, i] += Q[i] * seg
                m1 += N * seg
                m2 += N * N * seg
                t = (s + 1) * dt
                s += 1
            if s >= nfine:
                break
            seg = tn - t
            for i in range(L):
                if Q[i] == 0:
                    break
                occ[s, i] += Q[i] * seg
            m1 += N * seg
            m2 += N * N * seg
        t = tn
        if np.random.random() < pa:
            m = 0                              # the shortest queue holds m tasks
            while Q[m] == n:
                m += 1
            if m >= L:
                raise ValueError("queue above the level cap")
            Q[m] += 1
            N += 1
            if t > 0.0:
                rsum[s] += m + 1
                rcnt[s] += 1
        else:
            j = np.random.randint(0, n)         # servers sorted by decreasing length
            k = 0
            while Q[k] > j:
                k += 1
            if k > 0:
                Q[k - 1] -= 1
                N -= 1
    return occ, rsum, rcnt, m1 / T, m2 / T


# ---------------------------------------------------------------- exact values
#: K_20: the exact R of the library's chain (stored by bench_se_coverage.py), the level cap of
#: the small truncated chain whose law starts the runs, the burn-in after that start, and W0
JSQ = {0.9: dict(levels=4, burn_in=500.0, w0=3000.0), 0.95: dict(levels=4, burn_in=2000.0, w0=12500.0)}


def exact_point(n, lam, smoke=False):
    """``(R, τ, start, L, W0, burn_in, info)`` for a point: the exact mean response
    time, the integrated autocorrelation time of the number of tasks (for K_n
    ``nan``: estimated afterwards from the runs), a function ``seed -> start``,
    the level cap of the simulation, the first window, the burn-in after the
    start and what the exact values rest on."""
    if n == 1:
        rho = lam
        kcap = int(math.ceil(math.log(1e-4) / math.log(rho)))
        tau = (1 + rho) / (1 - rho) ** 2

        def start(seed):
            return int(np.random.default_rng(seed).geometric(1 - rho) - 1)
        return (1.0 / (1.0 - lam), tau, start, kcap, W0_TAU * tau, 0.0,
                dict(tau_source="(1 + ρ)/(1 − ρ)², exact", R_source="1/(1 − λ)",
                     start="the stationary (geometric) law"))
    c = JSQ[lam]
    Lc = 3 if smoke else c["levels"]
    S, pi, R_trunc = jsq_chain(n, lam, Lc)
    stored = json.loads(Path(__file__).with_name("se_coverage_results.json").read_text())["cells"]
    R = next(v["exact_R"] for v in stored.values() if v["n"] == n and v["lam"] == lam)
    cdf = np.cumsum(pi)

    def start_k(seed):
        u = np.random.default_rng(seed).random()
        return S[min(int(np.searchsorted(cdf, u * cdf[-1])), len(pi) - 1)].astype(np.int64)
    info = dict(tau_source=("W · Var(window mean of N)/(2 Var N) over the independent runs at the "
                            "longest window (Var N pooled over the runs)"),
                R_source="qlib.halfin_whitt.stationary_jsq (stored in se_coverage_results.json)",
                start=(f"the stationary law of the occupancy chain capped at {Lc} tasks per server "
                       f"(R there {R_trunc:.6g}), then a burn-in of {c['burn_in']:g}"))
    # level cap of the simulation: far above any level a run reaches (a run that reached it would raise)
    return R, float("nan"), start_k, 64, c["w0"] * (0.02 if smoke else 1.0), c["burn_in"], info


def jsq_chain(n, lam, levels):
    """The occupancy chain of JSQ on ``K_n`` capped at ``levels``: states, stationary law
    and ``R = E[N]/(nλ)``."""
    from qlib.halfin_whitt.brute import occupancy_generator
    S, A = occupancy_generator(n, n * lam, levels)
    A = sparse.csr_matrix(A)
    m = A.shape[0]
    At = sparse.vstack([sparse.csr_matrix(np.ones((1, m))), A.T.tocsr()[1:]]).tocsc()
    e = np.zeros(m)
    e[0] = 1.0
    pi = spsolve(At, e)                      # π A = 0, Σ π = 1
    return S, pi, float(pi @ S.sum(axis=1) / (n * lam))


# ---------------------------------------------------------------- one run, every window
def _obm_cover(rsum, rcnt, per, R):
    """Whether the 95 % OBM interval (batches of ``per`` slices, Meketon–Schmeiser
    variance, ``1.5 (k − 1)`` df) for the ratio ``Σ rsum / Σ rcnt`` covers ``R``."""
    nsl = rsum.size
    Rh = rsum.sum() / rcnt.sum()
    z = rsum - Rh * rcnt                     # linearised ratio residuals per slice
    c = np.concatenate([[0.0], np.cumsum(z)])
    bm = (c[per:] - c[:-per]) / per          # overlapping batch means
    var = nsl * per / ((nsl - per + 1) * (nsl - per)) * np.sum(bm ** 2)   # σ² (mean of z is 0)
    se = math.sqrt(var / nsl) / rcnt.mean()
    df = 1.5 * (nsl / per - 1)
    return abs(Rh - R) <= float(sst.t.ppf(0.975, df)) * se


def one_run(n, lam, R, start, L, seed, W0, burn):
    """For one seed: per window of ``SCAN``, ``(flag, covers, z, covers_obm, τ̂, L̂, k)``,
    and the time averages of ``N`` and ``N²`` over the longest window (``N²``: K_n only)."""
    nf = _FINE * max(SCAN)
    T = W0 * max(SCAN)
    if n == 1:
        hist, area, rsum, rcnt = _mm1(lam, start(seed), T, nf, L, seed)
        moments = (float(area.sum() / T), float("nan"))
    else:
        occ_int, rsum, rcnt, m1, m2 = _jsq_kn(n, lam, start(seed), burn, T, nf, L, seed)
        moments = (m1, m2)
    out = []
    for j in SCAN:
        m = _FINE * j
        W = W0 * j
        if n == 1:
            h = hist[:m].reshape(_FINE, j, -1).sum(axis=1, dtype=np.float64)
            occ_f = np.cumsum(h[:, ::-1], axis=1)[:, ::-1] / (W / _FINE)   # q(i) = P(Q >= i)
        else:
            h = occ_int[:m].reshape(_FINE, j, -1).sum(axis=1) / (n * W / _FINE)
            occ_f = np.column_stack([np.ones(_FINE), h])
        rs = rsum[:m].reshape(_FINE, j).sum(axis=1)
        rc = rcnt[:m].reshape(_FINE, j).sum(axis=1)
        occ = occ_f.mean(axis=0)
        f = _batch_fields(occ, occ_f, rs, rc, _FINE, W / _FINE, None, W, warn=False)
        sb = _CAPTURED.pop()                 # the batches _batch_fields used
        lo, hi = f["response_time_ci"]
        se = f["mean_response_time_se"]
        out.append((bool(f["se_reliable"]), bool(lo <= R <= hi), (f["mean_response_time"] - R) / se,
                    bool(_obm_cover(rs, rc, sb.per, R)), float(sb.tau), float(sb.corr_length),
                    int(f["batches"])))
    return out, moments


_CAPTURED = []
_slice_batches = stats.slice_batches


def _capturing_slice_batches(*args, **kw):
    """``qlib.stats.slice_batches`` unchanged, its result kept for the report (τ̂, L̂)."""
    sb = _slice_batches(*args, **kw)
    _CAPTURED.append(sb)
    return sb


stats.slice_batches = _capturing_slice_batches   # _batch_fields looks it up in qlib.stats


# ---------------------------------------------------------------- summaries
def tau_from_runs(mom, W):
    """τ_int of ``N`` from independent stationary runs of length ``W``:
    ``W · Var(window means) / (2 Var N)``, with a 95 % interval from the
    chi-square law of the sample variance (``Var N`` pooled, its error ignored)."""
    m1, m2 = mom[:, 0], mom[:, 1]
    r = len(m1)
    if r < 3:
        return float("nan"), None
    var_n = float(np.mean(m2) - np.mean(m1) ** 2)
    v = float(np.var(m1, ddof=1))
    tau = W * v / (2 * var_n)
    lo, hi = (r - 1) / sst.chi2.ppf(0.975, r - 1), (r - 1) / sst.chi2.ppf(0.025, r - 1)
    return tau, [tau * lo, tau * hi]


def cp(k, m, level):
    """Clopper–Pearson interval for ``k`` successes in ``m`` trials."""
    if m == 0:
        return None
    a = 1 - level
    lo = 0.0 if k == 0 else float(sst.beta.ppf(a / 2, k, m - k + 1))
    hi = 1.0 if k == m else float(sst.beta.ppf(1 - a / 2, k + 1, m - k))
    return [lo, hi]


def rate(cov, mask):
    m = int(mask.sum())
    k = int(cov[mask].sum())
    ci90 = cp(k, m, 0.90)
    return dict(runs=m, covered=k, coverage=(k / m if m else None), ci95=cp(k, m, 0.95), ci90=ci90,
                in_band=(None if ci90 is None else bool(BAND[0] <= ci90[0] and ci90[1] <= BAND[1])))


def summarise(recs, tau_true):
    a = np.array([r[:4] for r in recs], float)
    flag, cov, z, obm = a[:, 0] > 0, a[:, 1] > 0, a[:, 2], a[:, 3] > 0
    tau_hat = np.array([r[4] for r in recs])
    L_hat = np.array([r[5] for r in recs])
    return dict(runs=len(recs), flagged_share=float(flag.mean()),
                overall=rate(cov, np.ones_like(flag)), flagged=rate(cov, flag), unflagged=rate(cov, ~flag),
                obm=rate(obm, np.ones_like(flag)),
                z_sd=float(np.std(z, ddof=1)), z_sd_flagged=(float(np.std(z[flag], ddof=1)) if flag.sum() > 1 else None),
                tau_hat_over_true=[float(q) for q in np.quantile(tau_hat / tau_true, [0.05, 0.5, 0.95])],
                L_hat_over_tau_true=[float(q) for q in np.quantile(L_hat / tau_true, [0.05, 0.5, 0.95])],
                batches_median=float(np.median([r[6] for r in recs])))


def main(runs=1000, only=None, out_path=None, smoke=False, block=50):
    """Runs in rounds of ``block`` seeds per point (a tenth as many at ``λ = 0.99``, scaled by the
    points' shares), writing the JSON after each block, until every point has its runs."""
    path = Path(out_path) if out_path else Path(__file__).with_name("se_reliable_eval.json")
    out = dict(runs_per_point=runs, scan=list(SCAN), w0_over_tau=W0_TAU, band=list(BAND), points={},
               method=("runs started in the stationary law; the library's batch-means step "
                       "(qlib.sim.result._batch_fields) on 4000 slices of each window; coverage of the "
                       "exact R among flagged and unflagged runs with Clopper-Pearson 95 % and 90 % "
                       "intervals; OBM on the same slices with the same batch length"))
    todo = [(i, p) for i, p in enumerate(POINTS) if only is None or i in only]
    state = {}
    t0 = time.perf_counter()
    for i, (name, n, lam, share) in todo:
        R, tau, start, L, W0, burn, info = exact_point(n, lam, smoke)
        W0 = W0 * (0.02 if smoke and n == 1 else 1.0)
        state[name] = dict(n=n, lam=lam, R=R, tau=tau, start=start, L=L, W0=W0, burn=burn, info=info,
                           target=max(4, int(round(runs * share))), recs=[[] for _ in SCAN], mom=[],
                           secs=0.0)
        print(f"{name}: R = {R:.6g}, τ_true = {tau:.5g}, {info}", flush=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        while any(len(p["recs"][0]) < p["target"] for p in state.values()):
            for name, p in state.items():
                done = len(p["recs"][0])
                if done >= p["target"]:
                    continue
                t1 = time.perf_counter()
                for s in range(done, min(p["target"], done + max(1, int(block * p["target"] / runs)))):
                    rec, mom = one_run(p["n"], p["lam"], p["R"], p["start"], p["L"], 10_000 + s,
                                       p["W0"], p["burn"])
                    for jj, r in enumerate(rec):
                        p["recs"][jj].append(r)
                    p["mom"].append(mom)
                p["secs"] += time.perf_counter() - t1
                tau, tau_ci = p["tau"], None
                if math.isnan(tau):
                    tau, tau_ci = tau_from_runs(np.array(p["mom"]), p["W0"] * max(SCAN))
                out["points"][name] = dict(
                    n=p["n"], lam=p["lam"], exact_R=p["R"], tau_true=tau, tau_true_ci95=tau_ci,
                    **p["info"], runs=len(p["recs"][0]), target_runs=p["target"], seconds=p["secs"],
                    windows={f"{j}": dict(window=p["W0"] * j, w_over_tau=p["W0"] * j / tau,
                                          **summarise(p["recs"][jj], tau))
                             for jj, j in enumerate(SCAN)})
                out["seconds"] = time.perf_counter() - t0
                path.write_text(json.dumps(out, indent=1))
                print(f"{name}: {len(p['recs'][0])} runs ({p['secs']:.0f} s)", flush=True)
    for name, pt in out["points"].items():
        for j, w in pt["windows"].items():
            fl = w["flagged"]
            print(f"{name:18s} W/τ={w['w_over_tau']:6.0f} flagged {w['flagged_share']:.2f} "
                  f"cov|flag {fl['coverage']} cov|unflag {w['unflagged']['coverage']} "
                  f"all {w['overall']['coverage']:.3f} obm {w['obm']['coverage']:.3f}", flush=True)
    return out


def merge(paths, out_path=None):
    """Join partial files (``--points`` runs with ``--out``) into ``se_reliable_eval.json``, in the order of ``POINTS``."""
    parts = [json.loads(Path(p).read_text()) for p in paths]
    pts = {}
    for p in parts:
        pts.update(p["points"])
    out = {k: v for k, v in parts[0].items() if k not in ("points", "seconds")}
    out["points"] = {name: pts[name] for name, *_ in POINTS if name in pts}
    out["seconds"] = sum(p.get("seconds", 0.0) for p in parts)
    path = Path(out_path) if out_path else Path(__file__).with_name("se_reliable_eval.json")
    path.write_text(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    import sys
    if len(sys.argv) > 1 and sys.argv[1] == "merge":
        merge(sys.argv[2:])
        sys.exit(0)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true",
                    help="four short runs per point (seconds), written under $BENCH_SMOKE_OUT")
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--points", default=None, help="comma-separated indices into POINTS")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    if a.smoke:
        import sys
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import _smoke
        a.out = _smoke.out(Path(__file__).with_name("se_reliable_eval.json"))
    main(2 if a.smoke else a.runs, None if a.points is None else {int(i) for i in a.points.split(",")},
         a.out, a.smoke)
