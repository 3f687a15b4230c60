"""qlib.meanfield.cavity (module qlib.meanfield.cavity_method): the cavity fixed point against independent exact routes."""
import numpy as np
import pytest

from qlib import DegreeDistribution
from qlib.meanfield.cavity_method import arrival_rates, cavity
from qlib.meanfield import fluid
from qlib.sim import service as sv


@pytest.mark.parametrize("d", [1, 2, 3])
def test_exponential_services_give_the_fluid_equilibrium(d):
    # Exp(1): the tagged queue is birth-death and the fixed point solves
    # q(i+1) = lam q(i) phi(q(i)), computed by qlib.meanfield.fluid's own recursion
    phi = DegreeDistribution.point(d)
    c = cavity(0.9, phi, sv.exponential(), 30, tol=1e-13)
    q = fluid.equilibrium(0.9, phi)
    k = min(q.size, 8)
    assert np.allclose(c.occupancy[:k], q[:k], rtol=1e-9, atol=1e-14)


@pytest.mark.parametrize("law", [sv.erlang(3), sv.hyperexponential(4)], ids=str)
def test_no_neighbours_is_mph1(law):
    # phi = 1: constant arrival rate, the M/PH/1 queue: Pollaczek-Khinchine
    c = cavity(0.6, DegreeDistribution.point(0), law, 300)
    assert c.truncated_mass < 1e-20
    assert abs(c.mean_response_time - sv.pollaczek_khinchine(0.6, law.scv)) < 1e-8


def test_arrival_rates_point_mass_form():
    # delta_d: lam (q(i)^(d+1) - q(i+1)^(d+1)) / (q(i) - q(i+1)), and the
    # limit (d+1) lam q^d where consecutive entries coincide
    q = np.array([1.0, 0.9, 0.5, 0.1, 0.1])
    r = arrival_rates(q, 0.9, DegreeDistribution.point(2))
    want = 0.9 * (q[:-1] ** 3 - q[1:] ** 3) / np.where(q[:-1] > q[1:], q[:-1] - q[1:], 1)
    want[-1] = 0.9 * 3 * 0.1 ** 2
    assert np.allclose(r, want, rtol=1e-12)


def test_validation():
    with pytest.raises(ValueError, match="lam"):
        cavity(1.0, DegreeDistribution.point(2), sv.erlang(2))
    with pytest.raises(ValueError, match="service"):
        cavity(0.5, DegreeDistribution.point(2), sv.deterministic())
    with pytest.raises(TypeError, match="degrees"):
        cavity(0.5, 2, sv.erlang(2))
