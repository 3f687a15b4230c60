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
