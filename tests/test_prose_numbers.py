"""No measured number is typed into a chapter's prose: it is glued from the cell that measured it.

The house style says a number in the prose, a caption or the ledger comes from
``glue`` in the cell that computed it; a typed number goes stale the day the
code changes.  This test reads every chapter (``chapters/*.md`` and the book's
root ``intro.md``) and reports typed numbers that look like results.

What is read
------------
The chapter's Markdown *outside* code: prose, headings, tables, ``$...$`` and
``$$...$$`` math, and the bodies of directives (figure captions,
``{prf:...}`` statements and proofs, admonitions, exercises), because typed
results hide there too.  Left out (masked, so line numbers stay right):

* the jupytext front matter, ``+++`` cell markers and HTML comments;
* fenced code: ``{code-cell}``, ``{code}``, ``{code-block}``, ``{raw}`` and any
  fence without a ``{directive}`` (```` ```python ````, ```` ``` ````);
* directive options (``:label: x``, ``:width: 80%``, a leading ``---`` YAML
  block) and the argument of directives whose argument is a path or key
  (``{figure}``, ``{image}``, ``{glue:figure}``, ...);
* every role except ``{math}``: a glue role ``{glue:text}`key:.3f``` is the
  *right* way to write a measured number, and ``{numref}``, ``{ref}``,
  ``{prf:ref}``, ``{eq}``, ``{cite:p}`` hold labels and keys, not numbers;
* ``(label)=`` targets, the ``(label)`` after a closing ``$$``, link targets
  ``](...)`` and bare URLs, ``\\label{..}`` / ``\\tag{..}`` in math.

Inline code (```` `n = 1500` ````) *is* read: a number there is typed all the same.

What fails
----------
1. **A decimal with three or more significant digits**: ``1.937``, ``0.0262``
   (leading zeros do not count, trailing ones do: ``1.50`` has three).  For
   ``2.6e-3`` or ``2.6 \\cdot 10^{-3}`` only the mantissa counts (two digits,
   fine): a number this coarse is a parameter or an order of magnitude, not a
   result read off a run.
2. **An integer of 100 or more**: ``1545``, ``35,000``, ``35\\,000``,
   ``170–530``.  Round parameters such as ``n = 1500`` go into the chapter's
   allow-list below.  Not counted:

   * years: a four-digit integer in 1900–2039 outside math, right after ``(``
     or right before ``)``, ``,``, ``;`` or ``]`` (``Geyer (1992)``,
     ``Sokal 1997,``), so that "for 2000 time units" still counts;
   * exponents: an integer in a superscript (``10^{-308}``, ``e^{-100}``,
     ``10⁻⁶``): an order of magnitude, not a digit string;
   * structural numbers: after ``Theorem``, ``Lemma``, ``Section``, ``§``,
     ``Chapter``, ``Figure``, ``Table``, ``Eq.``, ``p.``/``pp.``/``page`` (with
     their ranges), and dotted numbers such as ``3.2.1``;
   * indices: a number in a subscript (``q_{100}``) or glued to an identifier
     (``x2``, ``log10``, ``float64``);
   * powers of ten written as such: ``10^{-12}``, ``10^6``.
3. **A number word used as a result** (case-insensitive; see ``WORD_PATTERNS``):

   * fractions: ``a``/``one``/``two``/.../``ten`` followed by ``half``,
     ``third(s)``, ``quarter(s)``, ``fifth(s)`` ... ``tenth(s)``,
     ``hundredth(s)``, ``thousandth(s)`` -- "a third", "four fifths",
     "two thirds", "a tenth";  and ``half of`` / ``half as`` (but not "the
     first/second/other half of", which names a part of a window);
   * multiples: ``twice``, ``thrice``, ``<number word> times`` ("ten times",
     "thirty times", "a hundred times"), ``<number word>fold``/``-fold``
     ("tenfold", "two-fold"), ``a factor of <number word>``, ``halved``,
     ``doubled``, ``tripled``, ``quadrupled``;
   * ``<number word> percent``.

   Ordinals as ordinals ("a third-order term", "the third derivative") are not
   matched: the fraction word must be followed by ``of``, ``as``, ``the``,
   ``that``, ``again``, a comparative (``smaller``, ``larger``, ``more``,
   ``less`` ...) or punctuation / end of line.

The allow-list
--------------
``ALLOWED[chapter stem]`` is a short set of literal strings for the model's
parameters and for definitions (``n = 1500``, a batch length, a
constant in a formula), never for measurements.  An entry allows a violation
when it *equals* the matched text (``"1500"`` allows every ``1500`` in that
chapter) or when it is a longer phrase that *contains* the match at that place
(``"twice the coefficient"`` allows that one "twice" only).

Command line
------------
``python tests/test_prose_numbers.py chapters/tails.md [...]`` prints each
violation as ``file:line: matched text`` (all chapters when no file is named)
and exits 1 if there is any.
"""
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("*.md")) + [ROOT / "intro.md"]

# Chapter stem -> literal strings that are parameters or definitions, not results.
# Keep these short; a measured number belongs in a glue role instead.
ALLOWED: dict[str, set[str]] = {
    "model": {"n = 1500", "n = 5000", "n = 5001"},
    "fluid_limit": {"n = 5001", "n \\ge 1500", "x = 0.999", "(2/n)(0.998 - 0.999^{1499})"},
    "results": {"by time 300", "$n = 5000$", "below one per cent"},
    "best_degree": {"i < 200", "n = 1500"},
    "equilibrium": {"t = 300"},
    "tails": {"level 300)", "levels 200 and 2000", "to 300 levels"},
    "simulator_check": {"n = 1000", "n = 50, 100, 200", "below a fifth of", "window of 100",
                        "or 200 ($"},
    "experiments": {"n = 1500", "n = 5000", "n = 5001", "windows twice as"},
    "bounded_resampling": {"n = 9999", "a fifth of the variance"},
    "finite_n": {"n = 100", "N = 10 \\dots 100", "100\\,R_v", "and $0.999$", "a tenth of", "is twice",
                 "n \\ge 1000"},
    "ht_diffusion": {"n = 1000", "2000 time units", "The 2000 increments", "1999",
                     "twice the coefficient"},
    "ht_paths": {"n = 100", "n = 1000"},
    "solver_check": {"below a tenth", "window of 4000"},
    "ht_waiting": {"n = 100", "99.9%", "of 1000 time units",
                   "of 300 time units", "from 100 to 300", "n = 100, 400, 1600",
                   "from $n = 100$"},
    "ht_stationary": {"n = 500", "four times finer", "of 2000 time units"},
    "ht_alternatives": {"n \\le 200", "\\approx 0.316", "n \\le 1000", "k = 100"},
    "performance": {"n = 1000", "at least 100", "burn-in of 100", "t_\\text{end} = 500"},
    "ledger": {"n = 1500", "n = 5000", "n = 5001", "n = 1000", "t = 300",
               "n = 500", "n = 100"},
}

# ----------------------------------------------------------------------------
# Masking: blank out what is not prose (keeping offsets and newlines).

CODE_DIRECTIVES = {"code-cell", "code", "code-block", "sourcecode", "raw",
                   "literalinclude", "include", "jupyter-execute", "toctree",
                   "bibliography", "tableofcontents", "mermaid", "graphviz"}
ARG_IS_KEY = {"figure", "image", "glue", "glue:any", "glue:figure", "glue:math",
              "glue:md", "glue:text", "embed", "math", "solution", "solution-start",
              "exercise-start"}
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,}|:{3,})\s*(?:\{([\w:.-]+)\})?(.*)$")
OPTION = re.compile(r"^\s*:[\w-]+:")
ROLE = re.compile(r"\{([\w:.-]+)\}`[^`]*`")
HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
LINK_TARGET = re.compile(r"\]\([^)\s]*\)|<https?://[^>]*>|https?://\S+")
EQ_LABEL = re.compile(r"(?<=\$\$)[ \t]*\([^()\s]+\)")
TEX_LABEL = re.compile(r"\\(?:label|tag|ref|eqref)\{[^}]*\}")
MATH = re.compile(r"\$\$.*?\$\$|(?<![\\$])\$(?!\$)(?:\\.|[^$\\])+?\$", re.S)


def _blank(s: str) -> str:
    return re.sub(r"[^\n]", " ", s)


def mask(text: str) -> tuple[str, list[bool]]:
    """The chapter with everything that is not prose blanked out, and a per-character
    flag saying whether the character is inside math."""
    lines = text.split("\n")
    out = list(lines)
    i = 0
    # jupytext / YAML front matter
    if lines and lines[0].strip() == "---":
        for j in range(1, len(lines)):
            if lines[j].strip() == "---":
                for k in range(j + 1):
                    out[k] = _blank(lines[k])
                i = j + 1
                break
    stack = []   # open directives: dicts with fence, code, at_start, in_yaml
    math_lines = set()
    while i < len(lines):
        line = lines[i]
        top = stack[-1] if stack else None
        if top is not None and top["code"]:
            m = FENCE.match(line)
            out[i] = _blank(line)
            if m and _closes(m, top):
                stack.pop()
            i += 1
            continue
        if top is not None and top["in_yaml"]:
            out[i] = _blank(line)
            if line.strip() == "---":
                top["in_yaml"] = False
            i += 1
            continue
        if top is not None and top["at_start"]:
            if line.strip() == "---":
                top["in_yaml"] = True
                out[i] = _blank(line)
                i += 1
                continue
            if OPTION.match(line):
                out[i] = _blank(line)
                i += 1
                continue
            top["at_start"] = False
        m = FENCE.match(line)
        if m and top is not None and _closes(m, top):
            out[i] = _blank(line)
            stack.pop()
            i += 1
            continue
        if m and (m.group(3) is not None or m.group(2)[0] != ":" or m.group(4).strip() == ""):
            name = m.group(3)
            fence = m.group(2)
            code = name in CODE_DIRECTIVES or (name is None and fence[0] != ":")
            if code or name in ARG_IS_KEY:
                out[i] = _blank(line)
            else:   # keep the title of a statement or admonition, drop the fence
                start = m.start(4)
                out[i] = _blank(line[:start]) + line[start:]
            stack.append(dict(fence=fence, code=code, at_start=True, in_yaml=False,
                              math=name == "math"))
            if name == "math":
                math_lines.add(i)
            i += 1
            continue
        if stack and stack[-1].get("math"):
            math_lines.add(i)
        stripped = line.strip()
        if stripped.startswith("+++") or re.fullmatch(r"\([^()\s]+\)=", stripped):
            out[i] = _blank(line)
        i += 1
    masked = "\n".join(out)
    for pattern in (HTML_COMMENT, LINK_TARGET, EQ_LABEL, TEX_LABEL):
        masked = pattern.sub(lambda mm: _blank(mm.group(0)), masked)
    masked = ROLE.sub(lambda mm: mm.group(0) if mm.group(1) == "math" else _blank(mm.group(0)),
                      masked)
    in_math = [False] * len(masked)
    for mm in MATH.finditer(masked):
        for k in range(mm.start(), mm.end()):
            in_math[k] = True
    for mm in re.finditer(r"\{math\}`[^`]*`", masked):
        for k in range(mm.start(), mm.end()):
            in_math[k] = True
    offset = 0
    for n, line in enumerate(out):
        if n in math_lines:
            for k in range(offset, offset + len(line)):
                in_math[k] = True
        offset += len(line) + 1
    return masked, in_math


def _closes(m, top) -> bool:
    fence = m.group(2)
    return (fence[0] == top["fence"][0] and len(fence) >= len(top["fence"])
            and m.group(3) is None and m.group(4).strip() == "")


# ----------------------------------------------------------------------------
# Numbers.

SEP = r"(?:,|\\,|\{,\}|[\u2009\u202f\u00a0])"
NUMBER = re.compile(
    r"(?<![\w.\\])"                                   # not glued to an identifier
    r"(?P<int>\d{1,3}(?:" + SEP + r"\d{3})+(?!\d)|\d+)"
    r"(?P<frac>\.\d+)?"
    r"(?P<exp>[eE][+-]?\d+(?![\w]))?"
)
STRUCTURAL = re.compile(
    r"(?:Theorems?|Thm\.|Lemmas?|Propositions?|Prop\.|Corollar(?:y|ies)|Definitions?|"
    r"Remarks?|Examples?|Exercises?|Algorithms?|Sections?|Sec\.|§§?|Chapters?|Ch\.|"
    r"Figures?|Fig\.|Tables?|Tab\.|Equations?|Eqs?\.|Appendix|pp?\.|pages?|issues?|#)"
    r"[\s~\u00a0]*[\d.,–\-\s]*$", re.I)


def significant_digits(int_part: str, frac: str | None, exp: str | None) -> int:
    digits = re.sub(r"\D", "", int_part) + (frac[1:] if frac else "")
    digits = digits.lstrip("0")
    if not frac:                      # integer mantissa: trailing zeros are magnitude
        digits = digits.rstrip("0")
    return len(digits)


def number_violations(masked: str, in_math: list[bool]) -> list[tuple[int, int, str]]:
    found = []
    for m in NUMBER.finditer(masked):
        s, e = m.span()
        nxt = masked[e:e + 2]
        if re.match(r"\.\d", nxt):                      # dotted 3.2.1: structural
            continue
        before = masked[max(0, s - 40):s]
        if re.search(r"_\{?[\w,]*$", before) and not re.search(r"\s_", before[-3:]):
            continue                                    # subscript index q_{100}
        line_before = before.rsplit("\n", 1)[-1]
        if STRUCTURAL.search(line_before):
            continue
        exponent = re.search(r"\^\{?[-+−]?$|[⁻⁺]$", before) is not None
        int_part, frac, exp = m.group("int"), m.group("frac"), m.group("exp")
        if frac or exp:
            if significant_digits(int_part, frac, exp) >= 3:
                found.append((s, e, m.group(0)))
            continue
        value = int(re.sub(r"\D", "", int_part))
        if value < 100 or exponent:                     # 10^{-308}, e^{-100}: magnitudes
            continue
        if (re.fullmatch(r"\d{4}", int_part) and 1900 <= value <= 2039 and not in_math[s]
                and (before.endswith("(") or re.match(r"[a-z]?\s*[);,\]]", masked[e:e + 3]))):
            continue                                    # a year: (1992), Geyer 1992)
        found.append((s, e, m.group(0)))
    return found


# ----------------------------------------------------------------------------
# Number words.

SMALL = (r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
         r"fifteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|"
         r"a\s+hundred|a\s+thousand|thousand|a\s+million)")
COUNT = r"(?:a|one|two|three|four|five|six|seven|eight|nine|ten)"
FRACTION = (r"(?:half|halves|thirds?|quarters?|fifths?|sixths?|sevenths?|eighths?|"
            r"ninths?|tenths?|hundredths?|thousandths?)")
FOLLOW = (r"(?=[\s\u00a0]+(?:of|as|the|that|again|smaller|larger|bigger|greater|higher|"
          r"lower|more|less|fewer|longer|shorter|faster|slower)\b|[\s\u00a0]*(?:[.,;:!?)\]—–]|$))")
WORD_PATTERNS = [
    # "a third", "four fifths", "two thirds", "a tenth of", "one half"
    r"\b" + COUNT + r"(?:[\s\u00a0]+and[\s\u00a0]+a)?[\s\u00a0-]+" + FRACTION + r"\b" + FOLLOW,
    # "half of", "half as" (not "the first half of the window")
    r"(?<!first )(?<!second )(?<!other )(?<!last )(?<!final )(?<!lower )(?<!upper )"
    r"(?<!left )(?<!right )(?<!one )(?<!a )\bhalf[\s\u00a0]+(?:of|as)\b",
    # multiples
    r"\btwice\b",
    r"\bthrice\b",
    r"\b" + SMALL + r"[\s\u00a0]+times\b",
    r"\b" + SMALL + r"-?fold\b",
    r"\b(?:a[\s\u00a0]+)?factor[\s\u00a0]+of[\s\u00a0]+(?:two|three|four|five|six|seven|eight|nine|ten|"
    r"twenty|thirty|forty|fifty|a\s+hundred|hundred|a\s+thousand|thousand)\b",
    r"\b(?:halved|doubled|tripled|quadrupled)\b",
    r"\b" + SMALL + r"[\s\u00a0]+per[\s\u00a0]?cent\b",
]
WORDS = re.compile("|".join(f"(?:{p})" for p in WORD_PATTERNS), re.I | re.M)


def word_violations(masked: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), re.sub(r"\s+", " ", m.group(0))) for m in WORDS.finditer(masked)]


# ----------------------------------------------------------------------------

def _allowed(text: str, s: int, e: int, matched: str, allowed: set[str]) -> bool:
    if matched in allowed:
        return True
    for phrase in allowed:
        if matched not in phrase and re.sub(r"\s+", " ", text[s:e]) not in phrase:
            continue
        for pm in re.finditer(re.escape(phrase), text):
            if pm.start() <= s and e <= pm.end():
                return True
    return False


def violations(path: Path) -> list[tuple[int, str]]:
    """(line, matched text) for every typed result in a chapter."""
    text = path.read_text(encoding="utf-8")
    masked, in_math = mask(text)
    allowed = ALLOWED.get(path.stem, set())
    hits = number_violations(masked, in_math) + word_violations(masked)
    out = []
    for s, e, matched in sorted(hits):
        if _allowed(text, s, e, matched, allowed):
            continue
        out.append((text.count("\n", 0, s) + 1, matched))
    return out


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_no_typed_numbers(path):
    found = violations(path)
    rel = path.relative_to(ROOT)
    assert not found, (f"{len(found)} typed number(s) in {rel}; glue them from the cell that "
                       "measured them (or, for a parameter, add it to ALLOWED):\n"
                       + "\n".join(f"{rel}:{line}: {m}" for line, m in found))


def test_allow_list_names_real_chapters():
    stems = {p.stem for p in CHAPTERS}
    assert set(ALLOWED) <= stems, set(ALLOWED) - stems


@pytest.mark.parametrize("stem", sorted(ALLOWED))
def test_allow_list_is_not_stale(stem):
    """An entry whose text has left the chapter goes: the list stays short."""
    path = next(p for p in CHAPTERS if p.stem == stem)
    text = path.read_text(encoding="utf-8")
    stale = sorted(a for a in ALLOWED[stem] if a not in text)
    assert not stale, f"ALLOWED[{stem!r}] entries no longer in {path.name}: {stale}"


@pytest.mark.parametrize("text,expected", [
    # decimals: three significant digits fail, two pass; mantissa only
    ("The gap is 1.937 here.\n", ["1.937"]),
    ("It is 0.0262.\n", ["0.0262"]),
    ("It is 1.50.\n", ["1.50"]),
    ("$\\lambda = 0.9$ and $2.6 \\cdot 10^{-3}$ and 2.6e-3.\n", []),
    ("about 10^{-12} or $10^{6}$\n", []),
    # integers of 100 or more fail, unless year / structural / index / identifier
    ("we ran 1545 steps and 35,000 events and $35\\,000$\n", ["1545", "35,000", "35\\,000"]),
    ("relax over 170–530 time units\n", ["170", "530"]),
    ("Geyer (1992) showed, in Section 3.2.1 and Theorem 312, pp. 123–145\n", []),
    ("$n = 2000$ and for 2000 time units; Sokal 1997, x\n", ["2000", "2000"]),
    ("$10^{-308}$ and $e^{-100}$ and $100\\,e^{-14}$\n", ["100"]),
    ("$q_{100}$, float64, log10\n", []),
    # code, roles, labels, options and URLs are not prose
    ("```{code-cell} ipython3\nx = 1.2345\n```\n", []),
    ("```python\nx = 1.2345\n```\n", []),
    ("R = {glue:text}`exp-R:.4f` and {numref}`fig-123` {cite:p}`smith2001`\n", []),
    ("(sec-100)=\n# Title\n", []),
    ("see [here](https://x.org/1234/5.678)\n", []),
    ("```{figure} ../img/fig123.png\n:width: 800px\n:name: fig-x\n\nCaption with 0.123.\n```\n",
     ["0.123"]),
    ("````{prf:proposition} Title 4.567\n:label: prop-9\n\nBody 1.234.\n````\n",
     ["4.567", "1.234"]),
    ("```{code-cell} ipython3\n---\ntags: [hide-input]\n---\ny = 12345\n```\nnext 0.5\n", []),
    ("$$\nx = 1.234\n$$ (eq-555)\n", ["1.234"]),
    ("inline `n = 1500` code\n", ["1500"]),
    # number words
    ("a third of the static gap\n", ["a third"]),
    ("it closes four fifths.\n", ["four fifths"]),
    ("two thirds of it, twice the bias, ten times larger, thirty times\n",
     ["two thirds", "twice", "ten times", "thirty times"]),
    ("a third-order Taylor polynomial, the third derivative, a third cell\n", []),
    ("the first half of the window, half of the servers\n", ["half of"]),
    ("a factor of ten, tenfold, halved\n", ["a factor of ten", "tenfold", "halved"]),
])
def test_detector(tmp_path, text, expected):
    p = tmp_path / "x.md"
    p.write_text(text)
    assert [m for _, m in violations(p)] == expected


def test_allow_list_phrase(tmp_path, monkeypatch):
    p = tmp_path / "chap.md"
    p.write_text("n = 1500 servers; $a$ is twice the coefficient; twice the bias\n")
    monkeypatch.setitem(ALLOWED, "chap", {"1500", "twice the coefficient"})
    assert violations(p) == [(1, "twice")]


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or CHAPTERS
    total = 0
    for path in paths:
        for line, matched in violations(path.resolve()):
            print(f"{_shown(path)}:{line}: {matched}")
            total += 1
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
