"""qlib.exact.transient.mm1_transient against independent routes: the matrix
exponential of a truncated generator, the stationary law, t = 0, bad input."""
import math

import numpy as np
import pytest
from scipy.linalg import expm

from qlib.exact.transient import mm1_transient


def _expm_tails(lam, q0, times, L=200):
    """P(X_t >= i) from expm of the M/M/1 generator capped at L (mass beyond L negligible)."""
    G = np.zeros((L + 1, L + 1))
    for i in range(L):
        G[i, i + 1] = lam
        G[i + 1, i] = 1.0
    G -= np.diag(G.sum(axis=1))
    p0 = np.zeros(L + 1)
    p0[: len(q0)] = -np.diff(np.append(q0, 0.0))
    return np.array([np.cumsum((p0 @ expm(G * t))[::-1])[::-1] for t in times])


@pytest.mark.parametrize("lam,q0", [(0.5, [1.0]), (0.9, [1.0, 1.0, 1.0, 1.0]),
                                    (1.3, [1.0, 0.6, 0.2])])
def test_against_matrix_exponential(lam, q0):
    times = np.array([0.0, 0.3, 2.0, 7.5, 20.0])
    r = mm1_transient(lam, q0, times, tol=1e-13)
    ref = _expm_tails(lam, q0, times)
    K = min(r.tail.shape[1], ref.shape[1])
    assert np.all(r.error_bound <= 1e-13)
    assert np.max(np.abs(r.tail[:, :K] - ref[:, :K])) < 1e-10
    assert np.all(ref[:, r.tail.shape[1]:] < 1e-12)       # nothing beyond the levels returned


def test_stationary_start_stays_stationary():
    lam = 0.8
    q0 = lam ** np.arange(200.0)
    q0[q0 < 1e-300] = 0.0
    r = mm1_transient(lam, q0, [1.0, 10.0], tol=1e-12)
    K = 60
    # the truncated start loses < lam^200 of mass at the top; the bound adds tol
    assert np.max(np.abs(r.tail[:, :K] - lam ** np.arange(K))) < 1e-11


def test_time_zero_and_bound_direction():
    q0 = [1.0, 0.7, 0.7, 0.1]
    r = mm1_transient(0.6, q0, [0.0, 5.0])
    assert np.array_equal(r.tail[0, :4], q0) and np.all(r.tail[0, 4:] == 0)
    assert r.error_bound[0] == 0.0 and 0 <= r.error_bound[1] <= 1e-12
    assert np.all(np.diff(r.tail, axis=1) <= 1e-15)          # tails are non-increasing
    # mean from the empty state approaches lam/(1-lam) at large t
    m = mm1_transient(0.5, [1.0], [200.0]).tail[0, 1:].sum()
    assert math.isclose(m, 1.0, rel_tol=1e-9)


@pytest.mark.parametrize("kw", [dict(lam=0.0), dict(lam=float("nan")), dict(lam=True),
                                dict(q0=[0.5]), dict(q0=[1.0, 0.2, 0.5]), dict(q0=[1.0, 1.2]),
                                dict(times=[-1.0]), dict(times=[]), dict(times=[[1.0]]),
                                dict(tol=0.0), dict(tol=0.1)])
def test_bad_input(kw):
    args = dict(lam=0.5, q0=[1.0], times=[1.0], tol=1e-12) | kw
    with pytest.raises(ValueError):
        mm1_transient(args.pop("lam"), args.pop("q0"), args.pop("times"), **args)
