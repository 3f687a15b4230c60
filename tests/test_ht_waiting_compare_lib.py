"""Unit tests of qlib.halfin_whitt.waiting and qlib.halfin_whitt.compare (chapters ht_waiting, ht_alternatives)."""
import math

import numpy as np
import pytest

from qlib.halfin_whitt import stationary_jsq
from qlib.halfin_whitt.compare import glue_slug, identity_gap, jsq_chain_row, pooled, random_routing
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


def test_closed_forms():
    p, cw, w = pooled(100, 1.0)
    assert cw == pytest.approx(0.1) and w == pytest.approx(p * cw)
    assert random_routing(16, 2.0) == (0.5, 2.0, 1.0)
    with pytest.raises(ValueError, match="beta"):
        pooled(4, 3.0)
    assert glue_slug("JSQ(n^0.8)") == "JSQn0.8"


def test_jsq_chain_row_from_a_solve():
    n, b = 64, 1.0
    st = stationary_jsq(n, b)
    row = {"p_wait": st.p_wait, "mean_q2": st.mean_q2, "mean_wait": st.mean_wait,
           "err": {k: st.error_estimates[k] for k in ("p_wait", "mean_q2", "mean_wait")}}
    (p, cw, w), _ = jsq_chain_row(row, n, b)
    assert cw >= 1 and p == pytest.approx(st.p_wait, rel=1e-6) and w == pytest.approx(st.mean_wait)
    assert identity_gap(row, n, b) <= 1


def test_coupled_gaps_and_halves_shapes():
    from qlib.halfin_whitt import simulate_jsq_d
    from qlib.halfin_whitt.compare import burn_in_halves, coupled_gaps
    r = simulate_jsq_d(16, 1.0, [16, 4], t_end=30.0, burn_in=5.0, replications=3, seed=1)
    g = coupled_gaps(r, ["JSQ", "d=4"], 16)
    assert set(g) == {"d=4"} and g["d=4"][1].mean >= -1e-9      # fewer choices: no fewer queues of two
    H = burn_in_halves(r)
    assert H.shape[0] == 3 and H.shape[2] == 4
    with pytest.raises(ValueError, match="names"):
        coupled_gaps(r, ["JSQ"], 16)
