"""Execute the book's notebook chapters in parallel, into the build's cache.

``jupyter-book build`` executes chapters one after another while Sphinx reads
them (Sphinx's parallel reading is not an option: sphinx-proof's domain cannot
merge results from parallel readers). This script runs the same executions
beforehand, several at a time, and stores each executed notebook in the
jupyter-cache the build uses (``_build/.jupyter_cache``), keyed exactly as
myst-nb keys it (the notebook as myst-nb reads it: kernel and code-cell
sources). The build that follows then finds every chapter in the cache and
only renders it.

Nothing is decided here: a chapter that fails is reported and left out of the
cache, so the build executes it again and fails on it with myst-nb's own
error (``nb_execution_raise_on_error``). A chapter already in the cache is
skipped, so after a successful run the script costs a second or two.

Usage::

    python tools/execute_chapters.py [-j N] [BOOK_DIR]

``-j`` defaults to the number of CPUs.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import os
import sys
import time
from pathlib import Path

import yaml

# Longest first (the kernel CPU seconds of each chapter, measured with this
# script on the 2-core CI machine from a fresh clone, numba's cache empty, in the
# comments), so that the slowest chapters do not start last: with two at a time
# the run ends near max(total / 2, longest).
# The rest follow in table-of-contents order. Only the order depends on this list.
# simulator_check, general_service, experiments, ht_waiting and static_graphs
# replay their recorded runs (benchmarks/*_runs.pkl.gz); with FULL=1 they run
# them and take a minute or more each.
_SLOW_FIRST = (
    "ht_alternatives",   # 55
    "finite_n",          # 48 (more with FULL, solving its exact chains at λ = 0.9)
    "static_graphs",     # 46 (more with FULL, running its exact chains and cells)
    "ht_paths",          # 43
    "fluid_limit",       # 21
    "general_service",   # 20 (minutes with FULL, running its simulations)
    "tails",             # 16
    "ht_stationary",     # 16
    "ht_waiting",        # 13 (minutes with FULL)
    "best_degree",       # 12
    "simulator_check",   # 11 (minutes with FULL)
    "ht_diffusion",      # 11
    "equilibrium",       # 11
    "solver_check",      # about 10 (40 more with FULL, solving its n = 20 chain)
    "experiments",       # 7 (a minute with FULL)
)
#: the chapters that replay recorded runs, slowest first when FULL=1 makes them run
_RECORDED = ("simulator_check", "ht_waiting", "general_service", "static_graphs", "experiments")


def _toc_files(book: Path) -> list[Path]:
    toc = yaml.safe_load((book / "_toc.yml").read_text(encoding="utf8"))
    names = [toc["root"]]
    for part in toc.get("parts", [{"chapters": toc.get("chapters", [])}]):
        names += [ch["file"] for ch in part["chapters"]]
    return [book / f"{name}.md" for name in names]


def _md_config(book: Path):
    from myst_parser.config.main import MdParserConfig

    config = yaml.safe_load((book / "_config.yml").read_text(encoding="utf8"))
    extensions = config.get("parse", {}).get("myst_enable_extensions", [])
    return MdParserConfig(enable_extensions=set(extensions))


def _read(path: Path, md_config):
    """The notebook as myst-nb reads it, or None for a plain Markdown page."""
    from myst_nb.core.config import NbParserConfig
    from myst_nb.core.read import create_nb_reader

    text = path.read_text(encoding="utf8")
    reader = create_nb_reader(str(path), md_config, NbParserConfig(), text)
    if reader is None:
        return None, None
    return reader.read(text), reader.read_fmt


def _execute(path: str, book: str, timeout: int):
    """Run in a worker process: execute one chapter; return it, its wall time,
    the CPU time of its kernel (a child of this worker) and the error."""
    import resource

    from jupyter_cache.executors.utils import single_nb_execution

    def children_cpu() -> float:
        use = resource.getrusage(resource.RUSAGE_CHILDREN)
        return use.ru_utime + use.ru_stime

    cpu0 = children_cpu()

    md_config = _md_config(Path(book))
    notebook, _ = _read(Path(path), md_config)
    result = single_nb_execution(
        notebook,
        cwd=str(Path(path).parent),
        allow_errors=False,
        timeout=timeout,
        meta_override=True,
    )
    error = None if result.err is None else f"{type(result.err).__name__}: {result.err}"
    return notebook, result.time, children_cpu() - cpu0, error


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("book", nargs="?", default=".", type=Path)
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=int, default=600)
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")

    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    book = args.book.resolve()
    cache = get_cache(str(book / "_build" / ".jupyter_cache"))
    md_config = _md_config(book)
    todo = []
    for path in _toc_files(book):
        notebook, read_fmt = _read(path, md_config)
        if notebook is None:
            continue
        try:
            cache.match_cache_notebook(notebook)
            continue  # already executed with this source
        except KeyError:
            todo.append((path, read_fmt))
    order = _SLOW_FIRST
    if os.environ.get("FULL"):   # the recorded chapters run their simulations: minutes each
        order = _RECORDED + tuple(c for c in _SLOW_FIRST if c not in _RECORDED)
    rank = {name: i for i, name in enumerate(order)}
    todo.sort(key=lambda item: rank.get(item[0].stem, len(rank)))
    print(f"executing {len(todo)} chapter(s), {args.jobs} at a time", flush=True)

    start, failed, total_cpu = time.perf_counter(), [], 0.0
    with cf.ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(_execute, str(p), str(book), args.timeout): (p, fmt) for p, fmt in todo}
        for future in cf.as_completed(futures):
            path, read_fmt = futures[future]
            name = path.relative_to(book)
            try:
                notebook, seconds, cpu, error = future.result()
            except Exception as exc:  # the worker itself died
                notebook, seconds, cpu, error = None, float("nan"), float("nan"), repr(exc)
            total_cpu += cpu
            if error is not None:
                failed.append(str(name))
                print(f"  {name}: FAILED ({error.splitlines()[0][:200]}); "
                      "the build will execute it again and report the error", flush=True)
                continue
            # the cache is written from this process only (one SQLite writer)
            record = cache.add_nb_to_project(str(path), read_data=read_fmt)
            cache.cache_notebook_bundle(
                CacheBundleIn(notebook, record.uri, data={"execution_seconds": seconds}),
                check_validity=False,
                overwrite=True,
            )
            print(f"  {name}: {seconds:.0f} s (kernel CPU {cpu:.0f} s)", flush=True)
    print(f"executed in {time.perf_counter() - start:.0f} s (kernels' CPU {total_cpu:.0f} s)"
          + (f"; failed: {', '.join(failed)}" if failed else ""), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
