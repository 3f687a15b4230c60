"""Graph.adjacency and interacting_pairs_per_vertex against networkx and
closed forms (ring: 5 positions within distance 2; triangles: 3; double
star: every pair, through a hub)."""
import networkx as nx
import numpy as np
import pytest

from qlib import graphs as g


@pytest.mark.parametrize("G", [g.ring(7), g.cliques(9, 3), g.double_star(8), g.empty(4),
                               g.random_regular(20, 3, seed=1)])
def test_adjacency_matches_networkx(G):
    A = G.adjacency()
    ref = nx.to_numpy_array(G.to_networkx(), nodelist=range(G.n))
    assert A.shape == (G.n, G.n) and A.dtype == np.float64
    assert np.array_equal(A.toarray(), ref)
    A.data[:] = 2.0                       # the matrix owns its arrays
    assert np.array_equal(G.adjacency().toarray(), ref)


@pytest.mark.parametrize("G", [g.ring(12), g.cliques(12, 3), g.double_star(12),
                               g.random_regular(30, 3, seed=2), g.empty(5)])
def test_pairs_within_distance_two(G):
    d = dict(nx.all_pairs_shortest_path_length(G.to_networkx(), cutoff=2))
    brute = sum(len(v) for v in d.values()) / G.n
    assert g.interacting_pairs_per_vertex(G) == brute


def test_pairs_closed_forms_and_bad_input():
    assert g.interacting_pairs_per_vertex(g.ring(5001)) == 5.0
    assert g.interacting_pairs_per_vertex(g.cliques(5001, 3)) == 3.0
    assert g.interacting_pairs_per_vertex(g.double_star(1500)) == 1500.0
    with pytest.raises(TypeError):
        g.interacting_pairs_per_vertex(np.eye(3))
    with pytest.raises(ValueError):
        g.interacting_pairs_per_vertex(g.empty(0))
