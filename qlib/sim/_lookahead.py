"""The servers a step of the resampled fast path looks at, found when the step is drawn.

Helpers of :func:`qlib.sim.uniformized.simulate_uniformized` under a resampled
placement (``0 < mu <= inf``): a step drawn ahead knows its arrival's looked
positions (the position itself, then every neighbour or ``choices - 1``
distinct ones), so the cache lines that will tell their servers are
requested ahead, as the static fast path does for its queues.

Resampled placements (``mu > 0``): the uniformization rate is ``Λ = n (λ +
1) + μ`` (``μ`` finite), and a step whose fraction falls in the top ``μ /
Λ`` is a resampling epoch.  The positions an arrival looks at are found
when its step is drawn, 64 steps ahead at large ``n``.  Under ``mu = inf``
their servers are distinct uniform servers, drawn then (exact in law), and
their cache lines requested.  Under finite ``mu`` the servers are those of
the epoch's lazily revealed uniform permutation (``qlib.sim._permute``),
which only the state when the step runs can say: the head requests the
lines of the positions' entries ``pw``; half-way (``buf.size / 2`` steps
ahead) the kernel reads those entries and requests the queue line of each
server already revealed in the current epoch; a position still new takes
candidates whose lines were requested when they were drawn.  These
requests are hints: every server is decided when the step runs.

In the kernel ``uniformized._run`` (``rmode`` 1: ``0 < mu < inf``, 2: ``mu = inf``;
0: static): step ``k`` is a resampling epoch if ``f >= T2`` (``pk[6]``,
``rmode`` 1), a potential departure if ``T <= f < T2``; an arrival's looked
positions (``rmode`` 1) or servers (``rmode`` 2) are found when the step is
drawn, ``buf.size`` steps ahead (with ``buf.size == 1``, when the step
runs), into row ``k mod 2 buf.size`` of ``sv`` (their count in its last
column, 0 for a step that is not an arrival).  ``st[_EP]`` counts the
epochs run, ``st[_CI]`` the candidates drawn.
"""
from __future__ import annotations

import numba
import numpy as np

from qlib.sim._compact import _COMPLETE, _CSR, _GOLD, _ONE, _RING, _TORUS, _ZERO, _mix, _mul128, _nbr
from qlib.sim._loop import _prefetch
from qlib.sim._permute import _LO32, _S32, _fresh


@numba.njit(cache=True, inline="always")
def _head(j, r, s, f, X, T, mode, cols, ch, indptr, indices, pick, rmode, pk, sv, pw, keys,
          n, nm1, mask2, pf, es):
    """Step ``j``, drawn ahead (``r``; position or server ``s``, fraction
    ``f``) under a resampled placement: an arrival's looked positions or
    servers are found (``_servers``); a potential departure's line is
    requested; a step that is not an arrival leaves a count of 0 in its row."""
    if f >= T:
        sv[j & mask2, sv.shape[1] - 1] = _ZERO
        if pf and not (rmode == 1 and f >= pk[6]):
            _prefetch(X, s)
        return
    _servers(j, s, X, mode, cols, ch, indptr, indices, pick, rmode, pk, sv, pw, keys, n, nm1,
             mask2, pf, es)


@numba.njit(cache=True, inline="always")
def _servers(j, s, X, mode, cols, ch, indptr, indices, pick, rmode, pk, sv, pw, keys, n, nm1,
             mask2, pf, es):
    """The positions (``rmode`` 1) or servers (``rmode`` 2) an arrival at
    position ``s`` in step ``j`` looks at, into row ``j mod 2D`` of ``sv``
    (their count last); with ``pf``, the lines of their entries in ``pw``
    (``rmode`` 1; their queues in epoch 0, of stamp ``es = 0``, the
    identity) or their queues (``rmode`` 2) are requested."""
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
    sv[row, 0] = s
    if m == dg:
        for p in range(dg):
            sv[row, p + 1] = _nbr(mode, s, np.uint64(p), c, cols, n, nm1, indptr, indices, lo)
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
            sv[row, p + 1] = _nbr(mode, s, o, c, cols, n, nm1, indptr, indices, lo)
    if pf:                  # epoch 0 (the identity): the queues; else the positions' entries
        for p in range(cnt):
            if es == _ZERO:
                _prefetch(X, sv[row, p])
            else:
                _prefetch(pw, sv[row, p])
    sv[row, sv.shape[1] - 1] = np.uint64(cnt)


@numba.njit(cache=True, inline="always")
def _hint(row, es, X, sv, pw):
    """Request the queue line of each server already revealed, in the
    epoch of stamp ``es``, at the positions of row ``row`` of ``sv`` (a
    hint: the step decides when it runs)."""
    for p in range(np.int64(sv[row, sv.shape[1] - 1])):
        w = pw[sv[row, p]]
        if (w >> _S32) == es:
            _prefetch(X, w & _LO32)
