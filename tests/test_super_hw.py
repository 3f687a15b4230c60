"""Quick tests of qbook.super_hw (the super-Halfin–Whitt chapter's helpers)."""
import math

import numpy as np
import pytest

from qbook import super_hw as H
from qlib.halfin_whitt import stationary_jsq


def test_effective_beta_and_limits():
    assert H.effective_beta(10_000, 0.75, 1.0) == pytest.approx(0.1)
    assert H.gamma_limits(0.5) == {"mean_s": 4.0, "var_s": 8.0, "mean_q2": 4.0, "pwait": 4.0}
    with pytest.raises(ValueError, match="alpha"):
        H.effective_beta(100, 0.5, 1.0)
    with pytest.raises(ValueError, match="beta"):
        H.gamma_limits(0.0)


def test_scaled_matches_the_law():
    """The variance from Var X_1, Var X_2, Cov equals the one from the kept law."""
    n, alpha, beta = 2000, 0.6, 2.0
    st = stationary_jsq(n, beta * n ** (0.5 - alpha))
    assert st.mean_q3 == 0 and st.pi is not None
    keys = ("mean_tasks", "mean_q2", "mean_q3", "p_wait", "var_x1", "var_x2", "cov_x1x2")
    row = {k: float(getattr(st, k)) for k in keys} | {"err": {}}
    tasks = st.states.sum(axis=1).astype(float)
    direct = float(st.pi @ (tasks - st.mean_tasks) ** 2) / n ** (2 * alpha)
    assert H.scaled(row, n, alpha)["var_s"] == pytest.approx(direct, rel=1e-9)
    assert H.scaled(row | {"var_tasks": direct * n ** (2 * alpha)}, n, alpha)["var_s"] == pytest.approx(direct)


def test_fit_rate_recovers_a_power():
    ns = np.array([1e3, 1e4, 1e5, 1e6])
    f = H.fit_rate(ns, -0.7 * ns ** -0.25)
    assert f.p == pytest.approx(0.25) and f.amplitude == pytest.approx(0.7) and f.p_err < 1e-12
    bent = H.fit_rate(ns, 0.7 * ns ** -0.25 + 5 * ns ** -0.5)
    assert bent.p_err > 0.01                       # a drifting exponent shows in the error
    with pytest.raises(ValueError):
        H.fit_rate([10.0], [0.1])


def test_law_distance_zero_for_gamma():
    x = np.linspace(0, 12, 241)
    row = {"cdf_x": x.tolist(), "cdf_q2": (1 - np.exp(-x) * (1 + x)).tolist()}
    assert H.law_distance(row, 1.0) < 1e-15
    assert H.law_distance(row, 2.0) > 0.1


def test_alpha_summary_says_what_is_missing():
    import pandas as pd
    assert "reached no n" in H.alpha_summary({}, {}, 0.75)
    df = pd.DataFrame({"gap_mean_q2": [-0.5, -0.4, -0.3]}, index=[1000, 10_000, 100_000])
    fits = {(0.75, 1.0, "mean_q2"): H.fit_rate(df.index, df["gap_mean_q2"])}
    text = H.alpha_summary({(0.75, 1.0): df}, fits, 0.75)
    assert "100,000" in text and "30%" in text and "a − ½ = 0.25" in text


def test_sectors_at_a_tiny_corner():
    # a = 0.6, beta = 2, n = 1000: the one-sector solve's blocked flux 6.6e-13 is just above
    # tol/2, so the sectors are entered (they once returned NaN here); the answer must stay
    # finite, keep rate balance and agree with the one-sector solve within its error estimate
    n = 1000
    st = stationary_jsq(n, 2.0 * n ** -0.1)
    one = stationary_jsq(n, 2.0 * n ** -0.1, tol=1e-10)
    assert st.rounds > 1 and one.rounds == 1
    assert math.isfinite(st.mean_tasks) and abs(st.balance_gap) < 1e-6
    assert abs(st.mean_tasks - one.mean_tasks) <= one.error_estimates["mean_tasks"]


def test_resolve_small_uses_the_stored_tol():
    n, beta_eff = 1000, 2.0 * 1000 ** -0.1
    st = stationary_jsq(n, beta_eff, tol=1e-10, fallback=False)
    row = {"mean_tasks": float(st.mean_tasks), "beta_eff": beta_eff, "tol": 1e-10,
           "err": {"mean_tasks": float(st.error_estimates["mean_tasks"])}}
    assert H.resolve_small({"0.6/2.0/1000": row}, 1000) <= 1.0
    bad = row | {"mean_tasks": row["mean_tasks"] + 1.0}
    assert H.resolve_small({"0.6/2.0/1000": bad}, 1000) > 1.0


def test_reach_names_what_limits_a_row():
    msg = ("tol 1e-12: stationary_jsq(n = 10) needs 3e+13 states, about 14 GB and 5e+06 s of CPU "
           "(100001 Q_3 sectors of up to 2e+08 states predicted): above max_states = 2e+10; raise it")
    chain = {"0.75/1.0/10": {"error": "ValueError: " + msg},
             "0.75/2.0/10": {"mean_tasks": 1.0, "tol": 1e-10, "refused": [msg]},
             "0.75/2.0/20": {"mean_tasks": 1.0, "tol": 1e-12, "refused": []}}
    df = H.reach(chain, (0.75,), (1.0, 2.0), (10, 20))
    got = {(r.β, r.n): (r.stored, r.why) for r in df.itertuples()}
    assert got[1.0, 10] == ("refused", "tol 1e-12: 100001 Q₃ sectors, 3e+13 states, 5e+06 s of CPU "
                                       "predicted (above max_states)")
    assert got[2.0, 10][0] == "tol 1e-10" and got[1.0, 20] == ("not run", "")
    assert (2.0, 20) not in got


def test_sim_compare_t_statistic():
    rows = [{"s": v} for v in (0.8, 1.0, 1.2, 1.0)]
    sim = {"0.75/2.0/1000": {"window_units": 8.0, "rows": rows}}
    s = 1000 ** 0.75
    chain = {"0.75/2.0/1000": {"mean_tasks": 1000 + 0.9 * s, "mean_q2": 1.0, "mean_q3": 0.0,
                               "p_wait": 0.1, "var_x1": 0, "var_x2": 0, "cov_x1x2": 0}}
    r = H.sim_compare(sim, chain).loc[1000]
    se = np.std([0.8, 1.0, 1.2, 1.0], ddof=1) / 2
    assert r["mean"] == pytest.approx(1.0) and r["se"] == pytest.approx(se)
    assert r["t"] == pytest.approx(0.1 / se) and r["reps"] == 4
