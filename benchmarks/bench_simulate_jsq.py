"""CPU per event of simulate_jsq's two kernels, side by side in one run.

``qlib.halfin_whitt.simulate_jsq`` at ``β = 1`` and ``n = 10², …, 10⁶``, on
the uniformized kernel (``kernel="uniformized"``, stream ``"uniformized-1"``,
the one ``kernel="auto"`` picks at these designs) and the event kernel
(``kernel="event"``, ``"event-1"``). Each run starts at ``Q_1 = n −
⌊√n⌉`` (near the stationary idle count), lasts about ``EVENTS`` jumps of the
chain (``t_end = EVENTS / (2 λ_n)``, a tenth of it burn-in) and is timed with
``time.process_time`` around the call (the batch statistics included); the
cost is CPU ns per event of the chain (arrivals and departures; the
uniformized kernel's self-loops are its own overhead), best of 3 seeds. The
kernels are compiled (or loaded) before the clock starts.

Run: ``.venv/bin/python benchmarks/bench_simulate_jsq.py`` (about a minute);
writes benchmarks/bench_simulate_jsq.json with the machine and its load.
``--smoke``: one small ``n``, one seed, written under ``$BENCH_SMOKE_OUT``.
"""
import json
import math
import os
import platform
import sys
import time
import warnings
from pathlib import Path

from qlib.halfin_whitt import simulate_jsq

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _smoke  # noqa: E402

EVENTS = 10_000_000
NS = [10**2, 10**3, 10**4, 10**5, 10**6]
KERNELS = ("event", "uniformized")
OUT = Path(__file__).resolve().parent / "bench_simulate_jsq.json"


def ns_per_event(n, kernel, seed, events):
    lam = n - math.sqrt(n)
    t_end = events / (2 * lam)
    c0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)    # batch s.e. not the point here
        r = simulate_jsq(n, 1.0, t_end=t_end, burn_in=t_end / 10, seed=seed, batches=10,
                         initial=(n - round(math.sqrt(n)),), kernel=kernel)
    cpu = time.process_time() - c0
    return cpu / r.events * 1e9, r.events


def main(smoke=False):
    ns, seeds, events = ([100], [0], 100_000) if smoke else (NS, [0, 1, 2], EVENTS)
    for k in KERNELS:                      # compile or load both kernels first
        simulate_jsq(100, 1.0, t_end=10.0, seed=0, batches=2, kernel=k)
    rows = []
    for n in ns:
        row = {"n": n, "beta": 1.0}
        for k in KERNELS:
            runs = [ns_per_event(n, k, s, events) for s in seeds]
            row[f"{k}_ns"] = min(c for c, _ in runs)
            row[f"{k}_events"] = runs[0][1]
        row["speedup"] = row["event_ns"] / row["uniformized_ns"]
        rows.append(row)
        print(f"n = {n:>8}: event {row['event_ns']:6.1f} ns/event, uniformized "
              f"{row['uniformized_ns']:6.1f} ns/event, ratio {row['speedup']:.2f}", flush=True)
    out = {"rows": rows, "events_per_run": events, "best_of": len(seeds),
           "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
           "cpus": os.cpu_count(), "load_average": list(os.getloadavg()),
           "python": platform.python_version(), "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    path = _smoke.out(OUT)
    path.write_text(json.dumps(out, indent=1) + "\n")
    return out


if __name__ == "__main__":
    main(smoke=_smoke.SMOKE)
