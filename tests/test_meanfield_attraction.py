"""Unit tests for the measurement helpers of the equilibrium and fluid-limit chapters."""
import math

import numpy as np
import pytest

from qlib import DegreeDistribution
from qlib.meanfield import fluid
from qlib.meanfield.attraction import (brackets, gap_structure, offdiagonal_min, project, slow_decay,
                                       window_rate)
from qlib.meanfield.path_gap import fluid_deviation
from qlib.stats.welch import mean_of_means, welch_difference

P2 = DegreeDistribution.point(2)
MIX = DegreeDistribution.mixture([0.5, 0.5], [DegreeDistribution.point(0), DegreeDistribution.point(4)])


def test_brackets_detect_a_wrong_upper_bracket():
    t = np.linspace(0, 40, 81)
    good = np.concatenate([np.ones(3), fluid.equilibrium(0.95, P2)])
    assert brackets(0.8, P2, t, good, {"empty": [1.0], "q*": fluid.equilibrium(0.5, P2)}).violation < 1e-9
    # the plain full state is not a supersolution: its level N + 1 rises at once
    bad = brackets(0.8, P2, t, np.ones(4), {"empty": [1.0]})
    assert bad.violation > 1e-3


def test_slow_decay_rate_matches_gap_and_mixture_allowance_is_useless():
    t = np.linspace(0, 300, 3001)
    s = slow_decay(0.8, P2, [1.0], t)
    assert s.gamma == pytest.approx(fluid.relaxation_rate(0.8, P2))
    assert abs(s.relative) <= s.allowance < 0.5
    assert slow_decay(0.8, MIX, [1.0], t).allowance > 1


def test_gap_structure_isolated_and_band_edge():
    iso, mix = gap_structure(0.8, P2), gap_structure(0.8, MIX)
    assert iso.next_rates[0] > 2 * iso.gaps[0] and iso.enclosure < 1e-12
    assert mix.edge_below and mix.edge < mix.gaps[1] < mix.gaps[0]


def test_offdiagonal_min_is_nonnegative_for_the_drift():
    assert offdiagonal_min(0.8, trials=10) > -1e-8


def test_project_and_window_rate_recover_a_known_rate():
    t = np.linspace(0, 10, 101)
    qs, w = np.array([1.0, 0.5, 0.2]), np.array([1.0, 0.0])
    paths = [np.column_stack([np.ones_like(t), 0.5 + (1 + 0.1 * k) * 0.1 * np.exp(-0.3 * t), 0.2 + 0 * t])
             for k in range(5)]
    Z = project(paths, qs, w)
    rate, se = window_rate(t, Z, (2.0, 8.0))
    assert rate == pytest.approx(0.3, rel=1e-9) and se < 1e-9


def test_fluid_deviation_ignores_sparse_levels():
    ode = np.array([[1.0, 0.5, 1e-4], [1.0, 0.5, 1e-4]])
    sim = [ode + np.array([0.0, 0.0, 0.01])]               # error only where n q < 10
    assert fluid_deviation(sim, ode, 1000).gap[0] == 0.0
    assert fluid_deviation(sim, ode, 10**6).gap[0] == pytest.approx(0.01)


def test_welch_helpers():
    d, se, df = welch_difference([0.0, 1.0, 2.0], [1.0, 2.0, 3.0])
    assert d == 1.0 and se == pytest.approx(math.sqrt(2 / 3)) and df == pytest.approx(4.0)
    m, s, dfm = mean_of_means([1.0, 1.0], [1.0, 1.0], [5.0, 5.0])
    assert m == 1.0 and s == pytest.approx(math.sqrt(0.5)) and dfm == pytest.approx(10.0)


@pytest.mark.parametrize("call, exc", [
    (lambda: brackets(1.2, P2, [0, 1], [1.0], {"empty": [1.0]}), ValueError),
    (lambda: brackets(0.8, "δ_2", [0, 1], [1.0], {"empty": [1.0]}), TypeError),
    (lambda: brackets(0.8, P2, [0, 1], [1.0], {}), ValueError),
    (lambda: slow_decay(0.8, P2, [1.0], [0, 1], z_start=1e-7, z_stop=1e-4), ValueError),
    (lambda: gap_structure(0.8, P2, tols=()), ValueError),
    (lambda: window_rate([0, 1, 2], np.ones((1, 3)), (0, 2)), ValueError),
    (lambda: fluid_deviation([], np.ones((2, 2)), 10), ValueError),
    (lambda: fluid_deviation([np.ones((2, 2))], np.ones((2, 2)), 0), ValueError),
    (lambda: welch_difference([1.0], [1.0, 2.0]), ValueError),
    (lambda: mean_of_means([1.0], [-1.0], [3.0]), ValueError),
])
def test_bad_input_raises(call, exc):
    with pytest.raises(exc):
        call()
