"""Argument checks shared by every public entry point of qlib (the lowest floor).

The functions here take a value and the parameter's name and return the value
converted (``float`` or ``int``), or raise with a message that names the
parameter and the allowed range, in one format::

    lam must be in (0, 1), got 1.2
    lam must be in (0, 1), got '0.5' (a str, not a real number)
    levels must be an integer >= 1, got 0

Rules: a ``bool`` is never a number (``True`` is not ``1.0`` here), nor a
``str`` (``"0.5"`` is refused, not parsed); NaN and ±inf are refused unless
allowed; an integer parameter does not take an integral float (``2.0``).

A wrong *type* raises ``InvalidType``, a ``TypeError`` that is also a
``ValueError`` (as ``numpy.exceptions.AxisError`` is both a
``ValueError`` and an ``IndexError``), so code written against the earlier
checks, some of which raised ``ValueError`` for a wrong type, keeps working. A
value of the right type outside its range raises ``ValueError``.

``check_memory`` refuses, before anything is allocated, a call whose
arrays would need more than ``MEMORY_LIMIT`` bytes (4 GiB), naming the
parameter that drives the size and the estimate.

This module imports nothing from qlib, so every floor can use it.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
import numpy as np

__all__ = ["InvalidType", "real", "positive", "nonnegative", "probability", "integer", "flag",
           "mapping", "memory_estimate", "check_memory", "check_arrays", "MEMORY_LIMIT",
           "directed_graph"]

#: Largest allocation (bytes) a front end makes without refusing: 4 GiB.
MEMORY_LIMIT = 4 * 2**30


class InvalidType(TypeError, ValueError):
    """A parameter of the wrong type (a ``TypeError`` that is also a ``ValueError``)."""


def _fmt(x):
    return f"{x:g}" if isinstance(x, float) else str(x)


def _interval(lo, hi, lo_open, hi_open, allow_inf):
    """The allowed set in interval notation, e.g. ``(0, 1)``, ``[0, inf]``."""
    left = "(" if lo is None or lo_open else "["
    right = ")" if (hi is None and not allow_inf) or (hi is not None and hi_open) else "]"
    a = "-inf" if lo is None else _fmt(lo)
    b = "inf" if hi is None else _fmt(hi)
    return f"{left}{a}, {b}{right}"


def _is_real(x):
    """A real number: not a bool; a 0-d NumPy array of integer or float dtype counts."""
    if isinstance(x, bool) or type(x).__name__ == "bool_":
        return False
    if isinstance(x, numbers.Real):
        return True
    return (type(x).__name__ == "ndarray" and x.ndim == 0 and x.dtype.kind in "iuf")


def real(x, name, *, lo=None, hi=None, lo_open=False, hi_open=False, allow_inf=False):
    """Check a real-number parameter and return it as a ``float``.

    Parameters
    ----------
    x : object
        The value given.
    name : str
        The parameter's name, used in the message.
    lo, hi : float, optional
        Bounds of the allowed interval (None: unbounded on that side).
    lo_open, hi_open : bool
        Whether ``lo`` (``hi``) itself is excluded.
    allow_inf : bool
        Accept ``+inf`` (and ``-inf`` when ``lo`` is None), e.g. ``mu = inf``.
        NaN is always refused.

    Returns
    -------
    float

    Raises
    ------
    InvalidType
        If ``x`` is not a real number (bool, str, complex, None, a sequence...).
    ValueError
        If ``x`` is NaN, infinite (unless allowed) or outside the interval.
    """
    rng = _interval(lo, hi, lo_open, hi_open, allow_inf)
    if not _is_real(x):
        raise InvalidType(f"{name} must be in {rng}, got {x!r} "
                          f"(a {type(x).__name__}, not a real number)")
    try:
        v = float(x)
    except OverflowError:  # an int beyond the float range
        v = math.inf if x > 0 else -math.inf
    bad = (math.isnan(v) or (math.isinf(v) and not allow_inf)
           or (lo is not None and (v < lo or (lo_open and v == lo)))
           or (hi is not None and (v > hi or (hi_open and v == hi))))
    if bad:
        raise ValueError(f"{name} must be in {rng}, got {x!r}")
    return v


def positive(x, name, *, allow_inf=False):
    """``real(x, name, lo=0, lo_open=True)``: a real number ``> 0``, finite unless allowed."""
    return real(x, name, lo=0, lo_open=True, allow_inf=allow_inf)


def nonnegative(x, name, *, allow_inf=False):
    """``real(x, name, lo=0)``: a real number ``>= 0``, finite unless allowed."""
    return real(x, name, lo=0, allow_inf=allow_inf)


def probability(x, name, *, open=False):
    """A probability: a real number in ``[0, 1]`` (``(0, 1)`` with ``open=True``)."""
    return real(x, name, lo=0, hi=1, lo_open=open, hi_open=open)


def integer(x, name, *, lo=None, hi=None):
    """Check an integer parameter and return it as an ``int``.

    Parameters
    ----------
    x : object
        The value given; a Python or NumPy integer (not a bool, not an
        integral float such as ``2.0``).
    name : str
        The parameter's name.
    lo, hi : int, optional
        Inclusive bounds.

    Returns
    -------
    int

    Raises
    ------
    InvalidType
        If ``x`` is not an integer.
    ValueError
        If ``x`` is outside ``[lo, hi]``.
    """
    if lo is not None and hi is not None:
        rng = f"in [{lo}, {hi}]"
    elif lo is not None:
        rng = f">= {lo}"
    elif hi is not None:
        rng = f"<= {hi}"
    else:
        rng = ""
    what = f"{name} must be an integer{' ' + rng if rng else ''}"
    if isinstance(x, bool) or type(x).__name__ == "bool_" or not isinstance(x, numbers.Integral):
        raise InvalidType(f"{what}, got {x!r} (a {type(x).__name__})")
    k = int(x)
    if (lo is not None and k < lo) or (hi is not None and k > hi):
        raise ValueError(f"{what}, got {k}")
    return k


def occupancy_counts(x, n, name="initial", *, max_len=None, cap_name="max_queue"):
    """Check counts ``(Q_1, Q_2, …)`` of servers holding at least ``i`` tasks.

    Parameters
    ----------
    x : sequence of int
        The counts, non-increasing, each in ``[0, n]``.
    n : int
        Number of servers.
    name : str, default "initial"
        The parameter's name.
    max_len : int, optional
        At most this many entries (the capacity ``cap_name`` of the caller).
    cap_name : str, default "max_queue"
        The name of the caller's capacity parameter, for the message.

    Returns
    -------
    numpy.ndarray of int64

    Raises
    ------
    TypeError
        If ``x`` is not a 1-d sequence of integers.
    ValueError
        If it is not non-increasing in ``[0, n]`` or has more than ``max_len`` entries.

    Examples
    --------
    >>> occupancy_counts([5, 2], 5).tolist()
    [5, 2]
    """
    q = np.asarray(x)
    if q.ndim != 1 or (q.size and not np.issubdtype(q.dtype, np.integer)):
        raise TypeError(f"{name} must be a 1-d sequence of integers (Q_1, Q_2, ...)")
    if max_len is not None and q.size > max_len:
        raise ValueError(f"{name} has {q.size} levels, more than {cap_name} = {max_len}")
    if np.any(q < 0) or np.any(q > n) or np.any(np.diff(q) > 0):
        raise ValueError(f"{name} must be non-increasing with 0 <= Q_i <= n = {n}")
    return q.astype(np.int64)


def servers_and_beta(n, beta):
    """The Halfin–Whitt pair: an int ``n >= 2`` and a real ``0 < beta < sqrt(n)``, returned as ``(int, float)``."""
    n = integer(n, "n", lo=2)
    return n, real(beta, "beta", lo=0, hi=math.sqrt(n), lo_open=True, hi_open=True)


def mapping(x, name):
    """A mapping parameter (``dict`` or any ``collections.abc.Mapping``); returns it."""
    if not isinstance(x, Mapping):
        raise InvalidType(f"{name} must be a mapping, got {type(x).__name__}")
    return x


def flag(x, name):
    """A bool parameter (``True``/``False`` or a NumPy bool); returns ``bool``."""
    if not (isinstance(x, bool) or type(x).__name__ == "bool_"):
        raise InvalidType(f"{name} must be True or False, got {x!r} (a {type(x).__name__})")
    return bool(x)


def memory_estimate(*, n=1, per_item=8, fixed=0):
    """Bytes of ``n`` items of ``per_item`` bytes each, plus ``fixed`` bytes.

    The front ends call it with their own per-item cost (e.g. ``simulate``:
    about 40 bytes per server), so that ``check_memory`` can refuse before
    allocating.
    """
    return int(n) * int(per_item) + int(fixed)


def _gib(b):
    return f"{b / 2**30:.2f} GiB" if b < 2**40 else f"{b / 2**40:.2f} TiB"


def check_memory(nbytes, name, value, *, what="the arrays", limit=None):
    """Refuse a call that would allocate more than ``limit`` bytes.

    Parameters
    ----------
    nbytes : int
        The estimate (see ``memory_estimate``).
    name : str
        The parameter that drives the size (``"n"``, ``"levels"``, ...).
    value : object
        Its value, shown in the message.
    what : str
        What would be allocated, for the message.
    limit : int, optional
        Default ``MEMORY_LIMIT`` (4 GiB).

    Raises
    ------
    ValueError
        ``"n = 1000000000 needs about 7.45 GiB for ..., more than the 4.00 GiB
        allowed (qlib._validate.MEMORY_LIMIT)"``.
    """
    limit = MEMORY_LIMIT if limit is None else int(limit)
    if nbytes > limit:
        raise ValueError(f"{name} = {value} needs about {_gib(nbytes)} for {what}, more than "
                         f"the {limit / 2**30:.2f} GiB allowed (qlib._validate.MEMORY_LIMIT)")


def check_arrays(terms, *, what, limit=None):
    """Refuse a call whose arrays would need more than ``limit`` bytes in all.

    Parameters
    ----------
    terms : dict
        ``{parameter name: (its value, bytes it drives)}``, e.g.
        ``{"n": (n, 40 * n), "record_dt": (record_dt, 8 * nrec * K)}``.
    what : str
        Whose arrays, for the message.
    limit : int, optional
        Default ``MEMORY_LIMIT`` (4 GiB).

    Raises
    ------
    ValueError
        Naming the parameter with the largest share and the total estimate.
    """
    total = sum(int(b) for _, b in terms.values())
    name = max(terms, key=lambda k: int(terms[k][1]))
    check_memory(total, name, terms[name][0], what=what, limit=limit)


def directed_graph(name, G):
    """The error for a directed networkx graph ``name``: what to pass instead."""
    return (f"{name} is a directed networkx graph ({type(G).__name__}); JSQ needs an undirected "
            f"one: pass {name}.to_undirected() (an edge in either direction becomes one edge)")
