"""Re-solve the stored rows of the exact chain with today's stationary_jsq and compare.

Usage: PYTHONPATH=. python benchmarks/chain_structured_resolve.py CPU_LIMIT OUT.json
       ... --smoke   (the three cheapest rows, into a temporary file: seconds)

For every row of benchmarks/ht_chain.json, ht_chain_tight.json, ht_chain_large.json,
ht_alternatives_chain.json and super_hw_chain.json whose stored CPU time is at most
CPU_LIMIT seconds, the same call (the row's tol and keyword arguments; super_hw's as
benchmarks/bench_super_hw.py makes them) is solved again and each stored quantity's
|new − stored| / stored error is written to OUT.json (with the rounds, i.e. the Q_3
sectors solved).  Rows the default call hands to the adaptive solver are only checked
to still go there (the adaptive solver is not rerun).  Resumes from OUT.json.
"""
import json, math, sys, time
from qlib.halfin_whitt import stationary_jsq, chain_fsp
from qlib.halfin_whitt.stationary import chain_constants
class FSP(Exception): pass
def stub(*a, **k): raise FSP()
chain_fsp.stationary_jsq_fsp = stub
B = str(__import__("pathlib").Path(__file__).resolve().parent) + "/"
jobs = []
for f, tol in [('ht_chain', None), ('ht_chain_tight', 1e-14), ('ht_chain_large', None)]:
    d = json.load(open(B + f + '.json'))
    for b, rows in d.items():
        if b.startswith('_'): continue
        for n, r in rows.items():
            kw = dict(r.get('solver_kw', {}))
            if tol: kw['tol'] = tol
            jobs.append((f, f'{b}/{n}', int(n), float(b), kw, r, ('c', 'q2', 'var_x1', 'x1x2')))
d = json.load(open(B + 'ht_alternatives_chain.json'))
for k, r in d.items():
    if k.startswith('_') or 'p_wait' not in r: continue
    n, b = k.split('/')
    jobs.append(('ht_alternatives_chain', k, int(n), float(b), {'tol': r['tol']}, r, tuple(r['err'])))
d = json.load(open(B + 'super_hw_chain.json'))
for k, r in d.items():
    if k.startswith('_') or 'mean_tasks' not in r: continue
    jobs.append(('super_hw_chain', k, int(k.split('/')[2]), r['beta_eff'], {'tol': r['tol'], 'max_seconds': 450.0, 'max_memory': 2e10, 'max_states': 2e10, 'fallback': False}, r, tuple(r['err'])))
import os, tempfile
SMOKE = '--smoke' in sys.argv
if SMOKE:
    lim, out = 1.0, os.path.join(tempfile.mkdtemp(), 'resolve_smoke.json')
else:
    lim = float(sys.argv[1]); out = sys.argv[2]
res = json.load(open(out)) if os.path.exists(out) else []
done = {(x['file'], x['key']) for x in res}
jobs.sort(key=lambda j: j[5].get('cpu', j[5].get('wall', 1e9)) or 1e9)
if SMOKE:
    jobs = jobs[:3]
for f, key, n, b, kw, r, fields in jobs:
    if (f, key) in done: continue
    cpu = r.get('cpu', r.get('wall'))
    if cpu is None or cpu > lim:
        res.append({'file': f, 'key': key, 'skipped': f'cpu {cpu}'}); continue
    c0 = time.process_time()
    try:
        st = stationary_jsq(n, b, **kw)
    except FSP:
        res.append({'file': f, 'key': key, 'new_method': 'fsp', 'old_method': r.get('method')})
        json.dump(res, open(out, 'w'), indent=0); continue
    except Exception as e:
        res.append({'file': f, 'key': key, 'error': repr(e)[:300]}); json.dump(res, open(out, 'w'), indent=0); continue
    if f.startswith('ht_chain'):
        k = chain_constants(st); new = {q: k[q] for q in fields}
    else:
        new = {q: float(getattr(st, q)) for q in fields}
    ratios = {q: abs(new[q] - r[q]) / r['err'][q] if r['err'][q] > 0 else (0.0 if new[q] == r[q] else math.inf) for q in fields}
    res.append({'file': f, 'key': key, 'rounds': st.rounds, 'method': st.method, 'old_method': r.get('method'),
                'ratios': ratios, 'max_ratio': max(ratios.values()),
                'mass_tail': [r.get('mass_tail'), st.mass_tail], 'mass_bound': [r.get('mass_bound'), st.mass_bound],
                'cpu': time.process_time() - c0})
    json.dump(res, open(out, 'w'), indent=0)
    print(f, key, st.rounds, st.method, f"{res[-1]['max_ratio']:.3g}", f"{res[-1]['cpu']:.1f}s", flush=True)
