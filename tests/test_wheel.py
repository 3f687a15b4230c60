"""The package as others install it: a wheel, not the editable checkout.

Builds the wheel from a copy of the sources (``pip wheel --no-deps
--no-build-isolation``, no network), installs it with ``--no-deps`` into a
fresh virtual environment that sees the pinned dependencies of this one (a
``.pth`` line naming its site-packages) but not the source tree, and there, run
from a temporary directory without ``PYTHONPATH``, imports every module and
every name in every ``__all__``. A wheel that misses a subpackage, ``py.typed``
or the LICENSE fails here, although the editable install hides it.
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
    for f in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / f, src / f)
    # a copy, so that the build's build/ and egg-info never land in the checkout
    shutil.copytree(ROOT / "qlib", src / "qlib",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "--no-index", "-q", "-w", str(tmp / "dist"), str(src)],
                   check=True, cwd=tmp, env=env, timeout=120)
    (whl,) = (tmp / "dist").glob("qlib-*.whl")
    return tmp, whl, env


def test_wheel_holds_every_subpackage(wheel):
    _, whl, _ = wheel
    names = zipfile.ZipFile(whl).namelist()
    pkgs = {p.parent.relative_to(ROOT).as_posix() for p in (ROOT / "qlib").rglob("__init__.py")}
    for pkg in pkgs:
        assert f"{pkg}/__init__.py" in names, f"{pkg} missing from the wheel"
    assert "qlib/py.typed" in names
    assert any(n.endswith(".dist-info/LICENSE") or "/licenses/LICENSE" in n for n in names)
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(whl).read(meta).decode()
    for field in ("Version: 0.2.0", "Author: The qlib authors", "License: BSD-3-Clause",
                  "Classifier: ", "Description-Content-Type: text/markdown"):
        assert field in text, field


def test_wheel_imports_every_public_name(wheel):
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
    (Path(purelib) / "pinned_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    run = tmp / "run"
    run.mkdir()
    out = subprocess.run([str(py), "-c", CHECK, str(venv)], cwd=run, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    mods, names, version = out.stdout.split()
    assert int(mods) > 40 and int(names) > 100
    assert version == "0.2.0"
