"""Unit tests of qlib.stats.order and qlib.meanfield.double_star."""
import math

import numpy as np
import pytest

from qlib.meanfield.double_star import capped_double_star, hub_cap
from qlib.stats import replication_ci
from qlib.stats.order import order_check, order_holds, ordered


def test_ordered_detects_order_and_direction():
    lo = replication_ci([1.0, 1.1, 0.9, 1.05, 0.95])
    hi = replication_ci([2.0, 2.1, 1.9, 2.05, 1.95])
    assert order_holds(ordered([(lo, hi)]))
    assert not order_holds(ordered([(hi, lo)]))      # rejected, but the wrong sign
    assert not order_holds(ordered([(lo, replication_ci([1.0, 1.2, 0.8, 1.1, 0.9]))]))


def test_ordered_errors():
    with pytest.raises(ValueError):
        ordered([])
    with pytest.raises(ValueError):
        ordered([(1.0, 2.0)])                        # nothing estimated
    with pytest.raises(TypeError):
        ordered([("a", 2.0)])
    with pytest.raises(TypeError):
        order_holds("not a family")


def test_order_check_line():
    lo, hi = replication_ci([1.0, 1.1, 0.9]), replication_ci([3.0, 3.1, 2.9])
    c = order_check(ordered([(lo, hi)]), "lo < hi")
    assert c.passed and "shown" in c.line() and c.line().startswith("✓")
    c = order_check(ordered([(hi, lo)]), "hi < lo")
    assert not c.passed and "NOT shown" in c.line()


def test_hub_cap_formula():
    for n in (100, 1500, 5000, 10**6):
        K = hub_cap(n, 0.9)
        assert K == round(math.log(0.9 * (n - 2) * 0.1 / 2) / math.log(1 / 0.9))
    with pytest.raises(ValueError):
        hub_cap(3, 0.9)
    with pytest.raises(ValueError):
        hub_cap(100, 1.2)
    with pytest.raises(TypeError):
        hub_cap(100.0, 0.9)


def test_capped_model_limits():
    m = capped_double_star(5000, 0.9)
    # the leaves' occupancy is the M/M/1/K tail; q(1) is λ up to the hubs and the cap
    assert abs(m.q[1] - 0.9) < 1e-2 and abs(m.q[0] - 1.0) < 1e-12
    assert np.all(np.diff(m.q) < 0)
    assert 1 < m.R < 1 / (1 - 0.9)
    # the cap grows with n, so R approaches the M/M/1 value
    assert capped_double_star(10**7, 0.9).R > m.R
    with pytest.raises(ValueError):
        capped_double_star(5000, 0.9, max_level=0)


def test_budget_helpers():
    from qlib.meanfield import fluid
    from qlib.meanfield.budget import (budget_vertices, optimal_law, project_to_budget,
                                       response_time_many)
    from qlib.meanfield.degrees import DegreeDistribution
    for dbar in (1, 2, 1.5, 2.3):
        p = optimal_law(dbar, 6)
        assert abs(p.sum() - 1) < 1e-15 and abs(np.arange(7) @ p - dbar) < 1e-12
        R = response_time_many(p, 0.9)[0]
        assert abs(R - fluid.response_time(0.9, DegreeDistribution(p))) < 1e-12 * R
        for v in budget_vertices(dbar, 6):
            assert np.arange(7) @ v <= dbar + 1e-12 and abs(v.sum() - 1) < 1e-12
    q = project_to_budget(np.ones(7), 2.0)
    assert abs(np.arange(7) @ q - 2.0) < 1e-12
    with pytest.raises(ValueError):
        optimal_law(7, 6)
    with pytest.raises(TypeError):
        optimal_law(2, 6.0)
    with pytest.raises(ValueError):
        response_time_many([[0, 1.0]], 1.0)
