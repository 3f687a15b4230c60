"""qbook.ht_constants: the Halfin-Whitt constants table, its windowed rule and its stationary starts."""
from types import SimpleNamespace
import numpy as np
import pytest


def test_extrapolate_windows_rule():
    from qbook.ht_constants import extrapolate_windows, settled
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
    from qbook.ht_constants import stationary_start
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
    from qbook import ht_constants as K
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
    from qbook.ht_constants import stationary_replications
    st = stationary_jsq(16, 1.0)
    a = stationary_replications(st, 1.0, 3, 7, t_end=5.0)
    b = stationary_replications(st, 1.0, 3, 7, t_end=5.0)
    assert a.shape == (3, 3) and np.array_equal(a, b) and np.all(np.isfinite(a))
