"""Pair approximation of JSQ on a sparse regular graph (static or slowly resampled).

The fluid limit sees the graph only through its degree law; on a static graph
the queues at the two ends of an edge are correlated (a long queue pushes its
neighbours' arrivals elsewhere), and the fluid limit misses it.  The pair
approximation (the closure of pair correlations used for local interactions
on lattices and trees, e.g. by Gast and coauthors for mean-field models with
local interactions) keeps the law ``π(a, b)`` of the queue lengths at the two
ends of an edge, truncated at ``K``, and closes the triples by conditional
independence along a **tree**: given the state of a vertex, its neighbours are
independent, each with the law ``c(·|a) = π(a, ·)/p(a)``, ``p(a) = Σ_b π(a, b)``.

For a ``d``-regular graph, vertex ``u`` in state ``a`` with neighbour ``v``
in state ``b`` gains a task at rate ``r(a; b) = r_1 + r_2 + r_3``:

* ``r_1``: a task arriving at ``u`` (rate ``λ``) that picks ``u``;
* ``r_2``: a task arriving at ``v`` (rate ``λ``) that picks ``u``; ``v``'s
  other neighbours have the law ``c(·|b)``;
* ``r_3``: tasks arriving at one of ``u``'s ``d − 1`` other neighbours
  ``w ~ c(·|a)``, whose other neighbours have the law ``c(·|w)``.

Ties are split uniformly; with ``T`` the number of other tied queues,
``E[1/(1 + T)] = ∫₀¹ E[t^T] dt``, so a picking probability is
``∫₀¹ Π_j (P(X_j > a) + t P(X_j = a)) dt``, computed exactly by Gauss–Legendre
quadrature (a polynomial of degree ``d`` in ``t``).  ``π`` then follows the
master equation of the two-vertex chain with these rates and unit service
rates; resampling at rate ``μ`` (a fresh random placement of the servers)
replaces the pair by two independent servers: ``+ μ (p ⊗ p − π)``.

The equilibrium is the fixed point ``π = stationary law of G(π)``, found by
iterating the linear solve (:func:`~qlib.meanfield.pair.pair_approximation`).  Two checks are
built in: with ``closure="independent"`` (``c(·|a) = p``) the marginal
dynamics are those of the fluid limit, whose equilibrium is
:func:`qlib.meanfield.fluid.equilibrium` for the point mass ``δ_d``; for
``d = 1`` (disjoint edges) the pair *is* the whole component and the
approximation is exact.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from qlib.stats._results import CompactResult

from ._reused_solver import _ReusedSolver
from .fluid import _check_lam

__all__ = ["pair_approximation", "PairResult", "ring_window", "WindowResult"]


@dataclass(frozen=True, repr=False, eq=False)
class PairResult(CompactResult):
    """Equilibrium of the pair approximation (:func:`~qlib.meanfield.pair.pair_approximation`).

    Attributes
    ----------
    pair : numpy.ndarray, shape (K+1, K+1)
        ``π(a, b)``: law of the queue lengths at the two ends of an edge
        (symmetric).
    marginal : numpy.ndarray, shape (K+1,)
        ``p(a) = Σ_b π(a, b)``.
    occupancy : numpy.ndarray, shape (K+1,)
        ``q(i) = Σ_{a≥i} p(a)``, ``q(0) = 1``.
    response_time : float
        ``R = Σ_a a p(a) / (λ (1 − blocking))`` (Little's law).
    correlation : float
        Correlation coefficient of the two ends' queue lengths under ``π``.
    blocking : float
        Fraction of arrivals lost at the truncation ``K``.
    residual : float
        Largest absolute entry of the master equation's right-hand side at
        the returned ``π``.
    iterations : int
        Fixed-point iterations used.
    lam, mu, degree, truncation, closure
        The inputs (``truncation`` is ``K``).
    """

    pair: np.ndarray
    marginal: np.ndarray
    occupancy: np.ndarray
    response_time: float
    correlation: float
    blocking: float
    residual: float
    iterations: int
    lam: float
    mu: float
    degree: int
    truncation: int
    closure: str


def _rates(P, lam, d, closure, nodes, weights):
    """``r[a, b]``: rate at which an end in state ``a`` whose partner is in
    state ``b`` gains a task (before truncation)."""
    K1 = P.shape[0]
    p = P.sum(axis=1)
    if closure == "independent":
        C = np.broadcast_to(p, (K1, K1))
    else:
        # conditional law of a neighbour given the vertex; an empty row is unused
        C = np.where(p[:, None] > 0, P / np.where(p > 0, p, 1.0)[:, None], p[None, :])
    # G[y, a] = P(Z > a | y), E[y, a] = P(Z = a | y) for a neighbour Z of a vertex in state y
    G = np.cumsum(C[:, ::-1], axis=1)[:, ::-1] - C
    E = C
    a = np.arange(K1)
    gt = (a[None, :] > a[:, None]).astype(float)     # [a, s]: s > a
    eq = np.eye(K1)
    # F[y, a, k] = (G[y, a] + t_k E[y, a])^(d-1)
    F = (G[:, :, None] + nodes[None, None, :] * E[:, :, None]) ** (d - 1)
    ind = gt[:, :, None] + nodes[None, None, :] * eq[:, :, None]   # [a, s, k]
    Faa = F[a, a, :]                                 # [a, k]
    r1 = lam * np.einsum("ask,ak,k->as", ind, Faa, weights)
    r2 = lam * np.einsum("abk,bak,k->ab", ind, F, weights)
    r3 = lam * (d - 1) * np.einsum("ay,ayk,yak,k->a", C, ind, F, weights)
    return r1 + r2 + r3[:, None]


def _generator(r, K1, mu):
    """Generator of the two-vertex chain on (a, b), index a * K1 + b,
    without the resampling source; arrivals at level K are blocked."""
    a, b = np.divmod(np.arange(K1 * K1), K1)
    rows, cols, vals = [], [], []
    up_a = a < K1 - 1
    rows.append(np.nonzero(up_a)[0]); cols.append(np.nonzero(up_a)[0] + K1)
    vals.append(r[a[up_a], b[up_a]])
    up_b = b < K1 - 1
    rows.append(np.nonzero(up_b)[0]); cols.append(np.nonzero(up_b)[0] + 1)
    vals.append(r[b[up_b], a[up_b]])
    dn_a = a > 0
    rows.append(np.nonzero(dn_a)[0]); cols.append(np.nonzero(dn_a)[0] - K1)
    vals.append(np.ones(dn_a.sum()))
    dn_b = b > 0
    rows.append(np.nonzero(dn_b)[0]); cols.append(np.nonzero(dn_b)[0] - 1)
    vals.append(np.ones(dn_b.sum()))
    Q = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(K1 * K1, K1 * K1))
    out = np.asarray(Q.sum(axis=1)).ravel() + mu
    return Q - sp.diags(out)


def _stationary(Q, src):
    """Solve x Q = -src; for src = 0 with x[0] = 1 in place of the balance
    equation of state 0 (a sparse row: a dense normalisation row would ruin
    the LU), normalised afterwards."""
    A = Q.T.tocoo()
    rhs = -np.asarray(src, dtype=float).copy()
    if not np.any(rhs):
        keep = A.row != 0
        A = sp.coo_matrix((np.append(A.data[keep], 1.0),
                           (np.append(A.row[keep], 0), np.append(A.col[keep], 0))), shape=A.shape)
        rhs[0] = 1.0
    x = spla.splu(A.tocsc(), permc_spec="MMD_AT_PLUS_A").solve(rhs)
    return x / x.sum()


def _check_int(val, name, lo):
    if isinstance(val, bool) or not isinstance(val, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(val).__name__}")
    if val < lo:
        raise ValueError(f"{name} must be >= {lo}, got {val}")
    return int(val)


def _fixed_point(step, P, tol, max_iter, memory=6):
    """Iterate ``P -> step(P)`` to ``max |step(P) − P| <= tol``, with Anderson
    acceleration (type II, ``memory`` past differences; the plain iteration
    contracts slowly near λ = 1 and for large μ, where the resampling source
    pins the marginal to its previous value).  A step that leaves the
    simplex is clipped and renormalised; if the accelerated residual grows,
    the history is dropped and a plain step is taken."""
    x = P.ravel().copy()
    X, F = [], []
    best, since = np.inf, 0
    for it in range(1, max_iter + 1):
        gx = step(x.reshape(P.shape)).ravel()
        f = gx - x
        change = float(np.max(np.abs(f)))
        if change <= tol:
            out = np.clip(gx, 0.0, None)
            return (out / out.sum()).reshape(P.shape), it
        if change > 2 * best:                 # acceleration went astray
            X, F = [], []
        since = 0 if change < best else since + 1
        if since > 3 * memory + 10:           # no progress: plain iteration from here on
            memory = 0
        best = min(best, change)
        X.append(gx); F.append(f)
        if len(F) > memory:
            X.pop(0); F.pop(0)
        if memory and len(F) >= 2:
            dF = np.array([F[k + 1] - F[k] for k in range(len(F) - 1)]).T
            dX = np.array([X[k + 1] - X[k] for k in range(len(X) - 1)]).T
            gamma = np.linalg.lstsq(dF, f, rcond=None)[0]
            x = gx - dX @ gamma
        else:
            x = gx
        x = np.clip(x, 0.0, None)
        x /= x.sum()
    raise RuntimeError(f"no fixed point after {max_iter} iterations (last change "
                       f"{change:.1e}); raise max_iter")


def _summary(P, lam, blocked):
    """The fields of a pair result that follow from the pair law ``P`` and the blocked rate."""
    p = P.sum(axis=1)
    q = np.cumsum(p[::-1])[::-1].copy()
    q[0] = 1.0
    a = np.arange(P.shape[0])
    m = float(a @ p)
    var = float(a ** 2 @ p) - m * m
    cov = float(a @ P @ a) - m * m
    return dict(pair=P, marginal=p, occupancy=q, response_time=m / (lam * (1 - blocked / lam)),
                correlation=cov / var if var > 0 else 0.0, blocking=blocked / lam)


def _solve(lam, mu, d, K, closure, tol, max_iter, P0=None, *, rates=None, order=None):
    """Fixed point of the pair closure; ``rates(P, nodes, weights)`` gives the rate
    matrix (default: this module's closed-neighbourhood policy), ``order`` the
    Gauss–Legendre order's degree argument (default ``d``)."""
    if rates is None:
        def rates(P, nodes, weights):
            return _rates(P, lam, d, closure, nodes, weights)
    K1 = K + 1
    nodes, weights = np.polynomial.legendre.leggauss(max(2, (d if order is None else order) // 2 + 2))
    nodes, weights = (nodes + 1) / 2, weights / 2            # on [0, 1]
    if P0 is None:
        q = lam ** np.arange(K1)                              # M/M/1 start
        p = q - np.append(q[1:], 0.0)
        P = np.outer(p, p)
    else:
        P = np.zeros((K1, K1))
        k = min(K1, P0.shape[0])
        P[:k, :k] = P0[:k, :k]
    P /= P.sum()

    def step(P):
        r = rates(P, nodes, weights)
        p = P.sum(axis=1)
        if closure == "independent":
            # marginal birth-death chain with the neighbour-averaged rate
            rho = r @ p
            w = np.concatenate([[1.0], np.cumprod(rho[:-1])])
            new = w / w.sum()
            return np.outer(new, new)
        if mu > 0:
            # the marginal obeys the birth-death balance p(a) ρ(a) = p(a+1)
            # (resampling drops out of it); taking p from it keeps the
            # resampling source from pinning p to its previous value
            rho = np.einsum("ab,ab->a", P, r) / np.where(p > 0, p, 1.0)
            w = np.concatenate([[1.0], np.cumprod(rho[:-1])])
            p = w / w.sum()
        Q = _generator(r, K1, mu)
        Pn = _stationary(Q, mu * np.outer(p, p).ravel()).reshape(K1, K1)
        return 0.5 * (Pn + Pn.T)

    P, it = _fixed_point(step, P, tol, max_iter, memory=0 if closure == "independent" else 6)
    r = rates(P, nodes, weights)
    p = P.sum(axis=1)
    if closure == "independent":
        rho = r @ p
        # balance of the birth-death chain: p(a) ρ(a) = p(a+1)
        res = float(np.max(np.abs(p[:-1] * rho[:-1] - p[1:])))
        blocked = float(p[-1] * rho[-1])
    else:
        Q = _generator(r, K1, mu)
        x = P.ravel()
        res = float(np.max(np.abs(Q.T @ x + mu * np.outer(p, p).ravel())))
        blocked = float(P[-1, :] @ r[-1, :])
    return P, it, res, blocked


def pair_approximation(lam: float, degree: int, mu: float = 0.0, *, truncation: int | None = None,
                       closure: str = "pair", tol: float = 1e-12, max_iter: int = 5000,
                       max_truncation: int = 400) -> PairResult:
    """Equilibrium of the pair approximation of JSQ on a ``d``-regular graph resampled at resampling rate ``mu``.

    Parameters
    ----------
    lam : float
        Arrival rate per server, ``λ ∈ (0, 1)``.
    degree : int
        Degree ``d >= 1`` of every vertex (``d = 1``: disjoint edges, where
        the approximation is exact; ``d = 2``: the ring, a path locally).
    mu : float
        Resampling rate ``μ >= 0`` (finite): a fresh random placement
        replaces the pair's law by ``p ⊗ p`` at rate ``μ``.
    truncation : int, optional
        Truncation ``K >= 2`` (arrivals to a queue holding ``K`` tasks are
        lost).  Default: start at ``K = 16`` and grow by half until the
        response time changes by less than ``100 tol`` (relative) and the
        blocking is below ``tol``.
    closure : {"pair", "independent"}
        ``"pair"``: neighbours conditionally independent given the vertex
        (the Bethe closure on a tree).  ``"independent"``: neighbours
        independent of the vertex (pair correlation switched off): the
        fluid limit's equilibrium for ``δ_d``.
    tol : float
        Stop the fixed-point iteration when no entry of ``π`` changes by
        more than ``tol``; in ``(0, 1)``.
    max_iter : int
        Largest number of fixed-point iterations.
    max_truncation : int
        Largest automatic truncation.

    Returns
    -------
    PairResult

    Raises
    ------
    ValueError
        If ``lam`` is not in ``(0, 1)``, ``degree < 1``, ``mu`` is negative,
        infinite or nan, ``truncation < 2``, ``tol`` not in ``(0, 1)``, or
        ``closure`` is unknown.
    TypeError
        If ``degree``, ``truncation``, ``max_iter`` or ``max_truncation`` is not an int.
    RuntimeError
        If the iteration or the truncation does not converge.

    Notes
    -----
    The closure treats the graph as a tree: it is a model of the ring (a
    path, locally) and of ``d``-regular graphs of large girth; on graphs
    with short cycles (disjoint triangles) the closure double-counts: the
    "other neighbours" of ``u`` and of ``v`` are the same vertex there.
    """
    lam = _check_lam(lam)
    d = _check_int(degree, "degree", 1)
    try:
        mu = float(mu)
    except (TypeError, ValueError):
        raise TypeError(f"mu must be a real number, got {type(mu).__name__}") from None
    if not (math.isfinite(mu) and mu >= 0):
        raise ValueError(f"mu must be finite and >= 0, got {mu}")
    if closure not in ("pair", "independent"):
        raise ValueError(f"closure must be 'pair' or 'independent', got {closure!r}")
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not 0 < tol < 1:
        raise ValueError(f"tol must be in (0, 1), got {tol!r}")
    max_iter = _check_int(max_iter, "max_iter", 1)
    max_truncation = _check_int(max_truncation, "max_truncation", 2)

    def result(P, it, res, blocked, K):
        return PairResult(**_summary(P, lam, blocked), residual=res, iterations=it, lam=lam,
                          mu=mu, degree=d, truncation=K, closure=closure)

    if truncation is not None:
        K = _check_int(truncation, "truncation", 2)
        return result(*_solve(lam, mu, d, K, closure, tol, max_iter), K)
    K = 16
    P, it, res, bl = _solve(lam, mu, d, K, closure, tol, max_iter)
    prev = result(P, it, res, bl, K)
    while True:
        K2 = K + K // 2
        if K2 > max_truncation:
            raise RuntimeError(f"no converged truncation up to {max_truncation} truncation")
        P, it, res, bl = _solve(lam, mu, d, K2, closure, tol, max_iter, P0=P)
        cur = result(P, it, res, bl, K2)
        K = K2
        if (abs(cur.response_time - prev.response_time) <= 100 * tol * cur.response_time
                and cur.blocking <= tol):
            return cur
        prev = cur


# ------------------------------------------------------------ ring windows


def _pick_tensors(K1):
    """``f[s][x, y, z]``: probability that a task arriving at the middle of
    three consecutive queues ``(x, y, z)`` joins the one at offset ``s``
    (``s = 0, 1, 2``: left, middle, right), ties uniform."""
    g = np.arange(K1)
    X, Y, Z = np.meshgrid(g, g, g, indexing="ij")
    m = np.minimum(np.minimum(X, Y), Z)
    ties = (X == m).astype(float) + (Y == m) + (Z == m)
    return [(V == m) / ties for V in (X, Y, Z)]


def _window_rates(P, lam, L, picks):
    """``R[i]``: rate at which vertex ``i`` of the window (array of shape
    ``(K+1,)*L``) gains a task, conditional on the window, with the outside
    closed by a Markov chain of order ``L − 1`` along the ring."""
    K1 = P.shape[0]
    letters = "abcdefghijklmnop"
    win = letters[:L]                       # window variables x_1..x_L
    if L == 1:
        raise ValueError("length must be >= 2")
    with np.errstate(invalid="ignore", divide="ignore"):
        # left extension: c(x_0 | x_1..x_{L-1}) = π(x_0..x_{L-1}) / π(x_1..x_{L-1})
        cl = np.nan_to_num(P / P.sum(axis=0)[None, ...])
        # right: c(x_{L+1} | x_2..x_L) = π(x_2..x_{L+1}) / π(x_2..x_L)
        cr = np.nan_to_num(P / P.sum(axis=-1)[..., None])
    out = []
    for i in range(L):                       # vertex i (0-based) of the window
        total = np.zeros((K1,) * L)
        for j in (i - 1, i, i + 1):          # arrival at vertex j
            need = [j - 1, j, j + 1]
            s = i - (j - 1)                  # offset of i in j's neighbourhood
            # name the variables at positions -2..L+1
            name = {k: win[k] for k in range(L)}
            name.update({-1: "x", -2: "y", L: "u", L + 1: "v"})
            terms, ops = [name[k] for k in need], []
            lo, hi = min(need), max(need)
            if lo <= -1:                     # x_0 ~ cl given window[0..L-2]
                ops.append(("x" + win[:L - 1], cl))
            if lo <= -2:                     # x_{-1} ~ cl given x_0, window[0..L-3]
                ops.append(("y" + "x" + win[:L - 2], cl))
            if hi >= L:                      # x_{L+1} ~ cr given window[1..L-1]
                ops.append((win[1:] + "u", cr))
            if hi >= L + 1:
                ops.append((win[2:] + "u" + "v", cr))
            inputs = [s_ for s_, _ in ops] + ["".join(terms)]
            present = [c for c in win if any(c in t for t in inputs)]
            val = np.einsum(",".join(inputs) + "->" + "".join(present),
                            *[a for _, a in ops], picks[s], optimize=len(ops) > 0)
            val = val.reshape([K1 if c in present else 1 for c in win])
            total = total + lam * val
        out.append(total)
    return out


def _window_generator(R, K1, L, mu):
    N = K1 ** L
    idx = np.arange(N)
    coords = np.unravel_index(idx, (K1,) * L)
    stride = [K1 ** (L - 1 - i) for i in range(L)]
    rows, cols, vals = [], [], []
    for i in range(L):
        up = coords[i] < K1 - 1
        rows.append(idx[up]); cols.append(idx[up] + stride[i]); vals.append(R[i].ravel()[up])
        dn = coords[i] > 0
        rows.append(idx[dn]); cols.append(idx[dn] - stride[i]); vals.append(np.ones(dn.sum()))
    Q = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(N, N))
    out = np.asarray(Q.sum(axis=1)).ravel() + mu
    return Q - sp.diags(out)


def _extend(P, L):
    """Extend a window law of length ``L − 1`` to length ``L`` by the Markov
    closure of order ``L − 2`` (a warm start for the next level)."""
    left = P[..., None]
    inner = P.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.nan_to_num(left * (P[None, ...] / inner[None, ..., None])) if L > 2 else P
    return out / out.sum()


def _solve_window(lam, mu, L, K, tol, max_iter, P0=None, reuse=None):
    K1 = K + 1
    picks = _pick_tensors(K1)
    q = lam ** np.arange(K1)
    p = q - np.append(q[1:], 0.0)
    P = p
    for _ in range(L - 1):
        P = np.multiply.outer(P, p)
    if P0 is not None:
        P = P0
    if reuse is None:
        reuse = K1 ** L > 10_000
    solve = _ReusedSolver() if reuse else _stationary

    def step(P):
        R = _window_rates(P, lam, L, picks)
        Q = _window_generator(R, K1, L, mu)
        p = P.sum(axis=tuple(range(1, L)))
        if mu > 0:                          # as in _solve: p from its birth-death balance
            rho = (P * R[0]).sum(axis=tuple(range(1, L))) / np.where(p > 0, p, 1.0)
            w = np.concatenate([[1.0], np.cumprod(rho[:-1])])
            p = w / w.sum()
        Pn = solve(Q, mu * _product(p, L).ravel()).reshape((K1,) * L)
        return 0.5 * (Pn + Pn.transpose(tuple(range(L))[::-1]))    # the ring's reflection

    P, it = _fixed_point(step, P, tol, max_iter)
    R = _window_rates(P, lam, L, picks)
    Q = _window_generator(R, K1, L, mu)
    p = P.sum(axis=tuple(range(1, L)))
    res = float(np.max(np.abs(Q.T @ P.ravel() + mu * _product(p, L).ravel())))
    # blocked rate per vertex: the first window vertex at level K
    blocked = float((P * R[0])[K].sum())
    return P, it, res, blocked


def _product(p, L):
    out = p
    for _ in range(L - 1):
        out = np.multiply.outer(out, p)
    return out


@dataclass(frozen=True, repr=False, eq=False)
class WindowResult(CompactResult):
    """Equilibrium of the window approximation of the ring (:func:`~qlib.meanfield.pair.ring_window`).

    Attributes
    ----------
    window : numpy.ndarray, shape (K+1,)*L
        Law of ``L`` consecutive queue lengths.
    marginal, occupancy : numpy.ndarray, shape (K+1,)
        Law of one queue length and ``q(i) = Σ_{a≥i} p(a)``.
    response_time : float
        Little's law, ``Σ_a a p(a) / (λ (1 − blocking))``.
    correlation : float
        Correlation of two neighbouring queue lengths.
    blocking, residual : float
        Lost fraction of arrivals at ``K``; largest entry of the master
        equation's right-hand side at the returned law.
    iterations : int
    lam, mu, length, truncation
        The inputs (``length`` is ``L``, ``truncation`` is ``K``).
    """

    window: np.ndarray
    marginal: np.ndarray
    occupancy: np.ndarray
    response_time: float
    correlation: float
    blocking: float
    residual: float
    iterations: int
    lam: float
    mu: float
    length: int
    truncation: int


def ring_window(lam: float, length: int, mu: float = 0.0, *, truncation: int = 12, tol: float = 1e-11,
                max_iter: int = 2000, start: WindowResult | None = None) -> WindowResult:
    """Window (cluster) approximation of JSQ on the ring at resampling rate ``mu``: ``L`` consecutive queues.

    The law of a window of ``L`` consecutive queue lengths follows the
    master equation of the window, where a window vertex's arrival rate
    depends on up to two queues beyond the window's ends; those are closed
    by a Markov chain of order ``L − 1`` along the ring,
    ``c(x_0 | x_1..x_{L−1}) = π(x_0..x_{L−1}) / π(x_1..x_{L−1})``.  ``L = 2``
    is the pair approximation of :func:`~qlib.meanfield.pair.pair_approximation` with
    ``degree = 2`` (built by a different code path); the hierarchy
    ``L = 2, 3, 4, ...`` sees ever longer stretches of the ring.

    Parameters
    ----------
    lam : float
        ``λ ∈ (0, 1)``.
    length : int
        Window length ``L >= 2``; the state space has ``(K+1)**L`` states.
    mu : float
        Resampling rate ``μ >= 0`` (finite): at rate ``μ`` the window's law
        is replaced by the product of its marginals.
    truncation : int
        Truncation ``K >= 2``.
    tol, max_iter
        As for :func:`~qlib.meanfield.pair.pair_approximation`.
    start : WindowResult, optional
        The window of length ``L − 1`` at the same ``truncation``: the start is
        its Markov extension (fewer fixed-point steps).  Above ``10**4``
        states each step solves by GMRES preconditioned with an incomplete LU
        that is reused across steps and refactored only when GMRES stalls.

    Returns
    -------
    WindowResult

    Raises
    ------
    ValueError
        If ``lam`` is not in ``(0, 1)``, ``length < 2``, ``truncation < 2``,
        ``mu`` is negative or not finite, ``tol`` not in ``(0, 1)``, or the
        state space exceeds ``2 * 10**6`` states.
    TypeError
        If ``length``, ``truncation`` or ``max_iter`` is not an int.
    RuntimeError
        If the fixed-point iteration does not converge.
    """
    lam = _check_lam(lam)
    L = _check_int(length, "length", 2)
    K = _check_int(truncation, "truncation", 2)
    max_iter = _check_int(max_iter, "max_iter", 1)
    try:
        mu = float(mu)
    except (TypeError, ValueError):
        raise TypeError(f"mu must be a real number, got {type(mu).__name__}") from None
    if not (math.isfinite(mu) and mu >= 0):
        raise ValueError(f"mu must be finite and >= 0, got {mu}")
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not 0 < tol < 1:
        raise ValueError(f"tol must be in (0, 1), got {tol!r}")
    if (K + 1) ** L > 2_000_000:
        raise ValueError(f"truncation and length too large: (truncation+1)**length = {(K + 1) ** L} "
                         "> 2000000 states")
    P0 = None
    if start is not None:
        if not isinstance(start, WindowResult):
            raise TypeError(f"start must be a WindowResult, got {type(start).__name__}")
        if start.length != L - 1 or start.truncation != K:
            raise ValueError(f"start must have length {L - 1} and truncation {K}, got "
                             f"{start.length} and {start.truncation}")
        P0 = _extend(start.window, L)
    P, it, res, blocked = _solve_window(lam, mu, L, K, tol, max_iter, P0=P0)
    p = P.sum(axis=tuple(range(1, L)))
    q = np.cumsum(p[::-1])[::-1].copy()
    q[0] = 1.0
    a = np.arange(K + 1)
    P2 = P.sum(axis=tuple(range(2, L))) if L > 2 else P
    m = float(a @ p)
    var = float(a ** 2 @ p) - m * m
    cov = float(a @ P2 @ a) - m * m
    return WindowResult(window=P, marginal=p, occupancy=q,
                        response_time=m / (lam * (1 - blocked / lam)),
                        correlation=cov / var if var > 0 else 0.0, blocking=blocked / lam,
                        residual=res, iterations=it, lam=lam, mu=mu, length=L, truncation=K)
