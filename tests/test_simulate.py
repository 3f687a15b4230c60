import numpy as np
import pytest
from qlib import graphs as g
from qlib.simulate import simulate


def test_determinism():
    a = simulate(g.ring(100), 0.8, 1.0, t_end=20, seed=5)
    b = simulate(g.ring(100), 0.8, 1.0, t_end=20, seed=5)
    assert np.array_equal(a.occupancy, b.occupancy) and a.events == b.events


@pytest.mark.parametrize("mu", [0.0, 2.0, np.inf])
def test_conservation(mu):
    r = simulate(g.ring(200), 0.9, mu, t_end=20, seed=1)
    assert r.arrivals - r.departures == r.final_queues.sum()
    assert r.final_queues.min() >= 0


def test_mm1():
    # n independent M/M/1 queues; relaxation time 1/(1-sqrt(lam))^2 ~ 11.7,
    # so burn-in 100 leaves a bias below e^-8 and batches of length 30 are
    # ~2.5 relaxation times long (nearly independent batch means)
    lam = 0.5
    r = simulate(g.empty(2000), lam, t_end=400, burn_in=100, seed=3, batches=10)
    for i in range(1, 5):
        assert abs(r.occupancy[i] - lam**i) < 4 * r.occupancy_se[i]


def test_little():
    lam = 0.8
    r = simulate(g.ring(5000), lam, 1.0, t_end=40, burn_in=10, seed=4)
    assert abs(r.mean_response_time - r.occupancy[1:].sum() / lam) < 0.02


def test_validation():
    G = g.ring(10)
    with pytest.raises(ValueError, match="lam"):
        simulate(G, -1, t_end=1)
    with pytest.raises(ValueError, match="mu"):
        simulate(G, 0.5, np.nan, t_end=1)
    with pytest.raises(ValueError, match="t_end"):
        simulate(G, 0.5, t_end=1, burn_in=2)
    with pytest.raises(ValueError, match="initial"):
        simulate(G, 0.5, t_end=1, initial=np.zeros(3, int))
    with pytest.raises(TypeError, match="graph"):
        simulate("ring", 0.5, t_end=1)
    with pytest.warns(RuntimeWarning):
        simulate(G, 1.2, t_end=1)


def test_initial_occupancy():
    r = simulate(g.ring(100), 0.5, t_end=1, initial=np.array([1.0, 0.5, 0.2]),
                 record_dt=0.5, seed=1)
    assert abs(r.paths[0, 1] - 0.5) < 1e-12 and abs(r.paths[0, 2] - 0.2) < 1e-12
