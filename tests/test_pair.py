"""Checks of ``qlib.meanfield.pair``: the pair approximation and the ring windows.

Independent routes only: the fluid recursion (closed form) against the
pair code with the correlation switched off; the exact chain of two
servers against the pair approximation for ``d = 1``; the window code at
``L = 2`` against the pair code (different constructions of the same
equations); rate balance ``q(1) = λ (1 − blocking)``.
"""
import itertools
import math

import numpy as np
import pytest

from qlib import exact, graphs
from qlib.meanfield import fluid
from qlib.meanfield.degrees import DegreeDistribution
from qlib.meanfield.pair import PairResult, WindowResult, _rates, pair_approximation, ring_window


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("lam", [0.5, 0.9])
def test_independent_closure_is_the_fluid_equilibrium(d, lam):
    r = pair_approximation(lam, d, closure="independent")
    q = fluid.equilibrium(lam, DegreeDistribution.point(d), tol=1e-14)
    k = min(q.size, r.occupancy.size)
    assert np.max(np.abs(r.occupancy[:k] - q[:k])) < 1e-10
    assert r.response_time == pytest.approx(fluid.response_time(lam, DegreeDistribution.point(d)),
                                            rel=1e-9)


@pytest.mark.parametrize("lam", [0.3, 0.7, 0.9])
def test_disjoint_edges_are_exact(lam):
    K = 25
    r = pair_approximation(lam, 1, truncation=K)
    e = exact.stationary(graphs.cliques(4, 2), lam, 0.0, truncation=K)
    assert np.max(np.abs(r.occupancy - e.occupancy)) < 1e-10
    assert r.response_time == pytest.approx(e.little_response_time, rel=1e-10)
    assert r.blocking == pytest.approx(e.blocking_probability, rel=1e-6, abs=1e-15)


@pytest.mark.parametrize("lam,mu", [(0.5, 0.0), (0.9, 0.0), (0.7, 1.0)])
def test_window_of_two_is_the_pair_approximation(lam, mu):
    a = pair_approximation(lam, 2, mu, truncation=10)
    b = ring_window(lam, 2, mu, truncation=10)
    assert np.max(np.abs(a.pair - b.window)) < 1e-9
    assert a.response_time == pytest.approx(b.response_time, rel=1e-9)


@pytest.mark.parametrize("make", [lambda lam: pair_approximation(lam, 2, truncation=12),
                                  lambda lam: pair_approximation(lam, 3, 2.0, truncation=12),
                                  lambda lam: ring_window(lam, 3, truncation=8)])
def test_rate_balance_and_residual(make):
    lam = 0.6
    r = make(lam)
    # busy fraction = accepted arrival rate (service rate 1)
    assert r.occupancy[1] == pytest.approx(lam * (1 - r.blocking), rel=1e-9)
    assert r.residual < 1e-10
    P = r.pair if isinstance(r, PairResult) else r.window
    assert P.sum() == pytest.approx(1.0) and P.min() >= 0


def test_pair_correlation_positive_and_R_above_fluid():
    # a static ring: neighbouring queues are positively correlated, R above the fluid value
    r = pair_approximation(0.9, 2)
    assert r.correlation > 0.1
    assert r.response_time > fluid.response_time(0.9, DegreeDistribution.point(2)) + 0.1


def test_fast_resampling_tends_to_the_fluid_limit():
    lam = 0.8
    Rf = fluid.response_time(lam, DegreeDistribution.point(2))
    gaps = [pair_approximation(lam, 2, mu, truncation=14).response_time - Rf for mu in (100.0, 1000.0)]
    # the pair correlation that resampling destroys is O(1/mu)
    assert gaps[0] > gaps[1] > 0
    assert gaps[0] / gaps[1] == pytest.approx(10.0, rel=0.05)


def test_auto_levels_converged():
    r = pair_approximation(0.9, 2)
    s = pair_approximation(0.9, 2, truncation=r.truncation + 6)
    assert r.response_time == pytest.approx(s.response_time, rel=1e-9)
    assert r.blocking < 1e-12


@pytest.mark.parametrize("kw,err", [
    (dict(lam=1.2, degree=2), ValueError),
    (dict(lam=0.5, degree=0), ValueError),
    (dict(lam=0.5, degree=2.0), TypeError),
    (dict(lam=0.5, degree=2, mu=-1.0), ValueError),
    (dict(lam=0.5, degree=2, mu=math.inf), ValueError),
    (dict(lam=0.5, degree=2, truncation=1), ValueError),
    (dict(lam=0.5, degree=2, closure="tree"), ValueError),
    (dict(lam=0.5, degree=2, tol=0.0), ValueError),
])
def test_pair_bad_input(kw, err):
    with pytest.raises(err):
        pair_approximation(**kw)


@pytest.mark.parametrize("kw,err", [
    (dict(lam=0.0, length=2), ValueError),
    (dict(lam=0.5, length=1), ValueError),
    (dict(lam=0.5, length=2.5), TypeError),
    (dict(lam=0.5, length=2, truncation=1), ValueError),
    (dict(lam=0.5, length=6, truncation=20), ValueError),
    (dict(lam=0.5, length=2, mu="fast"), TypeError),
])
def test_window_bad_input(kw, err):
    with pytest.raises(err):
        ring_window(**kw)


def test_results_are_frozen():
    r = ring_window(0.5, 2, truncation=4)
    assert isinstance(r, WindowResult)
    with pytest.raises(Exception):
        r.truncation = 3


def _win_prob(a, others):
    """P(a queue in state a wins one arrival) against independent queues, by enumeration.

    ``others`` lists laws (1-d arrays) of the other queues; ties split uniformly.
    """
    total = 0.0
    for states in itertools.product(*[range(len(c)) for c in others]):
        pr = np.prod([c[s] for c, s in zip(others, states)])
        if pr and all(s >= a for s in states):
            total += pr / (1 + sum(s == a for s in states))
    return total


@pytest.mark.parametrize("d", [3, 4])
def test_pair_rates_against_enumeration(d):
    # d >= 3: the integral formula of _rates (Gauss-Legendre in t) against a direct
    # enumeration of the other neighbours' states with explicit uniform tie breaking
    rng = np.random.default_rng(d)
    K1, lam = 4, 0.7
    A = rng.random((K1, K1))
    P = (A + A.T) / (A + A.T).sum()
    p = P.sum(axis=1)
    C = P / p[:, None]
    nodes, weights = np.polynomial.legendre.leggauss(max(2, d // 2 + 2))
    nodes, weights = (nodes + 1) / 2, weights / 2
    r = _rates(P, lam, d, "pair", nodes, weights)
    point = np.eye(K1)
    for a in range(K1):
        for b in range(K1):
            r1 = _win_prob(a, [point[b]] + [C[a]] * (d - 1))          # arrival at u
            r2 = _win_prob(a, [point[b]] + [C[b]] * (d - 1))          # arrival at v
            r3 = (d - 1) * sum(C[a, y] * _win_prob(a, [point[y]] + [C[y]] * (d - 1))
                               for y in range(K1))                    # at u's other neighbours
            assert r[a, b] == pytest.approx(lam * (r1 + r2 + r3), rel=1e-12, abs=1e-14)
