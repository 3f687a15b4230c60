"""Star approximation of the closed-neighbourhood policy on static regular graphs
(qlib.meanfield.star): exact limits, the ring's window, consistency, and the
stored simulation of random regular graphs."""
import json
import math
from pathlib import Path

import numpy as np
import pytest

from qlib import exact, graphs
from qlib.meanfield import pair_approximation, ring_window
from qlib.meanfield.star import StarResult, _Star, star_approximation

ROOT = Path(__file__).resolve().parents[1]


def test_one_edge_is_the_exact_two_server_chain():
    # d = 1: the star is the whole component {u, v}; nothing is closed
    K = 24
    star = star_approximation(0.7, 1, truncation=K)
    chain = exact.stationary(graphs.cliques(2, 2), 0.7, 0.0, truncation=K).little_response_time
    assert abs(star.response_time - chain) < 1e-9
    # ... and so is the pair approximation there
    assert abs(star.response_time - pair_approximation(0.7, 1, truncation=K).response_time) < 1e-9


@pytest.mark.parametrize("lam", [0.5, 0.9])
def test_ring_star_is_the_window_of_three(lam):
    # d = 2: the star (u, v, w) is three consecutive queues and its closure the
    # window's order-2 Markov closure: two code paths, one fixed point
    K = 12
    star = star_approximation(lam, 2, truncation=K)
    win = ring_window(lam, 3, truncation=K)
    assert abs(star.response_time - win.response_time) < 1e-8
    assert np.max(np.abs(star.marginal - win.marginal)) < 1e-8


@pytest.mark.parametrize("d", [2, 3, 4])
def test_closure_is_consistent(d):
    # the centre's and a leaf's marginals agree, the centre–leaf pair is
    # symmetric, and every arrival is served: q(1) = λ up to the blocking
    r = star_approximation(0.9, d)
    assert r.top_mass <= 1e-10 and r.residual < 1e-9
    assert np.max(np.abs(r.marginal - r.leaf_marginal)) < 1e-8
    assert np.max(np.abs(r.pair - r.pair.T)) < 1e-8
    assert abs(r.throughput_gap) < 1e-8
    assert abs(r.star.sum() - 1) < 1e-12 and r.star.min() > -1e-12


def test_truncation_is_converged():
    a = star_approximation(0.9, 3)
    b = star_approximation(0.9, 3, truncation=a.truncation + 2)
    assert abs(a.response_time - b.response_time) < 1e-9 * b.response_time


@pytest.mark.parametrize("d", [2, 3])
def test_light_traffic(d):
    # R − 1 is the mean wait: a task waits only if all d + 1 queues it sees
    # are busy, so R − 1 = Θ(λ^(d+1)) as λ → 0
    c = [(star_approximation(lam, d).response_time - 1) / lam ** (d + 1) for lam in (0.005, 0.01)]
    assert 0.5 < c[0] < 10 and abs(c[0] / c[1] - 1) < 0.05


def test_star_of_the_pair_law_has_the_pair_marginals():
    # the warm start (leaves independent given the centre) keeps the pair's law
    P = pair_approximation(0.8, 3, truncation=8).pair
    st = _Star(3, 8)
    S = st.from_pair(P)
    J = np.asarray(st.remove.T @ S.T).T.reshape(st.K1, st.K1, st.nM)
    assert np.max(np.abs(J.sum(axis=2) - P)) < 1e-14


def _sim(graph, lam):
    rows = json.loads((ROOT / "benchmarks" / "one_or_all.json").read_text())["rows"]
    return next(r for r in rows if r["graph"] == graph and r["lam"] == lam)


@pytest.mark.parametrize("d", [3, 4])
def test_within_one_percent_of_simulation_on_random_regular_graphs(d):
    # the target: |R_star / R_sim − 1| < 1 % at λ = 0.9 (n ≈ 2000, 20
    # replications), and the star closer to the simulation than the pair
    row = _sim(f"random {d}-regular", 0.9)
    star = star_approximation(0.9, d).response_time
    pair = pair_approximation(0.9, d).response_time
    assert abs(star / row["sim"] - 1) < 0.01
    assert abs(star - row["sim"]) < abs(pair - row["sim"])


@pytest.mark.parametrize("kw, exc, name", [
    (dict(lam=1.0, degree=3), ValueError, "lam"),
    (dict(lam=0.5, degree=0), ValueError, "degree"),
    (dict(lam=0.5, degree=3.0), TypeError, "degree"),
    (dict(lam=0.5, degree=3, truncation=1), ValueError, "truncation"),
    (dict(lam=0.5, degree=3, tol=0.0), ValueError, "tol"),
    (dict(lam=0.5, degree=3, mass_tol=2.0), ValueError, "mass_tol"),
    (dict(lam=0.5, degree=8, truncation=30), ValueError, "truncation"),
    (dict(lam=0.5, degree=3, progress=1), TypeError, "progress"),
])
def test_bad_input_names_the_parameter(kw, exc, name):
    with pytest.raises(exc, match=name):
        star_approximation(**kw)


def test_result_fields():
    r = star_approximation(0.7, 3)
    assert isinstance(r, StarResult)
    assert r.states == (r.truncation + 1) * math.comb(r.truncation + 3, 3) == r.star.size
    assert r.multisets.shape == (math.comb(r.truncation + 3, 3), 3)
    assert r.occupancy[0] == 1 and abs(r.occupancy[1] - 0.7) < 1e-8
    # neighbours share arrivals: positively correlated, as in the pair closure
    assert 0 < r.correlation < 1 and pair_approximation(0.7, 3).correlation > 0
