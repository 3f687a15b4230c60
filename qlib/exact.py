"""Exact stationary distribution of JSQ on a tiny (resampled) graph.

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

Truncation: queues are capped at ``levels``; an arrival that would join a
queue already holding ``levels`` tasks is **blocked** (lost).  The blocked
fraction of arrivals and the stationary mass of the boundary are reported.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from itertools import permutations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from scipy.sparse.csgraph import connected_components

from qlib.graphs import Graph, from_edges

__all__ = ["stationary", "ExactResult", "MAX_N", "MAX_STATES"]

#: Largest number of servers :func:`stationary` accepts (the state space grows
#: like (K+1)**n).
MAX_N = 5
#: Largest truncated state space :func:`stationary` builds.
MAX_STATES = 2_000_000
_LU_MAX = 4000  # sparse LU below this many unknowns, GMRES above


@dataclass(frozen=True)
class ExactResult:
    """Stationary quantities of the truncated chain.

    Attributes
    ----------
    occupancy : numpy.ndarray
        ``q(0), ..., q(levels)``: mean fraction of servers with at least
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
        Stationary probability that some queue holds ``levels`` tasks.
    n_states : int
        Number of states of the linear system that was solved.
    marginals : numpy.ndarray
        ``(n, levels + 1)``: law of the queue length at each position
        (``mu = inf``: identical rows, the law of a uniform server).
    n, lam, mu, levels
        The inputs.
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
    levels: int


def _check(graph, lam, mu, levels):
    if not isinstance(graph, Graph):
        raise TypeError("graph must be a qlib.graphs.Graph, got "
                        f"{type(graph).__name__}")
    if not 1 <= graph.n <= MAX_N:
        raise ValueError(f"graph.n must be in [1, {MAX_N}] for the exact "
                         f"solver, got {graph.n}")
    if isinstance(levels, bool) or not isinstance(levels, (int, np.integer)):
        raise TypeError(f"levels must be an int, got {type(levels).__name__}")
    levels = int(levels)
    if levels < 1:
        raise ValueError(f"levels must be >= 1, got {levels}")
    try:
        lam = float(lam)
        mu = float(mu)
    except (TypeError, ValueError):
        raise TypeError("lam and mu must be real numbers") from None
    if not (math.isfinite(lam) and lam > 0):
        raise ValueError(f"lam must be positive and finite, got {lam}")
    if math.isnan(mu) or mu < 0:
        raise ValueError(f"mu must be >= 0 (inf allowed), got {mu}")
    if lam >= 1:
        warnings.warn(f"lam = {lam} >= 1: the untruncated chain is unstable; "
                      "the result describes the loss system only",
                      RuntimeWarning, stacklevel=3)
    return lam, mu, levels


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


def _arrival_terms(Y, graph, lam, L):
    """Yield (rows, position joined, rate) over positions and tie members;
    ``position`` may be at level L (blocked)."""
    for p in range(graph.n):
        nb = np.concatenate([[p], graph.neighbors(p)])
        vals = Y[:, nb]
        m = vals.min(axis=1)
        tied = vals == m[:, None]
        ties = tied.sum(axis=1)
        for j, q in enumerate(nb):
            rows = np.nonzero(tied[:, j])[0]
            yield rows, q, lam / ties[rows]


def _automorphisms(graph):
    """All automorphisms of the graph, as permutations of the positions
    (brute force over the n! <= 120 permutations)."""
    n = graph.n
    E = {(u, int(v)) for u in range(n) for v in graph.neighbors(u)}
    auts = [p for p in permutations(range(n))
            if all((p[u], p[v]) in E for u, v in E)]
    return np.array(auts, dtype=np.int64).reshape(len(auts), n)


def _finite_mu(graph, lam, mu, L):
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
        raise ValueError(f"levels too large for n={n}: (levels+1)^n = {N} "
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
    for rows, q, rate in _arrival_terms(Yr, graph, lam, L):
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


def _infinite_mu(graph, lam, L):
    n = graph.n
    # all non-decreasing vectors in {0..L}^n, as rows
    from itertools import combinations_with_replacement
    N = math.comb(L + n, n)
    if N > MAX_STATES:
        raise ValueError(f"levels too large for n={n}: {N} > {MAX_STATES}")
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
    # servers; P(min >= v) = C(#{>= v}, d+1) / C(n, d+1)
    for j in range(n):
        v = S[:, j]
        # act only on the first server holding each distinct value
        first = S[:, j] != S[:, j - 1] if j > 0 else np.ones(N, bool)
        ge = (S >= v[:, None]).sum(axis=1)
        gt = (S > v[:, None]).sum(axis=1)
        prob = np.zeros(N)
        for d in deg:
            prob += (np.array([math.comb(int(a), int(d) + 1) for a in ge])
                     - np.array([math.comb(int(a), int(d) + 1) for a in gt])
                     ) / math.comb(n, int(d) + 1)
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


def stationary(graph, lam, mu, levels):
    """Exact stationary law of JSQ on a tiny graph, truncated at ``levels``.

    Parameters
    ----------
    graph : qlib.graphs.Graph
        Base graph on ``n <= 5`` positions.
    lam : float
        Arrival rate per server, ``λ > 0`` (``λ >= 1`` warns: only the
        truncated loss system is then stationary).
    mu : float
        Resampling rate ``μ >= 0``; ``math.inf`` means a fresh uniform
        permutation before every arrival.
    levels : int
        Truncation ``L >= 1``: an arrival that would join a queue holding
        ``L`` tasks is blocked.

    Returns
    -------
    ExactResult
        Occupancy ``q(0..L)``, arrival-side and Little's-law mean response
        times, blocking probability, boundary mass, number of states.

    Raises
    ------
    TypeError
        If ``graph`` is not a Graph or ``levels`` not an int.
    ValueError
        If ``n > 5``, ``levels < 1``, ``lam <= 0`` or not finite, ``mu < 0``
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
    """
    lam, mu, L = _check(graph, lam, mu, levels)
    n = graph.n
    if mu == 0:
        # a static graph's components are independent chains: solve each
        ncomp, label = connected_components(
            sp.csr_matrix((np.ones(graph.indices.size), graph.indices,
                           graph.indptr), shape=(n, n)), directed=False)
        parts = [np.nonzero(label == c)[0] for c in range(ncomp)]
    else:
        parts = [np.arange(n)]
    marg = np.zeros((n, L + 1))
    blocked = resp = tasks = 0.0
    size = 0
    free = 1.0                  # P(no queue at the truncation level)
    for pos in parts:
        sub = graph if len(parts) == 1 else _subgraph(graph, pos)
        m, bl, rs, tk, tr, sz = _solve_one(sub, lam, mu, L)
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
                       mu=mu, levels=L)


def _subgraph(graph, pos):
    """The subgraph induced on the positions ``pos``, relabelled 0..k-1."""
    new = {int(p): k for k, p in enumerate(pos)}
    edges = [(new[int(p)], new[int(q)]) for p in pos
             for q in graph.neighbors(p) if p < q]
    return from_edges(len(pos), edges)


def _solve_one(graph, lam, mu, L):
    """Marginals, blocked arrival rate, sum of rate*(k+1) over accepted
    arrivals, mean number of tasks, truncated mass, number of unknowns."""
    n = graph.n
    if math.isinf(mu):
        Y, pi, block, resp, size = _infinite_mu(graph, lam, L)
    else:
        Y, pi, block, resp, size = _finite_mu(graph, lam, mu, L)
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


# ------------------------------------------ the mu = inf occupancy chain ----

__all__ += ["occupancy_chain", "OccupancyChainResult"]


@dataclass(frozen=True)
class OccupancyChainResult:
    """Stationary law of the ``μ = ∞`` occupancy chain (:func:`occupancy_chain`).

    Attributes
    ----------
    occupancy : numpy.ndarray, shape (levels+1,)
        ``E q_n(0..levels)``, ``q_n(i) = Q_i / n``.
    response_time : float
        Mean response time of accepted tasks by Little's law,
        ``E[Σ_i Q_i] / (n λ (1 − blocking_probability))``.
    blocking_probability : float
        Fraction of arrivals lost because the shortest queue seen holds
        ``levels`` tasks.
    truncated_mass : float
        ``P(Q_levels > 0)``.
    n_states : int
        ``C(n + levels, levels)``.
    n, lam, levels, replacement
        The inputs.
    """

    occupancy: np.ndarray
    response_time: float
    blocking_probability: float
    truncated_mass: float
    n_states: int
    n: int
    lam: float
    levels: int
    replacement: bool


#: Largest state space :func:`occupancy_chain` builds.
MAX_CHAIN_STATES = 3_000_000


def _chain_states(n, K):
    """All ``n >= Q_1 >= ... >= Q_K >= 0`` as rows, indexed by their rank.

    ``u = (Q_K, ..., Q_1)`` is non-decreasing; ``c_m = u_m + m − 1``
    (``m = 1..K``) is strictly increasing in ``[0, n + K − 1]`` and the
    rank is ``Σ_m C(c_m, m)`` (combinatorial number system), a bijection
    onto ``[0, C(n + K, K))``.
    """
    from itertools import combinations
    N = math.comb(n + K, K)
    c = np.fromiter((x for comb in combinations(range(n + K), K) for x in comb),
                    np.int64, N * K).reshape(N, K)
    B = np.array([[math.comb(a, b) for b in range(K + 1)]
                  for a in range(n + K + 1)], dtype=np.int64)
    m = np.arange(1, K + 1)
    rank = B[c, m].sum(axis=1)
    order = np.empty(N, np.int64)
    order[rank] = np.arange(N)
    c = c[order]
    Q = (c - (m - 1))[:, ::-1]            # Q[:, j-1] = Q_j
    return Q, c, B


def _solve_iad(GT, S, up, down, rate, tol=1e-14, sweeps=8, max_iter=20000, x0=None):
    """Stationary law of a chain whose total ``S`` moves by ±1 per jump.

    Iterative aggregation–disaggregation: the law of ``S`` (the slow
    coordinate) is solved exactly as a birth–death chain with the rates
    ``up``/``down`` averaged over the current conditional law given ``S``;
    then ``sweeps`` uniformized power steps ``π ← π + π G / rate`` relax the
    (fast) shape given ``S``.  Stops when ``||π G||_1 <= tol · rate``.
    ``GT`` is the transposed generator in CSR form; ``x0`` (optional) is
    a warm start.
    """
    M = int(S.max()) + 1
    pi = np.ones(S.size) / S.size if x0 is None else np.asarray(x0, float) / np.sum(x0)
    rate = 1.02 * float(rate)
    for _ in range(max_iter):
        mass = np.bincount(S, pi, minlength=M)
        cond = pi / np.where(mass[S] > 0, mass[S], 1.0)
        u = np.bincount(S, cond * up, minlength=M)
        dn = np.bincount(S, cond * down, minlength=M)
        logp = np.concatenate([[0.0], np.cumsum(np.log(u[:-1]) - np.log(dn[1:]))])
        P = np.exp(logp - logp.max())
        pi = P[S] * cond
        pi /= pi.sum()
        for _ in range(sweeps):
            pi = pi + (GT @ pi) / rate
        res = np.abs(GT @ pi).sum()
        if res <= tol * rate:
            break
    else:
        raise RuntimeError(f"aggregation-disaggregation did not converge (residual {res:.3g})")
    pi = np.clip(pi, 0.0, None)
    return pi / pi.sum()


def occupancy_chain(n, lam, degrees, levels, *, replacement=False):
    """Exact stationary law of the ``μ = ∞`` occupancy chain, truncated.

    States ``n >= Q_1 >= ... >= Q_K >= 0`` (``Q_i`` servers hold at least
    ``i`` tasks, ``K = levels``).  An arrival raises level ``j`` at rate

        n λ Σ_d p(d) [C(Q_{j-1}, d+1) − C(Q_j, d+1)] / C(n, d+1),   Q_0 = n,

    (the task meets ``d + 1`` distinct uniform servers and joins a shortest
    one; with ``replacement=True`` the ratio of binomials is replaced by
    ``(Q/n)^{d+1}``); an arrival whose shortest queue holds ``K`` tasks is
    lost.  A departure lowers level ``j`` at rate ``Q_j − Q_{j+1}``.

    Parameters
    ----------
    n : int
        Number of servers, ``>= max_degree + 1`` (``>= 1`` with replacement).
    lam : float
        ``λ ∈ (0, 1)``.
    degrees : qlib.DegreeDistribution
        Degree law ``p``.
    levels : int
        Truncation ``K >= 1``.
    replacement : bool
        Sample with replacement.

    Returns
    -------
    OccupancyChainResult

    Raises
    ------
    ValueError
        If ``n`` or ``levels`` is out of range, ``lam`` not in ``(0, 1)``,
        or ``C(n + K, K) > MAX_CHAIN_STATES``.
    TypeError
        If ``degrees`` is not a DegreeDistribution.

    Notes
    -----
    Truncation only removes tasks, so (by the usual coupling of JSQ with
    and without a buffer) the truncated occupancy grows with ``K``; the
    chapter *How large must n be?* takes ``K`` where one more level changes
    nothing to the digits used.
    """
    from qlib.degrees import DegreeDistribution
    if not isinstance(degrees, DegreeDistribution):
        raise TypeError(f"degrees must be a DegreeDistribution, got {type(degrees).__name__}")
    if isinstance(lam, bool) or not isinstance(lam, (int, float, np.floating)) \
            or not 0 < float(lam) < 1:
        raise ValueError(f"lam must be in (0, 1), got {lam!r}")
    lam = float(lam)
    nmin = 1 if replacement else degrees.max_degree + 1
    for name, val, lo in (("n", n, nmin), ("levels", levels, 1)):
        if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < lo:
            raise ValueError(f"{name} must be an integer >= {lo}, got {val!r}")
    n, K = int(n), int(levels)
    if math.comb(n + K, K) > MAX_CHAIN_STATES:
        raise ValueError(f"C(n + levels, levels) = {math.comb(n + K, K)} states "
                         f"exceeds MAX_CHAIN_STATES = {MAX_CHAIN_STATES}")
    # T[a] = P(a uniform sample of d+1 servers lies among a given a servers)
    a = np.arange(n + 1)
    T = np.zeros(n + 1)
    for d, pd in enumerate(degrees.pmf.tolist()):
        if pd > 0:
            T += pd * ((a / n) ** (d + 1) if replacement else
                       np.array([math.comb(int(x), d + 1) for x in a]) / math.comb(n, d + 1))
    Q, c, B = _chain_states(n, K)
    N = Q.shape[0]
    ar = np.arange(N)
    Qx = np.column_stack([np.full(N, n), Q, np.zeros(N, np.int64)])   # Q_0..Q_{K+1}
    rr, cc, vv = [], [], []
    out = np.zeros(N)
    for j in range(1, K + 1):
        col = K - j                        # c[:, col] is c_m with m = K + 1 - j
        m = K + 1 - j
        up = n * lam * (T[Qx[:, j - 1]] - T[Qx[:, j]])
        ok = up > 0
        rr.append(ar[ok]); vv.append(up[ok])
        cc.append(ar[ok] + B[c[ok, col], m - 1])
        out += up
        dn = (Qx[:, j] - Qx[:, j + 1]).astype(float)
        ok = dn > 0
        rr.append(ar[ok]); vv.append(dn[ok])
        cc.append(ar[ok] - B[c[ok, col] - 1, m - 1])
        out += dn
    rows = np.concatenate(rr + [ar])
    cols = np.concatenate(cc + [ar])
    vals = np.concatenate(vv + [-out])
    GT = sp.csr_matrix((vals, (cols, rows)), shape=(N, N))
    acc = out - Q[:, 0]                       # accepted arrival rate
    pi = _solve_iad(GT, Q.sum(axis=1), acc, Q[:, 0].astype(float), out.max())
    occ = np.concatenate([[1.0], pi @ Q / n])
    blocked = float(pi @ T[Q[:, -1]])
    tasks = float(pi @ Q.sum(axis=1))
    return OccupancyChainResult(
        occupancy=occ, response_time=tasks / (n * lam * (1.0 - blocked)),
        blocking_probability=blocked, truncated_mass=float(pi[Q[:, -1] > 0].sum()),
        n_states=int(N), n=n, lam=lam, levels=K, replacement=bool(replacement))


# ------------------------- the occupancy chain without a level cap (issue 17) ----

__all__ += ["occupancy_chain_adaptive", "AdaptiveChainResult"]


@dataclass(frozen=True)
class AdaptiveChainResult:
    """Stationary law of the ``μ = ∞`` occupancy chain on an adaptively
    chosen state set (:func:`occupancy_chain_adaptive`).

    Attributes
    ----------
    occupancy : numpy.ndarray
        ``E q_n(0..L)``, ``L`` the highest level any kept state reaches.
    response_time : float
        ``E[Σ_i Q_i] / (n λ)`` (Little's law; no arrival is lost).
    response_time_error : float
        Truncation error estimate: ``|R(tol) − R(10 tol)|``, the change of
        ``response_time`` over the last decade of the threshold.
    occupancy_error : float
        The same for the occupancy, largest over the levels.
    frontier_mass : float
        Summed estimated probability of the states just outside the set.
    n_states : int
        Number of states kept at ``tol``.
    n_states_coarse : int
        Number of states kept at ``10 tol``.
    n, lam, tol, replacement
        The inputs.
    """

    occupancy: np.ndarray
    response_time: float
    response_time_error: float
    occupancy_error: float
    frontier_mass: float
    n_states: int
    n_states_coarse: int
    n: int
    lam: float
    tol: float
    replacement: bool


def _sample_table(n, degrees, replacement):
    """``T[a]``: probability that the ``d + 1`` servers an arrival meets all
    lie among a given ``a`` of the ``n`` servers, averaged over ``d ~ p``."""
    a = np.arange(n + 1)
    T = np.zeros(n + 1)
    for d, pd in enumerate(degrees.pmf.tolist()):
        if pd > 0:
            T += pd * ((a / n) ** (d + 1) if replacement else
                       np.array([math.comb(int(x), d + 1) for x in a]) / math.comb(n, d + 1))
    T[n] = 1.0
    return T


def occupancy_chain_adaptive(n, lam, degrees, *, tol=1e-9, replacement=False,
                             max_states=400_000):
    """Stationary law of the ``μ = ∞`` occupancy chain without a level cap.

    The chain is that of :func:`occupancy_chain` (states
    ``n >= Q_1 >= Q_2 >= ...``, arrivals raise level ``j`` at rate
    ``n λ Σ_d p(d) [C(Q_{j-1}, d+1) − C(Q_j, d+1)] / C(n, d+1)``, departures
    lower it at rate ``Q_j − Q_{j+1}``), but no arrival is lost: instead of
    all states below a level ``K``, the solver keeps the states whose
    estimated stationary probability exceeds ``tol`` (an adaptive
    finite-state projection).  At heavy load the chain spends long spells
    with many full levels, which a level cap must pay for with
    ``C(n + K, K)`` states; here a state is stored as its number of full
    levels and the partial levels above them.

    Parameters
    ----------
    n : int
        Number of servers, ``>= max_degree + 1`` (``>= 1`` with replacement).
    lam : float
        ``λ ∈ (0, 1)``.
    degrees : qlib.DegreeDistribution
        Degree law ``p``.
    tol : float
        Admission threshold for a state's estimated probability, in
        ``[1e-13, 1e-3]``.
    replacement : bool
        Sample with replacement (``C(Q, d+1)/C(n, d+1)`` becomes
        ``(Q/n)^{d+1}``).
    max_states : int
        Refuse (``ValueError``) to keep more states than this.

    Returns
    -------
    AdaptiveChainResult
        Occupancy, response time, and their truncation error estimates.

    Raises
    ------
    ValueError
        If ``n`` is out of range, ``lam`` not in ``(0, 1)``, ``tol`` or
        ``max_states`` out of range, or more than ``max_states`` states are
        needed.
    TypeError
        If ``degrees`` is not a DegreeDistribution.

    Notes
    -----
    Rounds: the chain restricted to the current set is solved (a transition
    leaving the set is redirected to the most probable kept state with the
    same total number of tasks, so the total still moves by ±1; aggregation
    over the total and power sweeps, warm started); each state just outside
    gets the estimate inflow / outflow rate; those above the threshold, and
    breadth first their own outside neighbours above it, are admitted; until
    none is.  This is done at ``10 tol`` and then continued at ``tol``; the
    change between the two is reported as the error.  It is an *estimate*,
    not a proven bound: in the cases the tests measure against full
    enumeration the error falls by a factor of about 5 per decade of the
    threshold, so the change over one decade exceeds the remaining error.
    """
    from qlib import _occupancy_fsp as fsp
    from qlib.degrees import DegreeDistribution
    if not isinstance(degrees, DegreeDistribution):
        raise TypeError(f"degrees must be a DegreeDistribution, got {type(degrees).__name__}")
    if isinstance(lam, bool) or not isinstance(lam, (int, float, np.floating)) \
            or not 0 < float(lam) < 1:
        raise ValueError(f"lam must be in (0, 1), got {lam!r}")
    lam = float(lam)
    nmin = 1 if replacement else degrees.max_degree + 1
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < nmin:
        raise ValueError(f"n must be an integer >= {nmin}, got {n!r}")
    if isinstance(tol, bool) or not isinstance(tol, (int, float, np.floating)) \
            or not 1e-13 <= float(tol) <= 1e-3:
        raise ValueError(f"tol must be in [1e-13, 1e-3], got {tol!r}")
    if isinstance(max_states, bool) or not isinstance(max_states, (int, np.integer)) \
            or max_states < 1:
        raise ValueError(f"max_states must be an integer >= 1, got {max_states!r}")
    n, tol = int(n), float(tol)
    T = _sample_table(n, degrees, replacement)
    # start from the fluid equilibrium, rounded
    from qlib import fluid
    q = fluid.equilibrium(lam, degrees)
    c = np.round(n * np.asarray(q)[1:]).astype(np.int64)
    c = c[c > 0]
    s = int(np.sum(c >= n))
    W0 = np.concatenate([[s], c[s:], [0]])[None, :].astype(np.int64)
    (Wc, pc, _), (W, pi, frontier) = fsp.grow(n, lam, T, W0, (10 * tol, tol), int(max_states))
    occ_c, occ = fsp.occupancy(Wc, n, pc), fsp.occupancy(W, n, pi)
    occ_c = np.concatenate([occ_c, np.zeros(max(0, occ.size - occ_c.size))])[: occ.size]
    R_c = float(pc @ fsp.tasks(Wc, n)) / (n * lam)
    R = float(pi @ fsp.tasks(W, n)) / (n * lam)
    return AdaptiveChainResult(
        occupancy=occ, response_time=R, response_time_error=abs(R - R_c),
        occupancy_error=float(np.max(np.abs(occ - occ_c))), frontier_mass=frontier,
        n_states=int(W.shape[0]), n_states_coarse=int(Wc.shape[0]), n=n, lam=lam,
        tol=tol, replacement=bool(replacement))


# ------------------------------------------- phase-type services (issue 21) ----
@dataclass(frozen=True)
class PhaseResult:
    """Stationary quantities of the chain with service phases
    (:func:`stationary_phase`).

    Attributes
    ----------
    occupancy : numpy.ndarray
        ``q(0..levels)``: mean fraction of servers with at least i tasks.
    mean_response_time : float
        Little's law: ``E[total tasks] / (lam n (1 - blocking_probability))``.
    blocking_probability : float
        Fraction of arrivals lost at the truncation ``levels``.
    truncated_mass : float
        Stationary probability that some queue holds ``levels`` tasks.
    n_states : int
    """

    occupancy: np.ndarray
    mean_response_time: float
    blocking_probability: float
    truncated_mass: float
    n_states: int


def stationary_phase(graph, lam, mu, service, levels):
    """Exact stationary law of JSQ on a tiny graph with phase-type services.

    The state of a server is idle, or (queue length ``l`` in ``1..levels``,
    phase ``k`` of the task in service); FIFO, the phase is drawn from
    ``alpha`` when a service starts.  By position for finite ``mu``
    (resampling: a uniform permutation of the positions at rate ``mu``),
    and for ``mu = inf`` by server, where an arrival at position ``v`` sees
    a uniformly random set of ``deg(v) + 1`` servers.  An arrival to a
    queue holding ``levels`` tasks is lost.

    Parameters
    ----------
    graph : qlib.graphs.Graph
        ``n <= 3`` vertices.
    lam : float
        Arrival rate per server.
    mu : float
        ``0 <= mu <= inf``.
    service : qlib.service.ServiceLaw
        A law with a phase-type representation (exponential, erlang,
        hyperexponential).
    levels : int
        Truncation, ``>= 1``; ``(1 + levels m)^n`` states for ``m`` phases.

    Returns
    -------
    PhaseResult
    """
    from itertools import combinations
    from qlib.service import ServiceLaw
    if not isinstance(service, ServiceLaw):
        raise TypeError("service must be a qlib.service.ServiceLaw, got "
                        f"{type(service).__name__}")
    if service.phase_type is None:
        raise ValueError(f"service must be phase type, got {service.name}")
    if isinstance(graph, Graph) and graph.n > 3:
        raise ValueError(f"graph.n must be <= 3 for stationary_phase, got {graph.n}")
    lam, mu, L = _check(graph, lam, mu, levels)
    al, T = (np.asarray(a, float) for a in service.phase_type)
    m = al.size
    t0 = -T.sum(axis=1)
    n = graph.n
    B = 1 + L * m
    size = B ** n
    if size > MAX_STATES:
        raise ValueError(f"levels={L} gives {size} states > {MAX_STATES}")
    nbh = [np.concatenate([[v], graph.indices[graph.indptr[v]:graph.indptr[v + 1]]])
           for v in range(n)]
    # where arrivals look: lists of (rate, candidate servers)
    if math.isinf(mu):
        looks = []
        for v in range(n):
            subs = list(combinations(range(n), len(nbh[v])))
            looks += [(lam / len(subs), np.array(c)) for c in subs]
    else:
        looks = [(lam, nb) for nb in nbh]
    perms = list(permutations(range(n))) if 0 < mu < math.inf else []
    states = np.array(np.unravel_index(np.arange(size), (B,) * n)).T[:, ::-1]
    pw = B ** np.arange(n)
    ln = np.where(states == 0, 0, 1 + (states - 1) // m)
    ph = (states - 1) % m
    rows, cols, vals = [], [], []
    block = np.zeros(size)
    out = np.zeros(size)

    def add(r, c, v):
        rows.append(r)
        cols.append(c)
        vals.append(v)
        np.add.at(out, r, v)

    idx = np.arange(size)
    for rate, cand in looks:
        lc = ln[:, cand]
        mn = lc.min(axis=1)
        tied = lc == mn[:, None]
        nt = tied.sum(axis=1)
        for a, s in enumerate(cand):
            r = idx[tied[:, a]]
            w = rate / nt[tied[:, a]]
            j = states[r, s]
            full = ln[r, s] >= L
            np.add.at(block, r[full], w[full])
            r, w, j = r[~full], w[~full], j[~full]
            busy = j > 0
            add(r[busy], r[busy] + m * pw[s], w[busy])
            for k in range(m):
                if al[k] > 0:
                    add(r[~busy], r[~busy] + (1 + k) * pw[s], w[~busy] * al[k])
    for s in range(n):
        j = states[:, s]
        for k in range(m):
            r = idx[(j > 0) & (ph[:, s] == k)]
            base = r - (j[r] - 1 - (ln[r, s] - 1) * m) * pw[s]   # phase 0 of the same length
            for k2 in range(m):
                if k2 != k and T[k, k2] > 0:
                    add(r, base + k2 * pw[s], np.full(r.size, T[k, k2]))
            one = ln[r, s] == 1
            add(r[one], r[one] - j[r[one]] * pw[s], np.full(one.sum(), t0[k]))
            rr = r[~one]
            for k2 in range(m):
                if al[k2] > 0:
                    tgt = rr - (j[rr] - (1 + (ln[rr, s] - 2) * m + k2)) * pw[s]
                    add(rr, tgt, np.full(rr.size, t0[k] * al[k2]))
    for p in perms[1:]:
        tgt = states[:, list(p)] @ pw
        add(idx, tgt, np.full(size, mu / len(perms)))
    rows = np.concatenate(rows + [idx])
    cols = np.concatenate(cols + [idx])
    vals = np.concatenate(vals + [-out])
    pi = _solve_left(rows, cols, vals, size, size)
    pi = np.maximum(pi, 0.0)
    pi /= pi.sum()
    occ = np.array([(pi[:, None] * (ln >= i)).sum() / n for i in range(L + 1)])
    blk = float(pi @ block) / (lam * n)
    R = float(pi @ ln.sum(axis=1)) / (lam * n * (1 - blk))
    return PhaseResult(occupancy=occ, mean_response_time=R, blocking_probability=blk,
                       truncated_mass=float(pi[(ln >= L).any(axis=1)].sum()),
                       n_states=int(size))
__all__ += ["stationary_phase", "PhaseResult"]
