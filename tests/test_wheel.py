"""The package as others install it: a wheel, not the editable checkout.

Builds the wheel from a copy of the files a clean clone holds (the tracked
files: ``pip wheel --no-deps --no-build-isolation``, no network), installs it
with ``--no-deps`` into a fresh virtual environment that sees the pinned
dependencies of this one (a ``.pth`` line naming its site-packages) but not the
source tree, and there, run from a temporary directory without ``PYTHONPATH``,
imports every module and every name in every ``__all__``, and runs the
library's own tests (the files of ``tests/`` that ``conftest.py`` does not
count as the book's) against the installed package. A wheel that misses a
subpackage, ``py.typed`` or the LICENSE, or that ships the book's ``qbook``,
fails here, although the editable install hides it.

The library's tests run in full with ``QLIB_WHEEL_TESTS=all`` (``tools/check_wheel.sh``);
by default a fast sample of them shows that they run from the wheel.
"""
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: the fast sample of the library's tests run from the wheel by default
SAMPLE = ("test_stats.py", "test_graphs.py", "test_verdict.py", "test_jackknife.py")
#: the sample's compile-only test, left out of it (see test_wheel_passes_the_library_tests)
WIDE = "test_kernels_run_64_bit_graphs_bit_for_bit"
#: the sample's coverage studies (hundreds of runs of batch means: what they check is the
#: statistics, the same source in the tree and in the wheel), left out of it too
STUDIES = ("test_stats.py::test_batch_means_coverage_mm1", "test_stats.py::test_batch_means_coverage_ar1")


def tracked():
    """The files of the repository a clean clone holds (all but the venv and the build
    outputs, where the checkout is no git repository)."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True,
                             text=True, timeout=60).stdout
        return [f for f in out.split("\0") if f and (ROOT / f).is_file()]
    except (OSError, subprocess.CalledProcessError):
        skip = {".venv", "_build", ".git", "__pycache__", "build"}
        return [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*")
                if p.is_file() and not skip & set(p.relative_to(ROOT).parts)]

CHECK = r"""
import importlib, pkgutil, sys
from pathlib import Path
import qlib
here = Path(qlib.__file__).resolve()
assert str(here).startswith(sys.argv[1]), f"qlib imported from {here}, not the wheel"
assert (here.parent / "py.typed").exists(), "py.typed is missing"
names = 0
mods = ["qlib"] + [m.name for m in pkgutil.walk_packages(qlib.__path__, "qlib.")]
for name in mods:
    mod = importlib.import_module(name)
    for attr in getattr(mod, "__all__", ()):
        getattr(mod, attr)
        names += 1
for old in ("heavy_traffic", "ou_stationary", "tasks", "finite_n", "fluid", "degrees",
            "cavity", "service", "simulate", "_general", "_compat"):   # the flat paths of 0.1
    try:
        importlib.import_module("qlib." + old)
    except ModuleNotFoundError:
        continue
    raise AssertionError(f"qlib.{old} still imports")
print(len(mods), names, qlib.__version__)
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    # a copy of what a clean clone holds (every tracked file), so that neither stray
    # files of the checkout nor the build's build/ and egg-info are involved
    for rel in tracked():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, src / rel)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    import setuptools
    assert int(setuptools.__version__.split(".")[0]) >= 77, (
        f"setuptools {setuptools.__version__}: the SPDX licence fields need >= 77 (pinned in "
        "requirements.txt; `make venv` installs it)")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "--no-index", "-q", "-w", str(tmp / "dist"), str(src)],
                   check=True, cwd=tmp, env=env, timeout=120)
    (whl,) = (tmp / "dist").glob("jsq_qlib-*.whl")
    return tmp, whl, env


def test_wheel_holds_every_subpackage(wheel):
    _, whl, _ = wheel
    names = zipfile.ZipFile(whl).namelist()
    pkgs = {p.parent.relative_to(ROOT).as_posix() for p in (ROOT / "qlib").rglob("__init__.py")}
    for pkg in pkgs:
        assert f"{pkg}/__init__.py" in names, f"{pkg} missing from the wheel"
    assert "qlib/py.typed" in names
    assert not [n for n in names if n.split("/")[0] in ("qbook", "benchmarks", "tests", "tools")], \
        "the wheel ships the book's files"
    assert any(n.endswith(".dist-info/LICENSE") or "/licenses/LICENSE" in n for n in names)
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(whl).read(meta).decode()
    for field in ("Name: jsq-qlib", "Version: 0.4.0", "Author: The qlib authors",
                  "License-Expression: BSD-3-Clause",
                  "Classifier: ", "Description-Content-Type: text/markdown"):
        assert field in text, field


@pytest.fixture(scope="module")
def installed(wheel):
    """A fresh virtual environment holding the wheel (and the pinned dependencies)."""
    tmp, whl, env = wheel
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=60)
    py = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps",
                    "--no-index", "-q", str(whl)], check=True, env=env, timeout=120)
    purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    # the pinned dependencies of this environment, appended after the wheel's site-packages
    # (a .pth line adds the directory only: its editable-install hooks are not run)
    deps = [sysconfig.get_paths()["purelib"]] + [p for p in sys.path if p.endswith("site-packages")]
    (Path(purelib) / "pinned_deps.pth").write_text("".join(p + "\n" for p in dict.fromkeys(deps)))
    return tmp, venv, py, env


def test_wheel_imports_every_public_name(installed):
    tmp, venv, py, env = installed
    run = tmp / "run"
    run.mkdir()
    out = subprocess.run([str(py), "-c", CHECK, str(venv)], cwd=run, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    mods, names, version = out.stdout.split()
    assert int(mods) > 40 and int(names) > 100
    assert version == "0.4.0"


def test_wheel_passes_the_library_tests(installed):
    from conftest import is_book_test
    tmp, venv, py, env = installed
    library = sorted(p.name for p in (ROOT / "tests").glob("test_*.py") if not is_book_test(p))
    assert len(library) > 40 and "test_stats.py" in library and "test_notebooks.py" not in library
    chosen = library if os.environ.get("QLIB_WHEEL_TESTS") == "all" else [f for f in SAMPLE if f in library]
    here = tmp / "library_tests"
    (here / "tests").mkdir(parents=True)
    # the chosen test files and every support file beside them (conftest.py, data/, the lists
    # the tests read), not the other test files
    support = [p.name for p in (ROOT / "tests").iterdir()
               if not p.name.startswith(("test_", "__pycache__", ".")) and p.suffix != ".pyc"]
    for f in chosen + support:
        if (ROOT / "tests" / f).is_dir():
            shutil.copytree(ROOT / "tests" / f, here / "tests" / f)
        else:
            shutil.copy(ROOT / "tests" / f, here / "tests" / f)
    # the sample leaves out the one test that only compiles every kernel again for int64
    # graphs (a minute of numba compilation) and the coverage studies of batch means (ten
    # seconds of CPU); they run in the tree, and in the full run here
    skip = [] if chosen == library else [
        a for t in (f"test_graphs.py::{WIDE}", *STUDIES) for a in ("--deselect", f"tests/{t}")]
    out = subprocess.run([str(py), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", *skip, "tests"],
                         cwd=here, env=env | {"QLIB_LIBRARY_ONLY": "1"},
                         capture_output=True, text=True, timeout=3600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert " passed" in out.stdout
