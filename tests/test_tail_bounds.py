"""Tests of ``qlib.tails.tail_bounds`` (chapter *tails*, Propositions 6 and 7).

Reference values of ``log q*(i)`` come from an independent log-space
recursion, ``log q(i) = log λ + log q(i-1) + log φ(q(i-1))`` with
``log φ(x) = logsumexp_d(log p(d) + d log x)``, which never underflows.
Rounding: every step of that recursion and every term of the bounds carries a
relative error of a few ``ε = 2.2e-16`` per term; the error of ``log q*(i)``
relative to ``|log q*(i)|`` grows at most linearly in ``i`` (each step
multiplies both the error and ``|log q|`` by about ``1 + xφ'(x)/φ(x)``), so
for ``i <= 300`` levels and ``M <= 6`` it is below ``300 · 7 · 4ε ≈ 2e-12``.
The comparisons therefore allow ``1e-11 · max(1, |log q*|)`` in log space.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.special import logsumexp

from qlib.meanfield import fluid, tails
from qlib.meanfield.degrees import DegreeDistribution as D

RTOL_LOG = 1e-11


def log_qstar(lam, p, n):
    """``log q*(0..n)`` by the log-space recursion (independent of qlib)."""
    pmf = p.pmf
    d = np.nonzero(pmf)[0]
    lp = np.log(pmf[d])
    out = np.zeros(n + 1)
    out[1] = math.log(lam)
    for i in range(2, n + 1):
        x = out[i - 1]
        out[i] = math.log(lam) + x + logsumexp(lp + d * x)
    return out


def assert_bounds(lam, p, n):
    lq = log_qstar(lam, p, n)
    lo, up = tails.tail_bounds(lam, p, np.arange(n + 1), log=True)
    slack = RTOL_LOG * np.maximum(1.0, np.abs(lq))
    assert np.all(lo <= lq + slack), np.max(lo - lq)
    assert np.all(lq <= up + slack), np.max(lq - up)
    return lo, lq, up


def test_point_masses_tight():
    # p = δ_d: ψ ≡ 1 so L = U = W = V = J = λ^{e_d(i)}, the closed form
    for d in (0, 1, 2, 3):
        lo, lq, up = assert_bounds(0.9, D.point(d), 40)
        closed = math.log(0.9) * (np.arange(41) if d == 0 else ((d + 1.0) ** np.arange(41) - 1) / d)
        assert np.allclose(lo, closed, rtol=1e-13, atol=0)
        assert np.allclose(up, closed, rtol=1e-13, atol=0)


def test_exact_at_levels_up_to_two():
    # ℓ_1 = u_1 = λ = q*(1), so the bootstrap is exact at i = 2
    p = D({0: 0.2, 1: 0.3, 4: 0.5})
    q = fluid.equilibrium(0.7, p)
    lo, up = tails.tail_bounds(0.7, p, [0, 1, 2])
    assert np.allclose(lo, q[:3], rtol=1e-14) and np.allclose(up, q[:3], rtol=1e-14)


def test_matches_equilibrium_on_normal_range():
    p = D({0: 0.3, 2: 0.7})
    q = fluid.equilibrium(0.9, p, tol=1e-290)
    lo, up = tails.tail_bounds(0.9, p, np.arange(len(q)))
    tol = RTOL_LOG * np.maximum(1, np.abs(np.log(q)))
    assert np.all(lo <= q * (1 + tol)) and np.all(q <= up * (1 + tol))


def test_geometric_rate_m0():
    # m = 0: both bounds are eventually geometric with ratio λ p(0)
    lam, p = 0.8, D({0: 0.25, 1: 0.25, 3: 0.5})
    lo, up = tails.tail_bounds(lam, p, np.arange(400, 402), log=True)
    target = math.log(lam * 0.25)
    assert abs(np.diff(lo)[0] - target) < 1e-9 and abs(np.diff(up)[0] - target) < 1e-9
    # and the gap log(upper/lower) is bounded: equal at i = 400 and i = 2000
    lo2, up2 = tails.tail_bounds(lam, p, [400, 2000], log=True)
    gap = up2 - lo2
    assert gap[1] - gap[0] < 1e-9 * abs(lo2[1])


def test_double_exponential_m_positive():
    # m > 0: log q / (m+1)^i converges; both bounds have a finite negative limit
    lam, p = 0.9, D({1: 0.5, 3: 0.5})
    i = np.array([20, 30])
    lo, up = tails.tail_bounds(lam, p, i, log=True)
    for b in (lo, up):
        c = b / 2.0**i
        assert c[1] < 0 and abs(c[1] - c[0]) < 1e-5 * abs(c[1])


def test_paper_bounds_implied():
    # the paper's forms: (λ p(m))^{a_i} <= lower, upper <= λ^{a_i}; J >= λ^{e_M(i)}
    lam = 0.85
    for p in (D({1: 0.4, 2: 0.6}), D({0: 0.1, 2: 0.9}), D({2: 0.5, 5: 0.5})):
        m, M = p.min_degree, p.max_degree
        i = np.arange(1, 12)
        a = i if m == 0 else ((m + 1.0) ** i - 1) / m
        lo, up = tails.tail_bounds(lam, p, i, log=True)
        assert np.all(lo >= a * math.log(lam * p.pmf[m]) * (1 + 1e-13))
        assert np.all(up <= a * math.log(lam) * (1 - 1e-13))
        assert np.all(lo >= math.log(lam) * ((M + 1.0) ** i - 1) / M * (1 + 1e-13))


def test_log_and_linear_agree_and_underflow():
    p = D({1: 0.5, 2: 0.5})
    lo, up = tails.tail_bounds(0.5, p, np.arange(30))
    llo, lup = tails.tail_bounds(0.5, p, np.arange(30), log=True)
    assert np.all(np.isfinite(llo)) and np.all(np.isfinite(lup))
    with np.errstate(under="ignore"):
        assert np.array_equal(lo, np.exp(llo)) and np.array_equal(up, np.exp(lup))
    assert lo[-1] == 0.0 and lup[-1] < -1e6  # underflows linearly, not in log


def test_log_bounds_beyond_dbl_max():
    # m > 0 at level 2000: log q* ~ -c 2^2000 is below -DBL_MAX; -inf is the
    # only valid float lower bound and -DBL_MAX a valid upper bound
    for p in (D({1: 0.5, 3: 0.5}), D.point(3)):
        lo, up = tails.tail_bounds(0.9, p, [3, 2000], log=True)
        assert lo[1] == -np.inf and up[1] == -np.finfo(float).max
        assert np.isfinite(lo[0]) and lo[0] <= up[0]
        llo, lup = tails.tail_bounds(0.9, p, [2000])
        assert llo[0] == 0.0 and lup[0] == 0.0


def test_crossover_family_geometric_ratio():
    # p_ε = (1-ε)δ_2 + εδ_0: both bounds turn geometric with ratio λε (chapter tails)
    lam, eps = 0.9, 1e-6
    lo, up = tails.tail_bounds(lam, D({0: eps, 2: 1 - eps}), np.array([60, 61]), log=True)
    assert abs(np.diff(lo)[0] - math.log(lam * eps)) < 1e-9
    assert abs(np.diff(up)[0] - math.log(lam * eps)) < 1e-9


def test_levels_shape_and_order():
    p = D({0: 0.5, 2: 0.5})
    lo, up = tails.tail_bounds(0.6, p, np.array([[3, 0], [1, 7]]))
    assert lo.shape == (2, 2) and lo[0, 1] == 1.0 and up[0, 1] == 1.0
    lo1, _ = tails.tail_bounds(0.6, p, [7])
    assert lo[1, 1] == lo1[0]
    lo, up = tails.tail_bounds(0.6, p, [])
    assert lo.shape == (0,)


def test_beyond_kmax_still_valid(monkeypatch):
    # past _TAIL_KMAX the products use ψ(U_K) (upper) and p(m) (lower)
    p = D({0: 0.5, 1: 0.5})
    monkeypatch.setattr(tails, "_TAIL_KMAX", 5)
    lo, lq, up = assert_bounds(0.9, p, 60)
    monkeypatch.undo()
    lo2, up2 = tails.tail_bounds(0.9, p, np.arange(61), log=True)
    assert np.all(lo <= lo2 + 1e-12 * np.abs(lo2)) and np.all(up >= up2 - 1e-12 * np.abs(up2))


def test_bad_levels():
    with pytest.raises(ValueError, match="levels"):
        tails.tail_bounds(0.5, D.point(1), [-1])
    with pytest.raises(TypeError, match="levels"):
        tails.tail_bounds(0.5, D.point(1), [1.5])
    with pytest.raises(TypeError, match="levels"):
        tails.tail_bounds(0.5, D.point(1), [True])


def test_bad_degrees():
    # a mapping is a degree law (coerced); anything that is not one is refused
    got = tails.tail_bounds(0.5, {2: 1.0}, [1, 2])
    want = tails.tail_bounds(0.5, D.point(2), [1, 2])
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    for bad in ("abc", 3, None):
        with pytest.raises(TypeError, match="degrees"):
            tails.tail_bounds(0.5, bad, [1])


@pytest.mark.parametrize("lam", [0, 1, -0.1, 1.5, float("nan"), float("inf"), "0.5", None, True])
def test_bad_lam(lam):
    with pytest.raises(ValueError, match=r"lam must be in \(0, 1\)"):
        tails.tail_bounds(lam, D.point(2), [1])


laws = st.lists(st.floats(0, 1), min_size=7, max_size=7).filter(lambda w: sum(w) > 0.05).map(
    lambda w: D(np.array(w) / math.fsum(w))
)


@settings(max_examples=60, deadline=None)
@given(laws, st.floats(0.05, 0.98))
def test_bounds_hold(p, lam):
    # n = 300 levels reaches far below 1e-300 (log q* < -700) for most laws:
    # the log-space comparison has no underflow to mind
    lo, lq, up = assert_bounds(lam, p, 300)
    assert np.all(lo <= up + RTOL_LOG * np.maximum(1, np.abs(up)))


@settings(max_examples=30, deadline=None)
@given(laws, st.floats(0.05, 0.98))
def test_bounds_hold_against_equilibrium(p, lam):
    # against qlib's own equilibrium, where q* is a normal float (> 1e-290)
    q = fluid.equilibrium(lam, p, tol=1e-290)
    lo, up = tails.tail_bounds(lam, p, np.arange(len(q)))
    keep = q > 1e-290
    tol = RTOL_LOG * np.maximum(1, np.abs(np.log(q[keep])))
    assert np.all(lo[keep] <= q[keep] * (1 + tol))
    assert np.all(q[keep] <= up[keep] * (1 + tol))
