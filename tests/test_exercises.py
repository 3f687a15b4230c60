"""Every science chapter gives the reader something to do.

Each of the chapters of Parts I–III (as listed in ``_toc.yml``):

* has, near its start, one **model to copy**: a code cell tagged
  ``model-to-copy``, at most 10 lines (counted as in
  ``tests/test_chapter_cells.py``: blank lines and the option block do not
  count), which imports nothing but public ``qlib`` (no private module, no
  chapter helper module that is moving to the book's own support code) and,
  for ``log`` and ``inf``, the standard library's ``math``, and
  which sits in the chapter's opening, before its second ``##`` section;
* ends with a section ``## Exercises`` holding at least two exercises in
  sphinx-exercise's gated form (``exercise-start``/``exercise-end``), labelled
  ``<chapter>-ex-<k>``, each with exactly one folded solution
  (``solution-start <label>`` with ``:class: dropdown``, then
  ``solution-end``) that ends with the line "**What it teaches:** ...";
* glues the numbers of its solutions under keys ``ex-<chapter>-...``, so that
  the keys stay unique in the book.

The book never sets ``hide_solutions`` (sphinx-exercise's gated directives
break with it); the solutions are folded by the ``dropdown`` class instead.
"""
import re
from pathlib import Path

import pytest
import yaml
from test_chapter_cells import code_lines  # the same counting rules

ROOT = Path(__file__).resolve().parents[1]
toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
SCIENCE = [c["file"] for p in toc["parts"] if p["caption"].startswith("Part")
           for c in p["chapters"]]
MAX_MODEL_LINES = 10
MIN_EXERCISES = 2
# chapter helper modules, leaving qlib for the book's support code
NOT_PUBLIC = ("qlib.meanfield.static_runs", "qlib.meanfield.one_or_all", "qlib.meanfield.stored_closures",
              "qlib.exact.closure_checks", "qlib.halfin_whitt.wait_runs",
              "qlib.halfin_whitt.diffusion_checks", "qlib.halfin_whitt.constants",
              "qlib.sim.audit", "qlib.sim.recorded")

CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.S | re.M)
FENCE = r"(?:`{3,}|:{3,})"          # the gated directives, in backtick or colon fences
EX_START = re.compile(rf"^{FENCE}\{{exercise-start\}}[^\n]*\n(.*?)^{FENCE}\s*$", re.S | re.M)
EX_END = re.compile(rf"^{FENCE}\{{exercise-end\}}", re.M)
SOL_START = re.compile(rf"^{FENCE}\{{solution-start\}}\s*(\S+)\s*\n(.*?)^{FENCE}\s*$", re.S | re.M)
SOLUTION = re.compile(rf"^{FENCE}\{{solution-start\}}\s*(\S+)[^\n]*\n(.*?)^{FENCE}\{{solution-end\}}", re.S | re.M)
IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w., ]+))", re.M)
GLUE_KEY = re.compile(r"glue\(\s*f?[\"']([^\"']*)[\"']")


def options(cell: str) -> str:
    """A cell's option block: the leading ``---`` YAML block or the leading ``:key:`` lines."""
    if cell.startswith("---\n"):
        return cell[4:cell.find("\n---", 3)]
    lines = cell.splitlines()
    return "\n".join(lines[:next((i for i, l in enumerate(lines) if not l.startswith(":")), len(lines))])


def is_model_cell(cell: str) -> bool:
    return bool(re.search(r"tags:\s*\[[^\]]*\bmodel-to-copy\b", options(cell)))


def stem(chapter: str) -> str:
    return Path(chapter).name


def text(chapter: str) -> str:
    return (ROOT / f"{chapter}.md").read_text()


def test_parts_hold_the_twenty_science_chapters():
    assert len(SCIENCE) == 20, SCIENCE


def test_no_hide_solutions():
    assert "hide_solutions" not in (ROOT / "_config.yml").read_text()


def test_gated_form_is_parsed():
    src = ("````{exercise-start}\n:label: x-ex-1\n````\nText.\n````{exercise-end}\n````\n\n"
           "````{solution-start} x-ex-1\n:class: dropdown\n````\nWhy.\n\n**What it teaches:** this.\n"
           "````{solution-end}\n````\n")
    assert [re.search(r":label:\s*(\S+)", b).group(1) for b in EX_START.findall(src)] == ["x-ex-1"]
    assert len(EX_END.findall(src)) == 1 and SOL_START.findall(src) == [("x-ex-1", ":class: dropdown\n")]
    assert [lab for lab, _ in SOLUTION.findall(src)] == ["x-ex-1"]


def test_counting_rules():
    cell = ":tags: [model-to-copy]\nimport qlib\n\nx = qlib.meanfield  # one\n"
    assert is_model_cell(cell) and len(code_lines(cell)) == 2
    assert not is_model_cell("import qlib\n# tags: [model-to-copy]\n")
    assert is_model_cell("---\ntags: [hide-input, model-to-copy]\n---\nx = 1\n")


@pytest.mark.parametrize("chapter", SCIENCE, ids=stem)
def test_model_to_copy(chapter):
    src = text(chapter)
    cells = [(m.start(), m.group(1)) for m in CELL.finditer(src) if is_model_cell(m.group(1))]
    assert len(cells) == 1, f"{chapter}: {len(cells)} cells tagged model-to-copy (want one)"
    start, cell = cells[0]
    lines = code_lines(cell)
    assert len(lines) <= MAX_MODEL_LINES, f"{chapter}: model cell has {len(lines)} lines"
    modules = [m for groups in IMPORT.findall("\n".join(lines)) for part in groups if part
               for m in (s.strip().split(" as ")[0] for s in part.split(","))]
    assert modules, f"{chapter}: the model cell imports nothing"
    for mod in modules:
        assert mod in ("qlib", "math") or mod.startswith("qlib."), f"{chapter}: model cell imports {mod}"
        assert not any(part.startswith("_") for part in mod.split(".")), f"{chapter}: private {mod}"
    body = "\n".join(lines)
    for bad in NOT_PUBLIC:
        assert bad not in body and f"import {bad.rsplit('.', 1)[1]}" not in body, \
            f"{chapter}: model cell uses {bad}, a chapter helper"
    headings = [m.start() for m in re.finditer(r"^## ", src, re.M)]
    assert len(headings) < 2 or start < headings[1], f"{chapter}: model cell not in the chapter's opening"


@pytest.mark.parametrize("chapter", SCIENCE, ids=stem)
def test_exercises(chapter):
    src, name = text(chapter), stem(chapter)
    sections = re.findall(r"^## (.*)$", src, re.M)
    assert sections and sections[-1].strip() == "Exercises", \
        f"{chapter}: the last section is {sections[-1] if sections else None!r}, not 'Exercises'"
    labels = [re.search(r"^:label:\s*(\S+)", body, re.M) for body in EX_START.findall(src)]
    assert all(labels), f"{chapter}: an exercise without a label"
    labels = [m.group(1) for m in labels]
    assert len(labels) >= MIN_EXERCISES, f"{chapter}: {len(labels)} exercises"
    assert len(set(labels)) == len(labels), f"{chapter}: repeated exercise labels {labels}"
    assert all(re.fullmatch(rf"{re.escape(name)}-ex-\d+", lab) for lab in labels), labels
    assert len(EX_END.findall(src)) == len(labels), f"{chapter}: exercise-start/-end unpaired"
    starts = SOL_START.findall(src)
    assert sorted(lab for lab, _ in starts) == sorted(labels), \
        f"{chapter}: solutions {[lab for lab, _ in starts]} for exercises {labels}"
    assert all(re.search(r"^:class:\s*dropdown\s*$", opts, re.M) for _, opts in starts), \
        f"{chapter}: a solution not folded (:class: dropdown)"
    solutions = SOLUTION.findall(src)
    assert len(solutions) == len(labels), f"{chapter}: solution-start/-end unpaired"
    for lab, body in solutions:
        prose = [l for l in body.strip().splitlines() if l.strip()]
        assert "**What it teaches:**" in "\n".join(prose[-4:]), f"{lab}: no closing 'What it teaches' line"
        bad = [k for k in GLUE_KEY.findall(body) if not k.startswith(f"ex-{name}-")]
        assert not bad, f"{lab}: glue keys {bad} lack the prefix ex-{name}-"
