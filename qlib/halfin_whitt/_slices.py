"""Long kernel runs cut into slices, so that a progress bar can follow them.

The Halfin–Whitt kernels resume from their state, so a run cut at the slice
ends below is bit for bit the uncut run; without ``progress`` there is one
slice.
"""
from __future__ import annotations

SLICES = 100        # slices of a run shown with a progress bar


def slice_ends(t_end: float, progress: bool) -> list[float]:
    """The ends of the slices of ``[0, t_end]``: ``t_end`` alone without a bar."""
    k = SLICES if progress else 1
    return [t_end if j == k else t_end * j / k for j in range(1, k + 1)]


class _NoBar:
    n = 0.0

    def update(self, _step: float) -> None:
        pass

    def close(self) -> None:
        pass


class _Bar:
    """A tqdm bar whose clock starts after the first slice: the first slice may hold
    the kernel's one-off compilation, which would make the rate, and so the ETA, wrong
    by a large factor. Until then the bar says that it is compiling, when it is."""

    def __init__(self, bar, total: float, compiling: bool) -> None:
        self._bar, self._total, self._first = bar, total, True
        if compiling:
            bar.set_postfix_str("compiling the kernel (once per machine, then cached)", refresh=True)

    @property
    def n(self) -> float:
        return self._bar.n

    def update(self, step: float) -> None:
        if self._first:
            self._first = False
            self._bar.set_postfix_str("", refresh=False)
            self._bar.reset(total=self._total)      # the clock starts now, at the first slice's end
        self._bar.update(step)

    def close(self) -> None:
        self._bar.close()


def progress_bar(progress: bool, total: float, unit: str, desc: str, *, kernel=None):
    """A tqdm bar over ``total`` when ``progress``, else an object whose
    ``update`` and ``close`` do nothing. ``kernel`` (a numba dispatcher) not yet
    compiled in this process: the bar says so until the first slice is done."""
    if not progress:
        return _NoBar()
    from tqdm.auto import tqdm
    from qlib._feedback import cold
    return _Bar(tqdm(total=total, unit=unit, desc=desc), total,
                kernel is not None and cold(kernel))
