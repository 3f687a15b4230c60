"""Exact stationary laws of JSQ on tiny graphs: the server-level chain (finite or infinite μ), by sparse linear algebra.

Exact stationary distribution of JSQ on a tiny (resampled) graph.

For ``n <= 5`` servers the Markov chain of the simulator is small enough to
solve by sparse linear algebra.  Servers are exchangeable, so instead of the
pair (queue vector by server, labelling) we use the queue lengths **by
position**, ``Y = (Y_1, ..., Y_n)``, which is itself a Markov chain
(strong lumpability, see the chapter *Is the simulator right?*):

* arrival at each position ``p`` at rate ``lam``: the task joins a shortest
  queue of the closed neighbourhood ``N[p]``, ties uniform;
* departure at rate 1 from every busy position;
* at rate ``mu``: ``Y`` is replaced by ``Y`` composed with a uniformly random
  permutation of the positions.

For ``mu = inf`` the permutation is fresh before every arrival and the
multiset of queue lengths (the sorted vector) is a Markov chain; it is solved
directly.

Truncation: queues are capped at ``truncation``; an arrival that would join a
queue already holding ``truncation`` tasks is **blocked** (lost).  The blocked
fraction of arrivals and the stationary mass of the boundary are reported.
"""
from __future__ import annotations

import math
import warnings
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
import functools
from dataclasses import dataclass, field
from itertools import combinations, permutations
from scipy.sparse.csgraph import connected_components
from typing import TYPE_CHECKING

if TYPE_CHECKING:   # names for the annotations only
    import networkx as nx
from qlib.sim.start import _as_graph, _check_choices
from qlib.stats._results import ResultIO
from qlib import _validate as V
from qlib.graphs import Graph, from_edges
from qlib.exact._truncation import _LevelEstimates

__all__ = ['stationary', 'ExactResult', 'MAX_N', 'MAX_STATES']

#: Largest number of servers :func:`~qlib.exact.tiny.stationary` accepts (the state space grows
#: like (K+1)**n).
MAX_N = 5
#: Largest truncated state space :func:`~qlib.exact.tiny.stationary` builds.
MAX_STATES = 2_000_000
_LU_MAX = 4000  # sparse LU below this many unknowns, GMRES above


@dataclass(frozen=True, repr=False, eq=False)
class ExactResult(_LevelEstimates, ResultIO):
    """Stationary quantities of the truncated chain.

    Attributes
    ----------
    occupancy : numpy.ndarray
        ``q(0), ..., q(truncation)``: mean fraction of servers with at least
        ``i`` tasks.
    mean_response_time : float
        Arrival side: ``E[k + 1]`` over accepted arrivals, ``k`` the queue
        length joined.
    little_response_time : float
        ``E[total tasks] / (lam n (1 - blocking_probability))`` (Little's
        law); equals ``mean_response_time`` up to rounding.
    blocking_probability : float
        Fraction of arrivals that are blocked by the truncation.
    truncated_mass : float
        Stationary probability that some queue holds ``truncation`` tasks.
    n_states : int
        Number of states of the linear system that was solved.
    marginals : numpy.ndarray
        ``(n, truncation + 1)``: law of the queue length at each position
        (``mu = inf``: identical rows, the law of a uniform server).
    n, lam, mu, truncation
        The inputs.
    response_time : float
        ``mean_response_time``, under the name every result shares.
    error_estimates, error_bounds : dict
        ``{"occupancy": array, "response_time": float}``: *estimated*
        errors of the truncated chain's values against the untruncated
        chain, from the solves at ``truncation − 1`` and ``truncation − 2`` (made on
        first use): the last change scaled by the geometric tail of the
        changes.  Not certified bounds (``error_bounds`` is the name every
        exact solver shares); ``inf`` when ``truncation < 3``.
    """

    occupancy: np.ndarray
    mean_response_time: float
    little_response_time: float
    blocking_probability: float
    truncated_mass: float
    n_states: int
    marginals: np.ndarray
    n: int
    lam: float
    mu: float
    truncation: int
    _rerun: object = field(default=None, repr=False, compare=False)

    @property
    def response_time(self):
        """``mean_response_time``."""
        return self.mean_response_time


def _check(graph, lam, mu, truncation, name="truncation"):
    graph = _as_graph(graph)
    if not 1 <= graph.n <= MAX_N:
        raise ValueError(f"graph.n must be in [1, {MAX_N}] for the exact "
                         f"solver, got {graph.n}")
    if isinstance(truncation, bool) or not isinstance(truncation, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(truncation).__name__}")
    truncation = int(truncation)
    if truncation < 1:
        raise ValueError(f"{name} must be >= 1, got {truncation}")
    lam = V.positive(lam, "lam")
    mu = V.nonnegative(mu, "mu", allow_inf=True)
    if lam >= 1:
        warnings.warn(f"lam = {lam} >= 1: the untruncated chain is unstable; "
                      "the result describes the loss system only",
                      RuntimeWarning, stacklevel=3)
    return lam, mu, truncation


def _solve_left(rows, cols, vals, size, N):
    """Solve x G = 0, sum(x[:N]) = 1 for G given as COO triplets.

    The chain has a single recurrent class containing the empty state 0
    (reached from every state by departures), so the left null space of G
    is one-dimensional and x[0] > 0.  The equation of column 0 is replaced
    by x[0] = 1 (a dense normalisation row would ruin the sparse LU), and
    the solution is normalised afterwards.  Small systems are solved by
    sparse LU; large ones (whose LU fills in badly: the state space is a
    4- or 5-dimensional grid) by GMRES preconditioned with an incomplete
    LU, to a relative residual of 1e-13, falling back to LU if GMRES fails.
    """
    keep = cols != 0
    r = np.concatenate([cols[keep], [0]])
    c = np.concatenate([rows[keep], [0]])
    v = np.concatenate([vals[keep], [1.0]])
    GT = sp.csc_matrix((v, (r, c)), shape=(size, size))
    rhs = np.zeros(size)
    rhs[0] = 1.0
    x = None
    if size > _LU_MAX:
        ilu = spla.spilu(GT, drop_tol=1e-3, fill_factor=10)
        M = spla.LinearOperator(GT.shape, ilu.solve)
        x, info = spla.gmres(GT, rhs, M=M, rtol=1e-13, atol=0.0,
                             restart=30, maxiter=200)
        res = np.linalg.norm(GT @ x - rhs) / max(np.linalg.norm(x), 1.0)
        if info != 0 or not res < 1e-11:
            x = None
    if x is None:
        x = spla.spsolve(GT, rhs)
    return x / x[:N].sum()


def _grid(n, L):
    """All states of {0..L}^n as rows (position p in column p)."""
    base = L + 1
    codes = np.arange(base ** n, dtype=np.int64)
    Y = np.empty((codes.size, n), dtype=np.int64)
    c = codes.copy()
    for p in range(n):
        Y[:, p] = c % base
        c //= base
    return Y, base ** np.arange(n, dtype=np.int64)


def _looked_sets(graph, p, choices):
    """The position sets an arrival at ``p`` may look at, each with its
    probability: the closed neighbourhood (``choices`` None), else ``p`` with
    each ``(choices - 1)``-subset of its neighbours, uniformly (the whole
    neighbourhood when the degree is below ``choices``)."""
    nbs = [int(q) for q in graph.neighbors(p)]
    if choices is None or len(nbs) < choices:
        return [(np.array([p] + nbs, np.int64), 1.0)]
    subs = list(combinations(range(len(nbs)), choices - 1))
    return [(np.array([p] + [nbs[i] for i in c], np.int64), 1.0 / len(subs)) for c in subs]


def _arrival_terms(Y, graph, lam, L, choices=None):
    """Yield (rows, position joined, rate) over positions, looked sets and
    tie members; ``position`` may be at level L (blocked)."""
    for p in range(graph.n):
        for nb, w in _looked_sets(graph, p, choices):
            vals = Y[:, nb]
            m = vals.min(axis=1)
            tied = vals == m[:, None]
            ties = tied.sum(axis=1)
            for j, q in enumerate(nb):
                rows = np.nonzero(tied[:, j])[0]
                yield rows, q, lam * w / ties[rows]


def _automorphisms(graph):
    """All automorphisms of the graph, as permutations of the positions
    (brute force over the n! <= 120 permutations)."""
    n = graph.n
    E = {(u, int(v)) for u in range(n) for v in graph.neighbors(u)}
    auts = [p for p in permutations(range(n))
            if all((p[u], p[v]) in E for u, v in E)]
    return np.array(auts, dtype=np.int64).reshape(len(auts), n)


def _finite_mu(graph, lam, mu, L, choices=None):
    """Chain of queue lengths by position, lumped by the automorphisms of
    the graph.

    The generator commutes with relabelling the positions by an
    automorphism (arrivals, departures and the uniform resampling are all
    invariant), so the partition of the states into orbits is (strongly)
    lumpable and the stationary law is constant on each orbit.  We solve
    the lumped chain and spread each orbit's mass uniformly over it.
    """
    n = graph.n
    N = (L + 1) ** n
    if N > MAX_STATES:
        raise ValueError(f"truncation too large for n={n}: (truncation+1)^n = {N} "
                         f"> {MAX_STATES} states")
    Y, w = _grid(n, L)
    # state code = row index of the grid; orbit representative = min code
    mincode = np.full(N, N, dtype=np.int64)
    for g in _automorphisms(graph):
        np.minimum(mincode, Y[:, g] @ w, out=mincode)
    rep, inv = np.unique(mincode, return_inverse=True)   # rep[0] = 0: empty
    C = rep.size
    csize = np.bincount(inv, minlength=C).astype(float)
    Yr = Y[rep]
    rr, cc, vv = [], [], []
    out = np.zeros(C)
    block = np.zeros(C)          # blocked arrival rate in each state
    resp = np.zeros(C)           # sum over accepted arrivals of rate*(k+1)
    for rows, q, rate in _arrival_terms(Yr, graph, lam, L, choices):
        k = Yr[rows, q]
        ok = k < L
        r_ok = rows[ok]
        rr.append(r_ok)
        cc.append(inv[rep[r_ok] + w[q]])
        vv.append(rate[ok])
        np.add.at(out, r_ok, rate[ok])
        np.add.at(block, rows[~ok], rate[~ok])
        np.add.at(resp, r_ok, rate[ok] * (k[ok] + 1))
    for p in range(n):
        rows = np.nonzero(Yr[:, p] > 0)[0]
        rr.append(rows)
        cc.append(inv[rep[rows] - w[p]])
        vv.append(np.ones(rows.size))
        out[rows] += 1.0
    ar = np.arange(C)
    rows = np.concatenate(rr + [ar])
    cols = np.concatenate(cc + [ar])
    vals = np.concatenate(vv + [-(out + mu)])
    size = C
    if mu > 0:
        # x = [pi_hat, v], v(m) = mass of the multiset m; from v(m) the
        # resampling spreads rate mu uniformly over the grid states of m,
        # i.e. mu |c| / |m| to each orbit c inside m
        mcode = np.sort(Yr, axis=1) @ w
        _, mid = np.unique(mcode, return_inverse=True)
        M = int(mid.max()) + 1
        msize = np.bincount(mid, weights=csize, minlength=M)
        rows = np.concatenate([rows, ar, C + mid, C + np.arange(M)])
        cols = np.concatenate([cols, C + mid, ar, C + np.arange(M)])
        vals = np.concatenate([vals, -np.ones(C), mu * csize / msize[mid],
                               np.ones(M)])
        size = C + M
    x = _solve_left(rows, cols, vals, size, C)
    pi = x[:C][inv] / csize[inv]
    return Y, pi, block[inv], resp[inv], size


def _infinite_mu(graph, lam, L, choices=None):
    n = graph.n
    # all non-decreasing vectors in {0..L}^n, as rows
    from itertools import combinations_with_replacement
    N = math.comb(L + n, n)
    if N > MAX_STATES:
        raise ValueError(f"truncation too large for n={n}: {N} > {MAX_STATES}")
    S = np.array(list(combinations_with_replacement(range(L + 1), n)),
                 dtype=np.int64)
    base = L + 1
    w = base ** np.arange(n, dtype=np.int64)
    index = {int(c): i for i, c in enumerate(S @ w)}
    deg = graph.degrees

    def idx(T):
        T = np.sort(T, axis=1)
        return np.fromiter((index[int(c)] for c in T @ w), np.int64, T.shape[0])

    rr, cc, vv = [], [], []
    out = np.zeros(N)
    block = np.zeros(N)
    resp = np.zeros(N)
    # an arrival at a position of degree d sees a uniform (d+1)-subset of the
    # servers; P(min >= v) = C(#{>= v}, d+1) / C(n, d+1).  With choices = k
    # it sees its own server and k - 1 of the d others, a uniform subset of a
    # uniform subset: a uniform m-subset, m = min(k, d + 1)
    looked = [int(d) + 1 if choices is None else min(int(choices), int(d) + 1)
              for d in deg]
    for j in range(n):
        v = S[:, j]
        # act only on the first server holding each distinct value
        first = S[:, j] != S[:, j - 1] if j > 0 else np.ones(N, bool)
        ge = (S >= v[:, None]).sum(axis=1)
        gt = (S > v[:, None]).sum(axis=1)
        prob = np.zeros(N)
        for m in looked:
            prob += (np.array([math.comb(int(a), m) for a in ge])
                     - np.array([math.comb(int(a), m) for a in gt])
                     ) / math.comb(n, m)
        rate = lam * prob * first
        ok = (v < L) & (rate > 0)
        T = S[ok].copy()
        T[:, j] += 1          # increments the value v (any copy: same multiset)
        rr.append(np.nonzero(ok)[0])
        cc.append(idx(T))
        vv.append(rate[ok])
        out[ok] += rate[ok]
        blk = (v == L) & (rate > 0)
        block[blk] += rate[blk]
        resp[ok] += rate[ok] * (v[ok] + 1)
        # departures: every busy server, rate 1
        busy = v > 0
        T = S[busy].copy()
        T[:, j] -= 1
        rr.append(np.nonzero(busy)[0])
        cc.append(idx(T))
        vv.append(np.ones(busy.sum()))
        out[busy] += 1.0
    ar = np.arange(N)
    rows = np.concatenate(rr + [ar])
    cols = np.concatenate(cc + [ar])
    vals = np.concatenate(vv + [-out])
    pi = _solve_left(rows, cols, vals, N, N)
    return S, pi, block, resp, N


def stationary(graph: Graph | nx.Graph, lam: float, mu: float, truncation: int, *,
               progress: bool = False, choices: int | None = None) -> ExactResult:
    """Exact stationary law of JSQ on a tiny graph at arrival rate ``lam`` per server and resampling rate ``mu``, truncated at ``truncation``.

    Parameters
    ----------
    graph : qlib.graphs.Graph or networkx.Graph
        Base graph on ``n <= 5`` positions.
    lam : float
        Arrival rate per server, ``λ > 0`` (``λ >= 1`` warns: only the
        truncated loss system is then stationary).
    mu : float
        Resampling rate ``μ >= 0``; ``math.inf`` means a fresh uniform
        permutation before every arrival.
    truncation : int
        Truncation ``L >= 1``: an arrival that would join a queue holding
        ``L`` tasks is blocked.
    progress : bool, default False
        Say (one line on stderr) how many unknowns the solve has and, when that
        is large, that it will take long and that fewer ``truncation`` may do
        (``error_bounds`` estimates the truncation error). Without it the line
        is printed only in a terminal and only for a large system.
    choices : int, optional
        ``None`` (default): the arrival looks at the whole closed
        neighbourhood.  An int ``k >= 2``: at its own position and ``k - 1``
        distinct neighbours drawn uniformly (all of them when the degree is
        below ``k``), as ``simulate(..., choices=k)``.

    Returns
    -------
    ExactResult
        Occupancy ``q(0..L)``, arrival-side and Little's-law mean response
        times, blocking probability, boundary mass, number of states.

    Raises
    ------
    TypeError
        If ``graph`` is not a Graph or ``truncation`` not an int.
    ValueError
        If ``n > 5``, ``truncation < 1``, ``lam <= 0`` or not finite, ``mu < 0``
        or nan, or the state space exceeds ``MAX_STATES``.

    Notes
    -----
    Finite ``μ`` uses the chain of queue lengths by position on
    ``{0..L}^n``, lumped by the automorphisms of the graph (the law is
    constant on their orbits); the resampling term ``μ (P_sym - I)``,
    ``P_sym`` the average over all permutations, is written through the law
    of the multiset (one extra unknown per multiset), which keeps the system
    sparse.  For ``μ = 0`` each connected component is solved on its own
    (they are independent).  ``μ = ∞`` uses the chain of the sorted vector.
    Systems above a few thousand unknowns are solved by ILU-preconditioned
    GMRES to a relative residual of ``1e-13``.

    Examples
    --------
    >>> import math
    >>> from qlib import exact, graphs
    >>> e = exact.stationary(graphs.ring(4), 0.7, math.inf, 8)
    >>> round(e.response_time, 4), round(float(e.occupancy[1]), 4)
    (1.5896, 0.7)
    """
    graph = _as_graph(graph)   # a qlib Graph or an undirected networkx graph
    lam, mu, L = _check(graph, lam, mu, truncation)
    choices = _check_choices(choices) or None
    n = graph.n
    if mu == 0:
        # a static graph's components are independent chains: solve each
        ncomp, label = connected_components(graph.adjacency(), directed=False)
        parts = [np.nonzero(label == c)[0] for c in range(ncomp)]
    else:
        parts = [np.arange(n)]
    # the size before the solve: (L+1)^n queue vectors by position (finite μ), fewer when
    # sorted (μ = ∞); lumping by automorphisms divides the first by up to 2n on a ring
    est = math.comb(n + L, L) if math.isinf(mu) else sum((L + 1) ** len(p) for p in parts)
    if progress or est > _SLOW_UNKNOWNS:
        from qlib._feedback import say
        msg = f"exact.stationary: about {est:,} states (n = {n}, truncation = {L})"
        if est > _SLOW_UNKNOWNS:
            msg += ("; a solve this size takes a minute or more: a lower truncation may do "
                    "(error_bounds estimates the truncation error)")
        say(msg, force=bool(progress))
    marg = np.zeros((n, L + 1))
    blocked = resp = tasks = 0.0
    size = 0
    free = 1.0                  # P(no queue at the truncation level)
    for pos in parts:
        sub = graph if len(parts) == 1 else _subgraph(graph, pos)
        m, bl, rs, tk, tr, sz = _solve_one(sub, lam, mu, L, choices)
        marg[pos] = m
        blocked += bl
        resp += rs
        tasks += tk
        free *= 1.0 - tr
        size += sz
    tail = np.cumsum(marg[:, ::-1], axis=1)[:, ::-1]       # P(Y_p >= i)
    occ = tail.mean(axis=0)
    occ[0] = 1.0
    acc = lam * n - blocked
    return ExactResult(occupancy=occ, mean_response_time=float(resp / acc),
                       little_response_time=float(tasks / acc),
                       blocking_probability=float(blocked / (lam * n)),
                       truncated_mass=float(1.0 - free),
                       n_states=int(size), marginals=marg, n=n, lam=lam,
                       mu=mu, truncation=L,
                       _rerun=functools.partial(stationary, graph, lam, mu, choices=choices))


#: above this many states (before lumping) exact.stationary says the solve will take long
_SLOW_UNKNOWNS = 200_000


def _subgraph(graph, pos):
    """The subgraph induced on the positions ``pos``, relabelled 0..k-1."""
    new = {int(p): k for k, p in enumerate(pos)}
    edges = [(new[int(p)], new[int(q)]) for p in pos
             for q in graph.neighbors(p) if p < q]
    return from_edges(len(pos), edges)


def _solve_one(graph, lam, mu, L, choices=None):
    """Marginals, blocked arrival rate, sum of rate*(k+1) over accepted
    arrivals, mean number of tasks, truncated mass, number of unknowns."""
    n = graph.n
    if math.isinf(mu):
        Y, pi, block, resp, size = _infinite_mu(graph, lam, L, choices)
    else:
        Y, pi, block, resp, size = _finite_mu(graph, lam, mu, L, choices)
    if np.min(pi) < -1e-9 or not np.isclose(pi.sum(), 1.0, atol=1e-9):
        raise RuntimeError("linear solve failed to give a distribution")
    pi = np.clip(pi, 0.0, None)
    pi /= pi.sum()
    marg = np.zeros((n, L + 1))
    for p in range(n):
        marg[p] = np.bincount(Y[:, p], weights=pi, minlength=L + 1)
    if math.isinf(mu):
        marg[:] = marg.mean(axis=0)
    trunc = float(pi[Y.max(axis=1) == L].sum())
    return (marg, float(pi @ block), float(pi @ resp),
            float(pi @ Y.sum(axis=1)), trunc, size)
