"""Results, one shape (issue 29): every simulator's result has ``occupancy``,
``response_time``, ``occupancy_ci(level)``, ``response_time_ci(level)``,
``se_reliable`` and ``batches``, and they behave the same way; every exact
solver's result has ``error_bounds``.  Tiny, seeded runs."""
import math
import pickle
import warnings

import numpy as np
import pytest
from scipy.stats import t as student_t

from qlib import exact, graphs
from qlib.halfin_whitt import simulate_jsq, simulate_jsq_d, stationary_jsq
from qlib.halfin_whitt.stationary import ou_stationary
from qlib.halfin_whitt.tasks import simulate_tasks
from qlib.meanfield.degrees import DegreeDistribution
from qlib.sim import replicate, simulate
from qlib.sim import service as sv


def _quiet(f, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return f(*a, **k)


SIMULATORS = {
    "simulate": lambda: _quiet(simulate, graphs.ring(20), 0.5, t_end=400.0, burn_in=20.0, seed=1),
    "simulate-general": lambda: _quiet(simulate, graphs.ring(20), 0.5, t_end=400.0, burn_in=20.0,
                                       seed=1, service=sv.erlang(2)),
    "replicate": lambda: _quiet(replicate, graphs.ring(10), 0.5, replications=4, t_end=150.0,
                                burn_in=10.0, seed=2, n_jobs=1),
    "simulate_jsq": lambda: _quiet(simulate_jsq, 20, 1.0, t_end=400.0, burn_in=20.0, seed=3),
    "simulate_tasks": lambda: _quiet(simulate_tasks, 20, 1.0, t_end=400.0, burn_in=20.0, seed=4),
    "simulate_jsq_d": lambda: _quiet(simulate_jsq_d, 10, 1.0, 2, t_end=150.0, burn_in=10.0,
                                     replications=4, seed=5),
}
_CACHE = {}


def run(name):
    if name not in _CACHE:
        _CACHE[name] = SIMULATORS[name]()
    return _CACHE[name]


@pytest.mark.parametrize("name", sorted(SIMULATORS))
def test_simulator_result_has_the_shared_names(name):
    r = run(name)
    q = np.asarray(r.occupancy)
    assert q.ndim == 1 and abs(q[0] - 1.0) < 1e-9 and np.all(np.diff(q) <= 1e-12) and np.all(q >= 0)
    assert math.isfinite(r.response_time) and r.response_time >= 1.0   # at least one service
    assert isinstance(r.se_reliable, (bool, np.bool_))
    assert isinstance(r.batches, int) and r.batches >= 2


@pytest.mark.parametrize("name", sorted(SIMULATORS))
def test_intervals_contain_the_estimate_and_widen_with_the_level(name):
    r = run(name)
    q, R = np.asarray(r.occupancy), r.response_time
    lo, hi = np.asarray(r.occupancy_ci)
    lo9, hi9 = np.asarray(r.occupancy_ci(0.99))
    assert lo.shape == q.shape == hi.shape
    assert np.all(lo <= q) and np.all(q <= hi)
    assert np.all(lo9 <= lo) and np.all(hi <= hi9)
    busy = np.asarray(r.occupancy_se) > 1e-9
    assert busy[1] and np.all(hi9[busy] - lo9[busy] > hi[busy] - lo[busy])
    a, b = r.response_time_ci
    a9, b9 = r.response_time_ci(0.99)
    assert a < R < b and a9 < a and b < b9
    # the half-width is t_{(1+level)/2, batches−1} standard errors
    for level in (0.9, 0.95, 0.99):
        a, b = r.response_time_ci(level)
        t = student_t.ppf(0.5 + level / 2, r.batches - 1)
        assert (b - a) / 2 == pytest.approx(t * r.response_time_se, rel=1e-12)
    with pytest.raises(ValueError, match="level"):
        r.response_time_ci(1.5)
    with pytest.raises(ValueError, match="level"):
        r.occupancy_ci(0.0)


@pytest.mark.parametrize("name", ["simulate", "simulate-general", "replicate"])
def test_the_stored_95_percent_intervals_stay_what_they_were(name):
    # the fields keep their old values and types' behaviour: indexing gives a
    # plain array, a tuple unpacks, and the call at 0.95 is the stored value
    r = run(name)
    assert type(r.occupancy_ci[1]) is np.ndarray
    lo, hi = r.response_time_ci
    assert (lo, hi) == tuple(r.response_time_ci(0.95))
    assert np.array_equal(r.occupancy_ci, r.occupancy_ci(0.95))
    back = pickle.loads(pickle.dumps(r))
    assert np.array_equal(back.occupancy_ci(0.9), r.occupancy_ci(0.9))
    assert back.response_time_ci(0.9) == r.response_time_ci(0.9)
    assert repr(r.occupancy_ci) == repr(np.asarray(r.occupancy_ci))
    with pytest.raises(ValueError, match="reshaped"):
        r.occupancy_ci.T(0.9)
    assert r.response_time == r.mean_response_time
    assert r.response_time_se == r.mean_response_time_se


def test_jsq_occupancy_interval_is_the_old_per_quantity_interval_over_n():
    r = run("simulate_jsq")
    lo, hi = r.occupancy_ci
    assert (lo[2] * r.n, hi[2] * r.n) == pytest.approx(r.mean_q2_ci, rel=1e-12)
    assert (lo[3] * r.n, hi[3] * r.n) == pytest.approx(r.mean_q3_ci, rel=1e-12, abs=1e-12)
    assert ((1 - hi[1]) * r.n, (1 - lo[1]) * r.n) == pytest.approx(r.mean_idle_ci, rel=1e-12)


def test_replication_tail_is_the_runs_occupancy():
    rr = run("replicate")
    K = max(x.occupancy.size for x in rr.results)
    tail = rr.tail()
    assert tail.shape == (rr.replications, K)
    np.testing.assert_allclose(tail.mean(axis=0), rr.occupancy[:K], rtol=0, atol=1e-15)
    assert rr.tail(2).shape == (rr.replications,)
    assert np.all(rr.tail([K + 3]) == 0)
    ci = rr.tail_ci([1, 2])
    assert ci.df == rr.replications - 1
    np.testing.assert_allclose(ci.se, rr.occupancy_se[[1, 2]], rtol=1e-12)
    with pytest.raises(ValueError, match="which"):
        rr.tail([-1])
    assert rr.batches == rr.replications and rr.se_reliable is True


def test_jsq_d_with_several_d_has_one_row_per_d():
    r = _quiet(simulate_jsq_d, 10, 1.0, [2, 10], t_end=100.0, burn_in=10.0, replications=3, seed=6)
    assert r.occupancy.shape == (2, 4) and r.occupancy_ci.shape == (2, 2, 4)
    lo, hi = r.response_time_ci
    assert lo.shape == (2,) and np.all(lo < r.response_time) and np.all(r.response_time < hi)


# ------------------------------------------------------------- exact ----
def _true_error(small, big, L):
    return (np.max(np.abs(np.asarray(big.occupancy)[:L + 1] - small.occupancy)),
            abs(big.response_time - small.response_time))


EXACT = {  # name -> (solve at L levels, L)
    "stationary-mu-inf": (lambda L: exact.stationary(graphs.ring(4), 0.7, math.inf, L), 8),
    # a path, not ring(4): on ring(4) an arrival sees all but one uniform
    # server whatever the positions, so every μ gives the same law
    "stationary-path-mu-1": (lambda L: exact.stationary(graphs.from_edges(4, [(0, 1), (1, 2), (2, 3)]),
                                                        0.7, 1.0, L), 7),
    "stationary_phase": (lambda L: exact.stationary_phase(graphs.ring(3), 0.6, 1.0,
                                                          sv.erlang(2), L), 6),
    "occupancy_chain": (lambda L: exact.occupancy_chain(6, 0.8, DegreeDistribution.point(1), L), 6),
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_level_capped_estimates_exceed_the_error_against_a_larger_cap(name):
    solve, L = EXACT[name]
    small, big = solve(L), solve(L + 6)
    e = small.error_bounds
    assert e is small.error_estimates
    assert set(e) == {"occupancy", "response_time"} and e["occupancy"].shape == small.occupancy.shape
    occ_err, rt_err = _true_error(small, big, L)
    # numerical evidence: the estimate is an estimate, not a bound; here it
    # exceeds the error left by the cap (the larger cap's own error is
    # smaller by orders of magnitude)
    assert 0 < occ_err <= np.max(e["occupancy"]) and 0 < rt_err <= e["response_time"]
    assert np.max(e["occupancy"]) < 100 * occ_err      # and it is not vacuous


def test_too_few_levels_give_no_estimate():
    e = exact.stationary(graphs.ring(3), 0.5, math.inf, 2).error_bounds
    assert np.all(np.isinf(e["occupancy"])) and math.isinf(e["response_time"])


def test_adaptive_chain_stationary_jsq_transient_and_ou_have_error_bounds():
    a = exact.occupancy_chain_adaptive(6, 0.8, DegreeDistribution.point(1))
    assert a.error_bounds == {"occupancy": a.occupancy_error, "response_time": a.response_time_error}
    assert a.error_estimates == a.error_bounds and a.mean_response_time == a.response_time
    s = stationary_jsq(9, 1.0)
    assert s.error_bounds is s.error_estimates and "p_wait" in s.error_bounds
    m = exact.mm1_transient(0.5, [1.0], [1.0, 2.0])
    assert np.array_equal(m.error_bounds["tail"], m.error_bound)
    o = ou_stationary(1.0, 0.25, depth=3)
    assert o.error_bounds is o.error and o.error_estimates is o.error


def test_from_runs_gathers_runs_as_replicate_does():
    g = graphs.ring(30)
    rr = replicate(g, 0.8, 1.0, replications=4, seed=3, t_end=40.0, burn_in=10.0, batches=4)
    again = type(rr).from_runs(rr.results, seed=rr.seed)
    assert again.mean_response_time == rr.mean_response_time
    assert np.array_equal(again.occupancy, rr.occupancy)
    assert np.allclose(again.occupancy_ci, rr.occupancy_ci)
    assert again.response_time_ci == pytest.approx(rr.response_time_ci)
    assert rr.batch_response_times.shape == (4, 4)
    assert np.allclose(rr.batch_response_times.mean(axis=1),
                       [r.batch_response_time.mean() for r in rr.results])
    with pytest.raises(ValueError, match="at least 2"):
        type(rr).from_runs(rr.results[:1])
    with pytest.raises(TypeError, match="SimulationResult"):
        type(rr).from_runs([rr.results[0], "run"])


def test_replication_queue_paths_sum_the_recorded_levels():
    rr = replicate(graphs.ring(30), 0.7, 1.0, replications=3, seed=4, t_end=12.0, burn_in=2.0,
                   record_dt=0.5)
    full = rr.queue_paths()
    late = rr.queue_paths(after=5.0)
    r0 = rr.results[0]
    assert full.shape == (3, r0.times.size)
    np.testing.assert_array_equal(late[0], r0.paths[r0.times >= 5.0, 1:].sum(axis=1))
    np.testing.assert_array_equal(rr.queue_paths(which=[2])[1], rr.results[1].paths[:, 2])
    assert np.all(rr.queue_paths(which=[1, 99]) == rr.queue_paths(which=[1]))   # unreached: 0
    with pytest.raises(ValueError, match="which"):
        rr.queue_paths(which=[0])
    bare = replicate(graphs.ring(30), 0.7, 1.0, replications=2, seed=4, t_end=5.0)
    with pytest.raises(ValueError, match="record_dt"):
        bare.queue_paths()


# -------------------------------------------- one shape, by type (0.2) ----
from qlib.stats import Interval, IntervalArray  # noqa: E402


@pytest.mark.parametrize("name", sorted(SIMULATORS))
def test_intervals_are_one_type_stored_unpackable_and_callable(name):
    r = run(name)
    ci = r.response_time_ci
    if np.ndim(r.response_time) == 0:
        assert isinstance(ci, Interval)
        low, high = ci                              # stored and unpackable, not a method
        assert (ci.low, ci.high, ci.level, ci.df) == (low, high, 0.95, r.batches - 1)
        assert not any(hasattr(ci, old) for old in ("lo", "hi", "dof"))   # no aliases
        assert ci(0.95) is ci and ci(0.99).level == 0.99 and ci(0.99).low < low
        with pytest.raises(TypeError):
            ci()                                    # the level is explicit
    occ = r.occupancy_ci
    assert isinstance(occ, IntervalArray) and occ.level == 0.95 and occ.df == r.batches - 1
    np.testing.assert_array_equal(occ.low, np.asarray(occ)[0])
    mq = r.mean_queue_length_ci
    assert isinstance(mq, Interval) and mq.low < r.mean_queue_length < mq.high


def test_jsq_per_quantity_intervals_are_intervals():
    r = run("simulate_jsq")
    for name in ("mean_idle", "mean_q2", "mean_q3", "mean_waiting", "p_wait", "p_full"):
        ci = getattr(r, name + "_ci")
        assert isinstance(ci, Interval) and ci.df == r.batches - 1
        assert ci.low <= getattr(r, name) <= ci.high


@pytest.mark.parametrize("name", sorted(SIMULATORS))
def test_littles_law_between_the_three(name):
    # L = λ R per server: exact by construction where R is E[N]/λ (Halfin–Whitt
    # simulators), within the run's own error bars where R is measured on arrivals
    r = run(name)
    L, R = np.asarray(r.mean_queue_length), np.asarray(r.response_time)
    lam = r.lam                                  # per server on every result
    assert r.lam_total == pytest.approx(r.n * lam)
    if name.startswith(("simulate_jsq", "simulate_tasks")):
        assert r.lam_total == pytest.approx(r.n - r.beta * np.sqrt(r.n))
    gap = np.abs(L - lam * R)
    if name in ("simulate_jsq", "simulate_jsq_d"):
        assert np.all(gap <= 1e-12 * L)
    else:
        se = np.hypot(np.asarray(r.mean_queue_length_se), lam * np.asarray(r.response_time_se))
        assert np.all(gap <= 5 * se), (gap, se)
    if name != "simulate_jsq_d":   # the Halfin–Whitt occupancy stops at level 3
        if name in ("simulate", "simulate-general", "replicate"):
            assert float(L) == pytest.approx(float(np.sum(np.asarray(r.occupancy)[1:])), rel=1e-12)


@pytest.mark.parametrize("name", sorted(EXACT))
def test_exact_results_littles_law_exactly(name):
    solve, L = EXACT[name]
    r = solve(L)
    blocked = getattr(r, "blocking_probability", 0.0)
    assert r.mean_queue_length == pytest.approx(float(np.sum(r.occupancy[1:])), rel=1e-12)
    assert r.mean_queue_length == pytest.approx(r.lam * (1 - blocked) * r.response_time, rel=1e-9)
    assert r.lam_total == pytest.approx(r.n * r.lam)


def test_stationary_jsq_and_adaptive_chain_have_the_shape():
    s = stationary_jsq(9, 1.0)
    q = s.occupancy
    assert q[0] == 1.0 and np.all(np.diff(q) <= 1e-15)
    assert s.mean_queue_length == pytest.approx(q[1:].sum(), rel=1e-12)
    assert s.mean_queue_length == pytest.approx(s.lam * s.response_time, rel=1e-12)
    a = exact.occupancy_chain_adaptive(6, 0.8, DegreeDistribution.point(1))
    assert a.mean_queue_length == pytest.approx(a.lam * a.response_time, rel=1e-9)


def test_erlang_c_refuses_a_per_server_rate():
    from qlib.halfin_whitt import erlang_c
    with pytest.raises(ValueError, match="rho="):
        erlang_c(100, 0.9)
    assert erlang_c(100, rho=0.9) == erlang_c(100, 90.0)
    with pytest.raises(TypeError, match="exactly one"):
        erlang_c(100, 90.0, rho=0.9)


# ------------------------------------ look at it, keep it (repr, summary, export) ----
@pytest.mark.parametrize("name", sorted(SIMULATORS))
def test_repr_is_one_screen_and_summary_a_small_table(name):
    r = run(name)
    text = repr(r)
    assert len(text) < 600 and "\n" not in text and type(r).__name__ in text
    table = r.summary().splitlines()
    assert 3 <= len(table) <= 12 and "response_time" in r.summary()


def test_repr_does_not_grow_with_the_replications():
    small = _quiet(replicate, graphs.ring(10), 0.5, replications=2, t_end=60.0, burn_in=5.0, seed=2)
    big = _quiet(replicate, graphs.ring(10), 0.5, replications=12, t_end=60.0, burn_in=5.0, seed=2)
    assert abs(len(repr(big)) - len(repr(small))) < 20


@pytest.mark.parametrize("name", ["simulate", "replicate", "simulate_jsq"])
def test_to_dict_and_back(name):
    r = run(name)
    d = r.to_dict()
    assert d["type"] == type(r).__name__
    back = type(r).from_dict(d)
    assert back.response_time == r.response_time
    assert tuple(back.response_time_ci) == tuple(r.response_time_ci)
    np.testing.assert_array_equal(back.occupancy, r.occupancy)
    with pytest.raises(ValueError, match="not a"):
        type(r).from_dict({**d, "type": "Other"})


@pytest.mark.parametrize("name", ["simulate", "replicate", "simulate_jsq"])
def test_equality_and_a_json_round_trip(name):
    import json
    r = run(name)
    assert r == type(r).from_dict(r.to_dict()) and not (r != r)
    d = json.loads(json.dumps(r.to_dict(json=True)))       # only json types inside
    back = type(r).from_dict(d)
    assert back == r and isinstance(back.occupancy, np.ndarray)
    d = r.to_dict()
    if "results" in d:                                       # replications: change one of them
        d["results"] = [{**d["results"][0], "wall_time": 1e9}] + d["results"][1:]
    else:
        d["wall_time"] = 1e9
    assert type(r).from_dict(d) != r and (r == 1) is False


def test_to_xarray():
    pytest.importorskip("xarray")
    r = run("replicate")
    ds = r.to_xarray()
    np.testing.assert_array_equal(ds.occupancy.values, r.occupancy)
    assert float(ds.mean_queue_length) == r.mean_queue_length and ds.attrs["n"] == r.n


# ----------------------------------------------------- coercion, one rule ----
def test_degree_law_may_be_a_law_a_mapping_a_pmf_or_a_graph():
    import networkx as nx
    from qlib.meanfield import fluid, refined
    want = fluid.equilibrium(0.9, DegreeDistribution.point(2))
    for law in ({2: 1.0}, [0.0, 0.0, 1.0], graphs.ring(12), nx.cycle_graph(12)):
        np.testing.assert_array_equal(fluid.equilibrium(0.9, law), want)
    assert refined(0.9, {2: 1.0}).response_time == refined(0.9, DegreeDistribution.point(2)).response_time
    with pytest.raises(TypeError, match="degrees must be a degree law"):
        fluid.equilibrium(0.9, "two")


def test_exact_solver_takes_a_networkx_graph():
    import networkx as nx
    a = exact.stationary(nx.cycle_graph(4), 0.7, math.inf, 6)
    b = exact.stationary(graphs.ring(4), 0.7, math.inf, 6)
    assert a.response_time == b.response_time


def test_seed_may_be_a_generator():
    g = graphs.ring(30)
    a = _quiet(simulate, g, 0.5, t_end=20.0, seed=np.random.default_rng(7))
    b = _quiet(simulate, g, 0.5, t_end=20.0, seed=np.random.default_rng(7))
    assert a.mean_response_time == b.mean_response_time
    c = _quiet(simulate, g, 0.5, t_end=20.0, seed=a.seed)     # the stored seed reproduces it
    assert c.mean_response_time == a.mean_response_time


def test_torus_and_grid():
    t = graphs.torus(4, 5)
    assert t.n == 20 and set(np.diff(t.indptr).tolist()) == {4}
    g = graphs.grid(3, 3)
    assert g.indptr[-1] // 2 == 12 and sorted(set(np.diff(g.indptr).tolist())) == [2, 3, 4]
    with pytest.raises(ValueError, match="rows"):
        graphs.torus(2, 5)


def test_from_networkx_order_mapping_and_self_loops():
    import networkx as nx
    G = nx.Graph([("x", "y"), ("y", "z"), ("z", "z")])
    # a self-loop is refused by both builders alike, and the message says how to drop it
    with pytest.raises(ValueError, match="selfloop_edges"):
        graphs.from_networkx(G)
    with pytest.raises(ValueError, match=r"self-loops.*pair 1: \(2, 2\)"):
        graphs.from_edges(3, [(0, 1), (2, 2)])
    G.remove_edges_from(list(nx.selfloop_edges(G)))
    g, where = graphs.from_networkx(G, return_mapping=True)
    assert where == {"x": 0, "y": 1, "z": 2} and g.indptr[-1] == 4


def test_a_directed_graph_is_refused_with_the_way_out():
    import networkx as nx
    D = nx.DiGraph(nx.cycle_graph(5))
    for call in (lambda: graphs.from_networkx(D), lambda: simulate(D, 0.5, t_end=1.0, seed=1)):
        with pytest.raises(TypeError, match=r"to_undirected\(\)"):
            call()
    assert graphs.from_networkx(D.to_undirected()).indptr[-1] == 10
