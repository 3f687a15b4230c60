"""The approach of the fluid ODE to its equilibrium, measured.

Three measurements behind the global-attraction and spectral-gap results of
the equilibrium chapter, each with its own idea:

* :func:`brackets` integrates the fluid ODE from the two brackets of the
  monotonicity proof and from other starts, and returns the largest violation
  of the orderings the proof predicts (monotone brackets, the other solutions
  between them, a non-increasing ``ℓ¹`` distance to ``q*``).
* :func:`slow_decay` measures the decay rate of the projection
  ``z = wᵀ(q − q*)`` on the slow mode over a stretch of the relaxation, with
  the allowance ``κ/γ`` that bounds how far the quadratic remainder can move
  it from the spectral gap ``γ``.
* :func:`gap_structure` locates the spectral gap against the band edge
  ``(1 − √(λ p(0)))²`` of the deep levels, at two truncations, and encloses
  it without trusting the eigensolver (Collatz–Wielandt pivots).
* :func:`offdiagonal_min` checks cooperativity from the drift alone: the
  smallest off-diagonal entry of its central-difference Jacobian at random
  states and laws.
* :func:`project` and :func:`window_rate` turn occupancy paths (simulated or
  integrated) into ``z(t)`` and fit its decay rate on a window, with a
  jackknife standard error over independent replications.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from qlib import _validate as V
from qlib.meanfield import fluid
from qlib.meanfield.degrees import DegreeDistribution
from qlib.meanfield.spectrum import band_window_bound, decay_rates, slow_mode
from qlib.stats._results import fields_eq

if TYPE_CHECKING:   # names for the annotations only
    from numpy.typing import ArrayLike

__all__ = ["Brackets", "brackets", "SlowDecay", "slow_decay", "GapStructure", "gap_structure",
           "project", "window_rate", "offdiagonal_min", "sympy_jacobian_error"]


def _times(t) -> np.ndarray:
    t = np.asarray(t, dtype=float)
    if t.ndim != 1 or t.size < 2 or np.any(np.diff(t) <= 0):
        raise ValueError("t must be an increasing 1-d array of at least 2 times")
    return t


def _pad(a: np.ndarray, width: int) -> np.ndarray:
    """Pad (or cut) the level axis of a (times × levels) array to ``width``."""
    if a.shape[1] >= width:
        return a[:, :width]
    return np.pad(a, ((0, 0), (0, width - a.shape[1])))


@fields_eq
@dataclass(frozen=True)
class Brackets:
    """Solutions of the fluid ODE from the brackets and other starts.

    Attributes
    ----------
    solutions : dict[str, numpy.ndarray]
        ``q(t, 0..W−1)`` for every start, padded to a common width ``W``;
        ``"empty"`` is the lower bracket, ``"upper"`` the upper one.
    q_star : numpy.ndarray
        ``q*(0..W−1)``.
    violation : float
        The largest violation of the proved orderings, per level and output
        time (0 when all hold exactly).
    gap_end : float
        ``‖q_upper(t) − q_empty(t)‖₁`` at the last time.
    """

    solutions: dict
    q_star: np.ndarray
    violation: float
    gap_end: float


def brackets(lam: float, degrees: DegreeDistribution, t: ArrayLike, upper: ArrayLike,
             starts: Mapping[str, Sequence[float]]) -> Brackets:
    """Integrate from the brackets and other starts; measure the orderings.

    Parameters
    ----------
    lam : float
        Load ``λ ∈ (0, 1)``.
    degrees : DegreeDistribution
        Degree law ``p``.
    t : array_like
        Increasing output times, starting at 0.
    upper : array_like
        The upper bracket ``q̄(0..)`` (a supersolution, e.g. ``N`` tasks on
        top of the equilibrium of a higher load).
    starts : mapping of str to array_like
        Other starts; must contain ``"empty"`` (``[1.0]``), the lower bracket.

    Returns
    -------
    Brackets

    Examples
    --------
    >>> import numpy as np
    >>> from qlib import DegreeDistribution
    >>> p = DegreeDistribution.point(1)
    >>> up = np.concatenate([np.ones(3), fluid.equilibrium(0.9, p)])
    >>> b = brackets(0.8, p, np.linspace(0, 100, 201), up, {"empty": [1.0]})
    >>> bool(b.violation < 1e-9 and b.gap_end < 1e-2)
    True
    """
    lam = V.real(lam, "lam", lo=0, hi=1, lo_open=True, hi_open=True)
    if not isinstance(degrees, DegreeDistribution):
        raise TypeError(f"degrees must be a DegreeDistribution, got {type(degrees).__name__}")
    if not isinstance(starts, Mapping) or "empty" not in starts:
        raise ValueError("starts must be a mapping with an 'empty' start (the lower bracket)")
    t = _times(t)
    sols = {k: fluid.solve(lam, degrees, q0, t).q for k, q0 in {"upper": upper, **starts}.items()}
    W = max(s.shape[1] for s in sols.values())
    sols = {k: _pad(s, W) for k, s in sols.items()}
    lo, hi = sols["empty"], sols["upper"]
    qs = np.pad(fluid.equilibrium(lam, degrees), (0, W))[:W]
    viol = max(-np.diff(lo, axis=0).min(), np.diff(hi, axis=0).max(),              # monotone
               *(max((lo - s).max(), (s - hi).max()) for s in sols.values()),     # sandwiched
               *(np.diff(np.abs(s - qs).sum(axis=1)).max() / W for s in sols.values()))  # ℓ¹ contraction
    return Brackets(sols, qs, float(max(viol, 0.0)), float(np.abs(hi - lo).sum(axis=1)[-1]))


@fields_eq
@dataclass(frozen=True)
class SlowDecay:
    """The decay of the slow-mode projection over one stretch of a relaxation.

    Attributes
    ----------
    gamma : float
        The spectral gap ``γ``.
    rate : float
        ``log|z(t₁)/z(t₂)| / (t₂ − t₁)`` over the stretch from the moment
        ``|z|`` falls below ``z_start`` for good to the moment it falls
        below ``z_stop``.
    allowance : float
        ``max κ/γ`` over the stretch plus the integration error's share: the
        bound on ``|rate/γ − 1|``.
    error : numpy.ndarray
        ``max_i |q(t, i) − q*(i)|`` at every output time.
    """

    gamma: float
    rate: float
    allowance: float
    error: np.ndarray

    @property
    def relative(self) -> float:
        """``rate/γ − 1``."""
        return self.rate / self.gamma - 1


def slow_decay(lam: float, degrees: DegreeDistribution, q0: ArrayLike, t: ArrayLike, *, z_start: float = 1e-4,
               z_stop: float = 1e-7, int_tol: float = 1e-10) -> SlowDecay:
    """Decay rate of ``z = wᵀ(q − q*)`` against the spectral gap, with its allowance.

    With ``ė = Je + N(e)`` and ``|wᵀN(e)| ≤ ‖w‖₁ λ max|g''| ‖e‖²_∞``, the rate
    of ``z`` differs from ``γ`` by at most ``κ = ‖w‖₁ λ max|g''| ‖e‖²_∞/|z|``;
    the allowance adds the integration error ``int_tol`` per level at both ends
    of the stretch, relative to ``z_stop`` and spread over its ``log(z_start/z_stop)``.

    Parameters
    ----------
    lam, degrees
        Load and degree law.
    q0 : array_like
        The start.
    t : array_like
        Output times; the stretch must span more than ten of them.
    z_start, z_stop : float
        The stretch, ``0 < z_stop < z_start``.
    int_tol : float
        The integrator's error per level.

    Returns
    -------
    SlowDecay

    Examples
    --------
    >>> import numpy as np
    >>> from qlib import DegreeDistribution
    >>> s = slow_decay(0.8, DegreeDistribution.point(2), [1.0], np.linspace(0, 300, 3001))
    >>> bool(abs(s.relative) < s.allowance < 0.5)
    True
    """
    z_start = V.positive(z_start, "z_start")
    z_stop = V.positive(z_stop, "z_stop")
    if not z_stop < z_start:
        raise ValueError(f"z_stop must be below z_start, got {z_stop} >= {z_start}")
    t = _times(t)
    qs, gamma, w = slow_mode(lam, degrees)
    d = np.arange(degrees.max_degree + 1)
    gmax = float(np.sum(degrees.pmf * (d + 1) * d))                  # max of g'' on [0, 1]
    sol = fluid.solve(lam, degrees, q0, t).q
    W = max(sol.shape[1], qs.size)
    e = (_pad(sol, W) - np.pad(qs, (0, W - qs.size)))[:, 1:]
    err, z = np.max(np.abs(e), axis=1), e[:, : w.size] @ w
    above = np.nonzero(np.abs(z) >= z_start)[0]
    i1 = above[-1] + 1 if above.size else 0
    i2 = i1 + int(np.argmax(np.abs(z[i1:]) < z_stop))
    if i2 <= i1 + 10:
        raise ValueError("the stretch from z_start to z_stop spans ten output times or fewer: extend t")
    rate = math.log(abs(z[i1] / z[i2])) / (t[i2] - t[i1])
    kappa = np.max(np.abs(w).sum() * lam * gmax * err[i1:i2 + 1] ** 2 / np.abs(z[i1:i2 + 1]))
    allow = kappa / gamma + 2 * np.abs(w).sum() * int_tol / z_stop / math.log(z_start / z_stop)
    return SlowDecay(float(gamma), float(rate), float(allow), err)


def project(paths: Sequence[np.ndarray], q_star: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``z(t) = wᵀ(q(t) − q*)`` on the levels ``1..K`` for each path.

    Parameters
    ----------
    paths : sequence of numpy.ndarray
        Occupancy paths, each (times × levels) with level 0 first.
    q_star : numpy.ndarray, shape (K+1,)
        ``q*(0..K)``.
    w : numpy.ndarray, shape (K,)
        The left eigenvector of the slow mode.

    Returns
    -------
    numpy.ndarray, shape (len(paths), times)

    Examples
    --------
    >>> import numpy as np
    >>> project([np.array([[1.0, 0.5, 0.2]])], np.array([1.0, 0.4, 0.1]), np.array([1.0, 1.0]))
    array([[0.2]])
    """
    q_star, w = np.asarray(q_star, dtype=float), np.asarray(w, dtype=float)
    if w.shape != (q_star.size - 1,):
        raise ValueError(f"w must have shape ({q_star.size - 1},), got {w.shape}")
    return np.array([(_pad(np.asarray(p, dtype=float), q_star.size) - q_star)[:, 1:] @ w for p in paths])


def window_rate(times: ArrayLike, Z: np.ndarray, window: tuple[float, float]) -> tuple[float, float]:
    """Decay rate of the mean ``|z̄(t)|`` on a window, with a jackknife s.e.

    Fits ``log|z̄(t)|`` by least squares on ``window[0] ≤ t ≤ window[1]``;
    the standard error is the jackknife over the rows (independent
    replications) of ``Z``.

    Parameters
    ----------
    times : array_like, shape (T,)
    Z : numpy.ndarray, shape (r, T)
        ``z(t)`` of ``r ≥ 2`` replications.
    window : (float, float)

    Returns
    -------
    (rate, se)

    Examples
    --------
    >>> import numpy as np
    >>> t = np.linspace(0, 5, 51)
    >>> Z = np.array([np.exp(-0.5 * t) * (1 + 0.01 * k) for k in range(4)])
    >>> rate, se = window_rate(t, Z, (1.0, 4.0))
    >>> round(rate, 6), bool(se < 1e-12)
    (0.5, True)
    """
    times = _times(times)
    Z = np.asarray(Z, dtype=float)
    if Z.ndim != 2 or Z.shape[0] < 2 or Z.shape[1] != times.size:
        raise ValueError(f"Z must have shape (r >= 2, {times.size}), got {Z.shape}")
    win = (times >= window[0]) & (times <= window[1])
    if win.sum() < 2:
        raise ValueError(f"window must hold at least 2 times, got {window}")
    r = Z.shape[0]
    means = np.vstack([Z.mean(axis=0), (Z.sum(axis=0) - Z) / (r - 1)])      # all, leave-one-out
    rates = -np.polyfit(times[win], np.log(np.abs(means[:, win])).T, 1)[0]
    jack = rates[1:]
    return float(rates[0]), float(math.sqrt((r - 1) / r * np.sum((jack - jack.mean()) ** 2)))


@dataclass(frozen=True)
class GapStructure:
    """Where the spectral gap sits, at two truncations.

    Attributes
    ----------
    tols : tuple of float
        The truncations ``q*(K) < tol``.
    gaps : tuple of float
        ``γ_K`` at each truncation (:func:`~qlib.meanfield.fluid.relaxation_rate`).
    edge : float
        The band edge ``(1 − √(λ p(0)))²``.
    window_bounds : tuple of float
        :func:`~qlib.meanfield.spectrum.band_window_bound` for the gap (``k = 1``).
    next_rates : tuple of float
        The second decay rate at each truncation.
    next_bounds : tuple of float
        :func:`~qlib.meanfield.spectrum.band_window_bound` for it (``k = 2``).
    enclosure : float
        ``max |π_1|`` of the Collatz–Wielandt pivots at ``μ = −γ_K``: the width
        of the enclosure of each gap (``nan`` if a pivot ``π_2..π_K`` is not positive).
    edge_below : bool
        Whether ``J + edge·I`` has all pivots positive at every truncation
        (Sylvester: every eigenvalue of ``J`` is below ``−edge``, i.e. ``γ_K > edge``).
    """

    tols: tuple
    gaps: tuple
    edge: float
    window_bounds: tuple
    next_rates: tuple
    next_bounds: tuple
    enclosure: float
    edge_below: bool


def gap_structure(lam: float, degrees: DegreeDistribution,
                  tols: Sequence[float] = (1e-12, 1e-100)) -> GapStructure:
    """The spectral gap against the band edge of the deep levels.

    Parameters
    ----------
    lam : float
        Load ``λ ∈ (0, 1)``.
    degrees : DegreeDistribution
        Degree law ``p``.
    tols : sequence of float
        Truncations (each in ``(0, 1)``).

    Returns
    -------
    GapStructure

    Examples
    --------
    >>> from qlib import DegreeDistribution
    >>> s = gap_structure(0.8, DegreeDistribution.point(2))
    >>> bool(s.enclosure < 1e-12 and abs(s.gaps[0] - s.gaps[1]) < 1e-9)
    True
    """
    lam = V.real(lam, "lam", lo=0, hi=1, lo_open=True, hi_open=True)
    if not isinstance(degrees, DegreeDistribution):
        raise TypeError(f"degrees must be a DegreeDistribution, got {type(degrees).__name__}")
    tols = tuple(V.real(x, "tols", lo=0, hi=1, lo_open=True, hi_open=True) for x in tols)
    if not tols:
        raise ValueError("tols must hold at least one truncation")
    edge = (1 - math.sqrt(lam * degrees.pmf[0])) ** 2
    gaps = tuple(fluid.relaxation_rate(lam, degrees, tol=x) for x in tols)
    enclosure, edge_below = 0.0, True
    for x, gam in zip(tols, gaps):
        piv = fluid.jacobian_pivots(lam, degrees, -gam, tol=x)
        enclosure = max(enclosure, abs(piv[0])) if np.all(piv[1:] > 0) else math.nan
        edge_below &= bool(np.all(fluid.jacobian_pivots(lam, degrees, -edge, tol=x) > 0))
    return GapStructure(tols, gaps, float(edge),
                        tuple(band_window_bound(lam, degrees, x) for x in tols),
                        tuple(float(decay_rates(lam, degrees, x)[1]) for x in tols),
                        tuple(band_window_bound(lam, degrees, x, k=2) for x in tols),
                        float(enclosure), edge_below)


def offdiagonal_min(lam: float, *, trials: int = 200, max_degree: int = 6, truncation: int = 8,
                    h: float = 1e-5, seed: int = 14) -> float:
    """Smallest off-diagonal entry of the drift's Jacobian, by central differences.

    At ``trials`` random states (``truncation`` decreasing values in ``(h, 1 − h)``)
    and random degree laws on ``{0, …, max_degree}`` (Dirichlet(1)), the
    Jacobian of :func:`~qlib.meanfield.fluid.drift` is approximated by central
    differences with step ``h`` (not by :func:`~qlib.meanfield.fluid.jacobian`).
    A cooperative system gives a value ``≥ 0`` up to the differencing error.

    Parameters
    ----------
    lam : float
        Load ``λ > 0``.
    trials, max_degree, truncation : int
        Sizes, each ``≥ 1``.
    h : float
        Step, in ``(0, 0.1)``.
    seed : int
        Seed of the random states and laws.

    Returns
    -------
    float

    Examples
    --------
    >>> bool(offdiagonal_min(0.8, trials=5) > -1e-8)
    True
    """
    lam = V.positive(lam, "lam")
    trials = V.integer(trials, "trials", lo=1)
    max_degree = V.integer(max_degree, "max_degree", lo=1)
    truncation = V.integer(truncation, "truncation", lo=1)
    h = V.real(h, "h", lo=0, hi=0.1, lo_open=True, hi_open=True)
    rng, worst = np.random.default_rng(seed), math.inf
    for _ in range(trials):
        law = DegreeDistribution(rng.dirichlet(np.ones(max_degree + 1)))
        q = np.concatenate(([1.0], np.sort(rng.uniform(h, 1 - h, truncation))[::-1]))
        J = np.array([(fluid.drift(q + h * e, lam, law) - fluid.drift(q - h * e, lam, law))[1:] / (2 * h)
                      for e in np.eye(q.size)[1:]]).T
        worst = min(worst, float((J - np.diag(np.diag(J))).min()))
    return worst


def sympy_jacobian_error(lam: float, laws: Mapping[str, DegreeDistribution], truncation: int = 6) -> float:
    """Largest difference between sympy's Jacobian of the drift and :func:`~qlib.meanfield.fluid.jacobian`.

    The drift on levels ``1..truncation`` (``q(0) = 1``, ``q(truncation+1) = 0``) is
    written symbolically with the law's exact generating function
    (:meth:`~qlib.meanfield.degrees.DegreeDistribution.pgf_symbolic`),
    differentiated by sympy, and evaluated at ``q*``; an independent route to
    the Jacobian the library computes in closed form.

    Parameters
    ----------
    lam : float
        Load ``λ ∈ (0, 1)``.
    laws : mapping of str to DegreeDistribution
    truncation : int
        Number of levels kept, ``≥ 2``.

    Returns
    -------
    float

    Examples
    --------
    >>> from qlib import DegreeDistribution
    >>> bool(sympy_jacobian_error(0.8, {"δ_2": DegreeDistribution.point(2)}) < 1e-14)
    True
    """
    import sympy as sp

    lam = V.real(lam, "lam", lo=0, hi=1, lo_open=True, hi_open=True)
    truncation = V.integer(truncation, "truncation", lo=2)
    if not isinstance(laws, Mapping) or not all(isinstance(p, DegreeDistribution) for p in laws.values()):
        raise TypeError("laws must be a mapping of names to DegreeDistribution")
    x, lam_s = sp.Symbol("x"), sp.Symbol("lambda")
    qsym = sp.symbols(f"q1:{truncation + 1}")
    qq, err = [sp.Integer(1), *qsym, sp.Integer(0)], 0.0
    for p in laws.values():
        phi = sp.Lambda(x, p.pgf_symbolic(x))
        F = sp.Matrix([lam_s * (qq[i - 1] * phi(qq[i - 1]) - qq[i] * phi(qq[i])) - (qq[i] - qq[i + 1])
                       for i in range(1, truncation + 1)])
        qs = np.pad(fluid.equilibrium(lam, p, tol=1e-300), (0, truncation + 1))[: truncation + 1]
        J = np.array(F.jacobian(qsym).subs({lam_s: lam, **dict(zip(qsym, qs[1:]))}).evalf(), dtype=float)
        err = max(err, float(np.max(np.abs(J - fluid.jacobian(qs, lam, p)))))
    return err
