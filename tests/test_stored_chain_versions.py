"""The stored outputs of ``stationary_jsq`` are from today's solver.

``benchmarks/ht_chain.json``, ``ht_chain_tight.json`` and
``ht_alternatives_chain.json`` hold values and error estimates of
:func:`qlib.halfin_whitt.stationary_jsq` that the Part III chapters read
instead of recomputing.  Each records ``_solver_version``, the oldest
``SOLVER_VERSION`` among its rows; when the solver changes (and its version is
bumped) a file written by the older code fails here until it is regenerated
with ``benchmarks/bench_ht_constants.py`` or ``bench_ht_alternatives.py``.
"""
import json
import pathlib

import pytest

from qlib.halfin_whitt import SOLVER_VERSION

BENCH = pathlib.Path(__file__).resolve().parents[1] / "benchmarks"


def _rows(data):
    for key, val in data.items():
        if key.startswith("_"):
            continue
        if "p_wait" in val or "error" in val:          # ht_alternatives_chain: "n/beta" -> row
            yield key, val
        else:                                           # ht_chain*: beta -> n -> row
            for n, row in val.items():
                yield f"{key}/{n}", row


# Every row of the three files is at SOLVER_VERSION 3.  ht_chain.json's beta = 0.25 rows
# were solved with benchmarks/bench_ht_constants.py chain 0.25 --kw='{"max_seconds": 120,
# "tol": 1e-11}' (the adaptive solver where servers with four tasks carry mass, 34-304 s
# of CPU per row; n = 1000 and 1400 structurally, the four-task mass in their errors).


@pytest.mark.parametrize("name", ["ht_chain.json",
                                  "ht_chain_tight.json", "ht_alternatives_chain.json"])
def test_stored_chain_is_current(name):
    data = json.loads((BENCH / name).read_text())
    assert "_solver_version" in data, f"{name} records no solver version: regenerate it"
    stale = [k for k, r in _rows(data) if r.get("solver_version", 1) < SOLVER_VERSION]
    oldest = min((r.get("solver_version", 1) for _, r in _rows(data)), default=SOLVER_VERSION)
    assert data["_solver_version"] == oldest, f"{name}: _solver_version disagrees with its rows"
    assert not stale and oldest >= SOLVER_VERSION, (
        f"{name} has rows from solver version < {SOLVER_VERSION} (regenerate them): {stale}")


def test_stored_wait_given_wait_is_at_least_one():
    # E[W | wait] = E[Q_2 + Q_3 + …]/(λ P(wait)) >= E[Q_2]/(λ P(wait)) = 1 (rate
    # balance): a row below 1 by more than its relative errors of P(wait) and
    # E[Q_2] is truncated wrongly
    data = json.loads((BENCH / "ht_chain.json").read_text())
    low = [(k, r["mean_wait"] / r["p_wait"]) for k, r in _rows(data) if "mean_wait" in r
           and r["mean_wait"] / r["p_wait"] < 1 - r["err"]["c"] / r["c"] - r["err"]["q2"] / r["q2"]]
    assert not low, low


def test_version_is_an_int():
    assert isinstance(SOLVER_VERSION, int) and SOLVER_VERSION >= 1


def test_stored_solver_check_solve_is_current():
    # chapter solver_check reads the adaptive solver's answer at n = 20, beta = 0.5 from here
    # (and solves it again, a minute of CPU, when the file is from an older solver)
    data = json.loads((BENCH / "solver_check_fsp.json").read_text())
    assert data["solver_version"] == SOLVER_VERSION, "regenerate with benchmarks/bench_solver_check.py"
    assert (data["n"], data["beta"], data["tol"], data["method"]) == (20, 0.5, 1e-6, "fsp")
