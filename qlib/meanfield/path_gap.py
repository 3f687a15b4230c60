"""How far simulated occupancy paths are from the fluid ODE.

:func:`fluid_deviation` compares replicated paths ``q_n(t, ·)`` with the
ODE's solution ``q(t, ·)`` on the same output times and returns, per
replication, the three numbers the fluid-limit chapter studies: the sup
**gap** over the times and the levels the fluid limit describes
(``n q(t, i) ≥ min_count``; a level holding a handful of servers is integer
noise), the **excess** (the time average of ``Σ_{i≥1}(q_n − q)``, in tasks
per server) and the scaled deviation ``√n (q_n − q)`` at the last time on
chosen levels.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from qlib import _validate as V
from qlib.stats._results import fields_eq

__all__ = ["FluidDeviation", "fluid_deviation"]


@fields_eq
@dataclass(frozen=True)
class FluidDeviation:
    """Deviation of replicated paths from the fluid ODE.

    Attributes
    ----------
    gap : numpy.ndarray, shape (r,)
        ``max_{t, i: n q(t,i) ≥ min_count} |q_n(t, i) − q(t, i)|`` per replication.
    excess : numpy.ndarray, shape (r,)
        Time average of ``Σ_{i≥1} (q_n(t, i) − q(t, i))`` per replication.
    z : numpy.ndarray, shape (r, len(levels))
        ``√n (q_n(t_end, i) − q(t_end, i))`` on the chosen levels.
    """

    gap: np.ndarray
    excess: np.ndarray
    z: np.ndarray


def fluid_deviation(paths: Sequence[np.ndarray], fluid_q: np.ndarray, n: int, *,
                    min_count: float = 10.0, which_levels: Sequence[int] = (1, 2, 3)) -> FluidDeviation:
    """Gap, excess and scaled end deviation of paths from the fluid solution.

    Parameters
    ----------
    paths : sequence of numpy.ndarray
        Simulated occupancy paths, each (times × levels) with level 0 first,
        on the output times of ``fluid_q``.
    fluid_q : numpy.ndarray, shape (times, K)
        The ODE's solution on the same times.
    n : int
        Number of servers, ``≥ 1``.
    min_count : float, default 10
        A level enters the gap where ``n q(t, i) ≥ min_count``.
    which_levels : sequence of int
        Levels ``≥ 1`` of the scaled end deviation.

    Returns
    -------
    FluidDeviation

    Examples
    --------
    >>> import numpy as np
    >>> ode = np.array([[1.0, 0.5, 0.1], [1.0, 0.6, 0.2]])
    >>> sim = [ode + np.array([0.0, 0.01, 0.0])]
    >>> d = fluid_deviation(sim, ode, 100, which_levels=(1,))
    >>> round(float(d.gap[0]), 6), round(float(d.excess[0]), 6), round(float(d.z[0, 0]), 6)
    (0.01, 0.01, 0.1)
    """
    n = V.integer(n, "n", lo=1)
    min_count = V.nonnegative(min_count, "min_count")
    fluid_q = np.asarray(fluid_q, dtype=float)
    if fluid_q.ndim != 2:
        raise ValueError(f"fluid_q must be 2-d (times × levels), got shape {fluid_q.shape}")
    if len(paths) == 0:
        raise ValueError("paths must hold at least one path")
    paths = [np.asarray(p, dtype=float) for p in paths]
    if any(p.ndim != 2 or p.shape[0] != fluid_q.shape[0] for p in paths):
        raise ValueError(f"every path must be 2-d with {fluid_q.shape[0]} times, as fluid_q")
    which_levels = [V.integer(i, "which_levels", lo=1) for i in which_levels]
    w = max(fluid_q.shape[1], *(p.shape[1] for p in paths), max(which_levels, default=0) + 1) + 1
    pad = lambda a: np.pad(a, ((0, 0), (0, w - a.shape[1])))  # noqa: E731
    fl = pad(fluid_q)
    dev = np.array([pad(p) for p in paths]) - fl
    return FluidDeviation(gap=np.where(n * fl >= min_count, np.abs(dev), 0.0).max(axis=(1, 2)),
                          excess=dev[:, 1:, 1:].sum(axis=2).mean(axis=1),
                          z=math.sqrt(n) * dev[:, -1, which_levels])
