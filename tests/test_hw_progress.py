"""``progress=True`` on the Halfin–Whitt simulators runs the horizon in slices,
each kernel call going on from the state the last one left; the result is the
unsliced run's, bit for bit, for every field but the wall time."""
import dataclasses
import warnings

import numpy as np
import pytest

from qlib.halfin_whitt import simulate_jsq, simulate_jsq_d, simulate_tasks, transient_jsq


def _same(a, b):
    if a is None or b is None:
        return a is b
    if dataclasses.is_dataclass(a):
        return all(_same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a)
                   if f.name != "wall_time")
    if isinstance(a, (np.ndarray, float, np.floating)):
        return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


CASES = {
    "simulate_jsq": lambda **kw: simulate_jsq(60, 1.0, t_end=200.0, burn_in=20.0, seed=7,
                                              initial=[60, 15, 4], record_dt=0.5, **kw),
    "simulate_jsq batches": lambda **kw: simulate_jsq(20, 0.5, t_end=500.0, seed=3, batches=4,
                                                      max_waits=10, **kw),
    "simulate_jsq_d": lambda **kw: simulate_jsq_d(40, 1.0, (40, 2), t_end=150.0, burn_in=10.0,
                                                  seed=5, replications=3, initial=[40, 8], **kw),
    "simulate_tasks": lambda **kw: simulate_tasks(30, 1.0, t_end=200.0, burn_in=20.0, seed=11,
                                                  initial=[30, 9, 2], max_waits=300, **kw),
    "transient_jsq": lambda **kw: transient_jsq(64, 1.0, [64, 12, 2], [0.0, 0.5, 1.5], **kw),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_progress_run_equals_the_unsliced_run(case, monkeypatch):
    monkeypatch.setenv("QLIB_VERBOSE", "0")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # short runs: unreliable s.e.
        plain, sliced = CASES[case](), CASES[case](progress=True)
    for f in dataclasses.fields(plain):
        if f.name != "wall_time":
            assert _same(getattr(plain, f.name), getattr(sliced, f.name)), f.name


def test_a_sliced_run_is_not_trivially_equal():
    # the comparison above can fail: another seed gives another run
    a = simulate_jsq(60, 1.0, t_end=50.0, seed=1, progress=True, batches=4)
    b = simulate_jsq(60, 1.0, t_end=50.0, seed=2, batches=4)
    assert not _same(a, b)


def test_the_bar_says_it_compiles_and_its_clock_starts_after_the_first_slice():
    import io
    import time

    from tqdm import tqdm

    from qlib._feedback import cold
    from qlib.halfin_whitt._slices import _Bar

    class Uncompiled:                                 # a dispatcher with no signature, no cache
        signatures = []

    out = io.StringIO()
    assert cold(Uncompiled())
    bar = _Bar(tqdm(total=10.0, file=out, mininterval=0), 10.0, cold(Uncompiled()))
    assert "compiling" in out.getvalue()
    time.sleep(0.5)                                   # the first slice: as slow as a compilation
    bar.update(1.0)
    for _ in range(3):
        bar.update(1.0)
    assert bar.n == 4.0 and bar._bar.format_dict["elapsed"] < 0.25   # the compilation is not in the rate
    bar.close()
