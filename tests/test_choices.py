"""``choices=k``: the arrival's server and k − 1 uniformly sampled neighbours.

Checked, exact before statistical:

* the tiny-graph chain with ``choices`` at ``μ = ∞`` against the occupancy
  chain of the supermarket model JSQ(k) sampled without replacement (two
  independent exact solvers; equal to solver precision);
* the simulation against the exact tiny-graph chain at ``μ ∈ {0, 1, ∞}``
  (a family of Student-t tests over independent replications, Holm);
* the simulation at ``μ = ∞`` on the 4-regular 3 × 4 torus against the
  exact finite-n supermarket chain with k choices (without replacement).  At
  ``μ = ∞`` the servers at the positions an arrival looks at are a uniform
  random k-subset of the n servers whatever the graph, once every degree is
  at least k − 1 (a uniform permutation maps the looked positions to a
  uniform k-subset), so the finite-n occupancy chain is the exact law of the
  simulated system, not a limit: no finite-n bias to argue away.
"""
import math

import numpy as np
import pytest

from qlib import exact, graphs, replicate, simulate
from qlib.exact import occupancy_chain
from qlib.meanfield.degrees import DegreeDistribution
from qlib.stats.families import simultaneous

LAM = 0.7
R = 16          # independent replications per cell: df = 15
T_END, BURN = 40000.0, 100.0   # long runs: at n = 4 a run of 3000 sees too few excursions
#                                 for its mean to be near normal (skewed, biased low)


def test_exact_tiny_matches_supermarket_chain_at_mu_inf():
    # two solvers written independently: the by-position chain of tiny.py and
    # the occupancy chain of occupancy.py, at mu = inf with k of n = 5 servers
    for g, k in ((graphs.ring(5), 2), (graphs.complete(5), 2), (graphs.complete(5), 3)):
        e = exact.stationary(g, LAM, math.inf, 10, choices=k)
        o = occupancy_chain(5, LAM, DegreeDistribution({k - 1: 1.0}), 10)
        assert abs(e.response_time - o.response_time) < 1e-9
        np.testing.assert_allclose(e.occupancy, o.occupancy, atol=1e-9)


def test_exact_choices_covering_the_neighbourhood_is_the_default():
    # k >= degree + 1 looks at every neighbour: the same chain as choices=None
    g = graphs.ring(4)
    a = exact.stationary(g, LAM, 1.0, 8, choices=3)
    b = exact.stationary(g, LAM, 1.0, 8)
    assert a.response_time == pytest.approx(b.response_time, rel=1e-12)


def test_simulation_covering_the_neighbourhood_is_bitwise_the_default():
    # with k - 1 >= degree nothing is sampled: the same draws, bit for bit
    for mu in (0.0, 1.0, math.inf):
        a = simulate(graphs.ring(50), LAM, mu, t_end=50, seed=4, choices=3, batches=4)
        b = simulate(graphs.ring(50), LAM, mu, t_end=50, seed=4, batches=4)
        assert np.array_equal(a.occupancy, b.occupancy)
        assert np.array_equal(a.final_queues, b.final_queues)


def test_simulation_matches_exact_tiny_chain():
    cells = [(graphs.ring(4), 2), (graphs.complete(4), 2), (graphs.complete(4), 3)]
    est, se, target = [], [], []
    for g, k in cells:
        for mu in (0.0, 1.0, math.inf):
            e = exact.stationary(g, LAM, mu, 12, choices=k)
            assert e.blocking_probability < 1e-6   # truncation far below the s.e.
            rr = replicate(g, LAM, mu, replications=R, seed=11, n_jobs=1, choices=k,
                           t_end=T_END, burn_in=BURN)
            est.append(rr.response_time)
            se.append(rr.response_time_se)
            target.append(e.response_time)
    fam = simultaneous(est, se, R - 1, target, level=0.99)
    print(fam.report())
    print("detectable deviation of R:", np.round(fam.detectable, 4))
    # the checks must be able to see the policy: the sampled and the full
    # neighbourhood differ by far more than the detectable deviation on K4
    full = exact.stationary(graphs.complete(4), LAM, 0.0, 12).response_time
    assert abs(target[3] - full) > 3 * fam.detectable.max()
    assert fam.passed


def test_simulation_matches_finite_n_supermarket_at_mu_inf():
    # a 4-regular graph on 12 vertices (random_regular(12, 4) may fall back to
    # an erased pairing with lower degrees at so small an n)
    g = graphs.torus(3, 4)
    assert set(np.diff(g.indptr).tolist()) == {4}
    est, se, target = [], [], []
    for k in (2, 3):
        o = occupancy_chain(12, LAM, DegreeDistribution({k - 1: 1.0}), 7)
        assert o.blocking_probability < 1e-6
        rr = replicate(g, LAM, math.inf, replications=R, seed=12, n_jobs=1, choices=k,
                       t_end=T_END, burn_in=BURN)
        est.append(rr.response_time)
        se.append(rr.response_time_se)
        target.append(o.response_time)
    fam = simultaneous(est, se, R - 1, target, level=0.99)
    print(fam.report())
    print("detectable deviation of R:", np.round(fam.detectable, 4))
    assert fam.passed


@pytest.mark.parametrize("bad, err", [(1, ValueError), (0, ValueError), (-3, ValueError),
                                      (2.0, TypeError), (True, TypeError), ("2", TypeError)])
def test_choices_refused(bad, err):
    g = graphs.ring(10)
    with pytest.raises(err, match="choices"):
        simulate(g, LAM, t_end=5, choices=bad)
    with pytest.raises(err, match="choices"):
        replicate(g, LAM, replications=2, t_end=5, choices=bad)
    with pytest.raises(err, match="choices"):
        exact.stationary(graphs.ring(3), LAM, 0.0, 3, choices=bad)


def test_choices_needs_exponential_services():
    with pytest.raises(ValueError, match="choices"):
        simulate(graphs.ring(10), LAM, t_end=5, choices=2, record_response=True)



def test_sweep_passes_choices_and_none_is_the_default_point():
    from qlib.sweep.grid import _normalise, graph_for, initial_for, point_seed, run_point
    base = dict(graph="ring", n=30, lam=LAM)
    a = _normalise(dict(base, choices=None), 20.0, 5.0, 0)
    assert "choices" not in a
    assert point_seed(1, a).spawn_key == point_seed(1, _normalise(base, 20.0, 5.0, 0)).spawn_key
    with pytest.raises(ValueError, match="choices"):
        _normalise(dict(base, choices=1), 20.0, 5.0, 0)
    p = _normalise(dict(base, choices=2), 20.0, 5.0, 0)
    out = run_point(p, seed=1, replications=2, t_end=20.0, burn_in=5.0)
    g = graph_for(p, 1)
    rr = replicate(g, LAM, 0.0, replications=2, seed=point_seed(1, p), n_jobs=1, t_end=20.0,
                   burn_in=5.0, initial=initial_for(p, 1, g), choices=2)
    assert out["response_time_mean"] == rr.response_time
