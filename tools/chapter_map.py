"""What each chapter uses: the book's chapter-to-chapter references, read off the sources.

A chapter *uses* another when its text cites one of the other's labels with
``{ref}``, ``{numref}``, ``{prf:ref}`` or ``{eq}``, or links it with ``{doc}``.
A label belongs to the chapter that defines it: a ``(label)=`` target, a
``:label:`` option (statements, exercises, equations), a ``:name:`` option
(tables, figures) or a ``name:`` in a code cell's figure metadata.

The catalog pages (results, notation, ledger, API reference, bibliography)
quote every chapter; their citations are not uses, so they are left out as
citing pages. A use is *forward* when the chapter used comes later in the
reading order of ``_toc.yml`` than the chapter that uses it.

Usage, from the book's root::

    python tools/chapter_map.py            # one line per use: used -> user [forward]
    python tools/chapter_map.py --summary  # counts

The introduction draws its map with :func:`chapter_map`, so the picture is
recomputed from the sources at every build.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

CATALOGS = ("results", "notation", "ledger", "reference", "bibliography")
REF = re.compile(r"\{(?:ref|numref|prf:ref|eq)\}`(?:[^`<]*<)?([^`<>]+)>?`")
DOC = re.compile(r"\{doc\}`(?:[^`<]*<)?([^`<>]+)>?`")
LABELS = (re.compile(r"^\(([\w-]+)\)=", re.M), re.compile(r"^\s*:label:\s*([\w-]+)", re.M),
          re.compile(r"^\s*:?name:\s*([\w-]+)", re.M))


def reading_order(root: Path) -> list[tuple[str, list[str]]]:
    """The parts of ``_toc.yml`` as (caption, [file, ...]) in reading order."""
    toc = yaml.safe_load((Path(root) / "_toc.yml").read_text())
    parts = toc.get("parts") or [{"caption": "Chapters", "chapters": toc.get("chapters", [])}]
    return [(p["caption"], [c["file"] for c in p["chapters"]]) for p in parts]


def chapter_map(root: Path | str = ".") -> tuple[list[tuple[str, list[str]]], set[tuple[str, str, bool]]]:
    """The parts and the set of uses ``(used, user, forward)`` between distinct chapters.

    Examples
    --------
    >>> parts, uses = chapter_map(Path(__file__).resolve().parents[1])
    >>> all(a != b for a, b, _ in uses)
    True
    """
    root = Path(root)
    parts = reading_order(root)
    order = [f for _, files in parts for f in files]
    text = {f: (root / f"{f}.md").read_text() for f in order}
    owner = {}
    for f in order:
        for rx in LABELS:
            for lab in rx.findall(text[f]):
                owner.setdefault(lab, f)
    uses = set()
    for f in order:
        if f.split("/")[-1] in CATALOGS:
            continue
        cited = {owner[lab] for lab in REF.findall(text[f]) if lab in owner}
        cited |= {str((root / f).parent.joinpath(d).resolve().relative_to(root.resolve())).removesuffix(".md")
                  for d in DOC.findall(text[f])} & set(order)
        uses |= {(g, f, order.index(g) > order.index(f)) for g in cited if g != f}
    return parts, uses


def main(argv: list[str]) -> int:
    root = Path(__file__).resolve().parents[1]
    parts, uses = chapter_map(root)
    if "--summary" in argv:
        fwd = sum(1 for *_, w in uses if w)
        print(f"{len(uses)} uses between chapters, {fwd} forward, {len(uses) - fwd} backward")
        return 0
    for a, b, w in sorted(uses):
        print(f"{a} -> {b}{'  [forward]' if w else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
