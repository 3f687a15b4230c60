"""The Examples sections of qlib's docstrings run as doctests (part of ``make test``).

Every module of the tree is searched; an example that prints something else than
its docstring says fails here. ``RuntimeWarning`` s of tiny example runs (short
windows) are not the examples' point and are ignored.
"""
import doctest
import importlib
import pkgutil
import warnings

import pytest

import qlib

MODULES = sorted({"qlib"} | {m.name for m in pkgutil.walk_packages(qlib.__path__, "qlib.")})


def _tests(name):
    mod = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    # only the objects defined in the module itself (re-exports are tested where defined)
    return [t for t in finder.find(mod, name) if t.examples
            and (t.name == name or t.name.startswith(name + "."))]


CASES = [(m, t.name) for m in MODULES for t in _tests(m)]


def run_example(module, name):
    """Run the doctest ``name`` of ``module``; fail on a wrong output."""
    (test,) = [t for t in _tests(module) if t.name == name]
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        runner.run(test)
    res = runner.summarize(verbose=False)
    assert res.failed == 0, f"{name}: {res.failed} of {res.attempted} examples failed"


def test_the_most_used_callables_have_examples():
    names = {n for _, n in CASES}
    assert len(names) >= 20, len(names)


@pytest.mark.parametrize("module,name", CASES, ids=[n for _, n in CASES])
def test_docstring_example(module, name):
    run_example(module, name)
