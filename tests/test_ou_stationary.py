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


def test_extrapolate_windows_rule():
    from qlib.halfin_whitt.constants import extrapolate_windows, settled
    ns = np.array([50, 100, 150, 200, 300, 400, 500, 700, 1000, 1400, 2000, 2800, 4000])
    x = ns ** -0.5
    y = 0.8 - 2.0 * x + 5.0 * x**2 + 10.0 * x**3
    e = np.full(ns.size, 1e-7)
    r = extrapolate_windows(ns, y, e)
    assert r.n0s == (300, 500, 700, 1000)
    # the estimate is the last window's intercept; its error covers the true limit
    assert abs(r.estimate - r.intercepts[-1]) == 0 and abs(r.estimate - 0.8) <= r.error
    assert r.error == pytest.approx(r.spread + r.truncation[-1])
    assert r.truncation[-1] == pytest.approx(1e-7 * r.weight_sums[-1])
    assert np.all(np.diff(r.weight_sums) > 0)          # narrower windows amplify more
    # the intercepts move towards the limit as the window narrows (cubic bias)
    assert np.all(np.diff(np.abs(r.intercepts - 0.8)) < 0)
    # a pure quadratic: every window exact, spread 0
    q = extrapolate_windows(ns, 0.8 - 2.0 * x + 5.0 * x**2)
    assert q.spread < 1e-10 and abs(q.estimate - 0.8) < 1e-10
    assert settled(r.exponents)
    # rate n^{-1} and n^{-1/4} are not settled at 1/2; exponents turning away fail
    assert not settled(extrapolate_windows(ns, 0.8 - 5.0 / ns).exponents)
    assert not settled(extrapolate_windows(ns, 0.8 - 5.0 * ns ** -0.25).exponents)
    assert not settled([0.5, 0.47, 0.44])
    assert settled([0.44, 0.47, 0.5])
    with pytest.raises(ValueError, match="n0s"):
        extrapolate_windows(ns, y, n0s=(4000,))
    with pytest.raises(ValueError, match="err"):
        extrapolate_windows(ns, y, -e)


def test_stationary_start_draws_from_pi():
    from qlib.halfin_whitt.constants import stationary_start
    st = SimpleNamespace(states=np.array([[3, 0, 0], [3, 1, 0], [2, 0, 0]]), pi=np.array([0.5, 0.3, 0.2]))
    starts = stationary_start(st, np.random.SeedSequence(1).spawn(4000))
    keys = [tuple(s) for s in starts]
    assert set(keys) <= {(3,), (3, 1), (2,)}
    freq = np.array([keys.count(k) for k in [(3,), (3, 1), (2,)]]) / len(keys)
    se = np.sqrt(st.pi * (1 - st.pi) / len(keys))
    assert np.all(np.abs(freq - st.pi) < 4 * se)
    assert stationary_start(st, 7) == stationary_start(st, 7)
    with pytest.raises(TypeError, match="states"):
        stationary_start(SimpleNamespace(pi=np.ones(2)), 1)


def _fake_chain(ns, f, err=1e-7):
    rows = {str(n): {k: f(n, k) for k in ("c", "q2", "var_x1", "x1x2")} for n in ns}
    for r in rows.values():
        r["err"] = {k: err for k in ("c", "q2", "var_x1", "x1x2")}
    return {"1.0": rows}


def test_chain_table_helpers_on_a_known_sequence():
    from qlib.halfin_whitt import constants as K
    ns = [50, 100, 150, 200, 300, 400, 500, 700, 1000, 1400, 2000, 2800, 4000]
    lim = {"c": 0.8, "q2": 0.8, "var_x1": 0.6, "x1x2": -0.4}
    f = lambda n, k: lim[k] - 0.5 * n ** -0.5 + 2.0 / n + 3.0 * n ** -1.5
    chain = _fake_chain(ns, f)
    grid = {"1.0": {"estimate": {"mean_x2": 0.8, "var_x1": 0.6, "mean_x1x2": -0.4},
                    "error": {"mean_x2": 1e-6, "var_x1": 1e-6, "mean_x1x2": 1e-6}}}
    ex = K.chain_extrapolations(chain, (1.0,))
    ratios = K.chain_grid_ratios(ex, grid)
    assert set(ex) == {(1.0, k) for k in lim} and all(d <= e for d, e in ratios.values())
    # a finer solve that covers n >= 1000 replaces those points; one that does not is ignored
    shifted = _fake_chain([1000, 1400, 2000, 2800, 4000], lambda n, k: f(n, k) + 1e-3, err=1e-9)
    assert K.tight_covers(chain, shifted, 1.0)
    assert K.chain_points(chain, 1.0, "c", shifted)[1][-1] == pytest.approx(f(4000, "c") + 1e-3)
    partial = _fake_chain([1000, 1400], lambda n, k: f(n, k) + 1e-3)
    assert not K.tight_covers(chain, partial, 1.0)
    ex_p = K.chain_extrapolations(chain, (1.0,), partial)
    assert ex_p[1.0, "c"].estimate == ex[1.0, "c"].estimate
    # a constant shift of the fine values moves every intercept by exactly that (Σ w = 1)
    sh = K.common_window_shift(chain, shifted, 1.0, grid)
    assert all(abs(f_ - a_ - 1e-3) < 1e-9 and g == lim[k] for k, (a_, f_, g) in sh.items())
    with pytest.raises(ValueError, match="both"):
        K.common_window_shift(chain, partial, 1.0, grid)
    rows = K.tight_shifts(chain, shifted, 1.0)
    assert len(rows) == 20 and all(abs(d - 1e-3) < 1e-12 and e == 1e-7 for n, k, d, e in rows)
    # a biased chain (wrong limit) fails the comparison
    bad = K.chain_grid_ratios(K.chain_extrapolations(_fake_chain(ns, lambda n, k: f(n, k) + 0.01), (1.0,)), grid)
    assert all(d > e for d, e in bad.values())
    assert K.table_cell(0.81406, 1.04e-5) == "0.814060 ± 1e-05"
    assert K.table_cell(2.8432, 0.0019, "not pinned") == "2.8432 ± 0.0019 (not pinned)"
    with pytest.raises(ValueError, match="key"):
        K.chain_points(chain, 1.0, "p")


def test_stationary_replications_smoke():
    from qlib.halfin_whitt import stationary_jsq
    from qlib.halfin_whitt.constants import stationary_replications
    st = stationary_jsq(16, 1.0)
    a = stationary_replications(st, 1.0, 3, 7, t_end=5.0)
    b = stationary_replications(st, 1.0, 3, 7, t_end=5.0)
    assert a.shape == (3, 3) and np.array_equal(a, b) and np.all(np.isfinite(a))
