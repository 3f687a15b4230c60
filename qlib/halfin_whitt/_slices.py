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


def progress_bar(progress: bool, total: float, unit: str, desc: str):
    """A tqdm bar over ``total`` when ``progress``, else an object whose
    ``update`` and ``close`` do nothing."""
    if not progress:
        return _NoBar()
    from tqdm.auto import tqdm
    return tqdm(total=total, unit=unit, desc=desc)
