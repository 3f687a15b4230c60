"""Finite-``n`` corrections of the stationary occupancy (``μ = ∞``).

With a fresh random placement of the servers before every arrival
(``mu = inf``), the numbers ``N_i = n q_n(i)`` of servers holding at least
``i`` tasks form a Markov chain: an arrival at a position of degree ``d``
(probability ``p(d)``) sees ``d + 1`` distinct servers drawn uniformly and
raises level ``j`` at rate

    n λ Σ_d p(d) [C(N_{j-1}, d+1) − C(N_j, d+1)] / C(n, d+1),   N_0 = n,

and a departure lowers level ``j`` at rate ``N_j − N_{j+1}``.  Its drift is
``f(x) + f̃(x)/n + O(1/n²)``, ``f`` the fluid drift and, with
``h(x) = ½ x (1 − x) g''(x)`` and ``g(x) = x φ(x)``,

    f̃_j(x) = −λ [h(x_{j-1}) − h(x_j)]

(``C(nx, k)/C(n, k) = x^k − C(k, 2) x^{k-1}(1 − x)/n + O(1/n²)``); sampling
*with* replacement has ``f̃ = 0``.  The refined mean field
(Gast & Van Houdt 2017) then gives

    E q_n = q* + v/n + O(1/n²),
    v = −A⁻¹ [ f̃(q*) + ½ Σ_{k,l} ∂_k ∂_l f(q*) W_{kl} ],
    A W + W Aᵀ + Q = 0,

``A`` the (tridiagonal) Jacobian of ``f`` at ``q*``,
``Q = diag(λ[g(q*_{j-1}) − g(q*_j)] + q*_j − q*_{j+1})`` the jump
covariance, ``W`` the covariance of ``√n (q_n − q*)``.  The Hessian of
``f_j`` has only the two diagonal entries ``λ g''(x_{j-1})`` and
``−λ g''(x_j)``, so the noise term is
``½ λ [g''(q*_{j-1}) W_{j-1,j-1} − g''(q*_j) W_{jj}]`` (``W_{00} = 0``).
:func:`~qlib.meanfield.expansion.refined` computes ``v`` and the response-time coefficient
``R_v = Σ_i v_i / λ`` (Little's law); the chapter *How large must n be?*
derives the formulas with sympy and checks them against exact chains
(:func:`qlib.exact.occupancy_chain <qlib.exact.occupancy.occupancy_chain>`), simulations and rmftool.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import scipy.linalg

from qlib import _validate as V
from .degrees import DegreeDistribution
from .fluid import _check_lam, equilibrium
from typing import TYPE_CHECKING
from qlib.stats._results import fields_eq
if TYPE_CHECKING:   # names for the annotations only
    from qlib._types import DegreeLike

__all__ = ["refined", "Refined", "Approximation"]


def _check_n(n) -> int:
    return V.integer(n, "n", lo=1)


# ------------------------------------------------------------------ refined


class Approximation(NamedTuple):
    """First-order approximation for ``n`` servers (:meth:`~qlib.meanfield.expansion.Refined.at`)."""

    occupancy: np.ndarray
    response_time: float


@fields_eq
@dataclass(frozen=True)
class Refined:
    """Refined mean field ``E q_n = q + v/n + O(1/n²)`` (:func:`~qlib.meanfield.expansion.refined`).

    Attributes
    ----------
    q : numpy.ndarray, shape (K+1,)
        Fluid equilibrium ``q*(0..K)`` (``q*(0) = 1``).
    v : numpy.ndarray, shape (K+1,)
        The ``1/n`` coefficient of ``E q_n(i)``; ``v[0] = 0``.
    response_time : float
        ``R* = Σ_{i≥1} q*(i) / λ``.
    response_time_v : float
        ``R_v = Σ_{i≥1} v_i / λ``: ``E R_n = R* + R_v/n + O(1/n²)``.
    lam : float
    degrees : DegreeDistribution
    replacement : bool
    levels : int
        The truncation ``K`` at which ``v`` had converged.
    """

    q: np.ndarray
    v: np.ndarray
    response_time: float
    response_time_v: float
    lam: float
    degrees: DegreeDistribution
    replacement: bool
    levels: int

    def at(self, n) -> Approximation:
        """``(q + v/n, R* + R_v/n)`` for ``n >= 1`` servers."""
        n = _check_n(n)
        return Approximation(self.q + self.v / n,
                             self.response_time + self.response_time_v / n)


def _poly(coef, x):
    return np.polyval(np.asarray(coef)[::-1], x)


def _refined_v(q, lam, pmf, replacement):
    """``v`` on the levels ``1..K`` of the truncated vector ``q[0..K]``."""
    d = np.arange(pmf.size)
    g = _poly(np.concatenate([[0.0], pmf]), q)                 # x φ(x)
    g1 = _poly(pmf * (d + 1), q)                                # g'
    g2 = np.zeros_like(q) if pmf.size < 2 else _poly(pmf[1:] * (d[1:] + 1) * d[1:], q)
    x = q[1:]
    K = x.size
    A = (np.diag(-lam * g1[1:] - 1.0) + np.diag(np.ones(K - 1), 1)
         + np.diag(lam * g1[1:-1], -1))
    nxt = np.append(x[1:], 0.0)
    Q = lam * (g[:-1] - g[1:]) + (x - nxt)
    W = scipy.linalg.solve_continuous_lyapunov(A, -np.diag(Q))
    w = np.concatenate([[0.0], np.diag(W)])                     # W_00 = 0
    s = 0.5 * lam * (g2[:-1] * w[:-1] - g2[1:] * w[1:])
    if not replacement:
        h = 0.5 * q * (1.0 - q) * g2
        s -= lam * (h[:-1] - h[1:])
    return np.concatenate([[0.0], -np.linalg.solve(A, s)])


def refined(lam: float, degrees: DegreeLike, *, replacement: bool = False,
            truncation: int | None = None, tol: float = 1e-10,
            max_truncation: int = 4000) -> Refined:
    """Refined mean-field (``1/n``) expansion of the stationary occupancy.

    ``E q_n(i) = q*(i) + v_i/n + O(1/n²)`` for the ``μ = ∞`` chain (module
    docstring): the drift correction of sampling without replacement plus
    the noise term ``½ Σ ∂²f · W`` with ``W`` from the Lyapunov equation of
    the fluid linearised at ``q*``.

    Parameters
    ----------
    lam : float
        ``λ ∈ (0, 1)``.
    degrees : DegreeDistribution, mapping or sequence
        Degree law ``p`` (of the graph, ``p_n``); ``p(0) > 0`` allowed.  A
        mapping ``{d: p(d)}`` or sequence ``p[d]`` is converted.
    replacement : bool
        Sample the ``d`` other servers with replacement (for a point mass
        ``δ_d``: the supermarket model with ``d + 1`` choices, the model of
        Gast & Van Houdt and of rmftool) instead of ``d`` distinct ones.
    truncation : int, optional
        Fixed truncation ``K >= 2`` (for benchmarks).  Default: start where
        ``q*`` falls below ``1e-12`` and grow ``K`` by half until ``v`` and
        ``R_v`` change by less than ``tol`` (relative to ``max(1, |·|)``).
    tol : float
        Convergence tolerance of the automatic truncation, in ``(0, 1)``.
    max_truncation : int
        Largest automatic truncation; beyond it ``RuntimeError``.

    Returns
    -------
    Refined

    Raises
    ------
    ValueError
        If ``lam`` is not in ``(0, 1)``, ``degrees`` is not a law (negative
        or not summing to 1), ``truncation`` or ``max_truncation`` is not
        an integer ``>= 2``, ``tol`` not in ``(0, 1)``.
    TypeError
        If ``degrees`` cannot be read as a law or ``replacement`` is not a bool.
    RuntimeError
        If ``v`` has not converged at the truncation ``max_truncation``.

    Notes
    -----
    The cost is one ``K × K`` Lyapunov solve (Bartels–Stewart) per trial
    truncation; ``K`` is about 10 for ``p(0) = 0`` and grows like
    ``log(1e-12)/log(λ p(0))`` when ``p(0) > 0``.  A law with ``p = δ_0``
    has ``v = 0`` exactly (independent M/M/1 queues).

    Examples
    --------
    >>> from qlib import DegreeDistribution
    >>> from qlib.meanfield import refined
    >>> r = refined(0.9, DegreeDistribution.point(2))
    >>> round(r.response_time, 4), bool(r.response_time_v > 0)
    (2.0279, True)
    """
    lam = _check_lam(lam)
    degrees = DegreeDistribution.coerce(degrees)
    if not isinstance(replacement, (bool, np.bool_)):
        raise TypeError(f"replacement must be a bool, got {type(replacement).__name__}")
    for name, val in (("max_truncation", max_truncation),) + ((("truncation", truncation),) if truncation is not None else ()):
        V.integer(val, name, lo=2)
    tol = V.real(tol, "tol", lo=0, hi=1, lo_open=True, hi_open=True)
    pmf = np.asarray(degrees.pmf, dtype=float)
    q = equilibrium(lam, degrees, tol=1e-12)

    def extend(K):
        out = list(q[: K + 1])
        while len(out) < K + 1:        # beyond 1e-12: the plain recursion
            x = out[-1]
            out.append(lam * x * float(degrees.pgf(x)))
        return np.array(out)

    def solve(K):
        qK = extend(K)
        return qK, _refined_v(qK, lam, pmf, bool(replacement))

    if truncation is not None:
        qK, v = solve(int(truncation))
    elif degrees.max_degree == 0:
        K = max(q.size - 1, 2)
        qK, v = extend(K), np.zeros(K + 1)       # independent M/M/1 queues
    else:
        K = max(q.size - 1, 4)
        qK, v = solve(K)
        while True:
            K2 = K + max(2, K // 2)
            if K2 > max_truncation:
                raise RuntimeError(f"v has not converged at the truncation {K} (max_truncation = {max_truncation})")
            q2, v2 = solve(K2)
            dv = np.max(np.abs(v2[: K + 1] - v)) + np.max(np.abs(v2[K + 1:]), initial=0.0)
            dR = abs(math.fsum(v2) - math.fsum(v)) / lam
            scale = max(1.0, np.max(np.abs(v2)))
            K, qK, v = K2, q2, v2
            if dv <= tol * scale and dR <= tol * max(1.0, abs(math.fsum(v2)) / lam):
                break
    return Refined(q=qK, v=v, response_time=math.fsum(qK[1:].tolist()) / lam,
                   response_time_v=math.fsum(v[1:].tolist()) / lam, lam=lam,
                   degrees=degrees, replacement=bool(replacement), levels=int(qK.size - 1))
