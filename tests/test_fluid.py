import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from qlib import fluid
from qlib.degrees import DegreeDistribution as D


def closed_form_log(lam, d, i):
    """log q*(i) = ((d+1)^i - 1)/d log λ for the point mass at d."""
    if d == 0:
        return i * math.log(lam)
    return (((d + 1) ** i - 1) / d) * math.log(lam)


@pytest.mark.parametrize("d", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("lam", [0.3, 0.7, 0.9, 0.99])
def test_equilibrium_point_mass_closed_form(d, lam):
    q = fluid.equilibrium(lam, D.point(d))
    assert q[0] == 1.0 and q[-1] < 1e-16 and q[-2] >= 1e-16
    exact = np.exp([closed_form_log(lam, d, i) for i in range(len(q))])
    # The recursion x -> λ x^{d+1} multiplies a relative error by d+1 per level
    # and adds ~(d+2)ε, so after K levels it is ~ ε (d+2)/d (d+1)^K, and
    # (d+1)^K ≈ d |log q*(K)| / |log λ| (for d = 0 the error grows like K ε).
    # This is 1e-14 for λ <= 0.7 but grows like 1/|log λ| as λ -> 1.
    K = len(q) - 1
    growth = K if d == 0 else (d + 2) / d * (d + 1) ** K
    tol = max(1e-14, 2.3e-16 * growth) if d > 0 else 1e-14
    assert np.max(np.abs(q / exact - 1)) < tol
    if lam <= 0.7:
        assert np.max(np.abs(q / exact - 1)) < 1.3e-14


def test_equilibrium_too_many_levels():
    with pytest.raises(RuntimeError):
        fluid.equilibrium(0.9999999, D.point(0), tol=1e-300)


def test_response_time_mm1():
    lam = 0.6
    # d = 0: independent M/M/1 queues, R = 1/(1-λ)
    assert fluid.response_time(lam, D.point(0)) == pytest.approx(1 / (1 - lam), rel=1e-13)
    assert fluid.response_time(lam, D.point(2)) < fluid.response_time(lam, D.point(1))


def test_drift():
    p = D({0: 0.5, 2: 0.5})
    q = np.array([1.0, 0.5, 0.2])
    f = fluid.drift(q, 0.8, p)
    g = lambda x: x * (0.5 + 0.5 * x * x)  # noqa: E731
    assert f[0] == 0.0
    assert f[1] == pytest.approx(0.8 * (g(1) - g(0.5)) - (0.5 - 0.2))
    assert f[2] == pytest.approx(0.8 * (g(0.5) - g(0.2)) - 0.2)
    qs = fluid.equilibrium(0.8, p)
    assert np.max(np.abs(fluid.drift(qs, 0.8, p))) < 1e-15


def test_solve_shape_and_start():
    t = np.array([0.0, 1.0, 5.0])
    s = fluid.solve(0.9, D.point(2), [1.0, 0.5], t)
    assert isinstance(s, fluid.FluidSolution)
    assert s.q.shape[0] == 3 and np.all(s.q[:, 0] == 1.0)
    assert s.q[0, 1] == 0.5 and np.all(s.q[0, 2:] == 0)
    assert np.all(np.abs(s.q[:, -1]) < 1e-12)
    with pytest.raises(ValueError):
        fluid.solve(0.9, D.point(2), [0.5], t)
    with pytest.raises(ValueError):
        fluid.solve(0.9, D.point(2), [1.0, 0.2, 0.5], t)
    with pytest.raises(ValueError):
        fluid.solve(0.9, D.point(2), [1.0], [1.0, 0.5])


def test_solve_from_far_start_converges():
    q0 = np.linspace(1, 0.1, 30)
    s = fluid.solve(0.8, D.point(2), q0, [0.0, 200.0])
    qs = fluid.equilibrium(0.8, D.point(2))
    n = min(len(qs), s.q.shape[1])
    assert np.max(np.abs(s.q[-1, :n] - qs[:n])) < 1e-9


def test_tail_bounds_point_masses_tight():
    # for p = δ_d the Jensen and M lower bounds and the m upper bound are exact
    for d in (1, 2, 3):
        q = fluid.equilibrium(0.9, D.point(d))
        lo, up = fluid.tail_bounds(0.9, D.point(d), np.arange(len(q)))
        assert np.allclose(lo, q, rtol=1e-12, atol=0)
        assert np.allclose(up, q, rtol=1e-12, atol=0)
    lo, up = fluid.tail_bounds(0.5, D.point(0), np.arange(10))
    assert np.allclose(lo, 0.5 ** np.arange(10)) and np.allclose(up, 0.5 ** np.arange(10))


def test_tail_bounds_bad_levels():
    with pytest.raises(ValueError):
        fluid.tail_bounds(0.5, D.point(1), [-1])
    with pytest.raises(TypeError):
        fluid.tail_bounds(0.5, D.point(1), [1.5])


@pytest.mark.parametrize("lam", [0, 1, -0.1, 1.5, float("nan"), float("inf"), "0.5", None, True])
def test_bad_lam(lam):
    with pytest.raises(ValueError, match=r"lam must be in \(0, 1\), got"):
        fluid.equilibrium(lam, D.point(2))
    with pytest.raises(ValueError, match=r"lam must be in \(0, 1\)"):
        fluid.drift([1.0, 0.5], lam, D.point(2))
    with pytest.raises(ValueError, match=r"lam must be in \(0, 1\)"):
        fluid.tail_bounds(lam, D.point(2), [1])


def test_bad_degrees():
    for f in (fluid.equilibrium, fluid.response_time):
        with pytest.raises(TypeError):
            f(0.5, {2: 1.0})
    with pytest.raises(TypeError):
        fluid.solve(0.5, [0, 0, 1], [1.0], [1.0])


laws = st.lists(st.floats(0, 1), min_size=7, max_size=7).filter(lambda w: sum(w) > 0.05).map(
    lambda w: D(np.array(w) / math.fsum(w))
)
lams = st.floats(0.05, 0.98)


@settings(max_examples=40, deadline=None)
@given(laws, lams)
def test_equilibrium_properties_and_bounds(p, lam):
    q = fluid.equilibrium(lam, p)
    assert q[1] == lam
    assert np.all(np.diff(q) < 0)
    lo, up = fluid.tail_bounds(lam, p, np.arange(len(q)))
    # Slack: q* is computed by a recursion with O(i) roundings (relative error
    # ~ i * 2^-53 * growth, growth <= (M+1)^i limited since we stop at 1e-16),
    # and the bounds are exp of a log with relative error ~1e-15 in the exponent
    # (|log| < 40), so 1e-12 relative is ample for rounding only.
    keep = q > 1e-290
    assert np.all(lo[keep] <= q[keep] * (1 + 1e-12))
    assert np.all(q[keep] <= up[keep] * (1 + 1e-12))
    R = fluid.response_time(lam, p)
    assert R >= 1 - 1e-12  # at least one service time... only if every task is served: q*(1)/λ = 1
    assert R <= 1 / (1 - lam) + 1e-9  # M/M/1 (d = 0) is the worst


@settings(max_examples=12, deadline=None)
@given(laws.filter(lambda p: p.pmf[0] <= 0.5), st.floats(0.05, 0.85))
def test_ode_from_empty_converges(p, lam):
    s = fluid.solve(lam, p, [1.0], np.array([0.0, 200.0]))
    qs = fluid.equilibrium(lam, p)
    n = min(len(qs), s.q.shape[1])
    assert np.max(np.abs(s.q[-1, :n] - qs[:n])) < 1e-9
    assert np.all(s.q[-1, n:] < 1e-12)
