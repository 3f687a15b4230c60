"""The helpers moved out of tails, best_degree and experiments: results and refusals."""
import math
import warnings

import numpy as np
import pytest

from qlib import graphs
from qlib.meanfield import (DegreeDistribution, budget_optimum_audit, crossover_violations,
                            double_exponential_constant, geometric_tail_audit, log_recursion_audit,
                            minimise_over_budget, random_budget_laws, tails)
from qlib.meanfield.budget import optimal_law, response_time_many
from qlib.sim import fresh_graph_run, replicate_two_starts

D = DegreeDistribution


def test_optimiser_finds_the_two_point_law():
    p = minimise_over_budget(0.9, 1.5, 4)
    assert np.abs(p - optimal_law(1.5, 4)).sum() < 1e-4
    a = budget_optimum_audit(0.9, 1.5, 4)
    assert a.excess >= -1e-13 * a.R_star and a.slope > 0 and a.distance <= a.bound
    assert a.R_jensen < a.R_star                      # non-integer budget: Jensen is not attained


def test_random_laws_stay_in_the_budget_and_above_the_optimum():
    P = random_budget_laws(2.3, 5, np.random.default_rng(3), size=2000, near=500)
    assert np.all(P >= -1e-15) and np.allclose(P.sum(axis=1), 1)
    assert np.all(P @ np.arange(6) <= 2.3 * (1 + 1e-12))
    assert np.all(response_time_many(P, 0.9) >= response_time_many(optimal_law(2.3, 5), 0.9)[0] * (1 - 1e-13))


@pytest.mark.parametrize("bad, exc", [(dict(lam=1.2), ValueError), (dict(lam="a"), TypeError),
                                      (dict(starts=0), ValueError)])
def test_budget_refusals(bad, exc):
    kw = dict(lam=0.9, dbar=2, d_max=4) | bad
    with pytest.raises(exc):
        minimise_over_budget(**kw)


def test_random_laws_refuse_a_bad_rng():
    with pytest.raises(TypeError, match="rng"):
        random_budget_laws(2, 4, 1)


def test_recursion_audit_and_a_broken_bound_is_seen():
    a = log_recursion_audit(0.9, D({0: 0.5, 4: 0.5}), 100)
    assert 0 < a.rounding_use <= 1 and a.bound_excess <= 1 and a.equilibrium_use <= 1
    # the m = 0 law's bounds are not exact: a strictly positive relative gap somewhere
    lo, up = tails.tail_bounds(0.9, D({0: 0.5, 4: 0.5}), np.arange(101), log=True)
    assert np.max(up - lo) > 0
    with pytest.raises(ValueError, match="n must"):
        log_recursion_audit(0.9, D.point(2), 1)
    with pytest.raises(TypeError, match="p must"):
        log_recursion_audit(0.9, {2: 1.0}, 10)


def test_geometric_audit_against_the_a_priori_gap():
    a = geometric_tail_audit(0.9, D({0: 0.1, 2: 0.9}))
    assert a.ratio_excess <= 1 and a.bound_ratio_excess <= 1
    assert 0 < a.gap <= a.gap_bound and 0 <= a.log_C <= a.log_C_max
    with pytest.raises(ValueError):
        geometric_tail_audit(0.9, D.point(2))


def test_double_exponential_constant_inside_the_crude_interval():
    c = double_exponential_constant(0.9, D({2: 0.8, 6: 0.2}))
    lo, up = c["crude"]
    assert lo <= c["c_lo"] + c["Delta"] + c["e"] and c["c_up"] <= up + c["e"]
    assert c["c_lo"] <= c["c_est"] + 2 * c["e"] <= c["c_up"] + 4 * c["e"]
    with pytest.raises(ValueError):
        double_exponential_constant(0.9, D({0: 0.5, 2: 0.5}))


def test_crossover_violations_counts_a_falsified_result():
    c = tails.tail_crossover(0.9, 1e-3)
    assert crossover_violations(c, 0.9, 1e-3) == 0
    assert crossover_violations(c | {"istar": c["j"] - 1}, 0.9, 1e-3) >= 1   # part 1 broken
    with pytest.raises(TypeError):
        crossover_violations([1, 2], 0.9, 1e-3)


def test_fresh_graph_run_starts_and_refusals():
    p = D({0: 0.5, 4: 0.5})
    R, q1, path = fresh_graph_run(300, p, 0.5, 0.0, burn=5, window=30, seed=[1, 2], start="empty")
    assert 0 < q1 < 1 and R > 0 and path.shape == (31,)
    again = fresh_graph_run(300, p, 0.5, 0.0, burn=5, window=30, seed=[1, 2], start="empty")
    assert again[0] == R                                     # seeded: reproducible
    with pytest.raises(ValueError, match="start"):
        fresh_graph_run(300, p, 0.5, 0.0, burn=5, window=30, seed=1, start="full")
    with pytest.raises(ValueError, match="lam"):
        fresh_graph_run(300, p, 1.5, 0.0, burn=5, window=30, seed=1)


def test_two_starts_low_half_first():
    g = graphs.ring(40)
    high = np.full(40, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r = replicate_two_starts(g, 0.5, 1.0, 4, seed=2, high=high, t_end=3, record_dt=1.0)
    lo, hi = r.results[:2], r.results[2:]
    # three time units after the start the high runs still hold far more tasks
    assert min(x.paths[-1, 1:].sum() for x in hi) > max(x.paths[-1, 1:].sum() for x in lo)
    with pytest.raises(ValueError, match="replications"):
        replicate_two_starts(g, 0.5, 1.0, 5, seed=2, high=high, t_end=3)
    with pytest.raises(TypeError, match="seed"):
        replicate_two_starts(g, 0.5, 1.0, 4, seed=None, high=high, t_end=3)
