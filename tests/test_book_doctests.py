"""The Examples sections of the book's support package ``qbook`` run as doctests,
as ``tests/test_doctests.py`` runs qlib's."""
import pkgutil

import pytest
from test_doctests import _tests, run_example

import qbook

MODULES = sorted({"qbook"} | {m.name for m in pkgutil.walk_packages(qbook.__path__, "qbook.")})
CASES = [(m, t.name) for m in MODULES for t in _tests(m)]


@pytest.mark.parametrize("module,name", CASES, ids=[n for _, n in CASES])
def test_docstring_example(module, name):
    run_example(module, name)
