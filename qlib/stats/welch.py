"""Welch–Satterthwaite combinations of independent means.

Two small operations on independent estimates with their own standard errors
and degrees of freedom, as used where cells of a study have unequal spreads:
:func:`welch_difference` (the difference of two sample means) and
:func:`mean_of_means` (the plain average of independent estimates). Both
return ``(estimate, se, df)`` with the Welch–Satterthwaite degrees of freedom
``(Σ v_k)² / Σ (v_k² / df_k)``.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:   # names for the annotations only
    from numpy.typing import ArrayLike

__all__ = ["welch_difference", "mean_of_means"]


def _sample(a, name):
    a = np.asarray(a, dtype=float)
    if a.ndim != 1 or a.size < 2:
        raise ValueError(f"{name} must be a 1-d sample of at least 2 values, got shape {a.shape}")
    return a


def welch_difference(a: ArrayLike, b: ArrayLike) -> tuple[float, float, float]:
    """``mean(b) − mean(a)`` with its Welch standard error and degrees of freedom.

    Parameters
    ----------
    a, b : array_like
        Independent samples, each of at least 2 values.

    Returns
    -------
    (difference, se, df)

    Examples
    --------
    >>> d, se, df = welch_difference([0.0, 2.0], [1.0, 3.0, 5.0])
    >>> d, round(se, 4), round(df, 3)
    (2.0, 1.5275, 2.882)
    """
    a, b = _sample(a, "a"), _sample(b, "b")
    v = [x.var(ddof=1) / x.size for x in (a, b)]
    df = sum(v) ** 2 / sum(vi**2 / (x.size - 1) for vi, x in zip(v, (a, b)))
    return float(b.mean() - a.mean()), math.sqrt(sum(v)), float(df)


def mean_of_means(estimates: ArrayLike, se: ArrayLike, df: ArrayLike) -> tuple[float, float, float]:
    """The average of independent estimates, with its s.e. and Welch df.

    Parameters
    ----------
    estimates, se, df : array_like
        One entry per independent estimate (``se ≥ 0``, ``df > 0``).

    Returns
    -------
    (mean, se, df)

    Examples
    --------
    >>> m, s, d = mean_of_means([1.0, 3.0], [0.3, 0.4], [9, 9])
    >>> m, round(s, 4), round(d, 2)
    (2.0, 0.25, 16.69)
    """
    est, se, df = (np.asarray(x, dtype=float) for x in (estimates, se, df))
    if est.ndim != 1 or est.size == 0 or se.shape != est.shape or df.shape != est.shape:
        raise ValueError("estimates, se and df must be 1-d of the same non-zero length")
    if np.any(se < 0) or np.any(df <= 0):
        raise ValueError("se must be >= 0 and df > 0")
    v = se**2 / est.size**2
    return float(est.mean()), float(math.sqrt(v.sum())), float(v.sum() ** 2 / np.sum(v**2 / df))
