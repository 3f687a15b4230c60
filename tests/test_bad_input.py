"""Bad input gets a clear answer (issue 32).

One table of bad or edge inputs over the public API.  Each row is a call and
what it must do: raise a given exception whose message names the parameter,
or run and warn (an unstable transient run), or run (an input that used to
fail and now has an answer).  Every row is cheap: the refusals happen before
any work or allocation, and the runs are a few hundred events.
"""
from __future__ import annotations

import math
import warnings

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from qlib import _validate as V
from qlib import graphs, stats
from qlib.exact import mm1_transient, occupancy_chain, occupancy_chain_adaptive, stationary
from qlib.halfin_whitt import (erlang_c, reflected_ou, simulate_jsq, simulate_jsq_d, simulate_tasks,
                               stationary_jsq, transient_jsq)
from qlib.meanfield import fluid, tails
from qlib.meanfield.cavity_method import cavity
from qlib.meanfield.degrees import DegreeDistribution as D
from qlib.meanfield.expansion import refined
from qlib.sim import replicate, simulate
from qlib.sim.service import (deterministic, erlang, exponential, hyperexponential,
                              md1_distribution, pollaczek_khinchine)
from qlib.sweep import points, sweep

G = graphs.ring(10)
P2 = D.point(2)


def _sim(**kw):
    base = dict(lam=0.5, mu=0.0, t_end=1.0, seed=0)
    base.update(kw)
    graph, lam, mu = base.pop("graph", G), base.pop("lam"), base.pop("mu")
    return lambda: simulate(graph, lam, mu, **base)


def _huge_graph(n):
    """A Graph of n isolated vertices whose arrays take no memory (a broadcast
    view; validation skipped), to test that simulate refuses before it allocates."""
    g = object.__new__(graphs.Graph)
    object.__setattr__(g, "n", n)
    object.__setattr__(g, "indptr", np.broadcast_to(np.int64(0), (n + 1,)))
    object.__setattr__(g, "indices", np.zeros(0, np.int64))
    object.__setattr__(g, "name", "huge")
    return g


def _nan_se(r):
    return (np.all(np.isnan(r.occupancy_se)) and math.isnan(r.mean_response_time_se)
            and np.all(np.isnan(r.occupancy_ci)) and not r.se_reliable)


def _mm1_tail(q):
    lam = 0.99999   # 3.7e6 levels, past the 1e5 the recursion may take
    return q[1] == lam and q[-1] < 1e-16 <= q[-2] and abs(q[1000] / lam**1000 - 1) < 1e-12


# (id, call, expected) with expected one of
#   (ExceptionType, regex the message must match: the parameter's name)
#   ("warns", WarningType, regex, check on the result)
#   ("runs", check on the result)
ROWS = [
    # --- simulate -----------------------------------------------------------
    ("simulate-lam-str", _sim(lam="0.5"), (TypeError, "lam")),
    ("simulate-lam-bool", _sim(lam=True), (TypeError, "lam")),
    ("simulate-lam-nan", _sim(lam=math.nan), (ValueError, "lam")),
    ("simulate-lam-complex", _sim(lam=0.5j), (TypeError, "lam")),
    ("simulate-lam1-burn", _sim(lam=1.0, t_end=2.0, burn_in=1.0), (ValueError, "lam.*allow_unstable")),
    ("simulate-lam1.5-transient", _sim(lam=1.5), ("warns", RuntimeWarning, "lam.*transient", _nan_se)),
    ("simulate-lam1.5-allow", _sim(lam=1.5, t_end=2.0, burn_in=1.0, allow_unstable=True),
     ("warns", RuntimeWarning, "lam.*transient", _nan_se)),
    ("simulate-allow-str", _sim(allow_unstable="yes"), (TypeError, "allow_unstable")),
    ("simulate-allow-general", _sim(service=erlang(2), allow_unstable=True), (ValueError, "allow_unstable")),
    ("simulate-lam1.5-general", _sim(lam=1.5, service=erlang(2)),
     ("warns", RuntimeWarning, "lam.*transient", _nan_se)),
    ("simulate-mu-str", _sim(mu="1"), (TypeError, "mu")),
    ("simulate-mu-bool", _sim(mu=True), (TypeError, "mu")),
    ("simulate-t_end-str", _sim(t_end="10"), (TypeError, "t_end")),
    ("simulate-burn_in-inf", _sim(burn_in=math.inf), (ValueError, "burn_in")),
    ("simulate-record_dt-str", _sim(record_dt="0.1"), (TypeError, "record_dt")),
    ("simulate-record_dt-tiny", _sim(t_end=1e3, record_dt=1e-9), (ValueError, "record_dt.*[GT]iB")),
    ("simulate-graph-str", _sim(graph="ring"), (TypeError, "graph.*from_networkx")),
    ("simulate-graph-networkx", _sim(graph=nx.cycle_graph(10)), ("runs", lambda r: r.n == 10)),
    ("simulate-n-memory", _sim(graph=_huge_graph(2 * 10**8), t_end=1e-9),
     (ValueError, r"n = 200000000.*[GT]iB")),
    # --- replicate ----------------------------------------------------------
    ("replicate-lam-str", lambda: replicate(G, "0.5", replications=2, t_end=1.0), (TypeError, "lam")),
    ("replicate-replications-bool", lambda: replicate(G, 0.5, replications=True, t_end=1.0),
     (TypeError, "replications")),
    ("replicate-lam1-burn", lambda: replicate(G, 1.2, replications=2, t_end=2.0, burn_in=1.0),
     (ValueError, "lam.*allow_unstable")),
    ("replicate-lam1-allow", lambda: replicate(G, 1.2, replications=2, t_end=2.0, burn_in=1.0, seed=0,
                                               allow_unstable=True),
     ("warns", RuntimeWarning, "lam.*transient", lambda r: all(_nan_se(x) for x in r.results))),
    ("replicate-graph-networkx", lambda: replicate(nx.cycle_graph(10), 0.5, replications=2, t_end=1.0,
                                                   seed=0), ("runs", lambda r: r.replications == 2)),
    # --- simulate_jsq, simulate_tasks, simulate_jsq_d ------------------------
    # the n = 1e9: the occupancy chain holds no per-server state, so
    # nothing is refused; a window of 1e-6 gives no honest error bar, and it warns
    ("simulate_jsq-n-1e9-short", lambda: simulate_jsq(10**9, 1.0, t_end=1e-6, seed=0),
     ("warns", RuntimeWarning, "", lambda r: not r.se_reliable)),
    ("simulate_jsq-n-float", lambda: simulate_jsq(10.0, 1.0, t_end=1.0), (TypeError, "n")),
    ("simulate_jsq-beta-str", lambda: simulate_jsq(10, "1", t_end=1.0), (TypeError, "beta")),
    ("simulate_jsq-beta-big", lambda: simulate_jsq(4, 2.5, t_end=1.0), (ValueError, "beta")),
    ("simulate_jsq-t_end-nan", lambda: simulate_jsq(10, 1.0, t_end=math.nan), (ValueError, "t_end")),
    ("simulate_jsq-capacity-memory", lambda: simulate_jsq(10, 1.0, t_end=1.0, capacity=10**9),
     (ValueError, "capacity.*[GT]iB")),
    ("simulate_jsq-max_waits-memory", lambda: simulate_jsq(10, 1.0, t_end=1.0, max_waits=10**10),
     (ValueError, "max_waits.*[GT]iB")),
    ("simulate_jsq-record_dt-memory", lambda: simulate_jsq(10, 1.0, t_end=1e3, record_dt=1e-9),
     (ValueError, "record_dt.*[GT]iB")),
    ("simulate_tasks-batches-1", lambda: simulate_tasks(10, 1.0, t_end=1.0, batches=1),
     (ValueError, "batches")),
    ("simulate_tasks-beta-bool", lambda: simulate_tasks(10, True, t_end=1.0), (TypeError, "beta")),
    ("simulate_tasks-n-memory", lambda: simulate_tasks(10**9, 1.0, t_end=1e-9),
     (ValueError, r"n = 1000000000.*[GT]iB")),
    ("simulate_jsq_d-d-0", lambda: simulate_jsq_d(10, 1.0, 0, t_end=1.0), (ValueError, "d must")),
    ("simulate_jsq_d-replications-1", lambda: simulate_jsq_d(10, 1.0, 2, t_end=1.0, replications=1),
     (ValueError, "replications")),
    ("simulate_jsq_d-n-memory", lambda: simulate_jsq_d(10**9, 1.0, 2, t_end=1e-9),
     (ValueError, r"n = 1000000000.*[GT]iB")),
    # --- diffusion, exact Halfin-Whitt, classical ------------------------------
    ("reflected_ou-x0", lambda: reflected_ou(1.0, (1.0, 0.0), t_end=1.0, dt=0.01), (ValueError, "x0")),
    ("reflected_ou-dt-str", lambda: reflected_ou(1.0, (0.0, 0.0), t_end=1.0, dt="0.1"),
     (TypeError, "dt")),
    ("stationary_jsq-n-1", lambda: stationary_jsq(1, 0.5), (ValueError, "n")),
    ("stationary_jsq-tol-2", lambda: stationary_jsq(10, 1.0, tol=2.0), (ValueError, "tol")),
    ("transient_jsq-times", lambda: transient_jsq(10, 1.0, [5], [-1.0]), (ValueError, "times")),
    ("erlang_c-lam-unstable", lambda: erlang_c(10, 12.0), (ValueError, "lam")),
    ("erlang_c-lam-str", lambda: erlang_c(10, "5"), (TypeError, "lam")),
    # --- mean field ---------------------------------------------------------
    ("equilibrium-lam-str", lambda: fluid.equilibrium("0.5", P2), (ValueError, r"lam must be in \(0, 1\)")),
    ("equilibrium-lam-str-type", lambda: fluid.equilibrium("0.5", P2), (TypeError, "lam")),
    ("equilibrium-degrees-str", lambda: fluid.equilibrium(0.5, "two"), (TypeError, "degrees")),
    ("equilibrium-tol-0", lambda: fluid.equilibrium(0.5, P2, tol=0), (ValueError, "tol")),
    ("equilibrium-mm1-near-1", lambda: fluid.equilibrium(0.99999, D.point(0)), ("runs", _mm1_tail)),
    ("equilibrium-mm1-memory", lambda: fluid.equilibrium(1 - 1e-12, D.point(0)),
     (RuntimeError, "lam.*tol.*[GT]iB")),
    ("solve-t-negative", lambda: fluid.solve(0.5, P2, [1.0], [-1.0]), (ValueError, "t must")),
    ("tail_bounds-which_levels-neg", lambda: tails.tail_bounds(0.5, P2, [-1]), (ValueError, "which_levels")),
    ("tail_bounds-which_levels-float", lambda: tails.tail_bounds(0.5, P2, [1.5]), (TypeError, "which_levels")),
    ("refined-truncation-1", lambda: refined(0.5, P2, truncation=1), (ValueError, "truncation")),
    ("refined-replacement-str", lambda: refined(0.5, P2, replacement="no"), (TypeError, "replacement")),
    ("cavity-service-str", lambda: cavity(0.5, P2, "exp"), (TypeError, "service")),
    ("cavity-lam-nan", lambda: cavity(math.nan, P2, exponential()), (ValueError, "lam")),
    ("cavity-lam-bool", lambda: cavity(True, P2, exponential()), (TypeError, "lam")),
    ("cavity-truncation-bool", lambda: cavity(0.5, P2, exponential(), truncation=True), (TypeError, "truncation")),
    ("cavity-damping-str", lambda: cavity(0.5, P2, exponential(), damping="0.5"),
     (TypeError, "damping")),
    ("degrees-huge", lambda: D({10**9: 1.0}), (ValueError, "degree")),
    ("degrees-sum", lambda: D({1: 0.5, 2: 0.6}), (ValueError, "sum")),
    ("degrees-str-key", lambda: D({"a": 1.0}), (TypeError, "degree")),
    ("degrees-poisson-d_max-huge", lambda: D.poisson(2.0, 10**9), (ValueError, "d_max")),
    ("degrees-from_degrees-huge", lambda: D.from_degrees([10**9]), (ValueError, "degree")),
    # --- graphs -------------------------------------------------------------
    ("ring-n-float", lambda: graphs.ring(2.0), (TypeError, "n")),
    ("ring-n-bool", lambda: graphs.ring(True), (TypeError, "n")),
    ("ring-n-memory", lambda: graphs.ring(10**10), (ValueError, r"n = 10000000000.*[GT]iB")),
    ("erdos_renyi-c-neg", lambda: graphs.erdos_renyi(10, -1.0), (ValueError, "c")),
    ("erdos_renyi-c-bool", lambda: graphs.erdos_renyi(10, True), (TypeError, "^c must")),
    ("erdos_renyi-c-str", lambda: graphs.erdos_renyi(10, "2"), (TypeError, "^c must")),
    # the estimate counts the building's measured peak, about 112 bytes per
    # directed edge: these used to pass the check and die in a MemoryError
    ("ring-n-2e8-memory", lambda: graphs.ring(2 * 10**8), (ValueError, r"n = 200000000.*[GT]iB")),
    ("random_regular-memory", lambda: graphs.random_regular(10**7, 4),
     (ValueError, r"n = 10000000.*[GT]iB")),
    ("erdos_renyi-memory", lambda: graphs.erdos_renyi(10**8, 3.0),
     (ValueError, r"n = 100000000.*[GT]iB")),
    ("from_networkx-directed", lambda: graphs.from_networkx(nx.DiGraph()), (TypeError, "G")),
    # --- exact chains -------------------------------------------------------
    ("stationary-mu-neg", lambda: stationary(graphs.ring(3), 0.5, -1.0, 5), (ValueError, "mu")),
    ("stationary-lam-str", lambda: stationary(graphs.ring(3), "0.5", 0.0, 5), (TypeError, "lam")),
    ("stationary-n-big", lambda: stationary(graphs.ring(30), 0.5, 0.0, 5), (ValueError, "n")),
    ("occupancy_chain-lam", lambda: occupancy_chain(5, 1.2, P2, 5), (ValueError, "lam")),
    ("occupancy_chain-truncation-0", lambda: occupancy_chain(5, 0.5, P2, 0), (ValueError, "truncation")),
    ("occupancy_chain_adaptive-tol", lambda: occupancy_chain_adaptive(5, 0.5, P2, tol=0.5),
     (ValueError, "tol")),
    ("mm1_transient-lam-bool", lambda: mm1_transient(True, [1.0], [1.0]), (TypeError, "lam")),
    ("mm1_transient-lam-str", lambda: mm1_transient("0.5", [1.0], [1.0]), (TypeError, "lam")),
    ("mm1_transient-tol-big", lambda: mm1_transient(0.5, [1.0], [1.0], tol=0.1), (ValueError, "tol")),
    # --- service laws and M/G/1 references --------------------------------------
    ("hyperexponential-scv-str", lambda: hyperexponential("2"), (TypeError, "scv")),
    ("erlang-k-bool", lambda: erlang(True), (TypeError, "k must")),
    ("deterministic-mean-str", lambda: deterministic(mean="1"), (TypeError, "mean")),
    ("sample-size-float", lambda: erlang(2).sample(3.0), (TypeError, "size")),
    ("pollaczek_khinchine-lam-bool", lambda: pollaczek_khinchine(True, 1.0), (TypeError, "lam")),
    ("md1_distribution-kmax-neg", lambda: md1_distribution(0.5, -1), (ValueError, "kmax")),
    # --- stats and sweeps ---------------------------------------------------
    ("replication_ci-short", lambda: stats.replication_ci([1.0]), (ValueError, "x")),
    ("replication_ci-level", lambda: stats.replication_ci([1.0, 2.0], level=1.5), (ValueError, "level")),
    ("batch_means-dt-0", lambda: stats.batch_means(np.arange(100.0), dt=0.0), (ValueError, "dt")),
    ("detectable-m-0", lambda: stats.detectable(1.0, m=0), (ValueError, "m must")),
    ("detectable-se-neg", lambda: stats.detectable(-1.0), (ValueError, "se")),
    ("sweep-lam-1.2", lambda: sweep({"graph": ["ring"], "n": [10], "lam": [1.2]}, replications=2,
                                    t_end=1.0), (ValueError, "lam")),
    ("sweep-lam-str", lambda: sweep({"graph": ["ring"], "n": [10], "lam": ["0.5"]}, replications=2,
                                    t_end=1.0), (TypeError, "lam")),
    ("points-grid-empty-list", lambda: points({"graph": ["ring"], "n": []}), (ValueError, "grid")),
]


def run_row(call, expected):
    """Run one row; return None if it behaves as expected, else a description."""
    if expected[0] in ("warns", "runs"):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = call()
        if expected[0] == "warns":
            _, cat, rx, check = expected
            import re
            if not any(issubclass(x.category, cat) and re.search(rx, str(x.message)) for x in w):
                return f"ran without a {cat.__name__} matching {rx!r}"
        else:
            check = expected[1]
        return None if check(r) else "ran, but the result fails its check"
    exc, rx = expected
    with pytest.raises(exc, match=rx):
        call()
    return None


@pytest.mark.parametrize("call,expected", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_bad_input_table(call, expected):
    assert run_row(call, expected) is None


def test_table_is_large():
    assert len(ROWS) >= 40 and len({r[0] for r in ROWS}) == len(ROWS)


# ---------------------------------------------------------------- properties
_not_real = st.one_of(st.booleans(), st.text(max_size=5), st.none(), st.complex_numbers(),
                      st.lists(st.floats(), max_size=2))


@settings(max_examples=40, deadline=None)
@given(_not_real)
def test_simulate_refuses_non_numbers_for_lam(x):
    with pytest.raises(TypeError, match="lam"):
        simulate(G, x, 0.0, t_end=1.0)


@settings(max_examples=40, deadline=None)
@given(st.one_of(st.just(math.nan), st.just(math.inf), st.just(-math.inf),
                 st.floats(max_value=0.0, allow_nan=False)))
def test_simulate_refuses_nan_inf_nonpositive_lam(x):
    with pytest.raises(ValueError, match="lam"):
        simulate(G, x, 0.0, t_end=1.0)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 5)),
       st.booleans(), st.booleans())
def test_real_accepts_exactly_the_interval(x, lo_open, hi_open):
    inside = (math.isfinite(x) and (0 < x if lo_open else 0 <= x) and (x < 1 if hi_open else x <= 1))
    if inside:
        assert V.real(x, "p", lo=0, hi=1, lo_open=lo_open, hi_open=hi_open) == float(x)
    else:
        with pytest.raises(ValueError, match=r"^p must be in [\[(]0, 1[\])], got"):
            V.real(x, "p", lo=0, hi=1, lo_open=lo_open, hi_open=hi_open)


@settings(max_examples=60, deadline=None)
@given(_not_real)
def test_every_validator_refuses_non_numbers(x):
    for f in (lambda: V.real(x, "x"), lambda: V.integer(x, "x"), lambda: V.positive(x, "x"),
              lambda: V.probability(x, "x")):
        with pytest.raises(TypeError, match="^x must be"):
            f()


@settings(max_examples=60, deadline=None)
@given(st.integers(-10**20, 10**20), st.integers(-3, 3))
def test_integer_bounds(k, lo):
    if k >= lo:
        assert V.integer(k, "k", lo=lo) == k and type(V.integer(k, "k", lo=lo)) is int
    else:
        with pytest.raises(ValueError, match=f"k must be an integer >= {lo}, got {k}"):
            V.integer(k, "k", lo=lo)


def test_integer_refuses_integral_floats_and_bools():
    for x in (2.0, True, np.float64(3.0), "3"):
        with pytest.raises(TypeError, match="k must be an integer"):
            V.integer(x, "k")
    assert V.integer(np.int32(3), "k") == 3


def test_type_errors_are_also_value_errors():
    # callers of the earlier checks caught ValueError for a wrong type (fluid's lam)
    with pytest.raises(ValueError):
        V.real("0.5", "lam")
    assert issubclass(V.InvalidType, TypeError) and issubclass(V.InvalidType, ValueError)


def test_memory_estimate():
    assert V.memory_estimate(n=10, per_item=8) == 80
    V.check_memory(4 * 2**30, "n", 10)  # exactly the limit is allowed
    with pytest.raises(ValueError, match=r"n = 7 .* 4\.00 GiB"):
        V.check_memory(4 * 2**30 + 1, "n", 7)
    with pytest.raises(ValueError, match=r"levels = 3 needs about 2\.00 GiB .*more than the 1\.00 GiB"):
        V.check_memory(2**31, "levels", 3, limit=2**30)


def test_numpy_scalars_and_0d_arrays_still_accepted():
    # what float() took before, short of str and bool, is still taken
    for x in (np.float64(0.5), np.float32(0.5), np.array(0.5), np.int64(1), 1):
        assert V.real(x, "x") == float(x)
    r = simulate(G, np.array(0.5), np.float32(0.0), t_end=np.int64(1), seed=0, batches=2)
    assert r.lam == 0.5 and r.t_end == 1.0
    with pytest.raises(TypeError, match="x must be"):
        V.real(np.array([0.5]), "x")   # a 1-element array is not a number


def test_one_unstable_warning_text():
    """simulate and replicate say the same thing about an unstable run."""
    msgs = []
    for call in (lambda: simulate(G, 1.5, 0.0, t_end=1.0, seed=0),
                 lambda: replicate(G, 1.5, replications=2, t_end=1.0, seed=0)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            call()
        msgs.append({str(x.message) for x in w if "unstable" in str(x.message)})
    assert len(msgs[0]) == 1 and msgs[0] == msgs[1], msgs
