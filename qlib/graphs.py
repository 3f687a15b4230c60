"""Immutable undirected CSR graphs and random generators.

Positions are ``0..n-1``; ``indices[indptr[v]:indptr[v+1]]`` are the
neighbours of ``v`` (sorted, no self-loops, no multi-edges, symmetric).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from qlib import _validate as V
from qlib._graph_arrays import _pair_stubs, _rng, _switch_to_simple, _unique
from typing import TYPE_CHECKING
if TYPE_CHECKING:   # names for the annotations only
    from collections.abc import Iterable
    from numpy.typing import ArrayLike
    from qlib._types import Seed
    from qlib.meanfield.degrees import DegreeDistribution
    import networkx as nx

__all__ = ["Graph", "ImplicitGraph", "ring", "torus", "grid", "cliques", "double_star", "complete", "empty",
           "random_regular", "erdos_renyi", "configuration", "from_edges",
           "from_networkx", "interacting_pairs_per_vertex"]


#: Peak bytes of building a graph: this many per vertex (the int64 indptr
#: and its validation's counts) ...
_BYTES_PER_VERTEX = 16
#: ... plus this many per directed edge (each undirected edge counts twice):
#: the int64 edge arrays, their sort order, the checked copies and the keys
#: of the validation.  Measured peak RSS of the builders at n = 4e6 (ring,
#: random_regular d = 3, erdos_renyi c = 3) and n = 1e6 (d = c = 10): 97 to
#: 112 bytes per directed edge, i.e. 212 bytes per vertex for the ring.
_BYTES_PER_EDGE = 112


def _check_n(n, name="n", minimum=1):
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(n).__name__}")
    if n < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {n}")
    if name == "n":
        _check_size(int(n), 0)
    return int(n)


def _check_size(n, edges):
    """Refuse, before allocating, a graph on ``n`` vertices with about
    ``edges`` directed edges whose construction would peak above
    ``qlib._validate.MEMORY_LIMIT``."""
    V.check_memory(_BYTES_PER_VERTEX * int(n) + _BYTES_PER_EDGE * int(edges), "n", int(n),
                   what=f"building the graph ({_BYTES_PER_VERTEX} bytes per vertex and "
                        f"{_BYTES_PER_EDGE} per directed edge, {int(edges)} directed edges)")


def _index_dtype(top):
    """``int32`` if every value is below ``top < 2**31``, else ``int64``."""
    return np.int32 if top < 2**31 else np.int64


@dataclass(frozen=True)
class Graph:
    """An immutable undirected graph on positions ``0..n-1`` in CSR form.

    ``indptr`` (length ``n + 1``) and ``indices`` are stored read-only, as
    ``int32`` where their values fit (``n < 2**31``, respectively fewer than
    ``2**31`` directed edges), else ``int64``; input of either width is
    accepted and checked (sorted-free, no self-loops or multi-edges,
    symmetric).
    """
    n: int
    indptr: np.ndarray
    indices: np.ndarray
    name: str = "graph"

    def __post_init__(self):
        n = _check_n(self.n, "n", 0)
        indptr = np.array(self.indptr, dtype=np.int64)
        indices = np.array(self.indices, dtype=np.int64)
        if indptr.ndim != 1 or indptr.shape[0] != n + 1 or indptr[0] != 0:
            raise ValueError("indptr must have length n+1 and start at 0")
        if np.any(np.diff(indptr) < 0) or indptr[-1] != indices.shape[0]:
            raise ValueError("indptr must be non-decreasing and end at len(indices)")
        if indices.ndim != 1:
            raise ValueError("indices must be one-dimensional")
        if indices.size and (indices.min() < 0 or indices.max() >= n):
            raise ValueError("indices out of range")
        src = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
        if np.any(src == indices):
            raise ValueError("indices: self-loops are not allowed")
        key = src * max(n, 1) + indices
        if _unique(key).size != key.size:
            raise ValueError("indices: multi-edges are not allowed")
        rkey = indices * max(n, 1) + src
        if not np.array_equal(np.sort(key), np.sort(rkey)):
            raise ValueError("indices: graph must be undirected (symmetric)")
        del src, key, rkey
        # stored 32-bit where they fit (half the memory traffic of a look-up);
        # the kernels compile for either width
        indptr = indptr.astype(_index_dtype(indices.shape[0]), copy=False)
        indices = indices.astype(_index_dtype(n), copy=False)
        indptr.setflags(write=False)
        indices.setflags(write=False)
        object.__setattr__(self, "n", n)
        object.__setattr__(self, "indptr", indptr)
        object.__setattr__(self, "indices", indices)

    @property
    def degrees(self) -> np.ndarray:
        d = np.diff(self.indptr)
        d.setflags(write=False)
        return d

    @property
    def num_edges(self) -> int:
        return int(self.indices.shape[0] // 2)

    def neighbors(self, v: int) -> np.ndarray:
        """Neighbours of position ``v`` (a view into ``indices``, sorted)."""
        return self.indices[self.indptr[v]:self.indptr[v + 1]]

    def degree_distribution(self):
        """The empirical degree law of the graph, a :class:`qlib.DegreeDistribution <qlib.meanfield.degrees.DegreeDistribution>`."""
        from qlib.meanfield.degrees import DegreeDistribution  # lazy: a lower floor, kept out of `import qlib.graphs`
        return DegreeDistribution.from_degrees(self.degrees)

    def adjacency(self):
        """The adjacency matrix ``A`` (``A[u, v] = 1`` iff ``u ~ v``) as a
        ``scipy.sparse.csr_matrix`` of float64 sharing this graph's CSR layout."""
        import scipy.sparse as sps  # lazy: keeps `import qlib.graphs` light
        return sps.csr_matrix((np.ones(self.indices.size), self.indices.copy(),
                               self.indptr.copy()), shape=(self.n, self.n))

    def to_networkx(self):
        """The same graph as an undirected ``networkx.Graph`` on nodes ``0..n-1``."""
        import networkx as nx
        G = nx.Graph()
        G.add_nodes_from(range(self.n))
        src = np.repeat(np.arange(self.n), np.diff(self.indptr))
        m = src < self.indices
        G.add_edges_from(zip(src[m].tolist(), self.indices[m].tolist()))
        return G

    def __repr__(self):
        return f"Graph(name={self.name!r}, n={self.n}, edges={self.num_edges})"


@dataclass(frozen=True, eq=False)
class ImplicitGraph:
    """A ring, 2-D torus or complete graph held by its size alone: neighbours are computed.

    Built by ``ring(n, implicit=True)``, ``torus(rows, cols, implicit=True)``
    and ``complete(n, implicit=True)``.  It stores no adjacency, so a
    simulation on it by
    :func:`qlib.sim.simulate_uniformized <qlib.sim.uniformized.simulate_uniformized>`
    needs memory for the queues alone.  Code that reads adjacency arrays
    gets them from :meth:`to_graph`, the same graph in CSR form, built on
    first use and kept.

    Attributes
    ----------
    kind : {"ring", "torus", "complete"}
    n : int
        Number of positions.
    cols : int
        Columns of the torus (vertex ``r cols + c`` at row ``r``, column
        ``c``, as :func:`torus` numbers them); 0 otherwise.
    name : str

    Examples
    --------
    >>> from qlib import graphs
    >>> g = graphs.ring(10**8, implicit=True)       # no adjacency arrays
    >>> g, g.degree
    (ImplicitGraph(kind='ring', n=100000000), 2)
    >>> graphs.torus(3, 4, implicit=True).neighbors(0).tolist()
    [1, 3, 4, 8]
    >>> graphs.ring(5, implicit=True).to_graph().indices[:2].tolist()
    [1, 4]
    """
    kind: str
    n: int
    cols: int = 0
    name: str = ""

    def __post_init__(self):
        if self.kind not in ("ring", "torus", "complete"):
            raise ValueError(f"kind must be 'ring', 'torus' or 'complete', got {self.kind!r}")
        n = _check_n(self.n, "n", 3 if self.kind == "ring" else 2)
        cols = 0
        if self.kind == "torus":
            cols = V.integer(self.cols, "cols", lo=3)
            if n % cols or n // cols < 3:
                raise ValueError(f"n must be rows * cols with rows >= 3, got n={n}, cols={cols}")
        object.__setattr__(self, "n", n)
        object.__setattr__(self, "cols", cols)
        object.__setattr__(self, "name", self.name or self.kind)
        object.__setattr__(self, "_csr", None)

    @property
    def degree(self) -> int:
        """The common degree of every vertex."""
        return {"ring": 2, "torus": 4}.get(self.kind, self.n - 1)

    @property
    def degrees(self) -> np.ndarray:
        d = np.full(self.n, self.degree, np.int64)
        d.setflags(write=False)
        return d

    @property
    def num_edges(self) -> int:
        return self.n * self.degree // 2

    def neighbors(self, v: int) -> np.ndarray:
        """Neighbours of position ``v``, sorted, computed."""
        v = V.integer(v, "v", lo=0, hi=self.n - 1)
        n, c = self.n, self.cols
        if self.kind == "ring":
            w = [(v - 1) % n, (v + 1) % n]
        elif self.kind == "torus":
            r0, c0 = divmod(v, c)
            w = [r0 * c + (c0 - 1) % c, r0 * c + (c0 + 1) % c, (v - c) % n, (v + c) % n]
        else:
            return np.delete(np.arange(n), v)
        return np.array(sorted(w), np.int64)

    def to_graph(self) -> Graph:
        """The same graph in CSR form (:class:`Graph`), built once and kept."""
        if self._csr is None:
            g = {"ring": lambda: ring(self.n),
                 "torus": lambda: torus(self.n // self.cols, self.cols),
                 "complete": lambda: complete(self.n)}[self.kind]()
            object.__setattr__(self, "_csr", g)
        return self._csr

    @property
    def indptr(self) -> np.ndarray:
        """``to_graph().indptr`` (builds the adjacency arrays)."""
        return self.to_graph().indptr

    @property
    def indices(self) -> np.ndarray:
        """``to_graph().indices`` (builds the adjacency arrays)."""
        return self.to_graph().indices

    def __repr__(self):
        extra = f", cols={self.cols}" if self.kind == "torus" else ""
        return f"ImplicitGraph(kind={self.kind!r}, n={self.n}{extra})"


def interacting_pairs_per_vertex(graph: Graph) -> float:
    """``P_n / n``: ordered pairs of positions at distance at most 2, per position.

    Two arrivals can interact when the closed neighbourhoods of their
    positions meet, that is when the positions are at distance ``<= 2``;
    ``P_n`` is the number of such ordered pairs (a position with itself
    included), the number of non-zero entries of ``(A + I)^2``.

    Parameters
    ----------
    graph : Graph

    Returns
    -------
    float
        ``P_n / n``; at most ``1 + Δ + Δ(Δ − 1)`` for maximum degree ``Δ``.

    Raises
    ------
    TypeError
        If ``graph`` is not a :class:`~qlib.graphs.Graph`.
    ValueError
        If the graph has no vertices.
    """
    if not isinstance(graph, Graph):
        raise TypeError(f"graph must be a qlib.graphs.Graph, got {type(graph).__name__}")
    if graph.n == 0:
        raise ValueError("graph must have n >= 1 vertices, got 0")
    import scipy.sparse as sps
    B = graph.adjacency() + sps.identity(graph.n, format="csr")
    return (B @ B).nnz / graph.n


def _from_pairs(n, a, b, name, clean=True):
    """Build a Graph from edge arrays; with ``clean`` drop self-loops and
    duplicate edges (erasure)."""
    a = np.asarray(a, dtype=np.int64).ravel()
    b = np.asarray(b, dtype=np.int64).ravel()
    if clean:
        keep = a != b
        a, b = a[keep], b[keep]
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        key = _unique(lo * n + hi)
        a, b = key // n, key % n
    src = np.concatenate([a, b])
    dst = np.concatenate([b, a])
    order = np.lexsort((dst, src))
    src, dst = src[order], dst[order]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
    return Graph(n, indptr, dst, name)


def from_edges(n: int, edges: Iterable[tuple[int, int]], name: str = "from_edges") -> Graph:
    """Graph on ``n`` vertices from an iterable of pairs (self-loops and
    duplicate edges raise ValueError)."""
    n = _check_n(n, "n", 0)
    e = np.asarray(list(edges) if not isinstance(edges, np.ndarray) else edges,
                   dtype=np.int64)
    if e.size == 0:
        return Graph(n, np.zeros(n + 1, np.int64), np.zeros(0, np.int64), name)
    if e.ndim != 2 or e.shape[1] != 2:
        raise ValueError("edges must be a sequence of pairs")
    _check_size(n, 2 * e.shape[0])
    if e.min() < 0 or e.max() >= n:
        raise ValueError("edges: vertex out of range")
    if np.any(e[:, 0] == e[:, 1]):
        k = int(np.flatnonzero(e[:, 0] == e[:, 1])[0])
        raise ValueError(f"edges: self-loops are not allowed (pair {k}: {tuple(int(x) for x in e[k])})")
    lo, hi = e.min(axis=1), e.max(axis=1)
    if _unique(lo * n + hi).size != lo.size:
        raise ValueError("edges: duplicate edges are not allowed")
    return _from_pairs(n, lo, hi, name, clean=False)


def from_networkx(G: nx.Graph, name: str | None = None, *,
                  return_mapping: bool = False) -> Graph | tuple[Graph, dict]:
    """Graph from an undirected ``networkx.Graph``; nodes are relabelled ``0..n-1``.

    Node ``v`` becomes vertex ``i``, its position in ``list(G.nodes())`` (networkx's
    insertion order). Self-loops are refused, as :func:`from_edges` refuses them.

    Parameters
    ----------
    G : networkx.Graph
        Undirected; its nodes may be any hashable objects.
    name : str, optional
        The graph's name (default ``"networkx"``).
    return_mapping : bool, default False
        Also return the mapping ``{node: vertex}``.

    Returns
    -------
    Graph, or (Graph, dict) with ``return_mapping=True``

    Raises
    ------
    TypeError
        If ``G`` is not a ``networkx.Graph``, or is directed (pass
        ``G.to_undirected()``).
    ValueError
        If ``G`` has self-loops.

    Examples
    --------
    >>> import networkx as nx
    >>> from qlib.graphs import from_networkx
    >>> from_networkx(nx.cycle_graph(6)).n
    6
    >>> g, where = from_networkx(nx.path_graph(["a", "b", "c"]), return_mapping=True)
    >>> where
    {'a': 0, 'b': 1, 'c': 2}
    """
    import networkx as nx
    if not isinstance(G, nx.Graph):
        raise TypeError(f"G must be an undirected networkx.Graph, got {type(G).__name__}")
    if G.is_directed():
        raise TypeError(V.directed_graph("G", G))
    nodes = list(G.nodes())
    idx = {v: i for i, v in enumerate(nodes)}
    loops = sum(1 for u, v in G.edges() if u == v)
    if loops:
        raise ValueError(f"G has {loops} self-loop(s), which a JSQ graph cannot hold; remove them "
                         "first: G.remove_edges_from(list(networkx.selfloop_edges(G)))")
    edges = [(idx[u], idx[v]) for u, v in G.edges()]
    g = from_edges(len(nodes), edges, name or "networkx")
    return (g, idx) if return_mapping else g


def empty(n: int) -> Graph:
    """``n`` isolated vertices: every server is an M/M/1 queue.

    Examples
    --------
    >>> empty(4)
    Graph(name='empty', n=4, edges=0)
    """
    n = _check_n(n)
    return Graph(n, np.zeros(n + 1, np.int64), np.zeros(0, np.int64), "empty")


def ring(n: int, *, implicit: bool = False) -> Graph | ImplicitGraph:
    """Cycle on n vertices (n=1: isolated vertex, n=2: single edge).

    With ``implicit=True`` (``n >= 3``) an :class:`ImplicitGraph`: no
    adjacency arrays, neighbours computed.

    Examples
    --------
    >>> from qlib.graphs import ring
    >>> g = ring(5)
    >>> g.n, g.indices[g.indptr[0]:g.indptr[1]].tolist()
    (5, [1, 4])
    """
    if V.flag(implicit, "implicit"):
        return ImplicitGraph("ring", n)
    n = _check_n(n)
    _check_size(n, 2 * n)
    if n == 1:
        return empty(1)
    a = np.arange(n)
    return _from_pairs(n, a, (a + 1) % n, "ring")


def torus(rows: int, cols: int, *, implicit: bool = False) -> Graph | ImplicitGraph:
    """The ``rows × cols`` torus: a grid whose rows and columns wrap around (degree 4).

    Vertex ``r * cols + c`` sits at row ``r``, column ``c``; its neighbours are the
    vertices one step up, down, left and right, modulo the sides.

    Parameters
    ----------
    rows, cols : int
        Both ``>= 3`` (so that the four neighbours are distinct).
    implicit : bool, default False
        Return an :class:`ImplicitGraph` (no adjacency arrays).

    Returns
    -------
    Graph or ImplicitGraph

    Raises
    ------
    TypeError, ValueError
        If ``rows`` or ``cols`` is not an int ``>= 3``.

    Examples
    --------
    >>> from qlib.graphs import torus
    >>> g = torus(3, 4)
    >>> g.n, sorted(set((g.indptr[1:] - g.indptr[:-1]).tolist()))
    (12, [4])
    """
    rows = V.integer(rows, "rows", lo=3)
    cols = V.integer(cols, "cols", lo=3)
    if V.flag(implicit, "implicit"):
        return ImplicitGraph("torus", rows * cols, cols)
    return _lattice(rows, cols, wrap=True)


def grid(rows: int, cols: int) -> Graph:
    """The ``rows × cols`` grid without wrap-around (degrees 2 to 4).

    Vertex ``r * cols + c`` sits at row ``r``, column ``c``.

    Parameters
    ----------
    rows, cols : int
        Both ``>= 1``.

    Returns
    -------
    Graph

    Examples
    --------
    >>> from qlib.graphs import grid
    >>> g = grid(2, 3)
    >>> g.n, int(g.indptr[-1]) // 2          # vertices and edges
    (6, 7)
    """
    rows = V.integer(rows, "rows", lo=1)
    cols = V.integer(cols, "cols", lo=1)
    return _lattice(rows, cols, wrap=False)


def _lattice(rows, cols, wrap):
    idx = np.arange(rows * cols, dtype=np.int64).reshape(rows, cols)
    if wrap:
        right = np.column_stack([idx.ravel(), np.roll(idx, -1, axis=1).ravel()])
        down = np.column_stack([idx.ravel(), np.roll(idx, -1, axis=0).ravel()])
    else:
        right = np.column_stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()])
        down = np.column_stack([idx[:-1, :].ravel(), idx[1:, :].ravel()])
    return from_edges(rows * cols, np.vstack([right, down]))


def complete(n: int, *, implicit: bool = False) -> Graph | ImplicitGraph:
    """The complete graph on ``n`` vertices (JSQ over all servers).

    With ``implicit=True`` (``n >= 2``) an :class:`ImplicitGraph`: no
    adjacency arrays, neighbours computed.

    Examples
    --------
    >>> from qlib.graphs import complete
    >>> complete(4).n
    4
    """
    if V.flag(implicit, "implicit"):
        return ImplicitGraph("complete", n)
    n = _check_n(n)
    _check_size(n, n * (n - 1))
    a, b = np.triu_indices(n, 1)
    return _from_pairs(n, a, b, "complete", clean=False)


def cliques(n: int, k: int = 3) -> Graph:
    """Disjoint k-cliques; requires k | n.

    Examples
    --------
    >>> cliques(6, 3)
    Graph(name='cliques3', n=6, edges=6)
    """
    n = _check_n(n)
    k = _check_n(k, "k")
    if n % k:
        raise ValueError(f"k must divide n (n={n}, k={k})")
    _check_size(n, n * (k - 1))
    a, b = np.triu_indices(k, 1)
    off = (np.arange(n // k) * k)[:, None]
    return _from_pairs(n, (off + a).ravel(), (off + b).ravel(), f"cliques{k}",
                       clean=False)


def double_star(n: int) -> Graph:
    """Hubs 0 and 1 joined to each other and to all other vertices."""
    n = _check_n(n, "n", 3)
    _check_size(n, 4 * (n - 2) + 2)
    rest = np.arange(2, n)
    a = np.concatenate([[0], np.zeros(n - 2, int), np.ones(n - 2, int)])
    b = np.concatenate([[1], rest, rest])
    return _from_pairs(n, a, b, "double_star", clean=False)


def random_regular(n: int, d: int, seed: Seed = None, max_tries: int = 100) -> Graph:
    """Uniform-ish random d-regular graph by the configuration (pairing) model.

    Stubs are shuffled and paired (numpy, O(nd)); pairings containing a
    self-loop or multi-edge are rejected and redrawn (this gives the exact
    uniform distribution) for up to ``max_tries`` attempts.  A pairing is
    simple with probability about ``exp(-(d^2-1)/4)`` (2 % at ``d = 4``,
    less at small ``n``), so the tries can run out; the last pairing is then
    repaired by random double-edge switches (each self-loop or repeated
    edge ``{a, b}`` and a uniform edge ``{c, e}`` become ``{a, c}, {b, e}``
    when both are new), which keeps every degree ``d`` (the result is then
    close to, not exactly, uniform; a pairing whose switches get stuck is
    redrawn).  The graph is always simple and ``d``-regular; ``RuntimeError``
    if ten repaired pairings do not get there.

    Examples
    --------
    >>> from qlib.graphs import random_regular
    >>> g = random_regular(10, 3, seed=1)
    >>> sorted(set((g.indptr[1:] - g.indptr[:-1]).tolist()))
    [3]
    """
    n = _check_n(n)
    d = _check_n(d, "d", 0)
    if d >= n:
        raise ValueError(f"d must be < n (d={d}, n={n})")
    if (n * d) % 2:
        raise ValueError("n*d must be even")
    _check_size(n, n * d)
    rng = _rng(seed)
    deg = np.full(n, d, dtype=np.int64)
    for _ in range(max_tries):
        a, b = _pair_stubs(deg, rng)
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        if np.all(lo != hi) and _unique(lo * n + hi).size == lo.size:
            return _from_pairs(n, lo, hi, f"random_regular{d}", clean=False)
    for _ in range(10):                       # switching can get stuck near K_{d+1}
        try:
            lo, hi = _switch_to_simple(n, a, b, rng)
        except RuntimeError:
            a, b = _pair_stubs(deg, rng)
            continue
        return _from_pairs(n, lo, hi, f"random_regular{d}", clean=False)
    raise RuntimeError(f"random_regular: no simple {d}-regular graph on {n} vertices found")


def erdos_renyi(n: int, c: float, seed: Seed = None) -> Graph:
    """Sparse Erdős–Rényi graph with mean degree ≈ c, O(n + m).

    Draws m ~ Binomial(n(n-1)/2, c/(n-1)) and m uniform ordered vertex
    pairs, then drops self-loops and duplicates (the result is G(n, m')
    with m' slightly below m; the deficit is O(c^2) edges, negligible for
    the sparse regime this book uses).

    Examples
    --------
    >>> from qlib.graphs import erdos_renyi
    >>> erdos_renyi(100, 2.0, seed=1).n
    100
    """
    n = _check_n(n)
    c = V.real(c, "c", lo=0, hi=(n - 1) if n > 1 else None)
    _check_size(n, c * n)
    rng = _rng(seed)
    if n == 1:
        return empty(1)
    m = rng.binomial(n * (n - 1) // 2, c / (n - 1))
    a = rng.integers(0, n, m)
    b = rng.integers(0, n, m)
    return _from_pairs(n, a, b, "erdos_renyi", clean=True)


def configuration(n: int, degrees: DegreeDistribution | ArrayLike, seed: Seed = None,
                  method: str = "iid") -> Graph:
    """Configuration model with degree law ``degrees`` (a DegreeDistribution,
    or a probability vector p(0..K)).

    ``method='iid'``: degrees i.i.d. from the law; ``'quota'``: round(n p(k))
    vertices of degree k (remainder by largest fractional parts), randomly
    placed.  If the stub total is odd one stub is dropped.  Stubs are paired
    uniformly; self-loops and multi-edges are erased.

    Examples
    --------
    >>> g = configuration(1000, [0, 0, 0.5, 0.5], seed=1)   # degrees 2 and 3
    >>> g.n, int(g.degrees.max())
    (1000, 3)
    """
    n = _check_n(n)
    pmf = getattr(degrees, "pmf", degrees)
    try:
        pmf = np.asarray(pmf, dtype=float)
    except (TypeError, ValueError):
        raise TypeError("degrees must be a DegreeDistribution or pmf array")
    if pmf.ndim != 1 or pmf.size == 0 or np.any(pmf < 0) or not np.isclose(pmf.sum(), 1):
        raise ValueError("degrees must be a probability vector")
    pmf = pmf / pmf.sum()
    _check_size(n, n * float(np.arange(pmf.size) @ pmf))   # the mean stub count
    rng = _rng(seed)
    if method == "iid":
        deg = rng.choice(pmf.size, size=n, p=pmf)
    elif method == "quota":
        x = n * pmf
        cnt = np.floor(x).astype(np.int64)
        r = n - cnt.sum()
        cnt[np.argsort(-(x - cnt), kind="stable")[:r]] += 1
        deg = np.repeat(np.arange(pmf.size), cnt)
        rng.shuffle(deg)
    else:
        raise ValueError("method must be 'iid' or 'quota'")
    a, b = _pair_stubs(deg.astype(np.int64), rng)
    return _from_pairs(n, a, b, "configuration", clean=True)
