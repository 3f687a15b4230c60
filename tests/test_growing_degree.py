"""The growing-degree chapter's helpers (``qbook.growing_degree``) and its stored runs.

* the resampled 1 % degree equals the closed form of the chapter's
  proposition, ``⌈log η / log λ⌉ − 1``, at several loads and tolerances;
* the one-neighbour limit is the supermarket model's ``Σ λ^(2^i − 2)``
  (summed here independently of the library's recursion);
* the crossing degree interpolates log-excess linearly in ``d`` and brackets
  by the intervals; ``None`` where the grid ends first;
* the closure degree and the one-sided "more than the margin above" check;
* the stored runs hold every cell of the design, with its replications.
"""
import math

import pytest

from qbook import growing_degree as gd


@pytest.mark.parametrize("lam", [0.5, 0.7, 0.9, 0.95, 0.99])
@pytest.mark.parametrize("eta", [0.05, 0.01, 0.001])
def test_fluid_crossing_closed_form(lam, eta):
    assert gd.fluid_crossing("all", lam, target=eta) == math.ceil(math.log(eta) / math.log(lam)) - 1


@pytest.mark.parametrize("lam", [0.3, 0.7, 0.95])
def test_supermarket_limit(lam):
    direct = sum(lam ** (2 ** i - 2) for i in range(1, 40))
    assert abs(gd.limit("one", lam) / direct - 1) < 1e-12


def test_crossing():
    e = {("one", d, 0.5): (x, x - 0.002, x + 0.002) for d, x in ((2, 0.05), (4, 0.011), (8, 0.0105), (16, 0.002))}
    c = gd.crossing(e, "one", 0.5, (2, 4, 8, 16))
    assert c["low"] == 2 and c["high"] == 16                 # the intervals at 4 and 8 straddle 1 %
    assert 8 < c["d"] < 16
    assert gd.crossing(e, "one", 0.5, (2, 4, 8))["d"] is None  # never below 1 % on this grid


def test_stored_design():
    data = gd.stored()
    f = data["fluid"]
    degs = {c["degree"] for c in f["cells"]}
    assert len(f["cells"]) == len(degs) * 2 * 3
    large = f["large_all_degree"]
    assert all(len(c["R"]) == (f["replications_large_all"] if c["policy"] == "all" and c["degree"] >= large
                               else f["replications"]) for c in f["cells"])
    assert len(data["compare"]["regular"]) == len(data["compare"]["circulant"])
    assert {(c["degree"], c["lam"]) for c in data["closures"]} == {(d, l) for d in degs for l in (0.7, 0.9, 0.95)}


def test_closure_degree():
    cl = [dict(degree=d, lam=0.9, all_R=1 + 0.03 / d, one_R=3.0) for d in (2, 4, 8)]
    assert gd.closure_degree(cl, "all", 0.9, (2, 4, 8)) == 4          # 1.0075 at d = 4, 1.015 at d = 2
    assert gd.closure_degree(cl, "one", 0.9, (2, 4, 8)) is None       # 3.0 is above the supermarket model's 2.61


def test_above_check():
    exact = {100: dict(q2=1.0, pwait=1.0)}
    cells = {("a", 100): dict(q2=2.0, q2_se=0.05, pwait=2.0, pwait_se=0.05, df=9)}
    assert gd.above_check(cells, exact, ["a"], 100, 0.10, "far above").passed
    cells["a", 100].update(q2=1.05)
    assert not gd.above_check(cells, exact, ["a"], 100, 0.10, "5 % above").passed
