"""Rerun the simulations that chapters replay, and rewrite their recorded stores.

``chapters/simulator_check.md``, ``general_service.md``, ``experiments.md``,
``ht_waiting.md`` and ``static_graphs.md`` replay their slowest calls (simulations,
and exact chains of small graphs) from ``benchmarks/<chapter>_runs.pkl.gz``
(:class:`qbook.recorded.RecordedRuns`: each result under a key made of the call,
the store stamped with the simulator's code). With the environment variable
``FULL`` set, a chapter reruns every one of those calls and rewrites its store.
This script does that for each chapter in turn: the chapter is converted to a
script with jupytext and executed with ``FULL=1`` in the chapter directory, so
every ``assert`` of the chapter applies to the fresh runs; the CPU time (user +
sys of the child) and the wall time are printed. Run it after a change of the
simulator or of the statistics code (``tests/test_recorded.py`` fails on a
store whose stamp is not the code's), and commit the stores it rewrites.

Usage: ``python benchmarks/record_chapters.py [CHAPTER ...]`` (default: all
five). ``--smoke``: open every store and report its size, its number of calls
and whether its stamp is the code's, running nothing and writing nothing.
"""
from __future__ import annotations

import gzip
import os
import pickle
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ("simulator_check", "general_service", "experiments", "ht_waiting", "static_graphs")


def store(stem: str) -> Path:
    return ROOT / "benchmarks" / f"{stem}_runs.pkl.gz"


def inspect(stem: str) -> str:
    """One line on the chapter's store: size, calls, stamp current or not."""
    from qbook.recorded import code_version

    path = store(stem)
    if not path.exists():
        return f"{stem}: no store ({path.name})"
    with gzip.open(path, "rb") as f:
        data = pickle.load(f)
    stamp, files = data.pop("_code_version", None), tuple(data.pop("_code_files", ()))
    state = "current" if stamp == code_version(files) else "STALE (written by other simulator code)"
    return f"{stem}: {path.stat().st_size / 1e6:.1f} MB, {len(data)} calls, {state}"


def run(stem: str) -> int:
    src = ROOT / "chapters" / f"{stem}.md"
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / f"{stem}_record.py"
        subprocess.run([sys.executable, "-m", "jupytext", "--quiet", "--to", "py:percent",
                        "-o", str(script), str(src)], check=True)
        env = dict(os.environ, MPLBACKEND="Agg", FULL="1", PYTHONPATH=str(ROOT))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        w0 = time.perf_counter()
        # IPython runs the script: the chapters use its display machinery (glue)
        rc = subprocess.run([sys.executable, "-m", "IPython", "--no-banner", "--quick", str(script)],
                            cwd=ROOT / "chapters", env=env).returncode
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(f"{stem}: exit {rc}, CPU {cpu:.0f} s, wall {time.perf_counter() - w0:.0f} s", flush=True)
    if rc == 0:
        print(" ", inspect(stem), flush=True)
    return rc


def main(argv: list[str]) -> int:
    smoke = "--smoke" in argv
    names = [a for a in argv if not a.startswith("--")] or list(CHAPTERS)
    unknown = [n for n in names if n not in CHAPTERS]
    if unknown:
        raise SystemExit(f"unknown chapter(s) {unknown}; choose from {CHAPTERS}")
    if smoke:
        for stem in names:
            print(inspect(stem))
        return 0
    return max(run(stem) for stem in names)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
