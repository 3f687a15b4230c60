"""Interleaved replications (issue 31): each run of
``qlib.sim.interleave.simulate_interleaved`` is, field for field and bit for
bit, the lone ``simulate`` of the same seed, whatever the pipeline depth and
the visit length; ``replicate(..., interleave=True)`` returns what
``replicate`` returns.  Speed is measured in benchmarks/bench_simulate.py."""
import dataclasses
import math
import warnings

import numpy as np
import pytest

from qlib import graphs as g
from qlib.sim import replicate, simulate
from qlib.sim.interleave import simulate_interleaved


def _same(a, b):
    """Every field of two SimulationResults but wall_time, bit for bit
    (nan equal to nan; SeedSequences by entropy and spawn key)."""
    for f in dataclasses.fields(a):
        if f.name == "wall_time":
            continue
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            assert x.dtype == y.dtype and x.shape == y.shape, f.name
            assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), f.name
        elif isinstance(x, float) and math.isnan(x):
            assert isinstance(y, float) and math.isnan(y), f.name
        elif isinstance(x, tuple):
            assert np.array_equal(np.array(x), np.array(y), equal_nan=True), f.name
        elif isinstance(x, np.random.SeedSequence):
            assert (x.entropy, x.spawn_key) == (y.entropy, y.spawn_key), f.name
        else:
            assert type(x) is type(y) and x == y, f.name


def _quiet(fn, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*a, **kw)


GRAPHS = {"ring": g.ring(300), "rr3": g.random_regular(200, 3, seed=2),
          "double_star": g.double_star(40), "empty": g.empty(50)}


@pytest.mark.parametrize("mu", [0.0, 2.0, 300.0, math.inf])
@pytest.mark.parametrize("name", list(GRAPHS))
def test_each_run_is_the_lone_run(name, mu):
    G = GRAPHS[name]
    # a loaded start makes the runs grow their levels, each on its own
    # schedule (a restart of the shared loop), and record_dt the paths
    init = np.zeros(G.n, np.int64)
    init[::7] = 20
    kw = dict(t_end=12.0, burn_in=2.0, record_dt=0.5, initial=init)
    seeds = [3, 11, np.random.SeedSequence(5), 0, 17]
    alone = [_quiet(simulate, G, 0.85, mu, seed=s, **kw) for s in seeds]
    assert max(r.levels for r in alone) > 16
    for depth, block in ((1, 1), (1, 16), (4, 3), (32, 64)):
        many = _quiet(simulate_interleaved, G, 0.85, mu, seeds=seeds, depth=depth,
                      block=block, **kw)
        assert len(many) == len(seeds)
        for a, b in zip(alone, many):
            _same(a, b)


@pytest.mark.parametrize("kw", [dict(batches=4), dict(levels=40),
                                dict(initial=np.array([1.0, 0.8, 0.3, 0.05]))])
def test_other_arguments(kw):
    G = g.ring(500)
    seeds = [1, 2, 3]
    alone = [_quiet(simulate, G, 0.9, math.log(500), t_end=8.0, seed=s, kernel="event", **kw)
             for s in seeds]
    many = _quiet(simulate_interleaved, G, 0.9, math.log(500), t_end=8.0, seeds=seeds,
                  **kw)
    for a, b in zip(alone, many):
        _same(a, b)


def test_pipeline_at_large_n():
    # n >= 2**15: the default depth is the pipelined one
    G = g.ring(2**15)
    alone = _quiet(simulate, G, 0.9, 10.0, t_end=0.4, seed=9, kernel="event")
    (b,) = _quiet(simulate_interleaved, G, 0.9, 10.0, t_end=0.4, seeds=[9])
    _same(alone, b)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_replicate_interleave_changes_speed_only(n_jobs):
    G = g.ring(400)
    kw = dict(replications=6, seed=4, t_end=10.0, burn_in=2.0, n_jobs=n_jobs)
    a = _quiet(replicate, G, 0.9, 3.0, **kw)
    b = _quiet(replicate, G, 0.9, 3.0, interleave=True, **kw)
    for f in ("occupancy", "occupancy_se", "occupancy_ci"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    assert a.mean_response_time == b.mean_response_time
    assert a.response_time_se == b.response_time_se
    for x, y in zip(a.results, b.results):
        _same(x, y)


def test_replicate_interleave_falls_back():
    # a general service law runs the lone path: the same result
    from qlib.sim import service as sv
    G = g.ring(60)
    kw = dict(replications=3, seed=4, t_end=5.0, service=sv.deterministic(), n_jobs=1)
    a = _quiet(replicate, G, 0.8, 1.0, **kw)
    b = _quiet(replicate, G, 0.8, 1.0, interleave=True, **kw)
    assert np.array_equal(a.occupancy, b.occupancy)


def test_bad_input():
    G = g.ring(10)
    with pytest.raises(ValueError, match="seeds"):
        simulate_interleaved(G, 0.5, seeds=[], t_end=1.0)
    with pytest.raises(ValueError, match="depth"):
        simulate_interleaved(G, 0.5, seeds=[1], t_end=1.0, depth=3)
    with pytest.raises(ValueError, match="block"):
        simulate_interleaved(G, 0.5, seeds=[1], t_end=1.0, block=0)
    with pytest.raises(TypeError, match="interleave"):
        replicate(G, 0.5, replications=2, t_end=1.0, interleave="yes")
