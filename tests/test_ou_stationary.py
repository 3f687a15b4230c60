"""Tests of qlib.halfin_whitt.stationary: the grid solution of the reflected OU limit."""
import math
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from qlib.halfin_whitt.stationary import chain_constants, default_box, ou_stationary, ou_stationary_grid


def _brute_force(beta, h, I, J):
    """The same grid chain, generator built state by state and solved by LU."""
    idx = lambda i, j: i * (J + 1) + j  # noqa: E731
    rows, cols, vals = [], [], []
    for i in range(I + 1):
        for j in range(J + 1):
            b = j * h - beta + i * h
            B = b * h
            up = (B / -math.expm1(-B) if abs(B) > 1e-12 else 1.0) / h**2
            dn = up - b / h
            if i > 0:
                rows.append(idx(i, j)); cols.append(idx(i - 1, j)); vals.append(up)
            elif j < J:      # reflected move: the push
                rows.append(idx(i, j)); cols.append(idx(0, j + 1)); vals.append(up)
            if i < I:
                rows.append(idx(i, j)); cols.append(idx(i + 1, j)); vals.append(dn)
            if j > 0:
                rows.append(idx(i, j)); cols.append(idx(i, j - 1)); vals.append(float(j))
    N = (I + 1) * (J + 1)
    A = sp.csr_matrix((vals, (rows, cols)), shape=(N, N))
    A = A - sp.diags(np.asarray(A.sum(axis=1)).ravel())
    M = sp.vstack([np.ones((1, N)), A.T.tocsr()[1:]]).tocsc()
    rhs = np.zeros(N); rhs[0] = 1.0
    return spla.spsolve(M, rhs).reshape(I + 1, J + 1)


@pytest.mark.parametrize("beta", [0.5, 1.0, 3.0])
def test_level_reduction_matches_sparse_lu(beta):
    h = 0.25
    g = ou_stationary_grid(beta, h, x1_min=-4.0, x2_max=5.0)
    ref = _brute_force(beta, h, 16, 20)
    assert np.abs(g.pi - ref).max() < 1e-11
    assert g.residual < 1e-12


@pytest.mark.parametrize("beta", [0.25, 1.0, 4.0])
def test_exact_identities_on_the_grid(beta):
    # the drift of X_1 + X_2 is exact on the grid: E[X_1] = −β up to the faces;
    # the push rate equals E[X_2] up to the top face
    g = ou_stationary_grid(beta, 0.1)
    assert abs(g.mean_x1 + beta - g.face_drift) < 1e-9 and abs(g.face_drift) < 1e-3
    assert abs(g.push_rate - g.mean_x2) < 1e-6
    assert g.face_low < 1e-12 and g.face_top < 1e-5
    assert abs(g.pi.sum() - 1) < 1e-12 and g.pi.min() >= 0


def test_first_order_convergence_and_bar_identities():
    # the stationary identities of the diffusion (basic adjoint relationship with
    # f = x_1^2 and (x_1 + x_2)^2) are not built into the grid; they hold in the limit
    r = ou_stationary(1.0, 0.1, depth=4)
    assert abs(r.order["mean_x2"][-1] - 1) < 0.1
    m2 = r.estimate["mean_x2"]
    assert abs(r.estimate["var_x1"] - (1 - m2 / 2)) < 3 * (r.error["var_x1"] + r.error["mean_x2"])
    assert abs(r.estimate["mean_x1x2"] + m2 / 2) < 3 * (r.error["mean_x1x2"] + r.error["mean_x2"] / 2)
    # the box is large enough: doubling it changes nothing visible
    big = ou_stationary_grid(1.0, 0.1, x1_min=-16.0, x2_max=24.0)
    assert abs(big.mean_x2 - ou_stationary_grid(1.0, 0.1).mean_x2) < r.error["mean_x2"] / 10


def test_chain_constants_on_a_hand_made_law():
    # two states of an n = 4 chain: (Q_1, Q_2) = (4, 2) w.p. 1/4, (2, 0) w.p. 3/4
    st = SimpleNamespace(n=4, states=np.array([[4, 2, 0], [2, 0, 0]]), pi=np.array([1.0, 3.0]))
    k = chain_constants(st)
    assert k["c"] == pytest.approx(2 * 0.25)
    assert k["q2"] == pytest.approx(0.25 * 2 / 2)
    x1 = np.array([0.0, -1.0])
    assert k["var_x1"] == pytest.approx(np.cov(x1, aweights=[1, 3], bias=True))
    assert k["x1x2"] == pytest.approx(0.0)
    assert np.allclose(k["q2_pmf"], [0.75, 0, 0.25])
    assert all(np.isnan(v) for v in k["err"].values())


def test_errors():
    with pytest.raises(ValueError, match="beta"):
        ou_stationary_grid(-1.0, 0.1)
    with pytest.raises(TypeError, match="beta"):
        default_box("1")
    with pytest.raises(ValueError, match="h"):
        ou_stationary_grid(1.0, 0.0)
    with pytest.raises(ValueError, match="h"):
        ou_stationary_grid(1.0, 0.75)
    with pytest.raises(ValueError, match="depth"):
        ou_stationary(1.0, 0.1, depth=2)
    with pytest.raises(ValueError, match="keep"):
        ou_stationary(1.0, 0.1, keep="none")
    with pytest.raises(TypeError, match="states"):
        chain_constants(SimpleNamespace(n=3, pi=np.ones(2)))
    with pytest.raises(TypeError, match="n"):
        chain_constants(SimpleNamespace(pi=np.ones(2)))


def test_extrapolation_recovers_a_known_limit_and_rate():
    from qlib.halfin_whitt.stationary import extrapolate_inv_sqrt
    ns = np.array([500, 700, 1000, 1400, 2000, 2800])
    x = ns ** -0.5
    y = 0.8 - 2.0 * x + 5.0 * x**2 + 10.0 * x**3
    r = extrapolate_inv_sqrt(ns, y)
    assert abs(r.estimate - 0.8) <= r.error * (1 + 1e-9)
    assert r.error < 1e-3
    # local exponents tend to 1/2; a rate-1 sequence gives exponents near 1
    assert np.all(np.abs(r.exponents - 0.5) < 0.2)
    r1 = extrapolate_inv_sqrt(ns, 0.8 - 50.0 / ns)
    assert np.allclose(r1.exponents, 1.0, atol=1e-6)
    with pytest.raises(ValueError, match="ns"):
        extrapolate_inv_sqrt([1, 2, 3], [1, 2, 3])


def test_intercept_weights_reproduce_polyfit_and_bound_the_truncation():
    from qlib.halfin_whitt.stationary import intercept_weights
    ns = np.array([300, 500, 700, 1000, 1400, 2000, 2800, 4000])
    y = np.sin(ns / 700.0)
    w = intercept_weights(ns)
    assert abs(w @ y - np.polyfit(ns ** -0.5, y, 2)[-1]) < 1e-10
    # the weights reproduce a quadratic's intercept exactly, and sum to 1
    x = ns ** -0.5
    assert abs(w @ (0.3 - x + 4 * x**2) - 0.3) < 1e-12 and abs(w.sum() - 1) < 1e-12
    # the worst perturbation |δy_i| <= e_i moves the intercept by exactly Σ|w_i| e_i
    # (the sign pattern of w), more than max(e) whenever Σ|w| > 1
    e = np.full(ns.size, 1e-4)
    shift = w @ (np.sign(w) * e)
    assert abs(shift - np.abs(w) @ e) < 1e-15 and shift > 1.5 * e.max()
    with pytest.raises(ValueError, match="degree"):
        intercept_weights(ns, -1)
    with pytest.raises(ValueError, match="ns"):
        intercept_weights([100, 200], 2)
