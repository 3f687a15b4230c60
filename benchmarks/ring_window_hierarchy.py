"""Ring window hierarchy L = 2, 3, 4 at μ = 0 (writes ring_window_hierarchy.json).

``--smoke``: λ = 0.5, L = 2 only, written under ``$BENCH_SMOKE_OUT``.
"""
import json, sys, time
from pathlib import Path
from qlib.meanfield import ring_window
sys.path.insert(0, str(Path(__file__).resolve().parent))
import _smoke  # noqa: E402

KS = {0.5: 10, 0.7: 12, 0.9: 16}
out = {"levels": {str(k): v for k, v in KS.items()}, "rows": []}
path = _smoke.out(Path(__file__).with_name("ring_window_hierarchy.json"))
for lam in [float(a) for a in _smoke.argv()] or _smoke.pick(KS, [0.5]):
    prev = None
    for L in _smoke.pick((2, 3, 4), (2,)):
        t = time.perf_counter()
        r = ring_window(lam, L, truncation=KS[lam], tol=1e-9, start=prev)
        row = dict(lam=lam, L=L, levels=KS[lam], R=r.response_time, residual=r.residual,
                   iterations=r.iterations, seconds=time.perf_counter() - t)
        print(row, flush=True)
        out["rows"].append(row)
        path.write_text(json.dumps(out, indent=1))
        prev = r
