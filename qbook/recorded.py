"""Recorded runs: simulation results stored on disk, keyed by the exact call that made them.

A chapter whose simulations take minutes can replay them: every call goes
through a :class:`RecordedRuns` store, which returns the stored result when it
holds one for *the same function with the same arguments* (graph, rates,
seeds, start states, every keyword), and otherwise runs the call and records
it. Seeded runs are deterministic, so a replayed result is the one the call
would return now, as long as the simulator is unchanged; ``record=True``
(a chapter's ``FULL`` switch; :func:`chapter_runs` reads it from the
environment) reruns every call and rewrites the store.
The store is a gzip-compressed pickle of plain dicts and NumPy arrays
(each result's ``to_dict``; :meth:`RecordedRuns.value` stores plain values,
an audited cell its parts, as returned), stamped with
:func:`code_version` (and the further ``qlib`` modules a store names): a
store written by other simulator or statistics code is ignored (every call
runs again and the store is rewritten), and the tests fail on a committed
store whose stamp is not the code's (``benchmarks/record_chapters.py``
rewrites the chapters' stores).
"""
from __future__ import annotations

import ast
import dataclasses
import functools
import gzip
import hashlib
import math
import os
import pickle
import types
from pathlib import Path
from typing import Any, Callable

import numpy as np

from qlib.graphs import Graph
from qlib.stats._results import ResultIO

__all__ = ["RecordedRuns", "call_key", "chapter_runs", "code_version"]

_VERSION_KEY = "_code_version"
_FILES_KEY = "_code_files"


@functools.lru_cache(maxsize=8)
def code_version(extra: tuple[str, ...] = ()) -> str:
    """A hash of the code that computes recorded results.

    The source of ``qlib/sim``, ``qlib/stats`` and ``qlib/graphs.py`` (of the
    ``qlib`` that is imported), and of the ``extra`` modules, parsed
    and unparsed without docstrings, type annotations, ``if TYPE_CHECKING:``
    blocks and imports from ``typing``, so that comments, layout, docstrings
    and annotations leave it unchanged and any other edit changes it.

    Parameters
    ----------
    extra : tuple of str, default ()
        More source files, relative to the ``qlib`` package (e.g.
        ``"halfin_whitt/simulate.py"``), for stores of other simulators.

    Returns
    -------
    str
        A hex digest.
    """
    import qlib
    root = Path(qlib.__file__).resolve().parent
    files = sorted([*(root / "sim").glob("*.py"), *(root / "stats").glob("*.py"), root / "graphs.py"])
    files += [root / e for e in extra]
    h = hashlib.sha256()
    for f in files:
        if not f.exists():   # a module named by a store that is gone: a change like any other
            h.update(b"missing " + f.name.encode())
            continue
        tree = ast.parse(f.read_text(encoding="utf8"))
        for node in ast.walk(tree):
            if isinstance(getattr(node, "body", None), list):
                node.body = [b for b in node.body if not _typing_only(b)] or [ast.Pass()]
            body = getattr(node, "body", None)
            if (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                    and isinstance(getattr(body[0], "value", None), ast.Constant)
                    and isinstance(body[0].value.value, str)):
                body[0] = ast.Pass()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                node.returns = None
            if isinstance(node, ast.arg):
                node.annotation = None
        h.update(f.name.encode() + ast.unparse(tree).encode())
    return h.hexdigest()


def _feed(h: "hashlib._Hash", x: Any) -> None:
    """Feed a canonical encoding of ``x`` to the hash ``h``."""
    if isinstance(x, Graph):
        h.update(b"G")
        _feed(h, x.n)
        _feed(h, np.asarray(x.indptr, dtype=np.int64))
        _feed(h, np.asarray(x.indices, dtype=np.int64))
    elif isinstance(x, np.ndarray):
        h.update(b"A" + str(x.dtype).encode() + str(x.shape).encode())
        h.update(np.ascontiguousarray(x).tobytes())
    elif isinstance(x, (bool, np.bool_)):
        h.update(b"B1" if x else b"B0")
    elif isinstance(x, (int, np.integer)):
        h.update(b"I" + str(int(x)).encode())
    elif isinstance(x, (float, np.floating)):
        h.update(b"F" + float(x).hex().encode())
    elif isinstance(x, str):
        h.update(b"S" + x.encode())
    elif x is None:
        h.update(b"N")
    elif isinstance(x, (list, tuple)):
        h.update(b"L" + str(len(x)).encode())
        for y in x:
            _feed(h, y)
    elif isinstance(x, dict):
        h.update(b"D" + str(len(x)).encode())
        for k in sorted(x, key=repr):
            _feed(h, k)
            _feed(h, x[k])
    elif isinstance(x, np.random.SeedSequence):
        h.update(b"Q")
        _feed(h, x.entropy)
        _feed(h, tuple(x.spawn_key))
    elif isinstance(x, types.FunctionType):   # a function: by its name, code and closure
        h.update(b"U" + f"{x.__module__}.{x.__qualname__}".encode())
        _feed_code(h, x.__code__)
        _feed(h, [c.cell_contents for c in x.__closure__ or ()])
    elif dataclasses.is_dataclass(x) and not isinstance(x, type):   # a service law, ...: by its fields
        h.update(b"C" + type(x).__qualname__.encode())
        _feed(h, {f.name: getattr(x, f.name) for f in dataclasses.fields(x)})
    else:
        raise TypeError(f"cannot key a call on an argument of type {type(x).__name__}")


def _feed_code(h: "hashlib._Hash", code: types.CodeType) -> None:
    """Feed a code object: its bytecode, the names it reads and its constants (nested code too)."""
    h.update(b"K" + code.co_code + " ".join(code.co_names).encode())
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _feed_code(h, c)
        else:
            h.update(repr(c).encode())


def _typing_only(node: ast.AST) -> bool:
    """An ``if TYPE_CHECKING:`` block or an import from ``typing``."""
    if isinstance(node, ast.If):
        t = node.test
        return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
            isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")
    if isinstance(node, ast.ImportFrom):
        return node.module == "typing"
    return isinstance(node, ast.Import) and all(a.name == "typing" for a in node.names)


def call_key(fn: Callable, *args: Any, **kwargs: Any) -> str:
    """A hash of a call: the function's qualified name and every argument.

    Parameters
    ----------
    fn : callable
        The function called.
    *args, **kwargs
        Its arguments: graphs (by their adjacency), arrays (by dtype, shape
        and bytes), numbers (exactly), strings, None, sequences and dicts of
        these, seed sequences, dataclasses of these (by their fields),
        functions (by their name, bytecode, constants and closure; not by
        the globals they read).

    Returns
    -------
    str
        A hex digest; equal for equal calls.

    Raises
    ------
    TypeError
        If an argument is of a type that cannot be keyed.

    Examples
    --------
    >>> from qlib import graphs, replicate
    >>> call_key(replicate, graphs.ring(5), 0.5, seed=1) == call_key(replicate, graphs.ring(5), 0.5, seed=1)
    True
    >>> call_key(replicate, graphs.ring(5), 0.5, seed=1) == call_key(replicate, graphs.ring(5), 0.5, seed=2)
    False
    """
    h = hashlib.sha256()
    _feed(h, f"{fn.__module__}.{fn.__qualname__}")
    _feed(h, list(args))
    _feed(h, dict(kwargs))
    return h.hexdigest()


class RecordedRuns:
    """A store of simulation results keyed by the call that made them.

    Parameters
    ----------
    path : str or Path
        The store (a ``.pkl.gz`` file); it need not exist yet.
    record : bool, default False
        Rerun every call and replace its stored result (a chapter's ``FULL``).
    code : sequence of str, default ()
        Source files of ``qlib`` beyond those :func:`code_version` always hashes
        that the recorded calls run (the store is stamped with them too).

    Attributes
    ----------
    replayed, ran : int
        Calls answered from the store, and calls run.
    stale : bool
        The file was written by other code (:func:`code_version`) and is ignored.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from qlib import graphs, replicate
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "runs.pkl.gz"
    >>> runs = RecordedRuns(path)
    >>> a = runs(replicate, graphs.ring(20), 0.5, 0.0, replications=2, t_end=20.0, seed=1)
    >>> runs.save()
    >>> again = RecordedRuns(path)
    >>> b = again(replicate, graphs.ring(20), 0.5, 0.0, replications=2, t_end=20.0, seed=1)
    >>> (again.replayed, again.ran), bool(a.response_time == b.response_time)
    ((1, 0), True)
    """

    def __init__(self, path: str | Path, *, record: bool = False, code: tuple[str, ...] = ()) -> None:
        if not isinstance(record, bool):
            raise TypeError(f"record must be a bool, got {type(record).__name__}")
        self.path = Path(path)
        self.record = record
        self.code = tuple(code)
        self._store: dict[str, tuple[str, dict]] = {}
        self.stale = False
        if self.path.exists() and not record:
            try:
                with gzip.open(self.path, "rb") as f:
                    store = pickle.load(f)
            except (AttributeError, ImportError, TypeError):   # written by code whose classes are gone
                store = {}
            files = tuple(store.pop(_FILES_KEY, ()))
            self.stale = store.pop(_VERSION_KEY, None) != code_version(self.code) or files != self.code
            if not self.stale:
                self._store = store
        self._used: set[str] = set()
        self._dirty = False
        self.replayed = self.ran = 0

    def __len__(self) -> int:
        return len(self._store)

    def __call__(self, fn: Callable, *args: Any, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)``, replayed from the store when it holds this call."""
        key = call_key(fn, *args, **kwargs)
        self._used.add(key)
        if key in self._store:
            kind, data = self._store[key]
            self.replayed += 1
            return ResultIO._registry[kind].from_dict(data)
        result = fn(*args, **kwargs)
        if not isinstance(result, ResultIO):
            raise TypeError(f"{fn.__qualname__} returned a {type(result).__name__}, which cannot be recorded")
        self._store[key] = (type(result).__name__, _strip(result.to_dict()))
        self._dirty = True
        self.ran += 1
        return result

    def value(self, fn: Callable, *args: Any, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)`` for a function that returns plain values (numbers, arrays,
        tuples of these, small result objects), replayed from the store when it holds this
        call; stored as returned.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> runs = RecordedRuns(pathlib.Path(tempfile.mkdtemp()) / "runs.pkl.gz")
        >>> runs.value(divmod, 7, 2), runs.value(divmod, 7, 2), (runs.ran, runs.replayed)
        ((3, 1), (3, 1), (1, 1))
        """
        key = call_key(fn, *args, **kwargs)
        self._used.add(key)
        if key in self._store and self._store[key][0] == "value":
            self.replayed += 1
            return self._store[key][1]
        result = fn(*args, **kwargs)
        self._store[key] = ("value", result)
        self._dirty = True
        self.ran += 1
        return result

    def live(self, fn: Callable, *args: Any, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)``, run and not recorded (a result too large to store)."""
        return fn(*args, **kwargs)

    def save(self) -> None:
        """Write the store if a call was run, keeping only the calls used since it was opened."""
        if not self._dirty:
            return
        keep = {k: v for k, v in self._store.items() if k in self._used}
        keep[_VERSION_KEY] = code_version(self.code)
        if self.code:
            keep[_FILES_KEY] = self.code
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        with gzip.open(tmp, "wb", compresslevel=6) as f:
            pickle.dump(keep, f, protocol=4)
        tmp.replace(self.path)
        self._dirty = False


def chapter_runs(chapter: str, *, code: tuple[str, ...] = ()) -> RecordedRuns:
    """The recorded runs of a chapter: ``benchmarks/<chapter>_runs.pkl.gz``, rerun and
    rewritten when the environment variable ``FULL`` is set (to anything but the empty string).

    Parameters
    ----------
    chapter : str
        The chapter's file stem, e.g. ``"simulator_check"``.
    code : tuple of str, default ()
        As for :class:`RecordedRuns`.

    Returns
    -------
    RecordedRuns

    Examples
    --------
    >>> chapter_runs("simulator_check").path.name
    'simulator_check_runs.pkl.gz'
    """
    if not isinstance(chapter, str) or not chapter.isidentifier():
        raise ValueError(f"chapter must be a chapter's file stem, got {chapter!r}")
    root = Path(__file__).resolve().parents[1]
    return RecordedRuns(root / "benchmarks" / f"{chapter}_runs.pkl.gz", record=bool(os.environ.get("FULL")),
                        code=code)


def _strip(d: dict) -> dict:
    """``to_dict`` output without the run's wall time (not a property of the call)."""
    out = {}
    for k, v in d.items():
        if k == "wall_time":
            v = math.nan
        elif isinstance(v, list) and v and isinstance(v[0], dict):
            v = [_strip(x) for x in v]
        out[k] = v
    return out
