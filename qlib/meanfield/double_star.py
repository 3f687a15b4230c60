"""The static double star as M/M/1 leaves capped by the hubs (a heuristic model).

In the static double star on ``n`` servers each leaf's closed neighbourhood
is itself and the two hubs. The hubs fill until they are almost never the
shorter option and then act as a *cap*: a leaf whose queue has reached the
hubs' level ``K`` passes its arrivals to a hub. Each leaf is then an M/M/1
queue with room for ``K`` tasks, ``P(X = k) ∝ λ^k`` for ``k ≤ K``, and the
cap sits where the diverted arrivals, at rate ``λ (n − 2) P(X = K)``, keep
the two hubs busy:

.. math:: K(n) \\approx \\log\\bigl(\\lambda (n-2)(1-\\lambda)/2\\bigr) / \\log(1/\\lambda).

This is a heuristic model, not a theorem; as ``n → ∞`` the cap grows like
``log n`` and the leaves become ``n`` independent M/M/1 queues.

Examples
--------
>>> from qlib.meanfield.double_star import hub_cap, capped_double_star
>>> hub_cap(1500, 0.9)
40
>>> m = capped_double_star(1500, 0.9)
>>> round(float(m.q[1]), 3), m.K
(0.899, 40)
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from qlib.stats._results import fields_eq

__all__ = ["hub_cap", "capped_double_star", "CappedDoubleStar"]


def _check(n, lam):
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"n must be an int, got {type(n).__name__}")
    if n < 4:
        raise ValueError(f"n must be >= 4, got {n}")
    if not (isinstance(lam, (int, float, np.floating)) and 0 < lam < 1):
        raise ValueError(f"lam must be in (0, 1), got {lam!r}")


def hub_cap(n: int, lam: float) -> int:
    """The level ``K(n)`` at which the two hubs of the static double star cap the leaves.

    Parameters
    ----------
    n : int
        Number of servers (two hubs and ``n − 2`` leaves), ``>= 4``.
    lam : float
        Load per server, in ``(0, 1)``.

    Returns
    -------
    int
        ``round(log(λ (n − 2)(1 − λ)/2) / log(1/λ))``, at least 1.

    Examples
    --------
    >>> hub_cap(5000, 0.9)
    51
    """
    _check(n, lam)
    return max(1, round(math.log(lam * (n - 2) * (1 - lam) / 2) / math.log(1 / lam)))


@fields_eq
@dataclass(frozen=True)
class CappedDoubleStar:
    """The capped model of the static double star.

    Attributes
    ----------
    K : int
        The hubs' cap :func:`hub_cap`.
    q : ndarray, shape (levels + 1,)
        Occupancy ``q(0..levels)`` of the whole system (leaves capped at ``K``,
        the two hubs counted as holding more than ``levels`` tasks).
    R : float
        Mean response time: an accepted leaf arrival waits ``1 + E[X | X < K]``,
        a diverted one ``K + 1``, a hub's own arrival 1.
    """

    K: int
    q: np.ndarray
    R: float


def capped_double_star(n: int, lam: float, max_level: int = 6) -> CappedDoubleStar:
    """Occupancy and mean response time of the static double star in the capped model.

    Parameters
    ----------
    n : int
        Number of servers, ``>= 4``.
    lam : float
        Load per server, in ``(0, 1)``.
    max_level : int, default 6
        Highest level ``i`` of ``q(i)`` returned, ``1 <= max_level <= K``.

    Returns
    -------
    CappedDoubleStar

    Examples
    --------
    >>> m = capped_double_star(5000, 0.9)
    >>> bool(m.R < 1 / (1 - 0.9))          # the cap keeps R below the M/M/1 value
    True
    """
    _check(n, lam)
    K = hub_cap(n, lam)
    if isinstance(max_level, bool) or not isinstance(max_level, (int, np.integer)):
        raise TypeError(f"max_level must be an int, got {type(max_level).__name__}")
    if not 1 <= max_level <= K:
        raise ValueError(f"max_level must be in [1, K = {K}], got {max_level}")
    pi = lam ** np.arange(K + 1)
    pi /= pi.sum()
    tail = np.cumsum(pi[::-1])[::-1]                     # P(X >= i), i = 0..K
    q = ((n - 2) * tail[:max_level + 1] + 2) / n            # the two hubs hold > max_level tasks
    R_acc = 1 + (np.arange(K) * pi[:K]).sum() / (1 - pi[K])
    R = (2 * lam + 2 * (K + 1) + (lam * (n - 2) - 2) * R_acc) / (lam * n)
    return CappedDoubleStar(int(K), q, float(R))
