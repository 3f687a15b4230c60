"""Order claims: a family of "a < b" between independent estimates, and its verdict line.

A chapter that claims an order ("resampling lowers R in every cell", "δ₂
beats Poisson(2) beats ½δ₀ + ½δ₄") must *show* every difference, in the
claimed direction: each claim is a two-sided Student-t test of ``a = b``,
the family is tested by Holm's procedure (:func:`~qlib.stats.families.simultaneous`),
and the order holds when every test rejects and every difference has the
claimed sign. :func:`ordered` builds that family, :func:`order_holds` reads its
verdict, and :func:`order_check` turns it into the one glued line of
:mod:`qlib.stats.verdict` ("shown", with the smallest ``t`` against the
critical value and the smallest difference detected with 80 % power).

Examples
--------
>>> from qlib.stats import replication_ci
>>> from qlib.stats.order import ordered, order_holds
>>> b = replication_ci([2.0, 2.1, 1.9, 2.05])
>>> order_holds(ordered([(1.0, b), (b, 3.5)]))       # exact numbers on either side
True
"""
from __future__ import annotations

import numpy as np

from qlib.stats.families import Family, simultaneous
from qlib.stats.verdict import Check
from typing import TYPE_CHECKING
if TYPE_CHECKING:   # names for the annotations only
    from collections.abc import Sequence

__all__ = ["ordered", "order_holds", "order_check", "OrderCheck"]


def _triple(x) -> tuple[float, float, float]:
    """(mean, se, df) of a ReplicationCI-like object, or (x, 0, inf) of a number."""
    if hasattr(x, "se") and hasattr(x, "mean"):
        return float(np.asarray(x.mean)), float(np.asarray(x.se)), float(np.asarray(getattr(x, "df", np.inf)))
    if isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool):
        return float(x), 0.0, float("inf")
    raise TypeError(f"each side of a pair must be a number or have .mean and .se, got {type(x).__name__}")


def ordered(pairs: Sequence[tuple[object, object]], *, level: float = 0.95,
            method: str = "holm") -> Family:
    """The family of claims ``a < b``, one per pair, as two-sided tests of ``a = b``.

    Parameters
    ----------
    pairs : sequence of (a, b)
        Each side is an exact number or an estimate with ``mean``, ``se`` and
        ``df`` (a :class:`~qlib.stats.intervals.ReplicationCI`). The two sides
        of a pair must be independent; the difference ``b − a`` gets the
        standard error ``hypot(se_a, se_b)`` and the smaller of the two
        degrees of freedom (a lower bound on Welch's).
    level : float, default 0.95
        Family-wise level.
    method : {"holm", "bonferroni"}
        Multiplicity correction.

    Returns
    -------
    Family
        Of the differences ``b − a`` against 0; read it with :func:`order_holds`.

    Raises
    ------
    ValueError
        When ``pairs`` is empty or a pair has no exact-or-estimated side with
        a positive standard error.

    Examples
    --------
    >>> from qlib.stats import replication_ci
    >>> a, b = replication_ci([1.0, 1.1, 0.9, 1.0]), replication_ci([2.0, 2.1, 1.9, 2.05])
    >>> bool(ordered([(a, b)]).reject[0])
    True
    """
    pairs = list(pairs)
    if not pairs:
        raise ValueError("pairs must hold at least one (a, b)")
    A = np.array([_triple(p[0]) for p in pairs])
    B = np.array([_triple(p[1]) for p in pairs])
    se = np.hypot(A[:, 1], B[:, 1])
    if np.any(~(se > 0)):
        raise ValueError("pairs: every pair needs at least one estimated side (se > 0)")
    return simultaneous(B[:, 0] - A[:, 0], se, np.minimum(A[:, 2], B[:, 2]), level=level, method=method)


def order_holds(fam: Family) -> bool:
    """True when every equality is rejected and every difference ``b − a`` is positive."""
    if not isinstance(fam, Family):
        raise TypeError(f"fam must be a Family, got {type(fam).__name__}")
    return bool(np.all(fam.reject) and np.all(np.asarray(fam.t) > 0))


class OrderCheck(Check):
    """A :class:`~qlib.stats.verdict.Check` for an order family: worded "shown" / "NOT shown"."""

    def finding(self) -> str:
        """Smallest ``t`` against the critical value, and the detectable difference."""
        f = lambda x: (f"{100 * x:.2g} %" if self.percent else f"{x:.3g}")  # noqa: E731
        word, rel = ("shown", ">") if self.passed else ("NOT shown", "≤")
        how = f", {self.method}" if self.method else ""
        return (f"{word} (smallest t {self.value:.2f} {rel} critical {self.threshold:.2f}{how}); "
                f"differences of {f(self.sensitivity)} are detected with 80 % power")


def order_check(fam: Family, claim: str, *, percent: bool = False) -> OrderCheck:
    """The verdict of an order family as one line.

    Parameters
    ----------
    fam : Family
        From :func:`ordered`.
    claim : str
        The order in words ("resampled below static in every cell").
    percent : bool
        Show the detectable difference as a percentage (relative differences).

    Examples
    --------
    >>> from qlib.stats import replication_ci
    >>> b = replication_ci([2.0, 2.1, 1.9, 2.05])
    >>> print(order_check(ordered([(1.0, b), (b, 3.5)]), "1 < b < 3.5").line()[:32])
    ✓ 1 < b < 3.5: shown (smallest t
    """
    t = np.asarray(fam.t, dtype=float)
    method = f"{fam.method.capitalize()}, {fam.m} claims" if fam.m > 1 else "t-test"
    return OrderCheck(claim, "significance", float(np.min(t)), float(np.max(fam.crit)),
                      float(np.max(fam.detectable)), order_holds(fam), method, percent)
