"""Delete-one jackknife over independent replications.

A statistic computed from all replications at once (a fit through points
that share the same runs, a ratio of means) has no per-point independent
error; its spread over replications is what the jackknife measures: leave
one replication out at a time, recompute, and scale the spread of the
leave-one-out values by ``(r − 1)/r``. With ``r`` independent replications
the result is used with Student-``t`` on ``r − 1`` degrees of freedom.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from typing import TYPE_CHECKING
from qlib.stats._results import fields_eq
if TYPE_CHECKING:   # names for the annotations only
    from numpy.typing import ArrayLike

__all__ = ["Jackknife", "jackknife"]


@fields_eq
@dataclass(frozen=True)
class Jackknife:
    """A statistic over replications with its delete-one jackknife standard error.

    Attributes
    ----------
    estimate : float
        The statistic on all replications.
    se : float
        Jackknife standard error.
    df : int
        Degrees of freedom, ``r − 1``.
    leave_one_out : numpy.ndarray
        The ``r`` leave-one-out values.
    """

    estimate: float
    se: float
    df: int
    leave_one_out: np.ndarray


def jackknife(replicates: ArrayLike, statistic: Callable[[np.ndarray], float]) -> Jackknife:
    """Delete-one jackknife of ``statistic`` over the first axis of ``replicates``.

    Parameters
    ----------
    replicates : array_like, shape (r, ...)
        One row per independent replication, ``r >= 3``.
    statistic : callable
        Maps an array of rows (shape ``(k, ...)``) to a float.

    Returns
    -------
    Jackknife

    Raises
    ------
    ValueError
        If there are fewer than 3 replications.
    TypeError
        If ``statistic`` is not callable.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([1.0, 2.0, 3.0, 4.0])
    >>> jk = jackknife(x, np.mean)          # for the mean it is the usual s.e.
    >>> bool(np.isclose(jk.se, x.std(ddof=1) / 2))
    True
    """
    if not callable(statistic):
        raise TypeError(f"statistic must be callable, got {type(statistic).__name__}")
    x = np.asarray(replicates, dtype=float)
    r = x.shape[0] if x.ndim else 0
    if r < 3:
        raise ValueError(f"replicates must have at least 3 rows, got {r}")
    full = float(statistic(x))
    loo = np.array([float(statistic(np.delete(x, i, axis=0))) for i in range(r)])
    se = float(np.sqrt((r - 1) / r * np.sum((loo - loo.mean()) ** 2)))
    return Jackknife(full, se, r - 1, loo)
