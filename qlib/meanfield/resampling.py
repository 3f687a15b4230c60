"""First-order coefficient of slow resampling on the ring: ``R = R* + w/μ + o(1/μ)``.

As ``μ → ∞`` the window law tends to the product of fluid marginals, and at
the product state the Markov closure of a window of ``L >= 3`` queues is
exact to first order in ``1/μ``: an arrival at a vertex correlates the two
queues beside it, which a window of three keeps and the pair closure
(``L = 2``) drops.  So ``w`` read off any ``L >= 3`` is the same number,
while the pair's differs.  :func:`~qlib.meanfield.resampling.first_order_coefficient`
computes ``w_L(μ) = μ (R_L(μ) − R*)`` at ``μ`` and ``2μ`` with
:func:`~qlib.meanfield.pair.ring_window` and removes the ``O(1/μ)`` term of
``w_L(μ)`` by Richardson extrapolation, ``w ≈ 2 w_L(2μ) − w_L(μ)``.
"""
from __future__ import annotations

import math
import numbers

from qlib.meanfield import fluid
from qlib.meanfield.degrees import DegreeDistribution
from qlib.meanfield.pair import _check_int, ring_window

__all__ = ["first_order_coefficient"]


def first_order_coefficient(lam: float, length: int = 3, *, mu: float = 1e3, truncation: int = 8,
                            tol: float = 1e-15) -> float:
    """Coefficient ``w`` of ``R = R* + w/μ + o(1/μ)`` for the ring from the window of length ``L``.

    Parameters
    ----------
    lam : float
        ``λ ∈ (0, 1)``.
    length : int
        Window length ``L >= 2`` (``L = 2`` is the pair closure, which is not
        exact to first order; ``L >= 3`` all give the same ``w``).
    mu : float
        The smaller of the two resampling rates ``μ, 2μ`` used; ``μ >= 10``.
    truncation : int
        Truncation ``K`` of :func:`~qlib.meanfield.pair.ring_window`; near the
        product state the tail is the fluid one (doubly exponential), so a
        small ``K`` suffices.
    tol : float
        Fixed-point tolerance of :func:`~qlib.meanfield.pair.ring_window`.

    Returns
    -------
    float
        ``2 w_L(2μ) − w_L(μ)`` with ``w_L(μ) = μ (R_L(μ) − R*)``.

    Raises
    ------
    ValueError
        If ``lam`` is not in ``(0, 1)``, ``length < 2``, ``truncation < 2`` or
        ``mu < 10`` or not finite.
    TypeError
        If ``length`` or ``truncation`` is not an int, or ``mu`` not a real number.

    Examples
    --------
    >>> w3 = first_order_coefficient(0.9, 3, truncation=6)
    >>> round(w3, 3)
    0.363
    >>> round(first_order_coefficient(0.9, 2, truncation=6), 3) < 0.3     # the pair's w is lower
    True
    """
    L = _check_int(length, "length", 2)
    K = _check_int(truncation, "truncation", 2)
    if isinstance(mu, bool) or not isinstance(mu, numbers.Real):
        raise TypeError(f"mu must be a real number, got {type(mu).__name__}")
    if not (math.isfinite(mu) and mu >= 10):
        raise ValueError(f"mu must be finite and >= 10, got {mu}")
    r_star = fluid.response_time(lam, DegreeDistribution.point(2))
    w = [m * (ring_window(lam, L, m, truncation=K, tol=tol).response_time - r_star)
         for m in (float(mu), 2.0 * float(mu))]
    return 2.0 * w[1] - w[0]
