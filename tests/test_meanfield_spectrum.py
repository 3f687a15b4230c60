"""Unit tests of qlib.meanfield.spectrum."""
import numpy as np
import pytest

from qlib import DegreeDistribution
from qlib.meanfield import fluid
from qlib.meanfield.spectrum import band_window_bound, decay_rates, slow_mode

MIX = DegreeDistribution.mixture([0.5, 0.5], [DegreeDistribution.point(0), DegreeDistribution.point(4)])


@pytest.mark.parametrize("law", [DegreeDistribution.point(1), DegreeDistribution.point(2), MIX])
def test_slow_mode_is_a_left_eigenvector(law):
    qs, gamma, w = slow_mode(0.8, law)
    J = fluid.jacobian(qs, 0.8, law)
    assert np.allclose(w @ J, -gamma * w, atol=1e-9 * np.abs(w).max())
    assert gamma == pytest.approx(fluid.relaxation_rate(0.8, law), rel=1e-9)


def test_decay_rates_match_dense_eigenvalues():
    law = DegreeDistribution.point(2)
    J = fluid.jacobian(fluid.equilibrium(0.8, law, tol=1e-12), 0.8, law)
    dense = np.sort(-np.linalg.eigvals(J).real)
    assert np.allclose(decay_rates(0.8, law), dense, rtol=1e-9)


def test_band_bound_holds_for_the_mixture_and_mm1():
    assert decay_rates(0.8, MIX)[0] <= band_window_bound(0.8, MIX)
    assert decay_rates(0.8, MIX)[1] <= band_window_bound(0.8, MIX, k=2)
    mm1 = DegreeDistribution.point(0)
    assert decay_rates(0.5, mm1)[0] <= band_window_bound(0.5, mm1) + 1e-12


def test_errors_name_the_parameter():
    with pytest.raises(ValueError, match="lam"):
        slow_mode(1.2, MIX)
    with pytest.raises(TypeError, match="degrees"):
        decay_rates(0.5, [0.5, 0.5])
    with pytest.raises(ValueError, match="k must"):
        band_window_bound(0.5, MIX, k=0)
