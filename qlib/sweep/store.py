"""A sweep's results as xarray: one point's Dataset, the Zarr store that keeps finished points, the assembled grid."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import numpy as np
from pathlib import Path

from qlib.sweep.grid import _key, _label, _normalise, points

__all__ = ['open_store']


# -------------------------------------------------------------- store ----
#: the names of stores written before 0.2.0, read under the names results use
_RENAMED = {"R": "response_time", "R_batch_se": "response_time_batch_se", "R_mean": "response_time_mean",
            "R_se": "response_time_se", "batch_R": "batch_response_time"}
_LEVEL_VARS = ("occupancy", "occupancy_batch_se", "occupancy_mean", "occupancy_se",
               "batch_occupancy")
_TAILS = {"occupancy": ("replication", "level"), "occupancy_batch_se": ("replication", "level"),
          "occupancy_mean": ("level",), "occupancy_se": ("level",),
          "batch_response_time": ("replication", "batch"),
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
        return {_RENAMED.get(k, k): ds[k].values for k in ds.data_vars}


def _grid_json(grid):
    """``grid`` as JSON for the store's attributes (None if it does not serialise)."""
    import json

    def plain(x):
        if isinstance(x, np.ndarray):
            return x.tolist()
        if isinstance(x, np.generic):
            return x.item()
        raise TypeError(type(x).__name__)
    try:
        return json.dumps(grid, default=plain)
    except (TypeError, ValueError):
        return None


def open_store(store, grid=None):
    """The Dataset of a stored sweep (complete or not).

    Parameters
    ----------
    store : str or path
        A store written by :func:`~qlib.sweep.sweep`.
    grid : mapping or sequence of mappings, optional
        The sweep's grid; default: the grid the store recorded (the last sweep
        written to it). Needed only for stores written before grids were recorded.

    Returns
    -------
    xarray.Dataset
        As :func:`~qlib.sweep.sweep` returns it; points not yet run are NaN (``events``
        is -1 there). For an explicit list, a parameter that some points
        lack is NaN (numbers) or "" (strings) there.
    """
    import json
    import zarr
    root = dict(zarr.open_group(str(store), mode="r").attrs)
    if grid is None:
        if "grid" not in root:
            raise ValueError(f"store {store} records no grid (written before 0.2, or a grid "
                             "that is not JSON): pass grid=")
        grid = json.loads(root["grid"])
    pts, dims, shape = points(grid)
    pts = [_normalise(p, float(root["t_end"]), float(root["burn_in"]), i)
           for i, p in enumerate(pts)]
    root.setdefault("batches", "None")
    return _assemble(pts, dims, shape, [_load_point(store, p) for p in pts], root)


def _assemble(pts, dims, shape, results, meta):
    import xarray as xr
    R = int(meta["replications"])
    L = max([r["occupancy"].shape[1] for r in results if r is not None], default=1)
    B = max([r["batch_response_time"].shape[1] for r in results if r is not None], default=1)
    gd = list(dims)
    out = {}

    def blank(k, tail, fill, dtype):
        out[k] = np.full(shape + tail, fill, dtype)
    for k in ("occupancy", "occupancy_batch_se"):
        blank(k, (R, L), np.nan, float)
    for k in ("occupancy_mean", "occupancy_se"):
        blank(k, (L,), np.nan, float)
    blank("batch_response_time", (R, B), np.nan, float)
    blank("batch_occupancy", (R, B, L), np.nan, float)
    blank("n_batches", (R,), 0, np.int64)
    for k in ("response_time", "response_time_batch_se", "kernel_seconds", "mean_queue_length"):
        blank(k, (R,), np.nan, float)
    blank("se_reliable", (R,), False, bool)
    blank("events", (R,), -1, np.int64)
    for k in ("response_time_mean", "response_time_se", "cpu_seconds", "mean_queue_length_mean",
              "mean_queue_length_se"):
        blank(k, (), np.nan, float)
    for i, res in enumerate(results):
        if res is None:
            continue
        idx = np.unravel_index(i, shape)
        for k, v in res.items():
            v = np.asarray(v)
            if k in _LEVEL_VARS:   # pad the level axis (q(i) = 0 above the levels tracked)
                v = np.pad(v, [(0, 0)] * (v.ndim - 1) + [(0, L - v.shape[-1])])
            if k in ("batch_response_time", "batch_occupancy"):   # pad the batch axis with NaN
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
           "response_time": "arrival-side mean response time of each run", "response_time_se":
           "s.e. of response_time_mean across replications", "events": "events of each run",
           "cpu_seconds": "thread CPU seconds of the point on its worker",
           "kernel_seconds": "seconds in the simulation kernel, per run",
           "batch_response_time": "response time over each batch of each run (NaN beyond n_batches)",
           "batch_occupancy": "time average of q(i) over each batch of each run",
           "n_batches": "number of batches of each run",
           "mean_queue_length": "time average of the tasks per server, sum of q(i) for i >= 1, "
                                "in each run",
           "mean_queue_length_se": "s.e. of mean_queue_length_mean across replications"}
    for k, d in doc.items():
        ds[k].attrs["description"] = d
    return ds
