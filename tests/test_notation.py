"""One meaning per symbol: the notation page (chapters/notation.md) against the chapters.

Two checks, both over the mathematics of the chapters' prose (``$...$`` and
``$$...$$`` outside code cells; a code cell's YAML header, which holds the
figure captions, counts as prose):

* **first use**: for every row of the page's symbol table, the chapter named in
  its "first used" column is the first chapter, in the book's reading order
  (Parts I–III and the appendix), whose mathematics uses the symbol;
* **no second meaning**: for every symbol the page reserves, a list of
  patterns that would give it a meaning the page assigns to another symbol
  (or to nothing) must match nowhere. Each pattern is a collision that existed
  once and was renamed (a fit's slope written $d$, Euler's constant written
  $\\gamma$, a covariance written $W$, ...); a new collision of the same form
  fails here, naming the chapter and the line.
"""
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
NOTATION = ROOT / "chapters" / "notation.md"
MATH = re.compile(r"\$\$.+?\$\$|\$[^$]+?\$", re.S)
CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(---\n.*?\n---\n)?(.*?)^```[ \t]*$", re.S | re.M)
NOT_IN_WORD = r"(?<![\\a-zA-Z])"

# How each row's symbol shows up in mathematics (first-use check). Rows whose
# letter is also a free index (k as a summation index) are left out.
USE = {
    "$n$": NOT_IN_WORD + r"n(?![a-zA-Z])",
    "$\\lambda$, $\\lambda_n$": r"\\lambda|\\lamn",
    "$\\varepsilon$": r"\\varepsilon",
    "$\\mu$, $\\mu_n$": r"\\mu(?![a-z])|\\mun",
    "$G_n$, $H_n$": r"G_n|H_n",
    "$p(d)$": r"(?<![\\a-zA-Z])p\(d\)",
    "$\\pgf(x)$": r"\\pgf",
    "$m$, $M$, $\\bar d$": r"\\bar d",
    "$\\delta_k$": r"\\delta_",
    "$q(i)$, $q(t, i)$": NOT_IN_WORD + r"q\(",
    "$g(x)$": NOT_IN_WORD + r"g\(",
    "$\\gamma$": r"\\gamma(?![_a-zA-Z])",
    "$\\qstar$": r"\\qstar",
    "$R$, $R^\\star$, $R_n$": r"R\^\\star|R\^\{\\star\}",
    "$\\eta$": r"\\eta(?![a-zA-Z])",
    "$\\beta$": r"\\beta(?![a-zA-Z])",
    "$Q_i$": r"(?<![a-zA-Z])Q_[0-9i]",
    "$X_1$, $X_2$": r"X_[12]",
    "$U$": NOT_IN_WORD + r"U(?![a-zA-Z_])",
    "$c(\\beta)$": r"c\(\\beta\)|c\(1\)",
    "$\\alpha(\\beta)$": r"\\alpha\(",
    "$W$": NOT_IN_WORD + r"W(?![a-zA-Z_])",
    "$\\Phi$, $\\Phi'$": r"\\Phi(?![a-zA-Z])",
    "$r$": r"(?<![\\a-zA-Z{])r(?![a-zA-Z}])",
    "$T$, $T_0$": r"T_0",
    "$\\tau$": r"\\tau(?![a-zA-Z_])",
    "$\\tau_{\\rm up}$": r"\\tau_\{\\rm up\}",
}
EXEMPT_FIRST_USE = {"$k$"}  # k is also every chapter's free index (sums, levels)

# Meanings a reserved symbol must not take. Patterns run over each chapter's
# mathematics; "TEXT:" patterns run over the whole prose (for "JSQ($d$)",
# where the symbol sits in words).
FORBIDDEN = {
    "γ is the spectral gap (Euler's constant is γ_E)": [
        r"\\log d - \\gamma(?!_)", r"\\log m \+ \\gamma(?!_)", r"\\log n \+ \\gamma(?!_)",
        r"n\^\\gamma", r"\\circ \\gamma"],
    "ε is 1 − λ": [r"\\varepsilon_n", r"\\bar\\varepsilon", r"\\varepsilon_\{\d", r"\\epsilon(?!_)",
                   r"\[\\varepsilon/e"],
    "c(β) is the waiting constant": [
        NOT_IN_WORD + r"c_[ikK{]", NOT_IN_WORD + r"c\^2", r"[+=] ?c'?/n", NOT_IN_WORD + r"c\\,?\\mun?\^",
        r"e\^\{-c", NOT_IN_WORD + r"e_c", r"\(c \+ o\(1\)\)", NOT_IN_WORD + r"c = \\lambda p\(0\)",
        r"2\\,\\Delta R/c"],
    "d is a degree (JSQ's sample size is k)": [
        r"TEXT:JSQ\(\$d\$\)", r"TEXT:JSQ\(\$d\(n\)", NOT_IN_WORD + r"d\(n\)", r"c \+ d\\,n\^", r"\(d - \\beta c\)"],
    "m is the smallest degree": [
        r"H_m", r"H_\{2m\}", NOT_IN_WORD + r"m_[0-9y]", r"\\hat m", r"x_m", r"TEXT:margin \$m\$",
        r"TEXT:\$m\$ (checks|compared)", r"1-\\alpha/\(2m\)"],
    "T_0 is a burn-in": [r"\\E T_0", r"\\E T_k", r"T_k"],
    "r is a number of replications": [
        NOT_IN_WORD + r"r\((?:a|b|t)", NOT_IN_WORD + r"r'", NOT_IN_WORD + r"r\\,dt", NOT_IN_WORD + r"r_[123]",
        r"j = -r", r"\\sum_\{r="],
    "α(β) is Halfin–Whitt's constant": [
        r"\\alpha_", r"\\alpha\s*[<>]", r"\^\{?-?\\alpha", r"-\\alpha[;$]", r"\\alpha = \d",
        r"\\alpha/\(2", r"2\\alpha/"],
    "g(x) is xφ(x)": [
        NOT_IN_WORD + r"g_i", r"\\bar g", r"g\^\\star", NOT_IN_WORD + r"g = q", NOT_IN_WORD + r"g\(y\)",
        r"e\^\{?g"],
    "U is the push of the diffusion": [r"\\det\(U", NOT_IN_WORD + r"U = \\operatorname", r"U_i = G"],
    "W is a waiting time": [NOT_IN_WORD + r"W_\{?[jk]", NOT_IN_WORD + r"W/n", r"whatever \$W"],
    "X_1, X_2 are the diffusion's coordinates": [r"X_1, \\dots, X_k"],
    "k is JSQ's sample size": [r"Poisson\(\$?1/\(2k\)"],
}


def reading_order():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [c["file"] for p in toc["parts"] for c in p["chapters"]]
    # the book-at-a-glance pages quote the chapters; first use is among the chapters proper
    return [f for f in files if f not in ("chapters/results", "chapters/notation")]


def prose(text):
    """The chapter's text with code cell bodies blanked (captions kept), line numbers preserved."""
    def blank(m):
        head = m.group(0)[: m.start(2) - m.start(0)]
        return head + re.sub(r"[^\n]", " ", m.group(2)) + m.group(0)[m.end(2) - m.start(0):]
    return CELL.sub(blank, text)


def math_segments(text):
    body = prose(text)
    return [(body.count("\n", 0, m.start()) + 1, m.group(0)) for m in MATH.finditer(body)]


CHAPTERS = {f: (ROOT / f"{f}.md").read_text() for f in reading_order()}
MATHS = {f: math_segments(t) for f, t in CHAPTERS.items()}
LABEL_OF = {}
for f, t in CHAPTERS.items():
    m = re.search(r"^\((ch-[\w-]+)\)=", t, re.M)
    if m:
        LABEL_OF[m.group(1)] = f


def table_rows():
    rows = {}
    for line in NOTATION.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| $") and len(cells) == 3:
            m = re.search(r"\{ref\}`(ch-[\w-]+)`", cells[2])
            rows[cells[0]] = m and m.group(1)
    return rows


ROWS = table_rows()


def test_every_row_has_a_use_pattern():
    missing = set(ROWS) - set(USE) - EXEMPT_FIRST_USE
    assert not missing, f"add a use pattern for {sorted(missing)}"
    assert len(ROWS) >= 25


@pytest.mark.parametrize("symbol", sorted(set(ROWS) - EXEMPT_FIRST_USE))
def test_first_used_column(symbol):
    rx = re.compile(USE[symbol])
    first = next((f for f in reading_order() if any(rx.search(s) for _, s in MATHS[f])), None)
    assert first is not None, f"{symbol} is used nowhere"
    stated = ROWS[symbol]
    assert stated in LABEL_OF, f"{symbol}: {stated} is not a chapter label"
    assert LABEL_OF[stated] == first, (
        f"{symbol}: the page says first used in {LABEL_OF[stated]}, "
        f"the chapters first use it in {first}")


@pytest.mark.parametrize("meaning", sorted(FORBIDDEN))
def test_no_second_meaning(meaning):
    hits = []
    for pat in FORBIDDEN[meaning]:
        if pat.startswith("TEXT:"):
            rx = re.compile(pat[5:])
            for f, t in CHAPTERS.items():
                body = prose(t)
                hits += [f"{f}:{body.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
                         for m in rx.finditer(body)]
            continue
        rx = re.compile(pat)
        hits += [f"{f}:{line}: {s[:80]!r}" for f, segs in MATHS.items() for line, s in segs
                 if rx.search(s)]
    assert not hits, f"{meaning}; a second meaning at\n" + "\n".join(hits)


def test_patterns_can_fail():
    """Each forbidden pattern matches the collision it was written for."""
    samples = {
        "γ is the spectral gap (Euler's constant is γ_E)": "$\\log d - \\gamma$",
        "ε is 1 − λ": "$\\varepsilon_n$",
        "c(β) is the waiting constant": "$c^2 = 4$",
        "d is a degree (JSQ's sample size is k)": "$d(n)$",
        "m is the smallest degree": "$H_m$",
        "T_0 is a burn-in": "$\\E T_0$",
        "r is a number of replications": "$r(a; b)$",
        "α(β) is Halfin–Whitt's constant": "$\\alpha = 2.5$",
        "g(x) is xφ(x)": "$\\bar g$",
        "U is the push of the diffusion": "$\\det(U + zA)$",
        "W is a waiting time": "$W_{jj}$",
        "X_1, X_2 are the diffusion's coordinates": "$X_1, \\dots, X_k$",
        "k is JSQ's sample size": "$Poisson(1/(2k))$",
    }
    assert set(samples) == set(FORBIDDEN)
    for meaning, sample in samples.items():
        assert any(re.search(p, sample) for p in FORBIDDEN[meaning] if not p.startswith("TEXT:")), meaning
