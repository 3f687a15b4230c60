"""The equilibrium's tail: rigorous bounds at any depth, the log-space recursion and its rounding, the crossover level."""
from __future__ import annotations

import math
import numbers
import numpy as np
from .degrees import DegreeDistribution

from qlib.meanfield.fluid import _check_degrees, _check_lam, equilibrium
from typing import TYPE_CHECKING
if TYPE_CHECKING:   # names for the annotations only
    from numpy.typing import ArrayLike
    from qlib._types import DegreeLike

__all__ = ['tail_bounds', 'log_equilibrium', 'log_equilibrium_rounding', 'tail_crossover']


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


def tail_bounds(lam: float, degrees: DegreeLike, which_levels: ArrayLike,
                log: bool = False) -> tuple[np.ndarray, np.ndarray]:
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
    which_levels : array_like of int
        Levels ``i >= 0``.
    log : bool, optional
        Return natural logarithms of the bounds (no underflow; default False).

    Returns
    -------
    (lower, upper) : tuple of numpy.ndarray
        The bounds (or their logs), same shape as ``which_levels``.

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

    Examples
    --------
    >>> from qlib import DegreeDistribution
    >>> from qlib.meanfield import fluid, tails
    >>> law = DegreeDistribution.point(2)
    >>> low, high = tails.tail_bounds(0.9, law, [1, 2, 3])
    >>> q = fluid.equilibrium(0.9, law)
    >>> bool(((low <= q[1:4] * (1 + 1e-12)) & (q[1:4] <= high * (1 + 1e-12))).all())
    True
    """
    lam = _check_lam(lam)
    degrees = _check_degrees(degrees)
    i = np.asarray(which_levels)
    if i.size == 0:
        i = i.astype(int)
    if i.dtype.kind not in "iu":
        raise TypeError(f"which_levels must be integers, got dtype {i.dtype}")
    if np.any(i < 0):
        raise ValueError("which_levels must be >= 0")
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


def log_equilibrium(lam: float, degrees: DegreeLike, last_level: int,
                    digits: int | None = None) -> np.ndarray:
    """``log q*(0..last_level)`` by the recursion in log space (never underflows).

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
    last_level : int
        The last level ``i`` computed, ``>= 0``.
    digits : int, optional
        Significant decimal digits for an ``mpmath`` evaluation (``>= 20``).

    Returns
    -------
    numpy.ndarray, shape (last_level + 1,)
        ``log q*(0), ..., log q*(last_level)`` (rounded to float when ``digits`` is given).

    Raises
    ------
    ValueError
        If ``lam`` is not in (0, 1), ``last_level`` is not an integer ``>= 0`` or
        ``digits`` is not an integer ``>= 20``.

    Examples
    --------
    >>> import numpy as np
    >>> np.exp(log_equilibrium(0.9, {2: 1.0}, 3)).round(4).tolist()
    [1.0, 0.9, 0.6561, 0.2542]
    """
    from scipy.special import logsumexp

    lam = _check_lam(lam)
    degrees = _check_degrees(degrees)
    if isinstance(last_level, bool) or not isinstance(last_level, numbers.Integral) \
            or last_level < 0:
        raise ValueError(f"last_level must be an integer >= 0, got {last_level!r}")
    d = np.nonzero(degrees.pmf)[0]
    out = np.zeros(int(last_level) + 1)
    if digits is None:
        lp, loglam = np.log(degrees.pmf[d]), math.log(lam)
        for i in range(1, int(last_level) + 1):
            out[i] = loglam + out[i - 1] + logsumexp(lp + d * out[i - 1])
        return out
    if isinstance(digits, bool) or not isinstance(digits, numbers.Integral) or digits < 20:
        raise ValueError(f"digits must be an integer >= 20, got {digits!r}")
    import mpmath

    with mpmath.workdps(int(digits)):
        p = [mpmath.mpf(float(v)) for v in degrees.pmf[d]]
        y, loglam = mpmath.mpf(0), mpmath.log(mpmath.mpf(lam))
        for i in range(1, int(last_level) + 1):
            y = loglam + y + mpmath.log(mpmath.fsum(pk * mpmath.exp(int(dk) * y) for pk, dk in zip(p, d)))
            out[i] = float(y)
    return out


def log_equilibrium_rounding(lam: float, degrees: DegreeLike, last_level: int) -> np.ndarray:
    """Bound ``E_i |log q*(i)|`` on the rounding error of :func:`~qlib.meanfield.tails.log_equilibrium`.

    ``E_i = ε Σ_{k=1}^{i} (3 + c_K / |y_k|)`` with ``y_k = log q*(k)``,
    ``c_K = (K + 1 + 5 ln K)/2`` and ``K`` the number of support points
    (first order in ``ε``; derivation in chapter *tails*).

    Parameters
    ----------
    lam : float
        ``λ ∈ (0, 1)``.
    degrees : DegreeDistribution
        Degree law ``p``.
    last_level : int
        The last level ``i`` computed, ``>= 0``.

    Returns
    -------
    numpy.ndarray, shape (last_level + 1,)
        Absolute error bounds on ``log q*(0..last_level)`` (0 at level 0).
    """
    y = log_equilibrium(lam, degrees, last_level)
    K = int(np.count_nonzero(degrees.pmf))
    eps = float(np.finfo(float).eps)
    E = eps * np.cumsum(3 + (K + 1 + 5 * math.log(K)) / 2 / np.abs(y[1:]))
    return np.concatenate([[0.0], E * np.abs(y[1:])])


def tail_crossover(lam: float, eps: float) -> dict:
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
        :func:`~qlib.meanfield.fluid.equilibrium` down to ``1e-300``; ``e`` its log-space rounding
        bound, :func:`~qlib.meanfield.tails.log_equilibrium_rounding`).
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
