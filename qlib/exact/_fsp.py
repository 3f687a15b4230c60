"""Adaptive finite-state projection of the ``μ = ∞`` occupancy chain.

Mechanics of :func:`qlib.exact.occupancy_chain_adaptive <qlib.exact.occupancy.occupancy_chain_adaptive>`.  A state
``n >= Q_1 >= Q_2 >= ...`` is stored as a *window* row
``(s, p_1, ..., p_D)``: ``s`` full levels (``Q_i = n`` for ``i <= s``) and
the partial levels above them, ``p_k = Q_{s+k} < n``, padded with zeros.
Every stored row keeps its last column zero, so one more level always fits.
A heavily loaded chain spends long excursions with many full levels; the
window makes those states as cheap as the others, and no level cap is needed.

Rounds: solve the chain restricted to the current set (a transition that
leaves the set is redirected to the most probable state holding the same
number of tasks, so the total count ``N`` still moves by ±1 and the law of
``N`` is kept nearly right), estimate the probability of each state just
outside by *inflow / outflow rate*, admit those above a threshold (and,
breadth first, their outside neighbours above it), repeat until nothing is
admitted.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

# rows are found through the hashed index of the JSQ chain's windows (a row's
# key is a wrapped dot product with odd 64-bit multipliers; an index refuses
# two distinct rows with one key, and a lookup compares rows)
from qlib.exact._iad import _solve_iad as iad
from qlib.exact._rows import _Index, _pad
from qlib.exact._rows import _unique_rows as _unique


def _width(W, c):
    """``W`` widened with zero columns to ``c`` columns (if narrower)."""
    return _pad(W, c - 1)


def _room(W):
    """Widen by one column if some row has its last column non-zero."""
    return _width(W, W.shape[1] + 1) if np.any(W[:, -1] != 0) else W


def tasks(W, n):
    """Total number of tasks ``N = Σ_i Q_i`` of each window row."""
    return W[:, 0] * n + W[:, 1:].sum(axis=1)


def moves(W, n, lamn, T):
    """All transitions out of the rows ``W`` (last column zero).

    Returns ``(source row, target rows of the same width, rate)``.  A target
    whose last column is non-zero has opened a new level: it lies outside
    any set of rows of this width.
    """
    m, c = W.shape
    s, P = W[:, 0], W[:, 1:]
    D = c - 1
    Px = np.column_stack([np.full(m, n), P, np.zeros(m, W.dtype)])   # Q_s = n, p_1..p_D, 0
    src, tg, rt = [], [], []
    for j in range(1, D + 1):
        up = lamn * (T[Px[:, j - 1]] - T[Px[:, j]])
        i = np.nonzero(up > 0)[0]
        X = W[i].copy()
        X[:, j] += 1
        full = X[:, 1] == n                # level s + 1 completed: shift the window
        if full.any():
            X[full, 0] += 1
            X[full, 1:-1] = X[full, 2:]
            X[full, -1] = 0
        src.append(i), tg.append(X), rt.append(up[i])
        dn = (Px[:, j] - Px[:, j + 1]).astype(float)
        i = np.nonzero(dn > 0)[0]
        X = W[i].copy()
        X[:, j] -= 1
        src.append(i), tg.append(X), rt.append(dn[i])
    i = np.nonzero(s >= 1)[0]               # departure from the top full level
    X = np.zeros((i.size, c), W.dtype)
    X[:, 0] = s[i] - 1
    X[:, 1] = n - 1
    X[:, 2:] = P[i, :-1]
    src.append(i), tg.append(X), rt.append((n - P[i, 0]).astype(float))
    return np.concatenate(src), np.concatenate(tg), np.concatenate(rt)


def occupancy(W, n, pi):
    """``E Q_i / n`` for ``i = 0..max level``."""
    s = W[:, 0]
    L = int((s + W.shape[1] - 1).max())
    occ = np.zeros(L + 1)
    # full levels: P(s >= i)
    ps = np.bincount(s, pi, minlength=L + 1)
    occ += ps[::-1].cumsum()[::-1]
    for k in range(1, W.shape[1]):
        occ += np.bincount(s + k, pi * W[:, k] / n, minlength=L + 1)[: L + 1]
    occ[0] = 1.0
    return occ


def _solve_iad(src, dst, rate, N, x0, tol=1e-13, sweeps=8, max_iter=20000):
    """Stationary law on the rows; every kept move changes ``N`` by ±1.

    Aggregation over ``N`` (a birth–death chain, solved exactly with the
    up/down rates averaged over the current law given ``N``), then
    ``sweeps`` uniformised power steps; warm started from ``x0``.
    """
    m = N.size
    if m == 1:
        return np.ones(1)
    keep = src != dst
    src, dst, rate = src[keep], dst[keep], rate[keep]
    out = np.bincount(src, rate, minlength=m)
    dN = N[dst] - N[src]
    up = np.bincount(src[dN > 0], rate[dN > 0], minlength=m)
    down = np.bincount(src[dN < 0], rate[dN < 0], minlength=m)
    ar = np.arange(m)
    GT = sp.csr_matrix((np.concatenate([rate, -out]),
                        (np.concatenate([dst, ar]), np.concatenate([src, ar]))), shape=(m, m))
    # the same iteration as the level-capped chain's, warm started
    return iad(GT, N - N.min(), up, down, out.max(), tol=tol, sweeps=sweeps,
               max_iter=max_iter, x0=x0)


def _find(idx, X):
    """Row numbers of the targets ``X`` in the index, ``-1`` outside."""
    j = np.full(X.shape[0], -1)
    inner = X[:, -1] == 0                  # a non-zero last column opened a new level
    j[inner] = idx.lookup(X[inner])
    return j


class _Chain:
    """The kept rows with their moves; moves are computed once per row and
    only the targets still outside are looked up again as the set grows."""

    def __init__(self, W, n, lamn, T):
        self.n, self.lamn, self.T = n, lamn, T
        self.W = W
        self.src, self.X, self.r = moves(W, n, lamn, T)
        self.j = _find(_Index(W), self.X)

    def add(self, new):
        m = self.W.shape[0]
        w = max(self.W.shape[1], max(x.shape[1] for x in new))
        self.W = _room(np.concatenate([_width(self.W, w)] + [_width(x, w) for x in new]))
        idx = _Index(self.W)
        self.X = _width(self.X, self.W.shape[1])
        out = np.nonzero(self.j < 0)[0]
        self.j[out] = _find(idx, self.X[out])
        s2, X2, r2 = moves(self.W[m:], self.n, self.lamn, self.T)
        self.src = np.concatenate([self.src, s2 + m])
        self.X = np.concatenate([self.X, X2])
        self.r = np.concatenate([self.r, r2])
        self.j = np.concatenate([self.j, _find(idx, X2)])

    def solve(self, x0, tol):
        """Stationary law on the rows (relative residual ``tol``) and the
        mask of the moves that leave the set."""
        N, NX = tasks(self.W, self.n), tasks(self.X, self.n)
        inside = self.j >= 0
        # representative of each task count: the most probable row holding it
        o = np.lexsort((-x0, N))
        lv, first = np.unique(N[o], return_index=True)
        rep = o[first]
        pos = np.minimum(np.searchsorted(lv, NX), lv.size - 1)
        has = lv[pos] == NX
        dst = np.where(inside, self.j, np.where(has, rep[pos], self.src))
        return _solve_iad(self.src, dst, self.r, N, x0, tol=tol), ~inside


def _outside(src, X, r, pi, n, lamn):
    """Distinct outside rows and their estimated probability inflow / outflow rate."""
    first, inv = _unique(X)
    U = X[first]
    outrate = lamn + np.where(U[:, 0] >= 1, n, U[:, 1])      # n λ + Q_1
    return U, np.bincount(inv, pi[src] * r, minlength=U.shape[0]) / outrate


def grow(n, lam, T, W, thresholds, max_states, max_rounds=500):
    """Grow the row set from ``W`` through the decreasing ``thresholds``.

    Returns one ``(rows, law, frontier mass)`` per threshold, the frontier
    mass being the summed estimate of the states just outside.
    """
    lamn = n * lam
    ch = _Chain(W, n, lamn, T)
    score = np.ones(W.shape[0])
    results = []
    for theta in thresholds:
        for _ in range(max_rounds):
            # a loose solve is enough to choose states; the last one is tight
            for tol in (1e-9, 1e-13):
                pi, cut = ch.solve(score, tol)
                U, est = _outside(ch.src[cut], ch.X[cut], ch.r[cut], pi, n, lamn)
                add = est > theta
                if add.any():
                    break
                score = pi
            if not add.any():
                break
            W = ch.W
            new, nest = [U[add]], [est[add]]
            wave, we = U[add], est[add]
            seen = _Index(_width(np.concatenate([_width(W, U.shape[1]), wave]), U.shape[1]))
            for _ in range(1000):          # breadth first beyond the admitted states
                wave = _room(wave)
                s2, X2, r2 = moves(wave, n, lamn, T)
                if seen.W.shape[1] < X2.shape[1]:
                    seen = _Index(_width(seen.W, X2.shape[1]))
                ok = seen.lookup(X2) < 0
                s2, X2, r2 = s2[ok], X2[ok], r2[ok]
                if not s2.size:
                    break
                Z, e = _outside(s2, X2, r2, we, n, lamn)
                k = e > theta
                if not k.any():
                    break
                wave, we = Z[k], e[k]
                new.append(wave), nest.append(we)
                seen = _Index(np.concatenate([seen.W, wave]))
            ch.add(new)
            score = np.concatenate([pi] + nest)
            if ch.W.shape[0] > max_states:
                raise ValueError(f"more than max_states = {max_states} states needed at "
                                 f"threshold {theta:.3g}; raise max_states or tol")
        else:
            raise RuntimeError(f"state set still growing after {max_rounds} rounds")
        results.append((ch.W, pi, float(est.sum())))
        score = pi
    return results
