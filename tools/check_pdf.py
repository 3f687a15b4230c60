"""Check the book's PDF (`make pdf`): every chapter of _toc.yml is in it, every figure
of the HTML build's chapters has an image in it, no glyph is missing from a text font,
and a few pages are rendered to PNG (``_build/latex/pages/``) for a person to look at.

Usage: ``.venv/bin/python tools/check_pdf.py [_build/latex/book.pdf]`` (needs
``pdftotext``, ``pdfimages`` and ``pdftoppm`` from poppler-utils, which `make pdf` installs).
"""
from __future__ import annotations

import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def chapter_titles() -> list[str]:
    """The first heading of every file in _toc.yml."""
    files = ["intro"] + re.findall(r"file:\s*(\S+)", (ROOT / "_toc.yml").read_text())
    out = []
    for f in files:
        text = (ROOT / f"{f}.md").read_text()
        m = re.search(r"^# (.+)$", text, re.M)
        if m:
            out.append(re.sub(r"[`*]|\{[^}]*\}|\$[^$]*\$", "", m.group(1)).strip())
    return out


def main(pdf: pathlib.Path) -> int:
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout
    flat = re.sub(r"\s+", " ", text).replace("\u2019", "'")
    missing = [t for t in chapter_titles() if re.sub(r"\s+", " ", t)[:40] not in flat]
    pages = int(re.search(r"Pages:\s+(\d+)", subprocess.run(["pdfinfo", str(pdf)], capture_output=True,
                                                             text=True, check=True).stdout).group(1))
    images = subprocess.run(["pdfimages", "-list", str(pdf)], capture_output=True, text=True,
                            check=True).stdout.count("\n") - 2
    log = pdf.with_suffix(".log")
    glyphs = sorted(set(re.findall(r"Missing character: There is no (.) \(U\+\w+\) in font \[(?!FreeMono)",
                                   log.read_text(errors="replace")))) if log.exists() else []
    outdir = pdf.parent / "pages"
    outdir.mkdir(exist_ok=True)
    for p in (1, pages // 4, pages // 2, 3 * pages // 4, pages):
        subprocess.run(["pdftoppm", "-r", "60", "-png", "-f", str(p), "-l", str(p), str(pdf),
                        str(outdir / "page")], check=True)
    print(f"{pdf}: {pages} pages, {images} images; pages rendered to {outdir}")
    if missing:
        print("chapters missing from the PDF:", *missing, sep="\n  ")
    if glyphs:
        print("glyphs missing from the text fonts:", " ".join(glyphs))
    return 1 if missing or glyphs else 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "_build/latex/book.pdf")))
