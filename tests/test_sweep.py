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
from qlib.sim import replicate  # noqa: E402
from qlib.meanfield.degrees import DegreeDistribution  # noqa: E402
from qlib.stats import simultaneous  # noqa: E402
from qlib.sweep import (graph_for, initial_for, open_store, point_seed, points,  # noqa: E402
                        replication_result)

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
        assert cell.response_time_mean.item() == rr.mean_response_time
        assert cell.response_time_se.item() == rr.response_time_se
        np.testing.assert_array_equal(cell.events.values, [r.events for r in rr.results])
        for k, r in enumerate(rr.results):
            np.testing.assert_array_equal(cell.occupancy.values[k, :r.occupancy.size],
                                          r.occupancy)
            assert cell.response_time.values[k] == r.mean_response_time


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
        assert ds.response_time_mean.values[i] == rr.mean_response_time == rev.response_time_mean.values[1 - i]
        np.testing.assert_array_equal(ds.events.values[i], [r.events for r in rr.results])


INIT_PTS = [  # a start at every point, drawn on the worker from the point's stream
    {"graph": "ring", "n": 30, "lam": 0.7, "mu": 1.0, "initial": "mm1", "batches": 4},
    {"graph": "configuration", "n": 40, "degrees": DegreeDistribution({0: 0.5, 4: 0.5}),
     "method": "quota", "lam": 0.6, "mu": 0.0, "initial": "mm1-isolated"},
    {"graph": "cliques", "n": 30, "k": 3, "lam": 0.6, "mu": float("inf"),
     "initial": np.array([1.0, 0.5, 0.2])},
    {"graph": "ring", "n": 30, "lam": 0.7, "mu": 1.0, "initial": "empty"}]


def test_initial_states_equal_replicate(client):
    """Points with initial states and fixed batches: the sweep equals replicate
    started from initial_for(point), and replication_result gives back
    replicate's fields, batches included, bit for bit."""
    ds = qlib.sweep(INIT_PTS, client=client, **KW)
    assert list(ds.initial.values[[0, 1, 3]]) == ["mm1", "mm1-isolated", "empty"]
    for i, p in enumerate(INIT_PTS):
        g = graph_for(p, SEED)
        x0 = initial_for(p, SEED, g)
        assert (x0 is None) == (i == 3) and (x0 is None or x0.any())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            rr = replicate(g, p["lam"], p["mu"], replications=KW["replications"],
                           seed=point_seed(SEED, p), t_end=KW["t_end"], burn_in=KW["burn_in"],
                           initial=x0, batches=p.get("batches"))
        got = replication_result(ds, point=i)
        L = rr.occupancy.size
        np.testing.assert_array_equal(got.occupancy[:L], rr.occupancy)
        np.testing.assert_array_equal(got.occupancy_ci[:, :L], rr.occupancy_ci)
        assert got.response_time_ci == rr.response_time_ci
        for a, b in zip(got.results, rr.results):
            assert a.mean_response_time == b.mean_response_time
            assert a.mean_response_time_se == b.mean_response_time_se and a.events == b.events
            np.testing.assert_array_equal(a.batch_response_time, b.batch_response_time)
            np.testing.assert_array_equal(a.batch_occupancy[:, :b.batch_occupancy.shape[1]],
                                          b.batch_occupancy)
        if "batches" in p:
            assert all(r.batches == p["batches"] for r in got.results)
        assert (got.results[0].n, got.results[0].lam, got.results[0].mu) == (g.n, p["lam"], p["mu"])
    # "empty" is the default: the same seed, the same numbers as no initial at all
    plain = {k: v for k, v in INIT_PTS[3].items() if k != "initial"}
    assert point_seed(SEED, plain).spawn_key == point_seed(SEED, INIT_PTS[3]).spawn_key
    iso = np.diff(graph_for(INIT_PTS[1], SEED).indptr) == 0
    x = initial_for(INIT_PTS[1], SEED)
    assert iso.any() and not x[~iso].any() and x[iso].any()


def test_initial_laws():
    """The draws have the laws initial_for documents: P(X >= i) against lam^i
    and against a tail vector, levels 1..4, as a Holm family over i.i.d. draws."""
    n, lam, q = 20000, 0.8, [1.0, 0.6, 0.3, 0.1, 0.05]
    for init, target in (("mm1", lam ** np.arange(1, 5)), (q, np.array(q[1:5]))):
        x = initial_for({"graph": "ring", "n": n, "lam": lam, "initial": init}, SEED)
        ind = np.array([x >= i for i in range(1, 5)], float)
        fam = simultaneous(ind.mean(1), ind.std(1, ddof=1) / np.sqrt(n), n - 1, target=target)
        print(fam.report(f"initial={init!r}: P(X >= i), i = 1..4"))
        assert fam.passed
        assert x.max() <= (4 if init is q else np.inf)
    # the draw depends on the point: another mu, another draw; the same point, the same draw
    p = {"graph": "ring", "n": 50, "lam": lam, "mu": 1.0, "initial": "mm1"}
    assert np.array_equal(initial_for(p, SEED), initial_for(dict(p), SEED))
    assert not np.array_equal(initial_for(p, SEED), initial_for({**p, "mu": 2.0}, SEED))


RGRID = {**GRID, "graph": ["ring"], "initial": ["mm1"]}   # 4 points, each from an M/M/1 start


def test_resume_reruns_only_missing_points(client, tmp_path):
    full = qlib.sweep(RGRID, client=client, store=tmp_path / "a.zarr", **KW)
    store = tmp_path / "b.zarr"
    shutil.copytree(tmp_path / "a.zarr", store)
    # an interrupted sweep: only some points were written, one half-written
    pts, _, _ = points(RGRID)
    names = [S._group_name(S._normalise(p, 6.0, 1.0, 0)) for p in pts]
    lost = names[1::2]
    for nm in lost:
        shutil.rmtree(store / nm)
    (store / f"tmp-{lost[0]}-1").mkdir()
    kept = {nm: (store / nm / "zarr.json").stat().st_mtime_ns for nm in names if nm not in lost}
    part = open_store(store, RGRID)
    assert int((part.events < 0).all("replication").sum()) == len(lost)
    again = qlib.sweep(RGRID, client=client, store=store, **{**KW, "seed": None})
    timing = ["cpu_seconds", "kernel_seconds"]   # measured, so not reproducible
    assert again.drop_vars(timing).identical(full.drop_vars(timing))
    # the kept points were not rewritten, the lost ones were
    assert all((store / nm / "zarr.json").stat().st_mtime_ns == t for nm, t in kept.items())
    assert all((store / nm).is_dir() for nm in lost)
    assert not list(store.glob("tmp-*"))
    # a store from another sweep is refused
    with pytest.raises(ValueError, match="t_end"):
        qlib.sweep(RGRID, client=client, store=store, **{**KW, "t_end": 7.0})


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
    assert np.array_equal(a, point_seed(7, {k: v for k, v in p.items() if k != "mu"}).generate_state(4))
    assert np.array_equal(a, point_seed(7, dict(reversed(list(p.items())))).generate_state(4))
    assert not np.array_equal(a, point_seed(7, {**p, "mu": 1.0}).generate_state(4))
    assert not np.array_equal(a, point_seed(8, p).generate_state(4))
    # a random graph depends on the graph's own parameters only: one graph across lam, mu, starts
    rr = {"graph": "random_regular", "n": 40, "d": 3, "lam": 0.5, "mu": 0.0}
    g1, g2 = graph_for(rr, 7), graph_for({**rr, "lam": 0.9, "mu": 2.0, "initial": "mm1"}, 7)
    assert np.array_equal(g1.indices, g2.indices) and np.array_equal(g1.indptr, g2.indptr)
    assert not np.array_equal(g1.indices, graph_for(rr, 8).indices)


def test_sweep_dataset_has_mean_queue_length(client):
    ds = qlib.sweep(GRID, client=client, **KW)
    pts, _, _ = points(GRID)
    p = pts[0]
    rr = _replicate_at(p)
    cell = ds.sel(graph=p["graph"], n=p["n"], lam=p["lam"], mu=p["mu"])
    np.testing.assert_array_equal(cell.mean_queue_length.values,
                                  [r.mean_queue_length for r in rr.results])
    assert cell.mean_queue_length_mean.item() == rr.mean_queue_length
    assert cell.mean_queue_length_se.item() == rr.mean_queue_length_se


def test_open_store_alone_reads_the_recorded_grid(client, tmp_path):
    full = qlib.sweep(RGRID, client=client, store=tmp_path / "g.zarr", **KW)
    alone = open_store(tmp_path / "g.zarr")
    timing = ["cpu_seconds", "kernel_seconds"]
    assert alone.drop_vars(timing).identical(open_store(tmp_path / "g.zarr", RGRID).drop_vars(timing))
    np.testing.assert_array_equal(alone.response_time_mean.values, full.response_time_mean.values)


def test_import_qlib_sweep_gives_the_package():
    import qlib.sweep as s
    assert callable(s) and s is qlib.sweep and callable(s.replication_result)


def test_a_generator_seed_draws_the_root_seed(client):
    grid = {"graph": ["ring"], "n": [30], "lam": [0.7], "mu": [0.0]}
    kw = {k: v for k, v in KW.items() if k != "seed"}
    a = qlib.sweep(grid, client=client, seed=np.random.default_rng(3), **kw)
    b = qlib.sweep(grid, client=client, seed=int(np.random.default_rng(3).integers(0, 2**63)), **kw)
    assert a.attrs["seed"] == b.attrs["seed"]
    np.testing.assert_array_equal(a.response_time_mean.values, b.response_time_mean.values)


def test_a_sweep_run_has_the_result_vocabulary():
    from qlib.sim.result import ReplicationResult
    from qlib.sweep import SweepRun
    occ = np.array([1.0, 0.5, 0.1])
    run = SweepRun(occupancy=occ, occupancy_se=np.full(3, 0.01), mean_response_time=1.2,
                   mean_response_time_se=0.02, batch_occupancy=np.array([[1, 0.5, 0.1], [1, 0.6, 0.2]]),
                   batch_response_time=np.array([1.1, 1.3]), batches=2, events=10, se_reliable=True,
                   wall_time=0.0, n=10, lam=0.5, mu=0.0)
    assert run.mean_queue_length == pytest.approx(0.6) and run.response_time == 1.2
    assert run.mean_queue_length_se == pytest.approx(0.1)
    rr = ReplicationResult(occupancy=occ, occupancy_se=np.full(3, 0.01),
                           occupancy_ci=np.vstack([occ - 0.1, occ + 0.1]), mean_response_time=1.2,
                           response_time_se=0.02, response_time_ci=(1.1, 1.3), replications=2,
                           seed=1, results=(run, run), wall_time=0.0)
    assert rr.mean_queue_length == pytest.approx(0.6)
