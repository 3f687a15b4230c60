"""Unit tests of qlib.meanfield.finite_drift."""
import numpy as np
import pytest

from qlib import DegreeDistribution, graphs
from qlib.meanfield import fluid
from qlib.meanfield.finite_drift import placement_drift, sampled_drift


@pytest.mark.parametrize("G", [graphs.ring(6), graphs.cliques(6, 3),
                               graphs.from_edges(6, [(0, 1), (1, 2), (1, 3)])])
def test_enumeration_equals_sampling_formula(G):
    x = np.random.default_rng(3).integers(0, 4, G.n)
    N = [(x >= j).sum() for j in range(x.max() + 2)]
    a = placement_drift(G, x, 0.7)
    b = sampled_drift(N, G.n, 0.7, DegreeDistribution.from_graph(G))
    assert np.allclose(a, b, atol=1e-13)


def test_sampled_drift_tends_to_fluid_drift_within_bound():
    law, n, lam = DegreeDistribution.point(2), 10**6, 0.9
    N = np.array([n, 900_000, 600_000, 100_000, 10])
    bound = lam * 3 * 2 / (n - 3)
    assert np.max(np.abs(sampled_drift(N, n, lam, law) - fluid.drift(N / n, lam, law)[1:])) <= bound


def test_errors_name_the_parameter():
    with pytest.raises(ValueError, match="max_n"):
        placement_drift(graphs.ring(12), np.zeros(12, int), 0.5)
    with pytest.raises(ValueError, match="lam"):
        sampled_drift([4, 2], 4, -1.0, DegreeDistribution.point(1))
    with pytest.raises(TypeError, match="degrees"):
        sampled_drift([4, 2], 4, 0.5, [0, 1])
    with pytest.raises(ValueError, match="N must"):
        sampled_drift([4, 5], 4, 0.5, DegreeDistribution.point(1))
