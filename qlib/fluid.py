"""The fluid limit of JSQ on a sparse dynamic graph.

For ``i >= 1`` the occupancy ``q(i)`` (fraction of servers with at least ``i``
tasks, ``q(0) = 1``) follows

    dq(i)/dt = λ [ q(i-1) φ(q(i-1)) − q(i) φ(q(i)) ] − [ q(i) − q(i+1) ],

where ``φ`` is the generating function of the degree law ``p`` and ``λ < 1``
the arrival rate per server.  Its equilibrium is ``q*(0) = 1``,
``q*(i) = λ q*(i-1) φ(q*(i-1))``.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp

from .degrees import DegreeDistribution

__all__ = [
    "FluidSolution",
    "drift",
    "solve",
    "equilibrium",
    "response_time",
    "tail_bounds",
]

_MAX_LEVELS = 100_000
_TOP_TOL = 1e-12


def _check_lam(lam) -> float:
    ok = (
        not isinstance(lam, bool)
        and isinstance(lam, numbers.Real)
        and math.isfinite(float(lam))
        and 0.0 < float(lam) < 1.0
    )
    if not ok:
        raise ValueError(f"lam must be in (0, 1), got {lam!r}")
    return float(lam)


def _check_degrees(degrees) -> DegreeDistribution:
    if not isinstance(degrees, DegreeDistribution):
        raise TypeError(f"degrees must be a DegreeDistribution, got {type(degrees).__name__}")
    return degrees


def _check_q(q, name="q") -> np.ndarray:
    q = np.asarray(q, dtype=float)
    if q.ndim != 1 or q.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D occupancy vector q[0..K]")
    if not np.all(np.isfinite(q)):
        raise ValueError(f"{name} must be finite")
    return q


def drift(q, lam, degrees) -> np.ndarray:
    """Right-hand side of the fluid ODE on the truncated vector ``q[0..K]``.

    Parameters
    ----------
    q : array_like, shape (K+1,)
        Occupancy ``q(0), ..., q(K)``; ``q(0) = 1`` is held fixed and
        ``q(K+1) = 0`` is assumed.
    lam : float
        Arrival rate per server ``λ ∈ (0, 1)``.
    degrees : DegreeDistribution
        Degree law ``p`` with generating function ``φ``.

    Returns
    -------
    numpy.ndarray, shape (K+1,)
        ``dq/dt``; entry 0 is 0 and, for ``1 <= i <= K``,
        ``λ [g(q(i-1)) − g(q(i))] − [q(i) − q(i+1)]`` with ``g(x) = x φ(x)``.
    """
    lam = _check_lam(lam)
    _check_degrees(degrees)
    q = _check_q(q)
    return _drift(q, lam, degrees)


def _drift(q, lam, degrees):
    g = q * degrees.pgf(q)
    out = np.zeros_like(q)
    nxt = np.append(q[2:], 0.0)
    out[1:] = lam * (g[:-1] - g[1:]) - (q[1:] - nxt)
    return out


@dataclass(frozen=True)
class FluidSolution:
    """Solution of the fluid ODE.

    Attributes
    ----------
    t : numpy.ndarray, shape (T,)
        Times.
    q : numpy.ndarray, shape (T, K+1)
        ``q[k, i]`` is the occupancy ``q(t_k, i)``; column 0 is 1.
    """

    t: np.ndarray
    q: np.ndarray


def _integrate(lam, degrees, q0, t, K):
    y0 = np.zeros(K)
    y0[: len(q0) - 1] = q0[1:]
    pmf = degrees.pgf  # noqa: F841
    M = degrees.max_degree
    cder = degrees.pmf * np.arange(1, M + 2)  # coefficients of g'(x)=Σ (d+1) p(d) x^d

    def rhs(_t, y):
        qq = np.concatenate(([1.0], y))
        return _drift(qq, lam, degrees)[1:]

    def jac(_t, y):
        # banded (LSODA packed) form, uband = lband = 1:
        # row 0: superdiagonal (∂f_i/∂q(i+1) = 1), row 1: diagonal,
        # row 2: subdiagonal (∂f_i/∂q(i-1) = λ g'(q(i-1))).
        gp = np.polyval(cder[::-1], y)
        J = np.zeros((3, K))
        J[0, 1:] = 1.0
        J[1, :] = -lam * gp - 1.0
        J[2, :-1] = lam * gp[:-1]
        return J

    sol = solve_ivp(
        rhs,
        (0.0, float(t[-1])),
        y0,
        method="LSODA",
        t_eval=t,
        jac=jac,
        lband=1,
        uband=1,
        rtol=1e-10,
        atol=1e-14,
    )
    if not sol.success:
        raise RuntimeError(f"fluid ODE integration failed: {sol.message}")
    return sol


def solve(lam, degrees, q0, t) -> FluidSolution:
    """Integrate the fluid ODE from ``q0`` and report ``q`` at times ``t``.

    Parameters
    ----------
    lam : float
        Arrival rate per server ``λ ∈ (0, 1)``.
    degrees : DegreeDistribution
        Degree law ``p`` (generating function ``φ``).
    q0 : array_like
        Initial occupancy ``q(0, 0..K0)``, with ``q(0, 0) = 1``, entries in
        ``[0, 1]`` and non-increasing; ``[1.0]`` is the empty system.
    t : array_like
        Non-negative, non-decreasing output times.

    Returns
    -------
    FluidSolution
        With ``q`` of shape ``(len(t), K+1)``.

    Notes
    -----
    The truncation level ``K`` starts at the larger of ``len(q0)`` and the
    first level where ``q*(i) < 1e-12``, plus a margin; after integrating it
    checks that ``q(t, K)`` stays below 1e-12 on the whole grid and otherwise
    doubles ``K`` and retries (``RuntimeError`` after 6 tries).  Levels above
    ``K`` are set to 0, so the error from truncation is of order 1e-12.
    Integration: LSODA, ``rtol=1e-10``, ``atol=1e-14``, analytic tridiagonal
    Jacobian ``∂f_i/∂q(i-1) = λ g'(q(i-1))``, ``∂f_i/∂q(i) = −λ g'(q(i)) − 1``,
    ``∂f_i/∂q(i+1) = 1``, ``g(x) = x φ(x)``.
    """
    lam = _check_lam(lam)
    _check_degrees(degrees)
    q0 = _check_q(q0, "q0")
    if q0[0] != 1.0:
        raise ValueError(f"q0[0] must be 1, got {q0[0]}")
    if np.any(q0 < 0) or np.any(q0 > 1) or np.any(np.diff(q0) > 0):
        raise ValueError("q0 must be non-increasing with entries in [0, 1]")
    t = np.asarray(t, dtype=float)
    if t.ndim != 1 or t.size == 0 or not np.all(np.isfinite(t)) or t[0] < 0 or np.any(np.diff(t) < 0):
        raise ValueError("t must be a non-empty, finite, non-negative, non-decreasing 1-D array")
    # trim trailing zero levels of q0
    nz = np.nonzero(q0 > 0)[0]
    q0 = q0[: nz[-1] + 1]
    K_eq = len(equilibrium(lam, degrees, tol=_TOP_TOL)) - 1
    K = max(len(q0) - 1, K_eq) + 4
    for _ in range(6):
        sol = _integrate(lam, degrees, q0, t, K)
        if np.all(np.abs(sol.y[-1]) < _TOP_TOL):
            q = np.empty((t.size, K + 1))
            q[:, 0] = 1.0
            q[:, 1:] = sol.y.T
            if t[0] == 0.0:
                q[0, 1 : len(q0)] = q0[1:]
                q[0, len(q0) :] = 0.0
            q.setflags(write=False)
            t = t.copy()
            t.setflags(write=False)
            return FluidSolution(t=t, q=q)
        K *= 2
    raise RuntimeError(f"could not keep the top level below {_TOP_TOL} with K up to {K // 2}")


def equilibrium(lam, degrees, tol=1e-16) -> np.ndarray:
    """Equilibrium ``q*`` of the fluid ODE.

    ``q*(0) = 1`` and ``q*(i) = λ q*(i-1) φ(q*(i-1))`` (obtained by summing the
    ODE from level ``i`` upwards), so ``q*(1) = λ``.

    Parameters
    ----------
    lam : float
        ``λ ∈ (0, 1)``.
    degrees : DegreeDistribution
        Degree law ``p``.
    tol : float
        Stop at the first level ``K`` with ``q*(K) < tol``.

    Returns
    -------
    numpy.ndarray
        ``q*(0), ..., q*(K)``.

    Raises
    ------
    RuntimeError
        If more than 100000 levels are needed (possible when ``m = 0``, where
        the tail is geometric with ratio about ``λ p(0)``).
    """
    lam = _check_lam(lam)
    _check_degrees(degrees)
    if not (isinstance(tol, numbers.Real) and 0 < tol < 1):
        raise ValueError(f"tol must be in (0, 1), got {tol!r}")
    c = degrees.pmf[::-1].tolist()
    out = [1.0]
    x = 1.0
    while x >= tol:
        if len(out) > _MAX_LEVELS:
            raise RuntimeError(f"equilibrium needs more than {_MAX_LEVELS} levels to reach {tol}")
        phi = 0.0
        for a in c:  # Horner
            phi = phi * x + a
        # φ(1) = 1 exactly in exact arithmetic, so q*(1) = λ exactly
        x = lam if len(out) == 1 else lam * x * phi
        out.append(x)
    return np.array(out)


def response_time(lam, degrees) -> float:
    """Mean response time ``R = Σ_{i≥1} q*(i) / λ`` (Little's law)."""
    q = equilibrium(lam, degrees)
    return math.fsum(q[1:].tolist()) / float(lam)


def tail_bounds(lam, degrees, levels):
    """Closed-form lower and upper bounds on ``q*(i)``.

    Write ``m = min{d: p(d)>0}``, ``M = max{d: p(d)>0}``, ``d̄`` the mean,
    ``f(x) = λ x φ(x)`` (increasing on ``[0, 1]``), so ``q*(i) = f(q*(i-1))``.
    Any ``h <= f`` (``h >= f``) that is increasing gives, by induction,
    ``h^{i}(1) <= q*(i)`` (``>=``).  Each bound below is used from ``q*(1) = λ``.

    Upper bounds (the minimum is returned):

    * ``q*(i) <= λ (λ φ(λ))^{i-1}`` (i ≥ 1): ``q*(i-1) <= λ`` for ``i >= 2`` and
      ``φ`` is increasing, so ``q*(i) <= λ φ(λ) q*(i-1)``.  Implies ``λ^i``.
    * ``m > 0``: ``q*(i) <= λ^{((m+1)^i − 1)/m}``: ``φ(x) <= x^m`` on ``[0,1]``,
      so ``q*(i) <= λ q*(i-1)^{m+1}``.

    Lower bounds (the maximum is returned):

    * ``q*(i) >= λ^{(m+1)^{i-1}} (λ p(m))^{((m+1)^{i-1} − 1)/m}``
      (for ``m = 0``: ``λ (λ p(0))^{i-1}``): ``φ(x) >= p(m) x^m``, so
      ``q*(i) >= λ p(m) q*(i-1)^{m+1}``, started at ``q*(1) = λ``.
    * ``q*(i) >= λ^{((M+1)^i − 1)/M}``: ``φ(x) >= x^M`` on ``[0, 1]``.
    * Jensen (Prop. 7): ``q*(i) >= λ^{((d̄+1)^i − 1)/d̄}`` (``λ^i`` if
      ``d̄ = 0``): ``x ↦ x^d`` is convex in ``d``, so ``φ(x) >= x^{d̄}``.

    At ``i = 0`` both bounds are 1.

    Parameters
    ----------
    lam : float
        ``λ ∈ (0, 1)``.
    degrees : DegreeDistribution
        Degree law ``p``.
    levels : array_like of int
        Levels ``i >= 0``.

    Returns
    -------
    (lower, upper) : tuple of numpy.ndarray
        Bound values (computed as exponentials of log-bounds; they may
        underflow to 0).
    """
    lam = _check_lam(lam)
    _check_degrees(degrees)
    i = np.asarray(levels)
    if i.dtype.kind not in "iu":
        raise TypeError("levels must be integers")
    if np.any(i < 0):
        raise ValueError("levels must be >= 0")
    i = i.astype(float)
    L = math.log(lam)
    m, M, dbar = degrees.min_degree, degrees.max_degree, degrees.mean
    pm = float(degrees.pmf[m])
    j = np.maximum(i - 1.0, 0.0)  # i-1 for i >= 1

    def dexp(a, k):  # ((a+1)^k - 1)/a, with a = 0 giving k
        if a == 0:
            return k
        with np.errstate(over="ignore"):
            return np.expm1(k * math.log1p(a)) / a

    # upper bounds (log)
    Lphi = math.log(lam * float(degrees.pgf(lam)))
    up = L + j * Lphi
    if m > 0:
        with np.errstate(invalid="ignore"):
            up = np.minimum(up, L * dexp(m, i))
    # lower bounds (log)
    with np.errstate(over="ignore", invalid="ignore"):
        if m == 0:
            lo = L + j * math.log(lam * pm)
        else:
            lo = L * (dexp(m, j) * m + 1.0) + math.log(lam * pm) * dexp(m, j)
        lo = np.maximum(lo, L * dexp(M, i))
        lo = np.maximum(lo, L * dexp(dbar, i))
    lo = np.where(i == 0, 0.0, lo)
    up = np.where(i == 0, 0.0, up)
    with np.errstate(under="ignore"):
        return np.exp(lo), np.exp(up)
