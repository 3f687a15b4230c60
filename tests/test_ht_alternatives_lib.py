"""Tests for the pooled-queue formulas and the JSQ(d) simulator of
qlib.halfin_whitt (chapter ht_alternatives).

Exact checks compare independent routes: Erlang C by the Erlang B recursion
against the M/M/n birth–death chain solved by detailed balance in 50-digit
arithmetic, and against the incomplete gamma function at large n.  The
statistical checks use independent replications (Student-t, r − 1 degrees
of freedom, Holm over the family) with fixed seeds, and print the deviation
they could have detected.
"""
import math

import mpmath as mp
import numpy as np
import pytest

from qlib import stats
from qlib.graphs import ring
from qlib.halfin_whitt import erlang_c, halfin_whitt_alpha, jsq_d_fixed_point, simulate_jsq_d
from qlib.sim import replicate


# ------------------------------------------------------------------ Erlang C

def _mmn_chain_pwait(n, lam, dps=50):
    """P(all n busy) of the M/M/n birth–death chain: detailed balance
    π_k = π_{k−1} λ / min(k, n), the tail k >= n summed as a geometric series."""
    with mp.workdps(dps):
        a = mp.mpf(lam)
        pi, s = mp.mpf(1), mp.mpf(1)
        for k in range(1, n):
            pi = pi * a / k
            s += pi
        pin = pi * a / n
        tail = pin / (1 - a / n)
        return float(tail / (s + tail))


@pytest.mark.parametrize("n", [1, 2, 3, 7, 20, 50, 100, 200])
@pytest.mark.parametrize("load", [0.05, 0.5, 0.9, 0.999])
def test_erlang_c_matches_birth_death_chain(n, load):
    lam = load * n
    exact = _mmn_chain_pwait(n, lam)
    assert abs(erlang_c(n, lam) - exact) <= 1e-12 * max(exact, 1e-300) + 1e-300


@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0])
def test_erlang_c_halfin_whitt_load_to_1e12(beta):
    for n in (10, 100, 200):
        lam = n - beta * math.sqrt(n)
        if lam <= 0:
            continue
        exact = _mmn_chain_pwait(n, lam)
        assert abs(erlang_c(n, lam) - exact) <= 1e-12 * exact


@pytest.mark.parametrize("n", [10**5, 10**6])
def test_erlang_c_large_n_against_incomplete_gamma(n):
    """B = P(Poisson(a) = n) / P(Poisson(a) <= n), the cdf by the regularized
    upper incomplete gamma Q(n + 1, a), all in 40 digits."""
    lam = n - math.sqrt(n)
    with mp.workdps(40):
        a = mp.mpf(lam)
        logpmf = -a + n * mp.log(a) - mp.loggamma(n + 1)
        b = mp.e ** logpmf / mp.gammainc(n + 1, a, mp.inf, regularized=True)
        c = b / (1 - a / n * (1 - b))
        exact = float(c)
    # relative error of the recursion: a few units of rounding per step at most
    assert abs(erlang_c(n, lam) - exact) <= 1e-12 * exact


def test_halfin_whitt_alpha_values():
    """Against the formula in 50 digits (independent of the log-space route),
    including large beta where Φ/φ overflows a naive float evaluation."""
    for beta in (0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0):
        with mp.workdps(50):
            b = mp.mpf(beta)
            exact = 1 / (1 + b * mp.ncdf(b) / mp.npdf(b))
        got = halfin_whitt_alpha(beta)
        assert abs(got - float(exact)) <= 1e-13 * float(exact)
    arr = halfin_whitt_alpha(np.array([0.5, 1.0]))
    assert arr.shape == (2,)
    assert arr[0] == halfin_whitt_alpha(0.5)


@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0])
def test_halfin_whitt_alpha_is_the_limit_of_erlang_c(beta):
    """C(n, n − β√n) − α(β) = O(n^{-1/2}): the scaled difference at n = 10^4
    and 10^6 agrees to 5% (a wrong limit would leave a difference of order
    one that √n blows up by a factor 10 between the two)."""
    alpha = halfin_whitt_alpha(beta)
    g = [math.sqrt(n) * (erlang_c(n, n - beta * math.sqrt(n)) - alpha)
         for n in (10**4, 10**6)]
    assert abs(g[1] / math.sqrt(10**6)) < 1e-3
    assert abs(g[0] - g[1]) <= 0.05 * abs(g[1])


@pytest.mark.parametrize("args, exc, word", [
    ((10, 10.0), ValueError, "lam"),
    ((10, 11.0), ValueError, "lam"),
    ((10, 0.0), ValueError, "lam"),
    ((10, -1.0), ValueError, "lam"),
    ((10, float("nan")), ValueError, "lam"),
    ((10, "5"), TypeError, "lam"),
    ((0, 0.5), ValueError, "n"),
    ((10.5, 3.0), TypeError, "n"),
    ((True, 0.5), TypeError, "n"),
])
def test_erlang_c_rejects_bad_input(args, exc, word):
    with pytest.raises(exc, match=word):
        erlang_c(*args)


@pytest.mark.parametrize("beta, exc", [
    (0.0, ValueError), (-1.0, ValueError), (float("nan"), ValueError),
    (float("inf"), ValueError), ("1", TypeError), (True, TypeError),
    ([1.0, -2.0], ValueError)])
def test_halfin_whitt_alpha_rejects_bad_beta(beta, exc):
    with pytest.raises(exc, match="beta"):
        halfin_whitt_alpha(beta)


# ------------------------------------------------------------------ JSQ(d)

@pytest.mark.parametrize("kwargs, word", [
    (dict(d=0), "d must"), (dict(d=21), "d must"), (dict(d=[3, 0]), "d must"),
    (dict(d=2.5), "d must"), (dict(d=[]), "d must"),
    (dict(d=2, replications=1), "replications"), (dict(d=2, nblocks=1), "nblocks"),
    (dict(d=2, n=1), "n must"), (dict(d=2, beta=5.0), "beta"),
    (dict(d=2, initial=[3, 5]), "initial"),
])
def test_simulate_jsq_d_rejects_bad_input(kwargs, word):
    kw = dict(n=20, beta=1.0, t_end=1.0)
    kw.update(kwargs)
    with pytest.raises(ValueError, match=word):
        simulate_jsq_d(**kw)


def test_coupled_chains_equal_the_single_runs():
    """Each chain of a coupled run uses the same random numbers as a run of
    that d alone (two draws per event, whatever the other chains do)."""
    both = simulate_jsq_d(30, 1.0, [30, 2], t_end=20.0, burn_in=2.0,
                          replications=2, seed=5)
    for j, d in enumerate((30, 2)):
        one = simulate_jsq_d(30, 1.0, d, t_end=20.0, burn_in=2.0, replications=2, seed=5)
        np.testing.assert_array_equal(one.mean_q2, both.mean_q2[:, j])
        np.testing.assert_array_equal(one.p_wait, both.p_wait[:, j])


def test_random_routing_is_independent_mm1():
    """d = 1: every queue is M/M/1 at ρ = 1 − β/√n, so E[Q_i]/n = ρ^i and
    P(wait) = ρ.  n = 16, β = 2 (ρ = 1/2: relaxation time of order ten)."""
    n, beta = 16, 2.0
    rho = 1 - beta / math.sqrt(n)
    r = simulate_jsq_d(n, beta, 1, t_end=3000.0, burn_in=50.0, replications=10, seed=11)
    est = [r.mean_q1 / n, r.mean_q2 / n, r.mean_q3 / n, r.p_wait]
    cis = [stats.replication_ci(x) for x in est]
    fam = stats.simultaneous([c.mean for c in cis], [c.se for c in cis], df=9,
                             target=[rho, rho**2, rho**3, rho], level=0.99)
    print(fam.report("d = 1 against M/M/1"))
    assert fam.passed


def test_jsq_d_against_per_server_simulator():
    """An independent route: qlib.simulate at μ = ∞ on the ring (closed
    neighbourhoods of three distinct positions under a fresh uniform
    permutation) is JSQ(3) without replacement; it tracks every server."""
    n, beta = 40, 1.0
    lam = n - beta * math.sqrt(n)
    occ = simulate_jsq_d(n, beta, 3, t_end=2000.0, burn_in=50.0, replications=8, seed=3)
    per = replicate(ring(n), lam / n, math.inf, replications=8, seed=4,
                    t_end=2000.0, burn_in=50.0, n_jobs=1)
    mine = [stats.replication_ci(x / n) for x in (occ.mean_q1, occ.mean_q2, occ.mean_q3)]
    theirs = np.array([[res.occupancy[i] for i in (1, 2, 3)] for res in per.results])
    ci2 = stats.replication_ci(theirs)
    diff = np.array([c.mean for c in mine]) - ci2.mean
    se = np.sqrt(np.array([c.se for c in mine]) ** 2 + ci2.se ** 2)
    fam = stats.simultaneous(diff, se, df=7, level=0.99)
    print(fam.report("occupancy chain vs per-server simulator, JSQ(3)"))
    assert fam.passed


def test_jsq_d_fixed_point():
    fp = jsq_d_fixed_point(100, 1.0, 2)
    rho = 0.9
    np.testing.assert_allclose(fp["q"][:3], [rho, rho**3, rho**7], rtol=1e-14)
    assert fp["p_wait"] == pytest.approx(rho**2, rel=1e-14)
    one = jsq_d_fixed_point(100, 1.0, 1)
    assert one["mean_wait"] == pytest.approx(rho / (1 - rho), rel=1e-12)
    # the d = 1 series Σ_{i>=2} ρ^i / ρ sums to the same M/M/1 value
    assert one["q"][1:].sum() / rho == pytest.approx(rho / (1 - rho), rel=1e-10)
