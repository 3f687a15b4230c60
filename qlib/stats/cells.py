"""Summaries and comparisons of simulated cells (one cell: one graph, size and rate).

A sweep over graphs, sizes and resampling rates compares cells: their
relative excess ``δ = R/R* − 1`` (and ``q(2)``) with replication errors,
differences of two cells with their standard errors, and the first grid
point from which on a condition holds. Each cell is a
:class:`~qlib.sim.result.ReplicationResult` of independent runs.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from qlib.stats.intervals import replication_ci
from typing import TYPE_CHECKING
if TYPE_CHECKING:   # names for the annotations only
    from qlib.sim.result import ReplicationResult

__all__ = ["cell_summary", "paired_difference", "first_reached"]


def cell_summary(rr: ReplicationResult, R_star: float, level: int = 2) -> tuple[float, float,
                 float, float]:
    """``(δ, s.e., q(level), s.e.)`` of a replicated cell, ``δ = R/R* − 1``.

    Parameters
    ----------
    rr : ReplicationResult
        Independent runs (``rr.results``, each with ``mean_response_time`` and
        ``occupancy``).
    R_star : float
        The reference response time, ``> 0``.
    level : int, default 2
        The occupancy level reported next to ``δ``, ``>= 1``.

    Returns
    -------
    tuple of float
        Means over the runs and their standard errors (``r − 1`` degrees of
        freedom).

    Raises
    ------
    ValueError
        If ``R_star`` is not positive or ``level < 1``.

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> runs = [NS(mean_response_time=2.2, occupancy=[1, .9, .5]),
    ...         NS(mean_response_time=1.8, occupancy=[1, .9, .3])]
    >>> [round(v, 3) for v in cell_summary(NS(results=runs), 2.0)]
    [0.0, 0.1, 0.4, 0.1]
    """
    R_star = float(R_star)
    if not R_star > 0:
        raise ValueError(f"R_star must be > 0, got {R_star}")
    if isinstance(level, bool) or int(level) != level or level < 1:
        raise ValueError(f"level must be an integer >= 1, got {level!r}")
    ci = replication_ci([(r.mean_response_time / R_star - 1, r.occupancy[level]) for r in rr.results])
    return float(ci.mean[0]), float(ci.se[0]), float(ci.mean[1]), float(ci.se[1])


def paired_difference(pairs: Sequence) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Differences of independent cells: ``(a − b, s.e., b)`` over pairs of summaries.

    Parameters
    ----------
    pairs : sequence of (summary, summary)
        Each summary starts ``(estimate, s.e., ...)`` (e.g. :func:`cell_summary`).

    Returns
    -------
    tuple of ndarray
        The differences, their standard errors ``hypot(se_a, se_b)`` (the
        cells are independent), and the second estimates.

    Raises
    ------
    ValueError
        If ``pairs`` is empty.

    Examples
    --------
    >>> d, s, b = paired_difference([((0.1, 0.03), (0.05, 0.04))])
    >>> round(float(d[0]), 3), round(float(s[0]), 3)
    (0.05, 0.05)
    """
    pairs = list(pairs)
    if not pairs:
        raise ValueError("pairs must not be empty")
    a = np.array([p[0][:2] for p in pairs], float)
    b = np.array([p[1][:2] for p in pairs], float)
    return a[:, 0] - b[:, 0], np.hypot(a[:, 1], b[:, 1]), b[:, 0]


def first_reached(points: Sequence, test: Callable) -> float:
    """The first grid point from which on ``test`` holds at every later point.

    Parameters
    ----------
    points : sequence of (x, value)
        In increasing ``x``.
    test : callable
        ``test(value) -> bool``.

    Returns
    -------
    float
        That ``x``, or ``inf`` when ``test`` fails at the last point.

    Raises
    ------
    TypeError
        If ``test`` is not callable.

    Examples
    --------
    >>> first_reached([(0, 5), (1, 0.5), (2, 2), (3, 0.1)], lambda v: v < 1)
    3
    """
    if not callable(test):
        raise TypeError(f"test must be callable, got {type(test).__name__}")
    pts = list(points)
    ok = [bool(test(v)) for _, v in pts]
    return next((pts[k][0] for k in range(len(pts)) if all(ok[k:])), math.inf)
