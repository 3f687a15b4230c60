"""``==`` on every result type: fields compared, arrays element by element, never the
dataclass' tuple comparison, which raises on an array field ("truth value ... ambiguous")."""
import ast
import dataclasses
import importlib
from pathlib import Path

import numpy as np
import pytest

import qlib
from qlib.stats._results import _fields_equal

PKG = Path(qlib.__path__[0])          # the imported package: the checkout's or the wheel's
#: dataclasses with array fields that are no results (their == is not asked for here)
NOT_RESULTS = {"qlib.graphs.Graph", "qlib.sim.service.ServiceLaw"}
ARRAYISH = ("ndarray", "dict", "Mapping", "ArrayLike", "np.", "list", "Sequence")


def _dataclasses():
    for f in sorted(PKG.rglob("*.py")):
        parts = f.relative_to(PKG).with_suffix("").parts
        mod = ".".join(("qlib",) + (parts[:-1] if parts[-1] == "__init__" else parts))
        for node in ast.parse(f.read_text(encoding="utf8")).body:
            if isinstance(node, ast.ClassDef) and any("dataclass" in ast.unparse(d) for d in node.decorator_list):
                yield mod, node.name


CLASSES = sorted(set(_dataclasses()))


def test_the_scan_finds_the_results():
    names = {c for _, c in CLASSES}
    assert {"StationaryJSQ", "SimulationResult", "PairResult", "Refined", "FluidSolution",
            "BruteForceJSQ", "SweepRun"} <= names


@pytest.mark.parametrize("mod,name", CLASSES, ids=[f"{m}.{c}" for m, c in CLASSES])
def test_array_fields_compare_by_field(mod, name):
    cls = getattr(importlib.import_module(mod), name)
    if f"{mod}.{name}" in NOT_RESULTS or not dataclasses.is_dataclass(cls):
        pytest.skip("not a result")
    types = " ".join(str(f.type) for f in dataclasses.fields(cls))
    if not any(s in types for s in ARRAYISH):
        pytest.skip("no array field: the dataclass' == is fine")
    assert cls.__eq__ is _fields_equal, f"{mod}.{name}: == would raise on its array fields"


def test_equal_and_unequal_results():
    from qlib import DegreeDistribution as D
    from qlib.halfin_whitt import stationary_jsq
    from qlib.halfin_whitt.brute import brute_force_jsq
    from qlib.meanfield import fluid, refined

    s = stationary_jsq(50, 1.0)
    assert s == s and s == dataclasses.replace(s) and not s == dataclasses.replace(s, n=51)
    b = brute_force_jsq(9, 1.0, 3)
    assert b == brute_force_jsq(9, 1.0, 3)
    r = refined(0.9, D.point(2))
    assert r == refined(0.9, D.point(2)) and r != refined(0.8, D.point(2))
    t = np.linspace(0, 1, 5)
    sol = fluid.solve(0.9, D.point(2), [1.0], t)
    assert sol == fluid.solve(0.9, D.point(2), [1.0], t) and sol != fluid.solve(0.8, D.point(2), [1.0], t)
    assert (s == 1) is False
