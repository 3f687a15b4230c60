"""simulate's and replicate's ``kernel``: "auto" runs the fast path wherever it runs the call
(Exp(1) services, any mu it supports, no record_dt) and the event kernel otherwise; every
result names its random stream; "fast" refuses what the fast path lacks, by name."""
import dataclasses
import math
import warnings

import numpy as np
import pytest

from qlib import graphs, stats
from qlib.sim import replicate, service, simulate, simulate_uniformized
from qlib.sim.result import EVENT_STREAM, GENERAL_STREAM, UNIFORMIZED_STREAM, SimulationResult

KW = dict(t_end=30.0, burn_in=5.0, seed=3, warn=False)


def _same(a, b):
    """Two results equal in every field but ``wall_time``."""
    return dataclasses.replace(a, wall_time=0.0) == dataclasses.replace(b, wall_time=0.0)


def _same_runs(a, b):
    return len(a.results) == len(b.results) and all(map(_same, a.results, b.results))


@pytest.mark.parametrize("mu, extra, stream", [
    (0.0, {}, UNIFORMIZED_STREAM),
    (math.inf, {}, UNIFORMIZED_STREAM),
    (0.0, dict(choices=2), UNIFORMIZED_STREAM),
    (math.inf, dict(choices=3), UNIFORMIZED_STREAM),
    (0.0, dict(levels=40, initial=np.array([1.0, 0.5])), UNIFORMIZED_STREAM),
    (1.0, {}, UNIFORMIZED_STREAM),                    # finite mu: exact permutations too
    (1.0, dict(choices=2), UNIFORMIZED_STREAM),
    (0.0, dict(record_dt=1.0), EVENT_STREAM),         # paths: the event kernel records them
    (0.0, dict(kernel="event"), EVENT_STREAM),
    (1.0, dict(kernel="fast"), UNIFORMIZED_STREAM),   # the fast path, asked for
    (0.0, dict(service=service.deterministic()), GENERAL_STREAM),
    (0.0, dict(record_response=True), GENERAL_STREAM),
])
def test_auto_picks_the_kernel(mu, extra, stream):
    r = simulate(graphs.ring(60), 0.7, mu, **KW, **extra)
    assert r.stream == stream
    assert f"stream='{stream}'" in repr(r)


def test_a_fresh_placement_looking_at_many_positions_runs_on_the_event_kernel():
    # the fast path draws at most 64 distinct fresh servers by rejection
    assert simulate(graphs.complete(80), 0.7, math.inf, **KW).stream == EVENT_STREAM
    with pytest.raises(ValueError, match="mu=inf"):
        simulate(graphs.complete(80), 0.7, math.inf, kernel="fast", **KW)


def test_fast_is_simulate_uniformized_bit_for_bit():
    g = graphs.ring(80)
    a = simulate(g, 0.8, 0.0, choices=2, **KW)
    b = simulate_uniformized(g, 0.8, 0.0, choices=2, **KW)
    assert _same(a, b)


def test_progress_and_levels_change_no_bit_on_the_fast_path():
    g = graphs.random_regular(100, 3, seed=1)
    a = simulate(g, 0.8, 0.0, **KW)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # tqdm's own warnings, if any
        b = simulate(g, 0.8, 0.0, progress=True, levels=30, **KW)
    assert b.stream == UNIFORMIZED_STREAM and b.occupancy.size == 31
    k = a.occupancy.size
    assert np.array_equal(a.occupancy, b.occupancy[:k]) and not b.occupancy[k:].any()
    assert a.mean_response_time == b.mean_response_time


@pytest.mark.parametrize("kernel", ["Auto", "uniformized", None, 1])
def test_a_bad_kernel_is_refused_by_name(kernel):
    with pytest.raises(ValueError, match="kernel"):
        simulate(graphs.ring(10), 0.5, kernel=kernel, t_end=5.0)
    with pytest.raises(ValueError, match="kernel"):
        replicate(graphs.ring(10), 0.5, replications=2, kernel=kernel, t_end=5.0)


@pytest.mark.parametrize("extra, name", [(dict(record_dt=1.0), "record_dt"),
                                         (dict(service=service.deterministic()), "service"),
                                         (dict(record_response=True), "record_response")])
def test_fast_names_the_option_it_lacks(extra, name):
    with pytest.raises(ValueError, match=name):
        simulate(graphs.ring(10), 0.5, kernel="fast", t_end=5.0, **extra)


def test_replicate_takes_the_kernel_once_for_all_runs():
    g = graphs.ring(50)
    kw = dict(replications=3, seed=2, t_end=20.0, burn_in=5.0, n_jobs=1)
    auto = replicate(g, 0.7, 0.0, **kw)
    event = replicate(g, 0.7, 0.0, kernel="event", **kw)
    assert {r.stream for r in auto.results} == {UNIFORMIZED_STREAM}
    assert {r.stream for r in event.results} == {EVENT_STREAM}
    # interleaving is an event-kernel speed option: on the fast path it changes nothing
    assert _same_runs(replicate(g, 0.7, 0.0, interleave=True, **kw), auto)
    il = replicate(g, 0.7, 0.0, interleave=True, kernel="event", **kw)
    assert _same_runs(il, event)


def test_the_stream_survives_to_dict_and_an_old_store_reads_unnamed():
    r = simulate(graphs.ring(30), 0.7, **KW)
    d = r.to_dict(json=True)
    assert SimulationResult.from_dict(d).stream == UNIFORMIZED_STREAM
    del d["stream"]
    assert SimulationResult.from_dict(d).stream == ""


@pytest.mark.parametrize("mu", [0.0, 2.0, math.inf])
def test_the_kernels_agree_in_law(mu):
    # The claim: both kernels simulate the same chain, so their mean queue lengths
    # estimate the same stationary mean.  Equivalence (TOST, qlib.stats) of the
    # replication means within 3 % of the mean queue length (about 0.08 tasks at
    # lam = 0.8 on the ring of 200): a gap that size is well above what the step averages'
    # O(1 / (n t)) start-up bias could make, and the replications resolve it (the
    # test fails when they do not).
    g = graphs.ring(200)
    kw = dict(replications=16, seed=11, t_end=1600.0, burn_in=100.0, n_jobs=1)
    fast = replicate(g, 0.8, mu, kernel="fast", **kw)
    event = replicate(g, 0.8, mu, kernel="event", **kw)
    d = fast.mean_queue_length - event.mean_queue_length
    se = math.hypot(fast.mean_queue_length_se, event.mean_queue_length_se)
    margin = 0.03 * event.mean_queue_length
    eq = stats.equivalence(d, se, 30, margin)
    assert eq.resolvable < margin, eq
    assert eq.passed, eq
