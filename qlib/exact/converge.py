"""Choose the level cap of an exact tiny-graph solve from the simulation it is compared with.

:func:`qlib.exact.tiny.stationary` caps every queue at ``L`` tasks. Solving at
``L``, ``L + 3``, ``L + 6``, ... and watching the compared quantities settle
gives an estimate of the error the cap leaves (Aitken's geometric tail).
:func:`stationary_converged` raises the cap until that estimate is below a
share (default a fifth) of the simulation's standard error for every
compared quantity, so the cap moves a ``z``-score by less than that share.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from qlib.exact.tiny import ExactResult, stationary
from qlib.stats._results import fields_eq

if TYPE_CHECKING:   # names for the annotations only
    import networkx as nx
    from numpy.typing import ArrayLike

    from qlib.graphs import Graph

__all__ = ["aitken_error", "ConvergedSolve", "stationary_converged"]


def aitken_error(a: ArrayLike, b: ArrayLike, c: ArrayLike) -> np.ndarray:
    """Error left in ``c`` after three solves ``a, b, c`` at increasing caps.

    With ``d1 = |b − a|``, ``d2 = |c − b|`` and ``r`` the largest ratio
    ``d2/d1`` over the entries whose first change exceeds rounding, the
    changes of a geometric sequence leave ``d2·r/(1 − r)`` after ``c``;
    ``inf`` where ``r ≥ 1/2`` (the changes do not shrink fast enough to
    trust the extrapolation).

    Parameters
    ----------
    a, b, c : array_like
        The same quantities from three solves at increasing caps (equal
        shapes).

    Returns
    -------
    ndarray
        The estimated error of each entry of ``c`` (plus ``1e-14`` for
        rounding).

    Raises
    ------
    ValueError
        If the shapes differ.

    Examples
    --------
    >>> aitken_error([1.0], [1.1], [1.11])                 # ratio 0.1: 0.01·0.1/0.9
    array([0.00111111])
    >>> aitken_error([1.0], [1.5], [1.9])                  # ratio 0.8: not trusted
    array([inf])
    """
    a, b, c = (np.atleast_1d(np.asarray(x, dtype=float)) for x in (a, b, c))
    if not a.shape == b.shape == c.shape:
        raise ValueError(f"a, b, c must have equal shapes, got {a.shape}, {b.shape}, {c.shape}")
    d1, d2 = np.abs(b - a), np.abs(c - b)
    big = d1 > 1e-13                                           # above rounding
    r = float(np.max(d2[big] / d1[big])) if big.any() else 0.0
    if r >= 0.5:
        return np.full(c.shape, np.inf)
    return d2 * r / (1.0 - r) + 1e-14


@fields_eq
@dataclass(frozen=True)
class ConvergedSolve:
    """An exact solve whose level cap is converged against a simulation's noise.

    Attributes
    ----------
    result : ExactResult
        The solve at the final cap (``result.truncation``).
    levels : ndarray of int
        The compared levels ``i >= 1`` (those with ``q(i) >= min_q``).
    error : ndarray
        Estimated truncation error of ``result.occupancy`` at ``levels``.
    error_R : float
        Estimated truncation error of the mean response time.
    worst_share : float
        Largest estimated error in units of the simulation's standard error,
        over the levels and ``R``.
    """

    result: ExactResult
    levels: np.ndarray
    error: np.ndarray
    error_R: float
    worst_share: float


def stationary_converged(graph: Graph | nx.Graph, lam: float, mu: float, se: ArrayLike, se_R: float, *, truncation: int = 5,
                         step: int = 3, min_q: float = 1e-3, max_truncation: int = 45,
                         share: float = 0.2) -> ConvergedSolve:
    """Solve the tiny-graph chain with a cap whose error is below ``share·se``.

    Parameters
    ----------
    graph, lam, mu :
        As for :func:`qlib.exact.tiny.stationary`.
    se : array_like
        Standard error of the simulated occupancy, indexed by level (missing
        levels count as 0, which no compared level can have).
    se_R : float
        Standard error of the simulated mean response time, ``> 0``.
    truncation : int, default 5
        First cap tried (``>= 1``).
    step : int, default 3
        Increase of the cap between solves (``>= 1``).
    min_q : float, default 1e-3
        Levels with exact ``q(i) >= min_q`` are compared (in ``(0, 1)``).
    max_truncation : int, default 45
        Give up beyond this cap.
    share : float, default 0.2
        Required error estimate, as a share of the standard errors (``> 0``).

    Returns
    -------
    ConvergedSolve

    Raises
    ------
    ValueError
        On a parameter out of range (named in the message).
    RuntimeError
        If the estimate is not below ``share·se`` by ``max_truncation``.

    Examples
    --------
    >>> from qlib import graphs
    >>> s = stationary_converged(graphs.ring(4), 0.5, 1.0, se=[0.0] + [1e-3] * 30, se_R=1e-3)
    >>> bool(s.worst_share <= 0.2), s.levels.tolist()[:2]
    (True, [1, 2])
    """
    if not (isinstance(truncation, (int, np.integer)) and truncation >= 1):
        raise ValueError(f"truncation must be an int >= 1, got {truncation!r}")
    if not (isinstance(step, (int, np.integer)) and step >= 1):
        raise ValueError(f"step must be an int >= 1, got {step!r}")
    if not 0 < min_q < 1:
        raise ValueError(f"min_q must be in (0, 1), got {min_q!r}")
    if not share > 0:
        raise ValueError(f"share must be > 0, got {share!r}")
    if not (np.isfinite(se_R) and se_R > 0):
        raise ValueError(f"se_R must be finite and > 0, got {se_R!r}")
    se = np.asarray(se, dtype=float)
    if se.ndim != 1:
        raise ValueError(f"se must be one-dimensional, got shape {se.shape}")
    hist, L = [], truncation
    while L <= max_truncation:
        hist.append(stationary(graph, lam, mu, L))
        if len(hist) >= 3:
            k = hist[-3].truncation + 1                            # levels common to the three solves
            a, b, c = (h.occupancy[:k] for h in hist[-3:])
            lv = np.nonzero(c >= min_q)[0][1:]
            if hist[-1].occupancy[k] < min_q and lv.size:      # no compared level beyond k
                s = np.pad(se, (0, max(0, k - se.size)))[:k]
                err = np.zeros(k)
                err[lv] = aitken_error(a[lv], b[lv], c[lv])
                err_R = float(aitken_error(*(np.array([h.mean_response_time]) for h in hist[-3:]))[0])
                if np.all(s[lv] > 0):
                    worst = max(float(np.max(err[lv] / s[lv])), err_R / se_R)
                    if worst <= share:
                        return ConvergedSolve(hist[-1], lv, err[lv], err_R, worst)
        L += step
    raise RuntimeError(f"the level cap did not converge below {share}·se by the truncation {max_truncation}")
