"""Hashed row indices, padding and de-duplication for the integer state rows of adaptive truncations."""
from __future__ import annotations

import numpy as np

__all__ = []

_MULT = None


def _mult(D):
    global _MULT
    if _MULT is None or _MULT.size < D:
        rng = np.random.default_rng(20261203)
        _MULT = rng.integers(1, 2 ** 62, size=max(D, 64), dtype=np.int64) | 1
    return _MULT[:D]


def _keys(W):
    with np.errstate(over="ignore"):
        return (W * _mult(W.shape[1])[None, :]).sum(axis=1)


class _Index:
    """Exact row lookup through a 64-bit hash, verified row by row."""

    def __init__(self, W):
        self.W = W
        k = _keys(W)
        self.order = np.argsort(k, kind="stable")
        self.skey = k[self.order]
        if np.any(self.skey[1:] == self.skey[:-1]):
            raise RuntimeError("hash collision in the state index")

    def lookup(self, T):
        """Row number of each row of ``T`` in the set, ``-1`` if absent."""
        m = self.W.shape[0]
        if m == 0 or T.shape[0] == 0:
            return np.full(T.shape[0], -1)
        k = _keys(T)
        pos = np.minimum(np.searchsorted(self.skey, k), m - 1)
        j = self.order[pos]
        ok = self.skey[pos] == k
        ok[ok] = np.all(self.W[j[ok]] == T[ok], axis=1)
        return np.where(ok, j, -1)


def _pad(W, D):
    if W.shape[1] - 1 >= D:
        return W
    return np.concatenate([W, np.zeros((W.shape[0], D + 1 - W.shape[1]), W.dtype)], axis=1)


def _unique_rows(T):
    k = _keys(T)
    _, first, inv = np.unique(k, return_index=True, return_inverse=True)
    return first, inv.ravel()
