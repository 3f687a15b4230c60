"""A sweep point may name a user's graph factory ``"package.module:function"`` taking (n, seed)."""
import numpy as np
import pytest

from qlib import graphs
from qlib.sweep.grid import _normalise, graph_for, points


def ring_factory(n, seed):
    """A factory as a user writes it: (n, seed) -> graph (here networkx, converted by qlib)."""
    import networkx as nx
    assert isinstance(seed, np.random.SeedSequence)
    return nx.cycle_graph(n)


def test_graph_for_calls_the_factory_and_converts_networkx():
    g = graph_for({"graph": "tests.test_sweep_factory:ring_factory", "n": 7, "lam": 0.5}, seed=1)
    assert isinstance(g, graphs.Graph) and g.n == 7
    assert np.array_equal(np.diff(g.indptr), np.full(7, 2))


def test_points_accept_a_factory_and_refuse_a_bad_one():
    pts, _, _ = points({"graph": ["tests.test_sweep_factory:ring_factory"], "n": [5], "lam": [0.5]})
    p = _normalise(pts[0], 10.0, 1.0, 0)                # the check sweep() makes of every point
    assert p["graph"].endswith(":ring_factory")
    with pytest.raises(ValueError, match="cannot be imported"):
        _normalise({"graph": "no_such_module_xyz:f", "n": 5, "lam": 0.5}, 10.0, 1.0, 0)
    with pytest.raises(ValueError, match="takes only"):
        _normalise({"graph": "tests.test_sweep_factory:ring_factory", "n": 5, "lam": 0.5, "d": 3},
                   10.0, 1.0, 0)
