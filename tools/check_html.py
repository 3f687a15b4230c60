#!/usr/bin/env python3
"""Open every page of the built book in headless Chromium, as a reader would.

For each page of ``_build/html`` named in ``_toc.yml``: load it from disk,
let MathJax run (virtual time), and check through the resulting DOM that
every math element was typeset (an ``mjx-container`` and no ``mjx-merror``)
and that the page logged no JavaScript error; then write a full-page
screenshot to ``_build/screenshots/<page>.png``. Prints one line per page and
exits 1 if any page fails. Used by ``make check-html`` (not part of
``make test``): it needs Debian's ``chromium``, which the make target
installs when missing.
"""
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
SHOTS = ROOT / "_build" / "screenshots"


def pages():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    out = [toc["root"]]
    for part in toc.get("parts", []):
        out += [c["file"] for c in part["chapters"]]
    return out


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    sys.exit("chromium not found: `make check-html` installs Debian's chromium")


def run(browser, args, profile):
    cmd = [browser, "--headless=new", "--no-sandbox", "--disable-gpu",
           "--hide-scrollbars", f"--user-data-dir={profile}", "--allow-file-access-from-files",
           "--enable-logging=stderr", "--v=0", "--virtual-time-budget=20000"] + args
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def check(browser, page, profile):
    url = (HTML / f"{page}.html").as_uri()
    r = run(browser, ["--dump-dom", url], profile)
    dom = r.stdout
    # sphinx wraps inline math in <span class="math notranslate nohighlight"> and
    # display math in <div class="math notranslate nohighlight">
    n_math = len(re.findall(r'class="math notranslate nohighlight"', dom))
    n_typeset = len(re.findall(r"<mjx-container", dom))
    n_err = len(re.findall(r"<mjx-merror", dom))
    js_errors = [ln for ln in r.stderr.splitlines()
                 if "CONSOLE" in ln and re.search(r"error|Uncaught", ln, re.I)]
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / f"{page.replace('/', '_')}.png"
    run(browser, [f"--screenshot={shot}", "--window-size=1280,3000", url], profile)
    problems = []
    if n_typeset < n_math:
        problems.append(f"{n_math - n_typeset} of {n_math} math elements not typeset")
    if n_err:
        problems.append(f"{n_err} MathJax errors")
    if js_errors:
        problems.append(f"JavaScript errors: {js_errors[:2]}")
    if not dom.strip():
        problems.append("empty DOM")
    return n_math, n_typeset, problems, shot


def main():
    if not (HTML / "intro.html").exists():
        sys.exit("no built book: run `make book` first")
    browser = chromium()
    failed = 0
    with tempfile.TemporaryDirectory() as profile:
        for page in pages():
            n_math, n_typeset, problems, shot = check(browser, page, profile)
            status = "ok" if not problems else "FAIL: " + "; ".join(problems)
            failed += bool(problems)
            print(f"{page:32s} math {n_typeset:4d}/{n_math:<4d} {status}  ({shot.name})")
    print(f"{len(pages()) - failed} of {len(pages())} pages passed; screenshots in {SHOTS}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
