"""Student-t intervals for independent replications, and the argument checks of qlib.stats."""
from __future__ import annotations

import math
import numbers
import numpy as np
from dataclasses import dataclass
from scipy import stats as _st

__all__ = ['replication_ci', 'ReplicationCI', 't_quantile']


# ---------------------------------------------------------------- validation

def _check_level(level, name="level"):
    if isinstance(level, bool) or not isinstance(level, numbers.Real):
        raise TypeError(f"{name} must be a real number in (0, 1), got {level!r}")
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"{name} must be in (0, 1), got {level}")
    return level


def _check_dt(dt):
    if isinstance(dt, bool) or not isinstance(dt, numbers.Real):
        raise TypeError(f"dt must be a real number > 0, got {dt!r}")
    dt = float(dt)
    if not (math.isfinite(dt) and dt > 0):
        raise ValueError(f"dt must be finite and > 0, got {dt}")
    return dt


def _as_float_array(x, name, min_len=2):
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be array-like of real numbers") from None
    if a.ndim == 0 or a.ndim > 2:
        raise ValueError(f"{name} must be 1-D or 2-D, got shape {a.shape}")
    if a.shape[0] < min_len:
        raise ValueError(f"{name} needs at least {min_len} entries along axis 0, "
                         f"got {a.shape[0]}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite (no nan/inf)")
    return a


def _check_df(df):
    d = np.asarray(df, dtype=float)
    if np.any(~(d > 0)):
        raise ValueError(f"df must be > 0 (np.inf for a normal quantile), got {df!r}")
    return d


def t_quantile(p, df):
    """Student-t quantile ``t_{df}^{-1}(p)``; ``df = inf`` gives the normal one.

    Parameters
    ----------
    p : float or array_like
        Probability in (0, 1).
    df : float or array_like
        Degrees of freedom, > 0; ``numpy.inf`` for the normal quantile.
    """
    d = _check_df(df)
    return np.where(np.isinf(d), _st.norm.ppf(p), _st.t.ppf(p, np.where(np.isinf(d), 1, d)))


def _scalar(a):
    a = np.asarray(a)
    return float(a) if a.ndim == 0 else a


# ---------------------------------------------------------------- replications

class _Interval:
    """``lo``, ``hi`` and ``covers`` of ``mean ± half_width`` (shared by the results)."""

    @property
    def lo(self):
        """Lower end of the interval."""
        return self.mean - self.half_width

    @property
    def hi(self):
        """Upper end of the interval."""
        return self.mean + self.half_width

    def covers(self, value):
        """True where ``value`` lies in the interval."""
        return (self.lo <= value) & (value <= self.hi)


@dataclass(frozen=True)
class ReplicationCI(_Interval):
    """Mean of independent replications with its Student-t interval.

    Attributes
    ----------
    mean, se, half_width : float or ndarray
        Sample mean, its standard error ``s/√r`` and the half-width
        ``t_{r-1, (1+level)/2} · se``.
    df : int
        Degrees of freedom ``r − 1``.
    level : float
        Confidence level of the interval.
    """

    mean: object
    se: object
    half_width: object
    df: int
    level: float


def replication_ci(x, level=0.95):
    """Mean, standard error and Student-t half-width over replications.

    Parameters
    ----------
    x : array_like, shape (r,) or (r, m)
        One value per independent replication (axis 0); a 2-D array holds
        ``m`` quantities per replication.
    level : float, default 0.95
        Two-sided confidence level.

    Returns
    -------
    ReplicationCI
        ``mean``, ``se``, ``half_width`` (scalars or arrays of length ``m``),
        ``df = r − 1`` and ``level``.

    Raises
    ------
    ValueError
        If there are fewer than 2 replications, a value is not finite, or
        ``level`` is outside (0, 1).

    Examples
    --------
    >>> ci = replication_ci([1.0, 2.0, 3.0, 4.0])
    >>> round(ci.half_width, 3)          # t_3 = 3.182, s.e. = 0.645
    2.054
    """
    level = _check_level(level)
    a = _as_float_array(x, "x", min_len=2)
    r = a.shape[0]
    mean = a.mean(axis=0)
    se = a.std(axis=0, ddof=1) / math.sqrt(r)
    hw = float(t_quantile(0.5 + level / 2, r - 1)) * se
    return ReplicationCI(_scalar(mean), _scalar(se), _scalar(hw), r - 1, level)
