"""Numerical checks of ``qlib.meanfield.expansion.refined`` and ``qlib.exact.occupancy_chain``
(fast: chains of at most a few thousand states)."""
import math

import numpy as np
import pytest

import qlib
from qlib import exact, graphs
from qlib.meanfield.expansion import refined

D = qlib.DegreeDistribution

#: V printed by rmftool's two-choice example (JSQ(2) with replacement,
#: rho = 0.9, K = 9), levels 2..6; an independent route (symbolic
#: differentiation) to the same coefficient.
RMFTOOL_V = [1.30637870e-01, 6.58607162e-01, 1.55203165e00, 1.40535234e00, 2.37444239e-01]


def test_matches_rmftool_published():
    r = refined(0.9, D.point(1), replacement=True)
    assert np.allclose(r.v[2:7], RMFTOOL_V, rtol=5e-9)
    # mean queue length at N = 10 printed by the same notebook (16 digits)
    assert 0.9 * r.at(10).response_time == pytest.approx(2.751294338309056, abs=1e-12)


@pytest.mark.parametrize("graph,lam", [(graphs.complete(3), 0.7), (graphs.ring(5), 0.8)])
def test_occupancy_chain_vs_position_chain(graph, lam):
    # two independent constructions of the same mu = inf chain
    K = 7
    a = exact.stationary(graph, lam, math.inf, K)
    b = exact.occupancy_chain(graph.n, lam, D.point(2), K)
    assert np.allclose(a.occupancy, b.occupancy, atol=1e-11)
    assert b.blocking_probability == pytest.approx(a.blocking_probability, rel=1e-8, abs=1e-14)


def test_occupancy_chain_mm1():
    # δ_0: independent M/M/1 queues truncated at K: q(i) = λ^i (1 − λ^{K−i+1}) / (1 − λ^{K+1})
    lam, K = 0.6, 12
    r = exact.occupancy_chain(3, lam, D.point(0), K)
    i = np.arange(K + 1)
    assert np.allclose(r.occupancy, lam**i * (1 - lam ** (K + 1 - i)) / (1 - lam ** (K + 1)), atol=1e-12)


@pytest.mark.parametrize("law", [D.point(2), D({0: 0.5, 2: 0.5})])
def test_exact_chain_converges_to_v(law):
    """y_n = n (E R_n − R*) = R_v + c/n + O(1/n²): the quadratic extrapolation
    over n = 3..6 agrees with R_v within its own error estimate (distance to
    the two-point linear extrapolation), and rejects the with-replacement R_v."""
    lam, ns = 0.7, np.arange(3, 7)
    ref = refined(lam, law)
    y = [n * (exact.occupancy_chain(int(n), lam, law, {3: 24, 4: 16, 5: 12, 6: 10}[n]).response_time
              - ref.response_time) for n in ns]
    quad = np.polyfit(1 / ns, y, 2)[-1]
    lin = np.polyfit(1 / ns[-2:], y[-2:], 1)[-1]
    tol = abs(quad - lin)
    assert abs(quad - ref.response_time_v) <= tol
    assert abs(quad - refined(lam, law, replacement=True).response_time_v) > tol


def test_truncation_converged():
    r = refined(0.95, D.poisson(2.0, 10))
    r2 = refined(0.95, D.poisson(2.0, 10), truncation=r.levels + 10)
    assert np.allclose(r2.v[: r.levels + 1], r.v, atol=1e-9)


def test_occupancy_chain_errors():
    with pytest.raises(ValueError, match="n must"):
        exact.occupancy_chain(2, 0.5, D.point(2), 3)     # needs n >= d + 1 distinct servers
    with pytest.raises(ValueError, match="lam"):
        exact.occupancy_chain(4, 1.0, D.point(2), 3)
    with pytest.raises(ValueError, match="truncation"):
        exact.occupancy_chain(4, 0.5, D.point(2), 0)
    with pytest.raises(ValueError, match="MAX_CHAIN_STATES"):
        exact.occupancy_chain(40, 0.5, D.point(2), 40)
    with pytest.raises(TypeError, match="degrees"):
        exact.occupancy_chain(4, 0.5, "two", 3)
