"""Batch means on correctly sized runs: coverage kept, spurious lag-1 alarms rare (issue 28 §4).

A fast version of ``benchmarks/bench_batch_coverage.py``. The lag-1 test of
the batch means is family-wise over the series (Bonferroni), so a correctly
sized run of several series warns with probability about 1 %, where the old
per-series rule fired with up to ``m · 1 %``; and it is a warning, never an
exception. Fixed seeds: the tests are deterministic; the bounds are the
nominal rate plus three binomial standard errors.
"""
import math
import warnings

import numpy as np
import pytest

from qlib import graphs, simulate, stats
from qlib.halfin_whitt.simulate import simulate_jsq
from test_stats import ar1_paths

RUNS = 1000


def test_spurious_lag1_alarms_are_family_wise():
    # three independent AR(1) columns, 20 000 steps (about 1000 τ_int): adequately long
    x = ar1_paths(0.5, 20_000, 3 * RUNS, 21).reshape(RUNS, 3, 20_000).transpose(0, 2, 1)
    alarms, old, cover = [], [], []
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)       # a warning here would be an alarm
        for path in x:
            try:
                bm = stats.batch_means(path)                   # check=True: must not raise
                alarms.append(False)
            except RuntimeWarning:
                bm = stats.batch_means(path, check=False)
                alarms.append(True)
            assert bm.n_batches == 20
            old.append(bool(np.any(bm.lag1 > stats.lag1_threshold(bm.n_batches, 0.01))))
            cover.append(bm.covers(0.0))
    bound = 0.01 + 3 * math.sqrt(0.01 * 0.99 / RUNS)
    assert np.mean(alarms) <= bound, np.mean(alarms)
    # the old per-column rule fires more often on the same runs (it can only fire more)
    assert np.mean(old) >= np.mean(alarms)
    assert 0.93 <= np.mean(cover) <= 0.97, np.mean(cover)


def test_both_simulators_share_one_rule_and_one_warning():
    pat = r"standard errors unreliable: .* family-wise 0.01 critical value"
    with pytest.warns(RuntimeWarning, match=pat):
        r = simulate(graphs.ring(50), 0.9, 0.0, t_end=60.0, burn_in=10.0, seed=3)
    with pytest.warns(RuntimeWarning, match=pat):
        j = simulate_jsq(20, 0.5, t_end=300.0, burn_in=100.0, seed=3)
    assert not r.se_reliable and not j.se_reliable
    # the reported lag-1 is the largest over the tested series, and the
    # batches are those of qlib.stats.batch_means (oldest rest left out)
    for res in (r, j):
        assert res.batches >= 10


def test_simulate_coverage_and_alarms_on_mm1_queues():
    # the empty graph: every server an M/M/1 queue, q(i) = λ^i; n = 2, λ = 0.5,
    # a window of 19 000 (hundreds of correlation lengths)
    lam, runs = 0.5, 300
    true = lam ** np.arange(1, 4)
    cover, alarms = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for s in range(runs):
            r = simulate(graphs.empty(2), lam, 0.0, t_end=20_000.0, burn_in=1000.0,
                         seed=500 + s, levels=6)
            lo, hi = r.occupancy_ci[:, 1:4]
            cover.append((lo <= true) & (true <= hi))
            alarms.append(not r.se_reliable)
    assert 0.93 <= np.mean(cover) <= 0.97, np.mean(cover)
    assert np.mean(alarms) <= 0.01 + 3 * math.sqrt(0.01 * 0.99 / runs), np.mean(alarms)
