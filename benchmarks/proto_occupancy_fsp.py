"""PROTOTYPE (issue 17, item 1; not used by the book or the tests): adaptive
finite-state-projection solver for the mu = inf occupancy chain of
qlib.exact.occupancy_chain, without a level cap K.

Rows are windows (s, p_1..p_D): s full levels (Q_i = n for i <= s) and the
levels above them.  Rounds: solve the chain on the current set (cut
transitions redirected to a representative of the target's task level N, or
MODE = "near": the nearest state of that level, or "drop"), estimate the
probability of each state just outside by flux-in / rate-out, admit those
above theta (with breadth-first propagation down to bfs_theta), repeat.
Solvers: "iad" (aggregation over N + power sweeps, warm started; fastest),
"lr" (linear level reduction in N, dense blocks), "gmres" (ILU-GMRES).

Measured (delta_2, lam = 0.9, loaded 2-core machine), R = E R_n:
  n = 6:  theta 1e-8 -> 5.7e3 states, 1e-10 -> 1.5e4 states (R to ~1e-6 of
          the full enumeration extrapolated in K, 2.8278149)
  n = 12: theta 1e-8/1e-9/1e-10 -> 2.0e4/3.9e4/7.2e4 states,
          R = 2.369672 / 2.370178 / 2.370279 (error ~ 23 x frontier mass);
          iad 8.5 s at 1e-9, 17 s at 1e-10 (lr: 28 s / 95 s)
  n = 20: theta 1e-9 -> 9.6e4 states, R = 2.217591, frontier 9.4e-6
          (several minutes).
So at lam = 0.9 the chain has long all-busy excursions (s up to 13 at
n = 12), and the reachable n in seconds is about 12, not 20-40.
Usage: python benchmarks/proto_occupancy_fsp.py n lam d theta bfs_theta MODE SOLVER
"""
import math, time, sys
import numpy as np
import scipy.sparse as sp
from qlib import finite_n
from qlib.degrees import DegreeDistribution as D

_MULT = np.random.default_rng(20261203).integers(1, 2**62, size=512, dtype=np.int64) | 1


def _keys(W):
    with np.errstate(over="ignore"):
        return (W * _MULT[: W.shape[1]]).sum(axis=1)


class _Index:
    def __init__(self, W):
        self.W = W
        k = _keys(W)
        self.order = np.argsort(k, kind="stable")
        self.sk = k[self.order]
        if np.any(self.sk[1:] == self.sk[:-1]):
            raise RuntimeError("hash collision or duplicate rows in the state index")

    def lookup(self, T):
        m = self.W.shape[0]
        if m == 0:
            return np.full(T.shape[0], -1)
        k = _keys(T)
        pos = np.minimum(np.searchsorted(self.sk, k), m - 1)
        j = self.order[pos]
        ok = self.sk[pos] == k
        ok[ok] = np.all(self.W[j[ok]] == T[ok], axis=1)
        return np.where(ok, j, -1)


def _width(W, c):
    if W.shape[1] >= c:
        return W
    return np.concatenate([W, np.zeros((W.shape[0], c - W.shape[1]), W.dtype)], axis=1)


def _room(W):
    """Make the last column zero on every row (room for one more level)."""
    return _width(W, W.shape[1] + 1) if np.any(W[:, -1] != 0) else W


def _unique(T):
    _, f, inv = np.unique(_keys(T), return_index=True, return_inverse=True)
    return f, inv.ravel()


def _moves(W, n, lamn, T):
    """Transitions out of window rows W = (s, p_1..p_D), last column zero.
    Returns (src, targets with the same width, rates)."""
    m, c = W.shape
    s = W[:, 0]
    P = W[:, 1:]
    D = c - 1
    Px = np.column_stack([np.full(m, n), P, np.zeros(m, W.dtype)])   # Q_s = n, p_1..p_D, 0
    src, tg, rt = [], [], []
    for j in range(1, D + 1):
        up = lamn * (T[Px[:, j - 1]] - T[Px[:, j]])
        i = np.nonzero(up > 0)[0]
        X = W[i].copy()
        X[:, j] += 1
        full = X[:, 1] == n                # level s+1 completed: shift the window
        if full.any():
            X[full, 0] += 1
            X[full, 1:-1] = X[full, 2:]
            X[full, -1] = 0
        src.append(i); tg.append(X); rt.append(up[i])
        dn = (Px[:, j] - Px[:, j + 1]).astype(float)
        i = np.nonzero(dn > 0)[0]
        X = W[i].copy()
        X[:, j] -= 1
        src.append(i); tg.append(X); rt.append(dn[i])
    i = np.nonzero(s >= 1)[0]               # departure at a full level s
    X = np.zeros((i.size, c), W.dtype)
    X[:, 0] = s[i] - 1
    X[:, 1] = n - 1
    X[:, 2:] = P[i, :-1]
    src.append(i); tg.append(X); rt.append((n - P[i, 0]).astype(float))
    return np.concatenate(src), np.concatenate(tg), np.concatenate(rt)


def _tasks(W, n):
    return W[:, 0] * n + W[:, 1:].sum(axis=1)


def _level_reduction(G, N):
    """pi G = 0 for G block tridiagonal in N (csr), levels N contiguous."""
    order = np.argsort(N, kind="stable")
    Ns = N[order]
    lv = np.unique(Ns)
    b = np.searchsorted(Ns, np.append(lv, lv[-1] + 1))
    Gs = G[order][:, order].tocsr()
    L = lv.size
    rows = [Gs[b[k]:b[k + 1]] for k in range(L)]

    def blk(a, c):
        return rows[a][:, b[c]:b[c + 1]].toarray()

    R = [None] * L
    nxt = None
    for k in range(L - 1, 0, -1):
        M = -blk(k, k)
        if nxt is not None:
            M -= nxt @ blk(k + 1, k)
        R[k] = np.linalg.solve(M.T, blk(k - 1, k).T).T
        nxt = R[k]
    M0 = blk(0, 0) + (R[1] @ blk(1, 0) if L > 1 else 0.0)
    b0 = M0.shape[0]
    if b0 == 1:
        p = np.ones(1)
    else:
        A = M0.T.copy()
        A[-1] = 1.0
        rhs = np.zeros(b0)
        rhs[-1] = 1.0
        p = np.linalg.solve(A, rhs)
    parts = [p]
    for k in range(1, L):
        parts.append(parts[-1] @ R[k])
    x = np.maximum(np.concatenate(parts), 0.0)
    pi = np.empty_like(x)
    pi[order] = x
    return pi / pi.sum()


MODE = "rep"


def _qvec(W, n, w):
    s = W[:, 0]
    Q = np.zeros((W.shape[0], w))
    col = np.arange(w)
    Q[col[None, :] < s[:, None]] = n
    for k in range(1, W.shape[1]):
        Q[np.arange(W.shape[0]), np.minimum(s + k - 1, w - 1)] += np.where(s + k - 1 < w, W[:, k], 0)
    return Q



def level_reduction(src, dst, rate, N, m):
    """pi Q = 0 for the generator with off-diagonal rates (src -> dst, rate),
    every move changing N by exactly +-1 or 0 (self moves ignored); levels contiguous."""
    keep = src != dst
    src, dst, rate = src[keep], dst[keep], rate[keep]
    lv0 = N.min()
    L = int(N.max() - lv0) + 1
    lev = N - lv0
    order = np.lexsort((np.arange(m), lev))
    loc = np.empty(m, np.int64)
    cnt = np.bincount(lev, minlength=L)
    start = np.concatenate([[0], np.cumsum(cnt)])
    loc[order] = np.arange(m) - start[lev[order]]
    out = np.bincount(src, rate, minlength=m)
    ls, ld = lev[src], lev[dst]
    diff = ld - ls
    if np.any(np.abs(diff) > 1):
        raise RuntimeError("move changes N by more than one")
    # group transitions by (source level, diff)
    key = ls * 3 + diff + 1
    o = np.argsort(key, kind="stable")
    kb = np.searchsorted(key[o], np.arange(3 * L + 1))

    def blk(k, d):
        """dense block (level k -> level k + d)"""
        B = np.zeros((cnt[k], cnt[k + d]))
        sel = o[kb[3 * k + d + 1]:kb[3 * k + d + 2]]
        np.add.at(B, (loc[src[sel]], loc[dst[sel]]), rate[sel])
        if d == 0:
            B[np.arange(cnt[k]), np.arange(cnt[k])] -= out[order[start[k]:start[k + 1]]]
        return B

    R = [None] * L
    nxt = None
    for k in range(L - 1, 0, -1):
        M = -blk(k, 0)
        if nxt is not None:
            M -= nxt @ blk(k + 1, -1)
        R[k] = np.linalg.solve(M.T, blk(k - 1, 1).T).T
        nxt = R[k]
    M0 = blk(0, 0) + (R[1] @ blk(1, -1) if L > 1 else 0.0)
    b0 = M0.shape[0]
    if b0 == 1:
        p = np.ones(1)
    else:
        A = M0.T.copy()
        A[-1] = 1.0
        rhs = np.zeros(b0)
        rhs[-1] = 1.0
        p = np.linalg.solve(A, rhs)
    parts = [p]
    for k in range(1, L):
        parts.append(parts[-1] @ R[k])
    x = np.maximum(np.concatenate(parts), 0.0)
    pi = np.empty(m)
    pi[order] = x
    return pi / pi.sum()


def _solve(W, n, lamn, T, score):
    m = W.shape[0]
    idx = _Index(W)
    src, X, r = _moves(W, n, lamn, T)
    inner = X[:, -1] == 0
    j = np.full(src.size, -1)
    j[inner] = idx.lookup(X[inner][:, :W.shape[1]])
    inside = j >= 0
    N = _tasks(W, n)
    NX = _tasks(X, n)
    o = np.lexsort((-score, N))
    lv, first = np.unique(N[o], return_index=True)
    rep = o[first]
    pos = np.minimum(np.searchsorted(lv, NX), lv.size - 1)
    has = lv[pos] == NX
    if MODE == "rep":
        jj = np.where(inside, j, np.where(has, rep[pos], src))
    elif MODE == "drop":
        jj = np.where(inside, j, src)
    else:
        from scipy.spatial import cKDTree
        cut = ~inside
        w = int(W[:, 0].max() + X[:, 0].max()) + X.shape[1]
        tree = cKDTree(np.column_stack([_qvec(W, n, w), 1000.0 * N]))
        _, nb = tree.query(np.column_stack([_qvec(X[cut], n, w), 1000.0 * NX[cut]]))
        jj = j.copy()
        jj[cut] = nb
    if SOLVER == "iad":
        pi = _iad(src, jj, r, N, m, score)
    elif SOLVER == "lr":
        pi = level_reduction(src, jj, r, N, m)
    else:
        pi = _iterative(src, jj, r, m, score)
    cut = ~inside
    return pi, src[cut], X[cut], r[cut]


SOLVER = "gmres"
STATS = {}


def _iad(src, dst, rate, S, m, x0, tol=1e-13, sweeps=8, max_iter=20000):
    keep = src != dst
    src, dst, rate = src[keep], dst[keep], rate[keep]
    out = np.bincount(src, rate, minlength=m)
    dS = S[dst] - S[src]
    up = np.bincount(src[dS > 0], rate[dS > 0], minlength=m)
    down = np.bincount(src[dS < 0], rate[dS < 0], minlength=m)
    GT = sp.csr_matrix((np.concatenate([rate, -out]), (np.concatenate([dst, np.arange(m)]),
                        np.concatenate([src, np.arange(m)]))), shape=(m, m))
    S = S - S.min()
    M = int(S.max()) + 1
    pi = x0 / x0.sum()
    if m == 1:
        return np.ones(1)
    rate = 1.02 * out.max()
    for it in range(max_iter):
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
    STATS.setdefault("it", []).append(it)
    pi = np.clip(pi, 0.0, None)
    return pi / pi.sum()
import scipy.sparse.linalg as spla


def _iterative(src, dst, rate, m, x0):
    keep = src != dst
    src, dst, rate = src[keep], dst[keep], rate[keep]
    out = np.bincount(src, rate, minlength=m)
    GT = sp.csr_matrix((np.concatenate([rate, -out]), (np.concatenate([dst, np.arange(m)]),
                        np.concatenate([src, np.arange(m)]))), shape=(m, m))
    j0 = int(np.argmax(x0))
    x0 = x0 / x0[j0]
    ks = np.ones(m, bool); ks[j0] = False
    M = GT[ks][:, ks].tocsc()
    rhs = -np.asarray(GT[ks][:, [j0]].todense()).ravel()
    t = time.perf_counter()
    ilu = spla.spilu(M, drop_tol=DROP, fill_factor=FILL)
    t1 = time.perf_counter()
    P = spla.LinearOperator(M.shape, ilu.solve)
    it = [0]
    x, info = spla.gmres(M, rhs, x0=x0[ks], M=P, rtol=1e-12, atol=0.0, restart=50, maxiter=100,
                         callback=lambda r: it.__setitem__(0, it[0] + 1), callback_type="pr_norm")
    res = np.linalg.norm(M @ x - rhs) / np.linalg.norm(rhs)
    if 0: print(f"   ilu {t1-t:.2f}s nnz {ilu.nnz} gmres {time.perf_counter()-t1:.2f}s it {it[0]} info {info} res {res:.2g}", flush=True)
    pi = np.empty(m); pi[ks] = x; pi[j0] = 1.0
    pi = np.maximum(pi, 0)
    return pi / pi.sum()

DROP, FILL = 1e-4, 10


def fsp(n, lam, law, theta, verbose=True, bfs_theta=None, W=None):
    bfs_theta = theta if bfs_theta is None else bfs_theta
    a = np.arange(n + 1)
    T = np.zeros(n + 1)
    for d, pd in enumerate(law.pmf.tolist()):
        if pd > 0:
            T += pd * np.array([math.comb(int(x), d + 1) for x in a]) / math.comb(n, d + 1)
    T[n] = 1.0
    lamn = n * lam
    ref = finite_n.refined(lam, law)
    if W is None:
        c = np.round(n * ref.q[1:]).astype(np.int64)
        c = c[c > 0]
        s = int(np.sum(c >= n))
        p = c[s:]
        W = _room(np.concatenate([[s], p, [0]])[None, :].astype(np.int64))
    score = np.ones(W.shape[0])
    tsolve = 0
    for rnd in range(500):
        t = time.perf_counter()
        pi, src, X, r = _solve(W, n, lamn, T, score)
        tsolve += time.perf_counter() - t
        f, inv = _unique(X)
        U = X[f]
        est = np.bincount(inv, pi[src] * r, minlength=U.shape[0]) / (lamn + np.where(U[:, 0] >= 1, n, U[:, 1]))
        add = est > theta
        if verbose:
            N = _tasks(W, n)
            bs = np.bincount(N - N.min())
            print(rnd, W.shape, "maxblock", bs.max(), "sum b^3 %.2g" % (bs.astype(float) ** 3).sum(),
                  f"t {tsolve:.2f}", "frontier %.3g" % est.sum(), add.sum(), flush=True)
        if not add.any():
            break
        new, nest = [U[add]], [est[add]]
        wave, we = U[add], est[add]
        seen = _Index(_width(np.concatenate([_width(W, U.shape[1]), wave]), U.shape[1]))
        for _ in range(100):
            wave = _room(wave)
            s2, X2, r2 = _moves(wave, n, lamn, T)
            w = X2.shape[1]
            if seen.W.shape[1] < w:
                seen = _Index(_width(seen.W, w))
            ok = seen.lookup(X2) < 0
            s2, X2, r2 = s2[ok], X2[ok], r2[ok]
            if not s2.size:
                break
            f2, inv2 = _unique(X2)
            Z = X2[f2]
            e = np.bincount(inv2, we[s2] * r2, minlength=Z.shape[0]) / (lamn + np.where(Z[:, 0] >= 1, n, Z[:, 1]))
            k = e > bfs_theta
            if not k.any():
                break
            wave, we = Z[k], e[k]
            new.append(wave); nest.append(we)
            seen = _Index(np.concatenate([seen.W, wave]))
        w = max(W.shape[1], max(x.shape[1] for x in new))
        W = _room(np.concatenate([_width(W, w)] + [_width(x, w) for x in new]))
        score = np.concatenate([pi] + nest)

    N = _tasks(W, n)
    R = pi @ N / lamn
    return W, pi, R, est.sum(), ref, tsolve


if __name__ == "__main__":
    n, lam, d, th = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    MODE = sys.argv[6]; SOLVER = sys.argv[7]
    bt = float(sys.argv[5]) if len(sys.argv) > 5 else None
    t = time.perf_counter()
    W, pi, R, fr, ref, ts = fsp(n, lam, D.point(d), th, bfs_theta=bt)
    print("n", n, "states", W.shape, "R %.14f" % R, "y", n * (R - ref.response_time), "Rv", ref.response_time_v,
          "frontier", fr, "time", time.perf_counter() - t, "solve", ts)
