"""The ring buffer of deterministic services against the heap it replaced.

With constant service times, completions are scheduled in the order they
start, so ``qlib.sim.general`` keeps them in a ring buffer instead of a
4-ary heap (issue 31).  The check is exact, not statistical: a seeded run
must return the same result, bit for bit, as the heap kernel kept verbatim
in ``benchmarks/old_general_kernel.py``, for every field; only
``response_times`` may list departures that happen at the *same* time in
another order (the model leaves that order open), so there the sorted
arrays must be bitwise equal, and the arrays themselves from an empty start
(where simultaneous departures need a rounding coincidence).
"""
import dataclasses
import math

import numpy as np
import pytest

from benchmarks import old_general_kernel as old
from qlib import graphs as g
from qlib.sim import service as sv
from qlib.sim.general import _simulate_general, simulate_general


def _fields(r):
    return {f.name: getattr(r, f.name) for f in dataclasses.fields(r)
            if f.name not in ("wall_time", "service", "stream")}   # the old kernel names no stream


def _bitwise(a, b, *, sorted_response=False):
    """Every field of two results bitwise equal (response_times sorted first
    if asked); returns the number of fields compared."""
    fa, fb = _fields(a), _fields(b)
    assert fa.keys() == fb.keys()
    for k in fa:
        x, y = fa[k], fb[k]
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if k == "response_times" and sorted_response:
                x, y = np.sort(x), np.sort(y)
            assert x.dtype == y.dtype and x.shape == y.shape, k
            assert x.tobytes() == y.tobytes(), k
        elif isinstance(x, float) and math.isnan(x):
            assert isinstance(y, float) and math.isnan(y), k
        else:
            assert type(x) is type(y) and x == y, (k, x, y)
    return len(fa)


def _start(n, seed):
    # queue lengths near the fluid equilibrium of JSQ(2): many servers busy
    # at time 0, whose deterministic services then end together at 1, 2, ...
    rng = np.random.default_rng(seed)
    return rng.choice([0, 1, 2, 3], size=n, p=[0.2, 0.5, 0.25, 0.05]).astype(np.int64)


CASES = [  # (graph, mu, keyword arguments)
    (g.ring(300), 0.0, {}),
    (g.ring(300), math.log(300), dict(record_dt=0.25)),
    (g.ring(300), math.inf, dict(levels=2)),             # the level array grows mid-run
    (g.random_regular(400, 3, seed=2), 2.0, dict(progress=True)),   # 100 slices, resumed
    (g.empty(3), 0.0, {}),                                # three M/D/1 queues, ring of 4
    (g.complete(50), 0.0, dict(levels=2)),
]


@pytest.mark.parametrize("k", range(len(CASES)))
@pytest.mark.parametrize("start", ["empty", "busy"])
def test_deterministic_ring_equals_heap_bitwise(k, start):
    G, mu, extra = CASES[k]
    kw = dict(t_end=30.0, burn_in=4.0, seed=11 + k, service=sv.deterministic(),
              batches=4, record_response=True, **extra)
    if start == "busy":
        kw["initial"] = _start(G.n, k)
    heap = old.simulate_general(G, 0.85, mu, **kw)
    ring = simulate_general(G, 0.85, mu, **kw)
    heap_new = _simulate_general(G, 0.85, mu, _fifo=False, **kw)   # the kernel's own heap path
    assert ring.events > 20 * G.n and ring.departures > 10 * G.n
    nf = _bitwise(heap, ring, sorted_response=start == "busy")
    _bitwise(heap, heap_new)
    if start == "empty":
        assert np.array_equal(heap.response_times, ring.response_times)
    print(f"case {k} ({start}): {nf} fields bitwise equal, {ring.events} events, "
          f"{ring.response_times.size} response times")


def test_busy_start_reorders_only_simultaneous_departures():
    # the order of simultaneous departures is the one freedom; without
    # response_times every field is equal, and the unsorted arrays differ
    # (so the sorted comparison above is needed, and not vacuous)
    G = g.ring(300)
    kw = dict(t_end=30.0, burn_in=4.0, seed=5, service=sv.deterministic(),
              batches=4, initial=_start(300, 9))
    _bitwise(old.simulate_general(G, 0.85, 1.0, **kw), simulate_general(G, 0.85, 1.0, **kw))
    a = old.simulate_general(G, 0.85, 1.0, record_response=True, **kw).response_times
    b = simulate_general(G, 0.85, 1.0, record_response=True, **kw).response_times
    assert not np.array_equal(a, b) and np.array_equal(np.sort(a), np.sort(b))


@pytest.mark.parametrize("law", [sv.exponential(), sv.erlang(3), sv.hyperexponential(4),
                                 sv.lognormal(2.0), sv.pareto(2.5)], ids=lambda l: l.name)
def test_other_laws_unchanged(law):
    G = g.ring(300)
    kw = dict(t_end=30.0, burn_in=4.0, seed=3, service=law, batches=4,
              record_response=True, initial=_start(300, 1))
    for mu in (0.0, 3.0, math.inf):
        _bitwise(old.simulate_general(G, 0.85, mu, **kw), simulate_general(G, 0.85, mu, **kw))


def test_ring_is_wrong_for_random_services():
    # the comparison has power: the ring forced on exponential services (not
    # FIFO in completion times) gives another path
    G = g.ring(300)
    kw = dict(t_end=30.0, seed=3, service=sv.exponential(), batches=4)
    a = old.simulate_general(G, 0.85, 1.0, **kw)
    b = _simulate_general(G, 0.85, 1.0, _fifo=True, **kw)
    assert not np.array_equal(a.occupancy, b.occupancy)


def test_ring_survives_pool_growth(monkeypatch):
    # two M/D/1 queues near saturation: the task pool (16 slots) and the
    # level array grow mid-run, and the ring resumes where it stopped
    import qlib.sim.general as gen
    grown = []
    grow = gen._grow_pool
    monkeypatch.setattr(gen, "_grow_pool", lambda *a: grown.append(1) or grow(*a))
    kw = dict(t_end=300.0, burn_in=4.0, seed=1, service=sv.deterministic(), batches=4,
              record_response=True)
    ring = gen.simulate_general(g.empty(2), 0.97, 0.0, **kw)
    assert grown and ring.levels > 16
    _bitwise(old.simulate_general(g.empty(2), 0.97, 0.0, **kw), ring)
