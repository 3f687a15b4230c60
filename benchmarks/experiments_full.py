"""Run the two Part I experiment chapters with ``FULL = True``.

``chapters/experiments.md`` (FULL: 20 replications per cell instead of 10,
averaging windows twice as long, so the families of checks get more power) and ``chapters/bounded_resampling.md``
(FULL: 10 replications per cell, averaging windows five times as long,
``n = 10^6`` added to the n-scan) are converted to scripts with jupytext, their ``FULL = False``
line is switched on, and they are executed in turn with the chapter
directory as working directory; every ``assert`` of the chapter still
applies.  The CPU time (user + sys of the child) of each is printed.  Expect
several minutes of CPU per chapter.

Usage: ``python benchmarks/experiments_full.py [experiments|bounded_resampling]``
(default: both).  Exits non-zero if a chapter fails.
"""
from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ("experiments", "bounded_resampling")


def run(stem):
    src = ROOT / "chapters" / f"{stem}.md"
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / f"{stem}_full.py"
        subprocess.run([sys.executable, "-m", "jupytext", "--quiet", "--to", "py:percent",
                        "-o", str(script), str(src)], check=True)
        text = script.read_text()
        if "FULL = False" not in text:
            raise RuntimeError(f"{src} has no 'FULL = False' switch")
        script.write_text(text.replace("FULL = False", "FULL = True", 1))
        env = dict(os.environ, MPLBACKEND="Agg")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        w0 = time.perf_counter()
        rc = subprocess.run([sys.executable, str(script)], cwd=ROOT / "chapters", env=env).returncode
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(f"{stem}: exit {rc}, CPU {cpu:.0f} s, wall {time.perf_counter() - w0:.0f} s", flush=True)
    return rc


def main(argv):
    stems = argv or list(CHAPTERS)
    bad = [s for s in stems if s not in CHAPTERS]
    if bad:
        raise SystemExit(f"unknown chapter(s) {bad}; choose from {CHAPTERS}")
    return max(run(s) for s in stems)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
