"""The fluid limit of JSQ on a sparse dynamic graph.

For ``i >= 1`` the occupancy ``q(i)`` (fraction of servers with at least ``i``
tasks, ``q(0) = 1``) follows

    dq(i)/dt = λ [ q(i-1) φ(q(i-1)) − q(i) φ(q(i)) ] − [ q(i) − q(i+1) ],

where ``φ`` is the generating function of the degree law ``p`` and ``λ < 1``
the arrival rate per server.  Its equilibrium is ``q*(0) = 1``,
``q*(i) = λ q*(i-1) φ(q*(i-1))``.

The tail of the equilibrium (bounds, log-space recursion) is in
:mod:`qlib.meanfield.tails`.
"""
from __future__ import annotations

import math
import numpy as np
from dataclasses import dataclass
from qlib._lazy import scipy_integrate as _scipy_integrate
from qlib import _validate as V
from .degrees import DegreeDistribution
from typing import TYPE_CHECKING
from qlib.stats._results import fields_eq
if TYPE_CHECKING:   # names for the annotations only
    from numpy.typing import ArrayLike
    from qlib._types import DegreeLike

__all__ = ['FluidSolution', 'drift', 'solve', 'equilibrium', 'response_time', 'jacobian', 'relaxation_rate', 'jacobian_pivots']

_MAX_LEVELS = 100_000
_TOP_TOL = 1e-12


def _check_lam(lam) -> float:
    # a wrong type raises qlib._validate.InvalidType, a TypeError that is also
    # the ValueError this check raised before
    return V.real(lam, "lam", lo=0, hi=1, lo_open=True, hi_open=True)


def _check_degrees(degrees) -> DegreeDistribution:
    # one rule everywhere: a law, a mapping {degree: prob}, a pmf sequence or a graph
    return DegreeDistribution.coerce(degrees)


def _check_q(q, name="q") -> np.ndarray:
    """A finite, non-empty 1-D float array (a truncated occupancy vector)."""
    try:
        q = np.asarray(q, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a 1-D occupancy vector q[0..K]") from None
    if q.ndim != 1 or q.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D occupancy vector q[0..K], "
                         f"got shape {q.shape}")
    if not np.all(np.isfinite(q)):
        raise ValueError(f"{name} must be finite")
    return q


def _check_occupancy(q, name="q") -> np.ndarray:
    """``_check_q``, and a proper occupancy: q(0) = 1, entries in [0, 1],
    non-increasing."""
    q = _check_q(q, name)
    if q[0] != 1.0:
        raise ValueError(f"{name}[0] must be 1 (q(0) = 1 by definition), got {q[0]}")
    if np.any(q < 0) or np.any(q > 1):
        raise ValueError(f"{name} must have entries in [0, 1]")
    if np.any(np.diff(q) > 0):
        raise ValueError(f"{name} must be non-increasing (q(i) is the fraction with "
                         "at least i tasks)")
    return q


def drift(q: ArrayLike, lam: float, degrees: DegreeLike) -> np.ndarray:
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
    degrees = _check_degrees(degrees)
    q = _check_q(q)
    return _drift(q, lam, degrees)


def _drift(q, lam, degrees):
    g = q * degrees.pgf(q)
    out = np.zeros_like(q)
    nxt = np.append(q[2:], 0.0)
    out[1:] = lam * (g[:-1] - g[1:]) - (q[1:] - nxt)
    return out


@fields_eq
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

    sol = _scipy_integrate.solve_ivp(
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


def solve(lam: float, degrees: DegreeLike, q0: ArrayLike, t: ArrayLike) -> FluidSolution:
    """Integrate the fluid ODE from ``q0`` at time 0 and report ``q`` at times ``t``.

    Parameters
    ----------
    lam : float
        Arrival rate per server ``λ ∈ (0, 1)``.
    degrees : DegreeDistribution
        Degree law ``p`` (generating function ``φ``).
    q0 : array_like
        Occupancy ``q(0, 0..K0)`` at time 0: ``q0[0] = 1``, entries in
        ``[0, 1]``, non-increasing; levels above ``K0`` are 0.  ``[1.0]`` is
        the empty system.
    t : array_like
        One-dimensional, finite output times with ``0 <= t[0] <= t[1] <= ...``
        (times since the start; ``t = 0`` returns ``q0`` itself).

    Returns
    -------
    FluidSolution
        ``t`` (a copy) and ``q`` of shape ``(len(t), K+1)``.

    Raises
    ------
    ValueError
        If ``lam`` is not in ``(0, 1)`` (nan included), ``q0`` is not a
        non-increasing vector in ``[0, 1]`` starting with 1, or ``t`` is not a
        non-empty, finite, non-negative, non-decreasing 1-D array.
    TypeError
        If ``degrees`` is not a :class:`~qlib.meanfield.degrees.DegreeDistribution`.
    RuntimeError
        If the integrator fails or the top level cannot be kept below 1e-12.

    Notes
    -----
    The truncation level ``K`` starts at the larger of ``len(q0) - 1`` and the
    first level where ``q*(i) < 1e-12``, plus 4; after integrating it checks
    that ``q(t, K)`` stays below 1e-12 at every output time and otherwise
    doubles ``K`` and retries (``RuntimeError`` after 6 tries).  Levels above
    ``K`` are set to 0, so the error from truncation is of order 1e-12.
    Integration: LSODA, ``rtol=1e-10``, ``atol=1e-14``, analytic tridiagonal
    Jacobian ``∂f_i/∂q(i-1) = λ g'(q(i-1))``, ``∂f_i/∂q(i) = −λ g'(q(i)) − 1``,
    ``∂f_i/∂q(i+1) = 1``, ``g(x) = x φ(x)``.

    Examples
    --------
    >>> import numpy as np
    >>> from qlib import DegreeDistribution
    >>> from qlib.meanfield import fluid
    >>> sol = fluid.solve(0.9, DegreeDistribution.point(2), np.array([1.0, 0.0]), [0.0, 50.0])
    >>> round(float(sol.q[-1][1]), 3)
    0.9
    """
    lam = _check_lam(lam)
    degrees = _check_degrees(degrees)
    q0 = _check_occupancy(q0, "q0")
    try:
        t = np.asarray(t, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("t must be a 1-D array of real times") from None
    if t.ndim != 1 or t.size == 0:
        raise ValueError(f"t must be a non-empty 1-D array of times, got shape {t.shape}")
    if not np.all(np.isfinite(t)):
        raise ValueError("t must be finite")
    if t[0] < 0:
        raise ValueError(f"t must be >= 0 (time since q0), got t[0] = {t[0]}")
    if np.any(np.diff(t) < 0):
        raise ValueError("t must be non-decreasing")
    # trim trailing zero levels of q0
    nz = np.nonzero(q0 > 0)[0]
    q0 = q0[: nz[-1] + 1]
    K_eq = len(equilibrium(lam, degrees, tol=_TOP_TOL)) - 1
    K = max(len(q0) - 1, K_eq) + 4
    for _ in range(6):
        q = np.zeros((t.size, K + 1))
        q[:, 0] = 1.0
        start = t == 0.0
        q[np.ix_(start, np.arange(1, len(q0)))] = q0[1:]
        if t[-1] > 0:
            later = ~start
            # solve_ivp wants strictly increasing t_eval; repeated times share a value
            tu, inv = np.unique(t[later], return_inverse=True)
            sol = _integrate(lam, degrees, q0, tu, K)
            q[later, 1:] = sol.y.T[inv]
        if np.all(np.abs(q[:, -1]) < _TOP_TOL):
            q.setflags(write=False)
            t = t.copy()
            t.setflags(write=False)
            return FluidSolution(t=t, q=q)
        K *= 2
    raise RuntimeError(f"could not keep the top level below {_TOP_TOL} with K up to {K // 2}")


def _two_sum(a, b):
    """Error-free sum: ``a + b = s + e`` exactly (Knuth's TwoSum)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def equilibrium(lam: float, degrees: DegreeLike, tol: float = 1e-16) -> np.ndarray:
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
        Stop at the first level ``K`` with ``q*(K) < tol``; ``0 < tol < 1``.

    Returns
    -------
    numpy.ndarray
        ``q*(0), ..., q*(K)``.  For ``p = δ_0`` (independent M/M/1 queues)
        this is the closed form ``λ^i``, ``K = ⌈log tol / log λ⌉`` levels
        (millions near ``λ = 1``: ``λ = 1 − 10⁻⁶`` needs about 3.7·10⁷).

    Raises
    ------
    ValueError
        If ``lam`` is not in ``(0, 1)`` or ``tol`` not in ``(0, 1)``.
    RuntimeError
        If more than 100000 levels are needed for a law with ``m = 0`` other
        than ``δ_0`` (the tail is geometric with ratio about ``λ p(0)``), or
        if, for ``p = δ_0``, the ``K + 1`` levels would take more than 4 GiB
        (``λ`` within about ``7·10⁻⁸`` of 1 at ``tol = 1e-16``); the message
        names ``lam``, ``tol`` and the estimate.

    Notes
    -----
    Write ``m`` for the minimum degree and ``φ(x) = x^m ψ(x)``, ``ψ(x) =
    Σ_{k≥0} p(m+k) x^k``, so ``p(m) <= ψ <= 1`` on ``[0, 1]``.  Iterating
    ``q*(i) = λ q*(i-1)^{m+1} ψ(q*(i-1))`` gives the exact factorisation

        q*(i) = λ^{a_i} exp(S_i),   a_i = (m+1) a_{i-1} + 1,
        S_i = (m+1) S_{i-1} + log ψ(q*(i-1)),   a_0 = S_0 = 0,

    with ``a_i`` an integer (``((m+1)^i − 1)/m``, or ``i`` for ``m = 0``) held
    exactly, and ``S_i <= 0``.  The forward recursion in ``q`` (or in
    ``log q``) injects a rounding error ``~ε`` (``~ε |log q|``) at every
    level, which the map multiplies by about ``1 + φ'(1)`` per level; for a
    point mass and ``λ → 1`` that reaches ``10^{-13}``.  Here instead:

    * ``λ^{a_i}`` is one call of ``pow`` (error below one ulp), so for a
      point mass (``ψ ≡ 1``, ``S ≡ 0``) the result is the closed form
      ``λ^{((d+1)^i − 1)/d}`` to within about an ulp at every level;
    * ``log ψ(x)`` is computed to *relative* accuracy: where ``ψ(x) > 1/2`` as
      ``log1p(Σ_k p(m+k) expm1(k log x))`` (terms of one sign, no
      cancellation, and small when ``x`` is near 1, where the old recursion
      lost its accuracy), otherwise as ``log`` of Horner's ``ψ(x) >= p(m) > 0``
      (positive terms), so ``log ψ`` never sees 0 even when ``φ(x)`` is tiny;
    * ``S_i`` is carried in double-double arithmetic, so the sum of up to
      thousands of terms (``m = 0``) adds no error of its own.

    The relative error of ``q*(i)`` is then a few ``ε |log q*(i)|``
    (``tests/test_fluid.py`` checks it against 60-digit arithmetic with a
    bound derived there).

    Examples
    --------
    >>> from qlib import DegreeDistribution
    >>> from qlib.meanfield import fluid
    >>> q = fluid.equilibrium(0.9, DegreeDistribution.point(2))
    >>> [round(float(x), 4) for x in q[:4]]
    [1.0, 0.9, 0.6561, 0.2542]
    """
    lam = _check_lam(lam)
    degrees = _check_degrees(degrees)
    tol = V.real(tol, "tol", lo=0, hi=1, lo_open=True, hi_open=True)
    if degrees.max_degree == 0 and math.log(tol) / math.log(lam) > _MAX_LEVELS:
        return _mm1_tail(lam, tol)
    m = degrees.min_degree
    pmf = degrees.pmf.tolist()
    tail = [(k, pk) for k, pk in enumerate(pmf[m + 1 :], 1) if pk > 0]  # p(m+k), k >= 1
    horner = pmf[m:][::-1]  # coefficients of ψ, highest first
    loglam = math.log(lam)
    out = [1.0]
    x, logx = 1.0, 0.0
    a, S, S_lo = 0, 0.0, 0.0
    while x >= tol:
        if len(out) > _MAX_LEVELS:
            raise RuntimeError(f"equilibrium needs more than {_MAX_LEVELS} levels to reach {tol}")
        ell = 0.0  # log ψ(q*(i-1)); ψ(1) = 1 and ψ ≡ 1 for a point mass
        if tail and len(out) > 1:
            z = 0.0  # ψ(x) − 1 = Σ_k p(m+k) (x^k − 1) <= 0
            for k, pk in tail:
                z += pk * math.expm1(k * logx)
            if z > -0.5:
                ell = math.log1p(z)
            else:
                psi = 0.0
                for c in horner:
                    psi = psi * x + c
                ell = math.log(psi)
        a = (m + 1) * a + 1
        if ell or S:
            # (S, S_lo) <- (m+1) (S, S_lo) + ell in double-double: (m+1) S as
            # m error-free additions, then ell; S_lo carries what rounded away
            h, lo = S, (m + 1) * S_lo
            for _ in range(m):
                h, e = _two_sum(h, S)
                lo += e
            h, e = _two_sum(h, ell)
            S, S_lo = _two_sum(h, lo + e)
        logx = a * loglam + S
        x = math.pow(lam, a)
        if S:
            x *= math.exp(S) * (1.0 + S_lo)
        out.append(x)
    return np.array(out)


def _mm1_tail(lam, tol):
    """``q*(i) = λ^i`` for ``i = 0..K``, ``K`` the first level below ``tol``
    (``p = δ_0``: the M/M/1 law in closed form, the whole geometric tail)."""
    K0 = math.ceil(math.log(tol) / math.log(lam)) + 1
    try:
        V.check_memory(8 * (K0 + 1), "lam", lam, what=f"the {K0 + 1} levels q*(0..K) that "
                       f"fall to tol = {tol} (q*(i) = lam^i)")
    except ValueError as err:  # the RuntimeError equilibrium documents for too many levels
        raise RuntimeError(str(err)) from None
    # exp(i log λ): relative error about 2 ε |log q*(i)| (the bound of the
    # recursion), at a fraction of pow's cost; q*(1) = λ exactly
    q = np.exp(np.arange(K0 + 1, dtype=float) * math.log(lam))
    q[1] = lam
    return q[: int(np.argmax(q < tol)) + 1]


def _gprime(x, degrees):
    """``g'(x) = Σ_d (d+1) p(d) x^d`` for ``g(x) = x φ(x)``."""
    c = degrees.pmf * np.arange(1, degrees.max_degree + 2)
    return np.polyval(c[::-1], x)


def jacobian(q: ArrayLike, lam: float, degrees: DegreeLike) -> np.ndarray:
    """Jacobian of the drift on the free levels ``1..K`` at ``q[0..K]``.

    Parameters
    ----------
    q : array_like, shape (K+1,)
        Occupancy with ``q(0) = 1`` (held fixed) and ``q(K+1) = 0``.
    lam : float
        ``λ ∈ (0, 1)``.
    degrees : DegreeDistribution
        Degree law ``p``.

    Returns
    -------
    numpy.ndarray, shape (K, K)
        ``J[i-1, j-1] = ∂ f_i / ∂ q(j)``: tridiagonal with
        ``∂f_i/∂q(i-1) = λ g'(q(i-1))``, ``∂f_i/∂q(i) = −λ g'(q(i)) − 1``,
        ``∂f_i/∂q(i+1) = 1``, ``g(x) = x φ(x)``.
    """
    lam = _check_lam(lam)
    degrees = _check_degrees(degrees)
    q = _check_q(q)
    if q.size < 2:
        raise ValueError("q must have at least one free level (length >= 2)")
    gp = _gprime(q[1:], degrees)
    K = q.size - 1
    J = np.diag(-lam * gp - 1.0) + np.diag(np.ones(K - 1), 1) + np.diag(lam * gp[:-1], -1)
    return J


def relaxation_rate(lam: float, degrees: DegreeLike, tol: float = 1e-12) -> float:
    """Spectral gap ``γ`` of the fluid ODE linearised at ``q*``.

    ``γ = −max eig J(q*)``, with ``J`` from :func:`~qlib.meanfield.fluid.jacobian` on the levels
    ``1..K``, ``K`` the first level with ``q*(K) < tol`` (the truncation
    :func:`~qlib.meanfield.fluid.solve` uses for ``tol = 1e-12``).  Near ``q*`` deviations decay like
    ``exp(−γ t)``; ``1/γ`` is the relaxation time.

    Notes
    -----
    ``J`` is tridiagonal with positive off-diagonal products
    ``λ g'(q*(i))·1``, so ``D^{-1} J D`` is symmetric for the diagonal ``D``
    with ``D_{i+1}/D_i = sqrt(λ g'(q*(i)))``; all eigenvalues are real and
    are computed with ``scipy.linalg.eigh_tridiagonal``.  For ``φ ≡ 1``
    (independent M/M/1 queues) ``γ → (1 − √λ)²`` as ``tol → 0``.
    """
    from scipy.linalg import eigh_tridiagonal

    q = equilibrium(lam, degrees, tol=tol)
    lam = float(lam)
    gp = _gprime(q[1:], degrees)
    diag = -lam * gp - 1.0
    off = np.sqrt(lam * gp[:-1])
    K = diag.size
    ev = eigh_tridiagonal(diag, off, eigvals_only=True, select="i", select_range=(K - 1, K - 1))
    return float(-ev[0])


def jacobian_pivots(lam: float, degrees: DegreeLike, shift: float,
                    tol: float = 1e-12) -> np.ndarray:
    """Pivots of ``sI − J(q*)`` eliminated from the deepest level up.

    ``J`` is the Jacobian of :func:`~qlib.meanfield.fluid.relaxation_rate` on the levels ``1..K``
    (``K`` the first level with ``q*(K) < tol``), with ``c_i = λ g'(q*(i))``
    below the diagonal, ``−1 − c_i`` on it and 1 above.  The pivots are

        π_K = s + 1 + c_K,    π_i = s + 1 + c_i − c_i / π_{i+1}   (i = K−1, ..., 1).

    Parameters
    ----------
    lam : float
        ``λ ∈ (0, 1)``.
    degrees : DegreeDistribution
        Degree law ``p``.
    shift : float
        The shift ``s`` (a real number; not a resampling rate).
    tol : float
        Truncation, as for :func:`~qlib.meanfield.fluid.relaxation_rate`; ``q*(K)`` must stay above
        ``1e-300`` so that every ``c_i > 0`` when ``p(0) = 0``.

    Returns
    -------
    numpy.ndarray, shape (K,)
        ``π_1, ..., π_K``.

    Raises
    ------
    ValueError
        If ``lam`` or ``tol`` is out of range, ``shift`` is not finite, or some
        ``c_i`` is 0 (``tol`` too small for a law with ``p(0) = 0``).

    Notes
    -----
    ``J`` is similar, by a positive diagonal matrix, to the symmetric ``S``
    with off-diagonal ``√c_i`` and the same diagonal; ``π`` are the pivots of
    the ``UDUᵀ`` factorisation of ``sI − S`` (Schur complements from level
    ``K`` up).  Two uses:

    * **Sylvester.** All ``π_i > 0`` iff ``sI − S`` is positive definite, i.e.
      ``s > max eig J``.
    * **Collatz–Wielandt.** If ``π_2, ..., π_K > 0`` the vector ``v_1 = 1``,
      ``v_{i+1} = v_i √c_i / π_{i+1}`` is positive, ``(Sv)_i / v_i = s`` for
      ``i >= 2`` and ``(Sv)_1 / v_1 = s − π_1``.  ``S`` is Metzler
      (off-diagonal entries ``>= 0``) and irreducible, so its top eigenvalue
      lies between the smallest and largest of these ratios: between ``s``
      and ``s − π_1``.  With ``s = −γ`` from :func:`~qlib.meanfield.fluid.relaxation_rate` this
      encloses ``γ`` without trusting the eigensolver.

    Both hold up to the rounding of the recursion (a few ``ε`` relative per
    pivot).
    """
    lam = _check_lam(lam)
    degrees = _check_degrees(degrees)
    shift = V.real(shift, "shift")
    q = equilibrium(lam, degrees, tol=tol)
    c = lam * _gprime(q[1:], degrees)
    if np.any(c <= 0):
        raise ValueError(f"tol = {tol} reaches levels where λ g'(q*) underflows to 0; use a larger tol")
    piv = np.empty(c.size)
    piv[-1] = float(shift) + 1.0 + c[-1]
    for i in range(c.size - 2, -1, -1):
        piv[i] = float(shift) + 1.0 + c[i] - c[i] / piv[i + 1]
    return piv


def response_time(lam: float, degrees: DegreeLike) -> float:
    """Mean response time ``R = Σ_{i≥1} q*(i) / λ`` (Little's law).

    Examples
    --------
    >>> from qlib import DegreeDistribution
    >>> from qlib.meanfield import fluid
    >>> round(fluid.response_time(0.9, DegreeDistribution.point(2)), 4)
    2.0279
    """
    q = equilibrium(lam, degrees)
    return math.fsum(q[1:].tolist()) / float(lam)
