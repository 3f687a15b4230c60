"""The points of a sweep: grids expanded and normalised, per-point seeds, graphs and start states, one point run."""
from __future__ import annotations

import hashlib
import inspect
import json
import math
import time
import numpy as np
from collections.abc import Mapping, Sequence
from itertools import product
from qlib import graphs

__all__ = ['points', 'point_seed', 'graph_for', 'initial_for', 'run_point']

# the graph generators a point may name, and the arguments each one takes
_GENERATORS = ("empty", "ring", "complete", "cliques", "double_star",
               "random_regular", "erdos_renyi", "configuration")
_BASE = ("graph", "n", "lam", "mu", "t_end", "burn_in", "initial", "batches", "choices")
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
    if isinstance(g, str) and ":" in g:
        _factory(g, where)                      # importable now, not only on the workers
        bad = [k for k in p if k not in _BASE]
        if bad:
            raise ValueError(f"graph factory {g!r} takes only (n, seed), not {bad} (point {where})")
        g = None
    elif not isinstance(g, str) or g not in _GENERATORS:
        raise ValueError(f"graph must be one of {list(_GENERATORS)} or a factory "
                         f"'package.module:function', got {g!r} at point {where}")
    bad = [] if g is None else [k for k in p if k not in _BASE and k not in _ARGS[g]]
    if bad:
        raise ValueError(f"graph {g!r} takes no parameter(s) {bad} (point {where}); use an "
                         "explicit list of points to give arguments to some graphs only")
    missing = [] if g is None else [a for a, has_default in _ARGS[g].items()
                                    if not has_default and a not in p]
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
    if p.get("choices", "absent") is None:
        del p["choices"]   # the default: the same point (and seed) as without it
    elif "choices" in p:
        c = p["choices"]
        if isinstance(c, (bool, np.bool_)) or not isinstance(c, (int, np.integer)) or c < 2:
            raise ValueError(f"choices must be None or an int >= 2, got {c!r} at point {where}")
        p["choices"] = int(c)
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
        One dict per point (not yet validated; :func:`~qlib.sweep.sweep` validates them).
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
    """The SeedSequence that :func:`~qlib.sweep.sweep` passes to ``replicate`` at ``point``.

    It is ``SeedSequence(seed)`` extended by the SHA-256 of the point's
    parameters (as given, numbers by their exact value: ``mu=0`` and
    ``mu=0.0`` are the same point) and a final 0. A random graph is seeded
    from the hash of the graph's own parameters (``graph``, ``n``, the
    generator's arguments) and a final 1, so the points that share them
    share one graph (a quenched graph across λ, μ and starts; :func:`~qlib.sweep.grid.graph_for`),
    and the initial state from the point's hash and a final 2
    (:func:`~qlib.sweep.grid.initial_for`). So a point's numbers do not depend on the other
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


def _factory(spec, where=None):
    """The function named by ``"package.module:function"`` (a sweep's user graph factory)."""
    import importlib
    mod, _, fn = spec.partition(":")
    try:
        f = getattr(importlib.import_module(mod), fn)
    except (ImportError, AttributeError) as e:
        at = "" if where is None else f" at point {where}"
        raise ValueError(f"graph factory {spec!r} cannot be imported{at}: {e}") from None
    if not callable(f):
        raise ValueError(f"graph factory {spec!r} is not callable")
    return f


def graph_for(point, seed):
    """Build the graph of a point, as a worker does.

    A random generator is seeded from the root seed and the graph's own
    parameters (``graph``, ``n`` and the generator's arguments), so every
    point with the same graph parameters gets the same graph.

    Parameters
    ----------
    point : mapping
        ``graph`` (a generator name of :mod:`qlib.graphs`, or a user's factory
        ``"package.module:function"`` called as ``function(n, seed)`` with a
        ``numpy.random.SeedSequence`` and returning a qlib ``Graph`` or an
        undirected networkx graph), ``n`` and that generator's arguments;
        other keys (``lam``, ``mu``, ...) are ignored.
    seed : int >= 0
        The sweep's root seed.

    Returns
    -------
    qlib.graphs.Graph
    """
    name = point["graph"]
    if ":" in name:                              # a user's factory (n, seed)
        own = {"graph": name, "n": int(point["n"])}
        ss = np.random.SeedSequence(_root(seed), spawn_key=_words(own) + (1,))
        g = _factory(name)(int(point["n"]), ss)
        return g if isinstance(g, graphs.Graph) else graphs.from_networkx(g)
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
    :func:`qlib.sim.simulate <qlib.sim.run.simulate>`'s ``initial`` (an occupancy vector placed
    deterministically), a tail vector here is a law to draw from.

    Parameters
    ----------
    point : mapping
        A point (``n``, ``lam`` and ``initial`` are read).
    seed : int >= 0
        The sweep's root seed.
    graph : qlib.graphs.Graph, optional
        The point's graph; needed for ``"mm1-isolated"`` (default: built by
        :func:`~qlib.sweep.grid.graph_for`).

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
        As for :func:`qlib.sim.simulate <qlib.sim.run.simulate>`.
    batches : int, optional
        As for :func:`qlib.sim.simulate <qlib.sim.run.simulate>` (``batches`` in the point
        overrides it).

    Returns
    -------
    dict of numpy arrays
        ``occupancy`` (replication, level), ``occupancy_batch_se``,
        ``occupancy_mean`` and ``occupancy_se`` (level; Student-t across
        replications), ``response_time``, ``response_time_batch_se``, ``se_reliable``, ``events``,
        ``kernel_seconds``, ``n_batches`` (replication), ``batch_response_time``
        (replication, batch; NaN beyond a run's batches), ``batch_occupancy``
        (replication, batch, level), ``response_time_mean``, ``response_time_se``, ``mean_queue_length``
        (replication; tasks per server, ``Σ_{i≥1} q(i)``), its ``mean_queue_length_mean`` and
        ``mean_queue_length_se`` across replications, and ``cpu_seconds``
        (the thread CPU time of the whole point, graph and initial state
        included).
    """
    from qlib.sim.replications import replicate
    c0 = time.thread_time()
    g = graph_for(point, seed)
    x0 = initial_for(point, seed, g)
    # replicate switches its runs' batch-means warnings off by argument (thread-safe)
    rr = replicate(g, float(point["lam"]), float(point.get("mu", 0.0)),
                   replications=replications, seed=point_seed(seed, point), n_jobs=1,
                   t_end=float(point.get("t_end", t_end)),
                   burn_in=float(point.get("burn_in", burn_in)),
                   batches=point.get("batches", batches), initial=x0,
                   choices=point.get("choices"))
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
        response_time=np.array([r.mean_response_time for r in res], float),
        response_time_batch_se=np.array([r.mean_response_time_se for r in res], float),
        response_time_mean=np.float64(rr.mean_response_time),
        response_time_se=np.float64(rr.response_time_se),
        mean_queue_length=np.array([r.mean_queue_length for r in res], float),
        mean_queue_length_mean=np.float64(rr.mean_queue_length),
        mean_queue_length_se=np.float64(rr.mean_queue_length_se),
        se_reliable=np.array([r.se_reliable for r in res], bool),
        batch_response_time=np.array([pad_b(r.batch_response_time) for r in res]),
        batch_occupancy=np.array([pad_b(r.batch_occupancy) for r in res]),
        n_batches=np.array([r.batch_response_time.size for r in res], np.int64),
        events=np.array([r.events for r in res], np.int64),
        kernel_seconds=np.array([r.wall_time for r in res], float),
        cpu_seconds=np.float64(cpu))
