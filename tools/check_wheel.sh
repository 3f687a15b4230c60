#!/usr/bin/env bash
# The library as others install it, in full: build the wheel from the tracked files,
# install it into a fresh virtual environment outside the repository, and run every
# library test there (the book's tests, marked in tests/conftest.py, aside).
# `make test` runs the same check on a fast sample of the library's tests.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
QLIB_WHEEL_TESTS=all "$ROOT/.venv/bin/python" -m pytest -q -p no:cacheprovider tests/test_wheel.py "$@"
