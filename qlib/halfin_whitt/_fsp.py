"""The adaptive finite-state projection behind stationary_jsq: window rows, growth, level-reduction and LU solves.

Adaptive truncation of the finite-``n`` JSQ occupancy chain (the engine of
:func:`qlib.halfin_whitt.stationary_jsq <qlib.halfin_whitt.chain.stationary_jsq>`).

A state is a *window* row ``(s, p_1, …, p_D)``: ``s`` full levels
(``Q_i = n`` for ``i <= s``; ``s`` is the length of a shortest queue) and the
levels above them, ``Q_{s+j} = p_j``, with ``n − 1 >= p_1 >= … >= p_D = 0``.
Every such row is a state of the chain and every state has exactly one row.
The number of columns ``D`` grows when a state of larger spread (longest minus
shortest queue) is admitted.

The state set is grown by the *finite state projection* idea: solve the chain
truncated to the current set (transitions that leave the set are dropped, so
the truncated chain is a generator on the set), estimate the stationary
probability of each state just outside from the flux that the solved law sends
into it, ``est(y) = Σ_x π(x) r(x, y) / out(y)``, and admit every state whose
estimate exceeds a threshold ``θ``; along the direction of each admitted step
the set is also extended geometrically, at the decay rate measured on the set,
so that slowly decaying tails (the number of waiting tasks when all servers
are busy decays like ``ρ^k`` with ``ρ = λ_n/n`` close to one) need few
rounds.  The loop stops when no state outside has an estimate above ``θ``.
"""
from __future__ import annotations

import math
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from qlib.exact._rows import _Index, _pad, _unique_rows

__all__ = []

_DEBUG = False


def _outrate(W, n, lam):
    """Total rate out of each row: arrivals, departures of the ``Q_1`` busy
    servers (``p_1`` above the shortest level, ``n − p_1`` at it when
    ``s >= 1``)."""
    s = W[:, 0]
    return lam + np.where(s >= 1, float(n), W[:, 1].astype(float))


def _transitions(W, n, lam):
    """All transitions out of the rows ``W`` (last column zero on every row):
    ``(src, targets, rates)``; the targets have one column more than ``W``."""
    m, c = W.shape
    D = c - 1
    s = W[:, 0]
    P = W[:, 1:]
    Wx = _pad(W, D + 1)
    src, tgt, rate = [], [], []
    # arrival: p_1 + 1; a completed level shifts the window
    T = Wx.copy()
    T[:, 1] += 1
    full = T[:, 1] == n
    T[full, 0] += 1
    T[full, 1:-1] = Wx[full, 2:]
    T[full, -1] = 0
    src.append(np.arange(m)); tgt.append(T); rate.append(np.full(m, lam))
    # departure from a shortest queue (s >= 1): rate n − p_1, window shifts
    i = np.nonzero(s >= 1)[0]
    T = np.zeros((i.size, D + 2), W.dtype)
    T[:, 0] = s[i] - 1
    T[:, 1] = n - 1
    T[:, 2:] = P[i]
    src.append(i); tgt.append(T); rate.append((n - P[i, 0]).astype(float))
    # departure from a queue of length s + j: rate p_j − p_{j+1}
    Px = np.concatenate([P, np.zeros((m, 1), W.dtype)], axis=1)
    for j in range(D):
        r = Px[:, j] - Px[:, j + 1]
        i = np.nonzero(r > 0)[0]
        if i.size == 0:
            continue
        T = Wx[i].copy()
        T[:, j + 1] -= 1
        src.append(i); tgt.append(T); rate.append(r[i].astype(float))
    return np.concatenate(src), np.concatenate(tgt), np.concatenate(rate)


def _trim(W):
    """Drop trailing all-zero columns but keep one."""
    D = W.shape[1] - 1
    nz = np.nonzero(np.any(W[:, 1:] != 0, axis=0))[0]
    keep = (nz[-1] + 1 if nz.size else 0) + 1
    return W[:, : min(D, keep) + 1] if keep < D else W


def _solve(W, n, lam):
    """Stationary law of the chain truncated to the rows ``W``; also the cut
    transitions ``(src, targets, rates)`` and the relative balance residual
    of the solution (``_residual``)."""
    # keep the rows below the first missing level N (the levels must be
    # contiguous for the redirection and the level reduction)
    Nw = W[:, 0] * n + W[:, 1:].sum(axis=1)
    lv = np.unique(Nw)
    gap = np.nonzero(np.diff(lv) > 1)[0]
    if gap.size:
        W = W[Nw <= lv[gap[0]]]
    W = _trim(W)
    if np.any(W[:, -1] != 0):
        W = _pad(W, W.shape[1])
    c = W.shape[1]
    idx = _Index(W)
    src, T, r = _transitions(W, n, lam)
    j = np.full(T.shape[0], -1)
    inner = T[:, c] == 0
    j[inner] = idx.lookup(T[inner, :c])
    inside = j >= 0
    m = W.shape[0]
    # cut transitions are redirected to a representative row of the target's
    # level N (the number of tasks): the row of that level with the fewest
    # tasks above the first non-full level.  Every move changes N by one, so
    # the N-process keeps its exact rates wherever the level is in the set;
    # an arrival above the highest level is blocked.
    s = W[:, 0]
    N = s * n + W[:, 1:].sum(axis=1)
    N_of_T = s[src] * 0 + N[src] + np.where(np.arange(src.size) < m, 1, -1)
    extra = W[:, 2:].sum(axis=1) if W.shape[1] > 2 else np.zeros(m, np.int64)
    o = np.lexsort((extra, N))
    levels, firsts = np.unique(N[o], return_index=True)
    rep = o[firsts]
    pos = np.searchsorted(levels, N_of_T)
    pos_c = np.minimum(pos, levels.size - 1)
    has = levels[pos_c] == N_of_T
    jj = np.where(inside, j, np.where(has, rep[pos_c], src))
    A = sp.csr_matrix((r, (src, jj)), shape=(m, m))
    A.setdiag(0.0)
    A.eliminate_zeros()
    j0 = int(rep[np.argmin(np.abs(levels - lam))])
    out = np.asarray(A.sum(axis=1)).ravel()
    Qm = (A - sp.diags(out)).tocsr()
    cnt = np.bincount(N - levels[0])
    # level reduction costs about Σ b³ for levels of b states; the sparse LU
    # is cheaper on the wide two-dimensional sheets of large n
    use_lr = float(np.sum(cnt.astype(float) ** 3)) <= _LR_FLOPS
    pi = _level_reduction(Qm, N, levels) if use_lr else _sparse_lu(Qm, j0)
    res = _residual(Qm, pi)
    if res > _MAX_RESIDUAL:
        # an ill-conditioned set (improbable rows far from the bulk): try the
        # other solver and keep the better solution; grow() re-solves after
        # the next admission, and stationary_jsq checks the final residual
        alt = _sparse_lu(Qm, j0) if use_lr else _level_reduction(Qm, N, levels)
        res_alt = _residual(Qm, alt)
        if res_alt < res:
            pi, res = alt, res_alt
    cut = ~inside
    return W, pi, (src[cut], T[cut], r[cut]), res


_LR_FLOPS = 1e11


_MAX_RESIDUAL = 1e-9


def _residual(Qm, pi):
    """Relative balance residual ``‖π Q‖₁ / Σ π(x) |Q(x, x)|`` (0 for the
    exact stationary law of the truncated chain)."""
    return float(np.abs(pi @ Qm).sum() / max(float(pi @ np.abs(Qm.diagonal())), 1e-300))


def _sparse_lu(Qm, j0):
    """π Q = 0 by a sparse LU with π fixed at ``j0`` (its equation dropped)."""
    m = Qm.shape[0]
    G = Qm.T.tocsc()
    keep = np.ones(m, bool)
    keep[j0] = False
    M = G[keep][:, keep].tocsc()
    rhs = -np.asarray(G[keep][:, [j0]].todense()).ravel()
    lu = spla.splu(M, permc_spec="COLAMD", diag_pivot_thresh=0.1)
    x = lu.solve(rhs)
    for _ in range(2):
        x += lu.solve(rhs - M @ x)
    pi = np.empty(m)
    pi[keep] = x
    pi[j0] = 1.0
    pi = np.maximum(pi, 0.0)
    return pi / pi.sum()


def _level_reduction(Qm, N, levels):
    """π Q = 0 for a generator that is block tridiagonal in the number of
    tasks ``N`` (every move changes ``N`` by one): linear level reduction,
    ``π_ℓ = π_{ℓ−1} R_ℓ`` with ``R_ℓ = U_{ℓ−1} (−B_ℓ − R_{ℓ+1} D_{ℓ+1})⁻¹``,
    computed from the top level down; every matrix inverted is a
    non-singular M-matrix."""
    order = np.argsort(N, kind="stable")
    rank = np.empty(order.size, np.int64)
    rank[order] = np.arange(order.size)
    bounds = np.searchsorted(N[order], np.append(levels, levels[-1] + 1))
    L = levels.size
    C = Qm.tocoo()
    r, c, v = rank[C.row], rank[C.col], C.data
    lr = np.searchsorted(bounds, r, side="right") - 1
    lc = np.searchsorted(bounds, c, side="right") - 1
    o = np.lexsort((lc, lr))
    r, c, v, lr, lc = r[o], c[o], v[o], lr[o], lc[o]
    key = lr * 3 + (lc - lr + 1)
    cut = np.searchsorted(key, np.arange(3 * L + 1))
    size = np.diff(bounds)

    def blk(a, b):
        """Dense block (level a, level b), |a − b| <= 1."""
        k = a * 3 + (b - a + 1)
        out = np.zeros((size[a], size[b]))
        sl = slice(cut[k], cut[k + 1])
        np.add.at(out, (r[sl] - bounds[a], c[sl] - bounds[b]), v[sl])
        return out

    def times_down(X, a):
        """``X @ blk(a + 1, a)`` through the block's nonzeros (a few per row)."""
        k = (a + 1) * 3
        sl = slice(cut[k], cut[k + 1])
        i, j, w = r[sl] - bounds[a + 1], c[sl] - bounds[a], v[sl]
        out = np.zeros((X.shape[0], size[a]))
        if i.size:
            o = np.argsort(j, kind="stable")
            i, j, w = i[o], j[o], w[o]
            starts = np.r_[0, np.nonzero(np.diff(j))[0] + 1]
            out[:, j[starts]] = np.add.reduceat(X[:, i] * w, starts, axis=1)
        return out

    R = [None] * L
    nxt = None
    for k in range(L - 1, 0, -1):
        M = -blk(k, k)
        if nxt is not None:
            M -= times_down(nxt, k)
        R[k] = np.linalg.solve(M.T, blk(k - 1, k).T).T
        nxt = R[k]
    M0 = blk(0, 0) + (times_down(R[1], 0) if L > 1 else 0.0)
    b0 = M0.shape[0]
    if b0 == 1:
        p = np.ones(1)
    else:
        # π_0 M0 = 0, Σ π_0 = 1 (replace one equation)
        Aeq = M0.T.copy()
        Aeq[-1] = 1.0
        rhs = np.zeros(b0)
        rhs[-1] = 1.0
        p = np.linalg.solve(Aeq, rhs)
    # π_k = π_{k−1} R_k, each level rescaled to unit sum with its log scale
    # kept: the mass of the levels can span more than the float range (a set
    # that reaches nearly empty systems at large n), and the plain products
    # would overflow
    p = np.maximum(p, 0.0)
    parts, logs = [p / p.sum()], [0.0]
    for k in range(1, L):
        v = np.maximum(parts[-1] @ R[k], 0.0)
        t = v.sum()
        parts.append(v / t if t > 0 else v)
        logs.append(logs[-1] + (math.log(t) if t > 0 else 0.0))
    logs = np.array(logs)
    w = np.exp(logs - logs.max())
    x = np.concatenate([q * wk for q, wk in zip(parts, w)])
    pi = x[rank]
    return pi / pi.sum()


def _valid(T, n):
    P = T[:, 1:]
    ok = (T[:, 0] >= 0) & (P[:, 0] <= n - 1) & np.all(P >= 0, axis=1)
    ok &= np.all(P[:, :-1] >= P[:, 1:], axis=1)
    return ok


def _propagate(W, idx, new, front, est, n, lam, theta, rounds):
    """Breadth-first growth from the admitted ``front`` rows: a state ``z``
    outside gets ``Σ est(y) r(y, z) / out(z)`` from the rows ``y`` of the last
    wave and is admitted above ``theta`` (this ignores the flux back, so it
    under-estimates; the next solve corrects it)."""
    out = [new]
    wave, w_est = front, est
    seen = _Index(np.concatenate([W, new]))
    for _ in range(rounds):
        if wave.shape[0] == 0:
            break
        c = wave.shape[1]
        src, T, r = _transitions(wave, n, lam)
        narrow = T[:, c] == 0  # a wider window is left to the next round
        src, T, r = src[narrow], T[narrow, :c], r[narrow]
        T = _pad(T, 0)
        ok = seen.lookup(T) < 0
        src, T, r = src[ok], T[ok], r[ok]
        if T.shape[0] == 0:
            break
        first, inv = _unique_rows(T)
        Z = T[first]
        e = np.bincount(inv, weights=w_est[src] * r, minlength=Z.shape[0]) / _outrate(Z, n, lam)
        keep = e > theta
        wave, w_est = Z[keep], e[keep]
        if wave.shape[0] == 0:
            break
        out.append(wave)
        seen = _Index(np.concatenate([seen.W, wave]))
    return np.concatenate(out)


def seed(n, beta, lam):
    """A first row set around the bulk of the law: ``s = 0`` with
    ``Q_1 >= n − (β + 5)√n`` and ``Q_2`` up to a few ``√n/β``; ``s = 1`` with
    ``Q_2`` in the same range."""
    sq = np.sqrt(n)
    a = max(0, int(n - (beta + 5) * sq))
    c = min(n - 1, int((2.0 / beta + 3) * sq) + 2)
    rows = [(0, q1, q2, 0) for q1 in range(a, n) for q2 in range(0, min(q1, c) + 1)]
    rows += [(1, p1, 0, 0) for p1 in range(0, c + 1)]
    return np.array(rows, dtype=np.int64)


def grow(W, n, lam, theta, *, max_states, max_rounds=200, extrapolate=2000, bfs=60, slack=0.01,
         report=None):
    """Grow the row set ``W`` until no state outside it has an estimated
    stationary probability above ``theta``.  Returns ``(W, pi, cut, rounds,
    frontier, residual)`` with ``frontier`` the summed estimate over the
    states just outside and ``residual`` that of the last solve.

    A round that must admit states admits every state estimated above
    ``slack · theta`` (and extends geometrically and breadth-first down to
    it): admitting a margin below the stopping threshold saves the rounds
    in which the frontier would otherwise creep forward a layer at a time
    (each round is a full solve).  ``extrapolate`` caps the steps of one
    geometric extension; along slowly decaying directions (the task count
    at small ``β``, where the ratio per step is about ``1 − β/√n``) it
    needs of order ``√n/β · log(1/slack)`` steps.  ``report(rounds, states)``, if
    given, is called after each solve (progress)."""
    for rounds in range(1, max_rounds + 1):
        W, pi, (src, T, r), res = _solve(W, n, lam)
        if report is not None:
            report(rounds, W.shape[0])
        if _DEBUG:
            print("round", rounds, W.shape, flush=True)
        if T.shape[0] == 0:
            return W, pi, (src, T, r), rounds, 0.0, res
        first, inv = _unique_rows(T)
        U = T[first]
        F = np.bincount(inv, weights=pi[src] * r, minlength=U.shape[0])
        est = F / _outrate(U, n, lam)
        frontier = float(est.sum())
        if not (est > theta).any():
            return W, pi, (src, T, r), rounds, frontier, res
        a_th = theta * slack
        add = est > a_th
        if W.shape[0] + int(add.sum()) > max_states:
            raise RuntimeError(f"the truncation needs more than max_states = {max_states} "
                               f"states (n = {n}); raise max_states or tol")
        new = [U[add]]
        # geometric extension along each admitted step y -> y + e: the decay
        # rate g = π(y)/π(y − e), measured on the set, continues outward
        Wp = _pad(W, U.shape[1] - 1)
        idx = _Index(Wp)
        best = np.full(U.shape[0], -1)
        flux = pi[src] * r
        o = np.lexsort((-flux, inv))
        firsts = o[np.r_[True, inv[o][1:] != inv[o][:-1]]]
        best[inv[firsts]] = src[firsts]
        a = np.nonzero(add)[0]
        y = Wp[best[a]]
        e = U[a] - y
        back = idx.lookup(y - e) if extrapolate else np.full(a.size, -1)
        g = np.where(back >= 0, pi[best[a]] / np.maximum(pi[np.maximum(back, 0)], 1e-300), 0.0)
        g = np.minimum(g, 0.999)
        cur, val = U[a].copy(), est[a].copy()
        for _ in range(extrapolate):
            val = val * g
            go = val > a_th
            if not go.any():
                break
            cur, val, e, g = cur[go] + e[go], val[go], e[go], g[go]
            ok = _valid(cur, n)
            cur, val, e, g = cur[ok], val[ok], e[ok], g[ok]
            if cur.shape[0] == 0:
                break
            new.append(cur.copy())
        # for s >= 1 the chain does not depend on s (a QBD in s): continue
        # the top levels geometrically at the measured level-to-level decay
        sv = Wp[:, 0]
        smax = int(sv.max())
        if smax >= 2:
            top, prev = sv == smax, sv == smax - 1
            eta = min(float(pi[top].sum()) / max(float(pi[prev].sum()), 1e-300), 0.999)
            rows, val = Wp[top], pi[top]
            # with the whole band p = (j, 0, …), j < n, so that the levels
            # N of the copies stay contiguous
            band = np.zeros((n, Wp.shape[1]), Wp.dtype)
            band[:, 0] = smax
            band[:, 1] = np.arange(n)
            miss = idx.lookup(band) < 0
            rows = np.concatenate([rows, band[miss]])
            val = np.concatenate([val, np.full(int(miss.sum()), float(val.max()))])
            for k in range(1, extrapolate + 1):
                val = val * eta
                go = val > a_th
                if not go.any():
                    break
                rows, val = rows[go].copy(), val[go]
                rows[:, 0] = smax + k
                new.append(rows)
        Nw = np.concatenate(new)
        f, _ = _unique_rows(Nw)
        Nw = Nw[f]
        Nw = Nw[idx.lookup(Nw) < 0]
        Nw = _propagate(Wp, idx, Nw, U[a], est[a], n, lam, a_th, bfs)
        W = np.concatenate([Wp, Nw])
        if np.any(W[:, -1] != 0):
            W = _pad(W, W.shape[1])
    raise RuntimeError(f"the truncation did not settle in {max_rounds} rounds (n = {n})")
