"""Weighted least-squares fits of rates on log-log axes, with a standard error of the slope."""
from __future__ import annotations

import math
import numpy as np
from dataclasses import dataclass
from qlib._lazy import scipy_stats as _st
from typing import TYPE_CHECKING
from qlib.stats._results import fields_eq
if TYPE_CHECKING:   # names for the annotations only
    from numpy.typing import ArrayLike

__all__ = ['loglog_slope', 'LogLogFit']


# ---------------------------------------------------------------- rates

@fields_eq
@dataclass(frozen=True)
class LogLogFit:
    """Weighted least-squares line ``log y = intercept + slope · log x``.

    Attributes
    ----------
    slope, slope_se, intercept, intercept_se : float
        Estimates and standard errors (from the given s.e. of ``y``; not
        rescaled by the fit's χ²).
    cov : ndarray, shape (2, 2)
        Covariance of (intercept, slope).
    chi2 : float
        Weighted residual sum of squares.
    dof : int
        ``len(x) − number of fitted parameters``.
    p_fit : float
        χ² goodness-of-fit p-value (small: the line does not describe the
        points within their errors).
    """

    slope: float
    slope_se: float
    intercept: float
    intercept_se: float
    cov: np.ndarray
    chi2: float
    dof: int
    p_fit: float

    def predict(self, x):
        """``exp(intercept) · x**slope``."""
        return np.exp(self.intercept) * np.asarray(x, dtype=float) ** self.slope


def loglog_slope(x: ArrayLike, y: ArrayLike, se: ArrayLike, *,
                 slope: float | None = None) -> LogLogFit:
    """Weighted fit of ``log y`` against ``log x``, with standard errors.

    Parameters
    ----------
    x, y : array_like
        Positive abscissae and ordinates (at least 3 points, or 2 with
        ``slope`` fixed).
    se : array_like
        Standard errors of ``y``; the s.e. of ``log y`` is ``se / y`` (delta
        method). The points must be independent.
    slope : float, optional
        Fix the slope (e.g. ``-0.5``) and fit only the intercept.

    Returns
    -------
    LogLogFit

    Raises
    ------
    ValueError
        If the arrays differ in length, ``x``, ``y`` or ``se`` are not
        positive, or there are too few points.
    """
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    s = np.broadcast_to(np.asarray(se, dtype=float), y.shape).ravel()
    if not (len(x) == len(y) == len(s)):
        raise ValueError("x, y and se must have the same length")
    npar = 1 if slope is not None else 2
    if len(x) < npar + 1:
        raise ValueError(f"need at least {npar + 1} points, got {len(x)}")
    for name, v in (("x", x), ("y", y), ("se", s)):
        if np.any(~(v > 0)) or not np.all(np.isfinite(v)):
            raise ValueError(f"{name} must be finite and > 0")
    lx, ly, w = np.log(x), np.log(y), (y / s) ** 2
    if slope is not None:
        b = float(slope)
        a = float(np.sum(w * (ly - b * lx)) / w.sum())
        cov = np.array([[1.0 / w.sum(), 0.0], [0.0, 0.0]])
    else:
        X = np.column_stack([np.ones_like(lx), lx])
        cov = np.linalg.inv(X.T @ (w[:, None] * X))
        a, b = cov @ (X.T @ (w * ly))
    res = ly - a - b * lx
    chi2 = float(np.sum(w * res ** 2))
    dof = len(x) - npar
    return LogLogFit(float(b), float(math.sqrt(cov[1, 1])), float(a), float(math.sqrt(cov[0, 0])),
                     cov, chi2, dof, float(_st.chi2.sf(chi2, dof)))
