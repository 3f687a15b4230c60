"""Every content chapter has the shape a reader can follow.

It opens with its question and answer (an admonition near the top), closes
with "What we learned", has at least two numbered figures, stays within about
600 source lines (not counting its model to copy and its exercises), and spends at most about a fifth of its main text on the
checking machinery (counted by ``tools/checking_share.py``; the closing
"How these numbers were checked" section is where that machinery lives).
"""
import re
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from checking_share import share  # noqa: E402
from test_exercises import CELL, is_model_cell  # noqa: E402

toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
CONTENT = [c["file"] for p in toc["parts"] if p["caption"].startswith("Part")
           for c in p["chapters"]]
# the validation appendix is about checking; it still reads as an argument
SHAPED = CONTENT + ["chapters/how_we_check", "chapters/simulator_check",
                    "chapters/solver_check", "chapters/performance"]
MAX_LINES = 640      # "about 600"
MAX_SHARE = 0.25     # "about a fifth", with the counter's coarseness (whole paragraphs)


def argument(text):
    """The chapter without its reader's parts: the model to copy (from its heading to the
    end of its cell) and the closing exercises (tests/test_exercises.py checks both)."""
    text = re.split(r"^## Exercises\s*$", text, flags=re.M)[0]
    cell = next((m for m in CELL.finditer(text) if is_model_cell(m.group(1))), None)
    if cell is None:
        return text
    head = text.rfind("\n## A model to copy", 0, cell.start())
    return text[:head + 1 if head >= 0 else cell.start()].rstrip("\n") + "\n" + text[cell.end():].lstrip("\n")


@pytest.mark.parametrize("chapter", SHAPED)
def test_opens_with_answer_and_closes_with_what_we_learned(chapter):
    text = (ROOT / f"{chapter}.md").read_text()
    head = text.splitlines()[:45]
    assert any(line.startswith("```{admonition}") or line.startswith(":::{admonition}")
               for line in head), f"{chapter}: no question-and-answer admonition at the top"
    assert "\n## What we learned" in text, f"{chapter}: no 'What we learned' section"


@pytest.mark.parametrize("chapter", SHAPED)
def test_length_and_figures(chapter):
    text = (ROOT / f"{chapter}.md").read_text()
    # a glued verdict on its own line (and the blank line that sets it apart) is a
    # check's output, like the checks table, not the argument's length
    n = len(re.sub(r"\n\n[ \t]*\{glue:text\}`[\w]+-check-[\w-]+`[ \t]*(?=\n)", "", argument(text)).splitlines())
    assert n <= MAX_LINES, f"{chapter}: {n} source lines"
    figs = {line.split("fig-", 1)[1].strip() for line in text.splitlines()
            if line.strip().startswith("name: fig-")}
    assert len(figs) >= 2, f"{chapter}: {len(figs)} figures"


@pytest.mark.parametrize("chapter", CONTENT)
def test_checking_prose_share(chapter):
    main, _ = share(ROOT / f"{chapter}.md")
    assert main <= MAX_SHARE, f"{chapter}: {main:.0%} of the main text is about checking"
