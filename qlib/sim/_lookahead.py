"""The servers a step of the resampled fast path looks at, found when the step is drawn.

Helpers of :func:`qlib.sim.uniformized.simulate_uniformized` under a resampled
placement (``0 < mu <= inf``): a step drawn ahead knows its resampling epoch, so
its arrival's looked positions (the position itself, then every neighbour or
``choices - 1`` distinct ones) are mapped to servers through that epoch's
permutation (:mod:`qlib.sim._permute`) and their cache lines requested, as the
static fast path does.

Resampled placements (``mu > 0``): the uniformization rate is ``Λ = n (λ +
1) + μ`` (``μ`` finite), and a step whose fraction falls in the top ``μ /
Λ`` is a resampling epoch.  The servers of the positions an arrival looks
at are found when its step is drawn, 64 steps ahead at large ``n`` (the
epoch there is known: the epochs are steps too), and their cache lines are
requested then: under ``mu = inf`` they are distinct uniform servers (exact
in law), under finite ``mu`` the images of the positions under the epoch's
keyed Feistel permutation (``qlib.sim._permute``; a pseudo-random
permutation, the approximation named and measured there).  The state stays
the one byte per server; the permutation is computed, not stored.

In the kernel ``uniformized._run`` (``rmode`` 1: ``0 < mu < inf``, 2: ``mu = inf``;
0: static): step ``k`` is a resampling epoch if ``f >= T2`` (``pk[6]``,
``rmode`` 1), a potential departure if ``T <= f < T2``; the servers an
arrival looks at are found when the step is drawn, ``buf.size`` steps
ahead (the epoch at the head of the draws is known there; with
``buf.size == 1``, when the step runs), into row ``k mod 2 buf.size``
of ``sv`` (their count in its last column), and their lines are
requested: ``rmode`` 1 maps the looked positions
through the head epoch's Feistel permutation (``qlib.sim._permute``;
round functions drawn as tables into ``tab``, epoch 0 the identity), ``rmode`` 2 draws distinct
uniform servers.  ``st[_EP]`` counts the epochs run.
"""
from __future__ import annotations

import numba
import numpy as np

from qlib.sim._compact import _COMPLETE, _CSR, _GOLD, _ONE, _RING, _TORUS, _ZERO, _mix, _mul128, _nbr
from qlib.sim._permute import _feistel, _feistel3, _fresh, _tables
from qlib.sim.kernel import _prefetch


@numba.njit(cache=True, inline="always")
def _head(j, r, s, f, eh, X, T, mode, cols, ch, indptr, indices, pick, rmode, pk, tab, sv,
          pos, keys, n, nm1, mask2, pf):
    """Step ``j``, drawn ahead (``r``; position or server ``s``, fraction
    ``f``) under a resampled placement: a resampling epoch moves the head's
    epoch ``eh`` on (and draws its round functions); an arrival's looked
    positions are mapped to their servers, stored in row ``j mod 2D`` of
    ``sv`` (their count last), and their lines requested; a potential
    departure's line is requested.  Returns the head's epoch."""
    if f >= T:
        if rmode == 1 and f >= pk[6]:
            eh += 1
            _tables(pk[0], pk[1], eh, tab, pk[5], _ONE << pk[4])
        elif pf:
            _prefetch(X, s)
        return eh
    _servers(j, s, eh, X, mode, cols, ch, indptr, indices, pick, rmode, pk, tab, sv, pos,
             keys, n, nm1, mask2, pf)
    return eh


@numba.njit(cache=True, inline="always")
def _servers(j, s, eh, X, mode, cols, ch, indptr, indices, pick, rmode, pk, tab, sv, pos,
             keys, n, nm1, mask2, pf):
    """The servers an arrival at position ``s`` in step ``j`` looks at, in
    epoch ``eh``, into row ``j mod 2D`` of ``sv`` (their count last); with
    ``pf``, their cache lines are requested."""
    # the looked positions: s, then every neighbour or m distinct uniform ones
    lo = 0
    c = _ZERO
    if mode == _CSR:
        lo = np.int64(indptr[s])
        dg = np.int64(indptr[s + _ONE]) - lo
    elif mode == _COMPLETE:
        dg = np.int64(nm1)
    else:
        dg = 2 if mode == _RING else 4
        if mode == _TORUS:
            c = s % cols
    m = dg if ch == 0 else min(ch - 1, dg)
    cnt = m + 1
    row = j & mask2
    if rmode == 2:
        # fresh placement: only how many positions are looked at matters
        _fresh(sv[row], cnt, n, _mix(pk[2] + np.uint64(j) * pk[3]))
        if pf:
            for p in range(cnt):
                _prefetch(X, sv[row, p])
        sv[row, sv.shape[1] - 1] = np.uint64(cnt)
        return
    pos[0] = s
    if m == dg:
        for p in range(dg):
            pos[p + 1] = _nbr(mode, s, np.uint64(p), c, cols, n, nm1, indptr, indices, lo)
    else:
        ub = _mix(keys[2] + np.uint64(j) * keys[3])
        q = 0
        for p in range(m):
            while True:
                q += 1
                o, lo2 = _mul128(_mix(ub + np.uint64(q) * _GOLD), np.uint64(dg))
                new = True
                for t in range(p):
                    new &= pick[t] != o
                if new:
                    break
            pick[p] = o
            pos[p + 1] = _nbr(mode, s, o, c, cols, n, nm1, indptr, indices, lo)
    if eh == 0:
        for p in range(cnt):
            sv[row, p] = pos[p]
    else:
        hh = pk[4]
        bm = (_ONE << hh) - _ONE
        if cnt == 3:
            sv[row, 0], sv[row, 1], sv[row, 2] = _feistel3(pos[0], pos[1], pos[2], n, hh, bm,
                                                           pk[5], tab)
        else:
            for p in range(cnt):
                sv[row, p] = _feistel(pos[p], n, hh, bm, pk[5], tab)
    if pf:
        for p in range(cnt):
            _prefetch(X, sv[row, p])
    sv[row, sv.shape[1] - 1] = np.uint64(cnt)
