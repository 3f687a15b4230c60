"""simulate_jsq()'s own error bars cover where the truth is known (issue 22).

The truth: ``E[n − Q_1] = β√n`` exactly for every ``n`` (rate balance for the
number of tasks), and the exact chain ``stationary_jsq(20, β, tol=1e-9)``
(stored in tests/data/jsq_exact_means.json) for
``E[Q_2]``, ``E[N − Q_1]`` and ``P(Q_1 = n)`` (``p_full`` as a time average,
``p_wait`` over arrivals, equal by PASTA); its truncation error bounds are
checked to be far below the standard errors.

Each coverage check is the share of 200 seeded runs whose 95 % interval
covers the truth. The accepted band is the nominal 0.95 plus or minus 3
binomial standard errors, ``3·sqrt(0.95·0.05/200) = 0.046``: wide, so it
does not flake, yet the old fixed 20 batches in a too-short window cover
0.83-0.89 (``test_fixed_batches_in_a_short_window_would_be_caught``), which
it rejects. The full measurement (1000 seeds per setting, before and after)
is ``benchmarks/bench_simulate_se.py``.
"""
import functools
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from qlib import stats
from qlib.halfin_whitt import simulate_jsq

TRUTH = Path(__file__).resolve().parent / "data" / "jsq_exact_means.json"
SEEDS = 200
QUANTITIES = ("mean_idle", "mean_q2", "mean_waiting", "p_full", "p_wait")


def _band(seeds):
    h = 3 * math.sqrt(0.95 * 0.05 / seeds)
    return 0.95 - h, 0.95 + h


@functools.lru_cache(maxsize=None)
def _truth(n, beta):
    # stationary_jsq(n, beta, tol=1e-9), stored (half a minute at beta = 0.5;
    # tests/test_simulate_jsq_fast.py writes the file)
    st = json.loads(TRUTH.read_text())[f"{n},{float(beta)}"]
    assert st["tol"] <= 1e-9
    eb = st["error_bounds"]
    # the exact values are exact to far below any interval here (s.e. >= 1e-3)
    assert max(eb["mean_q2"], eb["mean_waiting"], eb["p_wait"]) < 1e-3
    return dict(mean_idle=beta * math.sqrt(n), mean_q2=st["mean_q2"],
                mean_waiting=st["mean_waiting"], p_full=st["p_wait"], p_wait=st["p_wait"])


def _coverage(n, beta, window, burn_in, batches=None, seeds=SEEDS):
    true = _truth(n, beta)
    hits = {q: [] for q in QUANTITIES}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for s in range(seeds):
            r = simulate_jsq(n, beta, t_end=window + burn_in, burn_in=burn_in, seed=s,
                             batches=batches)
            for q in QUANTITIES:
                lo, hi = getattr(r, q + "_ci")
                hits[q].append(lo <= true[q] <= hi)
    return {q: float(np.mean(v)) for q, v in hits.items()}


# (n, β, window, burn-in): the correlation length L of the run is about 1.5
# at β = 2 and 13 at β = 0.5 (N − Q_1 is the slowest), so both windows hold
# well over the 200 L that 10 decorrelated batches need
@pytest.mark.parametrize("n, beta, window, burn_in", [(20, 2.0, 3000.0, 20.0),
                                                      (20, 0.5, 20_000.0, 200.0)])
def test_coverage_of_the_95_intervals(n, beta, window, burn_in):
    cov = _coverage(n, beta, window, burn_in)
    lo, hi = _band(SEEDS)
    assert all(lo <= c <= hi for c in cov.values()), cov


def test_fixed_batches_in_a_short_window_would_be_caught():
    # 20 batches of 15 time units, about one correlation length each: the
    # batch means are correlated and the intervals too narrow
    cov = _coverage(20, 0.5, 300.0, 200.0, batches=20)
    lo = _band(SEEDS)[0]
    assert cov["mean_waiting"] < lo and cov["mean_q2"] < lo, cov


def test_short_run_warns_and_says_how_long():
    with pytest.warns(RuntimeWarning, match=r"t_end − burn_in >= ([0-9.e+]+)") as rec:
        r = simulate_jsq(20, 0.5, t_end=700.0, burn_in=200.0, seed=1)
    assert not r.se_reliable and r.batches >= 10
    need = float(rec[0].message.args[0].split("t_end − burn_in >= ")[1].split(")")[0])
    assert need >= 200 * r.corr_length * (1 - 1e-3)      # 10 batches of max(20 L, 80 τ)
    assert need > 500.0                      # the window it was given
    # a run of twice the stated length is reliable (same seed)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        r2 = simulate_jsq(20, 0.5, t_end=200.0 + 2 * need, burn_in=200.0, seed=1)
    assert r2.se_reliable


def test_long_run_is_reliable_and_reports_its_batches():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        r = simulate_jsq(20, 1.0, t_end=5050.0, burn_in=50.0, seed=3)
    assert r.se_reliable and 10 <= r.batches <= 20
    # whole slices of the 4000 per batch, the oldest left over dropped (slice_batches)
    assert r.batch_length == pytest.approx((4000 // r.batches) * 5000.0 / 4000)
    assert r.batch_length >= 20 * r.corr_length
    assert r.batch_lag1 <= stats.lag1_threshold(r.batches)
    assert r.batch_averages.shape == (r.batches, 5)
    # the intervals are mean ± t_{k-1} s.e. (the convention of SimulationResult)
    t = float(stats.t_quantile(0.975, r.batches - 1))
    for q in QUANTITIES:
        lo, hi = getattr(r, q + "_ci")
        m, se = getattr(r, q), getattr(r, q + "_se")
        assert lo == pytest.approx(m - t * se) and hi == pytest.approx(m + t * se)
    # the batch averages are the slices' time averages: they average to the means
    assert np.allclose(r.batch_averages.mean(axis=0),
                       [r.mean_idle, r.mean_q2, r.mean_q3, r.mean_waiting, r.p_full],
                       rtol=1e-3)


def test_fixed_batches_keep_the_old_scheme():
    # the random stream does not depend on the batches: same run, same means
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        auto = simulate_jsq(20, 1.0, t_end=1050.0, burn_in=50.0, seed=5)
    fixed = simulate_jsq(20, 1.0, t_end=1050.0, burn_in=50.0, seed=5, batches=20)
    for q in QUANTITIES + ("mean_q3",):
        assert getattr(fixed, q) == pytest.approx(getattr(auto, q), rel=1e-12)
    assert fixed.batches == 20 and fixed.batch_length == pytest.approx(50.0)
    assert math.isnan(fixed.corr_length) and fixed.se_reliable
    assert fixed.batch_averages.shape == (20, 5)


@pytest.mark.parametrize("batches, exc", [(1, ValueError), (0, ValueError),
                                          (-3, ValueError), (2.5, TypeError),
                                          (True, TypeError), ("20", TypeError)])
def test_bad_batches(batches, exc):
    with pytest.raises(exc, match="batches"):
        simulate_jsq(10, 1.0, t_end=10.0, batches=batches)
