"""transient_jsq: transient means of the finite-n chain truncated to three levels, by uniformization."""
from __future__ import annotations

import math
import time
import numba
import numpy as np
from dataclasses import dataclass

from qlib import _validate as V
from qlib.halfin_whitt._slices import SLICES, progress_bar
from qlib.halfin_whitt._common import _check_beta, _check_pos
from typing import TYPE_CHECKING
from qlib.stats._results import fields_eq
if TYPE_CHECKING:   # names for the annotations only
    from collections.abc import Sequence
    from numpy.typing import ArrayLike

__all__ = ['transient_jsq', 'TransientJSQ']


@numba.njit(cache=True)
def _jsq_transient_kernel(n, lam, a, b, weights, k0, k1, trim_every, drop, p, new, lo, hi,
                          out, lost, gone):
    # p[i, j, k] = P(Q_1 = a + i, Q_2 = j, Q_3 = k, not yet removed), pushed
    # through the chain uniformised at rate Λ = λ_n + n, steps k0 <= k < k1 (the
    # caller goes on with the returned (p, new, gone): slices of the steps give
    # the sums of one call).  Mass that leaves the box (Q_1 < a or Q_2 > b) or
    # that a trim drops is counted in `lost`; out: E Q_1, E Q_2, E Q_3,
    # P(Q_1 = n) (removed mass: 0).
    size = np.array(p.shape)
    Lam = lam + n
    nt = weights.shape[0]
    for k in range(k0, k1):
        lost[k] = gone
        s1 = s2 = s3 = full = 0.0
        for i in range(lo[0], hi[0] + 1):
            q1 = a + i
            for j in range(lo[1], min(hi[1], q1) + 1):
                for l in range(lo[2], min(hi[2], j) + 1):
                    v = p[i, j, l]
                    if v == 0.0:
                        continue
                    p[i, j, l] = 0.0
                    s1 += v * q1
                    s2 += v * j
                    s3 += v * l
                    if q1 == n:
                        full += v
                    new[i, j, l] += v * (n - q1) / Lam             # fictitious jump
                    if q1 < n:                                     # arrival to an idle server
                        new[i + 1, j, l] += v * lam / Lam
                    elif j < b:                                    # arrival waits: Q_2 + 1
                        new[i, j + 1, l] += v * lam / Lam
                    else:
                        gone += v * lam / Lam
                    if q1 > j:                                     # departure, queue of length 1
                        if i > 0:
                            new[i - 1, j, l] += v * (q1 - j) / Lam
                        else:
                            gone += v * (q1 - j) / Lam
                    if j > l:                                      # departure, queue of length 2
                        new[i, j - 1, l] += v * (j - l) / Lam
                    if l > 0:                                      # departure, queue of length 3
                        new[i, j, l - 1] += v * l / Lam
        for t in range(nt):
            w = weights[t, k]
            out[t, 0] += w * s1
            out[t, 1] += w * s2
            out[t, 2] += w * s3
            out[t, 3] += w * full
        p, new = new, p
        for d in range(3):
            lo[d] = max(lo[d] - 1, 0)
            hi[d] = min(hi[d] + 1, size[d] - 1)
        if (k + 1) % trim_every == 0:
            gone += _trim_box(p, lo, hi, drop)
    return p, new, gone


@numba.njit(cache=True)
def _trim_box(p, lo, hi, drop):
    # Shrink the box from each side, cutting slices whose marginal mass sums
    # to at most drop/6 per side; zero what is cut and return its mass.
    m = np.zeros((3, max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]) + 1))
    for i in range(lo[0], hi[0] + 1):
        for j in range(lo[1], hi[1] + 1):
            for l in range(lo[2], hi[2] + 1):
                v = p[i, j, l]
                m[0, i - lo[0]] += v
                m[1, j - lo[1]] += v
                m[2, l - lo[2]] += v
    nlo, nhi = lo.copy(), hi.copy()
    for d in range(3):
        c = 0.0
        while nlo[d] < nhi[d] and c + m[d, nlo[d] - lo[d]] <= drop / 6:
            c += m[d, nlo[d] - lo[d]]
            nlo[d] += 1
        c = 0.0
        while nhi[d] > nlo[d] and c + m[d, nhi[d] - lo[d]] <= drop / 6:
            c += m[d, nhi[d] - lo[d]]
            nhi[d] -= 1
    cut = 0.0
    for i in range(lo[0], hi[0] + 1):
        for j in range(lo[1], hi[1] + 1):
            for l in range(lo[2], hi[2] + 1):
                if (i < nlo[0] or i > nhi[0] or j < nlo[1] or j > nhi[1]
                        or l < nlo[2] or l > nhi[2]):
                    cut += p[i, j, l]
                    p[i, j, l] = 0.0
    lo[:] = nlo
    hi[:] = nhi
    return cut


@fields_eq
@dataclass(frozen=True)
class TransientJSQ:
    """Result of :func:`~qlib.halfin_whitt.transient.transient_jsq`.

    At each of ``times``: ``mean_x1 = (E[Q_1] − n)/√n``, ``mean_x2 =
    E[Q_2]/√n``, ``mean_x3 = E[Q_3]/√n`` and ``p_full = P(Q_1 = n)``,
    computed on the truncated chain.  ``error``: a bound on the error of
    each of the three scaled means (and of ``√n · p_full``) at each time: the
    true value lies in ``[computed, computed + error]``.  ``removed``: the
    mass the computation lost by each time (left the box, trimmed, or in
    the Poisson tail), of which ``error = √n · removed``.
    """

    n: int
    beta: float
    times: np.ndarray
    mean_x1: np.ndarray
    mean_x2: np.ndarray
    mean_x3: np.ndarray
    p_full: np.ndarray
    error: np.ndarray
    removed: np.ndarray
    box: tuple
    steps: int
    wall_time: float


def transient_jsq(n: int, beta: float, initial: Sequence[int], times: ArrayLike, *,
                  q1_min: int | None = None, q2_max: int | None = None,
                  tol: float = 1e-12, progress: bool = False) -> TransientJSQ:
    """Exact transient means of the JSQ occupancy chain, by uniformization.

    The chain ``(Q_1, Q_2, Q_3)`` of :func:`~qlib.halfin_whitt.simulate.simulate_jsq` (``Q_4 = 0``) is
    uniformised at rate ``Λ = λ_n + n``: its law at time ``t`` is
    ``Σ_k Poisson(k; Λt) · p_0 P^k`` with ``P = I + A/Λ``.  The law is pushed
    through ``P`` on the box ``q1_min <= Q_1 <= n``, ``Q_2 <= q2_max``,
    ``Q_3 <= Q_3(0)``; mass that leaves the box is removed and counted, and so
    is the mass below ``tol/10`` per trim that is cut from the edges of the
    support to save time.  While ``Q_2 < n`` no queue reaches length three
    (an arrival joins a shortest queue), so ``Q_3`` never exceeds ``Q_3(0)``
    and ``Q_4`` stays 0: the box is closed except at its two cut faces.

    Parameters
    ----------
    n : int
        ``n >= 2``.
    beta : float
        ``0 < beta < √n``.
    initial : sequence of int
        ``(Q_1, Q_2[, Q_3])`` at time 0, non-increasing, ``<= n``,
        ``Q_2 < n``.
    times : array_like
        Times ``>= 0``.
    q1_min, q2_max : int, optional
        The cut faces.  Defaults: ``Q_1 >= min(Q_1(0), n − 10√n)`` and
        ``Q_2 <= Q_2(0) + 16√n`` (at most ``n − 1``): at ``n = 100`` the
        maximum of ``Q_2`` over ``[0, 10]`` from the empty system exceeds
        ``8√n`` with probability about ``10^{-4}``.
    tol : float
        Poisson tail mass left out, and total mass trimmed, each at most
        ``tol`` (the error bound reports what was actually lost).
    progress : bool, default False
        Show a tqdm progress bar over the uniformization steps (the steps are
        cut into slices; the result is the same, bit for bit).

    Returns
    -------
    TransientJSQ

    Notes
    -----
    Every scaled coordinate lies in ``[−√n, √n]`` and the computed law is
    the true one minus a non-negative measure of total mass ``removed(t)``,
    so the true mean exceeds the computed one by between 0 and
    ``√n · removed(t)`` (``Q_i >= 0``).  The cost is ``Λ · max(times)``
    steps over the cells of the support, e.g. a few seconds at ``n = 1000``
    and ``t = 6``.

    Examples
    --------
    >>> t = transient_jsq(64, 1.0, [64, 8], [0.0, 1.0])
    >>> t.mean_x2.round(4).tolist()               # E[Q_2(t)]/√n, from Q_2(0) = 8 = √64
    [1.0, 1.1071]
    >>> bool(t.error.max() < 1e-6)
    True
    """
    n = V.integer(n, "n", lo=2)
    beta = _check_beta(beta, n)
    q = V.occupancy_counts(initial, n, max_len=3, cap_name="3 (Q_1, Q_2, Q_3)")
    if q.size == 0:
        raise TypeError("initial must be a sequence of 1 to 3 integers (Q_1, Q_2, Q_3)")
    q = np.concatenate([q, np.zeros(3 - q.size, np.int64)])
    if q[1] >= n:
        raise ValueError(f"initial must have Q_2 < n = {n}, got Q_2 = {q[1]}")
    t = np.asarray(times, dtype=float)
    if t.ndim != 1 or t.size == 0 or not np.all(np.isfinite(t)) or np.any(t < 0):
        raise ValueError("times must be a non-empty 1-d array of finite times >= 0")
    tol = _check_pos("tol", tol)
    sq = math.sqrt(n)
    a = int(min(q[0], max(0, math.floor(n - 10 * sq)))) if q1_min is None else int(q1_min)
    b = int(min(n - 1, q[1] + math.ceil(16 * sq))) if q2_max is None else int(q2_max)
    if not 0 <= a <= q[0]:
        raise ValueError(f"q1_min must be in [0, Q_1(0) = {q[0]}], got {q1_min}")
    if not q[1] <= b <= n - 1:
        raise ValueError(f"q2_max must be in [Q_2(0), n - 1] = [{q[1]}, {n - 1}], got {q2_max}")
    lam = n - beta * sq
    Lam = lam + n
    from scipy import stats as _sst
    kmax = int(_sst.poisson.isf(tol, Lam * t.max())) + 1 if t.max() > 0 else 0
    k = np.arange(kmax + 1)
    weights = np.array([_sst.poisson.pmf(k, Lam * ti) if ti > 0 else (k == 0).astype(float)
                        for ti in t])
    tail = np.maximum(1.0 - weights.sum(axis=1), 0.0)
    w0 = time.perf_counter()
    drop = tol / 10 / max(1, kmax // 64)          # per trim; trims every 64 steps
    p, new = np.zeros((n - a + 1, b + 1, q[2] + 1)), np.zeros((n - a + 1, b + 1, q[2] + 1))
    p[q[0] - a, q[1], q[2]] = 1.0
    lo = np.array([q[0] - a, q[1], q[2]])
    hi, gone = lo.copy(), 0.0
    out, lost = np.zeros((t.size, 4)), np.zeros(kmax + 1)   # lost[k]: mass removed before step k
    nslices = min(SLICES, kmax + 1) if progress else 1
    bar = progress_bar(progress, kmax + 1, "step", f"transient_jsq n={n}")
    try:
        for j in range(nslices):
            k0, k1 = (kmax + 1) * j // nslices, (kmax + 1) * (j + 1) // nslices
            p, new, gone = _jsq_transient_kernel(n, lam, a, b, weights, k0, k1, 64, drop, p, new,
                                                 lo, hi, out, lost, gone)
            bar.update(k1 - k0)
    finally:
        bar.close()
    removed = weights @ lost + tail
    return TransientJSQ(
        n=n, beta=beta, times=t, mean_x1=(out[:, 0] - n) / sq, mean_x2=out[:, 1] / sq,
        mean_x3=out[:, 2] / sq, p_full=out[:, 3], error=sq * removed, removed=removed,
        box=(a, b, int(q[2])), steps=kmax, wall_time=time.perf_counter() - w0)
