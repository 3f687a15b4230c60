"""Tests of qlib.tails.log_equilibrium (added for chapter tails)."""
import math

import numpy as np
import pytest

from qlib.meanfield import fluid, tails
from qlib.meanfield.degrees import DegreeDistribution as D


def test_point_mass_closed_form():
    # δ_d: log q*(i) = ((d+1)^i − 1)/d · log λ, against the 40-digit route and the closed form
    y = tails.log_equilibrium(0.9, D.point(2), 10)
    ref = tails.log_equilibrium(0.9, D.point(2), 10, digits=40)
    exact = (3.0 ** np.arange(11) - 1) / 2 * math.log(0.9)
    assert np.allclose(ref, exact, rtol=1e-15, atol=0)
    assert np.allclose(y, exact, rtol=1e-13, atol=0)


def test_matches_equilibrium():
    p = D({0: 0.5, 4: 0.5})
    q = fluid.equilibrium(0.9, p, tol=1e-100)
    y = tails.log_equilibrium(0.9, p, len(q) - 1)
    assert np.allclose(np.exp(y), q, rtol=1e-12, atol=0)


@pytest.mark.parametrize("kw", [dict(last_level=-1), dict(last_level=1.5), dict(last_level=3, digits=10)])
def test_errors(kw):
    with pytest.raises(ValueError):
        tails.log_equilibrium(0.9, D.point(2), **kw)
