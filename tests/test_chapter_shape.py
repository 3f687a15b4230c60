"""Every content chapter reads as an argument a reader can follow.

The shape the book promises (STYLE.md, "A chapter readers can follow"), checked
on the source of every chapter of Parts I-III:

* it opens with its answer: an admonition before the first section heading;
* it closes with "What we learned" as its last section;
* it has at least two numbered figures (a ``name: fig-...`` target);
* it ends its checks in a numbered table (``{glue:md} <stem>-checks``), the
  verdicts of the chapter's ``qlib.stats.Checks``;
* it is at most about 600 source lines (650 counted).
"""
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 650


def content_chapters():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [c["file"] for p in toc["parts"] if p["caption"].startswith("Part")
            for c in p["chapters"]]


CHAPTERS = content_chapters()


def text(ch):
    return (ROOT / f"{ch}.md").read_text()


def sections(t):
    return re.findall(r"^## (.+)$", t, re.M)


def test_there_are_content_chapters():
    assert len(CHAPTERS) >= 15


@pytest.mark.parametrize("ch", CHAPTERS)
def test_opens_with_its_answer(ch):
    t = text(ch)
    first = re.search(r"^## ", t, re.M)
    head = t[: first.start()] if first else t
    assert re.search(r"^`{3,}\{admonition\}", head, re.M), \
        f"{ch}: no admonition (question and answer) before the first section"


@pytest.mark.parametrize("ch", CHAPTERS)
def test_closes_with_what_we_learned(ch):
    secs = sections(text(ch))
    assert secs and secs[-1].strip().lower().startswith("what we learned"), \
        f"{ch}: last section is {secs[-1] if secs else None!r}, not 'What we learned'"


@pytest.mark.parametrize("ch", CHAPTERS)
def test_two_numbered_figures(ch):
    figs = set(re.findall(r"^\s*:?name:\s*(fig-[\w-]+)", text(ch), re.M))
    assert len(figs) >= 2, f"{ch}: {len(figs)} numbered figure(s): {sorted(figs)}"


@pytest.mark.parametrize("ch", CHAPTERS)
def test_checks_table(ch):
    stem = ch.split("/")[-1]
    assert re.search(rf"\{{glue:md\}}\s+{stem}-checks", text(ch)), \
        f"{ch}: no Checks table ({{glue:md}} {stem}-checks)"


@pytest.mark.parametrize("ch", CHAPTERS)
def test_length(ch):
    n = text(ch).count("\n")
    assert n <= MAX_LINES, f"{ch}: {n} source lines (at most about 600)"
