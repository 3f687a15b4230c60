"""The ledger ("What is verified where") covers every statement, and points at real things.

* every ``prf:theorem`` / ``prf:proposition`` / ``prf:lemma`` /
  ``prf:corollary`` label in a toc chapter has a row in ``chapters/ledger.md``
  that references it with ``{prf:ref}`` (a statement of any of these kinds
  without a ``:label:`` is itself an error: it could not be cited);
* every reference in the ledger (``{prf:ref}``, ``{ref}``, ``{numref}``) names a
  label defined in some chapter (a ``(label)=`` target, a ``:label:`` option or
  a figure ``name:`` in cell metadata);
* every quoted measurement ``{glue:text}`chapter.md::key``` names a chapter
  that exists and a key that chapter glues.

The strict build also fails on a broken reference; this test says *which*
row is wrong, and it runs without building the book.
"""
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
LEDGER = ROOT / "chapters" / "ledger.md"

STATEMENT_KINDS = ("theorem", "proposition", "lemma", "corollary")
PRF_OPEN = re.compile(r"^(`{3,}|:{3,})\{prf:(" + "|".join(STATEMENT_KINDS) + r")\}")
LABEL_OPT = re.compile(r"^:label:\s*(\S+)")
TARGET = re.compile(r"^\(([^()\s]+)\)=\s*$", re.M)
ANY_LABEL_OPT = re.compile(r"^:label:\s*(\S+)", re.M)
FIG_NAME = re.compile(r"^\s+name:\s*(\S+)", re.M)
REF = re.compile(r"\{(prf:ref|ref|numref)\}`(?:[^`<]*<)?([^`>]+)>?`")
GLUE = re.compile(r"\{glue(?::\w+)?\}`([^`:]+\.md)::([^`:]+)(?::[^`]*)?`")


def toc_chapters():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = []

    def walk(entries):
        for entry in entries:
            if "file" in entry:
                files.append(ROOT / f"{entry['file']}.md")
            walk(entry.get("sections", []))

    for part in toc.get("parts", []):
        walk(part.get("chapters", []))
    return files


def statement_labels(text):
    """Labels of the prf:theorem / proposition / lemma / corollary blocks in a chapter."""
    labels, lines = [], text.splitlines()
    for i, line in enumerate(lines):
        if PRF_OPEN.match(line.strip()):
            for opt in lines[i + 1:i + 6]:
                m = LABEL_OPT.match(opt.strip())
                if m:
                    labels.append(m.group(1))
                    break
            else:
                raise AssertionError(f"unlabelled statement: {line.strip()!r}")
    return labels


def defined_labels(text):
    return set(TARGET.findall(text)) | set(ANY_LABEL_OPT.findall(text)) | set(FIG_NAME.findall(text))


FSTRING_GLUE = re.compile(r"glue\(\s*f([\"'])(.+?)\1")


def glues_key(text, key):
    """True if ``text`` glues ``key``: a literal ``glue("key", ...)`` or an
    f-string ``glue(f"prefix-{x}-...", ...)`` whose pattern matches the key
    (each replacement field matching one or more characters)."""
    if re.search(r"glue\(\s*[\"']" + re.escape(key) + r"[\"']", text):
        return True
    for _, template in FSTRING_GLUE.findall(text):
        parts = re.split(r"\{[^{}]*\}", template)
        if re.fullmatch(".+".join(re.escape(p) for p in parts), key):
            return True
    return False


def test_ledger_is_in_the_toc():
    assert LEDGER in toc_chapters(), "chapters/ledger.md must be listed in _toc.yml"


def test_every_statement_has_a_ledger_row():
    ledger = LEDGER.read_text()
    cited = {m.group(2) for m in REF.finditer(ledger) if m.group(1) == "prf:ref"}
    missing = []
    for path in toc_chapters():
        if path == LEDGER:
            continue
        for label in statement_labels(path.read_text()):
            if label not in cited:
                missing.append(f"{path.relative_to(ROOT)}: {label}")
    assert not missing, "statements without a ledger row:\n" + "\n".join(missing)


def test_every_ledger_reference_points_at_something():
    defined = set()
    for path in toc_chapters():
        defined |= defined_labels(path.read_text())
    ledger = LEDGER.read_text()
    broken = [f"{role} {label}" for role, label in REF.findall(ledger) if label not in defined]
    assert not broken, "ledger references to undefined labels:\n" + "\n".join(broken)


def test_every_quoted_measurement_is_glued():
    ledger = LEDGER.read_text()
    quotes = GLUE.findall(ledger)
    assert quotes, "the ledger quotes no measurement"
    broken = []
    for doc, key in quotes:
        path = LEDGER.parent / doc
        if not path.exists():
            broken.append(f"{doc}::{key} (no such chapter)")
        elif not glues_key(path.read_text(), key):
            broken.append(f"{doc}::{key} (key not glued there)")
    assert not broken, "ledger quotes that point at nothing:\n" + "\n".join(broken)


@pytest.mark.parametrize("text,expected", [
    ("```{prf:proposition} Title\n:label: prop-x\n\nbody\n```\n", ["prop-x"]),
    (":::{prf:theorem}\n:label: thm-y\n:::\n", ["thm-y"]),
    ("```{prf:lemma}\n:label: lem-z\n```\n", ["lem-z"]),
    ("````{prf:corollary} Title\n:label: cor-w\n````\n", ["cor-w"]),
    ("```{prf:definition}\n:label: def-v\n```\n", []),
    ("```{prf:proof}\nbody\n```\n", []),
])
def test_statement_label_parser(text, expected):
    assert statement_labels(text) == expected


@pytest.mark.parametrize("text,key,expected", [
    ('glue("a-b", 1)', "a-b", True),
    ('glue("a-b", 1)', "a-c", False),
    ("glue(f'exp-R-{name}-{n}', r)", "exp-R-ring-1500", True),
    ("glue(f'exp-R-{name}-{n}', r)", "exp-Q-ring-1500", False),
    ('glue(f"exp-{x:.0f}", r)', "exp-", False),
])
def test_glue_key_matcher(text, key, expected):
    assert glues_key(text, key) is expected


def test_unlabelled_statement_is_an_error():
    with pytest.raises(AssertionError, match="unlabelled"):
        statement_labels("```{prf:theorem}\nno label\n```\n")
