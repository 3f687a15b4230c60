import math
import warnings

import numpy as np
import pytest
from scipy import stats

from qlib import exact
from qlib import graphs as g
from qlib.sim import replicate, simulate


@pytest.mark.filterwarnings("ignore:standard errors unreliable:RuntimeWarning")
def test_determinism():
    a = simulate(g.ring(100), 0.8, 1.0, t_end=20, seed=5)
    b = simulate(g.ring(100), 0.8, 1.0, t_end=20, seed=5)
    assert np.array_equal(a.occupancy, b.occupancy) and a.events == b.events


@pytest.mark.filterwarnings("ignore:standard errors unreliable:RuntimeWarning")
@pytest.mark.parametrize("mu", [0.0, 2.0, np.inf])
def test_conservation(mu):
    r = simulate(g.ring(200), 0.9, mu, t_end=20, seed=1)
    assert r.arrivals - r.departures == r.final_queues.sum()
    assert r.final_queues.min() >= 0


def test_mm1():
    # n independent M/M/1 queues; relaxation time 1/(1-sqrt(lam))^2 ~ 11.7,
    # so burn-in 100 leaves a bias below e^-8 and batches of length 30 are
    # ~2.5 relaxation times long (nearly independent batch means)
    lam = 0.5
    r = simulate(g.empty(2000), lam, t_end=400, burn_in=100, seed=3, batches=10)
    for i in range(1, 5):
        assert abs(r.occupancy[i] - lam**i) < 4 * r.occupancy_se[i]


@pytest.mark.filterwarnings("ignore:standard errors unreliable:RuntimeWarning")
def test_little():
    lam = 0.8
    r = simulate(g.ring(5000), lam, 1.0, t_end=40, burn_in=10, seed=4)
    assert abs(r.mean_response_time - r.occupancy[1:].sum() / lam) < 0.02


def test_validation():
    G = g.ring(10)
    with pytest.raises(ValueError, match="lam"):
        simulate(G, -1, t_end=1)
    with pytest.raises(ValueError, match="mu"):
        simulate(G, 0.5, np.nan, t_end=1)
    with pytest.raises(ValueError, match="t_end"):
        simulate(G, 0.5, t_end=1, burn_in=2)
    with pytest.raises(ValueError, match="initial"):
        simulate(G, 0.5, t_end=1, initial=np.zeros(3, int))
    with pytest.raises(TypeError, match="graph"):
        simulate("ring", 0.5, t_end=1)
    with pytest.warns(RuntimeWarning):
        simulate(G, 1.2, t_end=1)


@pytest.mark.filterwarnings("ignore:standard errors unreliable:RuntimeWarning")
def test_initial_occupancy():
    r = simulate(g.ring(100), 0.5, t_end=1, initial=np.array([1.0, 0.5, 0.2]),
                 record_dt=0.5, seed=1)
    assert abs(r.paths[0, 1] - 0.5) < 1e-12 and abs(r.paths[0, 2] - 0.2) < 1e-12


# ---------------------------------------------------------------------------
# determinism, level growth, tie-breaking, estimators, validation, exactness
# ---------------------------------------------------------------------------
STAR4 = g.from_edges(4, [(0, 1), (0, 2), (0, 3)])


def _same(a, b):
    """Bitwise equality of everything a run returns (except wall time)."""
    assert np.array_equal(a.occupancy, b.occupancy)
    assert np.array_equal(a.occupancy_se, b.occupancy_se)
    assert np.array_equal(a.batch_occupancy, b.batch_occupancy)
    assert np.array_equal(a.batch_response_time, b.batch_response_time,
                          equal_nan=True)
    assert a.mean_response_time == b.mean_response_time
    assert np.array_equal(a.final_queues, b.final_queues)
    assert (a.events, a.arrivals, a.departures, a.resamples) == \
        (b.events, b.arrivals, b.departures, b.resamples)
    if a.paths is not None or b.paths is not None:
        assert np.array_equal(a.paths, b.paths)


@pytest.mark.filterwarnings("ignore:standard errors unreliable:RuntimeWarning")
@pytest.mark.parametrize("mu", [0.0, 3.0, np.inf])
def test_slicing_does_not_change_the_run(mu):
    # progress=True cuts [0, t_end] into 100 slices; the next event time is
    # drawn right after each event, so the cut points must not matter
    kw = dict(t_end=30.0, burn_in=5.0, seed=11, record_dt=0.7)
    a = simulate(g.ring(300), 0.9, mu, progress=False, **kw)
    b = simulate(g.ring(300), 0.9, mu, progress=True, **kw)
    _same(a, b)


def test_replicate_independent_of_threads():
    kw = dict(replications=4, seed=7, t_end=20.0, burn_in=2.0)
    a = replicate(g.ring(200), 0.8, 1.0, n_jobs=1, **kw)
    b = replicate(g.ring(200), 0.8, 1.0, n_jobs=3, **kw)
    assert np.array_equal(a.occupancy, b.occupancy)
    assert np.array_equal(a.occupancy_ci, b.occupancy_ci)
    for ra, rb in zip(a.results, b.results):
        _same(ra, rb)
    # the replications really are different runs
    assert not np.array_equal(a.results[0].occupancy, a.results[1].occupancy)


@pytest.mark.filterwarnings("ignore:standard errors unreliable:RuntimeWarning")
def test_level_growth_loses_nothing():
    # lam = 0.97 on the empty graph: queues wander far above the 2 levels
    # tracked at the start, so the level arrays are doubled several times
    # mid-run; the run must be the same, bit for bit, as one that tracks
    # 64 levels from the start (same seed => same random numbers)
    init = np.zeros(60, np.int64)
    init[:10] = 1
    kw = dict(t_end=300.0, burn_in=20.0, seed=3, initial=init)
    a = simulate(g.empty(60), 0.97, 0.0, levels=2, **kw)
    b = simulate(g.empty(60), 0.97, 0.0, levels=64, **kw)
    assert a.final_queues.max() > 2 and a.levels > 2
    m = min(a.occupancy.size, b.occupancy.size)
    assert np.array_equal(a.occupancy[:m], b.occupancy[:m])
    assert not a.occupancy[m:].any() and not b.occupancy[m:].any()
    assert np.array_equal(a.final_queues, b.final_queues)
    assert a.events == b.events and a.mean_response_time == b.mean_response_time
    assert a.arrivals - a.departures == a.final_queues.sum() - init.sum()


def _first_choice(graph, mu, runs, lam=0.9):
    """Server that receives the first task (all queues empty at time 0).

    t_end = 1/(n lam) makes 'exactly one arrival and no departure' likely
    (~e^-1 * ...). Conditioning on it is harmless: whichever server is
    chosen, the total event rate after the first arrival is n lam + 1, so
    the event is independent of the choice."""
    n = graph.n
    counts = np.zeros(n, np.int64)
    for s in range(runs):
        r = simulate(graph, lam, mu, t_end=1.0 / (n * lam), seed=s)
        if r.arrivals == 1 and r.departures == 0:
            counts[np.argmax(r.final_queues)] += 1
    return counts


@pytest.mark.filterwarnings("ignore:standard errors unreliable:RuntimeWarning")
def test_ties_are_broken_uniformly():
    # star of 4, all empty, static: an arrival at the centre (prob 1/4) sees
    # 4 tied empty queues, one at a leaf sees 2 (itself and the centre).
    # Uniform tie-breaking gives the centre 1/4*1/4 + 3/4*1/2 = 7/16 and each
    # leaf 3/16; "always the first" (the arrival's own queue) would give the
    # centre 1/16.  Pearson chi-square with 3 d.o.f. at level 1e-3: a false
    # alarm has probability 1e-3 (and the seeds are fixed, so the test is
    # deterministic); against the first-candidate bias its power is ~1.
    c = _first_choice(STAR4, 0.0, 8000)
    p = np.array([7, 3, 3, 3]) / 16
    assert c.sum() > 2000
    chi2 = ((c - c.sum() * p) ** 2 / (c.sum() * p)).sum()
    assert chi2 < stats.chi2.ppf(1 - 1e-3, 3)


@pytest.mark.filterwarnings("ignore:standard errors unreliable:RuntimeWarning")
def test_fresh_permutation_is_uniform():
    # mu = inf: servers are placed by a fresh uniform permutation, so the
    # first task goes to a uniform server (a biased lazy shuffle would
    # favour the identity); same chi-square test, 3 d.o.f., level 1e-3
    c = _first_choice(STAR4, np.inf, 8000)
    assert c.sum() > 2000
    chi2 = ((c - c.sum() / 4) ** 2 / (c.sum() / 4)).sum()
    assert chi2 < stats.chi2.ppf(1 - 1e-3, 3)


def test_little_batchwise():
    # Both estimators of R are stationary means of the same run:
    # arrival side E[k+1] (a task joining k tasks waits k services and its
    # own, Exp(1) each) and Little's E[tasks per server] / lam.  Their
    # difference has mean ~0 (up to edge effects of order 1/(lam n b) per
    # batch of length b, here ~1e-5); its batch means give a t statistic
    # with 19 d.o.f. and P(|t| > 4) = 7.5e-4.  The s.e. itself must be small
    # (< 5e-3) so that the check has power: over seeds it is about 3e-3 at
    # this window of 200 time units (with the window of 50 used before
    # issue 19 it was 4e-3 to 8e-3, so the power floor passed by chance).
    lam = 0.8
    r = simulate(g.ring(3000), lam, 1.0, t_end=210, burn_in=10, seed=4, batches=20)
    d = r.batch_response_time - r.batch_occupancy[:, 1:].sum(axis=1) / lam
    se = d.std(ddof=1) / math.sqrt(d.size)
    assert se < 5e-3
    assert abs(d.mean()) < 4 * se


def test_burn_in_removes_the_initial_bias():
    # start every server with 5 tasks (lam = 0.5, ring, mu = 1): the excess
    # drains at rate >= 1 - lam = 0.5 per server, i.e. within ~10 time
    # units, and then relaxes at the fluid rate (~0.3 here); burn_in = 60
    # leaves a bias below e^{-0.3*50} ~ 3e-7.  The loaded and the empty
    # start must then agree within 4 combined s.e. at every level; without
    # burn-in the bias must show (> 4 s.e.), so the test can fail.
    lam, G = 0.5, g.ring(2000)
    kw = dict(t_end=160, burn_in=60, batches=10)
    loaded = simulate(G, lam, 1.0, initial=np.full(2000, 5), seed=1, **kw)
    empty_ = simulate(G, lam, 1.0, seed=2, **kw)
    for i in range(1, 4):
        se = math.hypot(loaded.occupancy_se[i], empty_.occupancy_se[i])
        assert abs(loaded.occupancy[i] - empty_.occupancy[i]) < 4 * se
    raw = simulate(G, lam, 1.0, initial=np.full(2000, 5), seed=1, t_end=15,
                   batches=10)
    se = math.hypot(raw.occupancy_se[2], empty_.occupancy_se[2])
    assert raw.occupancy[2] - empty_.occupancy[2] > 4 * se


def test_against_exact_ring3():
    # ring of 3 (= complete graph of 3), lam = 0.7, mu = 1: compare levels
    # 1..3 with the exact chain (L = 25: truncated mass < 1e-10).  20 batches
    # of length 1500 >> relaxation time (~5), so batch means are close to
    # independent; |z| < 4 for 3 levels has family-wise false-alarm
    # probability <= 3 * 7.5e-4 (Student t, 19 d.o.f.).
    ex = exact.stationary(g.ring(3), 0.7, 1.0, 25)
    assert ex.truncated_mass < 1e-10
    r = simulate(g.ring(3), 0.7, 1.0, t_end=30100, burn_in=100, seed=9)
    for i in range(1, 4):
        assert abs(r.occupancy[i] - ex.occupancy[i]) < 4 * r.occupancy_se[i]
    assert (abs(r.mean_response_time - ex.mean_response_time)
            < 4 * r.mean_response_time_se)


def test_against_exact_star4_resampled():
    # star of 4, lam = 0.6, mu = 2 (exercises the lazy permutation); same
    # argument as above (exact L = 14: truncated mass < 1e-8)
    ex = exact.stationary(STAR4, 0.6, 2.0, 14)
    assert ex.truncated_mass < 1e-8
    r = simulate(STAR4, 0.6, 2.0, t_end=20100, burn_in=100, seed=10)
    for i in range(1, 4):
        assert abs(r.occupancy[i] - ex.occupancy[i]) < 4 * r.occupancy_se[i]


BAD = [
    (dict(lam=0.0), ValueError, "lam"),
    (dict(lam=-1.0), ValueError, "lam"),
    (dict(lam=np.inf), ValueError, "lam"),
    (dict(lam=np.nan), ValueError, "lam"),
    (dict(lam="x"), TypeError, "lam"),
    (dict(mu=-0.1), ValueError, "mu"),
    (dict(mu=np.nan), ValueError, "mu"),
    (dict(t_end=0.0), ValueError, "t_end"),
    (dict(t_end=np.inf), ValueError, "t_end"),
    (dict(t_end=5.0, burn_in=5.0), ValueError, "t_end"),
    (dict(burn_in=-1.0), ValueError, "burn_in"),
    (dict(lam=1.1, burn_in=1.0), ValueError, "lam"),
    (dict(initial=np.zeros(3, int)), ValueError, "initial"),
    (dict(initial=np.zeros((10, 1), int)), ValueError, "initial"),
    (dict(initial=-np.ones(10, int)), ValueError, "initial"),
    (dict(initial=np.zeros(10, bool)), TypeError, "initial"),
    (dict(initial=np.array([0.9, 0.5])), ValueError, "initial"),
    (dict(initial=np.array([1.0, 0.2, 0.5])), ValueError, "initial"),
    (dict(initial=np.array([1.0, np.nan])), ValueError, "initial"),
    (dict(levels=0), ValueError, "levels"),
    (dict(levels=2.5), TypeError, "levels"),
    (dict(record_dt=0.0), ValueError, "record_dt"),
    (dict(seed=-1), ValueError, "seed"),
    (dict(seed=1.5), TypeError, "seed"),
    (dict(batches=1), ValueError, "batches"),
    (dict(batches=2.0), TypeError, "batches"),
]


@pytest.mark.parametrize("bad,exc,name", BAD, ids=[f"{b}" for b, _, _ in BAD])
def test_every_bad_input_is_named(bad, exc, name):
    kw = dict(lam=0.5, mu=0.0, t_end=10.0)
    kw.update(bad)
    with pytest.raises(exc, match=name):
        simulate(g.ring(10), kw.pop("lam"), kw.pop("mu"), **kw)


def test_replicate_validation():
    G = g.ring(10)
    with pytest.raises(ValueError, match="replications"):
        replicate(G, 0.5, replications=1, t_end=1)
    with pytest.raises(TypeError, match="replications"):
        replicate(G, 0.5, replications=2.0, t_end=1)
    with pytest.raises(ValueError, match="n_jobs"):
        replicate(G, 0.5, replications=2, n_jobs=0, t_end=1)
    with pytest.raises(TypeError, match="t_end"):
        replicate(G, 0.5, replications=2)
    with pytest.raises(ValueError, match="lam"):
        replicate(G, -0.5, replications=2, t_end=1)
    with pytest.warns(RuntimeWarning, match="lam"):
        replicate(G, 1.5, replications=2, t_end=1, seed=0)


def test_transient_lam_above_one_runs():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r = simulate(g.ring(50), 1.5, 1.0, t_end=5, seed=0)
    assert r.arrivals - r.departures == r.final_queues.sum()


@pytest.mark.filterwarnings("ignore:standard errors unreliable:RuntimeWarning")
@pytest.mark.parametrize("mu", [50.0, np.inf])
def test_epoch_stamp_wraparound(monkeypatch, mu):
    # the permutation stamps are 32-bit; after EPOCH_MAX epochs the stamp
    # arrays are cleared and counting restarts.  Forcing that every 7 epochs
    # must not change the run (it uses no random numbers).
    import sys
    mod = sys.modules["qlib.sim.run"]   # simulate() reads EPOCH_MAX there
    kw = dict(t_end=20.0, seed=5, kernel="event")   # the event kernel's stamps
    a = simulate(g.ring(100), 0.9, mu, **kw)
    monkeypatch.setattr(mod, "EPOCH_MAX", 7)
    b = simulate(g.ring(100), 0.9, mu, **kw)
    assert a.resamples > 100
    _same(a, b)
