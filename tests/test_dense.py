"""The dense-graph kernel with idle-server tracking (``qlib.sim.dense``).

Checked against independent routes, margins fixed in advance:

* the exact complete-graph chain (``qlib.halfin_whitt.stationary_jsq``) at
  ``n = 20`` with ``d = n − 1``, at the Halfin–Whitt load ``1 − 1/√n``:
  P(wait), E[Q₂]/n and the mean response time, the mean of 8 independent
  replications within 4 standard errors (Student t, 7 degrees of freedom: a
  false alarm about once in 200 runs per quantity); the standard errors are
  asserted small enough that a 5 % error in P(wait) would be caught;
* the CSR kernel (``simulate_uniformized``) on the same circulant graph, at
  loads and degrees where each branch of the placement runs (the idle list
  in random order; the rejection draw of a one-task neighbour; the full
  scan): a two-sample z-test of P(wait)-free quantities, E[Q₂]/n and the
  mean response time, at |z| < 4;
* rate balance E q(1) = λ within 4 standard errors;
* bad input raises ``ValueError`` naming the parameter.
"""
import math

import numpy as np
import pytest

from qlib.halfin_whitt import stationary_jsq
from qlib.sim import simulate_uniformized
from qlib.sim.dense import circulant_graph, random_circulant, simulate_dense
from qlib.stats import replication_ci

Z = 4.0


def _reps(n, S, lam, reps, t_end, seed):
    ss = np.random.SeedSequence(seed).spawn(reps)
    return [simulate_dense(n, S, lam, t_end=t_end, burn_in=20.0, seed=s, batches=2) for s in ss]


def test_complete_graph_against_the_exact_chain():
    n, beta = 20, 1.0
    lam = 1 - beta / math.sqrt(n)
    ex = stationary_jsq(n, beta)
    runs = _reps(n, np.arange(1, n), lam, 8, 20000.0, 11)
    for got, want in (([r.wait_probability for r in runs], ex.p_wait),
                      ([r.q[2] for r in runs], ex.mean_q2 / n),
                      ([r.mean_response_time for r in runs], ex.mean_response)):
        ci = replication_ci(got)
        assert abs(ci.mean - want) < Z * ci.se, (ci.mean, want, ci.se)
    assert Z * replication_ci([r.wait_probability for r in runs]).se < 0.05 * ex.p_wait   # power


@pytest.mark.parametrize("n, d, lam", [(300, 40, 0.9),     # the idle list, random order
                                       (400, 60, 0.95),    # and the rejection draw of a one-task neighbour
                                       (400, 8, 0.95)])    # the full scan
def test_against_the_csr_kernel(n, d, lam):
    S = random_circulant(n, d, seed=d)
    dense = _reps(n, S, lam, 6, 1500.0, 1)
    g = circulant_graph(n, S)
    ss = np.random.SeedSequence(2).spawn(6)
    csr = [simulate_uniformized(g, lam, t_end=1500.0, burn_in=20.0, seed=s, batches=2, warn=False) for s in ss]
    for a, b in (([r.q[2] for r in dense], [r.occupancy[2] for r in csr]),
                 ([r.mean_response_time for r in dense], [r.mean_response_time for r in csr])):
        ca, cb = replication_ci(a), replication_ci(b)
        assert abs(ca.mean - cb.mean) < Z * math.hypot(ca.se, cb.se), (ca.mean, cb.mean)
    q1 = replication_ci([r.q[1] for r in dense])
    assert abs(q1.mean - lam) < Z * q1.se + 1e-12


def test_large_degree_scans_few():
    n = 4000
    S = random_circulant(n, 1000, seed=3)
    r = simulate_dense(n, S, 1 - 1 / math.sqrt(n), t_end=30.0, burn_in=10.0, seed=1)
    assert r.scanned_per_arrival < 0.2 * (S.size + 1)


def test_random_circulant():
    S = random_circulant(101, 20, seed=5)
    assert S.size == 20 and np.unique(S).size == 20 and S.min() >= 1 and S.max() <= 100
    assert np.array_equal(np.sort(S), np.sort(101 - S))
    assert np.array_equal(random_circulant(10, 9, seed=1), np.arange(1, 10))      # complete
    assert np.array_equal(random_circulant(50, 7, seed=2), random_circulant(50, 7, seed=2))
    g = circulant_graph(12, random_circulant(12, 5, seed=1))
    assert set(np.diff(g.indptr).tolist()) == {5}


def test_seeded_runs_repeat():
    S = random_circulant(200, 30, seed=1)
    a, b = (simulate_dense(200, S, 0.9, t_end=20.0, seed=7, batches=2) for _ in range(2))
    assert np.array_equal(a.batch_q, b.batch_q) and a.wait_probability == b.wait_probability


@pytest.mark.parametrize("call, name", [
    (lambda: random_circulant(2, 1), "n"),
    (lambda: random_circulant(11, 3), "d must be even"),
    (lambda: random_circulant(10, 10), "d"),
    (lambda: simulate_dense(10, [1, 2], 0.5, t_end=5.0), "offsets"),
    (lambda: simulate_dense(10, [1, 9], 1.2, t_end=5.0), "lam"),
    (lambda: simulate_dense(10, [1, 9], 0.5, t_end=-1.0), "t_end"),
    (lambda: simulate_dense(10, [1, 9], 0.5, t_end=5.0, burn_in=6.0), "burn_in"),
    (lambda: simulate_dense(10, [1, 9], 0.5, t_end=5.0, batches=0), "batches"),
    (lambda: simulate_dense(10, [0, 1, 9], 0.5, t_end=5.0), "offsets"),
])
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()
