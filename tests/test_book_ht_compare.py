"""qbook.ht_compare: the alternatives of ht_alternatives side by side."""
import pytest
from qlib.halfin_whitt import stationary_jsq
from qbook.ht_compare import glue_slug, identity_gap, jsq_chain_row, pooled, random_routing


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
    from qbook.ht_compare import burn_in_halves, coupled_gaps
    r = simulate_jsq_d(16, 1.0, [16, 4], t_end=30.0, burn_in=5.0, replications=3, seed=1)
    g = coupled_gaps(r, ["JSQ", "d=4"], 16)
    assert set(g) == {"d=4"} and g["d=4"][1].mean >= -1e-9      # fewer choices: no fewer queues of two
    H = burn_in_halves(r)
    assert H.shape[0] == 3 and H.shape[2] == 4
    with pytest.raises(ValueError, match="names"):
        coupled_gaps(r, ["JSQ"], 16)
