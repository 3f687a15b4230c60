"""Sphinx glue for the book: each notebook chapter downloadable as ``.ipynb``.

myst-nb writes every executed notebook to ``_build/jupyter_execute/``; at the
end of the HTML build they are copied next to the page sources
(``_build/html/_sources/<page>.ipynb``), and sphinx-book-theme's download
menu offers them (it shows an ``.ipynb`` entry when ``ipynb_source`` is set).
The files are generated at every build and never committed.
"""
import shutil
from pathlib import Path


def _is_notebook(app, pagename):
    src = Path(app.srcdir) / f"{pagename}.md"
    return src.exists() and src.read_text(encoding="utf8").startswith("---\njupytext:")


def _set_ipynb_source(app, pagename, templatename, context, doctree):
    if _is_notebook(app, pagename):
        context["ipynb_source"] = f"{pagename}.ipynb"


def _copy_notebooks(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    executed = Path(app.outdir).parent / "jupyter_execute"
    for docname in app.env.found_docs:
        nb = executed / f"{docname}.ipynb"
        if nb.exists() and _is_notebook(app, docname):
            dest = Path(app.outdir) / "_sources" / f"{docname}.ipynb"
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(nb, dest)


def _dedupe_scripts(app, pagename, templatename, context, doctree):
    """Drop repeated inline scripts.

    sphinx-thebe adds its ``const THEBE_JS_URL = ...`` script once per
    ``env-before-read-docs``, which jupyter-book fires more than once, and the
    second copy is a JavaScript SyntaxError on every page (found by
    ``make check-html``).
    """
    seen, kept = set(), []
    for js in context.get("script_files", []):
        # an inline script is registered once with filename None, once with ''
        key = (getattr(js, "filename", None) or "", repr(getattr(js, "attributes", {})))
        if key in seen:
            continue
        seen.add(key)
        kept.append(js)
    # in place: handlers that run later (sphinx.ext.mathjax adds its script on
    # pages with math) append to this same list
    context["script_files"][:] = kept


def setup(app):
    app.connect("html-page-context", _dedupe_scripts, priority=100)
    # before sphinx-book-theme builds its header buttons (priority 501)
    app.connect("html-page-context", _set_ipynb_source, priority=400)
    app.connect("build-finished", _copy_notebooks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
