"""``qlib.exact.occupancy_chain_adaptive`` against the full enumeration
``qlib.exact.occupancy_chain`` (two independent state spaces and solvers of
the same chain: windows chosen by estimated probability vs all states below a
level cap).  Fast: small n, a few seconds in all."""
import numpy as np
import pytest

import qlib
from qlib import exact

D = qlib.DegreeDistribution


def _reference(n, lam, law, K, replacement=False):
    """Full enumeration at cap K and its change from K − 10 (the cap only
    removes tasks, so R grows with K towards the uncapped value)."""
    b = exact.occupancy_chain(n, lam, law, K, replacement=replacement)
    b0 = exact.occupancy_chain(n, lam, law, K - 10, replacement=replacement)
    return b, b.response_time - b0.response_time


@pytest.mark.parametrize("n,lam,law,K,rep", [
    (5, 0.7, D.point(2), 20, False),
    (4, 0.7, D({0: 0.5, 2: 0.5}), 30, False),
    (3, 0.9, D.point(2), 60, False),
    (3, 0.9, D.point(1), 60, False),
    (3, 0.9, D.point(1), 60, True),
])
def test_agrees_with_full_enumeration(n, lam, law, K, rep):
    a = exact.occupancy_chain_adaptive(n, lam, law, tol=1e-9, replacement=rep)
    b, b_err = _reference(n, lam, law, K, rep)
    assert b_err >= 0                              # the capped chain grows with K
    err = abs(a.response_time - b.response_time)
    print(f"n={n} λ={lam}: |R_adaptive − R_K| = {err:.2e}, estimate {a.response_time_error:.2e} "
          f"+ cap change {b_err:.1e}; {a.n_states} vs {b.n_states} states")
    assert err <= a.response_time_error + b_err
    # the estimate is informative: far below the scale of R
    assert a.response_time_error < 1e-3
    m = 5
    assert np.max(np.abs(a.occupancy[:m] - b.occupancy[:m])) <= a.occupancy_error + b.truncated_mass


def test_error_estimate_shrinks_and_bounds():
    """n = 4, λ = 0.9 (δ_2): at each threshold the estimate covers the
    distance to the capped chain at K = 45 (plus the cap's own change from
    K = 35), and a hundredfold smaller threshold shrinks the estimate more
    than tenfold."""
    b = exact.occupancy_chain(4, 0.9, D.point(2), 45).response_time
    b0 = exact.occupancy_chain(4, 0.9, D.point(2), 35).response_time
    ests = []
    for tol in (1e-8, 1e-10):
        a = exact.occupancy_chain_adaptive(4, 0.9, D.point(2), tol=tol)
        ests.append(a.response_time_error)
        err = abs(a.response_time - b)
        print(f"tol={tol:.0e}: |R − R_45| = {err:.2e}, estimate {a.response_time_error:.2e} + cap change {b - b0:.1e}")
        assert err <= a.response_time_error + (b - b0)
    assert ests[1] < ests[0] / 10


def test_mm1():
    # δ_0: independent M/M/1 queues, q(i) = λ^i exactly (no level cap here)
    lam = 0.6
    a = exact.occupancy_chain_adaptive(3, lam, D.point(0), tol=1e-11)
    i = np.arange(a.occupancy.size)
    assert np.max(np.abs(a.occupancy - lam**i)) <= a.occupancy_error + 1e-9
    assert a.response_time == pytest.approx(1 / (1 - lam), abs=a.response_time_error + 1e-8)


def test_errors():
    law = D.point(2)
    with pytest.raises(ValueError, match="n must"):
        exact.occupancy_chain_adaptive(2, 0.5, law)
    with pytest.raises(ValueError, match="lam"):
        exact.occupancy_chain_adaptive(4, 1.0, law)
    with pytest.raises(ValueError, match="tol"):
        exact.occupancy_chain_adaptive(4, 0.5, law, tol=0.1)
    with pytest.raises(ValueError, match="max_states"):
        exact.occupancy_chain_adaptive(4, 0.5, law, max_states=0)
    with pytest.raises(ValueError, match="max_states"):
        exact.occupancy_chain_adaptive(8, 0.9, law, max_states=500)
    with pytest.raises(TypeError, match="degrees"):
        exact.occupancy_chain_adaptive(4, 0.5, "two")   # a mapping is a law; a string is not
