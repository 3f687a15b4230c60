"""Glued verdicts that sit inside sentences, and how to put each on its own line.

A *verdict* is the glued outcome of a check, ``{glue:text}`<chapter>-check-<name>```
(it renders as one line: "✓ claim: error ... ≤ tolerance ..."). The house
style keeps each verdict on its own line, beside the finding it checks, not
inside the sentence that states the finding.

Usage, from the book's root::

    python tools/verdicts.py chapters/*.md          # report verdicts inside sentences
    python tools/verdicts.py --fix chapters/foo.md  # move the simple ones out

``--fix`` rewrites only paragraphs where the verdict can leave the sentence by
a fixed rule (a parenthesis that holds only the verdict; a colon, comma or
space before it at the end of a clause), keeps every other line of the
paragraph as it was, and puts the verdict in a paragraph of its own right
after (indented under a list item when the paragraph is one). Paragraphs it
cannot rewrite by rule are reported and left alone.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

V = r"\{glue:text\}`[\w]+-check-[\w-]+`"
VERDICT = re.compile(V)
# rules, tried in order: (pattern around one verdict, replacement of the sentence's text)
RULES = [
    (re.compile(r"^\s*(" + V + r")[;,.]?[ \t]*\n?"), ""),                  # paragraph opens with V
    (re.compile(r"[ \t]*\((" + V + r")\)"), ""),                         # "… (V)"
    (re.compile(r"\((" + V + r");\s*"), "("),                            # "(V; rest)"
    (re.compile(r";\s*(" + V + r")\)"), ")"),                            # "(rest; V)"
    (re.compile(r",\s*(" + V + r")\)"), ")"),                            # "(rest, V)"
    (re.compile(r"[:,]?\s*(" + V + r")(?=[.;,])"), ""),                  # "…: V." / "… V;"
    (re.compile(r":\s*(" + V + r")\s*$"), "."),                          # "…: V" at the end
    (re.compile(r"(?<=[.!?])[ \t\n]+(" + V + r")"), ""),                 # "… end. V"
]
LIST_ITEM = re.compile(r"^(\s*)([-*]|\d+\.)\s+")


def blocks(lines):
    """Paragraphs as (start, end) line ranges outside code cells, fences and tables."""
    out, start, in_code = [], None, False
    for i, line in enumerate(lines + [""]):
        s = line.strip()
        boundary = (not s or s.startswith(("```", ":::", "|", "$$", "#")) or in_code
                    or re.fullmatch(r"\([\w-]+\)=", s) or re.match(r":\w[\w-]*:", s))
        if s.startswith("```{code-cell"):
            in_code = True
        elif in_code and s == "```":
            in_code = False
            boundary = True
        if boundary:
            if start is not None:
                out.append((start, i))
            start = None
        elif start is None:
            start = i
    return out


def sentence_verdicts(text):
    """(line, paragraph excerpt) for each verdict that shares its paragraph with prose."""
    lines = text.splitlines()
    hits = []
    for a, b in blocks(lines):
        para = "\n".join(lines[a:b])
        rest = VERDICT.sub("", para).strip(" .;:,\n")
        if VERDICT.search(para) and rest and not (len(rest.split()) < 6 and re.search(r":\s*" + V, para)):
            hits += [(a + 1 + para[:m.start()].count("\n"), m.group(0)) for m in VERDICT.finditer(para)]
    return hits


def fix(text):
    lines = text.splitlines()
    out, last, moved, left = [], 0, 0, []
    for a, b in blocks(lines):
        para = "\n".join(lines[a:b])
        rest = VERDICT.sub("", para).strip(" .;:,\n")
        if not VERDICT.search(para) or not rest:
            continue
        if len(rest.split()) < 6 and re.search(r":\s*" + V, para):
            continue                                   # "Label: V" is already a verdict line
        new, taken = para, []
        for _ in range(20):
            for rx, rep in RULES:
                m = rx.search(new)
                if m:
                    taken.append(m.group(1))
                    new = new[:m.start()] + rep + new[m.end():]
                    break
            else:
                break
        if VERDICT.search(new) or re.search(r"\(\s*\)|:\s*[;)]|\(\s*;", new):
            left.append(a + 1)
            continue
        new_lines = new.split("\n")
        orig = para.split("\n")
        for k in range(1, len(new_lines)):
            if k < len(orig) and not orig[k][:1].isspace():
                new_lines[k] = new_lines[k].lstrip()
            m = re.match(r"([.,;:)]+)\s*", new_lines[k])
            if m and new_lines[k][m.end():]:                # a line opened by the punctuation after V
                new_lines[k - 1] = new_lines[k - 1].rstrip() + m.group(1)
                new_lines[k] = new_lines[k][m.end():]
        # a line the verdict filled alone keeps only its punctuation: join it to the line before
        for k in range(len(new_lines) - 1, 0, -1):
            if not new_lines[k].strip(" .;:,"):
                new_lines[k - 1] = new_lines[k - 1].rstrip() + new_lines[k].strip()
                del new_lines[k]
        item = LIST_ITEM.match(lines[a])
        indent = " " * len(item.group(0)) if item else ""
        out += lines[last:a] + new_lines
        for v in taken:
            out += ["", indent + v]
        last = b
        moved += len(taken)
    out += lines[last:]
    return "\n".join(out) + ("\n" if text.endswith("\n") else ""), moved, left


def main(argv):
    do_fix = "--fix" in argv
    files = [a for a in argv if not a.startswith("--")]
    total = 0
    for f in files:
        text = Path(f).read_text()
        if do_fix:
            new, moved, left = fix(text)
            Path(f).write_text(new)
            print(f"{f}: {moved} verdicts moved to their own line; left for hand: lines {left}")
        else:
            hits = sentence_verdicts(text)
            total += len(hits)
            for line, v in hits:
                print(f"{f}:{line}: {v}")
    if not do_fix:
        print(f"{total} verdicts inside sentences")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
