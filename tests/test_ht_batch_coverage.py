"""The automatic batch rule in ``reflected_ou`` and ``simulate_tasks``: coverage against exact values.

Both use :func:`qlib.stats.slice_batches` (the rule of ``simulate_jsq``): 10
to 20 batches of at least 20 measured correlation lengths. Their 95 %
batch-means intervals must cover exact values at the nominal rate, within
three binomial standard errors over ``RUNS`` fixed seeds (deterministic):

* ``reflected_ou`` at β = 1: ``E[X_1] = −β`` holds for the scheme exactly
  (``X_1 + X_2`` is free of the push), so the target has no discretisation
  error; windows of 4000 (about 700 correlation lengths);
* ``simulate_tasks`` at n = 1 (the M/M/1 queue, ρ = 1 − β = 0.5): the time
  fraction busy ρ, the mean number in system ρ/(1 − ρ), and the fraction of
  tasks that wait ρ (PASTA), a ratio of batch sums; windows of 10 000.
"""
import math
import warnings

import numpy as np

from qlib import stats
from qlib.halfin_whitt.diffusion import reflected_ou
from qlib.halfin_whitt.tasks import simulate_tasks

RUNS = 300
LO, HI = (0.95 + s * 3 * math.sqrt(0.95 * 0.05 / RUNS) for s in (-1, 1))


def _covers(mean, se, k, target):
    return np.abs(np.asarray(mean) - target) <= stats.t_quantile(0.975, k - 1) * np.asarray(se)


def test_reflected_ou_batch_rule_covers_the_exact_mean():
    cover, ks = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for s in range(RUNS):
            r = reflected_ou(1.0, (-1.0, 0.0), t_end=4010.0, dt=0.05, burn_in=10.0,
                             record_dt=0, seed=1000 + s)
            cover.append(_covers(r.mean_x1, r.mean_x1_se, r.batches, -1.0))
            ks.append(r.batches)
    print(f"reflected_ou: coverage {np.mean(cover):.3f} in [{LO:.3f}, {HI:.3f}], "
          f"batches {min(ks)}..{max(ks)}")
    assert min(ks) >= 10 and max(ks) <= 20
    assert LO <= np.mean(cover) <= HI


def test_simulate_tasks_batch_rule_covers_mm1():
    rho = 0.5
    target = np.array([rho, rho / (1 - rho), rho])
    cover, ks = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for s in range(RUNS):
            r = simulate_tasks(1, 1 - rho, t_end=10_050.0, burn_in=50.0, seed=2000 + s)
            k = r.batch_time.shape[0]
            x = np.column_stack([r.batch_time[:, 2] / r.batch_length,
                                 r.batch_time[:, 0] / r.batch_length,
                                 r.batch_tasks[:, 1] / r.batch_tasks[:, 0]])
            mean = [r.p_full, r.mean_tasks, r.p_wait]
            cover.append(_covers(mean, x.std(axis=0, ddof=1) / math.sqrt(k), k, target))
            ks.append(k)
    c = np.mean(cover, axis=0)
    print(f"simulate_tasks (M/M/1): coverage {np.round(c, 3)} in [{LO:.3f}, {HI:.3f}], "
          f"batches {min(ks)}..{max(ks)}")
    assert min(ks) >= 10 and max(ks) <= 20
    assert np.all((LO <= c) & (c <= HI))


def test_fixed_batches_keep_every_task():
    r = simulate_tasks(50, 1.0, t_end=50.0, burn_in=5.0, seed=3, batches=20)
    assert r.batch_tasks.shape == (20, 6) and r.batch_tasks[:, 0].sum() == r.arrivals
    o = reflected_ou(1.0, (-1.0, 0.0), t_end=10.0, dt=0.01, seed=3, batches=4, record_dt=0)
    assert o.batches == 4 and math.isnan(o.corr_length) and o.se_reliable
