"""Golden results of the simulation kernels, bit for bit.

Every variant of the event loop (``qlib.sim.kernel``: exponential services,
whole neighbourhood or ``choices``, unpipelined and pipelined;
``qlib.sim.interleave``: several replications in one loop;
``qlib.sim.general``: general services, heap and ring, with and without
measured response times) is run on a grid of small cases: resampling rates
0, 1.5 and inf, a ring, a random 3-regular graph and an irregular
Erdős–Rényi graph (isolated vertices included), with burn-in, forced
batches, recorded paths, a loaded start (the tracked levels grow) and
progress slices.  The stored file ``tests/data/one_loop_golden.json`` holds,
for every result, its counts and mean response time exactly (``float.hex``)
and a SHA-256 digest of the exact bytes, dtypes and shapes of all its arrays
and numbers, so any change to what a seeded run draws or computes shows here.

Regenerate the file (only after a deliberate change of the model or of the
random streams) with ``python tests/test_one_loop_golden.py``.

The digests hold on the kind of machine that wrote them: the file records
its fingerprint (NumPy's version and the CPU features its kernels use, the C
library).  Elsewhere last bits may differ (NumPy's vectorised ``log`` and
``exp`` differ between CPU feature sets), and the test then compares what
survives them: every count exactly and the mean response time to a relative
``1e-9``.
"""
from __future__ import annotations

import hashlib
import json
import math
import platform
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from qlib import graphs as g
from qlib.sim import replicate, simulate
from qlib.sim import service as sv
from qlib.sim.general import _simulate_general
from qlib.sim.interleave import simulate_interleaved

DATA = Path(__file__).parent / "data" / "one_loop_golden.json"
RUN = sys.modules["qlib.sim.run"]     # simulate() reads the pipeline depth here

# the fields compared (those that exist and are not None)
FIELDS = ("occupancy", "occupancy_se", "mean_response_time", "mean_response_time_se",
          "batch_occupancy", "batch_response_time", "times", "paths", "events",
          "resamples", "arrivals", "departures", "final_queues", "levels", "batches",
          "batch_length", "corr_length", "batch_lag1", "se_reliable", "response_times",
          "response_time_se", "replications")


def _graphs():
    return {"ring": g.ring(40), "rr3": g.random_regular(48, 3, seed=5),
            "er": g.erdos_renyi(40, 2.5, seed=3)}


def _loaded(n):
    x = np.zeros(n, np.int64)
    x[::5] = 19      # above the 16 levels tracked at first: the levels grow
    return x


def _vary(kw, i, batches):
    """Case ``i``'s options, in turn: a loaded start, forced batches, progress
    slices."""
    if i % 3 == 0:
        kw["initial"] = "loaded"
    if i % 4 == 1:
        kw["batches"] = batches
    if i % 5 == 2:
        kw["progress"] = True
    return kw


def _exp_cases():
    """(name, graph key, mu, keyword arguments of simulate)."""
    out = []
    for gk in ("ring", "rr3", "er"):
        for mu in (0.0, 1.5, math.inf):
            for ch in (None, 2, 3):
                i = len(out)
                kw = _vary(dict(t_end=30.0, burn_in=5.0, seed=100 + i, record_dt=2.5,
                                choices=ch), i, 4)
                if i % 7 == 3:
                    kw["levels"] = 5
                out.append((f"exp-{gk}-{mu}-{ch}", gk, mu, kw))
    # an occupancy-vector start (drawn from the seed) and a transient run
    out.append(("exp-occstart", "rr3", 1.5, dict(t_end=20.0, burn_in=2.0, seed=7,
                                                 initial=np.array([1.0, 0.6, 0.3, 0.1]))))
    out.append(("exp-transient", "ring", 0.0, dict(t_end=10.0, seed=8, lam=1.2)))
    return out


def _gen_cases():
    """(name, graph key, mu, keyword arguments of _simulate_general)."""
    laws = {"det": sv.deterministic(), "logn": sv.lognormal(2.0), "erl": sv.erlang(3),
            "exp": sv.exponential()}
    out = []
    i = 0
    for gk in ("ring", "rr3", "er"):
        for mu in (0.0, 1.5, math.inf):
            for lk in ("det", "logn", "erl", "exp"):
                kw = _vary(dict(t_end=25.0, burn_in=4.0, seed=300 + i, service=laws[lk],
                                record_dt=2.0, record_response=(i % 2 == 0)), i, 3)
                if lk == "det" and i % 2 == 1:
                    kw["_fifo"] = False      # constant services through the heap
                out.append((f"gen-{gk}-{mu}-{lk}", gk, mu, kw))
                i += 1
    return out


def _int_cases():
    """(name, graph key, mu, keyword arguments of simulate_interleaved)."""
    out = []
    i = 0
    for gk in ("ring", "rr3", "er"):
        for mu in (0.0, 1.5, math.inf):
            kw = dict(t_end=25.0, burn_in=4.0, seeds=[500 + i, 600 + i, 700 + i],
                      record_dt=2.5, depth=(1, 4, 8)[i % 3], block=(7, 256)[i % 2])
            if i % 2 == 0:
                kw["initial"] = "loaded"
            if i % 3 == 1:
                kw["batches"] = 4
            out.append((f"int-{gk}-{mu}", gk, mu, kw))
            i += 1
    return out


def _rep_cases():
    """(name, graph key, mu, keyword arguments of replicate)."""
    return [
        ("rep-ring-il", "ring", 1.5, dict(replications=3, seed=11, t_end=20.0, burn_in=3.0,
                                          interleave=True, n_jobs=1, record_dt=5.0)),
        ("rep-rr3", "rr3", 0.0, dict(replications=3, seed=12, t_end=20.0, burn_in=3.0,
                                     n_jobs=2)),
        ("rep-er-ch2", "er", math.inf, dict(replications=2, seed=13, t_end=20.0,
                                            burn_in=3.0, choices=2, n_jobs=1)),
        ("rep-rr3-logn", "rr3", 1.5, dict(replications=2, seed=14, t_end=20.0,
                                          burn_in=3.0, service=sv.lognormal(1.5),
                                          n_jobs=1)),
    ]


def _exact(x):
    """A number as exact text: ints as they are, floats as ``float.hex``."""
    x = np.asarray(x).item()
    return float(x).hex() if isinstance(x, float) else x


def _digest(r):
    """The exact outputs of one result: its counts and mean response time,
    and a digest of every compared field (name, dtype, shape, bytes)."""
    h = hashlib.sha256()
    out = {}
    for f in FIELDS:
        if not hasattr(r, f) or getattr(r, f) is None:
            continue
        a = np.ascontiguousarray(np.asarray(getattr(r, f)))
        h.update(f"{f}|{a.dtype.str}|{a.shape}|".encode())
        h.update(a.tobytes())
        if f in ("events", "arrivals", "departures", "resamples", "levels",
                 "mean_response_time"):
            out[f] = _exact(a)
    out["sha256"] = h.hexdigest()
    return out


def _run(kind, gk, mu, kw, graphs, depth=None, monkeypatch=None):
    G = graphs[gk]
    kw = dict(kw)
    if isinstance(kw.get("initial"), str):
        kw["initial"] = _loaded(G.n)
    lam = kw.pop("lam", 0.8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if kind == "exp":
            if depth is not None:
                monkeypatch.setattr(RUN, "_depth", lambda n: depth)
            return [simulate(G, lam, mu, kernel="event", **kw)]   # the goldens are the event kernel's
        if kind == "gen":
            return [_simulate_general(G, lam, mu, **kw)]
        if kind == "int":
            return simulate_interleaved(G, lam, mu, **kw)
        rr = replicate(G, lam, mu, kernel="event", **kw)
        return [rr] + list(rr.results)


def _outputs(kind, name, gk, mu, kw, graphs, depth=None, monkeypatch=None):
    return {f"{name}|{j}": _digest(r)
            for j, r in enumerate(_run(kind, gk, mu, kw, graphs, depth, monkeypatch))}


def _graph_digest(G):
    h = hashlib.sha256()
    for a in (G.indptr, G.indices):
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}|{a.shape}|".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _all_cases():
    return ([("exp",) + c for c in _exp_cases()] + [("gen",) + c for c in _gen_cases()]
            + [("int",) + c for c in _int_cases()] + [("rep",) + c for c in _rep_cases()])


@pytest.fixture(scope="module")
def golden():
    return json.loads(DATA.read_text())


@pytest.fixture(scope="module")
def graphs():
    return _graphs()


def _fingerprint():
    """What the exact bytes of a run depend on besides qlib: NumPy's version
    and the CPU features it dispatches on, and the C library."""
    from numpy._core._multiarray_umath import __cpu_features__ as feats
    return {"numpy": np.__version__, "libc": "-".join(platform.libc_ver()),
            "cpu": sorted(k for k, v in feats.items() if v)}


def _check(out, golden, name):
    keys = sorted(k for k in golden if k.startswith(name + "|"))
    assert keys == sorted(out), name
    same = golden.get("machine") == _fingerprint()
    for k in keys:
        if same:
            assert out[k] == golden[k], k
            continue
        a, b = dict(out[k]), dict(golden[k])
        for d in (a, b):
            d.pop("sha256")
        ra, rb = (float.fromhex(d.pop("mean_response_time")) if isinstance(
            d.get("mean_response_time"), str) else d.pop("mean_response_time", None) for d in (a, b))
        assert a == b, k
        assert (ra is None and rb is None) or math.isclose(ra, rb, rel_tol=1e-9), k


def test_graphs_unchanged(golden, graphs):
    """The grid's graphs are those the golden results were made on."""
    for gk, G in graphs.items():
        assert _graph_digest(G) == golden[f"graph|{gk}"], gk


@pytest.mark.parametrize("case", _all_cases(), ids=lambda c: c[1])
def test_golden(case, golden, graphs, monkeypatch):
    kind, name, gk, mu, kw = case
    _check(_outputs(kind, name, gk, mu, kw, graphs), golden, name)
    if kind == "exp":
        # the pipelined kernel (as at large n) on the same cases: the depth
        # changes no bit
        _check(_outputs(kind, name, gk, mu, kw, graphs, 8, monkeypatch), golden, name)


def _write():
    graphs = _graphs()
    data = {f"graph|{gk}": _graph_digest(G) for gk, G in graphs.items()}
    data["machine"] = _fingerprint()
    for kind, name, gk, mu, kw in _all_cases():
        data.update(_outputs(kind, name, gk, mu, kw, graphs))
    DATA.parent.mkdir(exist_ok=True)
    DATA.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"{len(data)} entries written to {DATA}")


if __name__ == "__main__":
    _write()
