"""Two kinds of test: the library's and the book's.

The library's tests need ``qlib`` and its pinned dependencies only: they pass
from an installed wheel, outside the repository (``tests/test_wheel.py`` runs
them so). The book's tests need the repository: its chapters, its support
package ``qbook``, the results stored in ``benchmarks/``, the reference page
and the source tree. They are the files named in ``BOOK`` below, plus every
file that imports ``qbook`` or ``benchmarks``; they carry the ``book`` marker,
and where ``qbook`` cannot be imported (an installed wheel) or
``QLIB_LIBRARY_ONLY`` is set they are not collected. ``tests/test_layout.py`` checks that no other file reads the
repository.
"""
import importlib.util
import os
import re
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

#: the book's tests that import neither qbook nor benchmarks but read the repository
BOOK = frozenset({
    "test_notebooks.py", "test_prose_numbers.py", "test_chapter_cells.py", "test_chapter_shape.py",
    "test_built_html.py", "test_ledger.py", "test_docstrings.py", "test_layout.py",
    "test_wheel.py", "test_star_closure.py", "test_stored_chain_versions.py", "test_typecheck.py",
    "test_exercises.py", "test_benchmarks_smoke.py", "test_notation.py",
})
_IMPORTS_BOOK = re.compile(r"^\s*(from|import)\s+(qbook|benchmarks)\b", re.M)


def is_book_test(path: Path) -> bool:
    """A test file of the book (needs the repository), not of the library."""
    return path.name in BOOK or bool(_IMPORTS_BOOK.search(path.read_text(encoding="utf8")))


def pytest_configure(config):
    config.addinivalue_line("markers", "book: a test of the book (needs the repository, not only qlib)")


def pytest_ignore_collect(collection_path, config):
    p = Path(collection_path)
    if p.suffix == ".py" and p.name.startswith("test_") and p.parent == HERE:
        library_only = os.environ.get("QLIB_LIBRARY_ONLY") or importlib.util.find_spec("qbook") is None
        return True if (library_only and is_book_test(p)) else None
    return None


#: the slowest test files, slowest first, with their CPU seconds (measured one process at a
#: time on the 2-core machine; test_simulate_jsq_se.py, test_graphs.py, test_uniformized.py and
#: test_resampled_fast.py each hold one test of a minute or more). Collection puts them first,
#: and `pytest -n 2 --dist loadscope --no-loadscope-reorder` (`make test`, CI) hands whole files to
#: the two workers in this order: the longest start first and the short ones fill in at the end,
#: so both workers finish together. (xdist's default reorder, by number of tests per file, sends
#: these files last.) Only the order depends on this table.
SLOW_FIRST = {
    "test_heavy_traffic.py": 114, "test_benchmarks_smoke.py": 110, "test_simulate_jsq_se.py": 82,
    "test_graphs.py": 75, "test_resampled_fast.py": 56, "test_uniformized.py": 40,
    "test_simulate.py": 27, "test_layout.py": 19, "test_wheel.py": 12,
    "test_book_doctests.py": 17, "test_doctests.py": 14, "test_stats.py": 13,
    "test_ht_part3_helpers.py": 11, "test_exact_converge.py": 11, "test_result_shape.py": 11,
    "test_occupancy_chain_adaptive.py": 9, "test_ring_window_reuse.py": 9, "test_sweep.py": 9,
    "test_typecheck.py": 8, "test_batch_coverage.py": 7, "test_ou_stationary.py": 7,
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.parent == HERE and is_book_test(item.path):
            item.add_marker(pytest.mark.book)
    # stable: the files in SLOW_FIRST first (slowest first), the rest in collection order
    items.sort(key=lambda item: -SLOW_FIRST.get(item.path.name, 0))
