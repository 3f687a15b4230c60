"""Static pre-check of the book's cross-references and glue keys (seconds, no execution).

Finds, without executing anything:

* ``{ref}``, ``{numref}``, ``{prf:ref}`` targets that no page defines
  (``(label)=``, ``:label:``, ``:name:``);
* ``{glue:...}`` keys, same-page or ``page.md::key``, that no ``glue("key", ...)``
  call or ``Checks("stem")``/``.add("name", ...)`` pair defines on that page.

A key built at run time (an f-string) cannot be seen here: such keys are listed
as "dynamic" prefixes and a reference matching one is accepted. The strict build
remains the authority; this is a fast first pass.

Usage: ``python tools/check_refs.py`` from the book's root; exit status 1 on a miss.
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "intro.md", *sorted((ROOT / "chapters").glob("*.md"))]

LABEL = re.compile(r"^\(([\w:-]+)\)=|^:label:\s*([\w:-]+)|^\s*:?name:\s*([\w:-]+)|^\$\$\s*\(([\w:-]+)\)", re.M)
REF = re.compile(r"\{(?:ref|numref|prf:ref|eq)\}`(?:[^`<]*<)?([\w:-]+)>?`")
GLUE_REF = re.compile(r"\{glue(?::\w+)?\}`([^`]+)`|```\{glue(?::\w+)?\}\s+(\S+)")
GLUE_DEF = re.compile(r"glue\(\s*[\"']([^\"']+)[\"']")
GLUE_DYN = re.compile(r"glue\(\s*f[\"']([^\"'{]*)\{")
CHECKS = re.compile(r"Checks\(\s*[\"']([\w-]+)[\"']")
CHECK_ADD = re.compile(r"\.add\(\s*[\"']([^\"']+)[\"']")
CHECK_ADD_DYN = re.compile(r"\.add\(\s*f[\"']([^\"'{]*)\{")


def page_keys(text):
    keys = set(GLUE_DEF.findall(text))
    dyn = set(GLUE_DYN.findall(text))
    for stem in CHECKS.findall(text):
        keys.add(f"{stem}-checks")
        keys |= {f"{stem}-check-{name}" for name in CHECK_ADD.findall(text)}
        dyn |= {f"{stem}-check-{p}" for p in CHECK_ADD_DYN.findall(text)}
    return keys, dyn


def main():
    labels, keys, dyn = set(), {}, {}
    texts = {p: p.read_text() for p in PAGES}
    for p, t in texts.items():
        labels |= {a or b or c or d for a, b, c, d in LABEL.findall(t)}
        keys[p.name], dyn[p.name] = page_keys(t)
    bad = []
    for p, t in texts.items():
        for lab in REF.findall(t):
            if lab not in labels:
                bad.append(f"{p.name}: unknown label {lab}")
        for a, b in GLUE_REF.findall(t):
            ref = (a or b).split(":")[0] if "::" not in (a or b) else (a or b)
            if "::" in ref:
                page, key = ref.split("::", 1)
                key = key.split(":")[0]
            else:
                page, key = p.name, ref
            if page not in keys:
                bad.append(f"{p.name}: glue into unknown page {page}")
            elif key not in keys[page] and not any(key.startswith(d) for d in dyn[page] if d):
                bad.append(f"{p.name}: glue key {page}::{key} is not defined there")
    print("\n".join(bad) or "check_refs: every label and glue key found")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
