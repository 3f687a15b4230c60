"""The tail ratio of one long queue moved between an isolated and a shared position.

A heuristic for the tail of the occupancy at a bounded resampling rate ``mu``
when a fraction ``p0`` of the positions is isolated (degree 0): a server with a
long queue receives its position's arrivals (rate ``lam``) while isolated and
almost nothing otherwise, serves at rate 1 throughout, and moves to a uniform
position at rate ``mu``. At high levels its queue is a quasi-birth-death
process in a two-state environment, whose stationary law decays like ``z^i``
with ``z`` the root in ``(0, 1)`` of ``det(U + z A_1 + z^2 D) = 0``
(``U = diag(lam, 0)``, ``D = I``, ``A_1 = Q - U - D``, ``Q`` the environment's
generator). ``z`` runs from ``lam`` (``mu = 0``) to ``lam * p0`` (``mu → ∞``).
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["tail_ratio_qbd"]


def tail_ratio_qbd(lam: float, mu: float, p0: float) -> float:
    """Decay ratio ``z(mu)`` at resampling rate ``mu`` of the two-phase QBD heuristic for the occupancy tail.

    Parameters
    ----------
    lam : float
        Load per server, in ``(0, 1)``.
    mu : float
        Resampling rate, ``>= 0`` and finite.
    p0 : float
        Fraction of isolated positions, in ``(0, 1]``.

    Returns
    -------
    float
        The root in ``(0, 1)`` of the characteristic equation: ``lam`` at
        ``mu = 0``, decreasing towards ``lam * p0`` as ``mu`` grows.

    Raises
    ------
    ValueError
        If ``lam``, ``mu`` or ``p0`` is out of range.

    Examples
    --------
    >>> round(tail_ratio_qbd(0.9, 0.0, 0.5), 6)
    0.9
    >>> round(tail_ratio_qbd(0.9, 1e6, 0.5), 3)
    0.45
    """
    lam, mu, p0 = float(lam), float(mu), float(p0)
    if not 0.0 < lam < 1.0:
        raise ValueError(f"lam must be in (0, 1), got {lam}")
    if not (mu >= 0.0 and math.isfinite(mu)):
        raise ValueError(f"mu must be finite and >= 0, got {mu}")
    if not 0.0 < p0 <= 1.0:
        raise ValueError(f"p0 must be in (0, 1], got {p0}")
    a, b = mu * (1 - p0), mu * p0                    # isolated -> shared, shared -> isolated
    cubic = np.polysub(np.polymul([1, -(a + lam + 1), lam], [1, -(b + 1)]), [0, 0, a * b, 0])
    quad, _ = np.polydiv(cubic, [1, -1])              # z = 1 is always a root
    roots = np.roots(quad)
    return float(roots.real.min())
