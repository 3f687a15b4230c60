"""The first call of a fresh install, and of a second process, where the installed
package's folder is read-only.

Builds the wheel from the committed tree (``git archive HEAD``), installs it into a fresh
virtual environment (the pinned dependencies of this one through a ``.pth`` line), makes
the installed ``qlib`` folder read-only, and then, twice, in two separate processes
without the right to write there (root without ``CAP_DAC_OVERRIDE``, through ``capsh``),
times the first ``simulate`` and the first ``simulate_jsq`` call and says where numba
keeps the compiled code. The first process compiles; the second must load the cache from
the user's cache folder (numba's fallback when the package's folder is not writable) and
take a small fraction of the first's time.

Usage: python tools/cold_start.py   (a few minutes; prints one line per process)
"""
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = r"""
import math, time, sys, os
t0 = time.perf_counter()
import qlib
from qlib.sim import kernel
t1 = time.perf_counter()
qlib.simulate(qlib.graphs.ring(100), 0.9, math.inf, t_end=5.0, seed=1)
t2 = time.perf_counter()
qlib.simulate_jsq(50, 1.0, t_end=5.0, seed=1)
t3 = time.perf_counter()
ks = [v for v in vars(kernel).values() if hasattr(v, "_cache")]
where = sorted({os.path.dirname(k._cache._cache_path) for k in ks})
print(f"import {t1 - t0:.2f} s, first simulate {t2 - t1:.2f} s, first simulate_jsq {t3 - t2:.2f} s; "
      f"numba cache in {where}; qlib at {os.path.dirname(qlib.__file__)}")
"""


def main():
    tmp = Path(tempfile.mkdtemp(prefix="qlib_cold_"))
    src = tmp / "src"
    src.mkdir()
    arch = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=arch, check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NUMBA_CACHE_DIR")}
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                    "-q", "-w", str(tmp / "dist"), str(src)], check=True, env=env)
    (whl,) = (tmp / "dist").glob("jsq_qlib-*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "--no-index",
                    "-q", str(whl)], check=True, env=env)
    purelib = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  check=True, capture_output=True, text=True).stdout.strip())
    deps = [sysconfig.get_paths()["purelib"]] + [p for p in sys.path if p.endswith("site-packages")]
    (purelib / "pinned_deps.pth").write_text("".join(p + "\n" for p in dict.fromkeys(deps)))
    subprocess.run(["chmod", "-R", "a-w", str(purelib / "qlib")], check=True)
    home = tmp / "home"
    home.mkdir()
    run = tmp / "run"
    run.mkdir()
    env |= {"HOME": str(home), "QLIB_VERBOSE": "1"}
    env.pop("XDG_CACHE_HOME", None)
    capsh = shutil.which("capsh")
    for k in (1, 2):
        cmd = [str(py), "-c", PROBE]
        if capsh and os.geteuid() == 0:      # root writes anywhere: drop the override
            cmd = [capsh, "--drop=cap_dac_override,cap_dac_read_search", "--", "-c",
                   " ".join(f"'{c}'" for c in cmd)]
        out = subprocess.run(cmd, cwd=run, env=env, capture_output=True, text=True, timeout=1800)
        print(f"process {k}: {out.stdout.strip()}")
        for line in out.stderr.strip().splitlines():
            print(f"  stderr: {line}")
    written = [p for p in (purelib / "qlib").rglob("*.nbi")]
    print(f"index files written into the installed package: {len(written)}")
    shutil.rmtree(tmp, ignore_errors=True) if os.environ.get("KEEP") is None else print(tmp)


if __name__ == "__main__":
    main()
