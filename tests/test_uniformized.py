"""The uniformized fast path for static graphs (``qlib.sim.simulate_uniformized``).

Checked against what it must reproduce, with margins fixed in advance:

* the exact tiny-graph chain (``qlib.exact.stationary`` at ``mu = 0``), the
  whole neighbourhood and ``k = 2, 3`` choices, on the ring and the
  complete graph (neighbours computed, or read from the CSR arrays) and on
  a star (degrees 3 and 1: three choices sample two of the centre's three
  neighbours, a leaf asks its only one): the mean over independent
  replications of the mean queue length within 4 standard errors (Student t
  with 7 degrees of freedom: a false alarm about once in 200 runs per cell);
* the existing kernel (``qlib.simulate``) on the ring at λ = 0.7 and on the
  torus, both policies: a two-sample z-test on the mean queue length at
  |z| < 4 (batch-means standard errors of long runs);
* the supermarket model (JSQ(2), the second server drawn among the others)
  on the implicit complete graph at ``n = 10**4``: its fixed point
  ``Σ_i λ^(2^i - 1)`` within 4 standard errors plus ``10 / n`` (the
  finite-``n`` correction is of order ``1 / n``);
* an implicit graph and its CSR form give the same run, bit for bit;
* ``E q(1) = λ`` (rate balance of a single server), within 4 standard errors;
* a queue past 255 widens the compact state instead of wrapping: tasks are
  conserved through the widening;
* bad input raises ``ValueError`` naming the parameter.
"""
import math

import numpy as np
import pytest

from qlib import exact, graphs, simulate
from qlib.sim import simulate_uniformized
from qlib.sim.uniformized import graph_kind

LAM = 0.7
Z = 4.0
# short runs whose batch-means diagnostics are not the point here
pytestmark = pytest.mark.filterwarnings("ignore:standard errors unreliable:RuntimeWarning")


_STAR = graphs.from_edges(4, [(0, 1), (0, 2), (0, 3)])


@pytest.mark.parametrize("graph,kind,choices", [
    (graphs.ring(4), "ring", 2), (graphs.ring(4), "ring", None),
    (graphs.complete(4), "csr", 2), (graphs.complete(4), "csr", None),
    (graphs.complete(4, implicit=True), "complete", 2),
    (graphs.complete(4, implicit=True), "complete", 3),
    (graphs.complete(4, implicit=True), "complete", None),
    (_STAR, "csr", 3), (graphs.ring(4, implicit=True), "ring", 3),
], ids=["ring4-2", "ring4-all", "complete4-2", "complete4-all", "implicit-complete4-2",
        "implicit-complete4-3", "implicit-complete4-all", "star4-3", "implicit-ring4-3"])
def test_tiny_graph_matches_exact_chain(graph, kind, choices):
    assert graph_kind(graph)[0] == kind
    e = exact.stationary(graph, LAM, 0.0, 14, choices=choices)   # truncation error < 1e-5
    want = float(np.sum(e.occupancy[1:]))
    m = np.array([simulate_uniformized(graph, LAM, t_end=20000, burn_in=100, seed=s,
                                       choices=choices, warn=False).mean_queue_length
                  for s in range(8)])
    se = m.std(ddof=1) / math.sqrt(m.size)
    assert abs(m.mean() - want) < Z * se, (m.mean(), want, se)


@pytest.mark.parametrize("graph", [graphs.ring(1000), graphs.torus(30, 30)], ids=["ring", "torus"])
@pytest.mark.parametrize("choices", [2, None])
def test_agrees_with_the_existing_kernel(graph, choices):
    kw = dict(t_end=2500, burn_in=300, choices=choices, warn=False)
    a = simulate_uniformized(graph, LAM, seed=1, **kw)
    b = simulate(graph, LAM, 0.0, seed=2, **kw)
    z = (a.mean_queue_length - b.mean_queue_length) / math.hypot(a.mean_queue_length_se,
                                                                  b.mean_queue_length_se)
    assert abs(z) < Z, z
    # E q(1) = lam: the busy fraction balances the arrival rate
    assert abs(a.occupancy[1] - LAM) < Z * a.occupancy_se[1]
    assert a.arrivals + a.departures == a.events and a.resamples == 0
    assert a.occupancy[0] == 1.0 and a.final_queues.shape == (graph.n,)


def test_supermarket_on_the_implicit_complete_graph():
    n = 10**4
    want = sum(LAM ** (2**i - 1) for i in range(1, 40))     # E Q / n at the fixed point
    m = np.array([simulate_uniformized(graphs.complete(n, implicit=True), LAM, t_end=60,
                                       burn_in=20, seed=s, choices=2,
                                       warn=False).mean_queue_length for s in range(8)])
    se = m.std(ddof=1) / math.sqrt(m.size)
    assert abs(m.mean() - want) < Z * se + 10 / n, (m.mean(), want, se)


@pytest.mark.parametrize("implicit,csr", [
    (graphs.ring(300, implicit=True), graphs.ring(300)),
    (graphs.torus(12, 15, implicit=True), graphs.torus(12, 15)),
    (graphs.complete(30, implicit=True), graphs.complete(30)),
], ids=["ring", "torus", "complete"])
@pytest.mark.parametrize("choices", [None, 2, 3])
def test_implicit_graph_is_its_csr_form(implicit, csr, choices):
    kw = dict(t_end=200, burn_in=20, seed=7, choices=choices, warn=False)
    a = simulate_uniformized(implicit, LAM, **kw)
    b = simulate_uniformized(csr, LAM, **kw)
    assert np.array_equal(a.occupancy, b.occupancy)
    assert np.array_equal(a.final_queues, b.final_queues)
    assert implicit._csr is None               # the run never built the adjacency arrays


def test_result_is_the_simulate_result():
    a = simulate_uniformized(graphs.ring(200), LAM, t_end=400, burn_in=50, seed=3, choices=2)
    b = simulate(graphs.ring(200), LAM, 0.0, t_end=400, burn_in=50, seed=3, choices=2)
    assert type(a) is type(b)
    assert set(vars(a)) == set(vars(b))
    c = simulate_uniformized(graphs.ring(200), LAM, t_end=400, burn_in=50, seed=3, choices=2)
    assert np.array_equal(a.occupancy, c.occupancy)                 # same seed, same run
    assert np.array_equal(a.final_queues, c.final_queues)


def test_queue_past_255_widens_the_state_and_conserves_tasks():
    # lam = 5 at n = 10: queues grow by about 400 over the run, past uint8's 255
    x0 = np.full(10, 100)
    with pytest.warns(RuntimeWarning, match="unstable"):
        r = simulate_uniformized(graphs.ring(10), 5.0, t_end=100, seed=4, choices=2, initial=x0)
    assert r.final_queues.max() > 255
    assert int(r.final_queues.sum()) == int(x0.sum()) + r.arrivals - r.departures
    assert r.levels > 255


@pytest.mark.parametrize("kwargs,name,exc", [
    (dict(mu=-1.0), "mu", ValueError), (dict(choices=1), "choices", ValueError),
    (dict(choices=True), "choices", TypeError), (dict(lam=-0.5), "lam", ValueError),
    (dict(t_end=1e-3), "t_end", ValueError), (dict(burn_in=50.0), "t_end", ValueError),
])
def test_bad_input_raises(kwargs, name, exc):
    args = dict(lam=LAM, t_end=10.0)
    args.update(kwargs)
    with pytest.raises(exc, match=name):
        simulate_uniformized(graphs.ring(20), **args)


@pytest.mark.parametrize("make,name", [
    (lambda: graphs.ring(2, implicit=True), "n"), (lambda: graphs.ring(5, implicit=1), "implicit"),
    (lambda: graphs.ImplicitGraph("star", 5), "kind"),
    (lambda: graphs.ImplicitGraph("torus", 10, 5), "n"),
])
def test_bad_implicit_graph_raises(make, name):
    with pytest.raises((ValueError, TypeError), match=name):
        make()


def test_implicit_graph_works_wherever_a_graph_does():
    # the other simulators and solvers read adjacency arrays: they get the CSR form
    kw = dict(t_end=30, seed=1, warn=False)
    a = simulate(graphs.torus(4, 5, implicit=True), LAM, 1.0, **kw)
    b = simulate(graphs.torus(4, 5), LAM, 1.0, **kw)
    assert np.array_equal(a.occupancy, b.occupancy)
    e1 = exact.stationary(graphs.ring(4, implicit=True), LAM, 0.0, 8)
    e2 = exact.stationary(graphs.ring(4), LAM, 0.0, 8)
    assert np.array_equal(e1.occupancy, e2.occupancy)
