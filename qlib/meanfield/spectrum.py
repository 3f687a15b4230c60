"""The linearised fluid ODE at its equilibrium: slow mode, decay rates, band bound.

Near the equilibrium ``q*`` the error ``e = q − q*`` of the fluid ODE obeys
``ė = J e + O(e²)`` with ``J`` the tridiagonal Jacobian of
:func:`~qlib.meanfield.fluid.jacobian`. Its top eigenvalue ``−γ`` (the
spectral gap, :func:`~qlib.meanfield.fluid.relaxation_rate`) sets the last
stretch of every approach to ``q*``. This module gives what a measurement of
that rate needs: the left eigenvector that projects the error on the slow
mode (:func:`slow_mode`), all the decay rates (:func:`decay_rates`) and the
interlacing-plus-Weyl upper bound on the ``k``-th smallest rate from the M/M/1
band of the isolated vertices (:func:`band_window_bound`).

Examples
--------
>>> from qlib import DegreeDistribution
>>> qs, gamma, w = slow_mode(0.8, DegreeDistribution.point(2))
>>> bool(round(gamma, 4) == round(decay_rates(0.8, DegreeDistribution.point(2))[0], 4))
True
"""
from __future__ import annotations

import math

import numpy as np
from scipy.linalg import eigvalsh_tridiagonal

from qlib.meanfield import fluid
from qlib.meanfield.degrees import DegreeDistribution

__all__ = ["slow_mode", "decay_rates", "band_window_bound"]


def _check(lam, degrees, tol) -> tuple[float, DegreeDistribution, float]:
    if not isinstance(degrees, DegreeDistribution):
        raise TypeError(f"degrees must be a DegreeDistribution, got {type(degrees).__name__}")
    lam = float(lam)
    if not 0.0 < lam < 1.0:
        raise ValueError(f"lam must be in (0, 1), got {lam}")
    tol = float(tol)
    if not 0.0 < tol < 1.0:
        raise ValueError(f"tol must be in (0, 1), got {tol}")
    return lam, degrees, tol


def slow_mode(lam: float, degrees: DegreeDistribution, tol: float = 1e-12
              ) -> tuple[np.ndarray, float, np.ndarray]:
    """The equilibrium, the spectral gap and the left eigenvector of the slow mode.

    Parameters
    ----------
    lam : float
        Load ``λ ∈ (0, 1)``.
    degrees : DegreeDistribution
        Degree law ``p``.
    tol : float, default 1e-12
        Truncation: the levels ``1..K`` with ``K`` the first level where
        ``q*(K) < tol`` (the one :func:`~qlib.meanfield.fluid.solve` uses).

    Returns
    -------
    q_star : numpy.ndarray, shape (K+1,)
        ``q*(0..K)``, with the deepest level computed at full depth.
    gamma : float
        ``γ = −max eig J``.
    w : numpy.ndarray, shape (K,)
        Left eigenvector, ``wᵀJ = −γ wᵀ``, normalised by ``wᵀv = 1`` for the
        right eigenvector ``v`` with ``max |v_i| = 1``, so that late in the
        relaxation ``e ≈ z v`` with ``z = wᵀe`` and ``|z| ≈ ‖e‖_∞``.

    Examples
    --------
    >>> from qlib import DegreeDistribution
    >>> qs, gamma, w = slow_mode(0.8, DegreeDistribution.point(1))
    >>> bool(gamma > 0 and qs[1] == 0.8)
    True
    """
    lam, degrees, tol = _check(lam, degrees, tol)
    K = len(fluid.equilibrium(lam, degrees, tol=tol)) - 1
    qs = np.zeros(K + 1)
    full = fluid.equilibrium(lam, degrees, tol=1e-300)[: K + 1]
    qs[: full.size] = full
    J = fluid.jacobian(qs, lam, degrees)
    ev, V = np.linalg.eig(J)
    v = V[:, np.argmax(ev.real)].real
    v = v / v[np.argmax(np.abs(v))]
    evl, W = np.linalg.eig(J.T)
    k = int(np.argmax(evl.real))
    w = W[:, k].real
    return qs, float(-evl[k].real), w / (w @ v)


def decay_rates(lam: float, degrees: DegreeDistribution, tol: float = 1e-12) -> np.ndarray:
    """All decay rates ``−eig J`` of the linearisation at ``q*``, smallest first.

    ``J`` is symmetrised by a positive diagonal similarity (off-diagonal
    ``√(c_i·1)``, ``c_i = λ g'(q*(i))``) and solved as a symmetric
    tridiagonal matrix. Parameters as for :func:`slow_mode`.

    Examples
    --------
    >>> from qlib import DegreeDistribution
    >>> r = decay_rates(0.8, DegreeDistribution.point(2))
    >>> bool(r[0] > 0 and r[1] > 2 * r[0])
    True
    """
    lam, degrees, tol = _check(lam, degrees, tol)
    J = fluid.jacobian(fluid.equilibrium(lam, degrees, tol=tol), lam, degrees)
    return -eigvalsh_tridiagonal(np.diag(J), np.sqrt(np.diag(J, 1) * np.diag(J, -1)))[::-1]


def band_window_bound(lam: float, degrees: DegreeDistribution, tol: float = 1e-12,
                      k: int = 1) -> float:
    """Upper bound on the ``k``-th smallest decay rate from the M/M/1 band.

    With ``c_i = λ g'(q*(i))`` decreasing to ``c = λ p(0)``, the window of the
    last ``L = K − j + 1`` levels is close to the Toeplitz matrix of an M/M/1
    queue with arrival rate ``c``; interlacing and Weyl's inequality (the
    perturbation's norm bounded by its largest absolute row sum) give, for
    every window,

    ``γ_k ≤ (1 − √c)² + 2√c (1 − cos(kπ/(L+1))) + (c_j − c) + (√c_{j−1} − √c) + (√c_j − √c)``.

    The minimum over the windows is returned.

    Parameters
    ----------
    lam, degrees, tol
        As for :func:`slow_mode`.
    k : int, default 1
        Which rate (1: the gap, 2: the next one).

    Examples
    --------
    >>> from qlib import DegreeDistribution
    >>> mix = DegreeDistribution.mixture([0.5, 0.5], [DegreeDistribution.point(0), DegreeDistribution.point(4)])
    >>> bool(decay_rates(0.8, mix)[0] <= band_window_bound(0.8, mix))
    True
    """
    lam, degrees, tol = _check(lam, degrees, tol)
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    qs = fluid.equilibrium(lam, degrees, tol=tol)
    d = np.arange(degrees.max_degree + 1)
    c = lam * ((d + 1) * degrees.pmf) @ (qs[1:][None, :] ** d[:, None])   # c_i, i = 1..K
    c0, K = lam * degrees.pmf[0], c.size
    if K <= k:
        raise ValueError(f"tol = {tol} leaves {K} levels, too few for k = {k}")
    j = np.arange(1, K - k + 1)
    band = (1 - math.sqrt(c0)) ** 2 + 2 * math.sqrt(c0) * (1 - np.cos(k * np.pi / (K - j + 1)))
    return float(np.min(band + (c[j] - c0) + (np.sqrt(c[j - 1]) - math.sqrt(c0))
                        + (np.sqrt(c[j]) - math.sqrt(c0))))
