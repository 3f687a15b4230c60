"""Tests of qlib.meanfield.fluid.jacobian_pivots (chapter equilibrium)."""
import math

import numpy as np
import pytest

from qlib import DegreeDistribution
from qlib.meanfield import fluid

LAWS = [DegreeDistribution.point(1), DegreeDistribution.point(2),
        DegreeDistribution.poisson(2.0, 10),
        DegreeDistribution.mixture([0.5, 0.5], [DegreeDistribution.point(0), DegreeDistribution.point(4)]),
        DegreeDistribution([0.2, 0.1, 0.3, 0.4])]


def _top(lam, p, tol):
    q = fluid.equilibrium(lam, p, tol=tol)
    return float(np.max(np.linalg.eigvals(fluid.jacobian(q, lam, p)).real))


@pytest.mark.parametrize("p", LAWS)
@pytest.mark.parametrize("lam", [0.3, 0.8, 0.95])
def test_sylvester_matches_dense_eigenvalues(p, lam):
    top = _top(lam, p, 1e-12)
    assert np.all(fluid.jacobian_pivots(lam, p, top + 1e-6) > 0)
    assert not np.all(fluid.jacobian_pivots(lam, p, top - 1e-6) > 0)


@pytest.mark.parametrize("p", LAWS)
def test_collatz_wielandt_encloses_the_gap(p):
    gamma = fluid.relaxation_rate(0.8, p)
    piv = fluid.jacobian_pivots(0.8, p, -gamma)
    assert np.all(piv[1:] > 0) and abs(piv[0]) < 1e-12
    # a shift away from the eigenvalue gives a first pivot of the size of the shift
    assert fluid.jacobian_pivots(0.8, p, -gamma + 1e-3)[0] > 0
    assert math.isclose(-_top(0.8, p, 1e-12), gamma, rel_tol=1e-9)


def test_point_mass_matches_hand_computed_pivots():
    lam, p = 0.5, DegreeDistribution.point(1)          # g'(x) = 2x, q* = 1, 1/2, 1/8, ...
    q = fluid.equilibrium(lam, p, tol=1e-3)
    c = lam * 2 * q[1:]
    want = [0.0] * c.size
    want[-1] = 0.3 + 1 + c[-1]
    for i in range(c.size - 2, -1, -1):
        want[i] = 0.3 + 1 + c[i] - c[i] / want[i + 1]
    np.testing.assert_allclose(fluid.jacobian_pivots(lam, p, 0.3, tol=1e-3), want, rtol=1e-15)


def test_validation():
    p = DegreeDistribution.point(1)
    with pytest.raises(ValueError, match="lam"):
        fluid.jacobian_pivots(1.2, p, 0.0)
    with pytest.raises(ValueError, match="shift"):
        fluid.jacobian_pivots(0.5, p, float("nan"))
    with pytest.raises(ValueError, match="tol"):
        fluid.jacobian_pivots(0.5, DegreeDistribution.point(2), 0.0, tol=1e-300)  # q* underflows to 0
    for bad in ("abc", 3, None):
        with pytest.raises(TypeError, match="degrees"):
            fluid.jacobian_pivots(0.5, bad, 0.0)
