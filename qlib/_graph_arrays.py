"""Array helpers of the graph builders: distinct keys, random pairings of half-edges, and their repair into simple graphs."""
from __future__ import annotations

import numpy as np


def _unique(x):
    """``np.unique(x)`` of a 1-D integer array (the sorted distinct values),
    by one sort: numpy 2's hash-based ``unique`` is about 20 times slower on
    the keys of a large graph (the ring at n = 10**7 spent a minute in it)."""
    s = np.sort(x)
    if s.size > 1:
        keep = np.empty(s.size, bool)
        keep[0] = True
        np.not_equal(s[1:], s[:-1], out=keep[1:])
        s = s[keep]
    return s


def _rng(seed):
    return np.random.default_rng(seed)


def _pair_stubs(deg, rng):
    stubs = np.repeat(np.arange(deg.size, dtype=np.int64), deg)
    rng.shuffle(stubs)
    if stubs.size % 2:
        stubs = stubs[:-1]
    return stubs[0::2], stubs[1::2]


def _switch_to_simple(n, a, b, rng, max_switches=None):
    """Make a pairing simple by double-edge switches that keep the degrees:
    a self-loop or repeated edge ``{u, v}`` and a uniform other edge
    ``{x, y}`` (oriented at random) become ``{u, x}, {v, y}`` when neither
    is a loop or an existing edge."""
    lo, hi = np.minimum(a, b).astype(np.int64), np.maximum(a, b).astype(np.int64)
    m = lo.size
    count = {}
    for k in (lo * n + hi).tolist():
        count[k] = count.get(k, 0) + 1

    def bad(i):
        return lo[i] == hi[i] or count[int(lo[i] * n + hi[i])] > 1

    todo = [i for i in range(m) if bad(i)]
    budget = max_switches if max_switches is not None else 200 * (len(todo) + 10)
    while todo:
        budget -= 1
        if budget < 0:
            raise RuntimeError(f"random_regular: no simple graph after switching (n={n})")
        i = todo[-1]
        if not bad(i):
            todo.pop()
            continue
        j = int(rng.integers(m))
        u, v, x, y = int(lo[i]), int(hi[i]), int(lo[j]), int(hi[j])
        if rng.random() < 0.5:
            x, y = y, x
        k1, k2 = min(u, x) * n + max(u, x), min(v, y) * n + max(v, y)
        if j == i or u == x or v == y or k1 == k2 or count.get(k1, 0) or count.get(k2, 0):
            continue
        for k in (int(lo[i] * n + hi[i]), int(lo[j] * n + hi[j])):
            count[k] -= 1
        count[k1] = count.get(k1, 0) + 1
        count[k2] = count.get(k2, 0) + 1
        lo[i], hi[i], lo[j], hi[j] = min(u, x), max(u, x), min(v, y), max(v, y)
        todo.pop()
        todo.append(j)                        # was it bad? rechecked at the top
    assert np.all(lo != hi) and _unique(lo * n + hi).size == m
    return lo, hi
