"""Pair approximation of the sampled-neighbour policy (qlib.meanfield.pair_choices).

Exact before statistical: on K2 (d = 1) the pair is the whole graph, so the
approximation must equal the exact tiny-graph chain with choices=2 at μ = 0;
with k ≥ d + 1 the sample is the whole neighbourhood and the rates must
reproduce qlib.meanfield.pair (a separately written rate function); with the
neighbours made independent the marginal must be the supermarket fluid of
qlib.meanfield.choices.  Then the closure's bookkeeping (conditional laws are
laws, arrivals are conserved, departures equal accepted arrivals) and its
shape in λ and d.  Last, against simulation on static graphs: the pair
closure of this policy is reported accurate to about 1 % on the ring (Gast
2015); the claim tested is that the simulated 95 % interval lies within
1 % of the approximation (an equivalence test with the claim's margin; the
fluid limit, 6–10 % low at this load, fails it).
"""
import numpy as np
import pytest

from qlib import DegreeDistribution, exact, graphs, replicate
from qlib.meanfield import choices
from qlib.meanfield.pair import pair_approximation
from qlib.meanfield.pair_choices import (ChoicesPairResult, _rates,
                                         pair_approximation_choices as pc)


@pytest.mark.parametrize("lam", [0.5, 0.8])
def test_k2_is_exact(lam):
    # d = 1: disjoint edges; exact chain truncated far beyond the pair's
    # converged truncation (tail below 1e-12 at these loads)
    K2 = graphs.from_edges(2, [(0, 1)])
    e = exact.stationary(K2, lam, 0.0, 100, choices=2)
    r = pc(lam, 1)
    assert r.response_time == pytest.approx(e.response_time, rel=1e-9)
    m = min(len(e.occupancy), len(r.occupancy))
    np.testing.assert_allclose(r.occupancy[:m], e.occupancy[:m], atol=1e-10)


@pytest.mark.parametrize("d", [2, 3])
def test_whole_neighbourhood_reproduces_pair_module(d):
    # choices = d + 1 (and more) looks at every neighbour: qlib.meanfield.pair's policy
    ref = pair_approximation(0.8, d, truncation=30).response_time
    for k in (d + 1, d + 3):
        assert pc(0.8, d, choices=k, truncation=30).response_time == pytest.approx(ref, rel=1e-9)


@pytest.mark.parametrize("d,k", [(2, 2), (3, 2), (4, 3)])
def test_independent_closure_is_the_supermarket_fluid(d, k):
    r = pc(0.9, d, choices=k, closure="independent")
    q = choices.equilibrium(0.9, DegreeDistribution.point(d), k)
    m = min(len(q), len(r.occupancy))
    np.testing.assert_allclose(r.occupancy[:m], q[:m], atol=1e-10)
    assert r.response_time == pytest.approx(
        choices.response_time(0.9, DegreeDistribution.point(d), k), rel=1e-9)


@pytest.mark.parametrize("d,k", [(2, 2), (3, 2), (4, 2), (4, 3)])
def test_conditional_law_and_rate_conservation(d, k):
    lam = 0.85
    r = pc(lam, d, choices=k)
    assert isinstance(r, ChoicesPairResult) and r.choices == k
    C = r.conditional
    assert np.all(C >= 0)
    np.testing.assert_allclose(C.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(r.pair, r.pair.T, atol=1e-14)
    # mean gain rate over the pair law, before truncation, is λ exactly
    nodes, weights = np.polynomial.legendre.leggauss(3)
    rates = _rates(r.pair, lam, d, k, "pair", (nodes + 1) / 2, weights / 2)
    assert float(np.sum(r.pair * rates)) == pytest.approx(lam, rel=1e-12)
    # departures (busy fraction) equal accepted arrivals
    assert 1 - r.marginal[0] == pytest.approx(lam * (1 - r.blocking), abs=1e-9)
    assert r.residual < 1e-10 and r.blocking < 1e-12


def test_monotone_in_load_and_degree():
    lams = [0.3, 0.6, 0.8, 0.9]
    for d in (2, 3):
        R = [pc(lam, d).response_time for lam in lams]
        assert np.all(np.diff(R) > 0)
    # at fixed λ: above the fluid (positive correlation along edges), and
    # falling towards it as the degree grows (one sampled neighbour of many)
    fluid = choices.response_time(0.9, DegreeDistribution.point(3), 2)
    R = [pc(0.9, d).response_time for d in (2, 3, 4, 6)]
    assert np.all(np.diff(R) < 0) and R[-1] > fluid
    assert pc(0.9, 3).correlation > 0


@pytest.mark.parametrize("kw,exc,word", [
    (dict(lam=1.0), ValueError, "lam"), (dict(lam="0.5"), TypeError, "lam"),
    (dict(degree=0), ValueError, "degree"), (dict(degree=2.0), TypeError, "degree"),
    (dict(choices=1), ValueError, "choices"), (dict(choices=True), TypeError, "choices"),
    (dict(mu=-1.0), ValueError, "mu"), (dict(mu=float("inf")), ValueError, "mu"),
    (dict(truncation=1), ValueError, "truncation"), (dict(closure="star"), ValueError, "closure"),
    (dict(tol=0.0), ValueError, "tol"), (dict(max_iter=0), ValueError, "max_iter"),
])
def test_bad_input_names_the_parameter(kw, exc, word):
    args = dict(lam=0.5, degree=2) | kw
    with pytest.raises(exc, match=word):
        pc(args.pop("lam"), args.pop("degree"), **args)


@pytest.mark.parametrize("graph,d", [(graphs.ring(1000), 2),
                                     (graphs.random_regular(1000, 3, seed=5), 3)])
def test_against_simulation(graph, d):
    lam = 0.7
    pair = pc(lam, d).response_time
    rr = replicate(graph, lam, 0.0, replications=8, t_end=600.0, burn_in=100.0, choices=2,
                   seed=11, n_jobs=1)
    ci = rr.response_time_ci(0.95)
    assert pair / 1.01 < ci.low and ci.high < pair / 0.99, (pair, ci)
