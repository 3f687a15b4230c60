"""Chapters read as arguments: short code cells, no helper written twice.

* no code cell has more than 25 lines of code (blank lines and the cell's
  option block do not count, comments do);
* no function is defined (``def name``) in two chapters: a helper two
  chapters need lives in ``qlib``.
"""
import re
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("*.md"))
CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.S | re.M)
MAX_LINES = 25


def code_lines(cell):
    """The counted lines of one cell's source (option block removed)."""
    lines = cell.splitlines()
    if lines and lines[0].strip() == "---":          # --- yaml options ---
        end = next((i for i, l in enumerate(lines[1:], 1) if l.strip() == "---"), 0)
        lines = lines[end + 1:]
    lines = [l for l in lines if not l.startswith(":") or l.startswith("::")]  # :tags: [...]
    return [l for l in lines if l.strip()]


def cells(path):
    return [code_lines(c) for c in CELL.findall(path.read_text())]


def test_counting_rules():
    cell = "---\ntags: [hide-input]\n---\n\nx = 1  # one\n\n# a comment counts\ny = 2\n"
    assert len(code_lines(cell)) == 3
    assert len(code_lines(":tags: [remove-cell]\nx = 1\n")) == 1


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_no_long_cell(path):
    long = [(k, len(c)) for k, c in enumerate(cells(path)) if len(c) > MAX_LINES]
    assert not long, f"{path.name}: cells (index, lines) over {MAX_LINES} lines: {long}"


def test_no_function_defined_in_two_chapters():
    where = defaultdict(set)
    for p in CHAPTERS:
        for c in cells(p):
            for name in re.findall(r"^\s*def (\w+)", "\n".join(c), re.M):
                where[name].add(p.stem)
    twins = {k: sorted(v) for k, v in where.items() if len(v) > 1}
    assert not twins, f"functions defined in more than one chapter (move them into qlib): {twins}"
