"""Tests of the helpers that ht_paths and ht_diffusion add to qlib.halfin_whitt:
the forcing of `reflected_ou`, `reflected_ou_crn` and `transient_jsq`."""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import expm_multiply

from qlib.halfin_whitt import reflected_ou, reflected_ou_crn, transient_jsq
from qlib.stats import simultaneous


def test_forcing_zero_is_the_unforced_scheme():
    a = reflected_ou(1.0, (-0.5, 1.0), t_end=2.0, dt=1e-3, seed=3, record_dt=0.1)
    b = reflected_ou(1.0, (-0.5, 1.0), t_end=2.0, dt=1e-3, seed=3, record_dt=0.1, forcing=0.0)
    assert np.array_equal(a.x1, b.x1) and np.array_equal(a.x2, b.x2)


def test_forcing_number_equals_callable():
    a = reflected_ou(1.0, (0.0, 2.0), t_end=1.0, dt=1e-3, seed=5, record_dt=0.1, forcing=1.3)
    b = reflected_ou(1.0, (0.0, 2.0), t_end=1.0, dt=1e-3, seed=5, record_dt=0.1,
                     forcing=lambda t: 1.3 * np.exp(-t))
    assert np.allclose(a.x2, b.x2, rtol=0, atol=1e-12)


def test_forcing_mean_far_from_the_boundary():
    # Started far below 0 the push is (almost surely) zero, and the scheme's means
    # follow the linear recursion m' = m + dt (A m + b(t)) exactly; computed here
    # independently of the kernel.
    dt, T, x0, x3, r = 1e-2, 0.5, (-20.0, 1.0), 2.0, 400
    runs = [reflected_ou(1.0, x0, t_end=T, dt=dt, seed=100 + i, record_dt=T, forcing=x3)
            for i in range(r)]
    assert all(u.u[-1] == 0 for u in runs)
    m = np.array(x0)
    for k in range(round(T / dt)):
        f = x3 * np.exp(-(k + 0.5) * dt)
        m = m + dt * np.array([-1.0 - m[0] + m[1], -m[1] + f])
    x1 = np.array([u.x1[-1] for u in runs])
    x2 = np.array([u.x2[-1] for u in runs])
    assert np.ptp(x2) < 1e-12 and abs(x2[0] - m[1]) < 1e-12   # X_2 is deterministic here
    fam = simultaneous([x1.mean()], [x1.std(ddof=1) / np.sqrt(r)], 99, [m[0]], level=0.999)  # df capped: conservative
    assert fam.passed, fam.report()


def test_forcing_validation():
    with pytest.raises(ValueError, match="forcing"):
        reflected_ou(1.0, (0.0, 0.0), t_end=10.0, dt=0.1, forcing=-1.0)
    with pytest.raises(TypeError, match="forcing"):
        reflected_ou(1.0, (0.0, 0.0), t_end=10.0, dt=0.1, forcing="x")
    with pytest.raises(ValueError, match="forcing"):
        reflected_ou(1.0, (0.0, 0.0), t_end=10.0, dt=0.1, forcing=lambda t: -t)


def test_crn_finest_level_is_the_bridge_scheme():
    # level 0 draws the same numbers in the same order as reflected_ou at dt
    c = reflected_ou_crn(1.0, (-1.0, 0.0), t_end=50.0, dt=0.01, depth=3, block=5.0, seed=7)
    r = reflected_ou(1.0, (-1.0, 0.0), t_end=50.0, dt=0.01, seed=7, record_dt=None)
    assert c.moments.shape == (10, 3, 5)
    steps = round(5.0 / 0.01)
    for b in range(10):
        seg = slice(b * steps, (b + 1) * steps)
        assert np.isclose(c.moments[b, 0, 0], r.x1[seg].mean(), atol=1e-10)
        assert np.isclose(c.moments[b, 0, 3], (r.x1[seg] * r.x2[seg]).mean(), atol=1e-10)


@pytest.mark.filterwarnings("ignore:standard errors unreliable:RuntimeWarning")
def test_crn_coarse_level_has_the_law_of_the_coarse_scheme():
    # the coupled level 1 (step 2dt) against an independent run at 2dt:
    # stationary mean of X_2 over independent replications
    a = [reflected_ou_crn(1.0, (-1.0, 0.0), t_end=400.0, dt=0.05, depth=2, burn_in=20.0,
                          block=190.0, seed=i).moments[:, 1, 1].mean() for i in range(40)]
    b = [reflected_ou(1.0, (-1.0, 0.0), t_end=400.0, dt=0.1, burn_in=20.0, record_dt=0,
                      seed=1000 + i).mean_x2 for i in range(40)]
    se = np.sqrt(np.var(a, ddof=1) / 40 + np.var(b, ddof=1) / 40)
    fam = simultaneous([np.mean(a) - np.mean(b)], [se], 39, level=0.999)
    assert fam.passed, fam.report()


def test_crn_validation():
    with pytest.raises(ValueError, match="depth"):
        reflected_ou_crn(1.0, (0.0, 0.0), t_end=10.0, dt=0.1, depth=0)
    with pytest.raises(ValueError, match="blocks"):
        reflected_ou_crn(1.0, (0.0, 0.0), t_end=1.0, dt=0.1, block=1.0)


def _brute_force(n, lam, q0, times, K=5):
    """Law of the occupancy chain by expm on all states with queues <= K."""
    states = [q for q in itertools.product(range(n + 1), repeat=K)
              if all(q[i] >= q[i + 1] for i in range(K - 1))]
    idx = {q: i for i, q in enumerate(states)}
    rows, cols, vals = [], [], []
    for q, i in idx.items():
        s = sum(1 for x in q if x == n)                       # shortest queue length
        if s < K:
            t = list(q); t[s] += 1
            rows.append(i); cols.append(idx[tuple(t)]); vals.append(lam)
        ext = list(q) + [0]
        for lev in range(K):
            r = ext[lev] - ext[lev + 1]
            if r > 0:
                t = list(q); t[lev] -= 1
                rows.append(i); cols.append(idx[tuple(t)]); vals.append(float(r))
    A = sp.csr_matrix((vals, (rows, cols)), shape=(len(states),) * 2)
    A = A - sp.diags(np.asarray(A.sum(axis=1)).ravel())
    p0 = np.zeros(len(states)); p0[idx[tuple(list(q0) + [0] * (K - len(q0)))]] = 1.0
    P = expm_multiply(A.T, p0, start=0, stop=times[-1], num=len(times), endpoint=True)
    Q = np.array(states, float)
    return P @ Q[:, 0], P @ Q[:, 1], P @ Q[:, 2]


@pytest.mark.parametrize("n,q0", [(6, (6, 3, 1)), (8, (0, 0)), (8, (8, 4, 2))])
def test_transient_against_brute_force(n, q0):
    beta = 1.0
    lam = n - beta * np.sqrt(n)
    times = np.linspace(0, 3, 7)
    q1, q2, q3 = _brute_force(n, lam, q0, times)
    r = transient_jsq(n, beta, list(q0), times)
    s = np.sqrt(n)
    # the truncated chain lives on Q_2 < n: the truth lies in [computed, computed + error]
    for got, want in ((r.mean_x1, (q1 - n) / s), (r.mean_x2, q2 / s), (r.mean_x3, q3 / s)):
        assert np.all(want >= got - 1e-9) and np.all(want <= got + r.error + 1e-9)
    assert r.error[-1] > 0 or n > 6


def test_transient_exact_when_no_mass_is_lost():
    # far from the cut faces the error bound is tiny, and Q_3 / √n = (m/√n) e^{-t}
    r = transient_jsq(100, 1.0, [100, 20, 10], [0.5, 1.0])
    assert np.all(r.error < 1e-6)
    assert np.allclose(r.mean_x3, np.exp(-r.times), rtol=0, atol=1e-9 + r.error.max())


def test_transient_validation():
    with pytest.raises(ValueError, match="initial"):
        transient_jsq(10, 1.0, [5, 6], [1.0])
    with pytest.raises(ValueError, match="times"):
        transient_jsq(10, 1.0, [5, 2], [-1.0])
    with pytest.raises(ValueError, match="q2_max"):
        transient_jsq(10, 1.0, [5, 2], [1.0], q2_max=10)
