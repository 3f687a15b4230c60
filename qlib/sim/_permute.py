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
  bijection of ``0..n-1``: a Feistel network of 4 rounds (more for ``n < 2**16``: ``feistel_params``) on the
  mixed-radix domain ``Z_a × Z_b`` (``b = 2**h`` about ``sqrt(n)``, ``a =
  ceil(n / b)``; a round maps ``(L, R)`` in ``Z_p × Z_q`` to ``(R, L +
  F(R) mod p)`` in ``Z_q × Z_p``), restricted to ``0..n-1`` by cycle
  walking (the domain exceeds ``n`` by less than ``b``).  The round
  functions ``F`` are tables of uniform entries drawn afresh at each epoch
  (``O(sqrt n)`` numbers; the permutation needs nothing else): truly
  random round functions, as in Luby and Rackoff's theorem.  A position's
  server costs a few table look-ups in the cache and no other memory, so
  the servers of a step far ahead are known and their cache lines can be
  requested.  **The approximation:**
  a Feistel permutation is a *pseudo-random* permutation, not a uniform
  one: its law on the ``n!`` permutations is the image of the law of a
  few random round functions (Luby and Rackoff bound how well ``q``
  queries can tell it from a uniform one, by about ``q**2 / b``, which says
  nothing at the sizes used here: the tests below are the measurement).  What the queues see of it -- the servers of
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

_S32 = np.uint64(32)
_LO32 = np.uint64(0xFFFFFFFF)


def feistel_params(n: int) -> tuple[int, int, int]:
    """``(h, a, rounds)``: the domain ``Z_a × Z_{2**h}`` of the Feistel
    network on ``0..n-1`` (``2**h`` about ``sqrt(n)``, at least 2; ``a =
    ceil(n / 2**h)``) and its number of rounds, even: 4 from ``h = 8``
    (``n >= 2**16``; Luby and Rackoff's strong pseudo-random permutation),
    6 for ``h = 4..7``, more where the halves are a few bits wide (24 at
    ``h = 1``, ``n < 16``), where a round moves little (at 6 rounds the law
    of the permutation on ``S_5`` is 0.13 in total variation from uniform,
    at 24 indistinguishable from it in 4e5 draws)."""
    h = max(1, (max(n, 2).bit_length() - 1) // 2)
    return h, -(-n // 2**h), 4 if h >= 8 else max(6, 2 * (-(-12 // h)))


@numba.njit(cache=True, inline="always")
def _tables(kP, gP, e, tab, a, b):
    """The round functions of epoch ``e >= 1``, drawn as tables: row ``i``
    of ``tab`` maps ``Z_b`` to ``Z_a`` (``i`` even) or ``Z_a`` to ``Z_b``
    (``i`` odd), each entry uniform to within ``p / 2**32`` (``1e-6`` at
    ``n = 10**7``; two entries from each word of SplitMix64 seeded with
    ``mix(kP + e gP)``, so an epoch's tables are a function of its number).  Truly
    random round functions: the setting of Luby and Rackoff."""
    z = _mix(kP + np.uint64(e) * gP)
    for i in range(tab.shape[0]):
        q, p = (b, a) if i % 2 == 0 else (a, b)
        for x in range(0, q, 2):
            # two entries per 64-bit word: each 32-bit half times p, shifted
            # (uniform on Z_p to within p / 2**32: p < 2**17 here, so 3e-5)
            z += _GOLD
            w = _mix(z)
            tab[i, x] = ((w & _LO32) * p) >> _S32
            if x + 1 < q:
                tab[i, x + 1] = ((w >> _S32) * p) >> _S32


@numba.njit(cache=True, inline="always")
def _network(x, h, bm, a, tab):
    """One pass of the Feistel network over ``x < a 2**h``."""
    L = x >> h              # in Z_a
    R = x & bm              # in Z_b
    for i in range(0, tab.shape[0], 2):
        # (L in Z_a, R in Z_b) -> (R, L + F(R) mod a) in Z_b × Z_a
        t = L + np.uint64(tab[i, R])
        if t >= a:
            t -= a
        L = R
        R = t
        # (L in Z_b, R in Z_a) -> (R, L + F(R) mod b) in Z_a × Z_b
        t = (L + np.uint64(tab[i + 1, R])) & bm
        L = R
        R = t
    return (L << h) | R


@numba.njit(cache=True, inline="always")
def _feistel(x, n, h, bm, a, tab):
    """Server at position ``x`` under the epoch's permutation (round
    functions ``tab``): the network, walked along its cycle until it lands
    in ``0..n-1`` (a bijection of ``0..n-1``, since the network is one of
    ``0..a 2**h - 1``)."""
    y = _network(x, h, bm, a, tab)
    while y >= n:
        y = _network(y, h, bm, a, tab)
    return y


@numba.njit(cache=True, inline="always")
def _feistel3(x0, x1, x2, n, h, bm, a, tab):
    """``_feistel`` of three positions at once (the ring's closed
    neighbourhood), round by round, so that their look-up chains overlap."""
    L0, R0 = x0 >> h, x0 & bm
    L1, R1 = x1 >> h, x1 & bm
    L2, R2 = x2 >> h, x2 & bm
    for i in range(0, tab.shape[0], 2):
        t0 = L0 + np.uint64(tab[i, R0])
        t1 = L1 + np.uint64(tab[i, R1])
        t2 = L2 + np.uint64(tab[i, R2])
        t0 = t0 - a if t0 >= a else t0
        t1 = t1 - a if t1 >= a else t1
        t2 = t2 - a if t2 >= a else t2
        L0, L1, L2 = R0, R1, R2
        R0 = (L0 + np.uint64(tab[i + 1, t0])) & bm
        R1 = (L1 + np.uint64(tab[i + 1, t1])) & bm
        R2 = (L2 + np.uint64(tab[i + 1, t2])) & bm
        L0, L1, L2 = t0, t1, t2
    y0, y1, y2 = (L0 << h) | R0, (L1 << h) | R1, (L2 << h) | R2
    while y0 >= n:          # cycle walking, rare: one at a time
        y0 = _network(y0, h, bm, a, tab)
    while y1 >= n:
        y1 = _network(y1, h, bm, a, tab)
    while y2 >= n:
        y2 = _network(y2, h, bm, a, tab)
    return y0, y1, y2


@numba.njit(cache=True, inline="always")
def _fresh(srv, cnt, n, u):
    """``mu = inf``: servers ``srv[:cnt]`` of ``cnt`` looked positions
    under a fresh uniform permutation: distinct uniform servers, drawn by
    rejection from SplitMix64 seeded with the step's draw ``u``.  The
    positions an arrival looks at are distinct (qlib's graphs are simple:
    no self-loops, no multi-edges), so each gets a server of its own."""
    j = np.uint64(0)
    for p in range(cnt):
        while True:
            j += _ONE
            s, lo = _mul128(_mix(u + j * _GOLD), n)
            new = True
            for q in range(p):
                new &= srv[q] != s
            if new:
                break
        srv[p] = s


def table_shape(n: int) -> tuple[tuple[int, int], type]:
    """Shape and dtype of the round-function tables for ``n`` positions:
    one row per round, ``max(a, 2**h)`` entries, ``uint16`` while the
    entries fit."""
    h, a, rounds = feistel_params(n)
    w = max(a, 2**h)
    return (rounds, w), (np.uint16 if w <= 2**16 else np.uint32)


@numba.njit(cache=True)
def _fill(n, h, a, kP, gP, e, tab, out):
    """``out``: epoch ``e``'s whole permutation (the server of each
    position; epoch 0 the identity)."""
    if e == 0:
        for x in range(n):
            out[x] = x
        return
    hh = np.uint64(h)
    b = _ONE << hh
    _tables(kP, gP, e, tab, np.uint64(a), b)
    for x in range(n):
        out[x] = np.int64(_feistel(np.uint64(x), np.uint64(n), hh, b - _ONE, np.uint64(a), tab))


def _permutation(n: int, kP: int, gP: int, e: int, rounds: int | None = None) -> np.ndarray:
    """Epoch ``e``'s whole permutation for the keys ``kP, gP`` (``rounds``:
    another number of rounds than ``feistel_params``'s), for the tests and
    the measurement of its law."""
    h, a, r = feistel_params(n)
    shape, dt = table_shape(n)
    tab = np.zeros((rounds or r, shape[1]), dt)
    out = np.empty(n, np.int64)
    _fill(n, h, a, np.uint64(kP), np.uint64(gP), e, tab, out)
    return out
