"""simulate_jsq's uniformized kernel (``kernel="uniformized"``, and ``"auto"`` where it pays) is the model's chain, exactly in law.

Checks that could fail, with margins fixed before any run:

* **Against the exact chain** (``stationary_jsq``) at ``n = 20, 50, 100`` and
  ``β = 0.5, 1``, and once more at ``n = 20, β = 1`` on a fine ``record_dt``
  grid (cells of 0.1 time units, about 3.5 steps each): the means over
  independent replications of ``E[n − Q_1]`` (exactly ``β√n``), ``E[Q_2]``,
  ``E[N − Q_1]``, ``p_full`` and ``p_wait`` (both ``P(Q_1 = n)``), each
  relative to its exact value, are shown within **2 %** by two one-sided
  Student-t tests, all 35 together (intersection–union: the claim is that
  every one holds, at level 95 %). The margin is set by the errors the
  kernel could make: a wrong uniformization rate or a self-loop taken for a
  departure moves ``E[Q_2]`` and ``P(wait)`` by tens of percent at these
  ``n``, and a cell weighted ``h/m`` instead of ``h/(m + 1)`` biases every
  time average by ``1/m``, about 30 % on the fine grid; 2 % catches them
  all, and the replications resolve it (each check prints its resolvable
  margin, asserted below the margin).
* **Against the event kernel** (``kernel="event"``, the old stream), by
  Welch two-sample TOSTs over independent replications: transient paths from
  a loaded start at ``n = 1000`` (the scaled ``X_3`` at two times,
  ``t_q3_zero`` censored at the horizon, the mean wait) with absolute margins
  of 5 % of each quantity's scale (``X_3(0) = 1``, the horizon 4 for the
  time, ``E[Gamma(1, 1)] = 1`` for a wait), and the stationary mean wait at
  ``n = 50``, ``β = 0.5`` (relative 2 %). ``X_2`` and the accrued waiting at
  a fixed time vary too much between runs at this ``n`` for a 5 % margin to
  be resolvable in CI's budget; they are left to the first check (as time
  averages).
* **Exact transient laws at n = 10^5** (``Q_3`` from the overloaded start is
  a pure death process, ``Q_1`` from the empty system Poisson before the
  boundary), where the counts per cell take numba's large-mean Poisson branch
  and the record points cut the cells: one Holm family at 1 %.
* Same seed, same run; the streams are named; ``kernel="auto"`` is the
  uniformized kernel bit for bit where it pays and the event kernel bit for
  bit where it would not (many self-loops, short cells); ``kernel="event"``
  keeps the numbers of qlib 0.2; bad input raises.
"""
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from qlib import stats
from qlib.halfin_whitt import simulate_jsq, stationary_jsq

TRUTH = Path(__file__).resolve().parent / "data" / "jsq_exact_means.json"
from qlib.halfin_whitt.simulate import EVENT_STREAM, UNIFORMIZED_STREAM

QUANTITIES = ("mean_idle", "mean_q2", "mean_waiting", "p_full", "p_wait")
MARGIN = 0.02          # relative, fixed in advance (module docstring)
REPS = 30
BURN_IN = 200.0
# (n, β, window, record_dt): record_dt = 0.1 makes the kernel's cells short (m ≈ 3.5
# steps); the windows are sized so that every check resolves its margin
# (β = 0.5 mixes slowly; at n = 20, β = 1 the means are small and relatively noisy)
CELLS = [(20, 0.5, 40_000.0, None), (20, 1.0, 40_000.0, None), (50, 0.5, 40_000.0, None),
         (50, 1.0, 20_000.0, None), (100, 0.5, 40_000.0, None), (100, 1.0, 20_000.0, None),
         (20, 1.0, 40_000.0, 0.1)]


def _quiet(**kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # short windows: batch s.e. not used here
        return simulate_jsq(**kw)


def exact_means(n, beta):
    """The exact chain's means at ``(n, β)``, stored in tests/data/jsq_exact_means.json
    (``stationary_jsq`` takes up to half a minute at ``β = 0.5``; rewrite the file with
    ``python tests/test_simulate_jsq_fast.py``). Their error bounds are checked to be
    far below the margins that use them."""
    st = json.loads(TRUTH.read_text())[f"{n},{float(beta)}"]
    # a twentieth of the 2 % margin at most: the bounds cannot move a verdict
    assert all(b < 1e-3 * st[q] for q, b in st["error_bounds"].items())
    return st


def _relative_errors(n, beta, window, record_dt):
    st = exact_means(n, beta)
    truth = dict(mean_idle=beta * math.sqrt(n), mean_q2=st["mean_q2"],
                 mean_waiting=st["mean_waiting"], p_full=st["p_wait"], p_wait=st["p_wait"])
    # start near the stationary means; the burn-in of 200 is over 15 correlation
    # lengths (L <= 13, at beta = 0.5): what is left of the transient is far below 2 %
    init = (n - round(beta * math.sqrt(n)), round(st["mean_q2"]))
    x = np.array([[getattr(r, q) / truth[q] - 1.0 for q in QUANTITIES]
                  for r in (_quiet(n=n, beta=beta, t_end=window + BURN_IN, burn_in=BURN_IN,
                                   seed=100 * n + s, initial=init, batches=10,
                                   record_dt=record_dt, kernel="uniformized")
                            for s in range(REPS))])
    return x.mean(axis=0), x.std(axis=0, ddof=1) / math.sqrt(REPS)


def test_uniformized_kernel_equals_the_exact_chain():
    est, se = zip(*(_relative_errors(*c) for c in CELLS))
    eq = stats.equivalence(np.ravel(est), np.ravel(se), REPS - 1, MARGIN, method="iut")
    print(eq.report("uniformized kernel = exact chain (relative)"))
    assert float(np.max(eq.resolvable)) < MARGIN          # the design can show 2 %
    assert eq.passed, eq.report()


def _welch(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    va, vb = a.var(axis=0, ddof=1) / len(a), b.var(axis=0, ddof=1) / len(b)
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    return a.mean(axis=0) - b.mean(axis=0), np.sqrt(va + vb), df


def _transient(kernel, seed):
    n = 1000
    m = round(math.sqrt(n))
    r = _quiet(n=n, beta=1.0, t_end=4.0, seed=seed, initial=(n, 2 * m, m), record_dt=0.5,
               batches=2, kernel=kernel)
    t3 = r.t_q3_zero if r.t_q3_zero == r.t_q3_zero else r.t_end     # censored at the horizon
    return [r.x3[1], r.x3[2], t3, r.waits.mean()]


def test_transient_paths_agree_with_the_event_kernel():
    reps = 300
    a = [_transient("uniformized", s) for s in range(reps)]
    b = [_transient("event", 10_000 + s) for s in range(reps)]
    d, se, df = _welch(a, b)
    #        X_3(.5) X_3(1) t_q3_zero  E[W | wait]
    margin = [0.05, 0.05, 0.20, 0.05]
    eq = stats.equivalence(d, se, df, margin, method="iut")
    print(eq.report("uniformized = event kernel, transient at n = 1000"))
    assert np.all(np.asarray(eq.resolvable) < margin)
    assert eq.passed, eq.report()


def test_stationary_waits_agree_with_the_event_kernel():
    reps = 16

    def run(kernel, seed):
        r = _quiet(n=50, beta=0.5, t_end=8_200.0, burn_in=200.0, seed=seed, initial=(46, 13),
                   batches=10, kernel=kernel)
        return r.waits.mean()

    a = np.array([run("uniformized", s) for s in range(reps)])
    b = np.array([run("event", 500 + s) for s in range(reps)])
    d, se, df = _welch(a, b)
    # E[W | wait] = E[Gamma(s, 1) | s >= 1], about 1.2 here: relative 2 %
    eq = stats.equivalence(d / 1.2, se / 1.2, df, MARGIN)
    print(eq.report("uniformized = event kernel, E[W | wait] at n = 50 (relative)"))
    assert float(eq.resolvable) < MARGIN
    assert eq.passed, eq.report()


def test_exact_laws_at_large_counts_and_cut_cells():
    # At n = 10^5 the counts per cell are Poisson of mean about 100 (numba's PTRS
    # branch, not the small-mean one the other checks use), and record_dt = 0.25
    # cuts the cells of 2.1/4000 inside (the state at a record point ends a partial
    # cell). Two laws are exact there: from the overloaded start Q_3 is a pure death
    # process (Q_2 < n), Q_3(t) ~ Binomial(Q_3(0), e^-t); from the empty system Q_1(t)
    # ~ Poisson(λ_n (1 − e^-t)) while no server is full (at t <= 1 the mean is 30
    # standard deviations below n). Exact standard errors; one Holm family at 1 %.
    # Resolution (asserted): under 2 % of each mean (1.5 % at worst, Q_3 at t = 1),
    # far below what a wrong uniformization rate or count law (tens of percent) or a
    # departure from the wrong level would move these means.
    n, reps, tt = 100_000, 400, np.array([0.25, 0.5, 1.0])
    sq, lam = math.sqrt(n), n - math.sqrt(n)
    m3 = math.ceil(sq)
    idx = np.round(tt / 0.25).astype(int)
    q3, q1 = [], []
    for s in range(reps):
        kw = dict(t_end=2.1, record_dt=0.25, batches=2, max_waits=0, kernel="uniformized")
        q3.append(simulate_jsq(n, 1.0, seed=s, initial=(n, 2 * m3, m3), **kw).x3[idx] * sq)
        q1.append(simulate_jsq(n, 1.0, seed=reps + s, **kw).x1[idx] * sq + n)
    p = np.exp(-tt)
    est = np.concatenate([np.mean(q3, axis=0), np.mean(q1, axis=0)])
    tgt = np.concatenate([m3 * p, lam * (1 - p)])
    se = np.sqrt(np.concatenate([m3 * p * (1 - p), lam * (1 - p)]) / reps)
    fam = stats.simultaneous(est, se, np.inf, tgt, level=0.99)
    print(fam.report("uniformized kernel: exact laws at n = 10^5"))
    assert np.all(np.asarray(fam.detectable) < 0.02 * tgt)
    assert fam.passed, fam.report()


def test_streams_are_named_and_seeded_runs_repeat():
    kw = dict(n=200, beta=1.0, t_end=60.0, burn_in=10.0, seed=3, record_dt=0.5,
              initial=(200, 30, 5), batches=5)
    a, b = simulate_jsq(**kw, kernel="uniformized"), simulate_jsq(**kw, kernel="uniformized")
    assert a.stream == b.stream == UNIFORMIZED_STREAM == "uniformized-1"
    for f in ("mean_idle", "mean_q2", "mean_waiting", "p_wait", "cumulative_wait", "t_q3_zero",
              "events", "arrivals"):
        assert getattr(a, f) == getattr(b, f), f
    assert np.array_equal(a.x1, b.x1) and np.array_equal(a.waits, b.waits)
    e = simulate_jsq(**kw, kernel="event")
    assert e.stream == EVENT_STREAM == "event-1" and e.mean_q2 != a.mean_q2
    # the default here (about 60 steps per cell, 1.1 steps per event) is the
    # uniformized kernel, bit for bit
    d0 = simulate_jsq(**kw)
    assert d0.stream == "uniformized-1" and d0.mean_q2 == a.mean_q2
    assert np.array_equal(d0.x1, a.x1) and np.array_equal(d0.waits, a.waits)
    assert "stream='uniformized-1'" in repr(a)
    d = a.to_dict(json=True)
    assert d["stream"] == "uniformized-1" and type(a).from_dict(d).stream == "uniformized-1"
    # the chain's own bookkeeping: tasks are conserved through the run
    assert int(a.final.sum()) == 200 + 30 + 5 + a.arrivals - (a.events - a.arrivals)
    assert a.x1[0] == 0.0 and a.x3[0] == pytest.approx(5 / math.sqrt(200))


def test_event_kernel_keeps_its_numbers():
    # the event kernel's stream is the one of qlib 0.2 (these values were computed
    # before the uniformized kernel existed, at this seed); "auto" takes the
    # uniformized kernel on this design
    _check_qlib_02_numbers(_quiet(n=50, beta=1.0, t_end=2000, burn_in=100, seed=1,
                                  kernel="event"))
    r = _quiet(n=50, beta=1.0, t_end=2000, burn_in=100, seed=1)
    assert r.stream == "uniformized-1" and r.events != 172142


@pytest.mark.parametrize("kw, stream", [
    # 8000 cells (4000 slices, as many before burn_in) of about 23 steps each
    (dict(n=50, beta=1.0, t_end=2000.0, burn_in=1000.0), "uniformized-1"),
    # 4 steps per cell on average, just: the rule's edge (4000 cells)
    (dict(n=50, beta=1.0, t_end=16_000 / (100 - math.sqrt(50)) * 1.001), "uniformized-1"),
    (dict(n=50, beta=1.0, t_end=16_000 / (100 - math.sqrt(50)) * 0.999), "event-1"),
    # a fine record_dt cuts cells of 0.09 steps (24001 cells)
    (dict(n=50, beta=1.0, t_end=20.0, record_dt=0.001), "event-1"),
    # λ_n + n = 4 λ_n at β√n = 2n/3: the self-loops' edge (n = 9, β = 2)
    (dict(n=9, beta=1.999, t_end=20_000.0), "uniformized-1"),
    (dict(n=9, beta=2.001, t_end=20_000.0), "event-1"),
    (dict(n=4, beta=1.9, t_end=20_000.0), "event-1"),
])
def test_auto_picks_the_kernel_that_pays(kw, stream):
    kw = dict(kw, seed=4, batches=2)
    r = simulate_jsq(**kw)
    assert r.stream == stream
    other = simulate_jsq(**kw, kernel="uniformized" if stream == "uniformized-1" else "event")
    assert other.stream == stream
    assert (r.events, r.mean_q2, r.cumulative_wait) == (other.events, other.mean_q2,
                                                        other.cumulative_wait)


def _check_qlib_02_numbers(r):
    assert r.stream == "event-1"
    assert (r.events, r.arrivals) == (172142, 86094)
    assert r.mean_q2 == pytest.approx(4.10357227991819, rel=1e-12)
    assert r.p_wait == pytest.approx(0.09599755575924228, rel=1e-12)
    assert r.cumulative_wait == pytest.approx(7959.318671726825, rel=1e-12)


@pytest.mark.parametrize("kernel", ["fast", "", None, 1, "Event"])
def test_bad_kernel(kernel):
    with pytest.raises(ValueError, match="kernel"):
        simulate_jsq(10, 1.0, t_end=10.0, kernel=kernel)


def write_exact_means():
    """Solve the exact chain at every cell of this file and of test_simulate_jsq_se.py."""
    out = {}
    for n, beta, tol in [(20, 0.5, 1e-9), (20, 1.0, 1e-9), (20, 2.0, 1e-9), (50, 0.5, 1e-6),
                         (50, 1.0, 1e-6), (100, 0.5, 1e-6), (100, 1.0, 1e-6)]:
        st = stationary_jsq(n, beta, tol=tol)
        eb = st.error_bounds
        out[f"{n},{beta}"] = dict(n=n, beta=beta, tol=tol, mean_q2=st.mean_q2, mean_q3=st.mean_q3,
                                  mean_waiting=st.mean_waiting, p_wait=st.p_wait,
                                  error_bounds={k: float(eb[k]) for k in
                                                ("mean_q2", "mean_waiting", "p_wait")},
                                  method=st.method)
    TRUTH.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    write_exact_means()
