"""The resampled fast path (``qlib.sim.simulate_uniformized`` at ``mu > 0``).

Checked against what it must reproduce, with margins fixed in advance:

* the lazily revealed permutation (``qlib.sim._permute._reveal``, the
  kernel's own code): every epoch's revealed map is a bijection, and its
  law on ``S_3 .. S_6`` is uniform: positions revealed in a fixed order
  with repeated looks (a random order would hide a wrong reveal: it makes
  any bijective reveal uniform), 40 epochs per permutation, a chi-square test at
  level 1e-3 (Bonferroni over the four sizes); the same test rejects a
  plausible wrong reveal (a taken candidate replaced by the next untaken
  server instead of a fresh draw; its non-centrality, from its exact law,
  is in the hundreds at ``n = 4`` and grows with ``n``), so it can fail; the stamps cleared every
  2 or 3 epochs reveal the same permutations as stamps that never wrap;
* the exact tiny-graph chains (``qlib.exact.stationary``) at ``mu = 1, 10,
  inf``, the whole neighbourhood and two choices, on the ring, the complete
  graph and a star: the mean over 8 independent replications of the mean
  queue length within 4 standard errors (Student t, 7 degrees of freedom;
  a false alarm about once in 200 runs per cell);
* the stored-permutation kernel (``qlib.simulate(kernel="event")``) on the
  paper's graphs (ring, triangles, double star at ``n = 1500``, λ = 0.9,
  ``mu = log log n`` and ``log n``): equivalence of the mean response time
  ``R`` (``qlib.stats.equivalence``, 6 replications of each, Bonferroni
  over the cells at family level 0.95) within a margin of 1 % of ``R``,
  fixed before the runs: finer than the differences between the paper's
  resampling rates that the book reads (several per cent); and the ring
  at ``n = 2**17`` (``mu = log n, inf``, 4 replications), where the
  positions and candidates are drawn 64 steps ahead;
* the look-ahead is a hint only: the same run with nothing drawn ahead
  (``n = 2**17``) is the same bit for bit, and so is a run whose stamps
  wrap every 3 epochs;
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
from qlib.sim import uniformized as U
from qlib.sim._permute import _reveal_orders
from qlib.sim.uniformized import supports_resampled

LAM = 0.7
Z = 4.0
pytestmark = pytest.mark.filterwarnings("ignore:standard errors unreliable:RuntimeWarning")
_STAR = graphs.from_edges(4, [(0, 1), (0, 2), (0, 3)])
_KC, _GC = np.uint64(0x243F6A8885A308D3), np.uint64(0x13198A2E03707345)
_LEVEL = 1e-3 / 4          # Bonferroni over n = 3 .. 6


def _orders(n, epochs, seed):
    """The same order of looks in every epoch: the last position, the
    first, again both (repeats), then every position in turn, so that each
    epoch reveals a whole permutation.  The order is fixed, not random: a
    random order would make the law uniform for any reveal that gives a
    bijection (``seed`` only keeps the signature of the other helpers)."""
    order = [n - 1, 0, n - 1, 0] + list(range(n))
    return np.tile(np.array(order, np.int64), (epochs, 1))


def _revealed(n, epochs, seed, wrap=2**32 - 1, fifo=4):
    """Each epoch's revealed permutation (row: the server of each position)."""
    out = _reveal_orders(n, _orders(n, epochs, seed), wrap, _KC, _GC, fifo)
    return out


def _probe(n, epochs, seed):
    """A wrong reveal, for the test's power: a taken candidate is replaced by
    the next untaken server (cyclically) instead of a fresh draw."""
    rng = np.random.default_rng(seed + 1)
    out = np.empty((epochs, n), np.int64)
    for e, order in enumerate(_orders(n, epochs, seed)):
        srv, taken = {}, set()
        for x in order:
            if x not in srv:
                c = int(rng.integers(n))
                while c in taken:
                    c = (c + 1) % n
                srv[x] = c
                taken.add(c)
        out[e] = [srv[x] for x in range(n)]
    return out


def _chi2_p(perms, n):
    cells = {p: i for i, p in enumerate(itertools.permutations(range(n)))}
    c = np.zeros(len(cells))
    for p in perms:
        c[cells[tuple(int(v) for v in p)]] += 1
    return sst.chisquare(c).pvalue


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_revealed_permutation_is_uniform_on_small_symmetric_groups(n):
    epochs = 40 * math.factorial(n)
    perms = _revealed(n, epochs, seed=n)
    assert all(np.array_equal(np.sort(p), np.arange(n)) for p in perms)   # bijections
    assert _chi2_p(perms, n) > _LEVEL


def test_the_law_test_can_fail():
    # a plausible wrong reveal (taken -> next untaken server) is rejected at every size
    for n in (4, 5, 6):
        assert _chi2_p(_probe(n, 40 * math.factorial(n), seed=n), n) < _LEVEL


@pytest.mark.parametrize("n", [1, 2, 7, 50])
def test_stamps_that_wrap_reveal_the_same_permutations(n):
    a = _revealed(n, 200, seed=9)
    for wrap in (1, 2, 3):
        assert np.array_equal(_revealed(n, 200, seed=9, wrap=wrap), a)
    assert np.array_equal(_revealed(n, 200, seed=9, fifo=1), a)
    assert all(np.array_equal(np.sort(p), np.arange(n)) for p in a)


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
        b = np.array([simulate(g, lam, mu, seed=100 + s, kernel="event", **kw).response_time
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


def test_the_look_ahead_and_the_stamp_wrap_change_no_bit(monkeypatch):
    g = graphs.ring(2**17, implicit=True)
    kw = dict(t_end=3.0, burn_in=0.5, seed=7)
    a = U._uniformized_checked(g, 0.9, 40.0, **kw)      # drawn 64 steps ahead
    b = U._uniformized_checked(g, 0.9, 40.0, _wrap=3, **kw)
    monkeypatch.setattr(U, "_AHEAD_FROM", 2**40)        # nothing drawn ahead
    c = U._uniformized_checked(g, 0.9, 40.0, **kw)
    assert a.resamples > 100
    for r in (b, c):
        assert np.array_equal(r.final_queues, a.final_queues)
        assert np.array_equal(r.occupancy, a.occupancy) and r.arrivals == a.arrivals
