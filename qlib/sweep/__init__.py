"""Parameter sweeps on Dask: the same call on a laptop, a workstation or a cluster.

:func:`~qlib.sweep.sweep` runs :func:`qlib.replicate <qlib.sim.replications.replicate>` at every point of a grid
(topologies × n × λ × μ × generator arguments × initial states), one Dask
task per point, and returns an ``xarray.Dataset``; :func:`~qlib.sweep.replication_result`
turns one point back into what ``replicate`` returns. Workers build each
point's graph (:func:`~qlib.sweep.grid.graph_for`) and draw its start (:func:`~qlib.sweep.grid.initial_for`). It needs the optional extra ``qlib[sweep]``
(``dask[distributed]``, ``xarray``, ``zarr``); they are imported only when a
sweep runs, so ``import qlib`` works without them.

Reproducibility: the stream of a point comes from the sweep's seed and the
point's parameters alone (:func:`~qlib.sweep.grid.point_seed`), never from the order in which
points are scheduled or finish, so a sweep gives bitwise identical numbers
whatever the number of workers, and a resumed sweep equals an uninterrupted
one.

Modules: :mod:`~qlib.sweep.grid` (points, seeds, graphs and starts, one point
run), :mod:`~qlib.sweep.store` (xarray Datasets and the Zarr store); the
front end :func:`~qlib.sweep.sweep` is here.
"""
from __future__ import annotations

import os
import numpy as np
from dataclasses import dataclass

from qlib.sweep.grid import (_key, _normalise, _real, _root, graph_for, initial_for,  # noqa: F401
                             point_seed, points, run_point)
from qlib.sweep.store import (_grid_json, _assemble, _group_name, _load_point, _meta, _open_root,  # noqa: F401
                              _save_point, _task_key, open_store)
from qlib.stats._results import fields_eq

__all__ = ["sweep", "points", "point_seed", "graph_for", "initial_for", "run_point",
           "open_store", "replication_result", "SweepRun"]


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
        :func:`~qlib.sweep.grid.initial_for`), and ``t_end``/``burn_in``/``batches`` to
        override the arguments at a point.
    replications : int
        Independent runs per point, >= 2.
    t_end, burn_in : float
        As for :func:`qlib.sim.simulate <qlib.sim.run.simulate>`.
    batches : int >= 2, optional
        As for :func:`qlib.sim.simulate <qlib.sim.run.simulate>` (default: from the measured
        correlation length).
    seed : int >= 0 or numpy.random.Generator, optional
        Root seed (:func:`~qlib.sweep.grid.point_seed`); a Generator draws it from its
        state (and advances it). None draws one (recorded in the
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
        per run), ``response_time`` (per run), ``response_time_mean``, ``response_time_se``,
        ``response_time_batch_se``,
        ``mean_queue_length`` (per run: tasks per server), ``mean_queue_length_mean`` and
        ``mean_queue_length_se`` (across replications), ``se_reliable``, ``batch_response_time`` and ``batch_occupancy`` (per batch of
        each run, dimension ``batch``), ``n_batches``, ``events``,
        ``kernel_seconds``, ``cpu_seconds``. Attributes: ``qlib_version``,
        ``seed``, ``replications``, ``t_end``, ``burn_in``, ``batches`` (0:
        from the correlation length). :func:`~qlib.sweep.replication_result` turns one
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
    if isinstance(seed, np.random.Generator):
        # its state draws the root seed (an int, recorded with the results like any other)
        seed = int(seed.integers(0, 2**63))
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
        grid_json = _grid_json(grid)
        if grid_json is not None:   # open_store(store) then needs no grid
            root.attrs["grid"] = grid_json
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
@fields_eq
@dataclass(frozen=True)
class SweepRun:
    """One run of a sweep point, with the fields of
    :class:`qlib.sim.SimulationResult <qlib.sim.result.SimulationResult>` that a sweep keeps.

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

    # the names every result uses for the same quantities (as SimulationResult)
    @property
    def response_time(self) -> float:
        """The mean response time ``R`` of the run (``mean_response_time``)."""
        return self.mean_response_time

    @property
    def response_time_se(self) -> float:
        """Its batch-means standard error."""
        return self.mean_response_time_se

    @property
    def mean_queue_length(self) -> float:
        """Mean number of tasks per server, ``Σ_{i≥1} q(i)`` (time average)."""
        return float(np.sum(self.occupancy[1:]))

    @property
    def mean_queue_length_se(self) -> float:
        """Its batch-means standard error (the batches of ``batch_occupancy``)."""
        from qlib.sim.result import queue_length_se
        return queue_length_se(self.batch_occupancy)


def replication_result(ds, **coords):
    """One point of a sweep's Dataset as a :class:`qlib.sim.ReplicationResult <qlib.sim.result.ReplicationResult>`.

    The fields are those ``replicate`` returns at that point with the
    point's seed (:func:`~qlib.sweep.grid.point_seed`), so code written for ``replicate``
    reads a sweep unchanged: ``occupancy`` and ``occupancy_se`` padded with
    zeros to the sweep's levels, ``occupancy_ci`` and ``response_time_ci``
    (95 % Student-t, replications - 1 d.o.f.), and ``results``, one
    :class:`~qlib.sweep.SweepRun` per replication (no paths, no final queues).

    Parameters
    ----------
    ds : xarray.Dataset
        A result of :func:`~qlib.sweep.sweep` or :func:`~qlib.sweep.store.open_store`.
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
        mean_response_time=float(c.response_time.values[k]),
        mean_response_time_se=float(c.response_time_batch_se.values[k]),
        batch_occupancy=c.batch_occupancy.values[k, :nb[k]],
        batch_response_time=c.batch_response_time.values[k, :nb[k]], batches=int(nb[k]),
        events=int(ev[k]), se_reliable=bool(c.se_reliable.values[k]),
        wall_time=float(c.kernel_seconds.values[k]), n=int(par["n"]), lam=float(par["lam"]),
        mu=float(par["mu"])) for k in range(R))
    m, se = c.occupancy_mean.values, c.occupancy_se.values
    rm, rse = float(c.response_time_mean), float(c.response_time_se)
    tq = float(student_t.ppf(0.975, R - 1))
    return ReplicationResult(
        occupancy=m, occupancy_se=se, occupancy_ci=np.vstack([m - tq * se, m + tq * se]),
        mean_response_time=rm, response_time_se=rse,
        response_time_ci=(rm - tq * rse, rm + tq * rse), replications=R,
        seed=ds.attrs.get("seed"), results=runs, wall_time=float(c.cpu_seconds))


class _SweepPackage(type(os)):
    """The package ``qlib.sweep``, callable as its function :func:`sweep`, so that
    ``qlib.sweep(grid, ...)`` runs a sweep while ``import qlib.sweep as s`` still gives
    the package (``s.replication_result``, ``s.open_store``): no function hides it."""

    def __call__(self, *args, **kwargs):
        return sweep(*args, **kwargs)


import sys as _sys  # noqa: E402

_sys.modules[__name__].__class__ = _SweepPackage
