"""Servers of positions under a resampled placement: a lazily revealed uniform permutation.

Used by :mod:`qlib.sim.uniformized` for ``mu > 0``; the model is
:func:`~qlib.sim.run.simulate`'s: servers sit on positions by a
permutation, redrawn uniformly at the epochs of a Poisson process of total
rate ``mu`` (epoch 0 is the identity), and ``mu = inf`` means a fresh
uniform permutation before every arrival.

* ``mu = inf`` (``_fresh``): an arrival sees only the servers of the
  positions it looks at, and under a fresh uniform permutation these are
  *distinct uniform servers* (one per distinct position): they are drawn
  so, by rejection from a counter-mode stream, with no permutation at all.
* ``0 < mu < inf`` (``_reveal``): epoch ``e``'s permutation is revealed
  one position at a time, where an arrival looks.  Position ``x`` holds
  ``pw[x] = (stamp << 32) | server``, the server it got in the epoch whose
  stamp it bears; server ``c`` holds ``tk[c]``, the stamp of the last
  epoch that gave it a position, in one 8-byte record with its queue
  length (``X`` and ``tk`` are the two columns of an ``(n, 2)`` ``uint32``
  array), so that the check reads the cache line the shortest-queue
  decision reads anyway.  A position not yet stamped this epoch
  takes the next *candidate*, a uniform server, if that server is not yet
  taken this epoch, and draws again otherwise: the server it gets is
  uniform over the servers no position has yet this epoch, which is how a
  uniform permutation is revealed one position at a time (given the
  revealed pairs, the rest is a uniform bijection between the remaining
  positions and servers), whatever the order of the looks, since which
  positions are looked at does not depend on the permutation.  **Exact in
  law** (to the ``n / 2**64`` bias of a multiply-shift draw).  A look is new
  with probability ``1 - f`` (``f`` the share of positions revealed this
  epoch) and then needs ``1 / (1 - f)`` draws on average, about one draw
  per look; an epoch that reveals all ``n`` positions draws ``n H_n`` times.
  The candidates are i.i.d. uniform and independent of everything else, so
  they are drawn ahead into a ring (``fifo``, candidate ``i`` in slot ``i
  mod fifo.size``) and their records' cache lines requested when they
  enter it; every decision is made when the look runs, on the state as it is
  then.  A resampling is a new stamp (``_next_stamp``); the stamps are
  ``uint32``, cleared (``O(n)``) once every ``wrap`` epochs (``2**32 - 1``;
  the tests pass a small one), so that a stamp never matches an older
  epoch's.
"""
from __future__ import annotations

import numba
import numpy as np

from qlib.sim._compact import _GOLD, _ONE, _ZERO, _mix, _mul128
from qlib.sim._loop import _prefetch

__all__ = []

_S32 = np.uint64(32)
_LO32 = np.uint64(0xFFFFFFFF)
#: Epochs between two clearings of the stamps (the largest ``uint32`` stamp).
WRAP = 2**32 - 1


@numba.njit(cache=True, inline="always")
def _cand(i, n, kC, gC):
    """Candidate ``i``: a uniform server of ``0..n-1`` (counter mode)."""
    s, lo = _mul128(_mix(kC + np.uint64(i) * gC), n)
    return s


@numba.njit(cache=True, inline="always")
def _fill_fifo(fifo, ci, n, kC, gC, X, tk, pf):
    """Candidates ``ci .. ci + fifo.size - 1`` into their slots (their lines
    requested with ``pf``)."""
    F = fifo.shape[0]
    fm = np.uint64(F - 1)
    for i in range(F):
        j = ci + np.uint64(i)
        c = _cand(j, n, kC, gC)
        fifo[j & fm] = c
        if pf:
            _prefetch(X, c)      # the queue and, beside it, the taken-stamp


@numba.njit(cache=True, inline="always")
def _reveal(x, es, pw, tk, fifo, ci, n, kC, gC, X, pf):
    """Server at position ``x`` in the epoch of stamp ``es >= 1``, revealed
    now if ``x`` has none this epoch (candidates from ``ci`` on, until one
    is untaken).  Returns the server and the next candidate's index."""
    w = pw[x]
    if (w >> _S32) == es:
        return w & _LO32, ci
    F = np.uint64(fifo.shape[0])
    fm = F - _ONE
    while True:
        j = ci & fm
        c = fifo[j]
        nxt = _cand(ci + F, n, kC, gC)   # the slot's next candidate, F ahead
        fifo[j] = nxt
        if pf:
            _prefetch(X, nxt)
        ci += _ONE
        if np.uint64(tk[c]) != es:
            break
    tk[c] = es
    pw[x] = (es << _S32) | c
    return c, ci


@numba.njit(cache=True)
def _next_stamp(es, wrap, pw, tk):
    """The stamp of the next epoch after stamp ``es`` (0: epoch 0, the
    identity); past ``wrap`` every stamp is cleared and the count starts
    again at 1."""
    if es >= wrap:
        pw[:] = 0
        tk[:] = 0
        return _ONE
    return es + _ONE


def stamp_of(ep: int, wrap: int = WRAP) -> int:
    """The stamp of epoch ``ep`` (0 for epoch 0, the identity; then ``1 ..
    wrap`` in turn), as ``_next_stamp`` counts them."""
    return 0 if ep == 0 else (ep - 1) % wrap + 1


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


@numba.njit(cache=True)
def _reveal_orders(n, orders, wrap, kC, gC, F):
    """For the tests: epoch ``e = 1, 2, ...`` reveals positions in the order
    ``orders[e - 1]`` (a row may stop early with ``-1``) through
    ``_reveal``, as the kernel does; row ``e - 1`` of the result holds the
    servers revealed (``-1`` where a position was not looked at)."""
    Y = np.zeros((n, 2), np.uint32)     # the kernel's records: queue, taken-stamp
    X, tk = Y[:, 0], Y[:, 1]
    pw = np.zeros(n, np.uint64)
    fifo = np.zeros(F, np.uint64)
    ci = _ZERO
    nn = np.uint64(n)
    _fill_fifo(fifo, ci, nn, kC, gC, X, tk, False)
    out = np.full((orders.shape[0], n), -1, np.int64)
    es = _ZERO
    for e in range(orders.shape[0]):
        es = _next_stamp(es, np.uint64(wrap), pw, tk)
        for p in range(orders.shape[1]):
            x = orders[e, p]
            if x < 0:
                break
            c, ci = _reveal(np.uint64(x), es, pw, tk, fifo, ci, nn, kC, gC, X, False)
            out[e, x] = np.int64(c)
    return out
