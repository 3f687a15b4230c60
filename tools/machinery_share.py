"""The machinery share of a chapter's rendered text.

Reads a chapter as the reader sees it, the built HTML page, and counts words:

* **all words**: the page's article without its code cells (inputs and
  printed outputs; glued values that sit in the prose are counted) and
  without the closing exercises;
* **machinery words**: the glued verdict lines (the pasted text that opens
  with a check mark ✓, a cross ✗ or the neutral "–"), the chapter's checks
  table (a table whose label ends in ``-checks``) and the check-design
  section ("How these numbers were checked", with its subsections).

The share is machinery words over all words. Usage::

    python tools/machinery_share.py _build/html/chapters/tails.html [...]

or a build folder (every ``chapters/*.html`` in it). ``tools/checking_share.py``
measures a related thing from the Markdown source (paragraphs that *name* the
checking machinery), without a build.
"""
from __future__ import annotations

import sys
from pathlib import Path

from bs4 import BeautifulSoup

DESIGN_IDS = ("how-these-numbers-were-checked",)
VERDICT_MARKS = ("✓", "✗", "–")


def words(node) -> int:
    return len(node.get_text(" ").split())


def share(html: str) -> tuple[int, int, dict]:
    """(machinery words, all words, parts) of one built chapter page."""
    soup = BeautifulSoup(html, "html.parser")
    art = soup.find("article") or soup
    for sec in art.find_all("section", id="exercises"):
        sec.decompose()
    for cell in art.select("div.cell"):
        cell.decompose()
    for junk in art.select("a.headerlink, script, style"):
        junk.decompose()
    total = words(art)
    design = [s for s in art.find_all("section") if s.get("id") in DESIGN_IDS]
    in_design = lambda el: any(el in s.descendants for s in design)
    parts = {"design": sum(words(s) for s in design)}
    parts["verdicts"] = sum(words(p) for p in art.select(".pasted-text")
                            if p.get_text().lstrip()[:1] in VERDICT_MARKS and not in_design(p))
    parts["checks table"] = sum(words(t) for t in art.find_all("table")
                                if (t.get("id") or "").endswith("-checks") and not in_design(t))
    return sum(parts.values()), total, parts


def main(argv: list[str]) -> int:
    files = []
    for a in argv:
        p = Path(a)
        files += sorted((p / "chapters").glob("*.html")) if p.is_dir() else [p]
    for f in files:
        m, t, parts = share(f.read_text())
        detail = ", ".join(f"{k} {v}" for k, v in parts.items())
        print(f"{f.stem:22s} {m / t:6.1%}  ({m} of {t} words: {detail})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
