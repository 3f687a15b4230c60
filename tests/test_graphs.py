import numpy as np
import pytest
from qlib import graphs as g


def test_ring_and_complete():
    r = g.ring(10)
    assert np.all(r.degrees == 2) and r.num_edges == 10
    c = g.complete(5)
    assert np.all(c.degrees == 4)


def test_double_star_law():
    G = g.double_star(10)
    d = G.degrees
    assert np.sum(d == 2) == 8 and np.sum(d == 9) == 2


def test_cliques():
    G = g.cliques(9, 3)
    assert np.all(G.degrees == 2)
    with pytest.raises(ValueError, match="k"):
        g.cliques(10, 3)


def test_random_regular_and_determinism():
    a = g.random_regular(1000, 3, seed=1)
    b = g.random_regular(1000, 3, seed=1)
    assert np.array_equal(a.indices, b.indices)
    assert np.all(a.degrees == 3)


def test_erdos_renyi_mean_degree():
    G = g.erdos_renyi(20000, 3.0, seed=2)
    assert abs(G.degrees.mean() - 3.0) < 0.1


def test_configuration_pmf():
    G = g.configuration(20000, np.array([0, 0.5, 0, 0.5]), seed=3, method="quota")
    assert G.degrees.max() <= 3


def test_validation():
    with pytest.raises(ValueError, match="self-loops"):
        g.from_edges(3, [(0, 0)])
    with pytest.raises(TypeError, match="n"):
        g.ring(2.5)
    with pytest.raises(ValueError, match="n"):
        g.ring(0)


def test_networkx_roundtrip():
    G = g.ring(7)
    H = g.from_networkx(G.to_networkx())
    assert np.array_equal(G.indices, H.indices)


def test_graph_constructor_rejects_bad_csr():
    ok_ptr = np.array([0, 1, 2])
    with pytest.raises(ValueError, match="self-loops"):
        g.Graph(2, ok_ptr, np.array([0, 1]))
    with pytest.raises(ValueError, match="out of range"):
        g.Graph(2, ok_ptr, np.array([1, 2]))
    with pytest.raises(ValueError, match="out of range"):
        g.Graph(2, ok_ptr, np.array([-1, 0]))
    with pytest.raises(ValueError, match="symmetric"):
        g.Graph(3, np.array([0, 1, 1, 1]), np.array([1]))
    with pytest.raises(ValueError, match="multi-edges"):
        g.Graph(2, np.array([0, 2, 4]), np.array([1, 1, 0, 0]))
    with pytest.raises(ValueError, match="indptr"):
        g.Graph(2, np.array([0, 1]), np.array([1]))
    with pytest.raises(ValueError, match="indptr"):
        g.Graph(2, np.array([0, 2, 1]), np.array([1]))
    with pytest.raises(ValueError, match="out of range"):
        g.from_edges(3, [(0, 3)])
    with pytest.raises(ValueError, match="duplicate"):
        g.from_edges(3, [(0, 1), (1, 0)])


def test_graph_is_immutable():
    G = g.ring(5)
    with pytest.raises(ValueError):
        G.indices[0] = 3
    with pytest.raises(AttributeError):
        G.n = 4


def test_simulate_rejects_non_graphs():
    from qlib.sim import simulate
    with pytest.raises(TypeError, match="graph"):
        simulate(np.zeros((3, 3)), 0.5, t_end=1.0)


def test_graphs_are_stored_32_bit():
    """n < 2**31 and fewer than 2**31 directed edges: int32 CSR arrays."""
    for G in (g.ring(100), g.random_regular(100, 3, seed=0), g.erdos_renyi(100, 2.0, seed=0),
              g.empty(5), g.from_edges(3, [(0, 1)])):
        assert G.indptr.dtype == np.int32 and G.indices.dtype == np.int32, G


def _wide(G):
    """The same graph with int64 CSR arrays (what a graph past 2**31 edges stores)."""
    H = g.Graph(G.n, G.indptr, G.indices, G.name)
    object.__setattr__(H, "indptr", G.indptr.astype(np.int64))
    object.__setattr__(H, "indices", G.indices.astype(np.int64))
    return H


#: the resampling rates of the 64-bit test: static, resampled, a fresh permutation per arrival
WIDE_MUS = (0.0, 2.0, np.inf)


def _runs(mu):
    """One run of each kernel's entry point at resampling rate ``mu``, as a function of the graph."""
    from qlib.sim import simulate
    from qlib.sim.interleave import simulate_interleaved
    from qlib.sim.service import deterministic
    kw = dict(t_end=5.0, seed=3, batches=4)
    return (lambda X: simulate(X, 0.8, mu, **kw),
            lambda X: simulate(X, 0.8, mu, service=deterministic(), **kw),
            lambda X: simulate_interleaved(X, 0.8, mu, seeds=[3, 5], t_end=5.0, batches=4)[1])


def compile_wide_kernels():
    """Run every kernel of the 64-bit test on its int64 graph only: numba compiles them
    for int64 CSR arrays into its cache, and the test finds them there (.ci/run calls
    this on the core that pip leaves idle; no chapter uses these compilations)."""
    import warnings
    H = _wide(g.random_regular(200, 3, seed=4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for mu in WIDE_MUS:
            for run in _runs(mu):
                run(H)


@pytest.mark.parametrize("mu", WIDE_MUS)
def test_kernels_run_64_bit_graphs_bit_for_bit(mu):
    """Every kernel compiles for int32 and int64 graphs and gives the same
    run from both (the width of the indices changes no value)."""
    import warnings
    G = g.random_regular(200, 3, seed=4)
    H = _wide(G)
    assert H.indices.dtype == np.int64 and G.indices.dtype == np.int32
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for run in _runs(mu):
            a, b = run(G), run(H)
            assert a.events == b.events > 0
            assert np.array_equal(a.final_queues, b.final_queues)
            assert np.array_equal(a.occupancy, b.occupancy)
