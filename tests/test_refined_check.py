"""Unit tests of qbook.refined_check (the finite-n chapter's helpers)
and of qlib.sim.own_starts.replicate_after_pilot (bounded resampling's)."""
import math

import numpy as np
import pytest

from qlib import DegreeDistribution, graphs
from qbook.refined_check import extrapolate_quadratic, refined_cell, refined_gaps, stored_gaps
from qlib.meanfield.expansion import refined
from qlib.sim.own_starts import replicate_after_pilot


def test_extrapolate_exact_on_a_quadratic():
    ns = np.array([3.0, 5.0, 8.0, 13.0])
    y = 0.7 - 2.0 / ns + 5.0 / ns**2
    est, tol, prop = extrapolate_quadratic(ns, y, np.zeros(4))
    assert est == pytest.approx(0.7, abs=1e-10)
    assert prop == 0.0 and tol > 0          # the line through the last two misses the intercept


def test_extrapolate_propagates_errors():
    ns = np.array([2.0, 4.0, 8.0])
    _, tol0, _ = extrapolate_quadratic(ns, np.ones(3), np.zeros(3))
    _, tol1, prop = extrapolate_quadratic(ns, np.ones(3), np.full(3, 1e-3))
    assert tol0 == pytest.approx(0.0, abs=1e-12) and prop > 1e-3 and tol1 == pytest.approx(prop)


@pytest.mark.parametrize("args", [([1.0, 2.0], [1, 1], [0, 0]), ([3.0, 2.0, 1.0], [1] * 3, [0] * 3),
                                  ([1.0, 2.0, 3.0], [1] * 3, [0, -1, 0]), ([1.0, 2.0, 3.0], [1] * 2, [0] * 3)])
def test_extrapolate_rejects(args):
    with pytest.raises(ValueError):
        extrapolate_quadratic(*args)


def test_refined_gaps_approach_the_coefficient():
    law = DegreeDistribution.point(1)
    ref, rows = refined_gaps(0.5, law, [4, 6, 8, 10])
    assert rows.shape == (4, 6)
    est, tol, _ = extrapolate_quadratic(np.array([4.0, 6, 8, 10]), rows[:, 0], rows[:, 1])
    assert abs(est - ref.response_time_v) <= tol
    assert ref.response_time_v == pytest.approx(refined(0.5, law).response_time_v)


@pytest.mark.parametrize("ns, exc", [([], ValueError), ([1], ValueError), ([2.5], TypeError)])
def test_refined_gaps_rejects(ns, exc):
    with pytest.raises(exc):
        refined_gaps(0.5, DegreeDistribution.point(1), ns)


def test_stored_gaps_are_the_library_solves():
    # the chapter reads its largest exact chains from the store: the stored rows of the
    # smallest n are the library's own solves, state for state
    for name, law, ns in (("δ_2", DegreeDistribution.point(2), [3, 4]),
                          ("δ_1", DegreeDistribution.point(1), [2, 3])):
        ref, rows = stored_gaps(name, 0.9, law, ns)
        live_ref, live = refined_gaps(0.9, law, ns)
        assert ref.response_time_v == live_ref.response_time_v
        np.testing.assert_allclose(rows[:, :4], live[:, :4], rtol=1e-9, atol=0)
        assert np.array_equal(rows[:, 4], live[:, 4])


@pytest.mark.parametrize("name, lam, ns", [("δ_2", 0.9, [3, 99]), ("δ_3", 0.9, [3]), ("δ_2", 0.7, [3])])
def test_stored_gaps_rejects(name, lam, ns):
    with pytest.raises(ValueError):
        stored_gaps(name, lam, DegreeDistribution.point(2), ns)


def test_refined_cell_fields_and_bad_input():
    c = refined_cell(graphs.ring(30), 0.6, 40.0, 10.0, seed=2, replications=3)
    assert c["n"] == 30 and c["se"] > 0 and 0 < c["q1"] < 1
    assert np.asarray(c["halves"]).shape == (3, 4)
    for kw in (dict(window=0.0, burn=1.0, replications=3), dict(window=1.0, burn=-1.0, replications=3),
               dict(window=1.0, burn=1.0, replications=1)):
        with pytest.raises(ValueError):
            refined_cell(graphs.ring(30), 0.6, kw["window"], kw["burn"], seed=1,
                         replications=kw["replications"])


def test_replicate_after_pilot_reproducible_and_checked():
    kw = dict(start=np.zeros(20, int), pilot_t_end=40.0, pilot_burn_in=20.0, replications=2,
              t_end=30.0, burn_in=10.0)
    a = replicate_after_pilot(graphs.ring(20), 0.5, 1.0, seed=3, **kw)
    b = replicate_after_pilot(graphs.ring(20), 0.5, 1.0, seed=3, **kw)
    assert [r.mean_response_time for r in a.results] == [r.mean_response_time for r in b.results]
    with pytest.raises(ValueError):
        replicate_after_pilot(graphs.ring(20), 0.5, 1.0, **{**kw, "pilot_burn_in": 50.0})
    with pytest.raises(TypeError):
        replicate_after_pilot(graphs.ring(20), 0.5, 1.0, initial=np.zeros(20), **kw)
    assert math.isfinite(a.mean_response_time)
