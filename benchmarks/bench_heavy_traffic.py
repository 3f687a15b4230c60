"""Events/s of qlib.halfin_whitt.simulate_jsq (run: python benchmarks/bench_heavy_traffic.py);
with ``--stationary``: the time of ``stationary_jsq`` for n = 100..2000, beta = 0.5, 1, 2.

CPU time (``time.process_time``) of one stationary run per ``n`` at
``β = 1``, from the diffusion's mean state, with a budget of about
``EVENTS`` events (about ``2n`` events per unit of time), and the time of
the first call in a fresh process: a numba compile, or a load from the
on-disk cache when it is warm. ``--smoke``: one short run at ``n = 10⁴``
(no fresh-process timings), with ``--stationary`` one small ``n`` written
under ``$BENCH_SMOKE_OUT``.
"""
import math
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from qlib.halfin_whitt import simulate_jsq  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _smoke  # noqa: E402

EVENTS = _smoke.pick(4e7, 2e5)
FIRST_CALL = ("import time; c = time.process_time(); "
              "from qlib.halfin_whitt import simulate_jsq; "
              "simulate_jsq(10, 1.0, t_end=1.0, seed=0); print(time.process_time() - c)")


def first_call_seconds(cache_dir):
    """CPU seconds of import + first call in a fresh process with this numba cache."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    out = subprocess.run([sys.executable, "-c", FIRST_CALL], env=env, cwd=root,
                         capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])

EXTREMES = ((2, 0.25), (9, 0.25), (20, 0.25), (50, 0.25), (100, 0.25), (9, 2.5), (20, 4.0),
            (500, 0.25), (1000, 0.25), (2000, 0.25), (2000, 4.0))


def bench_stationary(ns=(100, 500, 1000, 2000), betas=(0.5, 1.0, 2.0)):
    """CPU and wall seconds of ``stationary_jsq(n, beta)`` (default arguments):
    the issue's grid, then the extremes of ``n <= 2000``, ``β ∈ [0.25, 4]``."""
    from qlib.halfin_whitt import stationary_jsq
    print(f"{'n':>5} {'beta':>5} {'states':>8} {'CPU s':>8} {'wall s':>8}  max error bound")
    rows = []
    grid = [(n, b) for n in ns for b in betas] + list(EXTREMES)
    for n, beta in _smoke.pick(grid, [(20, 1.0)]):
        if True:
            try:
                st = stationary_jsq(n, beta)
            except RuntimeError as e:
                print(f"{n:5d} {beta:5.2f}  failed: {e}")
                continue
            print(f"{n:5d} {beta:5.2f} {st.pi.size:8d} {st.cpu_time:8.1f} {st.wall_time:8.1f}  "
                  f"{max(st.error_bounds.values()):.1e}", flush=True)
            rows.append(dict(n=n, beta=beta, states=int(st.pi.size), cpu_s=st.cpu_time,
                             wall_s=st.wall_time, p_wait=st.p_wait,
                             p_wait_bound=st.error_bounds["p_wait"],
                             max_bound=max(st.error_bounds.values()),
                             max_rel_bound=max(st.error_bounds[k] / max(1.0, abs(getattr(st, k)))
                                               for k in ("p_wait", "mean_q2", "mean_idle",
                                                         "var_x1", "mean_x1x2")),
                             rounds=st.rounds))
    import json
    out = _smoke.out(os.path.join(os.path.dirname(os.path.abspath(__file__)), "stationary_results.json"))
    with open(out, "w") as fh:
        json.dump({"rows": rows, "note": "one run; CPU time of stationary_jsq with default "
                   "arguments (tol = 1e-10), both solves included; OPENBLAS_NUM_THREADS=1"}, fh, indent=1)


if __name__ == "__main__" and "--stationary" in sys.argv:
    bench_stationary()
elif __name__ == "__main__":
    if not _smoke.SMOKE:
        with tempfile.TemporaryDirectory() as cache:
            compile_s = first_call_seconds(cache)   # empty cache: numba compiles
            cached_s = first_call_seconds(cache)    # cache written by the first run
        print(f"import + first call, empty numba cache (compile): {compile_s:.2f} s CPU; "
              f"with the cache: {cached_s:.2f} s CPU")
    c0, w0 = time.process_time(), time.perf_counter()
    simulate_jsq(10, 1.0, t_end=1.0, seed=0)
    print(f"first call (compile, or cache load if warm): {time.process_time() - c0:.2f} s CPU, "
          f"{time.perf_counter() - w0:.2f} s wall")
    c0 = time.process_time()
    simulate_jsq(10, 1.0, t_end=1.0, seed=0)
    print(f"second call (compiled): {time.process_time() - c0:.4f} s CPU")
    for n in _smoke.pick((10**4, 10**6, 10**7), (10**4,)):
        s = math.sqrt(n)
        T = EVENTS / (2 * n)
        q0 = [n - int(round(s)), int(round(0.8 * s))]
        c0 = time.process_time()
        r = simulate_jsq(n, 1.0, t_end=T, seed=1, initial=q0)
        cpu = time.process_time() - c0
        print(f"n = {n:>9}: {r.events:.2e} events in {cpu:.2f} s CPU: "
              f"{r.events / cpu / 1e6:6.2f} M events/s (kernel wall {r.events / r.wall_time / 1e6:.2f})")
