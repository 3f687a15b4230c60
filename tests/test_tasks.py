"""Tests of qlib.halfin_whitt.tasks: per-server FIFO simulation of JSQ, task by task.

Statistical checks use independent replications (Student-t, r - 1 degrees of
freedom) at family level 0.99 with fixed seeds, against exact values: the
M/M/1 queue at n = 1 and the exact chain at n = 4 (brute force here, independent of ``stationary_jsq``).
"""
import itertools

import numpy as np
import pytest
import scipy.sparse as sps
import scipy.sparse.linalg as spla
from scipy import stats as st

from qlib import stats
from qlib.halfin_whitt.tasks import TasksResult, simulate_tasks, thinned_waits

R = 12


def _exact_small(n, beta, L=15):
    """Stationary JSQ by brute force over sorted queue-length vectors (lengths <= L).

    An independent route from ``stationary_jsq``: each state is a sorted
    vector of queue lengths; arrivals (rate λ_n) go to a shortest queue,
    each busy server completes at rate 1; arrivals at min length L are cut
    (mass there is far below the test's resolution).
    """
    lam = n - beta * np.sqrt(n)
    states = list(itertools.combinations_with_replacement(range(L + 1), n))
    index = {x: i for i, x in enumerate(states)}
    rows, cols, vals = [], [], []
    for i, x in enumerate(states):
        moves = []
        if x[0] < L:
            moves.append((tuple(sorted((x[0] + 1,) + x[1:])), lam))
        for j in range(n):
            if x[j] > 0:
                moves.append((tuple(sorted(x[:j] + (x[j] - 1,) + x[j + 1:])), 1.0))
        for y, rate in moves:
            rows += [i, i]; cols += [index[y], i]; vals += [rate, -rate]
    A = sps.csr_matrix((vals, (rows, cols)), shape=(len(states),) * 2).T.tolil()
    A[0, :] = 1.0
    b = np.zeros(len(states)); b[0] = 1.0
    pi = spla.spsolve(A.tocsc(), b)
    X = np.array(states)
    N, Q = X.sum(axis=1), lambda k: (X >= k).sum(axis=1)
    return dict(p_wait=pi @ (X[:, 0] >= 1), mean_wait=pi @ (N - Q(1)) / lam,
                mean_response=pi @ N / lam, eps=(pi @ Q(3)) / (pi @ Q(2)))


def _reps(n, beta, t_end, seed, burn_in=50.0):
    return [simulate_tasks(n, beta, t_end=t_end, burn_in=burn_in, seed=s)
            for s in np.random.SeedSequence(seed).spawn(R)]


def test_validation():
    with pytest.raises(ValueError, match="beta"):
        simulate_tasks(4, 2.5, t_end=1.0)
    with pytest.raises(TypeError, match="n must"):
        simulate_tasks(4.0, 1.0, t_end=1.0)
    with pytest.raises(ValueError, match="t_end"):
        simulate_tasks(4, 1.0, t_end=1.0, burn_in=2.0)
    with pytest.raises(ValueError, match="batches"):
        simulate_tasks(4, 1.0, t_end=1.0, batches=1)
    with pytest.raises(ValueError, match="capacity"):
        simulate_tasks(4, 1.0, t_end=1.0, initial=[4, 4, 4], capacity=3)
    with pytest.raises(ValueError, match="initial"):
        simulate_tasks(4, 1.0, t_end=1.0, initial=[2, 3])
    with pytest.raises(TypeError, match="result"):
        thinned_waits(None)
    with pytest.raises(RuntimeError, match="capacity"):
        simulate_tasks(1, 0.05, t_end=2000.0, seed=0, capacity=3)


@pytest.mark.filterwarnings("ignore:standard errors unreliable:RuntimeWarning")
def test_reproducible_and_drained():
    a = simulate_tasks(50, 1.0, t_end=50.0, burn_in=5.0, seed=3, initial=[50, 10])
    b = simulate_tasks(50, 1.0, t_end=50.0, burn_in=5.0, seed=3, initial=[50, 10])
    assert isinstance(a, TasksResult)
    assert a.arrivals == b.arrivals and np.array_equal(a.wait_time, b.wait_time)
    assert a.final.sum() == 0                      # every tagged task was followed out
    assert a.waiting == a.wait_time.size and np.all(a.wait_ahead >= 1)
    assert np.all(a.wait_time > 0) and np.all(a.wait_response > a.wait_time)
    # the automatic batches leave out the oldest rest of slices (fewer than 20 of 4000)
    assert 0.99 * a.arrivals <= a.batch_tasks[:, 0].sum() <= a.arrivals


def test_mm1_exact():
    """n = 1 is the M/M/1 queue at ρ = 1 − β: P(wait) = ρ, W | wait ~ Exp(β), E R = 1/β."""
    beta = 0.5
    runs = _reps(1, beta, 20000.0, 11)
    est = np.array([[r.p_wait, r.mean_wait_given_wait, r.mean_response,
                     r.mean_tasks - r.lam_total * r.mean_response] for r in runs])
    ci = stats.replication_ci(est)
    fam = stats.simultaneous(ci.mean, ci.se, ci.df, [1 - beta, 1 / beta, 1 / beta, 0.0],
                             level=0.99)
    print(fam.report("M/M/1"))
    assert fam.passed
    assert np.all(fam.detectable[:3] < 0.1 * np.array([1 - beta, 1 / beta, 1 / beta]))
    # the wait of a waiting task is Exp(β): its law at five points, over replications
    x = np.array([0.25, 0.5, 1.0, 2.0, 4.0])
    cdf = stats.replication_ci([[np.mean(r.wait_time <= v) for v in x] for r in runs])
    fam = stats.simultaneous(cdf.mean, cdf.se, cdf.df, 1 - np.exp(-beta * x), level=0.99)
    print(fam.report("M/M/1 wait law"))
    assert fam.passed and np.all(fam.detectable < 0.05)


def test_small_n_against_exact_chain():
    """n = 4, β = 1 against the exact stationary law (brute force)."""
    ex = _exact_small(4, 1.0)
    runs = _reps(4, 1.0, 20000.0, 12)
    est = np.array([[r.p_wait, r.p_full, r.mean_wait, r.mean_response,
                     float(np.mean(r.wait_ahead >= 2))] for r in runs])
    target = [ex["p_wait"], ex["p_wait"], ex["mean_wait"], ex["mean_response"], ex["eps"]]
    ci = stats.replication_ci(est)
    fam = stats.simultaneous(ci.mean, ci.se, ci.df, target, level=0.99)
    print(fam.report("n = 4 vs exact"))
    assert fam.passed
    assert np.all(fam.detectable < 0.2 * np.array(target))


@pytest.mark.filterwarnings("ignore:standard errors unreliable:RuntimeWarning")
def test_thinned_waits_are_gamma_given_ahead():
    """The PIT values G_k(W) of the thinned waits are i.i.d. uniform (n = 2, β = 0.5)."""
    runs = _reps(2, 0.5, 3000.0, 13)
    pairs = [thinned_waits(r) for r in runs]
    w = np.concatenate([p[0] for p in pairs])
    k = np.concatenate([p[1] for p in pairs])
    assert w.size > 5000 and np.any(k >= 2)
    assert st.kstest(st.gamma.cdf(w, k), "uniform").pvalue > 1e-3
    assert st.kstest(w, "expon").pvalue < 1e-3     # the mixture is far from Exp(1) at n = 2
