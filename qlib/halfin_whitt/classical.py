"""The pooled M/M/n queue (Erlang C, Halfin–Whitt's α(β)) and JSQ(d)'s mean-field fixed point."""
from __future__ import annotations

import math
import numbers
import numba
import numpy as np

from qlib.halfin_whitt._common import _check_beta, _check_n
from typing import TYPE_CHECKING
if TYPE_CHECKING:   # names for the annotations only
    from numpy.typing import ArrayLike

__all__ = ['erlang_c', 'halfin_whitt_alpha', 'jsq_d_fixed_point']


# ------------------------------------------------------- the alternatives
# Pooled M/M/n (Erlang C), its Halfin–Whitt limit, and JSQ(d) at the load
# λ_n = n − β√n (chapter ``ht_alternatives``).

@numba.njit(cache=True)
def _erlang_b(n, a):
    """Erlang B by the recursion ``B_k = a B_{k−1} / (k + a B_{k−1})``, ``B_0 = 1``;
    every step is a ratio of positive terms, so the relative error grows at
    most linearly in ``n`` (no cancellation, no overflow)."""
    b = 1.0
    for k in range(1, n + 1):
        b = a * b / (k + a * b)
    return b


def erlang_c(n: int, lam: float | None = None, *, rho: float | None = None) -> float:
    """P(wait) in the M/M/n queue (Erlang C) at the TOTAL arrival rate ``lam`` (or per-server load ``rho``).

    Parameters
    ----------
    n : int
        Number of servers, ``n >= 1``.
    lam : float
        The total arrival rate ``λ_n``, ``0 < lam < n`` (the queue is stable);
        unit service rate. A value below 1 with ``n >= 10`` servers is refused
        as a per-server rate passed by mistake: pass ``rho=`` for that.
    rho : float, keyword only
        Instead of ``lam``: the load per server ``λ_n / n`` in ``(0, 1)``.

    Returns
    -------
    float
        ``C(n, λ) = P(all n servers busy)``, which by PASTA is the chance that
        an arrival waits.

    Raises
    ------
    TypeError, ValueError
        For a bad ``n``, ``lam`` or ``rho`` (``lam >= n`` is unstable), both or
        neither of ``lam`` and ``rho``, or ``lam < 1`` with ``n >= 10``.

    Notes
    -----
    ``C = B / (1 − ρ(1 − B))`` with ``ρ = λ/n`` and ``B`` the Erlang B
    probability, computed by the stable recursion
    ``B_k = λ B_{k−1} / (k + λ B_{k−1})`` (no factorials, no powers): ``O(n)``
    operations, relative error about ``n`` units of rounding, so accurate to
    ``n = 10⁶`` and beyond.

    Examples
    --------
    >>> from qlib.halfin_whitt import erlang_c
    >>> round(erlang_c(100, 90.0), 4)          # total rate 90 on 100 servers
    0.2169
    >>> erlang_c(100, rho=0.9) == erlang_c(100, 90.0)
    True
    """
    n = _check_n(n)
    if (lam is None) == (rho is None):
        raise TypeError("pass exactly one of lam (the total arrival rate) and rho (the load "
                        "per server)")
    if rho is not None:
        if isinstance(rho, bool) or not isinstance(rho, numbers.Real):
            raise TypeError(f"rho must be a real number in (0, 1), got {rho!r}")
        if not (np.isfinite(rho) and 0 < rho < 1):
            raise ValueError(f"rho must be in (0, 1) for a stable M/M/n queue, got {rho}")
        lam = float(rho) * n
    if isinstance(lam, bool) or not isinstance(lam, numbers.Real):
        raise TypeError(f"lam must be a real number in (0, n), got {lam!r}")
    lam = float(lam)
    if not (np.isfinite(lam) and 0 < lam < n):
        raise ValueError(f"lam must be in (0, n) = (0, {n}) for a stable M/M/n queue, "
                         f"got {lam}")
    if rho is None and lam < 1 and n >= 10:
        raise ValueError(f"lam is the total arrival rate of the n = {n} servers, got {lam} "
                         "(a load of under 1/n per server): for a per-server load pass "
                         f"rho={lam}")
    b = _erlang_b(n, lam)
    rho = lam / n
    return float(b / (1.0 - rho * (1.0 - b)))


def halfin_whitt_alpha(beta: ArrayLike) -> float | np.ndarray:
    """The Halfin–Whitt limit ``α(β) = [1 + βΦ(β)/φ(β)]⁻¹`` of Erlang C at the total rate ``λ_n = n − β√n``.

    ``erlang_c(n, n − β√n) → α(β)`` as ``n → ∞`` (Halfin & Whitt 1981).

    Parameters
    ----------
    beta : float or array_like
        ``beta > 0``.

    Returns
    -------
    float or ndarray
        ``α(β)``, in ``(0, 1)``.

    Notes
    -----
    Evaluated as ``expit(−log(βΦ(β)/φ(β)))`` with ``log Φ`` from
    ``scipy.special.log_ndtr``, so it neither overflows nor loses
    precision for large ``β`` (where ``Φ/φ`` grows like ``e^{β²/2}``).

    Examples
    --------
    >>> from qlib.halfin_whitt import erlang_c, halfin_whitt_alpha
    >>> round(halfin_whitt_alpha(1.0), 4)
    0.2234
    >>> round(erlang_c(10_000, 10_000 - 100), 3)
    0.223
    """
    from scipy.special import expit, log_ndtr
    b = np.asarray(beta)
    if b.dtype == bool or not (np.issubdtype(b.dtype, np.integer)
                               or np.issubdtype(b.dtype, np.floating)):
        raise TypeError(f"beta must be a real number or array of them, got {beta!r}")
    b = b.astype(float)
    if not np.all(np.isfinite(b) & (b > 0)):
        raise ValueError(f"beta must be finite and > 0, got {beta!r}")
    logr = np.log(b) + log_ndtr(b) + 0.5 * b * b + 0.5 * math.log(2 * math.pi)
    out = expit(-logr)
    return float(out) if out.ndim == 0 else out


def jsq_d_fixed_point(n: int, beta: float, d: int) -> dict:
    """JSQ(d)'s mean-field fixed point at the total rate ``λ_n = n − β√n`` (per-server load ``ρ = 1 − β/√n``).

    The Vvedenskaya–Mitzenmacher prediction ``q_i = ρ^{(d^i − 1)/(d − 1)}`` (``q_i = ρ^i`` for
    ``d = 1``), the fraction of queues with ``>= i`` tasks.

    Parameters
    ----------
    n : int
        ``n >= 1`` (only ``ρ`` depends on it).
    beta : float
        ``0 < beta < √n``.
    d : int
        ``d >= 1``.

    Returns
    -------
    dict
        ``q`` (the sequence until it drops below ``1e-300``), ``p_wait = ρ^d``
        (``q_1^d``: all ``d`` samples busy), ``mean_wait = Σ_{i≥2} q_i / ρ``
        (Little) and ``cond_wait = mean_wait / p_wait``.  A heuristic at
        finite ``n``: the fixed point is the ``n → ∞`` limit at *fixed* ``ρ``.
    """
    n = _check_n(n)
    beta = _check_beta(beta, n)
    if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 1:
        raise ValueError(f"d must be an integer >= 1, got {d!r}")
    rho = 1.0 - beta / math.sqrt(n)
    # levels until q_i < 1e-300: exponent (d^i − 1)/(d − 1) > 690/(−log ρ)
    emax = 690.8 / -math.log(rho)
    if d == 1:
        e = np.arange(1, int(emax) + 2, dtype=float)
    else:
        e = (float(d) ** np.arange(1, int(math.log(emax * (d - 1) + 1, d)) + 3) - 1) / (d - 1)
    q = rho ** e
    q = q[q >= 1e-300]
    pw = rho ** d
    mw = float(q[1:].sum() / rho) if d > 1 else rho / (1 - rho)
    return {"q": q, "p_wait": float(pw), "mean_wait": mw, "cond_wait": mw / pw}
