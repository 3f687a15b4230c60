"""Run every benchmark script in this folder (``make bench``)."""
import runpy
import sys
from pathlib import Path

here = Path(__file__).resolve().parent
scripts = sorted(p for p in here.glob("bench_*.py"))
if not scripts:
    sys.exit("no benchmarks found in benchmarks/")
for script in scripts:
    print(f"== {script.name}", flush=True)
    runpy.run_path(str(script), run_name="__main__")
