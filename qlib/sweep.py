"""Parameter sweeps on Dask: the same call on a laptop, a workstation or a cluster.

:func:`sweep` runs :func:`qlib.simulate.replicate` at every point of a grid
(topologies × n × λ × μ × generator arguments × initial states), one Dask
task per point, and returns an ``xarray.Dataset``; :func:`replication_result`
turns one point back into what ``replicate`` returns. Workers build each
point's graph (:func:`graph_for`) and draw its start (:func:`initial_for`). It needs the optional extra ``qlib[sweep]``
(``dask[distributed]``, ``xarray``, ``zarr``); they are imported only when a
sweep runs, so ``import qlib`` works without them.

Reproducibility: the stream of a point comes from the sweep's seed and the
point's parameters alone (:func:`point_seed`), never from the order in which
points are scheduled or finish, so a sweep gives bitwise identical numbers
whatever the number of workers, and a resumed sweep equals an uninterrupted
one.
"""
from __future__ import annotations

import hashlib
import inspect
import json
import math
import os
import shutil
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from pathlib import Path

import numpy as np

from qlib import graphs
from qlib.meanfield.degrees import DegreeDistribution

__all__ = ["sweep", "points", "point_seed", "graph_for", "initial_for", "run_point",
           "open_store", "replication_result", "SweepRun"]

# the graph generators a point may name, and the arguments each one takes
_GENERATORS = ("empty", "ring", "complete", "cliques", "double_star",
               "random_regular", "erdos_renyi", "configuration")
_BASE = ("graph", "n", "lam", "mu", "t_end", "burn_in", "initial", "batches")
# named initial laws (drawn on the worker from the point's stream); "empty" is the default
_INITIAL = ("empty", "mm1", "mm1-isolated")
_SKIP = {"n", "seed"}


def _gen_args(name):
    sig = inspect.signature(getattr(graphs, name))
    return {p: (q.default is not inspect.Parameter.empty)
            for p, q in sig.parameters.items() if p not in _SKIP}


_ARGS = {g: _gen_args(g) for g in _GENERATORS}
_ALL_ARGS = sorted({a for args in _ARGS.values() for a in args})


# ------------------------------------------------------------- points ----
def _real(v, name, where):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {v!r} at point {where}")
    return float(v)


def _canon_value(v):
    """A string that determines ``v`` exactly (floats by their shortest repr)."""
    if v is None:
        return "none"
    if isinstance(v, (bool, np.bool_)):
        return "bool:" + str(bool(v))
    if isinstance(v, (int, float, np.integer, np.floating)):
        return "real:" + repr(float(v))
    if isinstance(v, str):
        return "str:" + v
    pmf = getattr(v, "pmf", v)
    try:
        arr = np.asarray(pmf, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"cannot use {v!r} as a sweep parameter (numbers, strings, "
                        "DegreeDistribution or pmf sequences only)") from None
    return "pmf:" + ",".join(repr(float(x)) for x in np.trim_zeros(arr.ravel(), "b"))


def _label(v):
    """The coordinate value of a parameter in the Dataset."""
    if v is None:
        return "none"
    if isinstance(v, (bool, np.bool_, str, int, float, np.integer, np.floating)):
        return v.item() if isinstance(v, np.generic) else v
    return _canon_value(v)


def _normalise(point, t_end, burn_in, where):
    """Validate one point; return the dict of its parameters as given."""
    if not isinstance(point, Mapping):
        raise TypeError(f"a grid point must be a mapping, got {type(point).__name__}")
    unknown = [k for k in point if k not in _BASE and k not in _ALL_ARGS]
    if unknown:
        raise ValueError(f"unknown parameter(s) {unknown} at point {where}; allowed: "
                         f"{list(_BASE) + _ALL_ARGS}")
    for k in ("graph", "n", "lam"):
        if k not in point:
            raise ValueError(f"parameter {k!r} missing at point {where}")
    p = dict(point)
    g = p["graph"]
    if not isinstance(g, str) or g not in _GENERATORS:
        raise ValueError(f"graph must be one of {list(_GENERATORS)}, got {g!r} at point {where}")
    bad = [k for k in p if k not in _BASE and k not in _ARGS[g]]
    if bad:
        raise ValueError(f"graph {g!r} takes no parameter(s) {bad} (point {where}); use an "
                         "explicit list of points to give arguments to some graphs only")
    missing = [a for a, has_default in _ARGS[g].items() if not has_default and a not in p]
    if missing:
        raise ValueError(f"graph {g!r} needs {missing} at point {where}")
    n = p["n"]
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be an int >= 1, got {n!r} at point {where}")
    p["n"] = int(n)
    lam = _real(p["lam"], "lam", where)
    if not 0 < lam < 1:
        raise ValueError(f"lam must be in (0, 1), got {lam} at point {where}")
    mu = _real(p.setdefault("mu", 0.0), "mu", where)
    if math.isnan(mu) or mu < 0:
        raise ValueError(f"mu must be in [0, inf], got {mu} at point {where}")
    te = _real(p.get("t_end", t_end), "t_end", where)
    bi = _real(p.get("burn_in", burn_in), "burn_in", where)
    if not (math.isfinite(bi) and bi >= 0):
        raise ValueError(f"burn_in must be finite and >= 0, got {bi} at point {where}")
    if not (math.isfinite(te) and te > bi):
        raise ValueError(f"t_end must be finite and > burn_in={bi}, got {te} at point {where}")
    _check_initial(p, where)
    b = p.get("batches")
    if b is not None and (isinstance(b, (bool, np.bool_)) or not isinstance(b, (int, np.integer))
                          or b < 2):
        raise ValueError(f"batches must be None or an int >= 2, got {b!r} at point {where}")
    for k, v in p.items():
        _canon_value(v)   # TypeError for values that cannot be hashed into a seed
    return p


def _check_initial(p, where):
    """``initial``: None or "empty" (the default), "mm1", "mm1-isolated", or a
    tail vector q (float, q[0] = 1, non-increasing in [0, 1])."""
    v = p.get("initial")
    if v is None or isinstance(v, str):
        if v is not None and v not in _INITIAL:
            raise ValueError(f"initial must be one of {list(_INITIAL)} or a tail vector q, "
                             f"got {v!r} at point {where}")
        return
    try:
        q = np.asarray(v, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"initial must be a name or a tail vector, got {v!r} at point {where}") from None
    if (q.ndim != 1 or q.size == 0 or not np.all(np.isfinite(q)) or q[0] != 1
            or np.any(np.diff(q) > 0) or np.any(q < 0)):
        raise ValueError("initial: a tail vector needs q[0] = 1 and non-increasing "
                         f"entries in [0, 1] (point {where})")


def points(grid):
    """The points of a grid, and the dimensions of the result.

    Parameters
    ----------
    grid : mapping or sequence of mappings
        ``{name: list of values}`` (the product of the lists, in the order of
        the keys) or an explicit list of points ``[{name: value}, ...]``.

    Returns
    -------
    pts : list of dict
        One dict per point (not yet validated; :func:`sweep` validates them).
    dims : dict
        ``{name: coordinate values}`` for a product grid; ``{"point":
        range}`` for an explicit list.
    shape : tuple of int
        The shape of the grid (``(len(pts),)`` for an explicit list).

    Raises
    ------
    ValueError
        If the grid is empty or a list of values is empty.
    TypeError
        If the grid is neither a mapping nor a sequence of mappings.
    """
    if isinstance(grid, Mapping):
        if not grid:
            raise ValueError("grid is empty")
        lists = {}
        for k, v in grid.items():
            if isinstance(v, (str, bytes)) or not isinstance(v, (Sequence, np.ndarray)):
                raise TypeError(f"grid[{k!r}] must be a list of values, got {v!r}")
            if len(v) == 0:
                raise ValueError(f"grid[{k!r}] is empty")
            lists[k] = list(v)
        keys = list(lists)
        pts = [dict(zip(keys, combo)) for combo in product(*lists.values())]
        dims = {k: [_label(x) for x in lists[k]] for k in keys}
        return pts, dims, tuple(len(v) for v in lists.values())
    if isinstance(grid, (str, bytes)) or not isinstance(grid, Sequence):
        raise TypeError(f"grid must be a mapping or a list of points, got {type(grid).__name__}")
    if len(grid) == 0:
        raise ValueError("grid is empty")
    pts = [dict(p) if isinstance(p, Mapping) else p for p in grid]
    return pts, {"point": list(range(len(pts)))}, (len(pts),)


def _key(point):
    # the defaults initial="empty" and batches=None leave the key (and the seed) unchanged;
    # mu absent is mu = 0 (as sweep validates it)
    point = {"mu": 0.0, **point}
    return json.dumps({k: _canon_value(v) for k, v in point.items()
                       if not (k == "initial" and (v is None or (isinstance(v, str)
                                                                  and v == "empty")))
                       and not (k == "batches" and v is None)}, sort_keys=True)


def _words(point):
    h = hashlib.sha256(_key(point).encode()).digest()
    return tuple(int(x) for x in np.frombuffer(h, dtype="<u4"))


def _root(seed):
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {seed!r}")
    return int(seed)


def point_seed(seed, point):
    """The SeedSequence that :func:`sweep` passes to ``replicate`` at ``point``.

    It is ``SeedSequence(seed)`` extended by the SHA-256 of the point's
    parameters (as given, numbers by their exact value: ``mu=0`` and
    ``mu=0.0`` are the same point) and a final 0. A random graph is seeded
    from the hash of the graph's own parameters (``graph``, ``n``, the
    generator's arguments) and a final 1, so the points that share them
    share one graph (a quenched graph across λ, μ and starts; :func:`graph_for`),
    and the initial state from the point's hash and a final 2
    (:func:`initial_for`). So a point's numbers do not depend on the other
    points, their order, or the workers.

    Parameters
    ----------
    seed : int >= 0
        The sweep's root seed.
    point : mapping
        One point of the grid.

    Returns
    -------
    numpy.random.SeedSequence
    """
    s = _root(seed)
    return np.random.SeedSequence(s, spawn_key=_words(point) + (0,))


def graph_for(point, seed):
    """Build the graph of a point, as a worker does.

    A random generator is seeded from the root seed and the graph's own
    parameters (``graph``, ``n`` and the generator's arguments), so every
    point with the same graph parameters gets the same graph.

    Parameters
    ----------
    point : mapping
        ``graph`` (a generator name of :mod:`qlib.graphs`), ``n`` and that
        generator's arguments; other keys (``lam``, ``mu``, ...) are ignored.
    seed : int >= 0
        The sweep's root seed.

    Returns
    -------
    qlib.graphs.Graph
    """
    name = point["graph"]
    make = getattr(graphs, name)
    kw = {a: point[a] for a in _ARGS[name] if a in point}
    if "seed" in inspect.signature(make).parameters:
        own = {"graph": name, "n": int(point["n"]), **kw}
        kw["seed"] = np.random.SeedSequence(_root(seed), spawn_key=_words(own) + (1,))
    return make(int(point["n"]), **kw)


def initial_for(point, seed, graph=None):
    """The initial queue lengths of a point, as a worker draws them.

    ``initial`` (a key of the point) is one of

    * ``"empty"`` or absent: every queue empty (returns None);
    * ``"mm1"``: i.i.d. queue lengths with the M/M/1 stationary law at the
      point's load, P(X >= i) = lam^i;
    * ``"mm1-isolated"``: the same at the isolated vertices of the graph
      (static M/M/1 queues), empty elsewhere;
    * a tail vector q (floats, q[0] = 1, non-increasing): i.i.d. queue
      lengths with P(X >= i) = q(i) (e.g. the fluid equilibrium q*).

    The draw is one per point (all replications of the point start from it),
    from ``SeedSequence(seed)`` extended by the point's hash and a final 2, so
    it depends on the point and the root seed only. Unlike
    :func:`qlib.simulate.simulate`'s ``initial`` (an occupancy vector placed
    deterministically), a tail vector here is a law to draw from.

    Parameters
    ----------
    point : mapping
        A point (``n``, ``lam`` and ``initial`` are read).
    seed : int >= 0
        The sweep's root seed.
    graph : qlib.graphs.Graph, optional
        The point's graph; needed for ``"mm1-isolated"`` (default: built by
        :func:`graph_for`).

    Returns
    -------
    numpy.ndarray of int64, shape (n,), or None for an empty start
    """
    v = point.get("initial")
    if v is None or (isinstance(v, str) and v == "empty"):
        return None
    _check_initial(point, "(initial_for)")
    n, lam = int(point["n"]), float(point["lam"])
    rng = np.random.default_rng(np.random.SeedSequence(_root(seed),
                                                       spawn_key=_words(point) + (2,)))
    if isinstance(v, str):
        x = rng.geometric(1 - lam, size=n) - 1
        if v == "mm1-isolated":
            g = graph_for(point, seed) if graph is None else graph
            x = np.where(np.diff(g.indptr) == 0, x, 0)
        return x.astype(np.int64)
    q = np.asarray(v, dtype=float)
    p = -np.diff(np.append(q, 0.0))     # P(X = i)
    return rng.choice(p.size, size=n, p=p / p.sum()).astype(np.int64)


def run_point(point, *, seed, replications, t_end, burn_in=0.0, batches=None):
    """Run one point: build its graph and initial state, ``replicate`` it,
    return plain arrays.

    This is the task a worker runs; it ships back a few arrays (nothing of
    size O(n)). ``t_end``/``burn_in`` in the point override the arguments.
    The kernels' short-run ``RuntimeWarning`` is silenced here (as
    ``replicate`` does); ``se_reliable`` records it per run.

    Parameters
    ----------
    point : mapping
        A validated point.
    seed : int >= 0
        The sweep's root seed.
    replications : int
        Independent runs, >= 2.
    t_end, burn_in : float
        As for :func:`qlib.simulate.simulate`.
    batches : int, optional
        As for :func:`qlib.simulate.simulate` (``batches`` in the point
        overrides it).

    Returns
    -------
    dict of numpy arrays
        ``occupancy`` (replication, level), ``occupancy_batch_se``,
        ``occupancy_mean`` and ``occupancy_se`` (level; Student-t across
        replications), ``R``, ``R_batch_se``, ``se_reliable``, ``events``,
        ``kernel_seconds``, ``n_batches`` (replication), ``batch_R``
        (replication, batch; NaN beyond a run's batches), ``batch_occupancy``
        (replication, batch, level), ``R_mean``, ``R_se`` and ``cpu_seconds``
        (the thread CPU time of the whole point, graph and initial state
        included).
    """
    from qlib.sim.replicate import replicate
    c0 = time.thread_time()
    g = graph_for(point, seed)
    x0 = initial_for(point, seed, g)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        rr = replicate(g, float(point["lam"]), float(point.get("mu", 0.0)),
                       replications=replications, seed=point_seed(seed, point), n_jobs=1,
                       t_end=float(point.get("t_end", t_end)),
                       burn_in=float(point.get("burn_in", burn_in)),
                       batches=point.get("batches", batches), initial=x0)
    cpu = time.thread_time() - c0
    L = rr.occupancy.size
    res = rr.results
    B = max(r.batch_response_time.size for r in res)

    def pad(a):
        return np.pad(np.asarray(a, float), (0, L - len(a)))

    def pad_b(a):   # NaN beyond a run's own batches; zeros above its levels
        a = np.asarray(a, float)
        a = np.pad(a, [(0, 0)] * (a.ndim - 1) + [(0, L - a.shape[-1])]) if a.ndim == 2 else a
        return np.pad(a, [(0, B - a.shape[0])] + [(0, 0)] * (a.ndim - 1), constant_values=np.nan)
    return dict(
        occupancy=np.array([pad(r.occupancy) for r in res]),
        occupancy_batch_se=np.array([pad(r.occupancy_se) for r in res]),
        occupancy_mean=np.asarray(rr.occupancy, float),
        occupancy_se=np.asarray(rr.occupancy_se, float),
        R=np.array([r.mean_response_time for r in res], float),
        R_batch_se=np.array([r.mean_response_time_se for r in res], float),
        R_mean=np.float64(rr.mean_response_time), R_se=np.float64(rr.response_time_se),
        se_reliable=np.array([r.se_reliable for r in res], bool),
        batch_R=np.array([pad_b(r.batch_response_time) for r in res]),
        batch_occupancy=np.array([pad_b(r.batch_occupancy) for r in res]),
        n_batches=np.array([r.batch_response_time.size for r in res], np.int64),
        events=np.array([r.events for r in res], np.int64),
        kernel_seconds=np.array([r.wall_time for r in res], float),
        cpu_seconds=np.float64(cpu))


# -------------------------------------------------------------- store ----
_LEVEL_VARS = ("occupancy", "occupancy_batch_se", "occupancy_mean", "occupancy_se",
               "batch_occupancy")
_TAILS = {"occupancy": ("replication", "level"), "occupancy_batch_se": ("replication", "level"),
          "occupancy_mean": ("level",), "occupancy_se": ("level",),
          "batch_R": ("replication", "batch"),
          "batch_occupancy": ("replication", "batch", "level")}


def _to_point_dataset(res, point):
    import xarray as xr
    dv = {}
    for k, v in res.items():
        v = np.asarray(v)
        if k in _TAILS:
            dims = _TAILS[k]
        elif v.ndim == 2:
            dims = ("replication", "level")
        elif k in ("occupancy_mean", "occupancy_se"):
            dims = ("level",)
        elif v.ndim == 1:
            dims = ("replication",)
        else:
            dims = ()
        dv[k] = (dims, v)
    return xr.Dataset(dv, attrs={"point": _key(point)})


def _meta(seed, replications, t_end, burn_in, batches=None):
    import qlib
    return {"qlib_version": qlib.__version__, "seed": str(seed),
            "replications": int(replications), "t_end": repr(float(t_end)),
            "burn_in": repr(float(burn_in)), "batches": str(batches)}


def _open_root(store, meta):
    """Create or check the store; return the stored root seed (or None)."""
    import zarr
    path = Path(store)
    if path.exists():
        root = zarr.open_group(str(path), mode="r")
        old = dict(root.attrs)
        if old.get("qlib_sweep") != 1:
            raise ValueError(f"store {store} exists and is not a qlib sweep store")
        for k in ("replications", "t_end", "burn_in", "batches") + (
                ("seed",) if meta["seed"] != "None" else ()):
            if old.get(k, "None") != meta[k]:
                raise ValueError(f"store {store} holds a sweep with {k}={old.get(k)}, "
                                 f"not {meta[k]}; use another store")
        for tmp in path.glob("tmp-*"):   # half-written points of an interrupted sweep
            shutil.rmtree(tmp, ignore_errors=True)
        return None if old["seed"] == "None" else int(old["seed"])
    root = zarr.open_group(str(path), mode="w-")
    root.attrs.update(dict(meta, qlib_sweep=1))
    return None


def _task_key(meta, point):
    """Dask key: the same point of the same sweep is the same task."""
    h = hashlib.sha256((json.dumps(meta, sort_keys=True) + _key(point)).encode())
    return "qlib-sweep-" + h.hexdigest()[:32]


def _group_name(point):
    return "p" + hashlib.sha256(_key(point).encode()).hexdigest()[:32]


def _save_point(store, point, res):
    """Write a finished point: to a temporary group, then renamed, so a
    sweep killed mid-write leaves no half-written point behind."""
    name = _group_name(point)
    tmp = Path(store) / f"tmp-{name}-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    ds = _to_point_dataset(res, point)
    ds.to_zarr(str(tmp), mode="w", consolidated=False, zarr_format=3)
    os.replace(tmp, Path(store) / name)


def _load_point(store, point):
    import xarray as xr
    path = Path(store) / _group_name(point)
    if not path.exists():
        return None
    with xr.open_zarr(str(path), consolidated=False, chunks=None) as ds:   # numpy, not dask
        if ds.attrs.get("point") != _key(point):
            raise ValueError(f"store {store}: group {path.name} holds another point")
        return {k: ds[k].values for k in ds.data_vars}


def open_store(store, grid):
    """The Dataset of a stored sweep (complete or not) over ``grid``.

    Parameters
    ----------
    store : str or path
        A store written by :func:`sweep`.
    grid : mapping or sequence of mappings
        The sweep's grid.

    Returns
    -------
    xarray.Dataset
        As :func:`sweep` returns it; points not yet run are NaN (``events``
        is -1 there). For an explicit list, a parameter that some points
        lack is NaN (numbers) or "" (strings) there.
    """
    import zarr
    root = dict(zarr.open_group(str(store), mode="r").attrs)
    pts, dims, shape = points(grid)
    pts = [_normalise(p, float(root["t_end"]), float(root["burn_in"]), i)
           for i, p in enumerate(pts)]
    root.setdefault("batches", "None")
    return _assemble(pts, dims, shape, [_load_point(store, p) for p in pts], root)


def _assemble(pts, dims, shape, results, meta):
    import xarray as xr
    R = int(meta["replications"])
    L = max([r["occupancy"].shape[1] for r in results if r is not None], default=1)
    B = max([r["batch_R"].shape[1] for r in results if r is not None], default=1)
    gd = list(dims)
    out = {}

    def blank(k, tail, fill, dtype):
        out[k] = np.full(shape + tail, fill, dtype)
    for k in ("occupancy", "occupancy_batch_se"):
        blank(k, (R, L), np.nan, float)
    for k in ("occupancy_mean", "occupancy_se"):
        blank(k, (L,), np.nan, float)
    blank("batch_R", (R, B), np.nan, float)
    blank("batch_occupancy", (R, B, L), np.nan, float)
    blank("n_batches", (R,), 0, np.int64)
    for k in ("R", "R_batch_se", "kernel_seconds"):
        blank(k, (R,), np.nan, float)
    blank("se_reliable", (R,), False, bool)
    blank("events", (R,), -1, np.int64)
    for k in ("R_mean", "R_se", "cpu_seconds"):
        blank(k, (), np.nan, float)
    for i, res in enumerate(results):
        if res is None:
            continue
        idx = np.unravel_index(i, shape)
        for k, v in res.items():
            v = np.asarray(v)
            if k in _LEVEL_VARS:   # pad the level axis (q(i) = 0 above the levels tracked)
                v = np.pad(v, [(0, 0)] * (v.ndim - 1) + [(0, L - v.shape[-1])])
            if k in ("batch_R", "batch_occupancy"):   # pad the batch axis with NaN
                v = np.pad(v, [(0, 0), (0, B - v.shape[1])] + [(0, 0)] * (v.ndim - 2),
                           constant_values=np.nan)
            out[k][idx] = v
    dv = {k: (tuple(gd) + _TAILS.get(k, ("replication",) if v.ndim > len(shape) else ()), v)
          for k, v in out.items()}
    coords = {k: v for k, v in dims.items()}
    coords["replication"] = np.arange(R)
    coords["level"] = np.arange(L)
    coords["batch"] = np.arange(B)
    if "point" in dims:   # explicit list: each parameter is a coordinate along `point`
        for k in sorted({k for p in pts for k in p}):
            vals = [_label(p[k]) if k in p else None for p in pts]
            given = [v for v in vals if v is not None]
            if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in given):
                exact_int = len(given) == len(vals) and all(isinstance(v, int) for v in vals)
                coords[k] = ("point", np.array([np.nan if v is None else v for v in vals],
                                               np.int64 if exact_int else float))
            else:
                coords[k] = ("point", np.array(["" if v is None else str(v) for v in vals]))
    ds = xr.Dataset(dv, coords=coords)
    seed = int(meta["seed"])
    ds.attrs.update(qlib_version=meta["qlib_version"],
                    seed=seed if seed < 2**63 else str(seed),
                    replications=R, t_end=float(meta["t_end"]), burn_in=float(meta["burn_in"]),
                    batches=0 if meta.get("batches", "None") == "None" else int(meta["batches"]))
    doc = {"occupancy": "time average of q(i) in each run", "occupancy_se":
           "s.e. of occupancy_mean across replications (Student-t, replications - 1 d.o.f.)",
           "occupancy_batch_se": "batch-means s.e. of each run (see se_reliable)",
           "R": "arrival-side mean response time of each run", "R_se":
           "s.e. of R_mean across replications", "events": "events of each run",
           "cpu_seconds": "thread CPU seconds of the point on its worker",
           "kernel_seconds": "seconds in the simulation kernel, per run",
           "batch_R": "R over each batch of each run (NaN beyond n_batches)",
           "batch_occupancy": "time average of q(i) over each batch of each run",
           "n_batches": "number of batches of each run"}
    for k, d in doc.items():
        ds[k].attrs["description"] = d
    return ds


# -------------------------------------------------------------- sweep ----
def sweep(grid, *, replications, t_end, burn_in=0.0, batches=None, seed=None, client=None,
          store=None, progress=True):
    """Run ``replicate`` at every point of a grid on a Dask cluster.

    Parameters
    ----------
    grid : mapping or sequence of mappings
        ``{name: list of values}``: the product of the lists (for example
        ``{"graph": ["ring"], "n": [1500, 5000], "lam": [0.9], "mu": [0.0,
        2.0]}``), or an explicit list of points. Names: ``graph`` (a generator
        of :mod:`qlib.graphs`: "ring", "cliques", "double_star",
        "random_regular", "configuration", ...; built on the worker), ``n``,
        ``lam`` (in (0, 1)), ``mu`` (in [0, inf], default 0), the generator's
        arguments (``k``, ``d``, ``c``, ``degrees``, ``method``,
        ``max_tries``), ``initial`` (the start, drawn on the worker:
        "empty" (default), "mm1", "mm1-isolated" or a tail vector q; see
        :func:`initial_for`), and ``t_end``/``burn_in``/``batches`` to
        override the arguments at a point.
    replications : int
        Independent runs per point, >= 2.
    t_end, burn_in : float
        As for :func:`qlib.simulate.simulate`.
    batches : int >= 2, optional
        As for :func:`qlib.simulate.simulate` (default: from the measured
        correlation length).
    seed : int >= 0, optional
        Root seed (:func:`point_seed`). None draws one (recorded in the
        result's attributes), or, when ``store`` exists, takes the stored one.
    client : None, dask.distributed.Client or str
        None starts a ``LocalCluster`` with one single-threaded process per
        core and closes it at the end; a ``Client`` is used as it is; a
        string is a scheduler address (``"tcp://scheduler:8786"``).
    store : str or path, optional
        A local directory (a Zarr hierarchy: one group per finished point,
        written as each point completes). If it exists, the points it holds
        are read back, not rerun; the other arguments must match. One
        sweep at a time per store.
    progress : bool
        One tqdm bar over the points (``tqdm.auto``: a widget in a notebook).

    Returns
    -------
    xarray.Dataset
        Dimensions: the grid's names (or ``point`` for an explicit list) ×
        ``replication`` × ``level``. Variables: ``occupancy`` (per run),
        ``occupancy_mean`` and ``occupancy_se`` (Student-t s.e. across
        replications, as ``replicate``), ``occupancy_batch_se`` (batch means,
        per run), ``R``, ``R_mean``, ``R_se``, ``R_batch_se``,
        ``se_reliable``, ``batch_R`` and ``batch_occupancy`` (per batch of
        each run, dimension ``batch``), ``n_batches``, ``events``,
        ``kernel_seconds``, ``cpu_seconds``. Attributes: ``qlib_version``,
        ``seed``, ``replications``, ``t_end``, ``burn_in``, ``batches`` (0:
        from the correlation length). :func:`replication_result` turns one
        point back into a ``replicate``-like result.

    Raises
    ------
    ValueError, TypeError
        Before anything is scheduled: empty grid, unknown parameter, a
        parameter a point's graph does not take, ``lam`` outside (0, 1) or
        ``mu`` outside [0, inf] at any point, bad ``replications``,
        ``t_end``, ``burn_in`` or ``seed``; a store from another sweep.
    """
    if isinstance(replications, (bool, np.bool_)) or not isinstance(replications, (int, np.integer)):
        raise TypeError(f"replications must be an int, got {replications!r}")
    if replications < 2:
        raise ValueError(f"replications must be >= 2, got {replications}")
    t_end = _real(t_end, "t_end", "(argument)")
    burn_in = _real(burn_in, "burn_in", "(argument)")
    if batches is not None and (isinstance(batches, (bool, np.bool_)) or not isinstance(
            batches, (int, np.integer)) or batches < 2):
        raise ValueError(f"batches must be None or an int >= 2, got {batches!r}")
    batches = None if batches is None else int(batches)
    if seed is not None:
        seed = _root(seed)
    pts, dims, shape = points(grid)
    pts = [_normalise(p, t_end, burn_in, i) for i, p in enumerate(pts)]
    keys = [_key(p) for p in pts]
    if len(set(keys)) < len(keys):
        raise ValueError("grid has repeated points")
    try:   # fail here, before any work, if the extra is missing
        import dask.distributed as dd
        import xarray  # noqa: F401
        if store is not None:
            import zarr  # noqa: F401
    except ImportError as e:
        raise ImportError(f"qlib.sweep needs the optional extra: pip install "
                          f"'qlib[sweep]' (dask[distributed], xarray, zarr); {e}") from e

    meta = _meta(seed, replications, t_end, burn_in, batches)
    results = [None] * len(pts)
    if store is not None:
        stored_seed = _open_root(store, meta)
        if seed is None:
            seed = stored_seed
    if seed is None:
        seed = int(np.random.SeedSequence().entropy)
    meta["seed"] = str(seed)
    if store is not None:
        import zarr
        root = zarr.open_group(str(store), mode="r+")
        if root.attrs.get("seed") == "None":
            root.attrs["seed"] = str(seed)
        results = [_load_point(store, p) for p in pts]
    todo = [i for i, r in enumerate(results) if r is None]

    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=len(pts), initial=len(pts) - len(todo), unit="point", desc="sweep")
    own = None
    try:
        if todo:
            client, own = _client(client)
            futs = client.map(run_point, [pts[i] for i in todo], pure=False,
                              key=[_task_key(meta, pts[i]) for i in todo],
                              seed=seed, replications=int(replications),
                              t_end=t_end, burn_in=burn_in, batches=batches)
            where = {f.key: i for f, i in zip(futs, todo)}
            try:
                for fut in dd.as_completed(futs):
                    i = where[fut.key]
                    res = fut.result()
                    if store is not None:
                        _save_point(store, pts[i], res)
                        res = _load_point(store, pts[i])   # what a resumed sweep will read
                    results[i] = res
                    if bar is not None:
                        bar.update(1)
            except BaseException:
                client.cancel(futs)   # a failed or interrupted sweep leaves no work queued
                raise
    finally:
        if bar is not None:
            bar.close()
        if own is not None:
            for c in own:
                c.close()
    return _assemble(pts, dims, shape, results, meta)


def _client(client):
    """(client, objects to close)."""
    from dask.distributed import Client, LocalCluster
    if client is None:
        cluster = LocalCluster(n_workers=os.cpu_count() or 1, threads_per_worker=1,
                               processes=True, dashboard_address=":0")
        c = Client(cluster)
        return c, [c, cluster]
    if isinstance(client, str):
        c = Client(client)
        return c, [c]
    if isinstance(client, Client):
        return client, []
    raise TypeError(f"client must be None, a dask.distributed.Client or an address, "
                    f"got {type(client).__name__}")


# ------------------------------------------------- back to replicate ----
@dataclass(frozen=True)
class SweepRun:
    """One run of a sweep point, with the fields of
    :class:`qlib.simulate.SimulationResult` that a sweep keeps.

    Attributes
    ----------
    occupancy, occupancy_se : ndarray, shape (levels,)
        Time averages of q(i) and their batch-means s.e. (zeros above the
        levels the run reached).
    mean_response_time, mean_response_time_se : float
        R of the run and its batch-means s.e.
    batch_occupancy : ndarray, shape (batches, levels)
    batch_response_time : ndarray, shape (batches,)
    batches : int
    events : int
    se_reliable : bool
    wall_time : float
        Seconds in the kernel.
    n, lam, mu : int, float, float
        The point's size, load and resampling rate.
    """

    occupancy: np.ndarray
    occupancy_se: np.ndarray
    mean_response_time: float
    mean_response_time_se: float
    batch_occupancy: np.ndarray
    batch_response_time: np.ndarray
    batches: int
    events: int
    se_reliable: bool
    wall_time: float
    n: int
    lam: float
    mu: float


def replication_result(ds, **coords):
    """One point of a sweep's Dataset as a :class:`qlib.simulate.ReplicationResult`.

    The fields are those ``replicate`` returns at that point with the
    point's seed (:func:`point_seed`), so code written for ``replicate``
    reads a sweep unchanged: ``occupancy`` and ``occupancy_se`` padded with
    zeros to the sweep's levels, ``occupancy_ci`` and ``response_time_ci``
    (95 % Student-t, replications - 1 d.o.f.), and ``results``, one
    :class:`SweepRun` per replication (no paths, no final queues).

    Parameters
    ----------
    ds : xarray.Dataset
        A result of :func:`sweep` or :func:`open_store`.
    **coords
        Selects one point: ``graph="ring", n=1500, ...`` for a product grid,
        ``point=i`` for an explicit list.

    Returns
    -------
    qlib.simulate.ReplicationResult

    Raises
    ------
    ValueError
        If ``coords`` do not select exactly one point, or the point has not
        run (an incomplete store).
    """
    from scipy.stats import t as student_t

    from qlib.sim.result import ReplicationResult
    c = ds.sel(**coords)
    extra = set(c.occupancy.dims) - {"replication", "level"}
    if extra:
        raise ValueError(f"coords must select one point; dimensions {sorted(extra)} are left")
    ev = c.events.values
    if np.any(ev < 0):
        raise ValueError(f"the point {coords} has not run (incomplete store)")
    R = int(c.sizes["replication"])
    nb = c.n_batches.values
    par = {k: c[k].item() if k in c.coords else 0.0 for k in ("n", "lam", "mu")}
    runs = tuple(SweepRun(
        occupancy=c.occupancy.values[k], occupancy_se=c.occupancy_batch_se.values[k],
        mean_response_time=float(c.R.values[k]), mean_response_time_se=float(c.R_batch_se.values[k]),
        batch_occupancy=c.batch_occupancy.values[k, :nb[k]],
        batch_response_time=c.batch_R.values[k, :nb[k]], batches=int(nb[k]),
        events=int(ev[k]), se_reliable=bool(c.se_reliable.values[k]),
        wall_time=float(c.kernel_seconds.values[k]), n=int(par["n"]), lam=float(par["lam"]),
        mu=float(par["mu"])) for k in range(R))
    m, se = c.occupancy_mean.values, c.occupancy_se.values
    rm, rse = float(c.R_mean), float(c.R_se)
    tq = float(student_t.ppf(0.975, R - 1))
    return ReplicationResult(
        occupancy=m, occupancy_se=se, occupancy_ci=np.vstack([m - tq * se, m + tq * se]),
        mean_response_time=rm, response_time_se=rse,
        response_time_ci=(rm - tq * rse, rm + tq * rse), replications=R,
        seed=ds.attrs.get("seed"), results=runs, wall_time=float(c.cpu_seconds))
