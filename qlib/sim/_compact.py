"""The fast path's compact pieces: counter-mode random words and neighbours computed from a position.

Used by :mod:`qlib.sim.uniformized`, whose module notes describe the method.

The fast path near the hardware:

* the state is the queue lengths alone, ``uint8`` (1 byte per server); a
  queue that reaches the top of the tracked levels stops the kernel, which
  then grows the levels and, past 255 (65 535), widens the state to
  ``uint16`` (``uint32``): a queue length never wraps;
* ring, 2-D torus and complete-graph neighbours are computed, not read (any
  other graph is read from its CSR arrays); on an
  :class:`~qlib.graphs.ImplicitGraph` (``graphs.ring(n, implicit=True)``
  and the like) no adjacency arrays exist at all, and a run holds one byte
  per server while it runs (five at its end, with the ``int32`` final
  queues);
* every random number is a function of the step index (SplitMix64 in counter
  mode: step ``k`` uses ``mix(key + k γ)``, with key and odd increment ``γ``
  drawn from the seed's ``numpy.random.SeedSequence``), so what a step draws
  never depends on the state; from ``n = 2**17`` on the kernel draws 64
  steps ahead and asks for the cache line of each future server, so that
  the memory misses of that many steps overlap;
* one 64-bit draw ``r`` per step: the 128-bit product ``r n`` gives the
  server (its high word, uniform on ``0..n-1``) and the kind of step (its
  low word, a uniform fraction, against ``2**64 λ / (λ + 1)``); given both,
  ``r`` ranges over about ``2**64 / n`` consecutive integers, so its low bits
  are uniform and independent of them: bits 0-1 pick the ring or torus
  neighbour, bit 2 breaks a two-way tie.  A second counter stream (same
  step index) draws the one neighbour of a CSR or complete graph and
  breaks ties of three or more; ``k - 1 >= 2`` distinct neighbours are
  drawn by rejection from SplitMix64 seeded with that draw;
* a one-neighbour step is written without a branch on its kind: a
  potential departure compares a server with itself.
"""
from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)
_ZERO, _ONE, _TWO, _THREE, _FOUR = (np.uint64(0), np.uint64(1), np.uint64(2),
                                    np.uint64(3), np.uint64(4))
_RING, _TORUS, _CSR, _COMPLETE = 0, 1, 2, 3
_GOLD = np.uint64(0x9E3779B97F4A7C15)   # SplitMix64's increment: the sub-draws of a step


@numba.njit(cache=True, inline="always")
def _mix(z):
    """SplitMix64's output function (Steele, Lea and Flood 2014)."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@numba.njit(cache=True)
def _is_ring(indptr, indices, n):
    """Whether the CSR graph is the cycle ``s ~ s ± 1 (mod n)``, ``n >= 3``."""
    if n < 3:
        return False
    for s in range(n):
        if indptr[s] != 2 * s:
            return False
        a = np.int64(indices[2 * s])
        b = np.int64(indices[2 * s + 1])
        lo = s - 1 if s > 0 else n - 1
        hi = s + 1 if s < n - 1 else 0
        if not ((a == lo and b == hi) or (a == hi and b == lo)):
            return False
    return indptr[n] == 2 * n


@numba.njit(cache=True)
def _is_torus(indptr, indices, n, cols):
    """Whether the CSR graph is the ``(n / cols) × cols`` torus (``rows, cols >= 3``)."""
    if cols < 3 or n % cols != 0 or n // cols < 3 or indptr[n] != 4 * n:
        return False
    want = np.empty(4, np.int64)
    for s in range(n):
        if indptr[s] != 4 * s:
            return False
        c = s % cols
        want[0] = s - 1 if c > 0 else s + cols - 1
        want[1] = s + 1 if c < cols - 1 else s - cols + 1
        want[2] = s - cols if s >= cols else s + n - cols
        want[3] = s + cols if s + cols < n else s + cols - n
        for k in range(4):
            w = np.int64(indices[4 * s + k])
            if w != want[0] and w != want[1] and w != want[2] and w != want[3]:
                return False
    return True


@intrinsic
def _mul128(typingctx, a, b):
    """``(hi, lo)``: the 128-bit product of two ``uint64`` (one ``mul``).
    ``hi = floor(a b / 2**64)`` is uniform on ``0..b-1`` when ``a`` is a
    uniform 64-bit word (to within ``b / 2**64``) and ``lo / 2**64`` a
    uniform fraction independent of it."""
    if a != types.uint64 or b != types.uint64:
        return None
    sig = types.UniTuple(types.uint64, 2)(a, b)

    def codegen(context, builder, signature, args):
        i128 = ir.IntType(128)
        p = builder.mul(builder.zext(args[0], i128), builder.zext(args[1], i128))
        hi = builder.trunc(builder.lshr(p, ir.Constant(i128, 64)), ir.IntType(64))
        lo = builder.trunc(p, ir.IntType(64))
        return context.make_tuple(builder, signature.return_type, [hi, lo])
    return sig, codegen


@numba.njit(cache=True, inline="always")
def _torus_nbr(v, c, d, cols, n):
    """Neighbour ``d`` (0 left, 1 right, 2 up, 3 down) of position ``v`` in
    column ``c`` of the torus with ``cols`` columns (all ``uint64``)."""
    if d == _ZERO:
        return v - _ONE if c > _ZERO else v + cols - _ONE
    if d == _ONE:
        return v + _ONE if c < cols - _ONE else v - cols + _ONE
    if d == _TWO:
        return v - cols if v >= cols else v + n - cols
    return v + cols if v + cols < n else v + cols - n


@numba.njit(cache=True, inline="always")
def _nbr(mode, s, o, c, cols, n, nm1, indptr, indices, lo):
    """Neighbour number ``o`` of position ``s`` (``uint64``): computed for the
    ring (0: ``s - 1``, 1: ``s + 1``), the torus and the complete graph (the
    ``o``-th position other than ``s``), read from ``indices`` otherwise."""
    if mode == _RING:
        if o == _ZERO:
            return nm1 if s == _ZERO else s - _ONE
        return _ZERO if s == nm1 else s + _ONE
    if mode == _TORUS:
        return _torus_nbr(s, c, o, cols, n)
    if mode == _COMPLETE:
        return o + np.uint64(o >= s)
    return np.uint64(indices[lo + np.int64(o)])


@numba.njit(cache=True, inline="always")
def _scan(X, w, bx, nt, cand):
    """One candidate ``w`` of the shortest-queue scan: ``bx`` the shortest
    queue so far, ``cand[:nt]`` the servers holding it."""
    xw = np.int64(X[w])
    if xw < bx:
        cand[0] = w
        return xw, 1
    if xw == bx:
        cand[nt] = w
        return bx, nt + 1
    return bx, nt


@numba.njit(cache=True)
def _counts(X, K):
    """``Q[i]``, the number of servers holding at least ``i`` tasks, ``i =
    0..K`` (a loop: ``np.bincount`` would cast ``X`` to 8 bytes per server)."""
    Q = np.zeros(K + 1, np.int64)
    for s in range(X.shape[0]):
        Q[min(np.int64(X[s]), K)] += 1
    for i in range(K - 1, -1, -1):
        Q[i] += Q[i + 1]
    return Q
