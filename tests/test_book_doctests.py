"""The Examples sections of the book's support package ``qbook`` run as doctests
(``tests/test_doctests.py`` runs qlib's)."""
import doctest
import importlib
import pkgutil
import warnings

import pytest

import qbook

MODULES = sorted({"qbook"} | {m.name for m in pkgutil.walk_packages(qbook.__path__, "qbook.")})


def _tests(name):
    mod = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    return [t for t in finder.find(mod, name) if t.examples
            and (t.name == name or t.name.startswith(name + "."))]


CASES = [(m, t.name) for m in MODULES for t in _tests(m)]


@pytest.mark.parametrize("module,name", CASES, ids=[n for _, n in CASES])
def test_docstring_example(module, name):
    (test,) = [t for t in _tests(module) if t.name == name]
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        runner.run(test)
    res = runner.summarize(verbose=False)
    assert res.failed == 0, f"{name}: {res.failed} of {res.attempted} examples failed"
