"""The shape of the library: a package tree without import cycles.

* every module's imports of other qlib modules (module level and inside
  functions, read with ``ast``) form a graph without cycles, and each module
  imports cleanly on its own in a fresh process (forked from one that imported
  only the third-party packages);
* no package imports (lazily or not) from a package on a higher floor, the
  floors being the order of the packages on chapters/reference.md;
* no module is much past 600 lines, and each says its one idea in its
  docstring's first line;
* the flat paths of 0.1 (removed in 0.2) stay gone: no module of that name, and
  nothing imports one;
* the library stands alone: no module's code names ``__file__``, a parent
  folder, ``benchmarks`` or the book's package ``qbook``, and every module
  imports with the repository off the path, opening no file of it;
* the tests that need the repository are marked as the book's (conftest.py).
"""
import ast
import importlib
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import qlib

ROOT = Path(qlib.__file__).resolve().parent
OLD = ("heavy_traffic", "ou_stationary", "tasks", "finite_n", "fluid", "degrees", "cavity",
       "service", "simulate", "_general", "_compat")   # the flat modules of 0.1
SHIMS = set(OLD)


def modules():
    """Every module of the tree (private ones included)."""
    out = {"qlib": ROOT / "__init__.py"}
    for m in pkgutil.walk_packages(qlib.__path__, "qlib."):
        rel = m.name.removeprefix("qlib.").replace(".", "/")
        path = ROOT / rel / "__init__.py" if m.ispkg else ROOT / f"{rel}.py"
        out[m.name] = path
    return out


def imports_of(name, path, known):
    """The qlib modules that ``name`` imports (at any depth of its code); the
    imports under ``if TYPE_CHECKING:`` name types for annotations only and
    never run, so they are no dependency."""
    tree = ast.parse(path.read_text())
    pkg = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    typing_only = {id(n) for node in ast.walk(tree)
                   if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
                   for stmt in node.body for n in ast.walk(stmt)}
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = pkg.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                       for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in known:
                t = t.rpartition(".")[0]
            # importing a package's own submodules from its __init__ is the
            # re-export, not a dependency of the floors below on it
            if t and t != name and not (t == "qlib" and name != "qlib"):
                found.add(t)
    return found


def test_no_import_cycle():
    mods = modules()
    graph = {m: imports_of(m, p, mods) for m, p in mods.items()}
    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for d in sorted(graph[m]):
            if state.get(d) == "open":
                cycle = stack[stack.index(d):] + [d]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if d not in state:
                visit(d)
        stack.pop()
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m)


def test_the_check_finds_a_cycle(tmp_path):
    # the walk above would see a cycle: a -> b -> a
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("from qlib.b import x\n")
    b.write_text("def f():\n    from qlib.a import y\n")
    known = {"qlib.a": a, "qlib.b": b}
    assert imports_of("qlib.a", a, known) == {"qlib.b"}
    assert imports_of("qlib.b", b, known) == {"qlib.a"}


def test_a_type_checking_import_is_no_dependency(tmp_path):
    a = tmp_path / "a.py"
    a.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from qlib.b import X\n"
                 "from qlib.c import y\n")
    assert imports_of("qlib.a", a, {"qlib.a", "qlib.b", "qlib.c"}) == {"qlib.c"}


#: one fresh interpreter imports the third-party packages qlib uses, then forks a child per
#: qlib module that imports that module alone (no other qlib module imported before it): the
#: same check as a fresh interpreter per module, without importing numpy, scipy and numba
#: a hundred times. A child's failure is its traceback on stdout, one line per module.
FORK_IMPORTS = r"""
import json, os, sys, traceback
import numpy, numba, numba.core, numba.extending
import scipy, scipy.linalg, scipy.sparse, scipy.sparse.csgraph, scipy.sparse.linalg
assert not [m for m in sys.modules if m == "qlib" or m.startswith("qlib.")]
for name in sys.argv[1:]:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            __import__(name)
            msg = ""
        except BaseException:
            msg = traceback.format_exc()[-2000:]
        os.write(w, msg.encode())
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        msg = f.read().decode()
    _, status = os.waitpid(pid, 0)
    print(json.dumps([name, msg or ("" if status == 0 else f"exit status {status}")]), flush=True)
"""


@pytest.fixture(scope="module")
def imported_alone():
    names = sorted(modules())
    out = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", FORK_IMPORTS,
                          *names], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    import json
    result = dict(json.loads(line) for line in out.stdout.splitlines())
    assert sorted(result) == names
    return result


@pytest.mark.parametrize("name", sorted(modules()))
def test_module_imports_alone(name, imported_alone):
    assert imported_alone[name] == "", imported_alone[name]


@pytest.mark.parametrize("name", sorted(modules()))
def test_module_is_small_and_says_its_idea(name):
    path = modules()[name]
    lines = path.read_text().count("\n")
    assert lines <= 650, f"{name} has {lines} lines: split it (about 600 at most)"
    doc = ast.get_docstring(ast.parse(path.read_text()))
    assert doc and doc.splitlines()[0].strip(), f"{name}: the docstring's first line says its idea"


@pytest.mark.parametrize("old", OLD)
def test_old_flat_path_is_gone(old):
    assert not (ROOT / f"{old}.py").exists()
    if old != "simulate":   # qlib.simulate is the function
        assert not hasattr(qlib, old)
    # (that it does not import is checked in a clean environment by test_wheel.py: here an
    # editable install of another checkout may still serve the name)


def test_new_modules_do_not_import_old_paths():
    mods = modules()
    for name, path in mods.items():
        bad = {m for m in imports_of(name, path, set(mods) | {f"qlib.{s}" for s in SHIMS})
               if m.removeprefix("qlib.") in SHIMS}
        assert not bad, f"{name} imports the old path(s) {sorted(bad)}"


# ---------------------------------------------------------------- floors ----
REFERENCE = ROOT.parent / "chapters" / "reference.md"


def floors():
    """Package -> floor, read from the reference page: its ``## `qlib.X` ``
    sections after the package's own list the packages lowest floor first;
    private top-level modules (``qlib._validate``) are the floor below them
    all, and ``qlib`` itself (the re-exports) the top."""
    import re
    order = re.findall(r"^## `(qlib\.\w+)`", REFERENCE.read_text(), flags=re.M)
    out = {p: k + 1 for k, p in enumerate(order)}
    out["qlib"] = len(order) + 1
    return out


def package_of(module):
    parts = module.split(".")
    return module if len(parts) == 1 else ".".join(parts[:2])


def upward_imports(mods, fl):
    """Every import (module level or inside a function) of a module of a
    package from a package on a higher floor: ``(module, imported)``."""
    bad = []
    for m, p in mods.items():
        a = package_of(m)
        fa = 0 if a.startswith("qlib._") else fl.get(a)
        for d in imports_of(m, p, mods):
            b = package_of(d)
            fb = 0 if b.startswith("qlib._") else fl.get(b)
            if a != b and fa is not None and fb is not None and fb > fa:
                bad.append((m, d))
    return bad


def test_every_package_has_a_floor_on_the_reference_page():
    fl = floors()
    pkgs = {package_of(m) for m in modules()} - {"qlib"}
    missing = {p for p in pkgs if not p.startswith("qlib._")} - set(fl)
    assert not missing, f"packages missing from chapters/reference.md's floor order: {sorted(missing)}"


def test_no_package_imports_a_higher_floor():
    bad = upward_imports(modules(), floors())
    assert not bad, "imports from a higher floor (chapters/reference.md's order): " + ", ".join(
        f"{m} -> {d}" for m, d in bad)


def test_the_floor_check_finds_a_lazy_upward_import(tmp_path):
    # qlib.stats is the lowest floor: a function in it importing qlib.sim
    # (a higher one) is an upward import even though it is lazy
    low, high = tmp_path / "low.py", tmp_path / "high.py"
    low.write_text("def f():\n    from qlib.sim.high import g\n")
    high.write_text("from qlib.stats.low import f\n")
    known = {"qlib.stats.low": low, "qlib.sim.high": high}
    assert upward_imports(known, floors()) == [("qlib.stats.low", "qlib.sim.high")]


# ------------------------------------------------- the library stands alone ----
REPO = ROOT.parent
_REPO_READ = re.compile(r"__file__|parents\[|\bbenchmarks\s*/|[\"']benchmarks[\"']|\bqbook\b")


def repo_reads(path):
    """Lines of a qlib module's code (docstrings and comments aside) that reach for a
    file of the repository or for the book's support package."""
    tree = ast.parse(path.read_text())
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and id(node) in docs:
            continue
        if isinstance(node, (ast.Name, ast.Attribute, ast.Constant, ast.Subscript, ast.ImportFrom, ast.Import)):
            src = ast.unparse(node)
            if _REPO_READ.search(src):
                out.append((node.lineno, src[:80]))
    return sorted(set(out))


def test_the_repo_read_scan_finds_one(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('"""Reads benchmarks/x.json (a docstring may say so)."""\nimport pathlib\n'
                   'P = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "x.json"\n'
                   'from qbook import recorded\n')
    found = repo_reads(bad)
    assert {ln for ln, _ in found} == {3, 4}, found


@pytest.mark.parametrize("name", sorted(modules()))
def test_no_module_reads_the_repository(name):
    found = repo_reads(modules()[name])
    assert not found, f"{name} reaches outside the package (qbook, benchmarks/, __file__): {found}"


IMPORT_ALONE = r"""
import importlib, pkgutil, sys
repo = sys.argv[1]
sys.path[:] = [p for p in sys.path if p.rstrip("/") != repo]   # the repository root is not on the path

class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("qbook", "benchmarks", "tools", "tests"):
            raise ImportError(f"qlib imported {name}, a part of the repository")

sys.meta_path.insert(0, Refuse())
reads = []
def audit(event, args):
    # a file of the repository other than qlib's own and the environment's (.venv)
    if event == "open" and isinstance(args[0], str) and args[0].startswith(repo + "/") \
            and args[0][len(repo) + 1:].split("/")[0] not in ("qlib", ".venv"):
        reads.append(args[0])
sys.addaudithook(audit)
import qlib
mods = ["qlib"] + [m.name for m in pkgutil.walk_packages(qlib.__path__, "qlib.")
                   if not m.name.startswith("qlib.sweep")]   # the optional extra
for m in mods:
    importlib.import_module(m)
assert not reads, reads
print(len(mods))
"""


def test_every_module_imports_without_the_repository(tmp_path):
    # qlib through a link of its own: neither the repository root nor qbook is reachable
    (tmp_path / "qlib").symlink_to(ROOT, target_is_directory=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-c", IMPORT_ALONE, str(REPO)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert int(out.stdout) > 40


def test_only_the_book_tests_read_the_repository():
    from conftest import is_book_test
    here = Path(__file__).resolve().parent
    reach = re.compile(r"parents\[|ROOT\b|[\"'/]chapters[\"'/]|[\"']benchmarks[\"']|\bqbook\b")
    bad = [p.name for p in sorted(here.glob("test_*.py"))
           if not is_book_test(p) and reach.search(p.read_text())]
    assert not bad, f"library tests that read the repository (name them in conftest.BOOK): {bad}"


def test_no_name_shadows_a_module():
    # `qlib.stats.x` is the module x, never a function of the same name re-exported over it
    bad = []
    for name in sorted(modules()):
        parent, _, leaf = name.rpartition(".")
        if parent and not leaf.startswith("_"):
            mod = importlib.import_module(name)
            if getattr(importlib.import_module(parent), leaf) is not mod:
                bad.append(name)
    assert not bad, f"a public name hides its module: {bad}"
