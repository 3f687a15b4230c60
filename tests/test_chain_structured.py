"""The structured solver of the finite-n JSQ chain (qlib.halfin_whitt.stationary_jsq).

Independent routes: the brute-force sparse LU of the whole chain capped at
three tasks per server (the structured solver's chain when nothing else is
cut), the superseded adaptive solver (stationary_jsq_fsp) within its own
error estimate, and the exact identities of the chain.
"""
import math

import numpy as np
import pytest

from qlib.halfin_whitt.brute import brute_force_jsq
from qlib.halfin_whitt.chain import _idle_cut, stationary_jsq
from qlib.halfin_whitt.chain_fsp import stationary_jsq_fsp

QS = ("p_wait", "mean_q1", "mean_q2", "mean_q3", "mean_tasks", "mean_waiting", "var_x1",
      "mean_x1x2")


@pytest.mark.parametrize("n,beta", [(6, 0.5), (9, 1.0), (12, 2.0)])
def test_matches_brute_force_capped_at_three(n, beta):
    # tol so small that J = n: the only cut left is Q_4 = 0, the brute-force cap L = 3
    st = stationary_jsq(n, beta, tol=1e-300, fallback=False)
    bf = brute_force_jsq(n, beta, 3)
    for q in QS:
        assert getattr(st, q) == pytest.approx(getattr(bf, q), rel=1e-9, abs=1e-12), q
    # the blocked flux at the cap over the departure rate n + 1 is the solver's mass_tail
    assert st.mass_tail == pytest.approx(st.lam_total * bf.blocked / (n + 1), rel=1e-6)


@pytest.mark.parametrize("n,beta", [(100, 1.0), (200, 2.0)])
def test_agrees_with_adaptive_solver(n, beta):
    st = stationary_jsq(n, beta)
    old = stationary_jsq_fsp(n, beta)
    for q in ("p_wait", "mean_q2", "var_x1", "mean_x1x2", "mean_wait"):
        bound = max(st.error_estimates[q], old.error_estimates[q])
        assert abs(getattr(st, q) - getattr(old, q)) <= bound, q


def test_idle_cut_is_a_tail_of_the_dominating_chain():
    # P(Ĩ > J) <= tol, and the cut is the smallest such J
    n, lam = 400, 400 - 20.0
    J, b = _idle_cut(n, lam, 1e-10)
    i = np.arange(n + 1)
    logw = np.concatenate([[0.0], np.cumsum(np.log(n - i[:-1]))]) - i * math.log(lam)
    w = np.exp(logw - logw.max())
    w /= w.sum()
    assert b == pytest.approx(w[J + 1:].sum(), rel=1e-9) and b <= 1e-10 < w[J:].sum()


@pytest.mark.parametrize("n,beta", [(30, 1.0), (60, 0.5)])
def test_neglected_idle_mass_is_below_the_bound(n, beta):
    # the law of a run with the cut far out (J = n) puts at most mass_bound on I > J
    st = stationary_jsq(n, beta, tol=1e-6, fallback=False)
    full = stationary_jsq(n, beta, tol=1e-300, fallback=False)
    J = n - int(st.states[:, 0].min())
    out = full.pi[n - full.states[:, 0] > J].sum()
    assert out <= st.mass_bound
    # and the bound shrinks with tol
    assert stationary_jsq(n, beta, tol=1e-9, fallback=False).mass_bound < st.mass_bound


def test_identity_waiting_tasks_balance():
    # λ P(wait) = E[Q_2] while no server has three tasks: the gap is the
    # flux into Q_3 > 0, E[Q_3]-related, zero at large n
    st = stationary_jsq(4000, 1.0)
    gap = st.lam_total * st.p_wait - st.mean_q2
    assert abs(gap) <= 1e-9 * st.mean_q2


def test_large_n_runs_with_level_cut():
    st = stationary_jsq(200_000, 1.0, tol=1e-8)
    assert st.states is None and 0 < st.p_wait < 1
    assert st.mass_bound <= 0.5e-8 and st.mass_tail <= 0.5e-8
    assert abs(st.balance_gap) < 1e-6 * st.mean_idle


def test_refuses_what_does_not_fit():
    with pytest.raises(ValueError, match="max_seconds"):
        stationary_jsq(10**9, 1.0, max_states=1e15, max_seconds=60)
    with pytest.raises(ValueError, match="max_memory"):
        stationary_jsq(3000, 0.25, max_memory=1e6)


@pytest.mark.parametrize("kw,exc,word", [({"n": 1}, ValueError, "n"),
                                         ({"n": 2.5}, TypeError, "n"),
                                         ({"beta": -1}, ValueError, "beta"),
                                         ({"beta": 50}, ValueError, "beta"),
                                         ({"tol": 0.5}, ValueError, "tol"),
                                         ({"max_states": 0}, ValueError, "max_states")])
def test_bad_input(kw, exc, word):
    args = {"n": 20, "beta": 1.0, **kw}
    n, beta = args.pop("n"), args.pop("beta")
    with pytest.raises(exc, match=word):
        stationary_jsq(n, beta, **args)


def test_tiny_n_where_the_pivot_vanishes():
    # n = 3, lam = 0.9: the closed chain's bottom pivot is exactly zero; the
    # structured solve steps over it and equals the brute force capped at three
    beta = 0.1 * math.sqrt(3)
    st = stationary_jsq(3, beta, tol=1e-300, fallback=False)
    bf = brute_force_jsq(3, beta, 3)
    for q in QS:
        assert getattr(st, q) == pytest.approx(getattr(bf, q), rel=1e-9, abs=1e-12), q
    # servers with four tasks matter there: the default answers adaptively
    r = stationary_jsq(3, beta)
    assert r.method == "fsp"
    assert abs(r.mean_response - stationary_jsq_fsp(3, beta).mean_response) < 1e-9


def test_refuses_many_sectors_before_the_work():
    # n = 1000, beta = 0.25: Q_3 matters and all its n sectors are needed (about 2·10⁸
    # state solves); the refusal comes from the one-sector solve (a fraction of a
    # second), not after the sectors
    import time
    stationary_jsq(20, 0.25, tol=1e-300, fallback=False)    # the kernels compiled (a fresh clone)
    c0 = time.process_time()
    with pytest.raises(ValueError, match="sectors of up to"):
        stationary_jsq(1000, 0.25, fallback=False, max_seconds=2.0)
    assert time.process_time() - c0 < 3.0


@pytest.mark.parametrize("n,beta", [(9, 1.0), (60, 0.5)])
def test_streamed_sectors_equal_the_kept_law(n, beta, monkeypatch):
    # the sectors held one at a time (per-level sums accumulated by Horner's rule in
    # the corner values) give the quantities of the law kept whole, to round-off
    from qlib.halfin_whitt import chain
    kept = stationary_jsq(n, beta, tol=1e-300 if n < 10 else 1e-12, fallback=False)
    monkeypatch.setattr(chain, "_KEEP", 0)
    st = stationary_jsq(n, beta, tol=1e-300 if n < 10 else 1e-12, fallback=False)
    assert st.states is None and kept.states is not None and st.rounds == kept.rounds > 1
    for q in QS + ("var_x2", "cov_x1x2", "mean_x1x2"):
        assert getattr(st, q) == pytest.approx(getattr(kept, q), rel=1e-12, abs=1e-15), q
    assert np.max(np.abs(st.q2_pmf - kept.q2_pmf)) <= 1e-14
    assert st.mass_tail == pytest.approx(kept.mass_tail, rel=1e-12)


def test_one_sector_streamed_by_levels(monkeypatch):
    # a sector too large to hold is swept by levels with Q_2 up to n: the same law
    from qlib.halfin_whitt import chain
    kept = stationary_jsq(1000, 1.0, tol=1e-10)
    monkeypatch.setattr(chain, "_KEEP", 0)
    st = stationary_jsq(1000, 1.0, tol=1e-10)
    assert kept.rounds == st.rounds == 1 and st.states is None
    for q in QS:
        assert getattr(st, q) == pytest.approx(getattr(kept, q), rel=1e-12, abs=1e-15), q
    assert st.mass_tail == pytest.approx(kept.mass_tail, rel=1e-9)


def test_one_sector_returned_where_the_sectors_do_not_fit():
    # n = 700, beta = 1: the sectors are needed for tol = 1e-12 (64 of them); refused
    # the time, the one-sector solve is returned with its blocked flux, below 1e-8, as
    # mass_tail, and the full solve lies within that solve's error estimates
    full = stationary_jsq(700, 1.0)
    one = stationary_jsq(700, 1.0, max_seconds=0.5)
    assert full.rounds > 1 and one.rounds == 1 and one.method == "qbd"
    assert 0.5e-12 < one.mass_tail <= 1e-8
    assert one.truncated_mass == pytest.approx(one.mass_bound + one.mass_tail)
    for q in ("p_wait", "mean_q2", "var_x1", "mean_x1x2"):
        assert abs(getattr(one, q) - getattr(full, q)) <= one.error_estimates[q], q


def _truncated_chain(n, lam, J, emax):
    """The structured solver's chain built state by state: ``(I, Q_2, Q_3)`` with
    ``I <= min(J, n − Q_2)``, ``Q_3 <= emax``; moves out of the set blocked."""
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla
    S = [(i, k, e) for e in range(emax + 1) for k in range(e, n + 1)
         for i in range(min(J, n - k) + 1)]
    idx = {s: j for j, s in enumerate(S)}
    r, c, v = [], [], []
    for (i, k, e) in S:
        up = (i - 1, k, e) if i else (0, k + 1, e) if k < n else (0, n, e + 1)
        for to, rate in ((up, lam), ((i + 1, k, e), n - i - k), ((i, k - 1, e), k - e),
                         ((i, k, e - 1), e)):
            if rate > 0 and to in idx:
                r.append(idx[i, k, e]), c.append(idx[to]), v.append(rate)
    A = sp.csr_matrix((v, (r, c)), shape=(len(S), len(S)))
    A = (A - sp.diags(np.asarray(A.sum(axis=1)).ravel())).T.tolil()
    A[0, :] = 1.0
    pi = spla.spsolve(A.tocsc(), np.eye(len(S))[0])
    return np.array([(n - i, k, e) for (i, k, e) in S]), pi


@pytest.mark.parametrize("n,beta,emax", [(12, 0.3, 12), (20, 0.5, 3), (20, 2.0, 1), (40, 1.0, 3),
                                         (40, 4.0, 1), (50, 6.0, 3), (70, 5.0, 1)])
def test_sectors_equal_the_chain_built_state_by_state(n, beta, emax):
    # light to heavy loads, sectors forced: every state's mass to round-off.  At light
    # loads with sectors the solve once lost sector 0's bottom pivot to rounding (E[N]
    # = 168.5 against 60.0 at n = 100, beta = 4), and at n = 50, beta = 6 the
    # tridiagonal pivots cancelled to zero
    from qlib.halfin_whitt.chain import _idle_cut, _sectors
    from qlib.halfin_whitt._slices import _NoBar
    lam = n - beta * math.sqrt(n)
    J = _idle_cut(n, lam, 5e-13)[0]
    Q, pi = _truncated_chain(n, lam, J, emax)
    _, _, _, Q2, pi2 = _sectors(n, lam, J, emax, _NoBar(), True)
    order = lambda Q: np.lexsort((Q[:, 0], Q[:, 1], Q[:, 2]))   # noqa: E731
    assert np.array_equal(Q[order(Q)], Q2[order(Q2)])
    assert np.max(np.abs(pi[order(Q)] - pi2[order(Q2)])) <= 1e-13


@pytest.mark.parametrize("n,beta", [(30, 4.0), (50, 6.0), (20, 2.0)])
def test_light_loads_match_brute_force(n, beta):
    # the default call against the brute force capped at three tasks a server, within
    # the result's error estimate or 1e-9 relative, whichever is larger: light loads,
    # where four tasks at a server carry a negligible mass (the heavy ones are
    # test_matches_brute_force_capped_at_three and test_forced_sectors_match_brute_force)
    st = stationary_jsq(n, beta)
    bf = brute_force_jsq(n, beta, 3)
    for q in QS:
        err = max(st.error_estimates[q], 1e-9 * abs(getattr(bf, q)), 1e-12)
        assert abs(getattr(st, q) - getattr(bf, q)) <= err, q


@pytest.mark.parametrize("n,beta", [(60, 5.0), (40, 1.0)])
def test_forced_sectors_match_brute_force(n, beta):
    # tol = 1e-300: every cut but the cap at three tasks is opened (J = n, all n + 1
    # sectors), the brute force capped at three is the same chain
    st = stationary_jsq(n, beta, tol=1e-300, fallback=False)
    assert st.rounds == n + 1
    bf = brute_force_jsq(n, beta, 3)
    for q in QS:
        assert getattr(st, q) == pytest.approx(getattr(bf, q), rel=1e-9, abs=1e-12), q


def test_refuses_a_solve_that_breaks_rate_balance(monkeypatch):
    # a solve whose law is wrong (here: sector 0's scale spoilt) raises rather than returns
    from qlib.halfin_whitt import chain
    real = chain._open_bottom
    monkeypatch.setattr(chain, "_open_bottom", lambda *a: real(*a) * np.linspace(1, 2, a[0].size))
    with pytest.raises(FloatingPointError, match="rate balance"):
        stationary_jsq(40, 1.0, tol=1e-300, fallback=False)
    monkeypatch.setattr(chain, "_open_bottom", lambda *a: real(*a) * np.nan)
    with pytest.raises(FloatingPointError, match="non-finite"):
        stationary_jsq(40, 1.0, tol=1e-300, fallback=False)
