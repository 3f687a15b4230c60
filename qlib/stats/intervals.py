"""Student-t intervals for independent replications, and the argument checks of qlib.stats."""
from __future__ import annotations

import functools
import math
import numbers
import numpy as np
from dataclasses import dataclass
from qlib._lazy import scipy_stats as _st
from typing import TYPE_CHECKING

if TYPE_CHECKING:   # names for the annotations only
    from numpy.typing import ArrayLike

__all__ = ['replication_ci', 'ReplicationCI', 't_quantile', 'Interval', 'IntervalArray']


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


def t_quantile(p: ArrayLike, df: ArrayLike) -> np.ndarray:
    """Student-t quantile ``t_{df}^{-1}(p)``; ``df = inf`` gives the normal one.

    Parameters
    ----------
    p : float or array_like
        Probability in (0, 1).
    df : float or array_like
        Degrees of freedom, > 0; ``numpy.inf`` for the normal quantile.
    """
    if np.ndim(p) == 0 and np.ndim(df) == 0 and not isinstance(df, bool):
        # one quantile, the common case: scipy's ppf costs ~1 ms a call, and
        # every simulation result and check asks for the same few
        return np.asarray(_t_quantile_scalar(float(p), float(_check_df(df))))
    d = _check_df(df)
    return np.where(np.isinf(d), _st.norm.ppf(p), _st.t.ppf(p, np.where(np.isinf(d), 1, d)))


@functools.lru_cache(maxsize=4096)
def _t_quantile_scalar(p: float, d: float) -> float:
    return float(_st.norm.ppf(p) if math.isinf(d) else _st.t.ppf(p, d))


def _scalar(a):
    a = np.asarray(a)
    return float(a) if a.ndim == 0 else a


# ---------------------------------------------------------------- replications

class _Interval:
    """``low``, ``high`` and ``covers`` of ``mean ± half_width`` (shared by the results)."""

    @property
    def low(self):
        """Lower end of the interval."""
        return self.mean - self.half_width

    @property
    def high(self):
        """Upper end of the interval."""
        return self.mean + self.half_width

    def covers(self, value: float | np.ndarray) -> bool | np.ndarray:
        """True where ``value`` lies in the interval."""
        return (self.low <= value) & (value <= self.high)


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


def _t_interval(center, se, df, level):
    """``center ∓ t_{(1+level)/2, df} se`` (nan when ``df < 1``)."""
    level = _check_level(level)
    c, s = np.asarray(center, float), np.asarray(se, float)
    tq = float(t_quantile(0.5 + level / 2, df)) if df >= 1 else math.nan
    return c - tq * s, c + tq * s


class Interval(tuple):
    """A confidence interval ``(low, high)``: stored, unpacked, called for another level.

    The one interval type of qlib's results (a vector of intervals is an
    :class:`IntervalArray`). It is a tuple, so ``low, high = r.response_time_ci``
    works; its fields are named like scipy's ``ConfidenceInterval``; called with a
    level it gives the Student-t interval at that level around the same estimate
    with the same standard error and degrees of freedom.

    Attributes
    ----------
    low, high : float
        The ends.
    level : float
        Its confidence level (0.95 unless made otherwise).
    df : int
        Degrees of freedom of the t quantile (``batches − 1`` or
        ``replications − 1``).
    center, se : float
        The point estimate and its standard error.

    Examples
    --------
    >>> from qlib.stats import Interval
    >>> ci = Interval((0.9, 1.1), center=1.0, se=0.05, df=9)
    >>> low, high = ci
    >>> ci.level, ci.df, low
    (0.95, 9, 0.9)
    >>> round(ci(0.99).high, 4)
    1.1625
    """

    # set in __new__; declared so that type checkers know them
    center: float
    se: float
    df: int
    level: float

    def __new__(cls, pair, center=math.nan, se=math.nan, df=0, level=0.95):
        low, high = (float(x) for x in pair)
        self = super().__new__(cls, (low, high))
        self.center, self.se, self.df, self.level = float(center), float(se), int(df), float(level)
        return self

    @property
    def low(self) -> float:
        """Lower end."""
        return self[0]

    @property
    def high(self) -> float:
        """Upper end."""
        return self[1]

    def __call__(self, level: float) -> "Interval":
        """The Student-t interval at ``level`` around the same estimate (same ``se``, ``df``).

        ``level`` has no default: the interval itself is the one at its own ``level``.
        """
        if level == self.level:
            return self
        low, high = _t_interval(self.center, self.se, self.df, level)
        return Interval((float(low), float(high)), self.center, self.se, self.df, float(level))

    def __repr__(self):
        return (f"Interval(low={self.low:.6g}, high={self.high:.6g}, level={self.level:g}, "
                f"df={self.df})")

    def __reduce__(self):
        return (Interval, (tuple(self), self.center, self.se, self.df, self.level))


def _interval_array(data, center, se, df, level=0.95):
    return IntervalArray(data, center, se, df, level)


class IntervalArray(np.ndarray):
    """Confidence intervals of a vector, shape ``(2, ...)``: row 0 ``low``, row 1 ``high``.

    The vector form of :class:`Interval`, with the same fields: ``low`` and
    ``high`` (rows), ``level``, ``df``,
    ``center`` and ``se``; ``low, high = r.occupancy_ci`` unpacks it and
    ``r.occupancy_ci(0.99)`` gives the Student-t intervals at another level.
    Indexing and arithmetic give plain arrays.

    Examples
    --------
    >>> import numpy as np
    >>> from qlib.stats import IntervalArray
    >>> ci = IntervalArray([[0.8, 1.8], [1.2, 2.2]], center=[1.0, 2.0], se=[0.1, 0.1], df=20)
    >>> ci.high
    array([1.2, 2.2])
    >>> ci(0.5).level
    0.5
    """

    def __new__(cls, data, center=None, se=None, df=0, level=0.95):
        obj = np.array(data, dtype=float, copy=True).view(cls)
        obj.center = None if center is None else np.asarray(center, float)
        obj.se = None if se is None else np.asarray(se, float)
        obj.df = int(df)
        obj.level = float(level)
        return obj

    def __array_finalize__(self, obj):
        self.center = getattr(obj, "center", None)
        self.se = getattr(obj, "se", None)
        self.df = getattr(obj, "df", 0)
        self.level = getattr(obj, "level", 0.95)

    def __array_wrap__(self, arr, context=None, return_scalar=False):
        out = np.asarray(arr)
        return out[()] if return_scalar else out

    def __getitem__(self, key):
        return np.asarray(self)[key]

    def __repr__(self):
        return repr(np.asarray(self))

    @property
    def low(self) -> np.ndarray:
        """Lower ends (row 0)."""
        return np.asarray(self)[0]

    @property
    def high(self) -> np.ndarray:
        """Upper ends (row 1)."""
        return np.asarray(self)[1]

    def __call__(self, level: float) -> "IntervalArray":
        """The Student-t intervals at ``level`` around the same centres (same ``se``, ``df``).

        ``level`` has no default: the array itself holds the intervals at its own ``level``.
        """
        if level == self.level:
            return self
        if self.center is None or self.se is None or self.shape != (2,) + self.center.shape:
            raise ValueError("this array does not carry the centres and standard errors of "
                             "its intervals (a reshaped view?), so it has no other level")
        return IntervalArray(np.stack(_t_interval(self.center, self.se, self.df, level)),
                             self.center, self.se, self.df, float(level))

    def __reduce__(self):
        return (_interval_array, (np.asarray(self), self.center, self.se, self.df, self.level))


def replication_ci(x: ArrayLike, level: float = 0.95) -> ReplicationCI:
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
