"""qlib.stats: coverage of the intervals on processes whose mean is known.

The coverage tests use fixed seeds, so they are deterministic; the accepted
band [0.93, 0.97] is the issue's, about ±2 binomial s.e. at 400 runs and ±3
at 1000.
"""
import math

import numba
import numpy as np
import pytest
from scipy.signal import lfilter

from qlib import stats


def ar1_paths(phi, n, runs, seed):
    """Stationary AR(1) paths with unit variance, one per row."""
    rng = np.random.default_rng(seed)
    e = rng.normal(size=(runs, n)) * math.sqrt(1 - phi ** 2)
    x0 = rng.normal(size=runs)
    zi = (phi * x0)[:, None]
    return lfilter([1.0], [1.0, -phi], e, axis=1, zi=zi)[0]


@numba.njit(cache=True)
def mm1_path(rho, t_end, dt, seed):
    """M/M/1 queue length (μ = 1) sampled every dt, started in stationarity."""
    np.random.seed(seed)
    x = 0
    while np.random.random() < rho:
        x += 1
    n = int(t_end / dt)
    out = np.empty(n)
    t, k, t_next = 0.0, 0, 0.0
    while k < n:
        rate = rho + (1.0 if x > 0 else 0.0)
        h = np.random.exponential(1.0 / rate)
        while k < n and t_next < t + h:
            out[k] = x
            k += 1
            t_next += dt
        t += h
        if np.random.random() * rate < rho:
            x += 1
        else:
            x -= 1
    return out


def test_iat_of_ar1():
    for phi in (0.5, 0.9):
        x = ar1_paths(phi, 200_000, 1, 3)[0]
        true = (1 + phi) / (2 * (1 - phi))
        assert abs(stats.iat(x) - true) < 0.1 * true
        assert abs(stats.iat(x, method="sokal") - true) < 0.1 * true
    assert stats.iat(np.ones(100)) == 0.5


@pytest.mark.parametrize("phi, n", [(0.9, 4000), (0.99, 40_000)])
def test_batch_means_coverage_ar1(phi, n):
    paths = ar1_paths(phi, n, 1000, 11)
    cover = [stats.batch_means(x, check=False).covers(0.0) for x in paths]
    assert 0.93 <= np.mean(cover) <= 0.97, np.mean(cover)


def test_batch_means_coverage_mm1():
    rho, mean = 0.9, 0.9 / 0.1
    cover = []
    for s in range(400):
        bm = stats.batch_means(mm1_path(rho, 240_000.0, 2.0, 1000 + s), 2.0, check=False)
        cover.append(bm.covers(mean))
    assert 0.93 <= np.mean(cover) <= 0.97, np.mean(cover)


def test_batch_means_raises_when_short_warns_when_correlated():
    x = ar1_paths(0.99, 2000, 1, 5)[0]        # 20 τ_int: far too short
    with pytest.raises(ValueError, match="too short"):
        stats.batch_means(x)
    # a forced batch length far below τ_int leaves correlated batch means:
    # a warning, not an exception, and reliable is False
    y = ar1_paths(0.999, 20_000, 1, 6)[0]
    with pytest.warns(RuntimeWarning, match="still correlated"):
        bm = stats.batch_means(y, tau=5.0)
    assert not bm.reliable and bm.lag1 > bm.lag1_critical
    # the lag-1 level is family-wise: m columns share alpha (Bonferroni)
    z = ar1_paths(0.5, 20_000, 3, 7).T
    bm3 = stats.batch_means(z)
    assert bm3.lag1_critical == pytest.approx(stats.lag1_threshold(bm3.n_batches, 0.01 / 3))
    assert bm3.reliable


def test_slice_batches_rules():
    rng = np.random.default_rng(12)
    s = ar1_paths(0.9, 4000, 2, 13).T               # 4000 slices, τ_int ≈ 9.5 slices
    with pytest.warns(RuntimeWarning, match="standard errors unreliable"):
        sb = stats.slice_batches(s, 4000.0)        # 4000 < 10 · 80 τ: too short for the flag
    bm = stats.batch_means(s, 1.0, check=False)
    assert sb.corr_length == bm.length and sb.tau == pytest.approx(float(np.max(bm.tau)))
    assert sb.required_batch_length == pytest.approx(max(20 * sb.corr_length, 80 * sb.tau))
    assert sb.n_batches == 10 and not sb.reliable
    np.testing.assert_allclose(sb.means(s), s[4000 - sb.n_batches * sb.per:].reshape(
        sb.n_batches, sb.per, 2).mean(axis=1))
    assert sb.lag1 == pytest.approx(float(np.max(stats.batch._lag1(sb.means(s)))))
    # a constant column is neither measured nor tested
    with pytest.warns(RuntimeWarning, match="standard errors unreliable"):
        sc = stats.slice_batches(np.column_stack([s, np.ones(4000)]), 4000.0)
    assert sc.n_batches == sb.n_batches and sc.lag1_critical == sb.lag1_critical
    # a short window warns (never raises) and is flagged
    with pytest.warns(RuntimeWarning, match="standard errors unreliable"):
        short = stats.slice_batches(ar1_paths(0.999, 4000, 1, 14).T, 4000.0)
    assert not short.reliable and short.n_batches == 10
    fixed = stats.slice_batches(rng.normal(size=(20, 2)), 5.0, batches=20)
    assert fixed.n_batches == 20 and fixed.reliable and math.isnan(fixed.corr_length)
    with pytest.raises(ValueError, match="batches"):
        stats.slice_batches(s, 1.0, batches=1)


def test_batch_means_columns_share_batches():
    x = ar1_paths(0.5, 20_000, 2, 8).T
    bm = stats.batch_means(x)
    assert np.shape(bm.mean) == (2,) and bm.n_batches >= 10


def test_replication_ci_uses_t():
    ci = stats.replication_ci([1.0, 2.0, 3.0, 4.0])
    assert ci.df == 3
    assert ci.half_width == pytest.approx(3.182446 * np.std([1, 2, 3, 4], ddof=1) / 2, rel=1e-6)
    # coverage over 4 normal replications: t covers 95 %, z would cover ~88 %
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4000, 4))
    cover = np.mean([stats.replication_ci(r).covers(0.0) for r in x])
    assert 0.94 <= cover <= 0.96


def test_detectable_normal_and_t():
    assert stats.detectable(1.0) == pytest.approx(1.95996 + 0.84162, abs=2e-3)
    assert stats.detectable(1.0, df=3) > stats.detectable(1.0, df=30) > stats.detectable(1.0)
    assert stats.detectable(1.0, m=10) > stats.detectable(1.0)
    # large df: close to the normal value, and no hang (quad over the χ² bulk)
    for df in (200, 1000, 10_000):
        assert stats.detectable(1.0, df=df) == pytest.approx(stats.detectable(1.0), rel=0.01)


def test_simultaneous_power_and_level():
    rng = np.random.default_rng(2)
    # under the null, the family-wise error rate is at most 1 - level
    fails = 0
    for _ in range(400):
        x = rng.normal(size=(5, 8))
        ci = stats.replication_ci(x)
        fails += not stats.simultaneous(ci.mean, ci.se, ci.df, level=0.9).passed
    assert fails / 400 <= 0.1 + 3 * math.sqrt(0.09 / 400)
    # a deviation of twice the detectable one is rejected
    fam = stats.simultaneous([0.0, 0.0, 1.0], [0.1, 0.1, 0.1], df=20, level=0.99)
    assert not fam.passed and fam.reject.tolist() == [False, False, True]
    assert 2 * fam.detectable[2] < 1.0 + 1e-12 or fam.reject[2]
    assert "REJECTED" in fam.report()
    assert stats.simultaneous([0.05], [0.1], method="bonferroni").passed


def test_loglog_slope_recovers_rate():
    x = np.array([100, 200, 400, 800, 1600.0])
    rng = np.random.default_rng(4)
    se = 0.01 * x ** -0.5
    y = 3 * x ** -0.5 + rng.normal(size=5) * se
    fit = stats.loglog_slope(x, y, se)
    assert abs(fit.slope + 0.5) < 4 * fit.slope_se and fit.slope_se < 0.01
    fixed = stats.loglog_slope(x, y, se, slope=-0.5)
    assert abs(math.exp(fixed.intercept) - 3) < 0.01 and fixed.dof == 4


def test_burn_in_check_detects_a_trend():
    rng = np.random.default_rng(7)
    t = np.arange(4000)
    reps = rng.normal(size=(8, 4000))
    assert stats.burn_in_check(reps, replications=True).passed
    assert not stats.burn_in_check(reps + 2 * np.exp(-t / 800), replications=True).passed
    x = ar1_paths(0.5, 40_000, 1, 9)[0]
    assert stats.burn_in_check(x).passed
    assert not stats.burn_in_check(x + 3 * np.exp(-np.arange(40_000) / 10_000)).passed


def test_critical_value_is_bonferroni_t():
    assert stats.critical_value(1, np.inf) == pytest.approx(1.959964, abs=1e-6)
    assert stats.critical_value(18, 9) == pytest.approx(float(stats.t_quantile(1 - 0.05 / 36, 9)))
    fam = stats.simultaneous(np.zeros(6), np.ones(6), 7)
    assert stats.critical_value(6, 7) == pytest.approx(fam.crit[0])


def test_replications_needed_is_the_smallest_that_detects():
    for sd, delta, m in ((1.0, 1.0, 1), (2.0, 0.5, 9), (0.3, 0.1, 36)):
        r = stats.replications_needed(sd, delta, m=m)
        assert stats.detectable(sd / math.sqrt(r), r - 1, m) <= delta
        assert stats.detectable(sd / math.sqrt(r - 1), r - 2, m) > delta
    # r_pilot: the pilot's s.e. times sqrt(r_pilot) is the per-replication s.d.
    assert stats.replications_needed(0.5, 0.4, r_pilot=16) == stats.replications_needed(2.0, 0.4)
    # the hardest check of an array decides
    assert stats.replications_needed([1.0, 3.0], 1.0) == stats.replications_needed(3.0, 1.0)
    # its power is what it claims: at delta, a t test over r normal replications
    # rejects in >= 80 % of the runs (1000 runs: ±3 s.e. = ±0.04)
    r = stats.replications_needed(1.0, 1.0, m=4)
    rng = np.random.default_rng(3)
    x = rng.normal(1.0, 1.0, size=(1000, r))
    rej = np.abs(x.mean(1) / (x.std(1, ddof=1) / math.sqrt(r))) > stats.critical_value(4, r - 1)
    assert abs(rej.mean() - 0.8) < 0.04, rej.mean()
    with pytest.raises(ValueError, match="r_max"):
        stats.replications_needed(100.0, 0.01, r_max=50)


def test_equivalence_tost_size_and_power():
    e = stats.equivalence(0.1, 0.2, 19, 0.5)
    assert e.equivalent and e.upper == pytest.approx(0.1 + 1.729133 * 0.2, abs=1e-6)
    assert "equivalent" in repr(e) and e.passed
    # size: at |θ| = margin it declares equivalence in at most α of the runs
    rng = np.random.default_rng(5)
    x = rng.normal(0.5, 1.0, size=(10, 1000))
    ci = stats.replication_ci(x)
    one = [stats.equivalence(mu, s, 9, 0.5).equivalent for mu, s in zip(ci.mean, ci.se)]
    assert np.mean(one) <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 1000)
    # power: at θ = 0 with margin = resolvable it shows equivalence in about 80 %
    res = stats.equivalence(0.0, 1.0 / math.sqrt(10), 9, 1.0).resolvable
    y = rng.normal(0.0, 1.0, size=(2000, 10))
    ok = [stats.equivalence(v.mean(), v.std(ddof=1) / math.sqrt(10), 9, res).equivalent for v in y]
    assert abs(np.mean(ok) - 0.8) < 0.04, np.mean(ok)
    # a family: per-check verdicts, Bonferroni critical value
    f = stats.equivalence([0.0, 0.45], [0.1, 0.1], 19, 0.5)
    assert f.equivalent.tolist() == [True, False] and not f.passed
    assert f.crit[0] == pytest.approx(float(stats.t_quantile(1 - 0.025, 19)))


def test_equivalence_intersection_union_controls_the_global_claim():
    # two checks, one exactly at its margin: "both equivalent" is a false
    # claim, and the IUT (each check at α, no correction) makes it in <= α
    rng = np.random.default_rng(8)
    x = rng.normal(size=(2000, 2, 10)) + np.array([0.5, 0.0])[None, :, None]
    mean, se = x.mean(axis=2), x.std(axis=2, ddof=1) / math.sqrt(10)
    both = [stats.equivalence(mu, s, 9, 0.5, method="iut").passed for mu, s in zip(mean, se)]
    assert np.mean(both) <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 2000), np.mean(both)
    # and it resolves smaller margins than Bonferroni over the same checks
    e_iut = stats.equivalence([0.0, 0.0], [1.0, 1.0], 9, 5.0, method="iut")
    e_bon = stats.equivalence([0.0, 0.0], [1.0, 1.0], 9, 5.0)
    assert np.all(e_iut.resolvable < e_bon.resolvable) and e_iut.crit[0] == pytest.approx(1.833113, abs=1e-5)
    assert "intersection-union" in e_iut.report()


def test_burn_in_check_as_equivalence():
    rng = np.random.default_rng(7)
    t = np.arange(4000)
    reps = rng.normal(size=(40, 4000))
    plain = stats.burn_in_check(reps, replications=True)
    b = stats.burn_in_check(reps, replications=True, margin=0.2)
    assert b.passed and b.equivalent and b.margin == 0.2
    assert (b.diff, b.se, b.crit, b.t) == (plain.diff, plain.se, plain.crit, plain.t)
    # a trend of 0.3 in the first half fails the equivalence test at margin 0.2...
    trend = reps + 0.3 * (t < 2000)
    assert not stats.burn_in_check(trend, replications=True, margin=0.2).passed
    # ...and noise alone fails it too: a noisy run cannot show agreement
    noisy = stats.burn_in_check(rng.normal(size=(4, 4000)) * 20, replications=True, margin=0.2)
    assert not noisy.passed and stats.burn_in_check(rng.normal(size=(4, 4000)) * 20,
                                                    replications=True).passed
    # "final": the final half-width, which the same data cannot resolve
    f = stats.burn_in_check(reps, replications=True, margin="final")
    assert f.margin == pytest.approx(plain.final_half_width) and not f.passed
    assert f.equivalence.resolvable > 2 * f.final_half_width
    # columns: one verdict per column
    two = stats.burn_in_check(np.stack([reps, reps + 0.3 * (t < 2000)], axis=2),
                              replications=True, margin=[0.2, 0.2])
    assert two.equivalent.tolist() == [True, False] and "NOT" in two.report()
    with pytest.raises(ValueError, match="margin"):
        stats.burn_in_check(reps, replications=True, margin="half")
    # the summaries a chapter prints: share of the margin used and resolvable
    assert b.margin_used == pytest.approx(float(np.max(b.equivalence.achieved)) / 0.2) and b.margin_used < 1
    assert two.margin_used > 1 and two.margin_used == pytest.approx(
        float(np.max(two.equivalence.achieved / two.equivalence.margin)))
    assert b.margin_resolvable == pytest.approx(float(np.max(b.equivalence.resolvable)) / 0.2)
    assert b.one_sided_crit == pytest.approx(float(stats.t_quantile(1 - 0.05 / 1, 39)))
    assert math.isnan(plain.margin_used) and math.isnan(plain.one_sided_crit)


@pytest.mark.parametrize("call, match", [
    (lambda: stats.replication_ci([1.0]), "at least 2"),
    (lambda: stats.replication_ci([1.0, 2.0], level=1.5), "level"),
    (lambda: stats.replication_ci([1.0, np.nan]), "finite"),
    (lambda: stats.batch_means(np.zeros(100), dt=0), "dt"),
    (lambda: stats.iat(np.zeros(100), method="x"), "method"),
    (lambda: stats.simultaneous([1.0], [0.0]), "se"),
    (lambda: stats.simultaneous([1.0], [1.0], method="x"), "method"),
    (lambda: stats.detectable(1.0, m=0), "m must"),
    (lambda: stats.loglog_slope([1, 2], [1, 2], [1, 1]), "at least 3"),
    (lambda: stats.loglog_slope([1, 2, -3], [1, 2, 3], [1, 1, 1]), "x must"),
    (lambda: stats.critical_value(0, 5), "m must"),
    (lambda: stats.replications_needed(1.0, 0.0), "delta"),
    (lambda: stats.replications_needed(-1.0, 1.0), "se_pilot"),
    (lambda: stats.replications_needed(1.0, 1.0, r_pilot=1), "r_pilot"),
    (lambda: stats.equivalence(0.0, 1.0, 5, 0.0), "margin"),
    (lambda: stats.equivalence(0.0, 0.0, 5, 1.0), "se"),
    (lambda: stats.equivalence(0.0, 1.0, 5, 1.0, method="holm"), "method"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_type_errors():
    with pytest.raises(TypeError, match="level"):
        stats.replication_ci([1.0, 2.0], level="0.9")
    with pytest.raises(TypeError, match="dt"):
        stats.iat([1.0, 2.0, 3.0, 4.0], dt="1")


def test_batch_means_and_slice_batches_share_one_warning_text():
    # the same lag-1 condition reads the same whichever function reports it
    y = ar1_paths(0.999, 20_000, 1, 6)[0]
    pat = (r"^standard errors unreliable: .*largest lag-1 correlation of the \d+ batch means "
           r"[0-9.]+ > [0-9.]+, the family-wise 0.01 critical value \(the batch means are still correlated\)")
    with pytest.warns(RuntimeWarning, match=pat):
        stats.batch_means(y, tau=5.0)
    with pytest.warns(RuntimeWarning, match=pat):
        stats.slice_batches(ar1_paths(0.999, 4000, 1, 22).T, 4000.0)   # its lag-1 test fails


def test_burn_in_family_passes_flat_cells_and_fails_a_trend():
    rng = np.random.default_rng(5)
    flat = {k: rng.normal(2.0, 0.02, (10, 4)) for k in "abc"}
    fam = stats.burn_in_family(flat, 0.05, relative=True)
    assert fam.passed and len(fam) == 3 and fam.margin_used < 1
    assert fam.used[fam.worst] == fam.margin_used
    assert fam.margin_resolvable < 1 and "3 cells" in fam.report("x")
    # the same margin per cell, absolute: 0.05 · 2
    same = stats.burn_in_family(flat, {k: 0.1 for k in flat})
    assert same.used == pytest.approx(fam.used, rel=1e-2)
    trend = dict(flat, c=flat["c"] + np.array([0.3, 0.3, 0.0, 0.0]))   # first half high
    bad = stats.burn_in_family(trend, 0.05, relative=True)
    assert not bad.passed and bad.worst == "c" and bad.margin_used > 1
    with pytest.raises(TypeError, match="halves"):
        stats.burn_in_family([flat["a"]], 0.1)
    with pytest.raises(ValueError, match="margin"):
        stats.burn_in_family(flat, {"a": 0.1})
    with pytest.raises(ValueError, match="margin"):
        stats.burn_in_family(flat, -1.0)


def test_se_reliable_rule_is_the_window_against_max_20L_80tau():
    from qlib.stats.batch import reliable_window, required_batch_length
    assert required_batch_length(10.0, 12.0) == 800.0          # 80 τ binds
    assert required_batch_length(10.0, 50.0) == 1000.0         # 20 L binds (a long tail)
    assert reliable_window(8000.0, 10.0, 12.0) and not reliable_window(7999.0, 10.0, 12.0)
    assert reliable_window(4000.0, 10.0, 12.0, min_batches=5)
    for bad in (dict(window=0.0, tau=1.0, length=1.0), dict(window=1.0, tau=-1.0, length=1.0),
                dict(window=1.0, tau=1.0, length=float("inf"))):
        with pytest.raises(ValueError):
            reliable_window(**bad)
    with pytest.raises(ValueError, match="min_batches"):
        reliable_window(1.0, 1.0, 1.0, min_batches=1)
    # the flag never looks at the lag-1 test: a long AR(1) path is flagged
    # reliable whatever its batch means' lag-1 correlation, and a window just
    # short of 10 · 80 τ is not, however uncorrelated its batch means look
    long = ar1_paths(0.5, 20_000, 1, 31).T                     # τ ≈ 1.5 slices
    sb = stats.slice_batches(long, 20_000.0, warn=False)
    assert sb.reliable and sb.n_batches == 20
    assert sb.batch_length >= sb.required_batch_length
    short = stats.slice_batches(ar1_paths(0.9, 4000, 1, 32).T, 4000.0, warn=False)
    assert not short.reliable and short.lag1 <= short.lag1_critical


# ---------------------------------------------------------------- τ_up and the bias check

def test_mm1_relaxation_time_is_twice_tau_int_at_high_load():
    from qlib.stats import mm1_relaxation_time
    rho = 0.9
    assert mm1_relaxation_time(rho) == pytest.approx(1 / (1 - np.sqrt(rho)) ** 2)
    assert mm1_relaxation_time(rho) / ((1 + rho) / (1 - rho) ** 2) == pytest.approx(2.0, rel=0.02)
    with pytest.raises(ValueError, match="rho"):
        mm1_relaxation_time(1.0)


def test_tau_upper_takes_the_larger_of_model_and_ucl():
    from qlib.stats import tau_upper, t_quantile
    taus = np.array([10.0, 12.0, 11.0, 13.0, 9.0])
    t = tau_upper(taus)
    ucl = taus.mean() + float(t_quantile(0.95, 4)) * taus.std(ddof=1) / np.sqrt(5)
    assert t.value == pytest.approx(ucl) and t.source == "replications" and t.r == 5
    assert tau_upper(taus, model=5.0).value == pytest.approx(ucl)
    assert tau_upper(taus, model=50.0).value == 50.0 and tau_upper(taus, model=50.0).source == "model"
    assert tau_upper(model=3.0).value == 3.0 and float(tau_upper(model=3.0)) == 3.0
    assert tau_upper(taus, factor=2.0).value == pytest.approx(2 * ucl)
    for bad in (dict(), dict(taus=[1.0]), dict(taus=[1.0, -1.0]), dict(model=0.0), dict(model=True),
                dict(model=1.0, factor=0.5)):
        with pytest.raises(ValueError):
            tau_upper(**bad)


def test_tau_upper_covers_the_mean_tau():
    # the UCL is an upper bound of E τ̂ about 95 % of the time
    from qlib.stats import tau_upper
    rng = np.random.default_rng(3)
    cover = np.mean([tau_upper(rng.gamma(20.0, 0.5, size=8)).value >= 10.0 for _ in range(2000)])
    assert 0.93 < cover < 0.97


def test_bias_check_can_fail_and_takes_the_worst_cell():
    from qlib.stats import bias_check, leftover_bias
    ok = bias_check(0.01, 2000.0, 100.0, 0.02)
    assert ok.passed and ok.kind == "bound" and ok.value == pytest.approx(float(leftover_bias(0.01, 2000.0, 100.0)))
    bad = bias_check([0.01, 0.01], 400.0, [10.0, 400.0], 0.015)
    assert not bad.passed and bad.value == pytest.approx(float(leftover_bias(0.01, 400.0, 400.0)))
    with pytest.raises(ValueError, match="tolerance"):
        bias_check(0.01, 10.0, 1.0, 0.0)


def test_replications_for_equivalence_sizes_the_family():
    from qlib.stats import replications_for_equivalence as rfe
    assert rfe(1.0, 1.0, m=8, per="check") == rfe(1.0, 1.0)
    assert rfe(1.0, 1.0, m=8) > rfe(1.0, 1.0)
    assert rfe(1.0, 1.0, m=8) == rfe(1.0, 1.0, power=0.8 ** (1 / 8))
    with pytest.raises(ValueError, match="per"):
        rfe(1.0, 1.0, per="cell")
