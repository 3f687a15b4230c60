"""The exact drift of the occupancy of a finite system at resampling rate ``μ = ∞``.

With a fresh uniform placement of the servers before every arrival, the
expected rate of change of ``q_n(i)`` (the generator of the finite Markov
chain applied to ``q_n(i)``) can be computed without any independence
assumption. Two routes, independent of :func:`qlib.meanfield.fluid.drift`:

* :func:`placement_drift` enumerates all ``n!`` placements and all arrival
  positions on an explicit graph (tiny graphs only);
* :func:`sampled_drift` uses that the ``d + 1`` servers of a closed
  neighbourhood are a uniform sample *without* replacement, so the shortest
  has at least ``j`` tasks with probability ``C(N_j, d+1)/C(n, d+1)``.

As ``n → ∞`` with ``N_j/n → q(j)`` both tend to the fluid drift; at finite
``n`` the difference per level is at most ``λ Σ_d p(d)(d+1)d/(n−d−1)``.

Examples
--------
>>> import numpy as np
>>> from qlib import graphs, DegreeDistribution
>>> G = graphs.ring(5)
>>> x = np.array([0, 1, 2, 0, 1])
>>> N = [(x >= j).sum() for j in range(x.max() + 2)]
>>> a = placement_drift(G, x, 0.7)
>>> b = sampled_drift(N, G.n, 0.7, DegreeDistribution.from_graph(G))
>>> bool(np.allclose(a, b, atol=1e-13))
True
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from qlib.meanfield.degrees import DegreeDistribution
from typing import TYPE_CHECKING
if TYPE_CHECKING:   # names for the annotations only
    from numpy.typing import ArrayLike
    from qlib.graphs import Graph

__all__ = ["placement_drift", "sampled_drift"]


def _check_lam(lam) -> float:
    if isinstance(lam, bool) or not isinstance(lam, (int, float, np.floating, np.integer)):
        raise TypeError(f"lam must be a real number, got {type(lam).__name__}")
    lam = float(lam)
    if not (math.isfinite(lam) and lam > 0):
        raise ValueError(f"lam must be finite and > 0, got {lam}")
    return lam


def placement_drift(graph: Graph, x: ArrayLike, lam: float, *, max_n: int = 9) -> np.ndarray:
    """Exact ``E[dq_n(i)/dt]``, ``i = 1..K``, by enumerating every placement.

    Each arrival position receives rate ``λ_n/n = λ``; a task at a position
    joins a shortest queue of its closed neighbourhood, whose servers are
    given by a uniformly random permutation (all ``n!`` are averaged).
    Departures lower ``N_i`` at rate ``#{u : x_u = i}``.

    Parameters
    ----------
    graph : qlib.graphs.Graph
        The base graph on ``n`` positions (``n <= max_n``).
    x : array_like of int
        Queue lengths of the ``n`` servers, ``>= 0``.
    lam : float
        Arrival rate per server ``λ > 0``.
    max_n : int, default 9
        Refuse larger graphs (``n!`` placements).

    Returns
    -------
    numpy.ndarray, shape (K,)
        The drift of ``q_n(1..K)``, ``K = max(x) + 1``.

    Examples
    --------
    >>> import numpy as np
    >>> from qlib import graphs
    >>> placement_drift(graphs.ring(3), np.array([0, 0, 0]), 0.5).round(6).tolist()
    [0.5]
    """
    lam = _check_lam(lam)
    n = int(graph.n)
    if n > max_n:
        raise ValueError(f"graph must have at most max_n = {max_n} vertices, got {n}")
    x = np.asarray(x)
    if x.shape != (n,) or not np.issubdtype(x.dtype, np.integer) or np.any(x < 0):
        raise ValueError(f"x must hold {n} non-negative integers")
    K = int(x.max()) + 1
    up = np.zeros(K + 2)
    hoods = [[u, *graph.neighbors(u).tolist()] for u in range(n)]
    for perm in itertools.permutations(range(n)):         # perm[position] = server
        for hood in hoods:
            up[1 + min(x[perm[v]] for v in hood)] += 1     # joins a queue of length m: N_{m+1} + 1
    up *= lam / math.factorial(n)
    down = np.bincount(x, minlength=K + 2).astype(float)
    return (up - down)[1:K + 1] / n


def sampled_drift(N: ArrayLike, n: int, lam: float, degrees: DegreeDistribution) -> np.ndarray:
    """Drift of ``q_n(i)``, ``i = 1..K``, by sampling without replacement.

    Parameters
    ----------
    N : array_like of int, shape (K+1,)
        ``N[j]`` = number of servers with at least ``j`` tasks, ``j = 0..K``
        (``N[0] = n``), non-increasing.
    n : int
        Number of servers.
    lam : float
        Arrival rate per server ``λ > 0``.
    degrees : DegreeDistribution
        Degree law ``p_n`` of the positions (``max degree < n``).

    Returns
    -------
    numpy.ndarray, shape (K,)
        ``λ Σ_d p(d)[h_{i−1}(d+1) − h_i(d+1)] − (N_i − N_{i+1})/n`` with
        ``h_j(k) = C(N_j, k)/C(n, k)``.

    Examples
    --------
    >>> from qlib import DegreeDistribution
    >>> sampled_drift([4, 2], 4, 0.5, DegreeDistribution.point(1)).round(6).tolist()
    [-0.083333]
    """
    lam = _check_lam(lam)
    if not isinstance(degrees, DegreeDistribution):
        raise TypeError(f"degrees must be a DegreeDistribution, got {type(degrees).__name__}")
    n = int(n)
    N = [int(v) for v in N]
    if n < 1 or N[0] != n or any(a < b for a, b in zip(N, N[1:])) or N[-1] < 0:
        raise ValueError("N must be non-increasing from N[0] = n down to a value >= 0")
    if degrees.max_degree >= n:
        raise ValueError(f"degrees must have max degree < n = {n}, got {degrees.max_degree}")
    N = N + [0]
    h = [sum(p * math.comb(Nj, d + 1) / math.comb(n, d + 1) for d, p in enumerate(degrees.pmf) if p)
         for Nj in N]
    return np.array([lam * (h[i - 1] - h[i]) - (N[i] - N[i + 1]) / n for i in range(1, len(N) - 1)])
