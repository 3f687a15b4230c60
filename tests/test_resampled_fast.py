"""The resampled fast path (``qlib.sim.simulate_uniformized`` at ``mu > 0``).

Checked against what it must reproduce, with margins fixed in advance:

* the computed permutation is a bijection of ``0..n-1`` for every ``n``
  (small ``n`` all, large ones sampled), and epoch 0 is the identity;
* its law, the approximation it makes (a keyed Feistel network is a
  pseudo-random permutation, not a uniform one): on ``S_3 .. S_5``, where
  its few-bit halves mix slowest, a chi-square test of 40 draws per
  permutation against the uniform law at level 1e-3 (Bonferroni over the
  three sizes); with 6 rounds instead of the chosen 24 at these sizes
  (total variation 0.13 on ``S_5``) it fails;
* the exact tiny-graph chains (``qlib.exact.stationary``) at ``mu = 1, 10,
  inf``, the whole neighbourhood and two choices, on the ring, the complete
  graph and a star: the mean over 8 independent replications of the mean
  queue length within 4 standard errors (Student t, 7 degrees of freedom;
  a false alarm about once in 200 runs per cell);
* the stored-permutation kernel (``qlib.simulate``) on the paper's graphs
  (ring, triangles, double star at ``n = 1500``, λ = 0.9, ``mu = log log
  n`` and ``log n``): equivalence of the mean response time ``R``
  (``qlib.stats.equivalence``, 6 replications of each, Bonferroni over the
  cells at family level 0.95) within a margin of 1 % of ``R``, fixed
  before the runs: finer than the differences between the paper's
  resampling rates that the book reads (several per cent); and the ring
  at ``n = 2**17`` (``mu = log n, inf``, 4 replications), where the servers
  are found 64 steps ahead;
* the resampling epochs are counted (about ``mu t_end``), and a run
  resumed after the levels grow is the same run.
"""
import itertools
import math

import numpy as np
import pytest
from scipy import stats as sst

from qlib import exact, graphs, simulate
from qlib.stats import equivalence
from qlib.sim import simulate_uniformized
from qlib.sim._permute import _permutation, feistel_params
from qlib.sim.uniformized import supports_resampled

LAM = 0.7
Z = 4.0
pytestmark = pytest.mark.filterwarnings("ignore:standard errors unreliable:RuntimeWarning")
_STAR = graphs.from_edges(4, [(0, 1), (0, 2), (0, 3)])
_KP, _GP = np.uint64(0x243F6A8885A308D3), np.uint64(0x13198A2E03707345)


@pytest.mark.parametrize("n", list(range(1, 70)) + [255, 256, 1000, 4097, 65537, 10**6 + 3])
def test_permutation_is_a_bijection(n):
    h, a, rounds = feistel_params(n)
    assert rounds % 2 == 0 and a * 2**h >= n > (a - 1) * 2**h
    assert np.array_equal(_permutation(n, _KP, _GP, 0), np.arange(n))
    for e in (1, 2, 12345):
        p = _permutation(n, _KP, _GP, e)
        assert np.array_equal(np.sort(p), np.arange(n))


def _chi2_p(n, rounds, draws_per_cell=40):
    cells = {p: i for i, p in enumerate(itertools.permutations(range(n)))}
    N = draws_per_cell * len(cells)
    c = np.zeros(len(cells))
    for e in range(1, N + 1):
        c[cells[tuple(_permutation(n, _KP, _GP, e, rounds))]] += 1
    return sst.chisquare(c).pvalue


@pytest.mark.parametrize("n", [3, 4, 5])
def test_permutation_law_is_uniform_on_small_symmetric_groups(n):
    assert _chi2_p(n, feistel_params(n)[2]) > 1e-3 / 3


def test_the_law_test_can_fail():
    # the same test with too few rounds rejects: it measures the approximation
    assert _chi2_p(5, 6) < 1e-3 / 3


@pytest.mark.parametrize("mu", [1.0, 10.0, math.inf])
@pytest.mark.parametrize("graph,choices", [
    (graphs.ring(4), None), (graphs.ring(4, implicit=True), 2), (graphs.ring(5), None),
    (graphs.complete(4), 2), (_STAR, None), (_STAR, 2),
], ids=["ring4-all", "implicit-ring4-2", "ring5-all", "complete4-2", "star4-all", "star4-2"])
def test_tiny_graph_matches_exact_chain(graph, choices, mu):
    # truncation error < 1e-4: queues cut at 12 on four servers; on five (13^5 states, 15-19 s
    # of CPU per solve at 12) at 10, where the mean queue length moves by < 1e-6 from 10 to 12
    # (measured at mu = 1, 10 and inf; the standard error of 8 runs of 20 000 time units is far larger)
    e = exact.stationary(graph, LAM, mu, 10 if graph.n == 5 else 12, choices=choices)
    want = float(np.sum(e.occupancy[1:]))
    m = np.array([simulate_uniformized(graph, LAM, mu, t_end=20000, burn_in=100, seed=s,
                                       choices=choices, warn=False).mean_queue_length
                  for s in range(8)])
    se = m.std(ddof=1) / math.sqrt(m.size)
    assert abs(m.mean() - want) < Z * se, (m.mean(), want, se)


def test_agrees_with_the_stored_permutation_kernel_on_the_papers_graphs():
    n, lam = 1500, 0.9
    short = dict(t_end=1200, burn_in=200, warn=False)
    long = dict(t_end=4800, burn_in=400, warn=False)   # the double star's R varies 8 times more
    big = dict(t_end=100, burn_in=20, warn=False)      # n = 2**17: servers drawn 64 steps ahead
    mus = (math.log(math.log(n)), math.log(n))
    cells = [(g, mu, short, 6) for g in (graphs.ring(n), graphs.cliques(n, 3)) for mu in mus]
    cells += [(graphs.double_star(n), mu, long, 6) for mu in mus]
    cells += [(graphs.ring(2**17), mu, big, 4) for mu in (math.log(2**17), math.inf)]
    est, se, df, margin = [], [], [], []
    for g, mu, kw, reps in cells:
        a = np.array([simulate_uniformized(g, lam, mu, seed=s, **kw).response_time
                      for s in range(reps)])
        b = np.array([simulate(g, lam, mu, seed=100 + s, **kw).response_time
                      for s in range(reps)])
        est.append(a.mean() - b.mean())
        se.append(math.sqrt(a.var(ddof=1) / reps + b.var(ddof=1) / reps))
        df.append(2 * reps - 2)
        margin.append(0.01 * b.mean())
    eq = equivalence(est, se, df, margin)
    assert eq.passed, eq.report("new - stored kernel, R")


def test_epochs_are_counted_and_a_resumed_run_is_the_same():
    g = graphs.ring(300)
    r = simulate_uniformized(g, 0.95, 50.0, t_end=400, burn_in=50, seed=4, warn=False)
    assert abs(r.resamples - 50.0 * 400) < 5 * math.sqrt(50.0 * 400)
    assert r.mu == 50.0 and r.arrivals + r.departures == r.events
    # a start of queues of 20 grows the tracked levels (16) at once: same run as levels start high
    x0 = np.full(300, 20)
    a = simulate_uniformized(g, 0.95, 3.0, t_end=100, burn_in=10, seed=5, initial=x0, warn=False)
    b = simulate_uniformized(g, 0.95, 3.0, t_end=100, burn_in=10, seed=5, initial=x0, warn=False)
    assert np.array_equal(a.final_queues, b.final_queues)
    assert int(a.final_queues.sum()) == int(x0.sum()) + a.arrivals - a.departures
    f = simulate_uniformized(g, 0.95, math.inf, t_end=100, burn_in=10, seed=5, warn=False)
    assert f.resamples == f.arrivals


def test_unsupported_resampled_graph_is_refused():
    assert not supports_resampled(1500, 1500, math.inf)
    with pytest.raises(ValueError, match="mu"):
        simulate_uniformized(graphs.double_star(200), 0.9, math.inf, t_end=10)


def test_three_at_once_is_one_at_a_time():
    from qlib.sim._permute import _feistel, _feistel3, _tables, table_shape
    for n in (1000, 4097, 10**6 + 3):
        h, a, _ = feistel_params(n)
        shape, dt = table_shape(n)
        tab = np.zeros(shape, dt)
        b = np.uint64(2**h)
        _tables(_KP, _GP, 7, tab, np.uint64(a), b)
        args = (np.uint64(n), np.uint64(h), b - np.uint64(1), np.uint64(a), tab)
        xs = np.random.default_rng(n).integers(0, n, size=(50, 3)).astype(np.uint64)
        for x in xs:
            assert _feistel3(x[0], x[1], x[2], *args) == tuple(_feistel(v, *args) for v in x)
