"""Looking at and keeping a result: a one-screen repr, summary(), to_dict(), to_xarray() and back."""
from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from qlib.stats.intervals import Interval, IntervalArray, _t_interval

__all__ = ["ResultIO", "BatchIntervals", "CompactResult", "interval95"]


def interval95(center, se, df: int) -> Interval | IntervalArray:
    """The 95 % Student-t interval ``center ± t_{0.975, df} se``: an :class:`Interval` for a
    scalar ``center``, an :class:`IntervalArray` (rows ``low``, ``high``) for an array."""
    if np.ndim(center) == 0:
        c, s = float(center), float(se)
        return Interval(_t_interval(c, s, df, 0.95), c, s, df)
    return IntervalArray(np.stack(_t_interval(center, se, df, 0.95)), center, se, df)


class BatchIntervals:
    """Mixin of the Halfin–Whitt simulator results: the intervals every result shares, from
    its estimates and standard errors over ``batches`` independent (or batch) means, and
    ``lam`` per server from the stored total ``lam_total``."""

    @functools.cached_property
    def occupancy_ci(self) -> IntervalArray:
        """95 % Student-t intervals for :attr:`occupancy` with ``batches − 1`` degrees of
        freedom (row 0 ``low``); ``occupancy_ci(level)`` gives another level."""
        return interval95(self.occupancy, self.occupancy_se, self.batches - 1)

    @functools.cached_property
    def response_time_ci(self) -> Interval | IntervalArray:
        """95 % Student-t :class:`~qlib.stats.intervals.Interval` for :attr:`response_time`
        (an :class:`~qlib.stats.intervals.IntervalArray` where it is a vector)."""
        return interval95(self.response_time, self.response_time_se, self.batches - 1)

    @property
    def mean_queue_length_ci(self) -> Interval | IntervalArray:
        """95 % Student-t :class:`~qlib.stats.intervals.Interval` of :attr:`mean_queue_length`."""
        return interval95(self.mean_queue_length, self.mean_queue_length_se, self.batches - 1)

    @property
    def lam(self) -> float:
        """The arrival rate per server ``λ_n / n = 1 − β/√n`` (``lam_total`` is the total)."""
        return self.lam_total / self.n

#: the quantities a summary shows, in this order, when the result has them
_SUMMARY = ("occupancy", "mean_queue_length", "response_time", "p_wait")


def _short(v) -> str:
    if isinstance(v, np.ndarray):
        return f"array{v.shape}"
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, (tuple, list)) and len(v) > 4:
        return f"{type(v).__name__}[{len(v)}]"
    return repr(v)


def _same(a, b) -> bool:
    """Field equality of two results: arrays element by element (NaN equal to NaN),
    seed sequences by entropy and spawn key, nested results and the rest by ``==``."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return False
        try:
            return bool(np.array_equal(a, b, equal_nan=True))
        except TypeError:                           # not numbers
            return bool(np.array_equal(a, b))
    if isinstance(a, np.random.SeedSequence) or isinstance(b, np.random.SeedSequence):
        return (isinstance(a, np.random.SeedSequence) and isinstance(b, np.random.SeedSequence)
                and _same(a.entropy, b.entropy) and tuple(a.spawn_key) == tuple(b.spawn_key))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return bool(a == b)


def _fields_equal(self, other: object) -> bool:
    """Equal when of the same type with equal fields (arrays element by element, NaN
    equal to NaN; seeds by their entropy and spawn key)."""
    if type(other) is not type(self):
        return NotImplemented
    return all(_same(getattr(self, f.name), getattr(other, f.name))
               for f in dataclasses.fields(self))


def fields_eq(cls):
    """Class decorator (above ``@dataclass``): ``==`` by fields, arrays element by element,
    in place of the dataclass' tuple comparison, which raises on array fields. The hash is
    left as the dataclass made it.

    Examples
    --------
    >>> import dataclasses, numpy as np
    >>> @fields_eq
    ... @dataclasses.dataclass(frozen=True)
    ... class R:
    ...     x: np.ndarray
    >>> R(np.arange(3)) == R(np.arange(3)), R(np.arange(3)) == R(np.ones(3))
    (True, False)
    """
    cls.__eq__ = _fields_equal
    return cls


def _plain(v):
    """``v`` in the types ``json.dumps`` writes."""
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, (tuple, list)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, np.random.SeedSequence):
        return {"entropy": _plain(v.entropy), "spawn_key": [int(x) for x in v.spawn_key]}
    if isinstance(v, ResultIO):
        return v.to_dict(json=True)
    return v


class ResultIO:
    """Mixin of the frozen result dataclasses: ``repr`` in one screen (whatever the
    number of replications or levels), :meth:`summary`, :meth:`to_dict`,
    :meth:`to_xarray` and :meth:`from_dict`."""

    _registry: dict = {}

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        ResultIO._registry[cls.__name__] = cls

    #: the inputs shown first by ``repr``
    _inputs = ("n", "lam", "mu", "beta", "t_end", "burn_in", "replications", "batches")

    def _estimates(self):
        out = []
        for name in _SUMMARY:
            try:
                v = getattr(self, name)
            except AttributeError:
                continue
            if name == "occupancy":
                v = np.asarray(v)
                if v.ndim != 1:
                    continue
                for i in range(1, min(v.size, 4)):
                    se = np.asarray(getattr(self, "occupancy_se", np.full(v.size, math.nan)))
                    out.append((f"q({i})", float(v[i]), float(se[i]) if se.size > i else math.nan))
                continue
            if np.ndim(v) != 0:
                continue
            se = getattr(self, name + "_se", math.nan)
            se = float(se) if np.ndim(se) == 0 and se is not None else math.nan
            out.append((name, float(v), se))
        return out

    def __repr__(self) -> str:
        head = [f"{k}={_short(getattr(self, k))}" for k in self._inputs if hasattr(self, k)]
        est = [f"{k}={v:.6g}" + ("" if math.isnan(se) else f"±{se:.2g}") for k, v, se in self._estimates()]
        return f"{type(self).__name__}({', '.join(head + est)})"

    def summary(self) -> str:
        """A small table of the main estimates: quantity, estimate, standard error, 95 % interval.

        Returns
        -------
        str
            One line per quantity (the first occupancy levels, the mean queue
            length, the mean response time, and ``p_wait`` where there is one).
        """
        rows = [f"{type(self).__name__}: " + ", ".join(
            f"{k}={_short(getattr(self, k))}" for k in self._inputs if hasattr(self, k))]
        rows.append(f"{'quantity':<18}{'estimate':>12}{'s.e.':>11}{'95% interval':>26}")
        df = getattr(self, "batches", 0) or 0
        for k, v, se in self._estimates():
            if math.isnan(se) or df < 2:
                ci = ""
            else:
                low, high = _t_interval(v, se, df - 1, 0.95)
                ci = f"[{float(low):.5g}, {float(high):.5g}]"
            rows.append(f"{k:<18}{v:>12.6g}{'' if math.isnan(se) else format(se, '.3g'):>11}{ci:>26}")
        return "\n".join(rows)

    __eq__ = _fields_equal

    __hash__ = None   # type: ignore[assignment]  # mutable arrays inside: not hashable

    def to_dict(self, *, json: bool = False) -> dict:
        """The result's fields as a plain dict; :meth:`from_dict` reads it back.

        Parameters
        ----------
        json : bool, default False
            False: arrays stay numpy arrays, nested results become dicts. True: only
            what ``json.dumps`` writes (lists, floats, ints, strings, None; a seed
            sequence as its entropy and spawn key), so ``json.dumps(r.to_dict(json=True))``
            works and :meth:`from_dict` restores the arrays.

        Returns
        -------
        dict
            Every dataclass field, plus ``"type"`` (the class name).

        Examples
        --------
        >>> import json
        >>> from qlib import graphs, replicate
        >>> r = replicate(graphs.ring(10), 0.5, replications=2, t_end=20.0, seed=1)  # doctest: +SKIP
        >>> type(r).from_dict(json.loads(json.dumps(r.to_dict(json=True)))) == r  # doctest: +SKIP
        True
        """
        out = {"type": type(self).__name__}
        for f in dataclasses.fields(self):
            if f.name.startswith("_"):
                continue
            v = getattr(self, f.name)
            if isinstance(v, tuple) and v and isinstance(v[0], ResultIO):
                v = [r.to_dict(json=json) for r in v]
            elif isinstance(v, np.ndarray):
                v = v.tolist() if json else np.asarray(v).copy()
            elif isinstance(v, tuple):
                v = _plain(v) if json else tuple(v)
            elif json:
                v = _plain(v)
            out[f.name] = v
        return out

    @classmethod
    def from_dict(cls, d: dict):
        """Rebuild a result from :meth:`to_dict`'s output.

        Parameters
        ----------
        d : dict
            As :meth:`to_dict` returns it.

        Returns
        -------
        The result, of this class.

        Raises
        ------
        ValueError
            If ``d`` was made from another type of result.
        """
        if d.get("type", cls.__name__) != cls.__name__:
            raise ValueError(f"d holds a {d.get('type')}, not a {cls.__name__}")
        kw = {}
        fields = {f.name: str(f.type) for f in dataclasses.fields(cls)}
        for k, v in d.items():
            if k not in fields:
                continue
            if isinstance(v, list) and v and isinstance(v[0], dict) and "type" in v[0]:
                v = tuple(ResultIO._registry[x["type"]].from_dict(x) for x in v)
            elif isinstance(v, list) and ("ndarray" in fields[k] or "IntervalArray" in fields[k]):
                # from to_dict(json=True)
                v = np.asarray(v, dtype=float if any(x is None for x in np.ravel(v)) else None)
            elif isinstance(v, list) and ("tuple" in fields[k] or "Interval" in fields[k]):
                v = tuple(v)
            elif isinstance(v, dict) and set(v) == {"entropy", "spawn_key"}:
                v = np.random.SeedSequence(v["entropy"], spawn_key=tuple(v["spawn_key"]))
            kw[k] = v
        return cls(**kw)

    def to_xarray(self):
        """The estimates as an ``xarray.Dataset`` (needs xarray: ``qlib[sweep]``).

        Scalars become 0-d variables, the occupancy and its standard error
        variables along ``level``; the inputs are attributes.

        Returns
        -------
        xarray.Dataset
        """
        import xarray as xr
        dv, attrs = {}, {}
        for k in self._inputs:
            if hasattr(self, k):
                v = getattr(self, k)
                if np.ndim(v) == 0 and v is not None:
                    attrs[k] = v if not isinstance(v, np.generic) else v.item()
        for name in ("occupancy", "occupancy_se"):
            v = getattr(self, name, None)
            if v is not None and np.ndim(v) == 1:
                dv[name] = (("level",), np.asarray(v, float))
        for name in ("mean_queue_length", "response_time", "p_wait"):
            for suffix in ("", "_se"):
                try:
                    v = getattr(self, name + suffix)
                except AttributeError:
                    continue
                if v is not None and np.ndim(v) == 0:
                    dv[name + suffix] = ((), float(v))
        attrs["type"] = type(self).__name__
        return xr.Dataset(dv, attrs=attrs)


class CompactResult:
    """Mixin of the frozen results that are no simulation (the mean-field solvers'):
    a one-screen ``repr`` (scalars shown, arrays by their shape) and ``==`` by fields,
    as :class:`ResultIO` gives the simulators' results."""

    def __repr__(self) -> str:
        parts = []
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if f.name.startswith("_") or callable(v):
                continue
            parts.append(f"{f.name}={_short(v) if not dataclasses.is_dataclass(v) else type(v).__name__ + '(…)'}")
        text = f"{type(self).__name__}({', '.join(parts)})"
        return text if len(text) <= 600 else text[:597] + "…)"

    __eq__ = _fields_equal

    __hash__ = None   # type: ignore[assignment]  # arrays inside: not hashable
