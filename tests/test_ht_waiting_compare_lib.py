"""Unit tests of qlib.halfin_whitt.waiting (chapter ht_waiting)."""
import math

import numpy as np
import pytest

from qlib.halfin_whitt.waiting import intercept_model_bias, ratio_se, shrink, transient_cumulative_wait, wls


def test_wls_recovers_a_line_and_chi2():
    rng = np.random.default_rng(1)
    x = np.linspace(0, 1, 50)
    se = np.full(50, 0.1)
    y = 2 - 3 * x + rng.normal(0, 0.1, 50)
    coef, cov, chi2 = wls(np.column_stack([np.ones(50), x]), y, se)
    assert abs(coef[0] - 2) < 4 * math.sqrt(cov[0, 0]) and abs(coef[1] + 3) < 4 * math.sqrt(cov[1, 1])
    assert 20 < chi2 < 90                    # chi2 on 48 d.o.f.
    with pytest.raises(ValueError, match="se"):
        wls(np.column_stack([np.ones(3), x[:3]]), y[:3], [0.1, 0.0, 0.1])


def test_intercept_model_bias_is_zero_for_a_straight_line():
    n = np.array([100, 200, 400, 800, 1600.])
    b = intercept_model_bias(n, 1 + 0.5 * n**-0.5, np.array([0.1, 0.05, 0.02]), np.ones(3))
    assert abs(b) < 1e-10


def test_shrink_never_passes_the_target():
    assert shrink([0.5, 1.5], 1.0, 1.0).tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="allowance"):
        shrink(1.0, 0.0, -1.0)


def test_ratio_se_delta_method():
    rng = np.random.default_rng(2)
    den = rng.normal(10, 1, 400)
    num = 0.3 * den + rng.normal(0, 0.1, 400)
    r, se, df = ratio_se(num, den)
    assert abs(r - 0.3) < 4 * se and df == 399


def test_transient_cumulative_wait_matches_small_chain_bounds():
    r = transient_cumulative_wait(25, 1.0, (20, 0), 1.0, dt=0.1)
    assert r.mean[0] == 0 and np.all(np.diff(r.mean) >= 0) and r.times[-1] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="t_end"):
        transient_cumulative_wait(25, 1.0, (20, 0), 0.3, dt=0.2)
