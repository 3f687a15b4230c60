"""A type checker reads the user's first script as written: the README's examples and
the quickstart's cells, type-checked with mypy against qlib's annotations.

The script is made from the two pages at test time (each README block a function,
the quickstart's cells one function, in order), so it cannot drift from them; mypy
reports errors in the script only (qlib's own modules are read for their types,
``--follow-imports=silent``). ``r.response_time_ci.low``, ``r.response_time_ci(0.99)``
and ``qlib.sweep(...)`` must type-check as they run.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mypy", reason="mypy is pinned in requirements.txt (make venv installs it)")

ROOT = Path(__file__).resolve().parents[1]


def _lines(block):
    return [l for l in block.splitlines() if not l.startswith(":") and l.strip() != "---"]


def user_script():
    """The README's python blocks and the quickstart's code cells, as one module."""
    readme = re.findall(r"^```python\n(.*?)^```", (ROOT / "README.md").read_text(), re.S | re.M)
    cells = re.findall(r"^```\{code-cell\}[^\n]*\n(.*?)^```",
                       (ROOT / "chapters" / "quickstart.md").read_text(), re.S | re.M)
    body = lambda lines: "\n".join("    " + l if l.strip() else "" for l in lines)  # noqa: E731
    out = [f"def readme_{i}() -> None:\n{body(_lines(b))}" for i, b in enumerate(readme)]
    out.append("def quickstart() -> None:\n" + body([l for c in cells for l in _lines(c)]))
    return "\n\n\n".join(out) + "\n"


def test_the_script_holds_the_examples():
    s = user_script()
    assert s.count("def readme_") >= 2 and "qlib.replicate(" in s and "simulate_jsq(" in s


def test_the_user_script_type_checks(tmp_path):
    script = tmp_path / "user_script.py"
    script.write_text(user_script())
    out = subprocess.run([sys.executable, "-m", "mypy", "--follow-imports=silent",
                          "--ignore-missing-imports", "--cache-dir", str(tmp_path / "cache"),
                          "--no-error-summary", str(script)],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-1000:]


def test_a_type_error_is_caught(tmp_path):
    # the check can fail: a misspelt field of an interval is an error
    script = tmp_path / "bad.py"
    script.write_text("from qlib.stats import Interval\n\n\ndef f(ci: Interval) -> float:\n"
                      "    return ci.lvel\n")
    out = subprocess.run([sys.executable, "-m", "mypy", "--follow-imports=silent",
                          "--ignore-missing-imports", "--cache-dir", str(tmp_path / "cache"),
                          str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 1 and "lvel" in out.stdout
