"""Tests of ``qlib.finite_n`` (first-order finite-n bias of the stationary occupancy)."""

import math

import numpy as np
import pytest

import qlib
from qlib import finite_n, fluid, graphs
from qlib.degrees import DegreeDistribution as D


def test_independent_servers_have_no_bias():
    # v ≡ 1 (binomial counts) gives b ≡ 0 for any law
    p = D({0: 0.3, 2: 0.5, 5: 0.2})
    q = fluid.equilibrium(0.8, p)
    assert np.array_equal(finite_n.bias_first_order(p, q, 1000, np.ones_like(q)), np.zeros_like(q))
    assert finite_n.response_time_bias(0.8, p, q, 1000, np.ones_like(q)) == 0.0


def test_point_mass_by_hand():
    # δ_d: w = δ_d, s_i = d+1, local_i = C(d+1,2)(1-q_i)(v_i-1)/(n q_i)
    d, lam, n = 2, 0.9, 500
    q = fluid.equilibrium(lam, D.point(d))[:5]
    v = np.array([1.0, 2.0, 3.0, 0.5, 1.0])
    b = finite_n.bias_first_order(D.point(d), q, n, v)
    loc = [math.comb(d + 1, 2) * (1 - q[i]) * (v[i] - 1) / (n * q[i]) for i in range(5)]
    expect = [0.0, 0.0, loc[1], (d + 1) * loc[1] + loc[2], (d + 1) * ((d + 1) * loc[1] + loc[2]) + loc[3]]
    assert np.allclose(b, expect, rtol=1e-14, atol=0)
    R = finite_n.response_time_bias(lam, D.point(d), q, n, v)
    assert math.isclose(R, float(np.sum(np.abs(expect) * q) / lam), rel_tol=1e-14)


def test_isolated_vertices_only_is_linear():
    # p = δ_0: C(1, 2) = 0 and s_i = 1, so b ≡ 0 whatever v (random routing is linear)
    q = fluid.equilibrium(0.7, D.point(0))[:30]
    b = finite_n.bias_first_order(D.point(0), q, 50, np.full(q.size, 5.0))
    assert np.all(b == 0)


def test_zero_levels_end_the_recursion():
    q = np.array([1.0, 0.5, 0.1, 0.0, 0.0])
    b = finite_n.bias_first_order(D.point(2), q, 100, np.full(5, 2.0))
    assert b[3] != 0 and b[4] == 0


def test_variance_ratio_independent_queues():
    # empty graph: independent M/M/1 queues, so in stationarity N_i ~ Binomial(n, λ^i)
    # and v_i = 1.  The estimate is a time variance over T/τ ≈ 4000/20 effectively
    # independent samples per run, 4 runs: relative s.e. about sqrt(2/800) = 5%;
    # allow 0.15 (3 s.e.) at the three top levels.
    lam, n = 0.5, 400
    q = lam ** np.arange(6.0)
    rep = qlib.replicate(graphs.empty(n), lam, np.inf, replications=4, seed=3, t_end=4100,
                         burn_in=100, initial=q, record_dt=1.0, n_jobs=1)
    v = finite_n.variance_ratio(rep, q)
    assert v[0] == 1.0
    assert np.all(np.abs(v[1:4] - 1) < 0.15), v
    v1 = finite_n.variance_ratio(rep.results[0], q, burn_in=2000)
    assert v1.shape == q.shape and np.all(np.isfinite(v1))


def test_bad_inputs():
    p, q = D.point(2), np.array([1.0, 0.5, 0.2])
    with pytest.raises(TypeError, match="degrees"):
        finite_n.bias_first_order({2: 1.0}, q, 10, np.ones(3))
    with pytest.raises(ValueError, match="n must"):
        finite_n.bias_first_order(p, q, 0, np.ones(3))
    with pytest.raises(ValueError, match="n must"):
        finite_n.bias_first_order(p, q, 2.5, np.ones(3))
    with pytest.raises(ValueError, match="shape"):
        finite_n.bias_first_order(p, q, 10, np.ones(4))
    with pytest.raises(ValueError, match="v must"):
        finite_n.bias_first_order(p, q, 10, np.array([1.0, -1.0, 1.0]))
    with pytest.raises(ValueError, match=r"q\[0\]"):
        finite_n.bias_first_order(p, np.array([0.9, 0.5]), 10, np.ones(2))
    with pytest.raises(ValueError, match="non-increasing"):
        finite_n.bias_first_order(p, np.array([1.0, 0.2, 0.5]), 10, np.ones(3))
    with pytest.raises(ValueError, match=r"lam must be in \(0, 1\)"):
        finite_n.response_time_bias(float("nan"), p, q, 10, np.ones(3))
    with pytest.raises(TypeError, match="result"):
        finite_n.variance_ratio(object(), q)
    r = qlib.simulate(graphs.empty(10), 0.5, t_end=5.0, seed=1)
    with pytest.raises(ValueError, match="record_dt"):
        finite_n.variance_ratio(r, q)
