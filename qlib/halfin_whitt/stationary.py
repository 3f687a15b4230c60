"""The stationary law of the reflected OU limit, computed without simulation.

The diffusion of Eschenfeldt and Gamarnik on ``{x_1 <= 0, x_2 >= 0}``,

``dX_1 = √2 dB − (β + X_1 − X_2) dt − dU``,  ``dX_2 = dU − X_2 dt``,

``U`` nondecreasing and growing only when ``X_1 = 0``, has generator
``Lf = ∂²_1 f + (x_2 − β − x_1) ∂_1 f − x_2 ∂_2 f`` in the interior and the
oblique reflection ``(∂_2 − ∂_1) f`` at ``x_1 = 0``: its stationary law ``π``
and boundary measure ``ν`` satisfy the basic adjoint relationship
``∫ Lf dπ + ∫ (∂_2 f − ∂_1 f)(0, x_2) ν(dx_2) = 0``.

:func:`~qlib.halfin_whitt.stationary.ou_stationary_grid` solves the stationary equation of a Markov chain
approximation (Kushner–Dupuis) on the grid ``x_1 = −i h``, ``x_2 = j h``:

* ``x_1`` moves by ``±h`` with the Scharfetter–Gummel rates
  ``h^{-2} B / (1 − e^{−B})`` up and ``h^{-2} B e^{−B} / (1 − e^{−B})`` down,
  ``B = h (x_2 − β − x_1)``: positive for every ``h``, mean drift exact,
  variance ``2 + O(h²)``;
* ``x_2`` moves down by ``h`` at rate ``x_2 / h`` (mean drift ``−x_2`` exact);
* at ``x_1 = 0`` the move to the ghost point ``x_1 = h`` is reflected along
  ``(−1, +1)`` onto ``(0, x_2 + h)``: the push ``dU = h``.

The mean drift of ``X_1 + X_2`` is then exactly ``−β − x_1`` everywhere, so
``E[X_1] = −β`` holds on the grid up to the truncation faces (a check of the
solve, not of the discretisation).  The chain converges to the diffusion as
``h → 0`` with error ``O(h)``; :func:`~qlib.halfin_whitt.stationary.ou_stationary` extrapolates in ``h``
(Richardson) and measures the order of convergence.

The solve is exact linear algebra in ``O(I J)`` operations: ``x_2`` can rise
only by a push from ``(0, x_2)``, so the balance equations of level ``j``
(the states with ``x_2 = j h``) read
``π_j A_j + (j+1) π_{j+1} + u_{j−1} π(0, j−1) e_0 = 0`` with ``A_j``
tridiagonal, and a top-down reduction ``π_j = π(0, j−1) r_j`` needs one
tridiagonal solve with a rank-one correction per level.
"""
from __future__ import annotations

import math
import numbers
import time
from dataclasses import dataclass

import numba
import numpy as np

from qlib import _validate as V
from typing import TYPE_CHECKING
from qlib.stats._results import fields_eq
if TYPE_CHECKING:   # names for the annotations only
    from collections.abc import Mapping
    from numpy.typing import ArrayLike
    from qlib.halfin_whitt.chain import StationaryJSQ
    from qlib.halfin_whitt.diffusion import OUCRN

__all__ = ["ou_stationary_grid", "OUGrid", "ou_stationary", "OUStationary",
           "default_box", "chain_constants", "CONSTANTS", "extrapolate_inv_sqrt",
           "Extrapolation", "crn_functionals", "crn_extrapolate", "CRNEstimate",
           "intercept_weights", "local_exponents"]

_NAMES = ("mean_x1", "mean_x2", "var_x1", "mean_x1x2")

#: The Halfin–Whitt constants tabulated in the book, as the names of
#: :func:`~qlib.halfin_whitt.stationary.chain_constants`; their diffusion limits are ``E[X_2]``, ``E[X_2]``,
#: ``Var(X_1)`` and ``E[X_1 X_2]``.
CONSTANTS = ("c", "q2", "var_x1", "x1x2")


def _check_beta(beta):
    return V.positive(beta, "beta")


def _check_pos(name, x):
    return V.positive(x, name)


def default_box(beta: float) -> tuple[float, float]:
    """Truncation box ``(x1_min, x2_max)`` for ``beta``.

    ``X_1`` has a Gaussian lower tail about ``−β`` (drift ``≥ −β − x_1``), and
    for large ``X_2`` the push nearly balances the decay, so ``X_2`` drifts
    down at rate ``β`` with noise ``√2``: its tail is about ``e^{−β x_2}``.
    The box leaves a mass of order ``e^{−26}`` outside.
    """
    beta = _check_beta(beta)
    return -(beta + 7.5), max(12.0, 26.0 / beta)


@fields_eq
@dataclass(frozen=True)
class OUGrid:
    """Result of :func:`~qlib.halfin_whitt.stationary.ou_stationary_grid`.

    ``x1`` (``0, −h, …``) and ``x2`` (``0, h, …``) are the grid axes and
    ``pi[i, j]`` the stationary mass of ``(x1[i], x2[j])``.  ``mean_x1,
    mean_x2, var_x1, mean_x1x2`` are its moments; ``push_rate`` the mean rate
    of the push ``dU/dt`` (equal to ``mean_x2`` up to the top face);
    ``face_low`` and ``face_top`` the masses of the truncation faces
    ``x_1 = x1_min`` and ``x_2 = x2_max``, and ``face_drift`` the drift of
    ``X_1 + X_2`` that the cut moves there remove: on the grid
    ``E[X_1] + β = face_drift`` exactly; ``residual`` the largest balance
    residual relative to the largest flow.
    """

    beta: float
    h: float
    x1: np.ndarray
    x2: np.ndarray
    pi: np.ndarray
    mean_x1: float
    mean_x2: float
    var_x1: float
    mean_x1x2: float
    push_rate: float
    face_drift: float
    face_low: float
    face_top: float
    residual: float
    wall_time: float

    def marginal_x2(self):
        """Density of ``X_2`` on ``x2`` (mass per unit length)."""
        return self.pi.sum(axis=0) / self.h

    def cdf_x2(self, y):
        """``P(X_2 <= y)`` (mass of the grid points ``x_2 <= y``, linearly
        interpolated between grid points)."""
        c = np.cumsum(self.pi.sum(axis=0))
        return np.interp(np.asarray(y, dtype=float), self.x2, c)


def _rates(beta, h, x1, y):
    """Scharfetter–Gummel rates of ``x_1 → x_1 ± h`` at ``(x1, y)`` (arrays)."""
    b = y - beta - x1
    B = b * h
    small = np.abs(B) < 1e-8
    Bs = np.where(small, 1.0, B)
    up = np.where(small, 1.0 + 0.5 * B, Bs / -np.expm1(-Bs)) / h**2
    return up, up - b / h


@numba.njit(cache=True)
def _sg_up(b, h):
    B = b * h
    if abs(B) < 1e-8:
        return (1.0 + 0.5 * B) / (h * h)
    return B / -math.expm1(-B) / (h * h)


@numba.njit(cache=True)
def _thomas(sub, diag, sup, rhs, cp, dp):
    # solves T y = rhs, T[k, k-1] = sub[k], T[k, k] = diag[k], T[k, k+1] = sup[k];
    # no pivoting: T is diagonally dominant by columns
    m = diag.size
    cp[0] = sup[0] / diag[0]
    dp[0] = rhs[0] / diag[0]
    for k in range(1, m):
        den = diag[k] - sub[k] * cp[k - 1]
        cp[k] = sup[k] / den if k < m - 1 else 0.0
        dp[k] = (rhs[k] - sub[k] * dp[k - 1]) / den
    for k in range(m - 2, -1, -1):
        dp[k] -= cp[k] * dp[k + 1]
    return dp


@numba.njit(cache=True)
def _level_reduction(beta, h, I, J):
    # R[:, j] solves r (A_j + (j+1) u_j e_0 r_{j+1}) = -e_0 (Sherman-Morrison on the
    # transposed tridiagonal T = A_j^T); then pi_j = pi(0, j-1) u_{j-1} R[:, j].
    m = I + 1
    R = np.zeros((m, J + 1))
    push = np.zeros(J + 1)
    sub, diag, sup = np.zeros(m), np.zeros(m), np.zeros(m)
    up, dn = np.zeros(m), np.zeros(m)
    cp, dp = np.zeros(m), np.zeros(m)
    e0, c = np.zeros(m), np.zeros(m)
    for j in range(J, -1, -1):
        y = j * h
        for i in range(m):
            b = y - beta + i * h
            up[i] = _sg_up(b, h)
            dn[i] = up[i] - b / h
        push[j] = up[0] if j < J else 0.0
        for k in range(m):
            d = float(j)
            if k > 0:
                d += up[k]
            if k < I:
                d += dn[k]
            diag[k] = -d
            sup[k] = up[k + 1] if k < I else 0.0
            sub[k] = dn[k - 1] if k > 0 else 0.0
        diag[0] -= push[j]
        if j > 0:
            e0[:] = 0.0
            e0[0] = -1.0
            z0 = _thomas(sub, diag, sup, e0, cp, dp).copy()
            if j < J:
                for k in range(m):
                    c[k] = (j + 1) * push[j] * R[k, j + 1]
                z1 = _thomas(sub, diag, sup, c, cp, dp)
                f = z0[0] / (1.0 + z1[0])
                for k in range(m):
                    R[k, j] = z0[k] - z1[k] * f
            else:
                R[:, j] = z0
        else:
            # level 0: pi_0 (A_0 + u_0 e_0 r_1) = 0 with pi(0, 0) = 1; rows 1..I of the
            # transposed system in the unknowns 1..I
            rhs = np.zeros(I)
            for k in range(1, m):
                rhs[k - 1] = -push[0] * R[k, 1] if J > 0 else 0.0
            rhs[0] -= sub[1]
            s2, d2, u2 = sub[1:].copy(), diag[1:].copy(), sup[1:].copy()
            s2[0] = 0.0
            y0 = _thomas(s2, d2, u2, rhs, cp[1:], dp[1:])
            R[0, 0] = 1.0
            R[1:, 0] = y0
    for j in range(1, J + 1):           # in place: R becomes pi
        w = R[0, j - 1] * push[j - 1]
        for k in range(m):
            R[k, j] *= w
    return R


def ou_stationary_grid(beta: float, h: float, *, x1_min: float | None = None,
                       x2_max: float | None = None) -> OUGrid:
    """Stationary law of the Markov chain approximation of the reflected OU
    limit on the grid of step ``h`` (see the module docstring).

    Parameters
    ----------
    beta : float
        ``beta > 0``.
    h : float
        Grid step, ``0 < h <= 0.5``.
    x1_min, x2_max : float, optional
        The truncation box ``x1_min <= x_1 <= 0 <= x_2 <= x2_max``
        (defaults: :func:`~qlib.halfin_whitt.stationary.default_box`); both are rounded to multiples of
        ``h``.  At the faces the moves that would leave the box are cut.

    Returns
    -------
    OUGrid
    """
    beta = _check_beta(beta)
    h = _check_pos("h", h)
    if h > 0.5:
        raise ValueError(f"h must be <= 0.5, got {h}")
    lo, top = default_box(beta)
    x1_min = lo if x1_min is None else -_check_pos("-x1_min", -float(x1_min))
    x2_max = top if x2_max is None else _check_pos("x2_max", x2_max)
    I, J = int(round(-x1_min / h)), int(round(x2_max / h))
    if I < 4 or J < 4:
        raise ValueError(f"the box must hold at least 4 steps h = {h} each way")
    t0 = time.perf_counter()
    x1 = -h * np.arange(I + 1)
    x2 = h * np.arange(J + 1)
    pi = _level_reduction(beta, h, I, J)
    if not np.all(np.isfinite(pi)) or np.any(pi < -1e-12 * pi.max()):
        raise RuntimeError("the level reduction lost precision (non-finite or negative mass)")
    pi = np.clip(pi, 0.0, None)
    pi /= pi.sum()
    p1, p2 = pi.sum(axis=1), pi.sum(axis=0)
    m1, m2 = float(p1 @ x1), float(p2 @ x2)
    up0 = np.array([_sg_up(y - beta, h) for y in x2])
    bI = x2 - beta - x1[-1]
    dnI = np.array([_sg_up(b, h) for b in bI]) - bI / h
    face_drift = h * (pi[-1] @ dnI - pi[0, -1] * up0[-1])
    return OUGrid(beta=beta, h=h, x1=x1, x2=x2, pi=pi, mean_x1=m1, mean_x2=m2,
                  var_x1=float(p1 @ x1**2 - m1**2), mean_x1x2=float(x1 @ pi @ x2),
                  push_rate=float(h * (pi[0, :-1] @ up0[:-1])), face_drift=float(face_drift),
                  face_low=float(p1[-1]), face_top=float(p2[-1]),
                  residual=float(_residual(beta, h, pi)),
                  wall_time=time.perf_counter() - t0)


@numba.njit(cache=True)
def _residual(beta, h, pi):
    # largest |inflow − outflow| of the grid chain at pi, relative to the largest outflow
    m, J1 = pi.shape
    I, J = m - 1, J1 - 1
    net = np.zeros((m, J1))
    big = 0.0
    for j in range(J1):
        for i in range(m):
            b = j * h - beta + i * h
            up = _sg_up(b, h)
            dn = up - b / h
            p = pi[i, j]
            out = j * p
            if j > 0:
                net[i, j - 1] += j * p
            if i > 0:
                net[i - 1, j] += up * p
                out += up * p
            elif j < J:
                net[0, j + 1] += up * p
                out += up * p
            if i < I:
                net[i + 1, j] += dn * p
                out += dn * p
            net[i, j] -= out
            big = max(big, out)
    return np.abs(net).max() / big


@fields_eq
@dataclass(frozen=True)
class OUStationary:
    """Result of :func:`~qlib.halfin_whitt.stationary.ou_stationary`.

    ``hs`` the grid steps (halving); ``values[name]`` the grid values at each
    step; ``estimate[name]`` the extrapolation ``h → 0`` and ``error[name]``
    an *estimate* of its error (the spread of the Richardson values, not a
    certified bound), also readable as ``error_estimates`` and as
    ``error_bounds`` (the name every exact solver's result shares); ``order[name]`` the observed orders of convergence
    ``log2((m(h) − m(h/2)) / (m(h/2) − m(h/4)))`` along the sequence.
    ``grids`` the :class:`~qlib.halfin_whitt.stationary.OUGrid` results (the finest one last).
    """

    beta: float
    hs: tuple
    values: dict
    estimate: dict
    error: dict
    order: dict
    grids: tuple

    @property
    def error_estimates(self):
        """``error``: estimates of the extrapolation errors, not bounds."""
        return self.error

    @property
    def error_bounds(self):
        """``error`` under the name every exact solver's result shares (estimates)."""
        return self.error


def ou_stationary(beta: float, h0: float = 0.08, *, depth: int = 4, x1_min: float | None = None,
                  x2_max: float | None = None, keep: str = "finest") -> OUStationary:
    """Stationary moments of the reflected OU limit, extrapolated to ``h → 0``.

    Solves :func:`~qlib.halfin_whitt.stationary.ou_stationary_grid` at ``h0, h0/2, …`` (``depth`` steps)
    and extrapolates each moment assuming ``m(h) = m + a h + b h² + O(h³)``.

    Parameters
    ----------
    beta : float
        ``beta > 0``.
    h0 : float
        Coarsest step, ``<= 0.5``.
    depth : int
        Number of steps, ``3 <= depth <= 8``.
    x1_min, x2_max : float, optional
        Truncation box (see :func:`~qlib.halfin_whitt.stationary.ou_stationary_grid`).
    keep : {"finest", "all"}
        Which grids to keep in the result (the densities are large).

    Returns
    -------
    OUStationary
        For each of ``mean_x1, mean_x2, var_x1, mean_x1x2``: ``estimate`` is
        the second-order Richardson value ``(8 m(h/4) − 6 m(h/2) + m(h))/3``
        from the three finest steps, and ``error`` is the larger of its
        distance to the first-order value ``2 m(h/4) − m(h/2)`` and to the
        second-order value from the three coarser steps (when ``depth >= 4``).
    """
    beta = _check_beta(beta)
    if isinstance(depth, bool) or not isinstance(depth, numbers.Integral) \
            or not 3 <= depth <= 8:
        raise ValueError(f"depth must be an integer in [3, 8], got {depth!r}")
    if keep not in ("finest", "all"):
        raise ValueError(f"keep must be 'finest' or 'all', got {keep!r}")
    hs = tuple(float(h0) / 2**k for k in range(depth))
    grids = [ou_stationary_grid(beta, h, x1_min=x1_min, x2_max=x2_max) for h in hs]
    values, est, err, order = {}, {}, {}, {}
    for name in _NAMES:
        m = np.array([getattr(g, name) for g in grids])
        values[name] = m
        r2 = (8 * m[-1] - 6 * m[-2] + m[-3]) / 3
        r1 = 2 * m[-1] - m[-2]
        e = abs(r2 - r1)
        if depth >= 4:
            e = max(e, abs(r2 - (8 * m[-2] - 6 * m[-3] + m[-4]) / 3))
        est[name], err[name] = float(r2), float(e)
        d = np.diff(m)
        with np.errstate(divide="ignore", invalid="ignore"):
            order[name] = np.log2(d[:-1] / d[1:])
    return OUStationary(beta=beta, hs=hs, values=values, estimate=est, error=err,
                        order=order, grids=tuple(grids) if keep == "all" else (grids[-1],))


def chain_constants(st: StationaryJSQ) -> dict:
    """The scaled stationary constants of the finite-``n`` JSQ chain.

    Parameters
    ----------
    st : object
        A result of :func:`qlib.halfin_whitt.stationary_jsq <qlib.halfin_whitt.chain.stationary_jsq>`: it needs ``n``
        and either the quantities ``p_wait, mean_q2, var_x1, mean_x1x2,
        q2_pmf`` with their ``error_bounds``, or ``states`` (occupancy rows
        ``Q_1, Q_2, …``) and ``pi``.

    Returns
    -------
    dict
        ``c = √n P(Q_1 = n)`` (√n times the probability that an arrival
        waits), ``q2 = E[Q_2]/√n``, ``var_x1 = Var(Q_1)/n`` and
        ``x1x2 = E[(Q_1 − n) Q_2]/n``, as floats; ``q2_pmf``: the law of
        ``Q_2`` (``q2_pmf[k] = P(Q_2 = k)``); ``err``: the truncation error
        bound of each of the four (NaN where the solver gives none).
    """
    if not hasattr(st, "n"):
        raise TypeError("st must be a stationary_jsq result with .n")
    n = int(st.n)
    sq = math.sqrt(n)
    eb = dict(getattr(st, "error_bounds", None) or {})
    if all(hasattr(st, a) for a in ("p_wait", "mean_q2", "var_x1", "mean_x1x2", "q2_pmf")):
        out = {"c": sq * float(st.p_wait), "q2": float(st.mean_q2) / sq,
               "var_x1": float(st.var_x1), "x1x2": float(st.mean_x1x2),
               "q2_pmf": np.asarray(st.q2_pmf, dtype=float)}
    else:
        for name in ("states", "pi"):
            if not hasattr(st, name):
                raise TypeError(f"st must be a stationary_jsq result with .{name}")
        Q = np.asarray(st.states)
        pi = np.asarray(st.pi, dtype=float)
        pi = pi / pi.sum()
        x1, x2 = (Q[:, 0] - n) / sq, Q[:, 1] / sq
        m1 = float(pi @ x1)
        out = {"c": sq * float(pi[Q[:, 0] == n].sum()), "q2": float(pi @ x2),
               "var_x1": float(pi @ x1**2 - m1**2), "x1x2": float(pi @ (x1 * x2)),
               "q2_pmf": np.bincount(Q[:, 1], weights=pi)}
    scale = {"c": ("p_wait", sq), "q2": ("mean_q2", 1 / sq), "var_x1": ("var_x1", 1.0),
             "x1x2": ("mean_x1x2", 1.0)}
    out["err"] = {k: float(eb[a]) * f if a in eb else float("nan")
                  for k, (a, f) in scale.items()}
    return out


def _three_point_exponent(n, y):
    """``p`` with ``y = a + b n^{−p}`` through three points (bisection)."""
    def f(p):
        x = np.asarray(n, dtype=float) ** -p
        return (y[1] - y[0]) * (x[2] - x[1]) - (y[2] - y[1]) * (x[1] - x[0])
    lo, hi = 0.05, 3.0
    if f(lo) * f(hi) > 0:
        return float("nan")
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if f(lo) * f(mid) > 0 else (lo, mid)
    return 0.5 * (lo + hi)


@fields_eq
@dataclass(frozen=True)
class Extrapolation:
    """Result of :func:`~qlib.halfin_whitt.stationary.extrapolate_inv_sqrt`: ``estimate`` and ``error`` of
    the limit; ``intercepts`` the limits of the fits considered (degree,
    first point of the window, intercept); ``exponents`` the local rates
    ``p`` of ``y = a + b n^{−p}`` through consecutive triples (at the middle
    ``n`` of each, ``exponent_n``); ``slope`` the fitted coefficient of
    ``n^{−1/2}``."""

    estimate: float
    error: float
    slope: float
    intercepts: tuple
    exponents: np.ndarray
    exponent_n: np.ndarray


def intercept_weights(ns: ArrayLike, degree: int = 2) -> np.ndarray:
    """Weights ``w`` with ``a = w @ y`` for the least-squares polynomial
    ``a + b x + … `` of degree ``degree`` in ``x = n^{−1/2}`` through ``(ns, y)``.

    The intercept is linear in the data, so an error ``|δy_i| <= e_i`` in the
    points moves it by at most ``Σ |w_i| e_i``: the truncation error of an
    extrapolated value goes through these weights (``Σ |w_i| >= 1``, and it
    grows fast as the window narrows).

    Parameters
    ----------
    ns : array_like
        At least ``degree + 1`` distinct values of ``n``.
    degree : int
        Degree of the polynomial, ``>= 0``.

    Returns
    -------
    numpy.ndarray
    """
    ns = np.asarray(ns, dtype=float)
    if isinstance(degree, bool) or not isinstance(degree, numbers.Integral) or degree < 0:
        raise ValueError(f"degree must be an integer >= 0, got {degree!r}")
    if ns.ndim != 1 or np.unique(ns).size < degree + 1 or np.any(ns <= 0):
        raise ValueError(f"ns must hold at least {degree + 1} distinct positive values")
    V = np.vander(ns ** -0.5, degree + 1, increasing=True)
    return np.linalg.pinv(V)[0]


def _points(ns, y, err):
    ns = np.asarray(ns, dtype=float)
    y = np.asarray(y, dtype=float)
    if ns.ndim != 1 or ns.size < 4 or ns.shape != y.shape or np.any(np.diff(ns) <= 0):
        raise ValueError("ns must be at least 4 increasing values, of the shape of y")
    e = np.zeros_like(y) if err is None else np.nan_to_num(np.asarray(err, dtype=float))
    if e.shape != y.shape or np.any(e < 0):
        raise ValueError("err must be >= 0, of the shape of y")
    return ns, y, e


def local_exponents(ns: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Local rates ``p`` of ``y = a + b n^{−p}`` through each three
    consecutive points (NaN where no ``p`` in ``[0.05, 3]`` fits), and the
    middle ``n`` of each triple."""
    ns, y, _ = _points(ns, y, None)
    p = np.array([_three_point_exponent(ns[k:k + 3], y[k:k + 3]) for k in range(ns.size - 2)])
    return p, ns[1:-1].copy()


def extrapolate_inv_sqrt(ns: ArrayLike, y: ArrayLike, *,
                         err: ArrayLike | None = None) -> Extrapolation:
    """Extrapolate exact finite-``n`` values ``y(n)`` to ``n = ∞`` in
    ``x = n^{−1/2}`` (all points; the book's constants table uses a windowed
    variant of this rule).

    The estimate is the intercept of the least-squares quadratic
    ``a + b x + c x²`` through the points.  Its error is the largest change of
    the intercept when (i) the window drops its smallest ``n`` (down to three
    points) and (ii) a cubic term is added (when there are five points or
    more), plus the truncation error ``err`` of the points carried through
    the fit weights, ``Σ |w_i| e_i``.

    Parameters
    ----------
    ns : array_like of int
        At least 4 increasing values of ``n``.
    y : array_like
        The values at ``ns``.
    err : array_like, optional
        Error bounds of ``y`` (NaN or missing: 0).

    Returns
    -------
    Extrapolation
    """
    ns, y, e = _points(ns, y, err)
    x = ns ** -0.5
    fits = []
    for start in range(ns.size - 2):
        c = np.polyfit(x[start:], y[start:], 2)
        fits.append((2, int(ns[start]), float(c[-1])))
    if ns.size >= 5:
        fits.append((3, int(ns[0]), float(np.polyfit(x, y, 3)[-1])))
    est = fits[0][2]
    trunc = float(np.abs(intercept_weights(ns, 2)) @ e)
    error = max(abs(f[2] - est) for f in fits[1:]) + trunc
    p, pn = local_exponents(ns, y)
    return Extrapolation(estimate=est, error=error, slope=float(np.polyfit(x, y, 2)[1]),
                         intercepts=tuple(fits), exponents=p, exponent_n=pn)


def crn_functionals(beta: float) -> dict[str, dict[str, float]]:
    """Coefficients (for ``OUCRN.series``) of ``E[X_2]``, ``Var(X_1)``
    and ``E[X_1 X_2]``, keyed like :data:`~qlib.halfin_whitt.stationary.CONSTANTS` (``c`` and ``q2`` both
    have the limit ``E[X_2]``).  ``Var(X_1) = E[(X_1 + β)²]`` uses
    ``E[X_1] = −β``, exact for the scheme; centring at the exact mean keeps
    the statistical error of the sample mean out of the variance."""
    beta = _check_beta(beta)
    return {"q2": {"x2": 1.0}, "var_x1": {"x1x1": 1.0, "x1": 2 * beta, "1": beta**2},
            "x1x2": {"x1x2": 1.0}}


@dataclass(frozen=True)
class CRNEstimate:
    """Result of :func:`~qlib.halfin_whitt.stationary.crn_extrapolate`: ``estimate = 2 m(dt) − m(2dt)``
    with its batch-means ``se`` and ``df``; ``bias`` = ``(m(2dt) − m(4dt) −
    2(m(dt) − m(2dt)))/3``, the estimated remaining (second-order) bias of
    ``estimate``, with ``bias_se``; ``step`` = ``m(dt) − m(2dt)`` with
    ``step_se``."""

    estimate: float
    se: float
    df: int
    bias: float
    bias_se: float
    step: float
    step_se: float


def crn_extrapolate(res: OUCRN, coef: Mapping[str, float]) -> CRNEstimate:
    """Richardson extrapolation in ``dt`` of one stationary mean from a
    :func:`qlib.halfin_whitt.reflected_ou_crn <qlib.halfin_whitt.diffusion.reflected_ou_crn>` result with 3 levels or more.

    Parameters
    ----------
    res : OUCRN
    coef : dict
        The functional, as for ``res.series`` (e.g. from :func:`~qlib.halfin_whitt.stationary.crn_functionals`).

    Returns
    -------
    CRNEstimate
        Standard errors from :func:`qlib.stats.batch_means <qlib.stats.batch.batch_means>` of the block series
        (the levels share their random numbers, so the differences have small
        variance).
    """
    from qlib.stats import batch_means
    if res.moments.shape[1] < 3:
        raise ValueError("res must have at least 3 levels")
    m = [res.series(coef, lv) for lv in range(3)]
    r = batch_means(2 * m[0] - m[1], dt=res.block)
    b = batch_means((m[1] - m[2] - 2 * (m[0] - m[1])) / 3, dt=res.block)
    s = batch_means(m[0] - m[1], dt=res.block)
    return CRNEstimate(estimate=float(r.mean), se=float(r.se), df=int(r.df),
                       bias=float(b.mean), bias_se=float(b.se), step=float(s.mean),
                       step_se=float(s.se))
