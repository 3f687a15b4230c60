"""qlib.meanfield.saturation: the Mellin asymptotics of R* as λ → 1."""
import math

import mpmath
import numpy as np
import pytest

from qlib.meanfield import DegreeDistribution, fluid, saturation


@pytest.mark.parametrize("d", [1, 2, 3, 5])
def test_closed_form_sum_equals_recursion(d):
    for lam in (0.5, 0.9, 0.999):
        eta = -mpmath.log(mpmath.mpf(lam))
        assert abs(float(saturation.exact_point_mass(eta, d))
                   - fluid.response_time(lam, DegreeDistribution.point(d))) < 1e-11


@pytest.mark.parametrize("d", [1, 2, 3])
def test_asymptote_error_is_first_order(d):
    # R* − A = (η/d)((d+1)A + 1 + 1/d) + o(η): the ratio tends to 1
    for k in (6, 8):
        eta = 10.0 ** -k
        A = saturation.asymptote(eta, d)
        gap = float(saturation.exact_point_mass(mpmath.mpf(10) ** -k, d)) - A
        assert abs(gap / (eta / d * ((d + 1) * A + 1 + 1 / d)) - 1) < 1e-3


def test_period_mean_is_the_constant_for_point_masses():
    for d in (1, 2, 3):
        c, h = saturation.period_mean(DegreeDistribution.point(d), 1e-9, m=24)
        assert abs(c - saturation.point_mass_constant(d)) < 1e-6
        assert abs(h / saturation.oscillation_amplitude(d) - 1) < 0.05


def test_oscillation_has_mean_zero_and_period_one():
    u = np.linspace(0, 1, 200, endpoint=False)
    P = saturation.oscillation(3, u)
    assert abs(P.mean()) < 1e-12
    assert np.allclose(saturation.oscillation(3, u + 1), P, atol=1e-12)


def test_bad_input():
    with pytest.raises(ValueError, match="d must be"):
        saturation.point_mass_constant(0)
    with pytest.raises(TypeError, match="d must be"):
        saturation.point_mass_constant(2.0)
    with pytest.raises(ValueError, match="lam must be"):
        saturation.remainder(1.0, DegreeDistribution.point(2))
    with pytest.raises(TypeError, match="degrees must be"):
        saturation.remainder(0.9, 2)
    with pytest.raises(ValueError, match="eta must be"):
        saturation.asymptote(0.0, 2)
    with pytest.raises(ValueError, match="eta0 must be"):
        saturation.period_mean(DegreeDistribution.point(2), 2.0)
    with pytest.raises(ValueError, match="eta must be"):
        saturation.exact_point_mass(-1, 2)
