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


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.parent == HERE and is_book_test(item.path):
            item.add_marker(pytest.mark.book)
