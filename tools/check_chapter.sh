#!/usr/bin/env bash
# Check one or more chapters in isolation: nbval on each, then a strict
# jupyter-book build of a tiny book holding only intro + these chapters.
# Usage: tools/check_chapter.sh chapters/foo.md [chapters/bar.md ...]
# Cross-references into chapters not listed will warn here; that is expected.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN="$ROOT/.venv/bin"
TMP="$(mktemp -d /tmp/check_chapter.XXXXXX)"
mkdir -p "$TMP/chapters"
cp "$ROOT/_config.yml" "$ROOT/references.bib" "$ROOT/intro.md" "$TMP/"
cp -r "$ROOT/_ext" "$TMP/"
{
  echo "format: jb-book"; echo "root: intro"; echo "chapters:"
  for f in "$@"; do
    cp "$ROOT/$f" "$TMP/chapters/"
    echo "  - file: chapters/$(basename "${f%.md}")"
  done
  if [ -f "$ROOT/chapters/bibliography.md" ]; then
    cp "$ROOT/chapters/bibliography.md" "$TMP/chapters/"; echo "  - file: chapters/bibliography"
  fi
} > "$TMP/_toc.yml"
for f in "$@"; do
  head -2 "$ROOT/$f" | grep -q '^jupytext:' || continue   # a plain page: nothing to execute
  nb="$TMP/nbval_$(basename "${f%.md}").ipynb"
  "$BIN/jupytext" --quiet --to ipynb -o "$nb" "$ROOT/$f"
  ( cd "$ROOT/chapters" && time "$BIN/python" -m pytest -q -p no:cacheprovider --nbval-lax "$nb" )
done
rm -f "$TMP"/nbval_*.ipynb
( cd "$TMP" && "$BIN/jupyter-book" build -W -n --keep-going . )
echo "check_chapter: OK ($TMP)"
