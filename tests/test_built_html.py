"""The built book as a reader gets it: checks over every page of _build/html.

Run by ``.ci/run`` after the strict build (``QLIB_BUILT_HTML=1``); skipped
otherwise, because ``make test`` does not build the book. Each page fails on:

* a raw pipe table (a Markdown table that was not turned into HTML),
* an output cell holding a traceback or an ``...Error``,
* an image in an output or a figure without a caption,
* an unresolved cross-reference,
* math in the source that did not make it into the HTML, or a page with math
  that does not load MathJax,
* a notebook chapter without its ``.ipynb`` download.

and the reference page must document every public name of ``qlib``.
"""
import importlib
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"

pytestmark = pytest.mark.skipif(
    not os.environ.get("QLIB_BUILT_HTML"),
    reason="checks the built book; set QLIB_BUILT_HTML=1 after jupyter-book build")


def pages():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    out = [toc["root"]]
    for part in toc.get("parts", []):
        out += [c["file"] for c in part["chapters"]]
    return out


def is_notebook(page):
    return (ROOT / f"{page}.md").read_text().startswith("---\njupytext:")


class Page(HTMLParser):
    """Collects what the checks need from one HTML page (main content only)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []            # (tag, classes) of open elements
        self.prose = []            # text outside pre/code/script/style
        self.outputs = []          # text of output cells
        self.images = []           # (inside a captioned figure?, inside output?)
        self.figures = []          # per <figure>: has figcaption
        self.unresolved = []
        self.math = 0
        self.links = []

    def _inside(self, pred):
        return any(pred(t, c) for t, c in self.stack)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if tag in ("br", "img", "meta", "link", "input", "hr"):
            if tag == "img":
                in_fig = self._inside(lambda t, c: t == "figure")
                in_out = self._inside(lambda t, c: "cell_output" in c)
                self.images.append((in_fig, in_out, a.get("src")))
            return
        self.stack.append((tag, cls))
        if tag == "figure":
            self.figures.append(False)
        if tag == "figcaption" and self.figures:
            self.figures[-1] = True
        if "xref" in cls and "std" in cls and not self._inside(lambda t, c: t == "a"):
            self.unresolved.append(" ".join(cls))
        if "math" in cls or tag in ("math", "mjx-container"):
            self.math += 1
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data):
        if self._inside(lambda t, c: "cell_output" in c or "output" in c):
            self.outputs.append(data)
        if not self._inside(lambda t, c: t in ("pre", "code", "script", "style")):
            self.prose.append(data)
            if re.search(r"\\\(|\\\[|\$\$", data):
                self.math += 1


def parse(page):
    path = HTML / f"{page if page != 'intro' else 'intro'}.html"
    assert path.exists(), f"{path} was not built"
    p = Page()
    p.raw = path.read_text(encoding="utf8")
    p.feed(p.raw)
    return p


def source_has_math(page):
    text = (ROOT / f"{page}.md").read_text()
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return bool(re.search(r"\$[^$\n]+\$", text))


@pytest.mark.parametrize("page", pages())
def test_page(page):
    p = parse(page)
    prose = "".join(p.prose)
    problems = []
    if re.search(r"\|\s*:?-{3,}:?\s*\|", prose):
        problems.append("raw pipe table")
    out = "\n".join(p.outputs)
    if "Traceback (most recent call last)" in out or re.search(r"\b[A-Z]\w*Error\b", out):
        problems.append("output with a traceback or Error: "
                        + (re.search(r".{0,60}\b(Traceback|[A-Z]\w*Error)\b.{0,60}", out).group(0)))
    bad_img = [src for in_fig, in_out, src in p.images if in_out and not in_fig]
    if bad_img or not all(p.figures):
        problems.append(f"figure without a caption ({len(bad_img)} bare output images, "
                        f"{p.figures.count(False)} figures without figcaption)")
    if p.unresolved:
        problems.append(f"unresolved references: {p.unresolved[:3]}")
    # a glued number that came out undefined ("lie between nan and nan")
    # (inf is a legitimate value here: μ = inf is the fast-resampling limit)
    bad = re.search(r".{0,40}\b(nan|NaN)\b.{0,20}", re.sub(r"\s+", " ", prose))
    if bad and page != "chapters/reference":
        problems.append(f"nan in the prose: '{bad.group(0)}'")
    if source_has_math(page) and p.math == 0:
        problems.append("math in the source, none in the HTML")
    if p.math and not re.search(r'<script[^>]*src="[^"]*mathjax[^"]*"', p.raw):
        problems.append("math on the page but no MathJax script")
    if is_notebook(page):
        nb = HTML / "_sources" / f"{page}.ipynb"
        if not nb.exists():
            problems.append(f"no .ipynb download ({nb.relative_to(HTML)})")
        if not any(h.endswith(f"_sources/{page}.ipynb") for h in p.links):
            problems.append("page has no link to its .ipynb")
    assert not problems, f"{page}: " + "; ".join(problems)


def test_reference_lists_every_public_name():
    import types
    html = (HTML / "chapters" / "reference.html").read_text(encoding="utf8")
    import qlib
    missing = []
    import pkgutil
    for modname in sorted(m.name.removeprefix("qlib.")
                          for m in pkgutil.walk_packages(qlib.__path__, "qlib.")
                          if not any(part.startswith("_") for part in m.name.split("."))
                          and m.name.removeprefix("qlib.") != "simulate"):
        mod = importlib.import_module(f"qlib.{modname}")
        for name in mod.__all__:
            obj = getattr(mod, name)
            if isinstance(obj, types.ModuleType):
                continue
            # a package's names are documented in the module they live in
            home = getattr(obj, "__module__", None) if hasattr(mod, "__path__") else None
            ids = [f'id="{home}.{name}"'] if home and home.startswith("qlib.") else []
            ids.append(f'id="qlib.{modname}.{name}"')
            if hasattr(mod, "__path__"):
                ids += re.findall(rf'id="qlib\.{re.escape(modname)}\.\w+\.{name}"', html)
            if not any(i in html for i in ids):
                missing.append(f"qlib.{modname}.{name}")
    covered = set()
    for m in qlib.__all__:
        obj = getattr(qlib, m)
        mod = obj.__name__ if isinstance(obj, types.ModuleType) else getattr(obj, "__module__", "")
        if mod.startswith("qlib.") and f'id="module-{mod}"' in html or m == "__version__":
            covered.add(m)
    extra = sorted(set(qlib.__all__) - covered)
    assert not missing, f"public names missing from the reference: {missing}"
    assert not extra, f"top-level names not covered by a module section: {extra}"
