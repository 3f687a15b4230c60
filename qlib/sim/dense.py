"""JSQ on dense random circulant graphs, with idle-server tracking: an arrival is placed without scanning its whole neighbourhood.

The graph is a **random circulant** on ``Z_n``: a symmetric set ``S`` of
``d`` non-zero residues (``S = −S``), drawn uniformly
(:func:`random_circulant`), and ``u ~ v`` iff ``v − u mod n ∈ S``; the
closed neighbourhood of ``s`` is ``s + ({0} ∪ S)``.  Nothing but ``S`` is
stored: the neighbours are computed, and ``u ~ v`` is one look-up in a
byte table of the ``n`` residues.  For ``d`` of order ``√n`` and above (the
diffusion-scale question of the growing-degree chapter) it is a static
random graph with ``d n / 2`` edges held in ``O(n)`` memory.

The model is :func:`~qlib.sim.uniformized.simulate_uniformized`'s static
one with Exp(1) services and the whole-closed-neighbourhood policy: a task
arriving at ``s`` joins a shortest queue of ``s + ({0} ∪ S)``, ties broken
uniformly.  The chain is uniformized at rate ``n (λ + 1)`` as there (an
arrival at a uniform position with probability ``λ / (λ + 1)``, else a
potential departure at a uniform server; time advances by the mean of the
holding time, and time averages are step averages).

Scanning ``d + 1`` queues per arrival costs ``O(d)``.  The kernel keeps
the list of **idle** servers instead, with each server's place in it; near
saturation it is short (``β √n`` servers on average in the Halfin–Whitt
regime) while ``d`` may be far larger.  An arrival at ``s`` is placed by

1. the idle list in a uniformly random order (a partial Fisher–Yates
   shuffle of the list in place), stopping at the first idle server
   adjacent to ``s``: it is uniform among the idle neighbours.  With ``I``
   idle servers of which ``c`` are adjacent this examines about
   ``I / (c + 1) ≈ n / (d + 1)`` entries, not ``d + 1``; at most ``d + 1``
   are examined, and the neighbourhood is scanned where they find none
   before the list ends;
2. if the whole list holds no neighbour of ``s``, the shortest queue has
   at least one task, and almost always exactly one: members of the closed
   neighbourhood are drawn uniformly until one with one task is hit
   (uniform over those), at most 32 draws;
3. otherwise, and wherever fewer than one idle neighbour is expected
   (``I (d + 1) < n``), the whole closed neighbourhood is scanned.

Every step is exact in law, ties included; only the work changes.

Examples
--------
>>> from qlib.sim.dense import random_circulant, simulate_dense
>>> S = random_circulant(1000, 60, seed=1)
>>> r = simulate_dense(1000, S, 0.9, t_end=50, burn_in=10, seed=1)
>>> r.degree, bool(0.85 < r.q[1] < 0.95), bool(r.mean_response_time < 1.1)
(60, True, True)
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

import numba
import numpy as np

from qlib import _validate as V
from qlib.sim._compact import _GOLD, _mix, _mul128
from qlib.sim.start import _seed
from qlib.stats._results import fields_eq

if TYPE_CHECKING:   # names for the annotations only
    from qlib.graphs import Graph

Seed = Union[None, int, np.random.SeedSequence, np.random.Generator]

__all__ = ["random_circulant", "circulant_graph", "simulate_dense", "DenseResult"]

_K = 64          # tracked levels: a queue reaching this stops the run (RuntimeError)
_TRIES = 32      # rejection draws for a one-task neighbour before the full scan


def _seed_seq(seed: Seed) -> np.random.SeedSequence:
    return _seed(seed)[0]                      # the simulators' seed handling


def random_circulant(n: int, d: int, seed: Seed = None) -> np.ndarray:
    """A uniformly drawn symmetric set of ``d`` non-zero residues of ``Z_n``: a random ``d``-regular circulant graph.

    Parameters
    ----------
    n : int
        Number of vertices, ``n >= 3``.
    d : int
        Degree, ``1 <= d <= n − 1``; ``d`` odd only for even ``n`` (then
        ``n/2``, its own negative, is in the set).  ``d = n − 1``: the
        complete graph.
    seed : None, int, numpy.random.SeedSequence or numpy.random.Generator
        Seed of the draw.

    Returns
    -------
    numpy.ndarray
        The sorted offsets, ``int64``, length ``d``, closed under ``x ↦ n − x``.

    Raises
    ------
    ValueError
        If ``n < 3``, ``d`` is out of range, or ``d`` is odd while ``n`` is odd.

    Examples
    --------
    >>> from qlib.sim.dense import random_circulant
    >>> S = random_circulant(10, 4, seed=1)
    >>> len(S), sorted(S.tolist()) == sorted(((10 - S) % 10).tolist())
    (4, True)
    """
    n = V.integer(n, "n", lo=3)
    d = V.integer(d, "d", lo=1, hi=n - 1)
    if d % 2 and n % 2:
        raise ValueError(f"d must be even when n is odd (a circulant's odd degree needs n/2), got d={d}, n={n}")
    rng = np.random.default_rng(_seed_seq(seed))
    half = rng.choice(np.arange(1, (n - 1) // 2 + 1), size=d // 2, replace=False)
    extra = [n // 2] if d % 2 else []
    return np.sort(np.concatenate([half, n - half, extra]).astype(np.int64))


def circulant_graph(n: int, offsets: np.ndarray) -> "Graph":
    """The circulant graph of ``offsets`` as an explicit CSR :class:`qlib.graphs.Graph` (for checks at small ``n``).

    Examples
    --------
    >>> from qlib.sim.dense import circulant_graph
    >>> circulant_graph(5, [1, 4]).neighbors(0).tolist()
    [1, 4]
    """
    from qlib.graphs import Graph
    S = _check_offsets(n, offsets)
    rows = np.sort((np.arange(n)[:, None] + S[None, :]) % n, axis=1)
    return Graph(n, np.arange(n + 1) * S.size, rows.ravel(), name=f"circulant{S.size}")


def _check_offsets(n, offsets):
    S = np.asarray(offsets)
    if S.ndim != 1 or S.size == 0 or not np.issubdtype(S.dtype, np.integer):
        raise ValueError("offsets must be a non-empty one-dimensional integer array")
    S = S.astype(np.int64)
    if S.min() < 1 or S.max() >= n or np.unique(S).size != S.size:
        raise ValueError(f"offsets must be distinct residues in 1..n-1 (n={n})")
    if not np.array_equal(np.sort(S), np.sort((n - S) % n)):
        raise ValueError("offsets must be closed under x -> n - x (an undirected graph)")
    return S


@fields_eq
@dataclass(frozen=True)
class DenseResult:
    """What :func:`simulate_dense` returns.

    ``q[i]``: time-averaged fraction of servers with at least ``i`` tasks
    (``q[0] = 1``); ``batch_q``: the same per batch of the window.
    ``wait_probability``: fraction of arrivals that joined a busy server;
    ``mean_response_time``: mean level joined (the mean sojourn with Exp(1)
    FIFO service).  ``scanned_per_arrival``: list entries or neighbours
    examined per arrival; ``ns_per_event``: wall time per uniformized step.
    """
    n: int
    degree: int
    lam: float
    t_end: float
    burn_in: float
    q: np.ndarray
    batch_q: np.ndarray
    wait_probability: float
    batch_wait: np.ndarray
    mean_response_time: float
    arrivals: int
    events: int
    scanned_per_arrival: float
    seconds: float
    ns_per_event: float


@numba.njit(cache=True)
def _take(lst, pos, m, v):
    """Remove ``v`` from the list ``lst[:m]`` (``pos`` its places); returns the new length."""
    i = pos[v]
    last = lst[m - 1]
    lst[i] = last
    pos[last] = i
    pos[v] = -1
    return m - 1


@numba.njit(cache=True)
def _put(lst, pos, m, v):
    lst[m] = v
    pos[v] = m
    return m + 1


@numba.njit(cache=True, inline="always")
def _below(z, c):
    """Advance the SplitMix64 state ``z``; a uniform integer on ``0..c-1`` (to within ``c / 2**64``)."""
    z = z + _GOLD
    hi, lo = _mul128(_mix(z), np.uint64(c))
    return z, np.int64(hi)


@numba.njit(cache=True)
def _run(n, offs, inS, T, bnd, z, X, Q, integ, arr, wai, rsum, work):
    """Steps ``1..bnd[-1]`` from the SplitMix64 state ``z``; an arrival when the step's fraction is below
    ``T / 2**64``.  Segment 0 is the burn-in (row ``nb`` of ``integ``), segment ``g`` row ``g − 1``.
    Returns 0, or 1 when a queue reached the top tracked level."""
    m = offs.size                              # d + 1, offs[0] = 0
    idl = np.empty(n, np.int64)
    ipos = np.full(n, -1, np.int64)
    cand = np.empty(m, np.int64)
    ni = 0
    for s in range(n):
        if X[s] == 0:
            ni = _put(idl, ipos, ni, s)
    K = Q.size - 1
    acc = np.zeros(K + 1, np.int64)
    dq = np.zeros(K + 1, np.int64)
    nb = integ.shape[0] - 1
    k = 0
    for g in range(bnd.size):
        row = nb if g == 0 else g - 1
        end = bnd[g]
        while k < end:
            k += 1
            z = z + _GOLD
            hi, f = _mul128(_mix(z), np.uint64(n))
            s = np.int64(hi)                   # the server (high word); the kind of step (low word)
            if f >= T:                         # potential departure at server s
                x = X[s]
                if x > 0:
                    X[s] = x - 1
                    acc[x] -= end - k
                    dq[x] -= 1
                    if x == 1:
                        ni = _put(idl, ipos, ni, s)
                continue
            tgt = -1
            best = -1
            scan = ni * m < n                  # fewer than one idle neighbour expected: scan
            if not scan:                       # 1. the idle list in a uniformly random order
                lim = min(ni, m)
                for i in range(lim):
                    z, j = _below(z, ni - i)
                    j += i
                    v = idl[j]
                    if j != i:                 # swap: the list's order is free
                        w = idl[i]
                        idl[i] = v
                        idl[j] = w
                        ipos[v] = i
                        ipos[w] = j
                    dv = v - s
                    if dv < 0:
                        dv += n
                    if inS[dv]:                # the first idle neighbour: uniform among them
                        tgt = v
                        best = 0
                        work[0] += i + 1
                        break
                if tgt < 0:
                    work[0] += lim
                    scan = lim < ni            # stopped early: some idle neighbour may remain
                if tgt < 0 and not scan:       # 2. no idle neighbour: one with one task, by rejection
                    for i in range(_TRIES):
                        z, o = _below(z, m)
                        v = s + offs[o]
                        if v >= n:
                            v -= n
                        if X[v] == 1:
                            tgt = v
                            best = 1
                            work[0] += i + 1
                            break
                    if tgt < 0:
                        work[0] += _TRIES
                        scan = True
            if scan:                           # 3. the whole closed neighbourhood
                c = 0
                for j in range(m):
                    v = s + offs[j]
                    if v >= n:
                        v -= n
                    x = X[v]
                    if c == 0 or x < best:
                        best = x
                        cand[0] = v
                        c = 1
                    elif x == best:
                        cand[c] = v
                        c += 1
                work[0] += m
                tgt = cand[0]
                if c > 1:
                    z, o = _below(z, c)
                    tgt = cand[o]
            lv = best + 1
            X[tgt] = lv
            acc[lv] += end - k
            dq[lv] += 1
            if best == 0:
                ni = _take(idl, ipos, ni, tgt)
            arr[row] += 1
            wai[row] += best > 0
            rsum[row] += lv
            if lv >= K:
                return 1
        a0 = bnd[g - 1] if g > 0 else 0
        for i in range(K + 1):                 # close the segment
            integ[row, i] += Q[i] * (end - a0) + acc[i]
            Q[i] += dq[i]
            acc[i] = 0
            dq[i] = 0
    return 0


def simulate_dense(n: int, offsets: np.ndarray, lam: float, *, t_end: float, burn_in: float = 0.0,
                   seed: Seed = None, batches: int = 10) -> DenseResult:
    """Simulate JSQ (whole closed neighbourhood, Exp(1) services) on a static circulant graph, with idle-server tracking.

    Parameters
    ----------
    n : int
        Number of servers, ``n >= 3``.
    offsets : array of int
        The circulant's offsets ``S`` (:func:`random_circulant`): distinct
        residues in ``1..n-1``, closed under ``x ↦ n − x``.
    lam : float
        Arrival rate per server, ``0 < lam < 1``.
    t_end : float
        End of the run, ``t_end > burn_in``.
    burn_in : float
        Time discarded from the averages, ``>= 0``.
    seed : None, int, numpy.random.SeedSequence or numpy.random.Generator
        Seed: a 64-bit SplitMix64 state is drawn from its ``SeedSequence``
        and the compiled kernel draws every number from it (a bounded draw
        is the high word of a 128-bit product, uniform to within ``c / 2**64``).
    batches : int
        Number of equal batches of the window after the burn-in, ``>= 1``.

    Returns
    -------
    DenseResult

    Raises
    ------
    ValueError
        If an argument is out of range, or the window holds fewer steps
        than ``batches``.
    RuntimeError
        If a queue reaches 64 tasks (not reached below saturation at
        these degrees; the run stops rather than grow).

    Examples
    --------
    The complete graph (``S`` = every non-zero residue) at ``n = 50``:

    >>> import numpy as np
    >>> from qlib.sim.dense import simulate_dense
    >>> r = simulate_dense(50, np.arange(1, 50), 0.9, t_end=200, burn_in=20, seed=3, batches=4)
    >>> r.batch_q.shape, bool(abs(r.q[1] - 0.9) < 0.02)
    ((4, 65), True)
    """
    n = V.integer(n, "n", lo=3)
    S = _check_offsets(n, offsets)
    lam = V.real(lam, "lam", lo=0, hi=1, lo_open=True, hi_open=True)
    t_end = V.real(t_end, "t_end", lo=0, lo_open=True)
    burn_in = V.real(burn_in, "burn_in", lo=0, hi=t_end, hi_open=True)
    batches = V.integer(batches, "batches", lo=1)
    rate = n * (lam + 1.0)
    N, B = int(round(rate * t_end)), int(round(rate * burn_in))
    if N - B < batches:
        raise ValueError(f"t_end: the window holds {N - B} steps, fewer than batches={batches}")
    bnd = np.concatenate([[B], B + np.round(np.arange(1, batches + 1) * (N - B) / batches)]).astype(np.int64)
    offs = np.concatenate([[0], S])
    inS = np.zeros(n, np.uint8)
    inS[offs] = 1
    X = np.zeros(n, np.int64)
    Q = np.zeros(_K + 1, np.int64)
    Q[0] = n
    integ = np.zeros((batches + 1, _K + 1))
    arr, wai, rsum = (np.zeros(batches + 1, np.int64) for _ in range(3))
    work = np.zeros(1, np.int64)
    z0 = _seed_seq(seed).generate_state(1, np.uint64)[0]
    T = np.uint64(min(int(2**64 * (lam / (lam + 1.0))), 2**64 - 1))
    t0 = time.perf_counter()
    code = _run(n, offs, inS, T, bnd, z0, X, Q, integ, arr, wai, rsum, work)
    seconds = time.perf_counter() - t0
    if code:
        raise RuntimeError(f"a queue reached {_K} tasks (lam={lam}, n={n}); the kernel tracks fewer levels")
    lens = np.diff(bnd).astype(float)
    bq = integ[:batches] / (lens[:, None] * n)
    A = arr[:batches]
    return DenseResult(n=n, degree=int(S.size), lam=lam, t_end=t_end, burn_in=burn_in,
                       q=bq.T @ lens / lens.sum(), batch_q=bq,
                       wait_probability=float(wai[:batches].sum() / max(A.sum(), 1)),
                       batch_wait=wai[:batches] / np.maximum(A, 1),
                       mean_response_time=float(rsum[:batches].sum() / max(A.sum(), 1)),
                       arrivals=int(arr.sum()), events=N, scanned_per_arrival=float(work[0] / max(arr.sum(), 1)),
                       seconds=seconds, ns_per_event=seconds / max(N, 1) * 1e9)
