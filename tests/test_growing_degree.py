"""The growing-degree chapter's helpers (``qbook.growing_degree``) and its stored runs.

* the resampled 1 % degree equals the closed form of the chapter's
  proposition, ``⌈log η / log λ⌉ − 1``, at several loads and tolerances;
* the one-neighbour limit is the supermarket model's ``Σ λ^(2^i − 2)``
  (summed here independently of the library's recursion);
* the crossing degree interpolates log-excess linearly in ``d`` and brackets
  by the intervals; ``None`` where the grid ends first;
* the stored runs hold every cell of the design.
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
    assert all(len(c["R"]) == f["replications"] for c in f["cells"])
    assert {(c["degree"], c["lam"]) for c in data["closures"]} == {(d, l) for d in degs for l in (0.7, 0.9, 0.95)}
