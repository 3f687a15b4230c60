"""Tests of ``qlib.meanfield.refined (module qlib.meanfield.expansion)`` (refined mean-field expansion): interface and
input checks. The numerical checks are in ``tests/test_refined.py``."""
import math

import numpy as np
import pytest

import qlib
from qlib.meanfield import fluid
from qlib.meanfield.expansion import refined

D = qlib.DegreeDistribution


def test_fields_and_at():
    r = refined(0.8, D.point(2))
    q = fluid.equilibrium(0.8, D.point(2))
    m = min(q.size, r.q.size)
    assert np.allclose(r.q[:m], q[:m], rtol=1e-14, atol=1e-300)
    assert r.v.shape == r.q.shape and r.v[0] == 0.0
    assert r.response_time == pytest.approx(fluid.response_time(0.8, D.point(2)), rel=1e-12)
    assert r.response_time_v == pytest.approx(math.fsum(r.v) / 0.8, rel=1e-12)
    occ, R = r.at(50)
    assert np.allclose(occ, r.q + r.v / 50) and R == pytest.approx(r.response_time + r.response_time_v / 50)
    with pytest.raises(Exception):
        r.v = r.v          # frozen


def test_point_mass_zero_is_exact():
    # δ_0: independent M/M/1 queues, E q_n(i) = λ^i for every n, so v = 0
    r = refined(0.99, D.point(0))
    assert np.all(r.v == 0.0) and r.response_time_v == 0.0


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.2, 1.5, float("nan"), True, "0.5"])
def test_bad_lam(bad):
    with pytest.raises(ValueError, match="lam"):
        refined(bad, D.point(2))


def test_bad_inputs():
    with pytest.raises(ValueError, match="degrees"):
        refined(0.5, {2: 0.5})            # not a law
    with pytest.raises(ValueError, match="degrees"):
        refined(0.5, [0.5, -0.1, 0.6])
    with pytest.raises(TypeError, match="degrees"):
        refined(0.5, "δ_2")
    assert refined(0.5, {2: 1.0}).response_time_v == refined(0.5, D.point(2)).response_time_v
    with pytest.raises(TypeError, match="replacement"):
        refined(0.5, D.point(2), replacement="yes")
    for kw in ({"truncation": 1}, {"truncation": 2.5}, {"max_truncation": 0}, {"tol": 0.0}, {"tol": 2.0}):
        with pytest.raises(ValueError, match=next(iter(kw))):
            refined(0.5, D.point(2), **kw)
    r = refined(0.5, D.point(2))
    for n in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="n must"):
            r.at(n)


def test_max_truncation_reached():
    with pytest.raises(RuntimeError, match="max_truncation"):
        refined(0.99, D({0: 0.9, 2: 0.1}), max_truncation=20)
