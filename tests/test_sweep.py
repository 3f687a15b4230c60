"""qlib.sweep: a Dask sweep equals replicate() point by point, resumes from its
store, and rejects bad input before scheduling anything.

The module-scoped cluster has two single-threaded worker processes; it is
closed at the end and the test checks that no worker process is left.
"""
import os
import shutil
import warnings

import numpy as np
import pytest

pytest.importorskip("dask.distributed")
pytest.importorskip("xarray")
pytest.importorskip("zarr")

import qlib  # noqa: E402
from qlib.simulate import replicate  # noqa: E402
from qlib.sweep import graph_for, open_store, point_seed, points  # noqa: E402

import importlib  # noqa: E402
S = importlib.import_module("qlib.sweep")

SEED = 20240611
KW = dict(replications=3, t_end=6.0, burn_in=1.0, seed=SEED, progress=False)
GRID = {"graph": ["ring", "double_star"], "n": [30, 60], "lam": [0.7],
        "mu": [0.0, float("inf")]}


@pytest.fixture(scope="module")
def client():
    from dask.distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=":0")
    c = Client(cluster)
    pids = [w.process.pid for w in cluster.workers.values()]
    yield c
    c.close()
    cluster.close()
    for pid in pids:   # no worker process left behind
        try:
            os.kill(pid, 0)
            alive = True
        except ProcessLookupError:
            alive = False
        assert not alive, f"worker {pid} still running"


def _replicate_at(p):
    with warnings.catch_warnings():   # runs this short warn that batch-means s.e. are unreliable
        warnings.simplefilter("ignore", RuntimeWarning)
        return replicate(graph_for(p, SEED), p["lam"], p["mu"], replications=KW["replications"],
                         seed=point_seed(SEED, p), t_end=KW["t_end"], burn_in=KW["burn_in"])


def test_sweep_equals_replicate_point_by_point(client):
    ds = qlib.sweep(GRID, client=client, **KW)
    assert dict(ds.sizes)["graph"] == 2 and dict(ds.sizes)["replication"] == 3
    assert ds.attrs["seed"] == SEED and ds.attrs["qlib_version"] == qlib.__version__
    pts, _, _ = points(GRID)
    for p in pts:
        rr = _replicate_at(p)
        cell = ds.sel(graph=p["graph"], n=p["n"], lam=p["lam"], mu=p["mu"])
        L = rr.occupancy.size
        # bitwise: the same seeds give the same floating-point numbers
        np.testing.assert_array_equal(cell.occupancy_mean.values[:L], rr.occupancy)
        assert not cell.occupancy_mean.values[L:].any()
        np.testing.assert_array_equal(cell.occupancy_se.values[:L], rr.occupancy_se)
        assert cell.R_mean.item() == rr.mean_response_time
        assert cell.R_se.item() == rr.response_time_se
        np.testing.assert_array_equal(cell.events.values, [r.events for r in rr.results])
        for k, r in enumerate(rr.results):
            np.testing.assert_array_equal(cell.occupancy.values[k, :r.occupancy.size],
                                          r.occupancy)
            assert cell.R.values[k] == r.mean_response_time


def test_explicit_points_in_any_order(client):
    """An explicit list with generator arguments (random graphs seeded from the
    point); reversing the list changes nothing but the order."""
    pts = [{"graph": "cliques", "n": 30, "k": 3, "lam": 0.6, "mu": 1.0},
           {"graph": "random_regular", "n": 30, "d": 3, "lam": 0.6, "mu": 0.0}]
    ds = qlib.sweep(pts, client=client, **KW)
    assert ds.k.values[0] == 3 and np.isnan(ds.k.values[1])
    assert list(ds.graph.values) == ["cliques", "random_regular"]
    rev = qlib.sweep(pts[::-1], client=client, **KW)
    for i, p in enumerate(pts):
        rr = _replicate_at(p)
        assert ds.R_mean.values[i] == rr.mean_response_time == rev.R_mean.values[1 - i]
        np.testing.assert_array_equal(ds.events.values[i], [r.events for r in rr.results])


def test_resume_reruns_only_missing_points(client, tmp_path):
    full = qlib.sweep(GRID, client=client, store=tmp_path / "a.zarr", **KW)
    store = tmp_path / "b.zarr"
    shutil.copytree(tmp_path / "a.zarr", store)
    # an interrupted sweep: only some points were written, one half-written
    pts, _, _ = points(GRID)
    names = [S._group_name(S._normalise(p, 6.0, 1.0, 0)) for p in pts]
    lost = names[1::3]
    for nm in lost:
        shutil.rmtree(store / nm)
    (store / f"tmp-{lost[0]}-1").mkdir()
    kept = {nm: (store / nm / "zarr.json").stat().st_mtime_ns for nm in names if nm not in lost}
    part = open_store(store, GRID)
    assert int((part.events < 0).all("replication").sum()) == len(lost)
    again = qlib.sweep(GRID, client=client, store=store, **{**KW, "seed": None})
    timing = ["cpu_seconds", "kernel_seconds"]   # measured, so not reproducible
    assert again.drop_vars(timing).identical(full.drop_vars(timing))
    # the kept points were not rewritten, the lost ones were
    assert all((store / nm / "zarr.json").stat().st_mtime_ns == t for nm, t in kept.items())
    assert all((store / nm).is_dir() for nm in lost)
    assert not list(store.glob("tmp-*"))
    # a store from another sweep is refused
    with pytest.raises(ValueError, match="t_end"):
        qlib.sweep(GRID, client=client, store=store, **{**KW, "t_end": 7.0})


@pytest.mark.parametrize("grid, kw, err, match", [
    ({}, {}, ValueError, "empty"),
    ([], {}, ValueError, "empty"),
    ({"graph": ["ring"], "n": [], "lam": [0.5]}, {}, ValueError, "empty"),
    ({"graph": ["ring"], "n": [10], "lam": [0.5], "rate": [1]}, {}, ValueError, "unknown"),
    ({"graph": ["ring"], "n": [10], "lam": [0.5], "k": [3]}, {}, ValueError, "takes no"),
    ({"graph": ["torus"], "n": [10], "lam": [0.5]}, {}, ValueError, "graph must be"),
    ({"graph": ["ring"], "n": [10], "lam": [0.5, 1.0]}, {}, ValueError, "lam must be in"),
    ({"graph": ["ring"], "n": [10], "lam": [0.5], "mu": [1.0, -1.0]}, {}, ValueError, "mu must"),
    ({"graph": ["ring"], "n": [10]}, {}, ValueError, "'lam' missing"),
    ({"graph": ["random_regular"], "n": [10], "lam": [0.5]}, {}, ValueError, "needs"),
    ({"graph": ["ring"], "n": [10], "lam": [0.5]}, {"replications": 1}, ValueError, "replications"),
    ({"graph": ["ring"], "n": [10], "lam": [0.5]}, {"t_end": 0.5}, ValueError, "t_end"),
    ({"graph": ["ring"], "n": [10], "lam": [0.5]}, {"seed": -1}, ValueError, "seed"),
    ({"graph": "ring", "n": [10], "lam": [0.5]}, {}, TypeError, "list of values"),
])
def test_bad_input_rejected_up_front(grid, kw, err, match):
    # client="tcp://nowhere:1" would hang or fail if anything were scheduled
    args = {**KW, **kw, "client": "tcp://127.0.0.1:9"}
    with pytest.raises(err, match=match):
        qlib.sweep(grid, **args)


def test_seed_depends_on_the_point_only():
    p = {"graph": "ring", "n": 1500, "lam": 0.9, "mu": 0.0}
    a = point_seed(7, p).generate_state(4)
    assert np.array_equal(a, point_seed(7, {**p, "mu": 0}).generate_state(4))
    assert np.array_equal(a, point_seed(7, dict(reversed(list(p.items())))).generate_state(4))
    assert not np.array_equal(a, point_seed(7, {**p, "mu": 1.0}).generate_state(4))
    assert not np.array_equal(a, point_seed(8, p).generate_state(4))
