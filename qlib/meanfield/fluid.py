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
    "log_equilibrium",
    "log_equilibrium_rounding",
    "tail_crossover",
    "jacobian",
    "relaxation_rate",
    "jacobian_pivots",
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
    """:func:`_check_q`, and a proper occupancy: q(0) = 1, entries in [0, 1],
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
        If ``degrees`` is not a :class:`DegreeDistribution`.
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
    """
    lam = _check_lam(lam)
    _check_degrees(degrees)
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
        Stop at the first level ``K`` with ``q*(K) < tol``; ``0 < tol < 1``.

    Returns
    -------
    numpy.ndarray
        ``q*(0), ..., q*(K)``.

    Raises
    ------
    ValueError
        If ``lam`` is not in ``(0, 1)`` or ``tol`` not in ``(0, 1)``.
    RuntimeError
        If more than 100000 levels are needed (possible when ``m = 0``, where
        the tail is geometric with ratio about ``λ p(0)``).

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
    """
    lam = _check_lam(lam)
    _check_degrees(degrees)
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not (0 < float(tol) < 1):
        raise ValueError(f"tol must be in (0, 1), got {tol!r}")
    tol = float(tol)
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


def _gprime(x, degrees):
    """``g'(x) = Σ_d (d+1) p(d) x^d`` for ``g(x) = x φ(x)``."""
    c = degrees.pmf * np.arange(1, degrees.max_degree + 2)
    return np.polyval(c[::-1], x)


def jacobian(q, lam, degrees) -> np.ndarray:
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
    _check_degrees(degrees)
    q = _check_q(q)
    if q.size < 2:
        raise ValueError("q must have at least one free level (length >= 2)")
    gp = _gprime(q[1:], degrees)
    K = q.size - 1
    J = np.diag(-lam * gp - 1.0) + np.diag(np.ones(K - 1), 1) + np.diag(lam * gp[:-1], -1)
    return J


def relaxation_rate(lam, degrees, tol=1e-12) -> float:
    """Spectral gap ``γ`` of the fluid ODE linearised at ``q*``.

    ``γ = −max eig J(q*)``, with ``J`` from :func:`jacobian` on the levels
    ``1..K``, ``K`` the first level with ``q*(K) < tol`` (the truncation
    :func:`solve` uses for ``tol = 1e-12``).  Near ``q*`` deviations decay like
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


def jacobian_pivots(lam, degrees, mu, tol=1e-12) -> np.ndarray:
    """Pivots of ``μI − J(q*)`` eliminated from the deepest level up.

    ``J`` is the Jacobian of :func:`relaxation_rate` on the levels ``1..K``
    (``K`` the first level with ``q*(K) < tol``), with ``c_i = λ g'(q*(i))``
    below the diagonal, ``−1 − c_i`` on it and 1 above.  The pivots are

        π_K = μ + 1 + c_K,    π_i = μ + 1 + c_i − c_i / π_{i+1}   (i = K−1, ..., 1).

    Parameters
    ----------
    lam : float
        ``λ ∈ (0, 1)``.
    degrees : DegreeDistribution
        Degree law ``p``.
    mu : float
        The shift ``μ`` (a real number).
    tol : float
        Truncation, as for :func:`relaxation_rate`; ``q*(K)`` must stay above
        ``1e-300`` so that every ``c_i > 0`` when ``p(0) = 0``.

    Returns
    -------
    numpy.ndarray, shape (K,)
        ``π_1, ..., π_K``.

    Raises
    ------
    ValueError
        If ``lam`` or ``tol`` is out of range, ``mu`` is not finite, or some
        ``c_i`` is 0 (``tol`` too small for a law with ``p(0) = 0``).

    Notes
    -----
    ``J`` is similar, by a positive diagonal matrix, to the symmetric ``S``
    with off-diagonal ``√c_i`` and the same diagonal; ``π`` are the pivots of
    the ``UDUᵀ`` factorisation of ``μI − S`` (Schur complements from level
    ``K`` up).  Two uses:

    * **Sylvester.** All ``π_i > 0`` iff ``μI − S`` is positive definite, i.e.
      ``μ > max eig J``.
    * **Collatz–Wielandt.** If ``π_2, ..., π_K > 0`` the vector ``v_1 = 1``,
      ``v_{i+1} = v_i √c_i / π_{i+1}`` is positive, ``(Sv)_i / v_i = μ`` for
      ``i >= 2`` and ``(Sv)_1 / v_1 = μ − π_1``.  ``S`` is Metzler
      (off-diagonal entries ``>= 0``) and irreducible, so its top eigenvalue
      lies between the smallest and largest of these ratios: between ``μ``
      and ``μ − π_1``.  With ``μ = −γ`` from :func:`relaxation_rate` this
      encloses ``γ`` without trusting the eigensolver.

    Both hold up to the rounding of the recursion (a few ``ε`` relative per
    pivot).
    """
    lam = _check_lam(lam)
    _check_degrees(degrees)
    if isinstance(mu, bool) or not isinstance(mu, numbers.Real) or not math.isfinite(float(mu)):
        raise ValueError(f"mu must be a finite real number, got {mu!r}")
    q = equilibrium(lam, degrees, tol=tol)
    c = lam * _gprime(q[1:], degrees)
    if np.any(c <= 0):
        raise ValueError(f"tol = {tol} reaches levels where λ g'(q*) underflows to 0; use a larger tol")
    piv = np.empty(c.size)
    piv[-1] = float(mu) + 1.0 + c[-1]
    for i in range(c.size - 2, -1, -1):
        piv[i] = float(mu) + 1.0 + c[i] - c[i] / piv[i + 1]
    return piv


def response_time(lam, degrees) -> float:
    """Mean response time ``R = Σ_{i≥1} q*(i) / λ`` (Little's law)."""
    q = equilibrium(lam, degrees)
    return math.fsum(q[1:].tolist()) / float(lam)


def _tail_log_psi(x, degrees):
    """``log ψ(x)`` for ``ψ(x) = φ(x)/x^m = Σ_{k≥0} p(m+k) x^k``, vectorised.

    Where ``ψ(x) > 1/2`` it is ``log1p(Σ_k p(m+k) expm1(k log x))`` (terms of
    one sign, accurate near ``x = 1``), otherwise ``log`` of Horner's
    ``ψ(x) >= p(m) > 0``; ``x = 0`` gives ``log p(m)`` exactly.
    """
    m = degrees.min_degree
    c = degrees.pmf[m:]
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore"):
        logx = np.log(x)
    z = np.zeros_like(x)
    for k in range(1, len(c)):
        if c[k] > 0:
            z += c[k] * np.expm1(k * logx)
    horner = np.log(np.polyval(c[::-1], x))
    with np.errstate(invalid="ignore"):
        near = np.log1p(np.maximum(z, -0.5))
    return np.where(z > -0.5, near, horner)


def _tail_weights(m, k):
    """``e_m(k) = ((m+1)^k − 1)/m`` (``k`` for ``m = 0``), float, may be inf."""
    k = np.asarray(k, dtype=float)
    if m == 0:
        return k
    with np.errstate(over="ignore"):
        return np.expm1(k * math.log1p(m)) / m


def _tail_unroll(m, s, n):
    """``S_i = Σ_{k=1}^{i-1} (m+1)^{i-1-k} s_k`` for ``i = 1..n``.

    ``s[k-1] = s_k`` is given for ``k = 1..K`` (``K = len(s)``); for ``k > K`` the
    last value ``s_K`` is used (``S_i = (m+1)^{i-K} S_K + e_m(i-K) s_K``).
    Returns an array indexed by ``i = 0..n`` (entries 0 and 1 are 0).
    """
    K = len(s)
    S = np.zeros(n + 1)
    top = min(n, K + 1)
    if m == 0:
        S[2 : top + 1] = np.cumsum(s[: top - 1])
    else:
        for i in range(2, top + 1):
            S[i] = (m + 1) * S[i - 1] + s[i - 2]
    if n > K + 1:
        j = np.arange(1, n - K)  # i = K+1+j, extension with s_k = s_K for k > K
        with np.errstate(over="ignore", invalid="ignore"):
            grow = S[K + 1] * (m + 1.0) ** j if S[K + 1] != 0 else 0.0
            ext = s[-1] * _tail_weights(m, j) if s[-1] != 0 else 0.0
            S[K + 2 :] = grow + ext
    return S


_TAIL_KMAX = 100_000


def tail_bounds(lam, degrees, levels, log=False):
    """Lower and upper bounds on ``q*(i)`` (Propositions 6 and 7, chapter *tails*).

    Notation: ``m = min{d: p(d) > 0}``, ``d̄`` the mean degree,
    ``ψ(x) = φ(x)/x^m = Σ_{k≥0} p(m+k) x^k`` (increasing, ``p(m) <= ψ <= 1`` on
    ``[0, 1]``), ``e_c(k) = ((c+1)^k − 1)/c`` (``e_0(k) = k``) and
    ``a_i = e_m(i)``.  The equilibrium factorises exactly as

        q*(i) = λ^{a_i} Π_{k=1}^{i-1} ψ(q*(k))^{(m+1)^{i-1-k}},

    so bounds ``ℓ_k <= q*(k) <= u_k`` (``k < i``) give bounds on ``q*(i)`` by
    putting ``ψ(ℓ_k)``, ``ψ(u_k)`` in the product.  With ``i >= 1``:

    * crude: ``L_i = λ^{a_i} p(m)^{a_{i-1}} <= q*(i) <= U_i = λ^{a_i} ψ(λ)^{a_{i-1}}``
      (from ``0 <= q*(k) <= λ``);
    * Jensen (Prop. 7): ``J_i = λ^{e_{d̄}(i)} <= q*(i)``, since ``φ(x) >= x^{d̄}``;
    * bootstrapped: ``W_i = λ^{a_i} Π_k ψ(max(L_k, J_k))^{(m+1)^{i-1-k}}`` and
      ``V_i = λ^{a_i} Π_k ψ(U_k)^{(m+1)^{i-1-k}}``.

    Returned: ``lower = max(W_i, J_i)`` (``W_i >= L_i``) and
    ``upper = min(V_i, U_i)`` (``V_i <= U_i`` in exact arithmetic); both are
    1 at ``i = 0`` and equal to ``q*(i)`` for ``i <= 2``.  For ``m = 0`` they are
    geometric with the exact ratio ``λ p(0)``; for ``m > 0`` double
    exponential, ``log q ≍ (m+1)^i``.

    Parameters
    ----------
    lam : float
        ``λ ∈ (0, 1)``.
    degrees : DegreeDistribution
        Degree law ``p``.
    levels : array_like of int
        Levels ``i >= 0``.
    log : bool, optional
        Return natural logarithms of the bounds (no underflow; default False).

    Returns
    -------
    (lower, upper) : tuple of numpy.ndarray
        The bounds (or their logs), same shape as ``levels``.

    Notes
    -----
    Everything is computed in log space; with ``log=False`` the result is
    ``exp`` of the log bound, so bounds below about ``1e-308`` lose relative
    accuracy (subnormals) and underflow to 0.  Where the log bound itself is
    below ``-DBL_MAX`` (``m > 0``, a few hundred levels deep) the log lower
    bound is ``-inf`` and the log upper bound ``-DBL_MAX``, both still valid.
    The products are computed for
    ``k <= 100000``; beyond, ``ψ(U_k)`` is replaced by ``ψ(U_K)`` and
    ``ψ(max(L_k, J_k))`` by ``p(m)``, which keeps both bounds valid.
    """
    lam = _check_lam(lam)
    _check_degrees(degrees)
    i = np.asarray(levels)
    if i.size == 0:
        i = i.astype(int)
    if i.dtype.kind not in "iu":
        raise TypeError(f"levels must be integers, got dtype {i.dtype}")
    if np.any(i < 0):
        raise ValueError("levels must be >= 0")
    if i.size == 0:
        return np.zeros(i.shape), np.zeros(i.shape)
    n = int(i.max())
    L = math.log(lam)
    m, dbar = degrees.min_degree, degrees.mean
    pm = float(degrees.pmf[m])
    k = np.arange(n + 1)
    a = _tail_weights(m, k)  # a_k, k = 0..n
    with np.errstate(invalid="ignore", over="ignore"):
        logL = a * L + np.where(k > 0, _tail_weights(m, k - 1), 0.0) * math.log(pm)
        lpsi = float(_tail_log_psi(lam, degrees))
        logU = a * L + (np.where(k > 0, _tail_weights(m, k - 1), 0.0) * lpsi if lpsi else 0.0)
        logJ = L * _tail_weights(dbar, k) if dbar > 0 else L * k.astype(float)
    # Lower bounds: nan (inf·0 in a term that is -inf) and -inf become -inf.
    # Upper bounds keep nan_to_num's defaults: nan -> 0 (trivially valid) and
    # -inf -> -DBL_MAX, still >= log q* where the exact bound is below -DBL_MAX.
    logJ = np.nan_to_num(logJ, nan=-np.inf, neginf=-np.inf)
    logL = np.nan_to_num(logL, nan=-np.inf, neginf=-np.inf)
    logU = np.nan_to_num(logU)
    K = min(n, _TAIL_KMAX)
    with np.errstate(under="ignore"):
        ell = np.exp(np.maximum(logL[1 : K + 1], logJ[1 : K + 1]))
        u = np.exp(logU[1 : K + 1])
    sW = _tail_log_psi(ell, degrees)
    sV = _tail_log_psi(u, degrees)
    sW[-1] = math.log(pm)  # used for k >= K (valid: ψ >= p(m))
    with np.errstate(invalid="ignore", over="ignore"):
        logW = np.nan_to_num(a * L + _tail_unroll(m, sW, n), nan=-np.inf, neginf=-np.inf)
        logV = np.nan_to_num(a * L + _tail_unroll(m, sV, n))
    lo = np.maximum(logW, logJ)
    up = np.minimum(logV, logU)
    lo[0] = up[0] = 0.0
    lo, up = lo[i], up[i]
    if log:
        return lo, up
    with np.errstate(under="ignore"):
        return np.exp(lo), np.exp(up)


def log_equilibrium(lam, degrees, n, digits=None) -> np.ndarray:
    """``log q*(0..n)`` by the recursion in log space (never underflows).

    ``y_0 = 0`` and ``y_i = log λ + y_{i-1} + log φ(e^{y_{i-1}})`` with
    ``log φ(e^y) = logsumexp_d(log p(d) + d y)``.  In floating point
    (``digits=None``) the relative error of ``y_i`` is bounded, to first order
    in ``ε``, by ``ε Σ_{k=1}^{i} (3 + c_K/|y_k|)`` with ``c_K = (K + 1 + 5 ln
    K)/2`` for ``K`` support points (chapter *tails*: the error grows
    additively because ``|y_i| >= (1 + s)|y_{i-1}|`` where ``1 + s`` is the
    factor that multiplies the error of ``y_{i-1}``).  With ``digits`` the same
    recursion runs in ``mpmath`` at that many significant digits, on the
    same (float) probabilities: a reference for the rounding of the float
    route.

    Parameters
    ----------
    lam : float
        ``λ ∈ (0, 1)``.
    degrees : DegreeDistribution
        Degree law ``p``.
    n : int
        Last level, ``>= 0``.
    digits : int, optional
        Significant decimal digits for an ``mpmath`` evaluation (``>= 20``).

    Returns
    -------
    numpy.ndarray, shape (n + 1,)
        ``log q*(0), ..., log q*(n)`` (rounded to float when ``digits`` is given).

    Raises
    ------
    ValueError
        If ``lam`` is not in (0, 1), ``n`` is not an integer ``>= 0`` or
        ``digits`` is not an integer ``>= 20``.
    """
    from scipy.special import logsumexp

    lam = _check_lam(lam)
    _check_degrees(degrees)
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f"n must be an integer >= 0, got {n!r}")
    d = np.nonzero(degrees.pmf)[0]
    out = np.zeros(int(n) + 1)
    if digits is None:
        lp, loglam = np.log(degrees.pmf[d]), math.log(lam)
        for i in range(1, int(n) + 1):
            out[i] = loglam + out[i - 1] + logsumexp(lp + d * out[i - 1])
        return out
    if isinstance(digits, bool) or not isinstance(digits, numbers.Integral) or digits < 20:
        raise ValueError(f"digits must be an integer >= 20, got {digits!r}")
    import mpmath

    with mpmath.workdps(int(digits)):
        p = [mpmath.mpf(float(v)) for v in degrees.pmf[d]]
        y, loglam = mpmath.mpf(0), mpmath.log(mpmath.mpf(lam))
        for i in range(1, int(n) + 1):
            y = loglam + y + mpmath.log(mpmath.fsum(pk * mpmath.exp(int(dk) * y) for pk, dk in zip(p, d)))
            out[i] = float(y)
    return out


def log_equilibrium_rounding(lam, degrees, n) -> np.ndarray:
    """Bound ``E_i |log q*(i)|`` on the rounding error of :func:`log_equilibrium`.

    ``E_i = ε Σ_{k=1}^{i} (3 + c_K / |y_k|)`` with ``y_k = log q*(k)``,
    ``c_K = (K + 1 + 5 ln K)/2`` and ``K`` the number of support points
    (first order in ``ε``; derivation in chapter *tails*).

    Parameters
    ----------
    lam : float
        ``λ ∈ (0, 1)``.
    degrees : DegreeDistribution
        Degree law ``p``.
    n : int
        Last level, ``>= 0``.

    Returns
    -------
    numpy.ndarray, shape (n + 1,)
        Absolute error bounds on ``log q*(0..n)`` (0 at level 0).
    """
    y = log_equilibrium(lam, degrees, n)
    K = int(np.count_nonzero(degrees.pmf))
    eps = float(np.finfo(float).eps)
    E = eps * np.cumsum(3 + (K + 1 + 5 * math.log(K)) / 2 / np.abs(y[1:]))
    return np.concatenate([[0.0], E * np.abs(y[1:])])


def tail_crossover(lam, eps) -> dict:
    """Crossover of ``p_ε = (1 − ε)δ_2 + εδ_0`` from cubic to geometric decay.

    Notation of chapter *tails* (proposition *Where the tail turns
    geometric*): ``s = √(ε/(1−ε))``, ``i* = min{i >= 1: q*(i) <= s}``,
    ``x = log_3(1 + log((1−ε)/ε)/log(1/λ))``, ``j = max(1, ⌈x⌉)``,
    ``S = Σ_{k<j} 3^{j−1−k} log(1 + t_k)``, ``κ = λε e^S (1 + e^{2S})``, the
    proof's bound ``S̄`` and the sufficient condition ``at_j``:
    ``S <= (3^j − 3^x)/2 · log(1/λ)``.

    Parameters
    ----------
    lam, eps : float
        ``λ ∈ (0, 1)`` and ``ε ∈ (0, 1)``.

    Returns
    -------
    dict
        Keys ``istar, q, s, x, j, kappa, S, S_bar, at_j, e`` (``q`` from
        :func:`equilibrium` down to ``1e-300``; ``e`` its log-space rounding
        bound, :func:`log_equilibrium_rounding`).
    """
    lam = _check_lam(lam)
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not 0 < eps < 1:
        raise ValueError(f"eps must be in (0, 1), got {eps!r}")
    p = DegreeDistribution({0: eps, 2: 1 - eps})
    q = equilibrium(lam, p, tol=1e-300)
    s = math.sqrt(eps / (1 - eps))
    istar = int(np.nonzero(q[1:] <= s)[0][0]) + 1
    A, B = math.log((1 - eps) / eps), math.log(1 / lam)
    x = math.log(1 + A / B, 3)
    j = max(1, math.ceil(x))
    S = sum(3 ** (j - 1 - k) * math.log1p(math.exp(-A + (3**k - 1) * B)) for k in range(1, j))
    S_bar = math.log(2) + 0.5 * (1 + A / B) * (lam * eps / (1 - eps)) ** (2 / 3)
    kappa = lam * eps * math.exp(S) * (1 + math.exp(2 * S))
    return dict(istar=istar, q=q, s=s, x=x, j=j, kappa=kappa, S=S, S_bar=S_bar,
                at_j=S <= (3**j - 3**x) / 2 * B, e=log_equilibrium_rounding(lam, p, len(q) - 1))
