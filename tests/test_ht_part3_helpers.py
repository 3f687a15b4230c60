"""Unit tests of the helpers moved out of the Part III chapters:
qbook.ht_alternatives, .wait_runs and .diffusion_checks."""
import math

import numpy as np
import pytest

from qbook import ht_alternatives as A
from qbook import diffusion_checks as D
from qbook import wait_runs as W


def test_d_sequences_ordered_around_threshold():
    for n in (1000, 10_000, 100_000):          # at n = 100, sqrt(n) log n exceeds n^0.8
        d = A.d_sequences(n)
        assert d["sqrt(n)"] < d["sqrt(n) log n"] < d["n^0.8"] <= n
        assert d["sqrt(n)"] == math.ceil(math.sqrt(n))


@pytest.mark.parametrize("bad, exc", [(1, ValueError), (2.5, TypeError), (True, TypeError)])
def test_d_sequences_rejects(bad, exc):
    with pytest.raises(exc, match="n must"):
        A.d_sequences(bad)


def test_coupled_run_names_and_shape():
    names, r = A.coupled_run(100, 1.0, 0.5, t_end=5.0, below=True, replications=2, seed=3)
    assert names == ["JSQ", "n^0.8", "sqrt(n) log n", "sqrt(n)"]
    assert r.p_wait.shape == (2, 4)


def test_coupled_run_rejects():
    with pytest.raises(ValueError, match="beta"):
        A.coupled_run(100, 20.0, 0.5, t_end=5.0)
    with pytest.raises(ValueError, match="t_end"):
        A.coupled_run(100, 1.0, 0.5, t_end=0.0)
    with pytest.raises(ValueError, match="c must"):
        A.coupled_run(100, 1.0, -1.0, t_end=5.0)
    with pytest.raises(ValueError, match="t_end"):
        A.jsq2_run(100, 1.0, t_end=5.0)


def test_resolved_burn_in_passes_flat_and_fails_trend():
    rng = np.random.default_rng(1)
    flat = 1.0 + 0.001 * rng.standard_normal((10, 10, 2))
    chk, left = A.resolved_burn_in([flat])
    assert chk.passed and left == 0 and chk.kind == "equivalence"
    trend = flat + np.linspace(0.5, 0, 10)[None, :, None]      # first half far above the second
    chk, left = A.resolved_burn_in([trend])
    assert not chk.passed and left == 0


def test_resolved_burn_in_counts_unresolved_and_never_passes_vacuously():
    noisy = 1.0 + np.random.default_rng(2).standard_normal((10, 10, 1))   # cannot resolve 10 %
    chk, left = A.resolved_burn_in([noisy])
    assert left == 1 and not chk.passed
    with pytest.raises(ValueError, match="margin_frac"):
        A.resolved_burn_in([noisy], 1.5)
    with pytest.raises(ValueError, match="shape"):
        A.resolved_burn_in([np.ones((10, 1, 1))])


def test_comparison_table_exact_rows_and_rejects():
    with pytest.raises(ValueError, match="missing"):
        A.comparison_table({}, {}, {}, [1.0], [100])
    with pytest.raises(TypeError, match="exact"):
        A.comparison_table([], {}, {}, [1.0], [100])


def test_intercept_fit_recovers_line_and_zero_bias():
    ns = np.array([100.0, 1000.0, 10_000.0])
    chain_ns = np.array([100, 200, 400, 800, 1600, 3200])
    f = W.intercept_fit(ns, 2 - 3 * ns**-0.5, [0.01] * 3, chain_ns, 2 - 3 * chain_ns**-0.5)
    assert f["c"] == pytest.approx(2) and f["d"] == pytest.approx(-3)
    assert abs(f["bias"]) < 1e-9            # a chain exactly linear in n^-1/2 leaves no bias
    with pytest.raises(ValueError, match="ns"):
        W.intercept_fit([100.0], [1.0], [0.1], chain_ns, chain_ns * 0.0)


def test_pwait_replications_and_rejects():
    ci, halves = W.pwait_replications(50, 1.0, 0.5, events=4e4, replications=4, seed=7)
    assert halves.shape == (4, 2) and np.all(halves >= 0)
    assert np.all(np.isfinite(ci.mean))
    with pytest.raises(ValueError, match="replications"):
        W.pwait_replications(50, 1.0, 0.5, events=1e4, replications=1)
    with pytest.raises(ValueError, match="events"):
        W.pwait_replications(50, 1.0, 0.5, events=0)


def test_stationary_cumulative_wait_matches_chain():
    m, se, ex, err = W.stationary_cumulative_wait(20, 1.0, 1.0, replications=400, seed=5)
    assert err < 1e-3 * ex
    assert abs(m - ex) < 4 * se             # a fixed seed: a deterministic test
    with pytest.raises(ValueError, match="t must"):
        W.stationary_cumulative_wait(20, 1.0, 0.0, replications=4)


def test_exact_eps_decreases_in_n():
    eps, err, entries = W.exact_eps([16, 25, 36], 1.0)
    assert np.all(np.diff(eps) < 0) and np.all(err < 0.1 * eps)
    # entries into Q_3 >= 1 happen only from Q_2 = n: at most λ_n π(Q_2 = n) (PASTA)
    from qlib.halfin_whitt import stationary_jsq
    st = stationary_jsq(16, 1.0)
    assert np.all(np.diff(entries) < 0) and 0 < entries[0] <= st.lam_total * st.q2_pmf[16]
    with pytest.raises(ValueError, match="empty"):
        W.exact_eps([], 1.0)


def test_eps_replications_matches_chain():
    eps, err, entries = W.exact_eps([16], 1.0)
    t = 100 / entries[0]                     # 100 expected entries into Q_3 >= 1 per replication
    e, se, df = W.eps_replications(16, 1.0, t, replications=6, seed=7)
    assert df == 5 and abs(e - eps[0]) < 5 * se + err[0]   # a fixed seed: a deterministic test
    with pytest.raises(ValueError, match="replications"):
        W.eps_replications(16, 1.0, 10.0, replications=1)
    with pytest.raises(ValueError, match="t must"):
        W.eps_replications(16, 1.0, 0.0, replications=3)


def test_noise_increments_variance_near_two():
    r = D.noise_increments(200, 1.0, t_end=1000.0, seed=2)
    assert r["target"] == pytest.approx(2 * (200 - math.sqrt(200)) / 200)
    assert abs(r["var"] / r["target"] - 1) < 4 * math.sqrt(2 / (r["m"] - 1))
    with pytest.raises(ValueError, match="dt"):
        D.noise_increments(200, 1.0, t_end=100.0, dt=2.0)


def test_identity_richardson_near_zero_and_rejects():
    a = D.identity_richardson(1.0, t_end=2000.0, dt=0.02, seed=3)
    assert a.shape == (3, 10)
    assert np.all(np.abs(a[:, 0]) < 5 * a[:, 3] + np.abs(a[:, 1]) + 0.05)
    with pytest.raises(ValueError, match="beta"):
        D.identity_richardson(-1.0, t_end=10.0, dt=0.01)


def test_generator_gap_table_within_bounds():
    t = D.generator_gap_table([100, 10_000], [1.0])
    assert t.shape == (2, 8) and np.all(t[:, 6] <= 1) and np.all(t[:, 7] <= 1)
    assert t[1, 2] < t[0, 2]                 # the gap shrinks with n
    with pytest.raises(ValueError, match="ns"):
        D.generator_gap_table([1], [1.0])
