"""Share of a chapter's prose about the checking machinery.

Prose = the Markdown outside code cells, directives' option lines and math
blocks, split into paragraphs. A paragraph is "about checking" when it names
the machinery (Holm, TOST, margins, burn-in, pilots, critical values,
detectable/resolvable deviations, replications, equivalence, power, batch
means, halves test, Student-t, Bonferroni, significance). Share = words in such
paragraphs / all prose words. Usage: ``python tools/checking_share.py chapters/*.md`` from the book's root.
"""
import re, sys
from pathlib import Path

KEY = re.compile(r"\b(holm|tost|margin|burn-?in|pilot|critical value|detectab|resolvab|"
                 r"replicat|equivalen|power|batch mean|halves|student|bonferroni|"
                 r"significan|family-?wise|p-value|null hypothesis|intersection.union)", re.I)

def prose_paragraphs(text):
    out, cur, in_code, in_math = [], [], False, False
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("```") or s.startswith(":::"):
            if s.startswith("```{code-cell") or s.startswith("```{glue") or (in_code and s == "```"):
                in_code = not in_code if not s.startswith("```{glue") else in_code
            cur and out.append(" ".join(cur)); cur = []
            continue
        if in_code:
            continue
        if s.startswith("$$"):
            in_math = not in_math if s == "$$" or not s.endswith("$$") or len(s) == 2 else in_math
            continue
        if in_math or s.startswith(":") or s.startswith("---") and not cur:
            continue
        if not s:
            cur and out.append(" ".join(cur)); cur = []
        else:
            cur.append(s)
    cur and out.append(" ".join(cur))
    return out

def share(path):
    text = Path(path).read_text()
    # drop the closing checks section: it is where the machinery is meant to live
    main = re.split(r"^## How these numbers were checked", text, flags=re.M)[0]
    paras = prose_paragraphs(main)
    words = [len(p.split()) for p in paras]
    chk = [w for p, w in zip(paras, words) if KEY.search(p)]
    tot = sum(words)
    allp = prose_paragraphs(text)
    aw = sum(len(p.split()) for p in allp)
    ac = sum(len(p.split()) for p in allp if KEY.search(p))
    return tot and sum(chk) / tot, aw and ac / aw

if __name__ == "__main__":
    for f in sys.argv[1:]:
        a, b = share(f)
        print(f"{Path(f).stem:22s} main text {a:6.1%}   whole chapter {b:6.1%}")
