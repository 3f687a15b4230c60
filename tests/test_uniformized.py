"""The uniformized fast path for static graphs (``qlib.sim.simulate_uniformized``).

Checked against what it must reproduce, with margins fixed in advance:

* the exact tiny-graph chain (``qlib.exact.stationary`` at ``mu = 0``), both
  policies, on the ring (neighbours computed) and on the complete graph
  (neighbours read from the CSR arrays): the mean over independent
  replications of the mean queue length within 4 standard errors (Student t
  with 7 degrees of freedom: a false alarm about once in 200 runs per cell);
* the existing kernel (``qlib.simulate``) on the ring at λ = 0.7 and on the
  torus, both policies: a two-sample z-test on the mean queue length at
  |z| < 4 (batch-means standard errors of long runs);
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


@pytest.mark.parametrize("graph,kind", [(graphs.ring(4), "ring"), (graphs.complete(4), "csr")],
                         ids=["ring4", "complete4"])
@pytest.mark.parametrize("choices", [2, None])
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


@pytest.mark.parametrize("kwargs,name", [
    (dict(mu=1.0), "mu"), (dict(choices=3), "choices"), (dict(choices=True), "choices"),
    (dict(lam=-0.5), "lam"), (dict(t_end=1e-3), "t_end"), (dict(burn_in=50.0), "t_end"),
])
def test_bad_input_raises(kwargs, name):
    args = dict(lam=LAM, t_end=10.0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        simulate_uniformized(graphs.ring(20), **args)
