"""The pipelined exponential kernel of qlib.simulate (issue 19).

* the pipeline depth changes no bit of the result (the draws of an event do
  not depend on the state; each stream is used in event order);
* the local Fisher–Yates maps of mu = inf place the same servers as the
  stamped arrays from the same draws;
* the slot map ``_slot`` is uniform on the free slots (exact count);
* the ziggurat ``_exp1`` draws Exp(1);
* on the empty graph, from a stationary start, the kernel (pipelined at
  n = 2**15, local maps at mu = inf) reproduces M/M/1: q(i) = lam^i and
  R = 1/(1 - lam) (independent replications, Holm family, qlib.stats).
Exactness of the whole simulator (tiny-graph chains, M/M/1) is checked in
tests/test_simulate.py and tests/test_exact.py.
"""
import math
import sys
import warnings

import numba
import numpy as np
import pytest
from scipy import stats as sps

from qlib import graphs as g
from qlib.sim import simulate

S = sys.modules["qlib.sim.run"]      # simulate() reads _depth here
K = sys.modules["qlib.sim.kernel"]
RNG = sys.modules["qlib.sim.rng"]


def _run(G, mu, depth, monkeypatch, **kw):
    monkeypatch.setattr(S, "_depth", lambda n: depth)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return simulate(G, 0.85, mu, t_end=15.0, burn_in=3.0, seed=7, record_dt=0.5, **kw)


@pytest.mark.parametrize("mu", [0.0, 2.0, 300.0, math.inf])
@pytest.mark.parametrize("G", [g.ring(300), g.random_regular(200, 3, seed=2),
                               g.double_star(40)], ids=["ring", "rr3", "double_star"])
def test_depth_changes_no_bit(G, mu, monkeypatch):
    # a loaded start makes the kernel grow its levels (a restart), and
    # progress=True cuts the run into 100 slices (more restarts)
    init = np.zeros(G.n, np.int64)
    init[::7] = 20
    ref = _run(G, mu, 1, monkeypatch, initial=init)
    for depth, progress in ((4, False), (32, True), (64, False)):
        r = _run(G, mu, depth, monkeypatch, initial=init, progress=progress)
        assert r.events == ref.events and r.resamples == ref.resamples
        for name in ("occupancy", "batch_occupancy", "paths", "final_queues"):
            assert np.array_equal(getattr(r, name), getattr(ref, name)), name
        assert r.mean_response_time == ref.mean_response_time
    assert ref.levels > 16                                   # levels did grow
    assert ref.arrivals - ref.departures == ref.final_queues.sum() - init.sum()


@numba.njit
def _both(pos, us, n, lslot, lval, lpos, lsrv):
    """Place the positions of one arrival with _place (fresh epoch) and with
    _place_local; return both server lists."""
    P = np.full(n, -1, np.int64)
    A = np.full(n, -1, np.int64)
    a = np.empty(pos.size, np.int64)
    b = np.empty(pos.size, np.int64)
    kc = 0
    kl = 0
    for i in range(pos.size):
        a[i], kc = K._place(pos[i], us[i], 1, P, A, kc, n)
        b[i], kl = K._place_local(pos[i], us[i], kl, n, lslot, lval, lpos, lsrv)
    return a, b, kc, kl


def test_local_maps_place_the_same_servers():
    rng = np.random.default_rng(3)
    m = 9
    bufs = [np.empty(m, np.int64) for _ in range(4)]
    for n in (m, 12, 1000):
        for _ in range(300):
            # positions may repeat (as in a multigraph) and the uniforms hit
            # low slots often, so that slots already moved are read again
            pos = rng.integers(0, min(n, 6), m)
            us = rng.random(m) ** 3
            a, b, kc, kl = _both(pos, us, n, *bufs)
            assert np.array_equal(a, b) and kc == kl == np.unique(pos).size
            assert np.unique(a).size == kc             # distinct servers


def test_slot_is_uniform_on_the_free_slots():
    # exact: u on a fine grid of N points; each free slot must receive N/(n-kc)
    # of them up to the rounding of the two floor steps (a few points)
    N = 2**20
    u = (np.arange(N) + 0.5) / N
    slot = np.vectorize(K._slot)
    for n, kc in ((10, 0), (10, 3), (10, 9), (1000, 999), (7, 4)):
        j = slot(u, kc, n)
        assert j.min() == kc and j.max() == n - 1
        cnt = np.bincount(j - kc, minlength=n - kc)
        assert np.abs(cnt - N / (n - kc)).max() <= 3, (n, kc, cnt)


@numba.njit
def _exps(m, seed_words):
    s0, s1, s2, s3 = seed_words[0], seed_words[1], seed_words[2], seed_words[3]
    out = np.empty(m)
    for i in range(m):
        out[i], s0, s1, s2, s3 = RNG._exp1(s0, s1, s2, s3)
    return out


def test_ziggurat_draws_exp1():
    # 10^6 draws: mean and P(X > x) at a few points within 4.5 s.e. (Bonferroni
    # over 5 checks at ~7e-6 each); the s.e. is 1e-3 for the mean, so a
    # relative error of the scale of 0.5 % would be caught; KS as a whole
    x = _exps(10**6, np.random.SeedSequence(11).generate_state(4, np.uint64))
    m = x.size
    assert abs(x.mean() - 1) < 4.5 / math.sqrt(m)
    for t in (0.1, 1.0, 3.0, 7.7):     # 7.7: beyond the ziggurat's base, the tail
        p = math.exp(-t)
        assert abs((x > t).mean() - p) < 4.5 * math.sqrt(p * (1 - p) / m), t
    assert sps.kstest(x, "expon").pvalue > 1e-3


# (lam, mu, n, t_end): n = 2**15 runs the pipeline (depth 32) with the lazy
# permutation; n = 1000 runs depth 1 with the local maps of mu = inf
_MM1 = [(0.8, 1.0, 2**15, 40.0, 6), (0.5, math.inf, 1000, 2000.0, 4)]


def test_empty_graph_is_stationary_mm1():
    # Without edges every server is an M/M/1 queue of load lam, whatever mu.
    # kernel="event": this file tests the event kernel's pipeline (the default
    # runs these designs on the uniformized kernel, checked in its own files).
    # Each replication starts from an exact stationary draw (i.i.d. geometric
    # queues, P(X >= i) = lam^i), so E q(t, i) = lam^i at every t and no
    # burn-in is needed: any bias of the event kernel (time increments,
    # event choice, uniformization, slicing) shows up directly.  Independent
    # replications, Student-t with R - 1 d.o.f., levels 1..K and the
    # arrival-side mean response time 1/(1 - lam), one Holm family (about
    # 1e8 events; the detectable deviation of q(1) is about 0.1 % of it).
    from qlib import stats
    R = 20
    est, se, target = [], [], []
    for k, (lam, mu, n, t_end, K) in enumerate(_MM1):
        occ, resp = [], []
        for r in range(R):
            ss = np.random.SeedSequence([19, k, r])
            x0 = np.random.default_rng(ss.spawn(1)[0]).geometric(1 - lam, n) - 1
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                res = simulate(g.empty(n), lam, mu, t_end=t_end, seed=ss,
                               initial=x0, batches=2, kernel="event")
            occ.append(res.occupancy[1:K + 1])
            resp.append(res.mean_response_time)
        for col in [*np.array(occ).T, resp]:
            ci = stats.replication_ci(np.asarray(col))
            est.append(ci.mean)
            se.append(ci.se)
        target += [*lam ** np.arange(1, K + 1), 1 / (1 - lam)]
    fam = stats.simultaneous(est, se, df=R - 1, target=target)
    print(fam.report("empty graph vs stationary M/M/1 (pipeline and local maps)"))
    print("relative deviations:", np.round(np.array(est) / np.array(target) - 1, 5))
    print("detectable, relative:", np.round(fam.detectable / np.array(target), 5))
    assert fam.passed
