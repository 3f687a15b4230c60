"""qbook.ht_paths: the mechanics of the ht_paths chapter."""
import numpy as np
import pytest
from qlib.stats import simultaneous
from qbook import ht_paths as P


def test_overloaded_start():
    assert P.overloaded_start(100) == [100, 20, 10]
    assert P.overloaded_start(1000) == [1000, 64, 32]
    with pytest.raises(ValueError, match="n"):
        P.overloaded_start(0)


def test_limit_richardson_combines_two_runs():
    rng = np.random.default_rng(0)
    fine = {"x1": rng.normal(1.0, 1.0, (400, 5)), "x2": rng.normal(2.0, 0.5, (400, 5)), "dt": 0.01}
    coarse = {"x1": rng.normal(1.2, 1.0, (300, 5)), "x2": rng.normal(2.1, 0.5, (300, 5)), "dt": 0.02}
    r = P.limit_richardson(fine, coarse)
    for k in ("x1", "x2"):
        assert np.allclose(r.mean[k], 2 * fine[k].mean(0) - coarse[k].mean(0))
        v = 4 * fine[k].var(0, ddof=1) / 400 + coarse[k].var(0, ddof=1) / 300
        assert np.allclose(r.se[k], np.sqrt(v))
        assert np.all((r.df[k] >= 299) & (r.df[k] <= 698))
        assert np.allclose(r.step[k], fine[k].mean(0) - coarse[k].mean(0))
    with pytest.raises(ValueError, match="dt"):
        P.limit_richardson(fine, dict(coarse, dt=0.03))


def test_richardson_removes_the_first_order_step_bias_of_the_scheme():
    # the interior means of the scheme follow m' = m + dt(−β − m) (see
    # test_forcing_mean_far_from_the_boundary); the plain bias is O(dt), the
    # extrapolated one O(dt²): halving dt quarters it
    t = np.arange(1, 11) * 1.0
    plain = lambda dt: np.abs(-1 + (-999) * (1 - dt) ** np.round(t / dt) - (-1 - 999 * np.exp(-t))).max()
    r1 = np.abs(P.interior_richardson_bias((-1000.0, 0.0), 1.0, 1e-3, t)).max()
    r2 = np.abs(P.interior_richardson_bias((-1000.0, 0.0), 1.0, 5e-4, t)).max()
    assert r1 < 0.01 * plain(1e-3)
    assert 3.5 < r1 / r2 < 4.5
    # and the scheme itself: far below 0 the limit means agree with the recursion
    L = P.limit_means(1.0, (-30.0, 0.0), 200, 1e-2, 1.0, 5, record_dt=0.5)
    m = -1 - 29 * np.exp(-np.array([0.0, 0.5, 1.0]))
    assert np.all(np.abs(L.mean["x1"] - m) <= 4 * L.se["x1"] + 1e-3)


def test_shrink_and_grid_index():
    assert np.allclose(P.shrink(np.array([-3.0, -0.5, 0.2, 2.0]), 1.0), [-2.0, 0.0, 0.0, 1.0])
    times = np.arange(41) * 0.25
    assert np.array_equal(P.grid_index(times, [0.0, 1.0, 10.0]), [0, 4, 40])
    with pytest.raises(ValueError, match="grid"):
        P.grid_index(times, [0.1])


def _fake_runs(rng, reps, times, mean1, mean2, sd=1.0):
    return {"x1": rng.normal(mean1, sd, (reps, times.size)), "x2": rng.normal(mean2, sd, (reps, times.size)),
            "times": times, "reps": reps}


def test_exact_comparison_detects_a_shift():
    rng = np.random.default_rng(1)
    times = np.arange(11) * 1.0
    ex = P.exact_means({"times": [2.0, 4.0], "mean_x1": [-1.0, -1.0], "mean_x2": [0.5, 0.5],
                        "error": [1e-3, 1e-3]})
    ok = simultaneous(*P.exact_comparison({(10, "a"): ex}, {(10, "a"): _fake_runs(rng, 400, times, -1.0, 0.5)})[:3],
                      level=0.99)
    bad = simultaneous(*P.exact_comparison({(10, "a"): ex}, {(10, "a"): _fake_runs(rng, 400, times, -0.7, 0.5)})[:3],
                       level=0.99)
    assert ok.passed and not bad.passed
    d, se, df, err = P.exact_comparison({(10, "a"): ex}, {(10, "a"): _fake_runs(rng, 400, times, -1.0, 0.5)})
    assert d.size == 4 and np.all(df == 150) and np.all(err == 1e-3)


def test_bias_bound_and_limit_comparison():
    rng = np.random.default_rng(2)
    lim = P.LimitMeans(mean={"x1": np.full(25, -1.0), "x2": np.full(25, 0.5)},
                       se={"x1": np.full(25, 0.01), "x2": np.full(25, 0.01)},
                       df={"x1": np.full(25, 500.0), "x2": np.full(25, 500.0)}, step={})
    ex = P.exact_means({"times": [1.0, 2.0], "mean_x1": [-0.9, -0.95], "mean_x2": [0.5, 0.5],
                        "error": [0.0, 0.0]})
    bhat, up = P.bias_bound(ex, lim, "x1")
    assert np.allclose(bhat, [0.1, 0.05]) and np.all(up > np.abs(bhat)) and np.all(up < np.abs(bhat) + 0.03)
    times = np.arange(25) * 0.25
    runs = _fake_runs(rng, 400, times, -0.8, 0.5, sd=0.5)
    tt = np.array([1.0, 2.0, 3.0])
    no_allow = simultaneous(*P.limit_comparison(runs, lim, tt, {"x1": 0.0, "x2": 0.0}), level=0.99)
    allowed = simultaneous(*P.limit_comparison(runs, lim, tt, {"x1": 0.25, "x2": 0.0}), level=0.99)
    assert not no_allow.passed and allowed.passed


def test_mminf_phase():
    n, beta, reps = 400, 1.0, 300
    times = np.arange(41) * 0.25
    lam = n - beta * 20
    rng = np.random.default_rng(3)
    q1 = rng.poisson(lam * (1 - np.exp(-times)), (reps, times.size))
    runs = {"x1": (q1 - n) / 20, "x2": np.zeros((reps, times.size)), "times": times, "reps": reps}
    est, se, tgt = P.mminf_phase(runs, n, beta)
    assert est.size > 0 and simultaneous(est, se, np.inf, tgt, level=0.99).passed
    runs["x1"] = runs["x1"] + 0.3          # twice the detectable deviation
    est, se, tgt = P.mminf_phase(runs, n, beta)
    assert not simultaneous(est, se, np.inf, tgt, level=0.99).passed
    runs["x2"][0, 1] = 0.1
    with pytest.raises(RuntimeError, match="boundary"):
        P.mminf_phase(runs, n, beta)


def _death_runs(rng, n, reps, rate):
    m = P.overloaded_start(n)[2]
    life = rng.exponential(1 / rate, (reps, m))
    times = np.round(np.arange(0, 14.0 + 1e-9, 0.01), 10)
    q3 = (life[:, :, None] > times[None, None, :]).sum(1)
    return {"x1": np.zeros_like(q3, float), "x2": np.zeros_like(q3, float), "x3": q3 / np.sqrt(n),
            "times": times, "t0": life.max(1), "reps": reps}


def test_drain_checks_accept_the_death_process_and_reject_a_faster_one():
    rng = np.random.default_rng(4)
    fams = []
    for rate in (1.0, 1.3):
        est, se, tgt = [], [], []
        for n in (100, 400, 2500):
            e, s, t, row = P.drain_checks(_death_runs(rng, n, 400, rate), n, 0.1)
            est += e; se += s; tgt += t
            assert row[5] <= row[6] and row[0] == n
        fams.append(simultaneous(est, se, np.inf, tgt, level=0.99))
    assert fams[0].passed and not fams[1].passed
    bad = _death_runs(rng, 100, 50, 1.0)
    bad["x2"][0, 0] = 10.0
    with pytest.raises(RuntimeError, match="Q_2"):
        P.drain_checks(bad, 100)


def test_time_slope_in_log_n_and_harmonic():
    # the chapter fits a time T against log n with qlib.stats.loglog_slope on e^T
    # (log e^T = T, s.e. of log e^T = se): the weighted line of T on log n
    from qlib.stats import loglog_slope
    x = np.array([1.0, 2.0, 3.0, 4.0])
    y = 0.5 + 2.0 * x + np.array([0.1, -0.1, 0.05, -0.02])
    se = np.array([0.1, 0.2, 0.1, 0.3])
    fit = loglog_slope(np.exp(x), np.exp(y), np.exp(y) * se)
    assert abs(fit.slope - np.polyfit(x, y, 1, w=1 / se)[0]) < 1e-10
    A = np.column_stack([np.ones_like(x), x]) / se[:, None]
    assert abs(fit.slope_se - np.sqrt(np.linalg.inv(A.T @ A)[1, 1])) < 1e-12
    assert P.harmonic(1) == 1.0 and abs(P.harmonic(4) - 25 / 12) < 1e-14
