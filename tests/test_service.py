"""General service times (issue 21): laws, the general-service kernel, and
its validation against exact values.

Statistical checks use independent replications (Student t, r - 1 degrees
of freedom) in Holm families at level 0.99, and print the smallest
deviation each family could have detected (power 0.8).
"""
import math

import numpy as np
import pytest
from scipy import stats as sps

import qlib
from qlib import exact, graphs as g
from qlib.sim import service as sv
from qlib.stats import detectable, replication_ci, simultaneous

LEVEL = 0.99
REPS = 10


def laws():
    return [sv.deterministic(), sv.exponential(), sv.erlang(2), sv.hyperexponential(4),
            sv.lognormal(2), sv.pareto(4.5)]


def test_validation_names_the_parameter():
    with pytest.raises(ValueError, match="mean"):
        sv.deterministic(mean=2)
    with pytest.raises(ValueError, match="mean"):
        sv.erlang(3, mean=0.5)
    with pytest.raises(ValueError, match="scv"):
        sv.lognormal(-0.1)
    with pytest.raises(ValueError, match="scv"):
        sv.hyperexponential(-1)
    with pytest.raises(ValueError, match="scv"):
        sv.hyperexponential(0.5)
    with pytest.raises(ValueError, match="alpha"):
        sv.pareto(2)
    with pytest.raises(ValueError, match="alpha"):
        sv.pareto(1.5)
    with pytest.raises(ValueError, match="k"):
        sv.erlang(0)
    with pytest.raises(TypeError, match="k"):
        sv.erlang(2.5)
    with pytest.raises(ValueError, match="service"):
        qlib.simulate(g.ring(10), 0.5, t_end=1, service="erlang")
    with pytest.raises(TypeError, match="service"):
        qlib.simulate(g.ring(10), 0.5, t_end=1, service=3)
    with pytest.raises(TypeError, match="service"):
        qlib.replicate(g.ring(10), 0.5, t_end=1, replications=2, service=3)


def test_laws_moments_and_scv():
    # the stated scv against the law's parameters by an independent route:
    # numerical integration of the cdf (E S = int (1-F), E S^2 = int 2x(1-F))
    from scipy.integrate import quad
    for law in laws()[1:]:
        tail = lambda x: 1.0 - float(law.cdf(x))  # noqa: E731
        m1 = quad(tail, 0, np.inf, limit=200)[0]
        m2 = quad(lambda x: 2 * x * tail(x), 0, np.inf, limit=200)[0]
        assert abs(m1 - 1) < 1e-6, law.name
        assert abs(m2 - 1 - law.scv) < 1e-5 * (1 + law.scv), law.name
    assert np.all(sv.deterministic().sample(100, 1) == 1.0)


def test_samplers_against_cdf():
    # Kolmogorov-Smirnov per law, Bonferroni over the five continuous laws
    N = 20_000
    m = 5
    crit = sps.kstwo.ppf(1 - (1 - LEVEL) / m, N)
    print(f"KS: N={N}, family level {LEVEL}: detectable sup|F_N - F| > {crit:.4f}")
    for k, law in enumerate(laws()[1:]):
        x = law.sample(N, seed=10 + k)
        d = sps.kstest(x, law.cdf).statistic
        print(f"  {law.name:22s} D = {d:.4f}")
        assert d < crit, law.name


def test_md1_closed_form_against_embedded_chain():
    # independent route: the embedded chain at departures, whose law equals
    # the time-stationary one (Poisson arrivals, unit jumps):
    # pi_{j+1} a_0 = pi_j - pi_0 a_j - sum_{i=1}^{j} pi_i a_{j-i+1}
    for lam in (0.5, 0.9):
        K = 25
        a = sps.poisson.pmf(np.arange(K + 2), lam)
        pi = np.zeros(K + 1)
        pi[0] = 1 - lam
        for j in range(K):
            pi[j + 1] = (pi[j] - pi[0] * a[j] - sum(pi[i] * a[j - i + 1]
                                                     for i in range(1, j + 1))) / a[0]
        closed = sv.md1_distribution(lam, K)
        assert np.allclose(closed[:16], pi[:16], rtol=1e-8, atol=1e-14)


def _pk_cell(law, lam, seed):
    # relaxation time of M/G/1 ~ (1 + c^2)/2 / (1 - sqrt(lam))^2 (M/M/1's,
    # scaled by the second moment); burn-in 6 of them, window 20
    tau = (1 + law.scv) / 2 / (1 - math.sqrt(lam)) ** 2
    return qlib.replicate(g.empty(40), lam, 0.0, replications=REPS, seed=seed,
                          t_end=26 * tau, burn_in=6 * tau, service=law, batches=4)


def test_pollaczek_khinchine_and_md1():
    est, se, target, names = [], [], [], []
    md1 = None
    for i, lam in enumerate((0.5, 0.9)):
        for j, law in enumerate(laws()):
            rep = _pk_cell(law, lam, seed=100 + 10 * i + j)
            est.append(rep.mean_response_time)
            se.append(rep.response_time_se)
            target.append(sv.pollaczek_khinchine(lam, law.scv))
            names.append(f"{law.name} lam={lam}")
            if lam == 0.9 and law.code == sv.DET:
                md1 = rep
    fam = simultaneous(est, se, df=REPS - 1, target=target, level=LEVEL)
    print(fam.report("Pollaczek-Khinchine R, 12 cells"))
    for nm, e, t in zip(names, est, target):
        print(f"  {nm:32s} R = {e:.4f}  PK = {t:.4f}")
    assert fam.passed
    # M/D/1 at lam = 0.9: q(i) = P(N >= i) from the closed form
    p = sv.md1_distribution(0.9, 12)
    q_exact = 1 - np.concatenate([[0], np.cumsum(p)])[:13]
    occ = np.array([r.occupancy[:9] for r in md1.results])
    ci = [replication_ci(occ[:, i]) for i in range(1, 9)]
    fam = simultaneous([c.mean for c in ci], [c.se for c in ci], df=REPS - 1,
                       target=q_exact[1:9], level=LEVEL)
    print(fam.report("M/D/1 q(1..8), lam = 0.9"))
    assert fam.passed


def test_exponential_law_matches_exponential_kernel():
    kw = dict(replications=6, t_end=300, burn_in=60, batches=4)
    a = qlib.replicate(g.ring(400), 0.9, 2.0, seed=1, **kw)
    b = qlib.replicate(g.ring(400), 0.9, 2.0, seed=2, service=sv.exponential(), **kw)
    d = [b.occupancy[i] - a.occupancy[i] for i in range(1, 5)]
    s = [math.hypot(a.occupancy_se[i], b.occupancy_se[i]) for i in range(1, 5)]
    d.append(b.mean_response_time - a.mean_response_time)
    s.append(math.hypot(a.response_time_se, b.response_time_se))
    # Welch with equal r: df >= r - 1
    fam = simultaneous(d, s, df=5, target=0.0, level=LEVEL)
    print(fam.report("general path (Exp law) - exp kernel: q(1..4), R"))
    assert fam.passed


@pytest.mark.parametrize("law", [sv.erlang(2), sv.hyperexponential(4)],
                         ids=["erlang2", "hyperexp4"])
def test_pair_against_exact_chain_with_phases(law):
    lam, L = 0.7, 40
    pair = g.from_edges(2, [(0, 1)])
    ex = exact.stationary_phase(pair, lam, 0.0, law, L)
    # the truncation moves q(i) and R by O(truncated mass) <= 1e-4, a
    # hundredth of the smallest deviation this family can detect (~1e-2)
    assert ex.truncated_mass < 1e-4
    est, se, target = [], [], []
    for k, mu in enumerate((0.0, math.inf)):
        rep = qlib.replicate(pair, lam, mu, replications=8, seed=7 + k, t_end=20_000,
                             burn_in=200, service=law, batches=4)
        for i in (1, 2, 3):
            est.append(rep.occupancy[i])
            se.append(rep.occupancy_se[i])
            target.append(ex.occupancy[i])
        est.append(rep.mean_response_time)
        se.append(rep.response_time_se)
        target.append(ex.mean_response_time)
    fam = simultaneous(est, se, df=7, target=target, level=LEVEL)
    print(fam.report(f"pair, {law.name}, mu in (0, inf): q(1..3), R vs exact"))
    assert fam.passed


def test_exact_phase_chain_reduces_to_known_cases():
    # m = 1 phase: the chain of qlib.exact.stationary (independent code);
    # n = 1: M/PH/1 against Pollaczek-Khinchine
    path = g.from_edges(3, [(0, 1), (1, 2)])
    for mu in (0.0, 1.5, math.inf):
        a = exact.stationary(path, 0.5, mu, 8)
        b = exact.stationary_phase(path, 0.5, mu, sv.exponential(), 8)
        assert np.allclose(a.occupancy, b.occupancy, atol=1e-10)
    for law in (sv.erlang(3), sv.hyperexponential(4)):
        b = exact.stationary_phase(g.empty(1), 0.6, 0.0, law, 200)
        assert abs(b.mean_response_time - sv.pollaczek_khinchine(0.6, law.scv)) < 1e-6


def test_recorded_response_times_mm1_sojourn():
    # n independent M/M/1 queues: the FIFO sojourn time is Exp(1 - lam);
    # a random subsample of tasks from many servers is nearly independent
    lam = 0.5
    r = qlib.simulate(g.empty(2000), lam, t_end=300, burn_in=100, seed=3,
                      record_response=True, batches=4)
    x = np.random.default_rng(0).choice(r.response_times, 3000, replace=False)
    res = sps.kstest(x, sps.expon(scale=1 / (1 - lam)).cdf)
    crit = sps.kstwo.ppf(LEVEL, x.size)
    print(f"M/M/1 sojourn: KS D = {res.statistic:.4f}, detectable > {crit:.4f}")
    assert res.statistic < crit


@pytest.mark.filterwarnings("ignore:standard errors unreliable:RuntimeWarning")
def test_exp_path_bitwise_unchanged_and_state_consistency():
    a = qlib.simulate(g.ring(200), 0.8, 1.0, t_end=20, seed=5)
    b = qlib.simulate(g.ring(200), 0.8, 1.0, t_end=20, seed=5, service="exp")
    c = qlib.simulate(g.ring(200), 0.8, 1.0, t_end=20, seed=5, service=None)
    assert type(a) is type(b) is type(c) is qlib.SimulationResult
    assert np.array_equal(a.occupancy, b.occupancy) and a.events == b.events
    assert np.array_equal(a.occupancy, c.occupancy)
    law = sv.hyperexponential(4)
    kw = dict(t_end=30, seed=9, service=law, levels=2, record_response=True,
              initial=np.full(100, 5))
    r1 = qlib.simulate(g.ring(100), 0.95, math.inf, **kw)
    r2 = qlib.simulate(g.ring(100), 0.95, math.inf, progress=True, **kw)
    assert np.array_equal(r1.occupancy, r2.occupancy)       # slicing, growth
    assert np.array_equal(r1.response_times, r2.response_times)
    assert r1.arrivals - r1.departures + 500 == r1.final_queues.sum()
    assert r1.response_times.size <= r1.departures
