"""Recorded runs (qbook.recorded): keys, replay, staleness, and the committed stores."""
import gzip
import pickle
from pathlib import Path

import numpy as np
import pytest

from qlib import graphs, replicate, simulate
from qbook.recorded import RecordedRuns, call_key, code_version

ROOT = Path(__file__).resolve().parents[1]
KW = dict(replications=2, t_end=20.0, burn_in=5.0, batches=4)


def test_the_key_sees_every_argument():
    base = call_key(replicate, graphs.ring(10), 0.5, 1.0, seed=1, initial=np.array([1.0, 0.5]))
    assert base == call_key(replicate, graphs.ring(10), 0.5, 1.0, seed=1, initial=np.array([1.0, 0.5]))
    for other in (call_key(replicate, graphs.ring(11), 0.5, 1.0, seed=1, initial=np.array([1.0, 0.5])),
                  call_key(replicate, graphs.ring(10), 0.5 + 1e-15, 1.0, seed=1, initial=np.array([1.0, 0.5])),
                  call_key(replicate, graphs.ring(10), 0.5, 1.0, seed=2, initial=np.array([1.0, 0.5])),
                  call_key(replicate, graphs.ring(10), 0.5, 1.0, seed=1, initial=np.array([1.0, 0.4])),
                  call_key(simulate, graphs.ring(10), 0.5, 1.0, seed=1, initial=np.array([1.0, 0.5])),
                  call_key(replicate, graphs.grid(2, 5), 0.5, 1.0, seed=1, initial=np.array([1.0, 0.5]))):
        assert other != base


def test_unkeyable_argument_and_unrecordable_result_raise():
    with pytest.raises(TypeError, match="object"):
        call_key(replicate, object())
    runs = RecordedRuns(Path("/nonexistent/x.pkl.gz"))
    with pytest.raises(TypeError, match="cannot be recorded"):
        runs(lambda x: x, 1)
    with pytest.raises(TypeError, match="record"):
        RecordedRuns("x.pkl.gz", record=1)


def test_replay_returns_the_run(tmp_path):
    path = tmp_path / "runs.pkl.gz"
    runs = RecordedRuns(path)
    a = runs(replicate, graphs.ring(30), 0.8, 2.0, seed=3, **KW)
    runs.save()
    again = RecordedRuns(path)
    b = again(replicate, graphs.ring(30), 0.8, 2.0, seed=3, **KW)
    assert (again.replayed, again.ran, again.stale) == (1, 0, False)
    assert b.response_time == a.response_time and b.response_time_ci(0.9) == a.response_time_ci(0.9)
    for x, y in zip(a.results, b.results):
        assert np.array_equal(x.occupancy, y.occupancy) and np.array_equal(x.final_queues, y.final_queues)
    # a different call runs; record=True reruns everything
    again(replicate, graphs.ring(30), 0.8, 2.0, seed=4, **KW)
    assert again.ran == 1
    fresh = RecordedRuns(path, record=True)
    fresh(replicate, graphs.ring(30), 0.8, 2.0, seed=3, **KW)
    assert (fresh.replayed, fresh.ran) == (0, 1)


@pytest.mark.filterwarnings("ignore:standard errors unreliable:RuntimeWarning")
def test_a_store_from_other_code_is_ignored(tmp_path):
    path = tmp_path / "runs.pkl.gz"
    runs = RecordedRuns(path)
    runs(simulate, graphs.ring(30), 0.8, 0.0, t_end=10.0, seed=1)
    runs.save()
    with gzip.open(path, "rb") as f:
        store = pickle.load(f)
    store["_code_version"] = "other"
    with gzip.open(path, "wb") as f:
        pickle.dump(store, f)
    again = RecordedRuns(path)
    again(simulate, graphs.ring(30), 0.8, 0.0, t_end=10.0, seed=1)
    assert again.stale and (again.replayed, again.ran) == (0, 1)


@pytest.mark.parametrize("path", sorted((ROOT / "benchmarks").glob("*_runs.pkl.gz")), ids=lambda p: p.name)
def test_committed_stores_were_written_by_this_code(path):
    # a store from other simulator or statistics code would be ignored and
    # its chapter would rerun every simulation: rerun the chapter (make book)
    # and commit the store it rewrites
    with gzip.open(path, "rb") as f:
        store = pickle.load(f)
    stamp, files = store.get("_code_version"), tuple(store.get("_code_files", ()))
    assert stamp == code_version(files), (f"{path.name} was written by other qlib code: rerun its chapter "
                                          "(python benchmarks/record_chapters.py)")


def test_an_audited_cell_replays_without_its_paths(tmp_path):
    from qbook.audit import audited_replicate
    from qlib.sim import service as sv
    path = tmp_path / "runs.pkl.gz"
    kw = dict(replications=3, seed=2, burn_in=10.0, window=200.0, which=lambda rr: [1, 2])
    runs = RecordedRuns(path)
    a = audited_replicate(graphs.ring(4), 0.5, 1.0, recorded=runs, **kw)
    assert a.result.results[0].paths is not None and runs.ran == 1
    runs.save()
    again = RecordedRuns(path)
    b = audited_replicate(graphs.ring(4), 0.5, 1.0, recorded=again, **kw)
    assert (again.replayed, again.ran) == (1, 0) and b.result.results[0].paths is None
    assert b.tau == a.tau and b.mean_queue == a.mean_queue and b.result.response_time == a.result.response_time
    assert np.array_equal(b.burn.equivalence.achieved, a.burn.equivalence.achieved)
    # the levels audited are part of the key: another function runs again
    audited_replicate(graphs.ring(4), 0.5, 1.0, recorded=again, **(kw | {"which": lambda rr: [1]}))
    assert again.ran == 1
    # a service law is keyed by its fields
    assert call_key(replicate, service=sv.erlang(2)) != call_key(replicate, service=sv.erlang(3))
