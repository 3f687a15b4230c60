"""One-line messages about long work: the first compilation, and solves that will take long."""
import os
import sys

_told = set()


def _visible() -> bool:
    """Messages go to stderr in a terminal (or with ``QLIB_VERBOSE=1``); never into a
    notebook's output unless asked (``QLIB_VERBOSE=1``), and never with ``QLIB_VERBOSE=0``."""
    v = os.environ.get("QLIB_VERBOSE")
    if v is not None:
        return v not in ("", "0")
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def say(msg: str, *, force: bool = False) -> None:
    """Print ``qlib: msg`` on one line of stderr (where visible, or when ``force``)."""
    if force or _visible():
        print(f"qlib: {msg}", file=sys.stderr, flush=True)


def cold(dispatcher) -> bool:
    """Whether the first call of a numba ``dispatcher`` compiles: nothing compiled in
    this process and no cache on disk (numba keeps it next to the package, or in the
    user's cache folder where the package's folder is read-only)."""
    if getattr(dispatcher, "signatures", None):
        return False
    try:
        return not os.path.exists(dispatcher._cache._cache_file._index_path)
    except AttributeError:
        return True


def compile_notice(dispatcher, what: str) -> None:
    """Say "compiling kernels (once)" before the first call of a numba ``dispatcher``
    whose on-disk cache is still empty (later calls and processes load the cache)."""
    if what in _told or getattr(dispatcher, "signatures", None):
        return
    _told.add(what)
    try:
        cold = not os.path.exists(dispatcher._cache._cache_file._index_path)
    except AttributeError:
        cold = True
    if cold:
        say(f"compiling the {what} kernels (once per install: 10-30 s on an idle machine, longer on a "
            f"busy one; later calls and processes load them from numba's disk cache)")
