"""A uniformized fast path for static and resampled graphs: one cheap random draw per step, a compact state, batched memory look-ups.

The model is :func:`~qlib.sim.run.simulate`'s (at ``mu = 0`` the static
graph, server ``s`` at position ``s``; ``mu > 0``: see "Resampled
placements" below) with Exp(1) services, under two policies: a
task joins a shortest queue of its position's whole closed neighbourhood
(``choices=None``), or of its position and ``k - 1`` distinct uniformly
chosen neighbours (``choices=k``, all of them when the degree is below
``k``); ties are broken uniformly.

The chain is uniformized at the constant rate ``Λ = n (λ + 1)``: a step is
an arrival at a uniform position with probability ``λ / (λ + 1)``, else a
*potential departure* at a uniform server, real if it has a task (so from a
uniform busy server at total rate ``Q_1``, with no busy list).  Time advances
by the mean ``1 / Λ`` of the holding time at every step, so ``[0, t_end]``
holds ``N = round(Λ t_end)`` steps and a time average is the jump chain's step
average ``Σ_k f(X_k) / N``: the conditional expectation, given the jump chain,
of the exact time integral over its mean length (the holding times are i.i.d.
and independent of the states), unbiased at stationarity, with less variance.

Near the hardware (one byte of state per server, computed neighbours,
counter-mode random numbers, draws ahead): ``qlib.sim._compact``; resampled
placements, exact in law: ``qlib.sim._permute`` and ``qlib.sim._lookahead``.
"""
from __future__ import annotations

import time
from fractions import Fraction
from typing import TYPE_CHECKING, Union

import numba
import numpy as np

from qlib.sim._compact import (_COMPLETE, _CSR, _GOLD, _ONE, _RING, _TORUS, _TWO, _ZERO, _FOUR,
                               _THREE, _counts, _is_ring, _is_torus, _mix, _mul128,
                               _nbr, _scan, _torus_nbr)
from qlib.sim.kernel import _prefetch
from qlib.sim._permute import WRAP, _fill_fifo, _next_stamp, _reveal
from qlib.sim._lookahead import _head, _hint, _servers
from qlib.sim.result import UNIFORMIZED_STREAM, SimulationResult, _FINE, _batch_fields
from qlib import _validate as V
from qlib._feedback import compile_notice
from qlib.graphs import ImplicitGraph
from qlib.sim.start import (_as_graph, _check_args, _check_choices, _grow, _initial, _seed,
                            _tracked, _transient)

if TYPE_CHECKING:   # names for the annotations only
    import networkx as nx
    from qlib.graphs import Graph
Seed = Union[None, int, np.random.SeedSequence, np.random.Generator]

__all__ = ["simulate_uniformized", "graph_kind", "supports_resampled", "STATE_BYTES_PER_SERVER"]

#: Bytes per server of the fast path's state: a ``uint8`` queue length (widened past
#: 255); at finite ``mu > 0`` 16: queue and taken-stamp, a position's stamp and server.
STATE_BYTES_PER_SERVER = 1
#: Peak bytes per server on an implicit graph, with the ``int32`` final queues.
_PEAK_BYTES_PER_SERVER = 5
_PEAK_BYTES_RESAMPLED = 20

_AHEAD = 64                      # steps drawn ahead (cache lines requested) at large n
_AHEAD_FROM = 2**17              # from this n on (below, the state stays in the caches)
_FRESH_MAX = 64                  # mu = inf: at most this many looked positions (drawn by rejection)
_AHEAD_CELLS = 2**20             # mu > 0: at most this many positions kept ahead (8 MiB)
_FIFO = 256                      # 0 < mu < inf: candidate servers drawn ahead at large n
# st: steps done, segment, arrivals (departures follow from the tasks at both ends),
# resampling epochs, candidate servers drawn (0 < mu < inf)
_STEP, _SEG, _ARR, _EP, _CI = range(5)


def supports_resampled(n: int, look: int, mu: float) -> bool:
    """Whether :func:`simulate_uniformized` runs resampling rate ``mu`` when
    an arrival looks at up to ``look`` positions (its degree plus one, or
    ``choices``) of ``n``: always at ``mu = 0``; at ``mu = inf`` while
    ``look <= 64`` (distinct servers drawn by rejection, O(look²) each); at
    finite ``mu`` while ``2 D (look + 1)`` positions kept ahead fit in 8 MiB.

    Examples
    --------
    >>> from qlib.sim.uniformized import supports_resampled
    >>> supports_resampled(10**7, 3, 16.1), supports_resampled(1500, 1500, float("inf"))
    (True, False)
    """
    if mu == 0:
        return True
    if np.isinf(mu):
        return look <= _FRESH_MAX
    D = _AHEAD if n >= _AHEAD_FROM else 1
    return 2 * D * (look + 1) <= _AHEAD_CELLS


def graph_kind(graph: Graph | nx.Graph) -> tuple[str, int]:
    """How the fast path finds a graph's neighbours: computed or read.

    Parameters
    ----------
    graph : qlib.graphs.Graph or networkx.Graph
        The base graph.

    Returns
    -------
    tuple of (str, int)
        ``("ring", 0)`` for the cycle on ``n >= 3`` positions, ``("torus",
        cols)`` for a ``rows × cols`` torus as :func:`qlib.graphs.torus` builds
        it (``rows, cols >= 3``): neighbours computed; otherwise ``("csr", 0)``.

    Examples
    --------
    >>> from qlib import graphs
    >>> from qlib.sim.uniformized import graph_kind
    >>> graph_kind(graphs.ring(10)), graph_kind(graphs.torus(3, 5))
    (('ring', 0), ('torus', 5))
    >>> graph_kind(graphs.complete(4))
    ('csr', 0)
    """
    return _kind(_as_graph(graph, implicit_ok=True))


def _kind(graph):
    """:func:`graph_kind` of a :class:`~qlib.graphs.Graph` or
    :class:`~qlib.graphs.ImplicitGraph` (no conversion)."""
    if isinstance(graph, ImplicitGraph):
        return graph.kind, graph.cols
    n, indptr, indices = graph.n, graph.indptr, graph.indices
    if _is_ring(indptr, indices, n):
        return "ring", 0
    if n >= 9 and indptr[1] - indptr[0] == 4:
        cols = int(np.sort(indices[:4])[2])     # neighbours of 0: 1, cols-1, cols, n-cols
        if _is_torus(indptr, indices, n, cols):
            return "torus", cols
    return "csr", 0


@numba.njit(cache=True, nogil=True, _nrt=False)
def _run(X, Q, acc, dq, integ, rsum, rcnt, bnd, st, keys, T, mode, cols, ch,
         indptr, indices, cand, pick, buf, rmode, pk, sv, pw, tk, fifo):
    """Run the uniformized chain from step ``st[_STEP]`` to ``bnd[-1]``.

    Step ``k`` draws ``r = mix(kA + k gA)``; ``(s, f) = _mul128(r, n)``: an
    arrival at position ``s`` if ``f < T`` (``T = 2**64 λ / (λ + 1)``), else a
    potential departure at server ``s``; bits 0-1 of ``r`` pick the ring or
    torus neighbour, bit 2 breaks a two-way tie (uniform given ``s`` and the
    step's kind); the CSR neighbour and wider ties use ``mix(kB + k gB)``.
    With ``buf.size > 1`` the draws run that many steps ahead and their cache
    lines are requested (the draws do not depend on the state).

    Segment ``g`` covers steps ``bnd[g-1]+1 .. bnd[g]`` (segment 0, the
    burn-in, into the discarded row ``nfine`` of ``integ``; ``g >= 1`` into row
    ``g - 1``).  Over a segment ``(a, b]`` the sum of ``Q[i]`` is ``Q_i(a) (b -
    a) + Σ δ (b - k)`` over the changes ``δ = ±1`` of level ``i`` at steps
    ``k``, kept in ``acc`` and ``dq`` and folded in when the segment closes.
    Returns 0 at the end, 1 when a queue reached the top tracked level ``K =
    Q.size - 1`` (the caller grows the levels and calls again: every draw is
    a function of the step index, so the run is the same bit for bit).
    ``rmode`` 1: ``0 < mu < inf``, 2: ``mu = inf``, 0: static (``qlib.sim._lookahead``).
    """
    K = Q.shape[0] - 1
    n = np.uint64(X.shape[0])
    nm1 = n - _ONE
    nfine = integ.shape[0] - 1
    nseg = bnd.shape[0]
    D = buf.shape[0]
    mask = D - 1
    pf = D > 1
    kA, gA, kB, gB = keys[0], keys[1], keys[2], keys[3]
    k = st[_STEP]
    g = st[_SEG]
    arrivals = st[_ARR]
    ep = st[_EP]
    ci = np.uint64(st[_CI])                     # the next candidate server
    code = 0
    ring = pf
    mask2 = 2 * D - 1
    H = D // 2                                  # the revealed servers' lines: H steps ahead
    T2 = pk[6]
    wrap = pk[4]
    es = _ZERO if ep == 0 else np.uint64(ep - 1) % wrap + _ONE     # the epoch's stamp
    if rmode == 1:
        _fill_fifo(fifo, ci, n, pk[0], pk[1], X, tk, pf)
    if ring:                                    # the steps k+1 .. k+D, ahead
        for j in range(1, D + 1):
            r = _mix(kA + np.uint64(k + j) * gA)
            buf[(k + j) & mask] = r
            s, f = _mul128(r, n)
            if rmode:
                _head(k + j, r, s, f, X, T, mode, cols, ch, indptr, indices, pick, rmode, pk,
                      sv, pw, keys, n, nm1, mask2, pf, es)
            else:
                _prefetch(X, s)
    zc = kA + np.uint64(k + 1) * gA             # the draw of the next step
    zf = kA + np.uint64(k + 1 + D) * gA         # the draw D steps ahead
    while g < nseg:
        row = nfine if g == 0 else g - 1
        end = bnd[g]
        rs = 0
        na = 0
        while k < end:
            k += 1
            if ring:
                rf = _mix(zf)
                zf += gA
                sf, f = _mul128(rf, n)
                if rmode:
                    _head(k + D, rf, sf, f, X, T, mode, cols, ch, indptr, indices, pick, rmode,
                          pk, sv, pw, keys, n, nm1, mask2, pf, es)
                    if rmode == 1 and es != _ZERO:
                        _hint((k + H) & mask2, es, X, sv, pw)
                else:
                    _prefetch(X, sf)
                r = buf[k & mask]
                buf[k & mask] = rf
            else:
                r = _mix(zc)
                zc += gA
            s, f = _mul128(r, n)
            a = np.int64(f < T)
            if rmode:                           # a resampled placement
                if not a:
                    if rmode == 1 and f >= T2:  # a resampling epoch: a new stamp
                        ep += 1
                        es = _next_stamp(es, wrap, pw, tk)
                        continue
                    lv = np.int64(X[s])         # potential departure
                    if lv > 0:
                        acc[lv] -= end - k
                        dq[lv] -= 1
                        X[s] = lv - 1
                    continue
                if not pf:                      # no head: the positions or servers now
                    _servers(k, s, X, mode, cols, ch, indptr, indices, pick, rmode, pk, sv, pw,
                             keys, n, nm1, mask2, pf, es)
                row2 = k & mask2
                cnt = np.int64(sv[row2, sv.shape[1] - 1])
                if rmode == 1 and es != _ZERO:  # positions to servers (epoch 0: the identity)
                    for p in range(cnt):
                        sv[row2, p], ci = _reveal(sv[row2, p], es, pw, tk, fifo, ci, n, pk[0],
                                                  pk[1], X, pf)
                s = sv[row2, 0]
                bx = np.int64(X[s])
                cand[0] = s
                nt = 1
                for p in range(1, cnt):
                    bx, nt = _scan(X, sv[row2, p], bx, nt, cand)
                if nt == 1:
                    tc = cand[0]
                elif nt == 2:
                    tc = cand[np.int64((r >> _TWO) & _ONE)]
                else:
                    t, f = _mul128(_mix(kB + np.uint64(k) * gB), np.uint64(nt))
                    tc = cand[np.int64(t)]
                lv = bx + 1
                X[tc] = lv
                acc[lv] += end - k
                dq[lv] += 1
                rs += lv
                na += 1
                if lv >= K:
                    code = 1
                    break
                continue
            if ch == 2:
                if mode == _RING:
                    up = _ZERO if s == nm1 else s + _ONE
                    dn = nm1 if s == _ZERO else s - _ONE
                    w = up if r & _ONE else dn
                elif mode == _TORUS:
                    c = s % cols
                    w = _torus_nbr(s, c, r & _THREE, cols, n)
                elif mode == _COMPLETE:
                    if a:
                        t, f = _mul128(_mix(kB + np.uint64(k) * gB), nm1)
                        w = t + np.uint64(t >= s)
                    else:
                        w = s
                else:
                    lo = np.int64(indptr[s])
                    dg = np.int64(indptr[s + _ONE]) - lo
                    if dg > 0 and a:
                        t, f = _mul128(_mix(kB + np.uint64(k) * gB), np.uint64(dg))
                        w = np.uint64(indices[lo + np.int64(t)])
                    else:
                        w = s
                w = w if a else s
                xs = np.int64(X[s])
                xw = np.int64(X[w])
                wn = (xw < xs) | ((xw == xs) & ((r & _FOUR) != _ZERO))
                tg = w if wn else s
                xt = min(xs, xw)
                d = 1 if a else -np.int64(xt > 0)
                lv = xt + a
                X[tg] = xt + d
                acc[lv] += d * (end - k)
                dq[lv] += d
                rs += a * lv
                na += a
                if a & np.int64(lv >= K):
                    code = 1
                    break
                continue
            # the whole closed neighbourhood, or k - 1 distinct neighbours
            if not a:                           # potential departure
                lv = np.int64(X[s])
                if lv > 0:
                    acc[lv] -= end - k
                    dq[lv] -= 1
                    X[s] = lv - 1
                continue
            bx = np.int64(X[s])
            cand[0] = s
            nt = 1
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
            if m == dg:                         # every neighbour, in order
                for p in range(dg):
                    w = _nbr(mode, s, np.uint64(p), c, cols, n, nm1, indptr, indices, lo)
                    bx, nt = _scan(X, w, bx, nt, cand)
            else:                               # m distinct uniform ones, by rejection
                ub = _mix(kB + np.uint64(k) * gB)
                j = 0
                for p in range(m):
                    while True:
                        j += 1
                        o, f = _mul128(_mix(ub + np.uint64(j) * _GOLD), np.uint64(dg))
                        new = True
                        for q in range(p):
                            new &= pick[q] != o
                        if new:
                            break
                    pick[p] = o
                    w = _nbr(mode, s, o, c, cols, n, nm1, indptr, indices, lo)
                    bx, nt = _scan(X, w, bx, nt, cand)
            if nt == 1:
                tc = cand[0]
            elif nt == 2:
                tc = cand[np.int64((r >> _TWO) & _ONE)]
            else:
                t, f = _mul128(_mix(kB + np.uint64(k) * gB), np.uint64(nt))
                tc = cand[np.int64(t)]
            lv = bx + 1
            X[tc] = lv
            acc[lv] += end - k
            dq[lv] += 1
            rs += lv
            na += 1
            if lv >= K:
                code = 1
                break
        rsum[row] += rs
        rcnt[row] += na
        arrivals += na
        if code:
            break
        a0 = bnd[g - 1] if g > 0 else 0
        for i in range(K + 1):                  # close the segment
            integ[row, i] += Q[i] * (end - a0) + acc[i]
            Q[i] += dq[i]
            acc[i] = 0
            dq[i] = 0
        g += 1
    st[_STEP] = k
    st[_SEG] = g
    st[_ARR] = arrivals
    st[_EP] = ep
    st[_CI] = np.int64(ci)
    return code


def _keys(ss):
    """Two SplitMix64 counter streams (key, odd increment with enough bit
    changes, as SplitMix's ``mixGamma``) from a ``SeedSequence``."""
    w = ss.spawn(1)[0].generate_state(4, np.uint64)
    out = []
    for key, gam in ((w[0], w[1]), (w[2], w[3])):
        gam = int(gam) | 1
        if bin(gam ^ (gam >> 1)).count("1") < 24:
            gam ^= 0xAAAAAAAAAAAAAAAA
        out += [int(key), gam]
    return np.array(out, np.uint64)


_WIDER = {np.dtype(np.uint8): np.uint16, np.dtype(np.uint16): np.uint32,
          np.dtype(np.uint32): np.uint64}


def simulate_uniformized(graph: Graph | nx.Graph, lam: float, mu: float = 0.0, *,
                         t_end: float, burn_in: float = 0.0, seed: Seed = None,
                         choices: int | None = None, initial: object = None,
                         batches: int | None = None, warn: bool = True, levels: int | None = None,
                         progress: bool = False, allow_unstable: bool = False) -> SimulationResult:
    """Simulate JSQ on a static or resampled graph with Exp(1) services by a uniformized, batched kernel.

    The same model and result as :func:`qlib.simulate <qlib.sim.run.simulate>`
    (not the same random numbers): see the module notes for the method, and
    ``qlib.sim._permute`` for resampled placements (at finite ``mu > 0``
    each epoch's uniform permutation is revealed where arrivals look, exact
    in law).  Time advances by its mean ``1 / (n (λ + 1) + μ)`` per step
    (``μ`` counted when finite).

    Parameters
    ----------
    graph : qlib.graphs.Graph, qlib.graphs.ImplicitGraph or networkx.Graph
        Base graph on positions ``0..n-1``.  The ring and the 2-D torus are
        recognised and their neighbours computed (:func:`graph_kind`); an
        implicit ring, torus or complete graph stores no adjacency at all.
    lam : float
        Arrival rate per server, ``lam > 0`` (``lam >= 1`` only as a
        transient, as in ``simulate``).
    mu : float, default 0.0
        Total rate of the resampling epochs, ``0 <= mu <= inf`` (``0``:
        static graph; ``inf``: a fresh placement before each arrival), as
        in ``simulate``; ``mu > 0`` where :func:`supports_resampled` says so.
    t_end : float
        End of the run, ``t_end > burn_in``.
    burn_in : float, default 0.0
        Time averages are over ``[burn_in, t_end]``.
    seed : None, int >= 0, numpy.random.SeedSequence or numpy.random.Generator
        Same seed, same result, bit for bit.
    choices : None or int >= 2
        ``None``: join a shortest queue of the whole closed neighbourhood
        (on the complete graph that scans every server: ``n`` per arrival);
        ``k``: of the position and ``k - 1`` distinct uniformly chosen
        neighbours (all of them when the degree is below ``k``; the
        position alone when it has none).  Ties uniform.
    initial : array_like, optional
        Queue lengths by server or an occupancy vector, as in ``simulate``.
    batches, warn, levels, progress, allow_unstable
        As in ``simulate`` (the result does not depend on ``progress``, nor,
        beyond the length of its arrays, on ``levels``).

    Returns
    -------
    SimulationResult
        As ``simulate``'s (``times`` and ``paths`` None, ``resamples`` 0 at
        ``mu = 0``, the arrivals at ``mu = inf``); ``final_queues`` is
        ``int32``; ``stream`` is ``qlib.sim.result.UNIFORMIZED_STREAM``.

    Raises
    ------
    ValueError
        If ``mu > 0`` is not supported for this graph (:func:`supports_resampled`),
        ``choices`` is not None or an int ``>= 2``, the window holds
        fewer steps than batches need (``t_end``), or an argument is out of
        range as in ``simulate``.

    Examples
    --------
    >>> from qlib import graphs
    >>> from qlib.sim import simulate_uniformized
    >>> r = simulate_uniformized(graphs.ring(1000), 0.7, t_end=200, burn_in=50, seed=1, choices=2)
    >>> r.n, r.lam, float(r.occupancy[0])
    (1000, 0.7, 1.0)
    >>> bool(abs(r.occupancy[1] - 0.7) < 0.02)     # E q(1) = lam
    True

    The supermarket model (JSQ(2) over all servers) on a complete graph that
    stores no edges:

    >>> g = graphs.complete(10**5, implicit=True)
    >>> r = simulate_uniformized(g, 0.7, t_end=30, burn_in=10, seed=1, choices=2)
    >>> fixed_point = sum(0.7 ** (2**i - 1) for i in range(1, 40))
    >>> round(fixed_point, 3), bool(abs(r.mean_queue_length - fixed_point) < 0.03)
    (1.13, True)
    """
    graph = _as_graph(graph, implicit_ok=True)
    ch = _check_choices(choices)
    lam, mu, t_end, burn_in = _check_args(graph, lam, mu, t_end, burn_in, batches,
                                          allow_unstable, warn,
                                          per_server=_PEAK_BYTES_PER_SERVER)
    if 0 < mu < np.inf:
        V.check_memory(V.memory_estimate(n=graph.n, per_item=_PEAK_BYTES_RESAMPLED), "n",
                       graph.n, what=f"the per-server state at finite mu "
                                     f"({_PEAK_BYTES_RESAMPLED} bytes per server)")
    return _uniformized_checked(graph, lam, mu, t_end=t_end, burn_in=burn_in, seed=seed, ch=ch,
                                initial=initial, batches=batches, warn=warn, levels=levels,
                                progress=progress)


def _window_steps(n, lam, mu, t_end, burn_in):
    """``(rate, steps to t_end, steps of the burn-in)`` of the uniformized chain."""
    rate = n * (lam + 1.0) + (mu if 0 < mu < np.inf else 0.0)
    return rate, int(round(rate * t_end)), int(round(rate * burn_in))


def _look(graph, ch):
    """The positions an arrival looks at, at most: its degree plus one, or ``choices``."""
    if isinstance(graph, ImplicitGraph):
        maxdeg = graph.degree
    else:
        maxdeg = int(np.diff(graph.indptr).max()) if graph.n else 0
    return (maxdeg if ch == 0 else min(ch - 1, maxdeg)) + 1


def _lacks(graph, lam, mu, t_end, burn_in, ch, batches):
    """What keeps a run with checked arguments off the fast path (a phrase
    naming the option), or None when :func:`simulate_uniformized` runs it."""
    if not supports_resampled(graph.n, _look(graph, ch), mu):
        return (f"mu={mu!r} with arrivals that look at {_look(graph, ch)} positions "
                f"(the graph's degree or choices; see supports_resampled)")
    _, ntot, nb_ = _window_steps(graph.n, lam, mu, t_end, burn_in)
    if ntot - nb_ < (4 if batches is None else int(batches)):
        return "t_end (the window holds fewer uniformized steps than the batches need)"
    return None


def _uniformized_checked(graph, lam, mu, *, t_end, burn_in=0.0, seed=None, ch=0, initial=None,
                         batches=None, warn=True, levels=None, progress=False, _wrap=WRAP):
    """:func:`simulate_uniformized` on checked arguments (as ``start._check_args``
    and ``_check_choices`` return them; ``_wrap``: epochs between clearings of
    the stamps, for the tests); ``simulate`` and ``replicate`` run through here."""
    n = graph.n
    mu_inf = bool(np.isinf(mu))
    rmode = 0 if mu == 0 else (2 if mu_inf else 1)
    ss, seed_out = _seed(seed)
    rate, ntot, nb_ = _window_steps(n, lam, mu, t_end, burn_in)
    W = ntot - nb_
    need = 4 if batches is None else int(batches)
    if W < need:
        raise ValueError(f"t_end: the window [burn_in, t_end] holds {W} uniformized steps, "
                         f"fewer than the {need} the batches need; lengthen it")
    nfine = min(_FINE, W) if batches is None else int(batches)
    bnd = np.empty(nfine + 1, np.int64)
    bnd[0] = nb_
    bnd[1:] = nb_ + np.round(np.arange(1, nfine + 1) * (W / nfine)).astype(np.int64)
    bnd[-1] = ntot

    if initial is None:
        X = np.zeros(n, np.uint8)
        xmax = 0
    else:
        X0 = _initial(initial, n, ss)
        xmax = int(X0.max())
        dt = np.uint8 if xmax < 128 else (np.uint16 if xmax < 2**15 else np.uint32)
        X = X0.astype(dt)
        del X0
    if levels is not None:      # levels tracked from the start (the draws do not depend on it)
        K0 = _tracked(levels, xmax)
        while K0 > int(np.iinfo(X.dtype).max):
            X = X.astype(_WIDER[X.dtype])
    if rmode == 1:
        # a server's queue and taken-stamp in one 8-byte record, so one cache line
        Y = np.zeros((n, 2), np.uint32)
        Y[:, 0] = X
        X, tk = Y[:, 0], Y[:, 1]
        del Y
    else:
        tk = np.zeros(1, np.uint32)
    K = min(max(16 if levels is None else int(levels), 2 * xmax, xmax + 1),
            int(np.iinfo(X.dtype).max))
    Q = _counts(X, K)
    acc, dq = np.zeros(K + 1, np.int64), np.zeros(K + 1, np.int64)
    integ = np.zeros((nfine + 1, K + 1))
    rsum = np.zeros(nfine + 1)
    rcnt = np.zeros(nfine + 1)
    st = np.zeros(5, np.int64)
    tasks0 = int(Q[1:].sum())
    keys = _keys(ss)
    kind, cols = _kind(graph)
    mode = {"ring": _RING, "torus": _TORUS, "csr": _CSR, "complete": _COMPLETE}[kind]
    if isinstance(graph, ImplicitGraph):        # nothing stored: neighbours computed
        indptr = indices = np.zeros(1, np.int32)
        indptr.flags.writeable = False          # read-only like a graph's: one compiled _run
    else:
        indptr, indices = graph.indptr, graph.indices
    look = _look(graph, ch)     # positions an arrival looks at
    D = _AHEAD if n >= _AHEAD_FROM else 1
    if not supports_resampled(n, look, mu):
        raise ValueError(f"mu={mu!r} needs arrivals that look at fewer positions (graph's "
                         f"degree or choices): {look} at n={n} (see supports_resampled)")
    cand = np.empty(look, np.uint64)
    pick = np.empty(max(ch - 1, 1), np.uint64)
    buf = np.empty(D, np.uint64)   # draws ahead
    # P(arrival) 2**64 and, resampled, P(arrival or potential departure) 2**64
    fl, fm = Fraction(lam), Fraction(mu) if rmode == 1 else Fraction(0)
    T = np.uint64(int(fl * n / ((fl + 1) * n + fm) * 2**64))
    T2 = int((fl + 1) * n / ((fl + 1) * n + fm) * 2**64) if rmode == 1 else 2**64 - 1
    kw = ss.spawn(1)[0].generate_state(4, np.uint64)    # candidate and fresh-server keys
    pk = np.array([kw[0], kw[1] | np.uint64(1), kw[2], kw[3] | np.uint64(1), _wrap, 0,
                   min(T2, 2**64 - 1)], np.uint64)
    sv = np.zeros((2 * D, look + 1) if rmode else (1, 1), np.uint64)
    # 0 < mu < inf: the lazy permutation (per position: stamp and server; per server: the
    # stamp of the epoch that took it) and the candidate servers drawn ahead
    m1 = n if rmode == 1 else 1
    pw = np.zeros(m1, np.uint64)
    fifo = np.zeros(_FIFO if (rmode == 1 and D > 1) else 1, np.uint64)

    # progress: the run in slices of segments (every draw is a function of the step
    # index, so the result does not depend on the slicing)
    nslices = min(100, nfine + 1) if progress else 1
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=t_end, unit="time", desc=f"simulate n={n}")
    compile_notice(_run, "simulate")
    w0 = time.perf_counter()
    try:
        for j in range(1, nslices + 1):
            m = nfine + 1 if j == nslices else ((nfine + 1) * j) // nslices
            while _run(X, Q, acc, dq, integ, rsum, rcnt, bnd[:m], st, keys, T, mode,
                       np.uint64(cols), ch, indptr, indices, cand, pick, buf, rmode, pk, sv,
                       pw, tk, fifo):
                top = int(np.iinfo(X.dtype).max)
                if K >= top:             # the next arrival could pass the state's width: widen
                    if rmode == 1:           # (the records hold 2**32 - 1 tasks per queue)
                        raise ValueError("a queue passed 2**32 - 1 tasks")
                    X = X.astype(_WIDER[X.dtype])
                    top = int(np.iinfo(X.dtype).max)
                K2 = min(2 * K, top)
                Q = _grow(Q, K2 + 1)
                acc = _grow(acc, K2 + 1)
                dq = _grow(dq, K2 + 1)
                integ = _grow(integ, K2 + 1)
                K = K2
            if bar is not None:
                bar.update(min(t_end, bnd[m - 1] / rate) - bar.n)
    finally:
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - w0

    seg = np.diff(bnd).astype(float)
    occ_f = integ[:nfine] / (n * seg[:, None])
    occ = integ[:nfine].sum(axis=0) / (n * float(W))
    nz = np.nonzero(occ > 0)[0]
    top = int(nz[-1]) + 2 if nz.size else 2
    if levels is not None:
        top = max(top, int(levels) + 1)
    top = min(top, K + 1)
    occ, occ_f = occ[:top], occ_f[:, :top]
    fields = _batch_fields(occ, occ_f, rsum, rcnt, nfine, (t_end - burn_in) / nfine, batches,
                           t_end - burn_in, warn=warn)
    arr = int(st[_ARR])
    dep = arr + tasks0 - int(Q[1:].sum())      # every task that left was a departure
    return _transient(SimulationResult(
        occupancy=occ, times=None, paths=None, events=arr + dep,
        resamples=int(st[_EP]) if rmode == 1 else (arr if rmode == 2 else 0),
        arrivals=arr, departures=dep,
        final_queues=X.astype(np.int32),
        wall_time=wall,
        seed=seed_out, n=n, lam=lam, mu=mu, t_end=t_end, burn_in=burn_in, levels=K,
        stream=UNIFORMIZED_STREAM, **fields))
