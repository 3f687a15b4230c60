"""The exact transient law of an M/M/1 queue, by uniformization, with an error bound."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from qlib._lazy import scipy_stats as _st

from qlib import _validate as V
from typing import TYPE_CHECKING
from qlib.stats._results import fields_eq
if TYPE_CHECKING:   # names for the annotations only
    from numpy.typing import ArrayLike

__all__ = ["mm1_transient", "MM1Transient"]


@fields_eq
@dataclass(frozen=True)
class MM1Transient:
    """Tail probabilities of an M/M/1 queue at given times (:func:`~qlib.exact.transient.mm1_transient`).

    Attributes
    ----------
    t : numpy.ndarray, shape (T,)
        The times.
    tail : numpy.ndarray, shape (T, K+1)
        ``tail[k, i] = P(X_{t_k} >= i)``, ``tail[:, 0] = 1``; every level
        that can be occupied at time ``t_k`` with probability above the
        bound is included (the state space is not truncated).
    error_bound : numpy.ndarray, shape (T,)
        ``0 <= P(X_{t_k} >= i) − tail[k, i] <= error_bound[k]`` for every
        ``i >= 1`` (up to rounding): the Poisson mass of the uniformization
        steps left out.
    steps : int
        Number of uniformization steps used (for the largest time).
    lam : float
        The arrival rate (service rate 1).
    error_bounds : dict
        ``{"tail": error_bound}``, under the name every exact solver's
        result shares (certified bounds, up to rounding).
    """

    t: np.ndarray
    tail: np.ndarray
    error_bound: np.ndarray
    steps: int
    lam: float

    @property
    def error_bounds(self):
        """``{"tail": error_bound}`` (certified, up to rounding)."""
        return {"tail": self.error_bound}


def mm1_transient(lam: float, q0: ArrayLike, times: ArrayLike, *,
                  tol: float = 1e-12) -> MM1Transient:
    """``P(X_t >= i)`` for an M/M/1 queue (arrival rate ``lam``, service rate 1).

    Uniformization at rate ``Λ = lam + 1``: ``X_t = Y_{N_t}`` with ``N_t``
    Poisson(``Λ t``) and ``Y`` the jump chain that goes up with probability
    ``lam/Λ`` and down (or stays at 0) with probability ``1/Λ``.  Then
    ``P(X_t = ·) = Σ_k e^{−Λt} (Λt)^k / k! · π_0 P^k``, summed over
    ``k = 0..N`` with ``N`` the smallest integer such that
    ``P(Poisson(Λ t) > N) <= tol`` at every time.  After ``k`` steps the
    chain is at most ``k`` above its start, so the state space needs no
    truncation: the only error is the omitted Poisson mass, reported as
    ``error_bound``.

    Parameters
    ----------
    lam : float
        Arrival rate, ``> 0`` (the queue need not be stable).
    q0 : array_like
        Initial tail probabilities ``q0[i] = P(X_0 >= i)``, ``i = 0..K0``:
        ``q0[0] = 1``, non-increasing in ``[0, 1]``, ``P(X_0 > K0) = 0``.
        ``[1.0]`` is the empty queue.
    times : array_like
        One-dimensional, finite, non-negative times.
    tol : float
        Target error bound, in ``(0, 1e-3]``.

    Returns
    -------
    MM1Transient

    Raises
    ------
    ValueError
        If ``lam`` is not a finite positive number, ``q0`` is not a valid
        tail vector, ``times`` is not a non-empty finite non-negative 1-D
        array, or ``tol`` is out of range.

    Notes
    -----
    The tails ``P(X_t >= i)`` solve the M/M/1 forward equation in the form
    ``d/dt P(X_t >= i) = lam [P(X_t >= i−1) − P(X_t >= i)] − [P(X_t >= i)
    − P(X_t >= i+1)]``, the fluid ODE with ``φ ≡ 1``; this function computes
    them without integrating that equation.
    """
    lam = V.positive(lam, "lam")
    tol = V.real(tol, "tol", lo=0, hi=1e-3, lo_open=True)
    q0 = np.asarray(q0, dtype=float)
    if q0.ndim != 1 or q0.size == 0 or q0[0] != 1.0 or np.any(~np.isfinite(q0)) \
            or np.any(q0 < 0) or np.any(q0 > 1) or np.any(np.diff(q0) > 0):
        raise ValueError("q0 must be a non-increasing 1-D vector in [0, 1] with q0[0] = 1")
    t = np.array(times, dtype=float)
    if t.ndim != 1 or t.size == 0 or np.any(~np.isfinite(t)) or np.any(t < 0):
        raise ValueError("times must be a non-empty 1-D array of finite times >= 0")
    rate = lam + 1.0
    m = rate * t
    steps = int(max(_st.poisson.isf(tol, mk) if mk > 0 else 0 for mk in m))
    while np.any((m > 0) & (_st.poisson.sf(steps, m) > tol)):    # isf is approximate
        steps += 1
    K = q0.size - 1 + steps
    p = np.zeros(K + 2)
    p[: q0.size] = -np.diff(np.append(q0, 0.0))              # P(X_0 = i)
    up, down = lam / rate, 1.0 / rate
    k = np.arange(steps + 1)
    w = np.array([_st.poisson.pmf(k, mk) if mk > 0 else (k == 0).astype(float) for mk in m])
    acc = np.zeros((t.size, K + 2))
    for j in range(steps + 1):
        acc += np.outer(w[:, j], p)
        nxt = np.zeros_like(p)                               # one step of the jump chain
        nxt[1:] += up * p[:-1]
        nxt[:-1] += down * p[1:]
        nxt[0] += down * p[0]
        p = nxt
    tail = np.cumsum(acc[:, ::-1], axis=1)[:, ::-1][:, : K + 1]
    tail[:, 0] = 1.0
    bound = np.array([_st.poisson.sf(steps, mk) if mk > 0 else 0.0 for mk in m])
    for a in (t, tail, bound):
        a.setflags(write=False)
    return MM1Transient(t=t, tail=tail, error_bound=bound, steps=steps, lam=lam)
