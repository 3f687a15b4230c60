"""Who waits under JSQ in the Halfin–Whitt regime: the small estimators of ``chapters/ht_waiting.md``.

* :func:`wls`: weighted least squares with the coefficients' covariance and the fit's χ²;
* :func:`intercept_model_bias`: the bias that the neglected ``x², x³`` terms of an
  exact expansion put into a weighted straight-line intercept;
* :func:`shrink`: move an estimate towards its target by a bias allowance;
* :func:`ratio_se`: ``E[Q_3]/E[Q_2]`` from a run's batch averages, with its
  delta-method standard error;
* :func:`transient_cumulative_wait`: the exact mean cumulative waiting
  ``E W_n(t) = ∫_0^t E[N − Q_1] ds`` from a start with no queue of length three,
  by :func:`~qlib.halfin_whitt.transient.transient_jsq`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from typing import TYPE_CHECKING
from qlib.stats._results import fields_eq
if TYPE_CHECKING:   # names for the annotations only
    from collections.abc import Sequence
    from numpy.typing import ArrayLike

__all__ = ["wls", "intercept_model_bias", "shrink", "ratio_se", "transient_cumulative_wait",
           "CumulativeWait"]


def _arr(x, name):
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be array_like of numbers") from None
    return a


def wls(X: ArrayLike, y: ArrayLike, se: ArrayLike) -> tuple[np.ndarray, np.ndarray, float]:
    """Weighted least squares ``y ≈ X b`` with weights ``1/se²``.

    Parameters
    ----------
    X : array_like, shape (m, p)
        Design matrix, ``m > p``.
    y, se : array_like, shape (m,)
        Observations and their standard errors (``> 0``).

    Returns
    -------
    coef : ndarray, shape (p,)
    cov : ndarray, shape (p, p)
        Covariance of ``coef`` when ``se`` are the true standard errors.
    chi2 : float
        ``Σ (y − X b)² / se²``, χ² on ``m − p`` degrees of freedom under the model.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([0., 1., 2.])
    >>> coef, cov, chi2 = wls(np.column_stack([np.ones(3), x]), 1 + 2 * x, np.ones(3))
    >>> np.round(coef, 12).tolist(), round(chi2, 12)
    ([1.0, 2.0], 0.0)
    """
    X, y, se = _arr(X, "X"), _arr(y, "y"), _arr(se, "se")
    if X.ndim != 2 or y.shape != (X.shape[0],) or se.shape != y.shape:
        raise ValueError(f"X must be (m, p) with y, se of shape (m,), got {X.shape}, {y.shape}, {se.shape}")
    if X.shape[0] <= X.shape[1]:
        raise ValueError(f"X needs more rows than columns, got {X.shape}")
    if not np.all(se > 0):
        raise ValueError("se must be > 0")
    w = 1 / se**2
    cov = np.linalg.inv(X.T @ (w[:, None] * X))
    coef = cov @ X.T @ (w * y)
    return coef, cov, float(np.sum(w * (y - X @ coef) ** 2))


def intercept_model_bias(n_exact: ArrayLike, y_exact: ArrayLike, x: ArrayLike,
                         se: ArrayLike) -> float:
    """Bias of the weighted intercept of ``c + d x`` fitted at ``x`` (``x = n^{-1/2}``)
    from the ``e x² + f x³`` terms of a cubic fitted to exact values.

    Parameters
    ----------
    n_exact, y_exact : array_like
        Exact values ``y(n)`` at four or more ``n``; a cubic in ``n^{-1/2}``
        is fitted through them.
    x, se : array_like
        The abscissae and standard errors of the straight-line fit whose
        intercept is in question.

    Returns
    -------
    float
        ``Σ_i a_i (e x_i² + f x_i³)``, ``a`` the intercept's weights.

    Examples
    --------
    >>> import numpy as np
    >>> n = np.array([100, 200, 400, 800, 1600.])
    >>> y = 1 + 0.5 * n**-0.5 + 3 * n**-1.0
    >>> b = intercept_model_bias(n, y, np.array([0.1, 0.05, 0.025]), np.ones(3))
    >>> bool(b < 0)
    True
    """
    n_exact, y_exact = _arr(n_exact, "n_exact"), _arr(y_exact, "y_exact")
    x, se = _arr(x, "x"), _arr(se, "se")
    if n_exact.size < 4 or n_exact.shape != y_exact.shape:
        raise ValueError("n_exact and y_exact must be of one shape with at least 4 points")
    f, e = np.polyfit(n_exact**-0.5, y_exact, 3)[:2]
    Xw = np.column_stack([np.ones_like(x), x]) / se[:, None]
    a = np.linalg.solve(Xw.T @ Xw, Xw.T / se)[0]
    return float(a @ (e * x**2 + f * x**3))


def shrink(est: ArrayLike, target: ArrayLike, allowance: ArrayLike) -> np.ndarray:
    """Move ``est`` towards ``target`` by at most ``allowance`` (a bias
    allowance before a significance test); never past the target.

    Examples
    --------
    >>> shrink([1.3, 0.9], 1.0, 0.2).tolist()
    [1.1, 1.0]
    """
    d = _arr(est, "est") - _arr(target, "target")
    allowance = _arr(allowance, "allowance")
    if np.any(allowance < 0):
        raise ValueError("allowance must be >= 0")
    return np.asarray(target, float) + np.sign(d) * np.maximum(np.abs(d) - allowance, 0)


def ratio_se(num: ArrayLike, den: ArrayLike) -> tuple[float, float, int]:
    """``Σ num / Σ den`` from batch averages, its delta-method s.e. and degrees of freedom.

    Parameters
    ----------
    num, den : array_like, shape (k,)
        Batch averages (``k >= 2``) of the numerator and denominator, e.g.
        ``Q_3`` and ``Q_2`` of one run.

    Returns
    -------
    ratio, se, df : float, float, int

    Examples
    --------
    >>> r, se, df = ratio_se([1, 1, 1, 1], [2, 2, 2, 2])
    >>> (r, se, df)
    (0.5, 0.0, 3)
    """
    num, den = _arr(num, "num"), _arr(den, "den")
    if num.shape != den.shape or num.ndim != 1 or num.size < 2:
        raise ValueError("num and den must be 1-d of one length >= 2")
    if not den.mean() > 0:
        raise ValueError("den must have a positive mean")
    e = num.mean() / den.mean()
    z = (num - e * den) / den.mean()
    return float(e), float(z.std(ddof=1) / math.sqrt(z.size)), int(z.size - 1)


@fields_eq
@dataclass(frozen=True)
class CumulativeWait:
    """Result of :func:`transient_cumulative_wait`: ``times``, the mean
    cumulative waiting ``mean[i] = E W_n(times[i])`` and the bound ``error``
    on it from the mass the truncated chain lost (``√n``-scaled values are
    ``mean / √n``)."""

    n: int
    beta: float
    times: np.ndarray
    mean: np.ndarray
    error: np.ndarray


def transient_cumulative_wait(n: int, beta: float, initial: Sequence[int], t_end: float, *,
                              dt: float = 0.05) -> CumulativeWait:
    """Exact ``E W_n(t) = ∫_0^t E[N − Q_1](s) ds`` of the JSQ chain started
    without queues of length three (``Q_3(0) = 0``, so ``N − Q_1 = Q_2`` on the
    whole path), by :func:`~qlib.halfin_whitt.transient.transient_jsq` on a time
    grid of step ``dt`` and Simpson's rule between its points.

    Parameters
    ----------
    n : int
        ``n >= 2``.
    beta : float
        ``0 < beta < √n``.
    initial : sequence of int
        ``(Q_1, Q_2)`` at time 0, ``Q_2 < n``.
    t_end : float
        ``> 0``, a multiple of ``2 dt``.
    dt : float
        Step of the time grid.

    Returns
    -------
    CumulativeWait
        At the times ``0, 2dt, 4dt, …, t_end``.

    Examples
    --------
    >>> r = transient_cumulative_wait(16, 1.0, (12, 0), 0.4, dt=0.1)
    >>> bool(r.mean[-1] > 0 and r.mean[0] == 0)
    True
    """
    from qlib.halfin_whitt.transient import transient_jsq
    if not (isinstance(t_end, (int, float)) and t_end > 0):
        raise ValueError(f"t_end must be > 0, got {t_end!r}")
    if not dt > 0:
        raise ValueError(f"dt must be > 0, got {dt!r}")
    k = int(round(t_end / dt))
    if k % 2 or abs(k * dt - t_end) > 1e-9:
        raise ValueError(f"t_end must be an even multiple of dt, got t_end = {t_end}, dt = {dt}")
    if len(initial) > 2 and initial[2] != 0:
        raise ValueError("initial must have Q_3 = 0")
    times = np.arange(k + 1) * dt
    r = transient_jsq(n, beta, list(initial[:2]), times.tolist())
    q2 = np.asarray(r.mean_x2) * math.sqrt(n)
    err = np.asarray(r.error) * math.sqrt(n)
    # Simpson on each pair of steps
    inc = dt / 3 * (q2[:-2:2] + 4 * q2[1:-1:2] + q2[2::2])
    inc_e = dt / 3 * (err[:-2:2] + 4 * err[1:-1:2] + err[2::2])
    return CumulativeWait(int(n), float(beta), times[::2], np.concatenate([[0.0], np.cumsum(inc)]),
                          np.concatenate([[0.0], np.cumsum(inc_e)]))
