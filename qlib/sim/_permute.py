"""Servers of positions under a resampled placement, computed rather than stored.

Used by :mod:`qlib.sim.uniformized` for ``mu > 0``; the model is
:func:`~qlib.sim.run.simulate`'s: servers sit on positions by a
permutation, redrawn at the epochs of a Poisson process of total rate
``mu`` (epoch 0 is the identity), and ``mu = inf`` means a fresh uniform
permutation before every arrival.

* ``mu = inf`` (``_fresh``): an arrival sees only the servers of the
  positions it looks at, and under a fresh uniform permutation these are
  *distinct uniform servers* (one per distinct position): they are drawn
  so, by rejection from a counter-mode stream, with no permutation at all.
  This is exact in law (to the ``n / 2**64`` bias of a multiply-shift draw).
* ``0 < mu < inf`` (``_feistel``): epoch ``e``'s permutation is a keyed
  bijection of ``0..n-1``: a Feistel network of 6 rounds (more for ``n < 256``: ``feistel_params``) on the
  mixed-radix domain ``Z_a × Z_b`` (``b = 2**h`` about ``sqrt(n)``, ``a =
  ceil(n / b)``; a round maps ``(L, R)`` in ``Z_p × Z_q`` to ``(R, L +
  F(R) mod p)`` in ``Z_q × Z_p``, ``F`` SplitMix64's mixer of ``R`` and a
  round key drawn per epoch), restricted to ``0..n-1`` by cycle walking (the
  domain exceeds ``n`` by less than ``b``).  A position's server costs a
  few multiplications and no memory, so the servers of a step far ahead
  are known and their cache lines can be requested.  **The approximation:**
  a keyed Feistel permutation is a *pseudo-random* permutation, not a
  uniform one (its law on the ``n!`` permutations is that of a few
  hashed round functions).  What the queues see of it -- the servers of
  the few positions an arrival looks at, and which arrivals of an epoch
  share a server -- is measured against the exact tiny-graph chains at
  ``mu = 1, 10`` and against the stored-permutation kernel on the book's
  graphs (``tests/test_resampled_fast.py``), and the law of the
  permutation itself against the uniform law on ``S_n`` for ``n <= 6``.
"""
from __future__ import annotations

import numba
import numpy as np

from qlib.sim._compact import _GOLD, _ONE, _mix, _mul128

__all__ = []

_S64 = np.uint64(64)


def feistel_params(n: int) -> tuple[int, int, int]:
    """``(h, a, rounds)``: the domain ``Z_a × Z_{2**h}`` of the Feistel
    network on ``0..n-1`` (``2**h`` about ``sqrt(n)``, at least 2; ``a =
    ceil(n / 2**h)``) and its number of rounds, even: 6 from ``h = 4`` (``n
    >= 256``) on, more where the halves are a few bits wide (24 at ``h =
    1``, ``n < 16``), where a round moves little (at 6 rounds the law of the
    permutation on ``S_5`` is 0.13 in total variation from uniform, at 24
    indistinguishable from it in 4e5 draws)."""
    h = max(1, (max(n, 2).bit_length() - 1) // 2)
    return h, -(-n // 2**h), max(6, 2 * (-(-12 // h)))


@numba.njit(cache=True, inline="always")
def _round_keys(kP, gP, e, rk):
    """The round keys of epoch ``e`` (``e >= 1``) into ``rk``: SplitMix64 in
    counter mode, ``mix(kP + (e R + i) gP)`` for round ``i`` of ``R``."""
    R = np.uint64(rk.shape[0])
    base = kP + np.uint64(e) * R * gP
    for i in range(rk.shape[0]):
        rk[i] = _mix(base + np.uint64(i) * gP)


@numba.njit(cache=True, inline="always")
def _network(x, h, bm, a, rk):
    """One pass of the Feistel network over ``x < a 2**h``."""
    L = x >> h              # in Z_a
    R = x & bm              # in Z_b
    sh = _S64 - h
    for i in range(0, rk.shape[0], 2):
        # (L in Z_a, R in Z_b) -> (R, L + F(R) mod a) in Z_b × Z_a
        f, lo = _mul128(_mix(R + rk[i]), a)
        t = L + f
        if t >= a:
            t -= a
        L = R
        R = t
        # (L in Z_b, R in Z_a) -> (R, L + F(R) mod b) in Z_a × Z_b
        f = _mix(R + rk[i + 1]) >> sh
        t = (L + f) & bm
        L = R
        R = t
    return (L << h) | R


@numba.njit(cache=True, inline="always")
def _feistel(x, n, h, bm, a, rk):
    """Server at position ``x`` under the epoch's permutation (round keys
    ``rk``): the network, walked along its cycle until it lands in
    ``0..n-1`` (a bijection of ``0..n-1``, since the network is one of
    ``0..a 2**h - 1``)."""
    y = _network(x, h, bm, a, rk)
    while y >= n:
        y = _network(y, h, bm, a, rk)
    return y


@numba.njit(cache=True, inline="always")
def _fresh(pos, srv, cnt, n, u):
    """``mu = inf``: servers ``srv[:cnt]`` of the looked positions
    ``pos[:cnt]`` under a fresh uniform permutation: a position met before
    keeps its server, each new one gets a uniform server not yet taken (by
    rejection from SplitMix64 seeded with the step's draw ``u``)."""
    j = np.uint64(0)
    for p in range(cnt):
        w = pos[p]
        s = n
        for q in range(p):
            if pos[q] == w:
                s = srv[q]
                break
        if s == n:
            while True:
                j += _ONE
                s, lo = _mul128(_mix(u + j * _GOLD), n)
                new = True
                for q in range(p):
                    new &= srv[q] != s
                if new:
                    break
        srv[p] = s


@numba.njit(cache=True)
def _permutation(n, h, a, kP, gP, e, nrounds):
    """Epoch ``e``'s whole permutation (the server of each position; epoch
    0 the identity), for the tests and the measurement of its law."""
    out = np.empty(n, np.int64)
    if e == 0:
        for x in range(n):
            out[x] = x
        return out
    rk = np.empty(nrounds, np.uint64)
    _round_keys(kP, gP, e, rk)
    hh = np.uint64(h)
    bm = (_ONE << hh) - _ONE
    for x in range(n):
        out[x] = np.int64(_feistel(np.uint64(x), np.uint64(n), hh, bm, np.uint64(a), rk))
    return out
