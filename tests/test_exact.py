"""qlib.exact against closed forms and against independent brute-force chains.

Everything here is deterministic linear algebra, so the tolerances are
rounding tolerances (1e-10 on probabilities), except where a truncation is
compared with the untruncated model; there the gap is bounded in closed form.
"""
import math
from itertools import permutations, product

import numpy as np
import pytest

from qlib import exact
from qlib import graphs as g

STAR4 = g.from_edges(4, [(0, 1), (0, 2), (0, 3)])
MATCH4 = g.from_edges(4, [(0, 1), (2, 3)])


# ------------------------------------------------------------ helpers ----
def _left_null(G):
    """Stationary law of a dense generator (x G = 0, sum x = 1)."""
    A = G.T.copy()
    A[0] = 1.0                    # replace one (redundant) balance equation
    b = np.zeros(G.shape[0])
    b[0] = 1.0
    return np.linalg.solve(A, b)


def brute_force(graph, lam, mu, L):
    """The position chain on {0..L}^n with the resampling written as the
    average over all n! permutations: a dense generator, no lumping, no
    multiset trick, no component splitting.  Returns q(0..L)."""
    n = graph.n
    states = list(product(range(L + 1), repeat=n))
    index = {s: k for k, s in enumerate(states)}
    perms = list(permutations(range(n)))
    G = np.zeros((len(states), len(states)))
    for k, s in enumerate(states):
        for p in range(n):
            nb = [p] + [int(v) for v in graph.neighbors(p)]
            m = min(s[v] for v in nb)
            tied = [v for v in nb if s[v] == m]
            for v in tied if m < L else ():     # m == L: blocked
                t = list(s)
                t[v] += 1
                G[k, index[tuple(t)]] += lam / len(tied)
            if s[p] > 0:
                t = list(s)
                t[p] -= 1
                G[k, index[tuple(t)]] += 1.0
        for perm in perms:
            G[k, index[tuple(s[perm[p]] for p in range(n))]] += mu / len(perms)
        G[k, k] -= G[k].sum()
    pi = _left_null(G)
    Y = np.array(states)
    return np.array([(pi[:, None] * (Y >= i)).sum() / n for i in range(L + 1)])


def jsq_complete(n, lam, L):
    """JSQ on n fully connected servers: the sorted queue vector is a Markov
    chain (an arrival, at total rate lam n, joins a shortest queue; each busy
    server completes at rate 1).  Returns q(0..L) and the mean response time
    by Little's law."""
    from itertools import combinations_with_replacement
    states = list(combinations_with_replacement(range(L + 1), n))
    index = {s: k for k, s in enumerate(states)}
    G = np.zeros((len(states), len(states)))
    for k, s in enumerate(states):
        if s[0] < L:
            t = sorted((s[0] + 1,) + s[1:])
            G[k, index[tuple(t)]] += lam * n
        for j in range(n):
            if s[j] > 0 and (j == 0 or s[j] != s[j - 1]):
                mult = s.count(s[j])
                t = sorted(s[:j] + (s[j] - 1,) + s[j + 1:])
                G[k, index[tuple(t)]] += mult
        G[k, k] -= G[k].sum()
    pi = _left_null(G)
    S = np.array(states)
    q = np.array([(pi[:, None] * (S >= i)).sum() / n for i in range(L + 1)])
    blocked = pi[S[:, 0] == L].sum()
    return q, (pi @ S.sum(axis=1)) / (lam * n * (1 - blocked))


# -------------------------------------------------------------- tests ----
@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("mu", [0.0, 1.5])
def test_empty_graph_is_mm1_with_blocking(n, mu):
    # no edges: every queue is an M/M/1/L queue (resampling moves queues
    # around but cannot change the law of any one of them)
    lam, L = 0.6, 8
    r = exact.stationary(g.empty(n), lam, mu, L)
    i = np.arange(L + 1)
    z = 1 - lam ** (L + 1)
    q_trunc = (lam ** i - lam ** (L + 1)) / z        # P(X >= i), M/M/1/L
    assert np.allclose(r.occupancy, q_trunc, atol=1e-12, rtol=0)
    # the truncated law differs from q(i) = lam^i by
    # lam^(L+1) (1 - lam^i) / (1 - lam^(L+1)) <= lam^(L+1) / z
    assert np.all(np.abs(r.occupancy - lam ** i) <= lam ** (L + 1) / z)
    pL = (1 - lam) * lam ** L / z                   # P(X = L)
    assert r.blocking_probability == pytest.approx(pL, abs=1e-12)
    assert r.truncated_mass == pytest.approx(1 - (1 - pL) ** n, abs=1e-12)
    EX = q_trunc[1:].sum()
    assert r.mean_response_time == pytest.approx(EX / (lam * (1 - pL)),
                                                 rel=1e-10)


def test_empty_graph_tends_to_mm1():
    # with L = 40 the gap to q(i) = lam^i and R = 1/(1 - lam) is below
    # lam^41 / (1 - lam^41) ~ 1e-9 (lam = 0.6)
    lam = 0.6
    r = exact.stationary(g.empty(2), lam, 0.0, 40)
    assert np.allclose(r.occupancy, lam ** np.arange(41), atol=1e-8, rtol=0)
    assert r.mean_response_time == pytest.approx(1 / (1 - lam), rel=1e-7)


@pytest.mark.parametrize("n", [2, 3])
def test_complete_graph_is_jsq_and_mu_irrelevant(n):
    # on the complete graph every position sees every server, so the
    # relabelling does nothing: mu = 0, 2 and inf give the same law, which
    # is that of plain JSQ on n servers (an independent chain, above)
    lam, L = 0.7, 9
    q, R = jsq_complete(n, lam, L)
    for mu in (0.0, 2.0, math.inf):
        r = exact.stationary(g.complete(n), lam, mu, L)
        assert np.allclose(r.occupancy, q, atol=1e-10, rtol=0)
        assert r.mean_response_time == pytest.approx(R, rel=1e-10)


@pytest.mark.parametrize("graph", [g.ring(4), STAR4, MATCH4, g.ring(3),
                                   g.from_edges(3, [(0, 1)])],
                         ids=["ring4", "star4", "matching4", "ring3", "edge+1"])
@pytest.mark.parametrize("mu", [0.0, 0.7])
def test_against_brute_force_chain(graph, mu):
    # checks the automorphism lumping, the multiset form of the resampling
    # and the component splitting against the unlumped dense chain
    L = 3
    lam = 0.8
    r = exact.stationary(graph, lam, mu, L)
    assert np.allclose(r.occupancy, brute_force(graph, lam, mu, L),
                       atol=1e-10, rtol=0)


@pytest.mark.parametrize("graph", [g.ring(4), STAR4, MATCH4],
                         ids=["ring4", "star4", "matching4"])
@pytest.mark.parametrize("mu", [0.0, 1.0, math.inf])
def test_distribution_and_little(graph, mu):
    r = exact.stationary(graph, 0.7, mu, 10)
    assert np.allclose(r.marginals.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(r.marginals >= 0)
    assert r.occupancy[0] == 1.0
    assert np.all(np.diff(r.occupancy) <= 1e-15)
    # q(1) = fraction busy = throughput / n = lam (1 - blocking)
    assert r.occupancy[1] == pytest.approx(0.7 * (1 - r.blocking_probability),
                                           abs=1e-10)
    # Little's law holds exactly in the truncated chain: both estimators of
    # R are computed from the same stationary law and must agree to rounding
    assert r.mean_response_time == pytest.approx(r.little_response_time,
                                                 rel=1e-10)


@pytest.mark.parametrize("mu", [0.0, 1.0, math.inf])
def test_truncation_shrinks(mu):
    G = g.ring(4)
    res = [exact.stationary(G, 0.7, mu, L) for L in (4, 6, 8, 10)]
    tm = [r.truncated_mass for r in res]
    assert all(a > b > 0 for a, b in zip(tm, tm[1:]))
    gaps = [np.abs(a.occupancy[:5] - b.occupancy[:5]).max()
            for a, b in zip(res, res[1:])]
    assert all(a > b for a, b in zip(gaps, gaps[1:]))


def test_large_mu_tends_to_infinite_mu():
    # mu = inf is solved by a different chain (the sorted vector); finite
    # large mu must approach it, the gap shrinking like 1/mu
    G, L = STAR4, 8
    inf = exact.stationary(G, 0.7, math.inf, L).occupancy
    d = [np.abs(exact.stationary(G, 0.7, mu, L).occupancy - inf).max()
         for mu in (1e2, 1e3)]
    assert d[1] < d[0] / 5 and d[1] < 1e-3


def test_static_matching_is_two_pairs():
    # mu = 0: a perfect matching of 4 is two independent 2-server JSQ systems
    q, R = jsq_complete(2, 0.8, 12)
    r = exact.stationary(MATCH4, 0.8, 0.0, 12)
    assert np.allclose(r.occupancy, q, atol=1e-10, rtol=0)
    assert r.mean_response_time == pytest.approx(R, rel=1e-10)


def test_validation():
    G = g.ring(3)
    with pytest.raises(TypeError, match="graph"):
        exact.stationary("ring", 0.5, 0.0, 5)
    with pytest.raises(ValueError, match="graph.n"):
        exact.stationary(g.ring(6), 0.5, 0.0, 5)
    with pytest.raises(TypeError, match="truncation"):
        exact.stationary(G, 0.5, 0.0, 2.5)
    with pytest.raises(TypeError, match="truncation"):
        exact.stationary(G, 0.5, 0.0, True)
    with pytest.raises(ValueError, match="truncation"):
        exact.stationary(G, 0.5, 0.0, 0)
    for lam in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="lam"):
            exact.stationary(G, lam, 0.0, 5)
    with pytest.raises(TypeError, match="lam"):
        exact.stationary(G, "a", 0.0, 5)
    for mu in (-1.0, math.nan):
        with pytest.raises(ValueError, match="mu"):
            exact.stationary(G, 0.5, mu, 5)
    with pytest.raises(ValueError, match="truncation"):
        exact.stationary(g.ring(5), 0.5, 1.0, 40)   # 41^5 states
    with pytest.warns(RuntimeWarning, match="lam"):
        r = exact.stationary(G, 1.2, 0.0, 4)
    assert r.blocking_probability > 0
