"""qlib.exact.converge: the Aitken tail estimate and the converged tiny-graph solve."""
import math

import numpy as np
import pytest

from qlib import exact, graphs
from qlib.exact.converge import aitken_error, stationary_converged


def test_aitken_error_is_exact_for_a_geometric_sequence():
    # partial sums of 1 + r + r^2 + ...: the error left after c is r^3/(1 - r)
    r = 0.3
    a, b, c = 1.0, 1.0 + r, 1.0 + r + r**2
    err = aitken_error([a], [b], [c])[0]
    limit = 1.0 / (1.0 - r)
    assert err == pytest.approx(limit - c, rel=1e-9)


def test_aitken_error_refuses_slow_changes_and_bad_shapes():
    assert np.isinf(aitken_error([0.0, 0.0], [1.0, 0.1], [1.6, 0.15])).all()
    with pytest.raises(ValueError, match="shapes"):
        aitken_error([1.0, 2.0], [1.0], [1.0])


def test_converged_solve_matches_a_much_larger_cap():
    g = graphs.from_edges(4, [(0, 1), (2, 3)])
    se = np.full(40, 2e-4)
    s = stationary_converged(g, 0.5, 1.0, se=se, se_R=2e-3, truncation=6)
    big = exact.stationary(g, 0.5, 1.0, 22)
    true_err = np.abs(s.result.occupancy[s.levels] - big.occupancy[s.levels])
    # the estimate bounds the true error up to rounding, and both are below a fifth of the s.e.
    assert np.all(true_err <= s.error + 1e-12)
    assert np.all(true_err <= 0.2 * se[s.levels])
    assert abs(s.result.mean_response_time - big.mean_response_time) <= s.error_R + 1e-12
    assert s.worst_share <= 0.2


@pytest.mark.parametrize("kw, name", [(dict(truncation=0), "truncation"), (dict(step=0), "step"),
                                      (dict(min_q=1.5), "min_q"), (dict(share=0.0), "share"),
                                      (dict(se_R=0.0), "se_R")])
def test_converged_solve_names_the_bad_parameter(kw, name):
    args = dict(se=np.full(10, 1e-3), se_R=1e-3)
    args.update(kw)
    with pytest.raises(ValueError, match=name):
        stationary_converged(graphs.ring(4), 0.5, 1.0, **args)


def test_converged_solve_gives_up():
    with pytest.raises(RuntimeError, match="did not converge"):
        stationary_converged(graphs.ring(4), 0.8, 1.0, se=np.full(60, 1e-12), se_R=1e-12,
                             max_truncation=12)
