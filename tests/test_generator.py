"""qlib.halfin_whitt.generator: the expansion's gap and the martingale part."""
from types import SimpleNamespace

import numpy as np
import pytest

from qlib.halfin_whitt.generator import generator_gap, martingale_increments


@pytest.mark.parametrize("n", [100, 10_000])
@pytest.mark.parametrize("beta", [0.5, 2.0])
def test_gap_within_the_remainder_bounds(n, beta):
    gap, hB, hR1, h2C, rnd = generator_gap(n, beta)
    assert np.all(np.abs(gap) <= hB + rnd)
    assert np.all(np.abs(gap - hR1) <= h2C + rnd)


def test_gap_is_first_order():
    # the gap is h R_1 to first order: its ratio to max|h R_1| tends to one
    r = [np.abs(g).max() / np.abs(h1).max() for g, _, h1, _, _ in
         (generator_gap(n, 1.0) for n in (100, 10_000, 1_000_000))]
    assert abs(r[-1] - 1) < abs(r[0] - 1) and abs(r[-1] - 1) < 0.01


def test_martingale_increments_exact_on_a_deterministic_path():
    # X_1 = −β, X_2 = 0 held: the drift cancels, M stays 0
    beta, dt = 1.5, 0.01
    t = np.arange(0, 5 + dt / 2, dt)
    r = SimpleNamespace(x1=np.full(t.size, -beta), x2=np.zeros(t.size), x3=np.zeros(t.size))
    assert np.allclose(martingale_increments(r, beta, burn_in=0.0, dt=dt), 0)
    # X_1 + X_2 falling at rate β + X_1 = 1: M constant as well
    x1 = np.full(t.size, 1 - beta)
    r = SimpleNamespace(x1=x1, x2=-t, x3=np.zeros(t.size))
    assert np.allclose(martingale_increments(r, beta, burn_in=1.0, dt=dt), 0, atol=1e-9)


def test_martingale_increments_refuse_bad_input():
    r = SimpleNamespace(x1=np.zeros(500), x2=np.zeros(500), x3=np.r_[np.zeros(499), 1.0])
    with pytest.raises(ValueError, match="Q_3"):
        martingale_increments(r, 1.0, burn_in=0.0, dt=0.01)
    r = SimpleNamespace(x1=np.zeros(500), x2=np.zeros(500), x3=np.zeros(500))
    with pytest.raises(ValueError, match="dt"):
        martingale_increments(r, 1.0, burn_in=0.0, dt=0.3)
    with pytest.raises(ValueError, match="shorter"):
        martingale_increments(r, 1.0, burn_in=4.0, dt=0.01)
    with pytest.raises(ValueError, match="points"):
        generator_gap(100, 1.0, points=1)
    with pytest.raises((TypeError, ValueError), match="beta"):
        generator_gap(100, -1.0)
