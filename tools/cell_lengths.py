"""The code cells' lengths, chapter by chapter: count, median, mean, longest.

Lines are counted as tests/test_chapter_cells.py counts them (the option block
and blank lines aside, comments included). The house style asks for a median
of at most 8 lines; chapters above it are marked.

Usage: python tools/cell_lengths.py [chapters/foo.md ...]
"""
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from test_chapter_cells import CHAPTERS, cells  # noqa: E402

TARGET = 8


def main(paths):
    every = []
    for p in paths:
        n = [len(c) for c in cells(p)]
        if not n:
            continue
        every += n
        mark = "" if statistics.median(n) <= TARGET else "  > 8"
        print(f"{p.stem:22s} cells {len(n):3d}  median {statistics.median(n):5.1f}  "
              f"mean {statistics.mean(n):5.1f}  longest {max(n):3d}{mark}")
    if every:
        print(f"{'all':22s} cells {len(every):3d}  median {statistics.median(every):5.1f}")


if __name__ == "__main__":
    main([Path(a).resolve() for a in sys.argv[1:]] or CHAPTERS)
