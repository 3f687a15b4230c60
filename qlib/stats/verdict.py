"""One-line verdicts: a check's outcome as the sentence a chapter glues.

A chapter states a finding and, beside it, the outcome of the check behind it
in one line the reader can skim; the design of the check (pilots, margins,
burn-in) sits in the chapter's closing section and the conventions in the
book's methods appendix. :class:`Check` is that line as a record: the claim,
the method, the statistic against its threshold, what the check could resolve
or detect, and the verdict. :class:`Checks` collects a chapter's checks, glues
each line under a key, fails (``AssertionError``) on a required check that did
not pass, and renders the chapter's closing "Checks" table.

Four kinds of check, each worded for what it can show:

``"equivalence"``
    "agrees" / "is over": two one-sided tests against a margin fixed before
    the runs (:func:`~qlib.stats.tost.equivalence`). The line gives the
    achieved bound, the margin and the resolvable margin.
``"significance"``
    a simulator against an exact value (the null is "the simulator is
    right"): the line says *not rejected* and the deviation the test would
    have detected with 80 % power; it never says "agrees".
``"bound"``
    a deterministic error against a tolerance argued in the text (a
    truncation bound, a quadrature error).
``"estimate"``
    a number reported with its uncertainty and no pass/fail claim (an audit).
    An estimate is not a passed test: its mark is the neutral ``–``, never
    ``✓``, in its line and in the checks table.

Examples
--------
>>> from qlib.stats import simultaneous, equivalence
>>> from qlib.stats.verdict import Check, Checks
>>> fam = simultaneous([0.101, 0.099], se=[0.002, 0.002], df=9, target=0.1)
>>> print(Check.from_family(fam, "simulated q(1) equals λ").line())
✓ simulated q(1) equals λ: not rejected (worst |t| 0.50 < critical 2.69, Holm, 2 checks); a deviation of 0.0072 would have been detected
>>> eq = equivalence(0.004, se=0.001, df=9, margin=0.02)
>>> print(Check.from_equivalence(eq, "burn-in is over", percent=True).line())
✓ burn-in is over: within 0.58 % (margin 2 %, resolvable 0.32 %; TOST)
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from typing import TYPE_CHECKING

if TYPE_CHECKING:   # names for the annotations only
    from numpy.typing import ArrayLike

__all__ = ["Check", "Checks", "level_one_check"]

_KINDS = ("equivalence", "significance", "bound", "estimate")


def _fmt(x: float | None, percent: bool, unit: str) -> str:
    if x is None or not np.isfinite(x):
        return "n/a"
    if percent:
        v = 100.0 * float(x)
        return f"{v:.2g} %" if abs(v) < 1 else f"{v:.3g} %"
    return f"{float(x):.3g}{(' ' + unit) if unit else ''}"


@dataclass(frozen=True)
class Check:
    """The outcome of one check, as a record and as one line.

    Attributes
    ----------
    claim : str
        What is claimed, in the reader's words ("agrees with the exact chain").
    kind : {"equivalence", "significance", "bound", "estimate"}
        How the claim is tested (see the module docstring).
    value : float
        The finding: the achieved equivalence bound, the worst ``|t|``, the
        error, or the estimate.
    threshold : float
        The margin, the critical value or the tolerance (``nan`` for an
        estimate).
    sensitivity : float
        The resolvable margin (equivalence), the deviation detected with 80 %
        power (significance), ``nan`` otherwise.
    passed : bool
        The verdict.
    method : str
        A short name of the test ("TOST, intersection-union, 8 cells").
    percent : bool
        Show ``value``, ``threshold`` and ``sensitivity`` as percentages
        (relative quantities); ignored for the ``|t|`` of a significance test.
    unit : str
        Unit word appended to absolute quantities.
    """

    claim: str
    kind: str
    value: float
    threshold: float
    sensitivity: float
    passed: bool
    method: str = ""
    percent: bool = False
    unit: str = ""

    def __post_init__(self):
        if self.kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}, got {self.kind!r}")
        if not isinstance(self.claim, str) or not self.claim:
            raise TypeError("claim must be a non-empty str")

    # -- constructors from qlib.stats results --------------------------------
    @classmethod
    def from_equivalence(cls, eq, claim: str, *, percent: bool = False, unit: str = "",
                         method: str | None = None) -> "Check":
        """From an :class:`~qlib.stats.tost.Equivalence` (or anything
        with ``achieved``, ``margin``, ``resolvable``, ``passed``, ``m``): the
        worst check relative to its margin."""
        ach = np.atleast_1d(np.asarray(eq.achieved, dtype=float))
        mar = np.broadcast_to(np.atleast_1d(np.asarray(eq.margin, dtype=float)), ach.shape)
        res = np.broadcast_to(np.atleast_1d(np.asarray(eq.resolvable, dtype=float)), ach.shape)
        i = int(np.argmax(ach / mar))
        if method is None:
            how = {"iut": "TOST, intersection-union", "bonferroni": "TOST, Bonferroni"}.get(
                getattr(eq, "method", ""), "TOST")
            m = int(getattr(eq, "m", 1))
            method = how if m == 1 else f"{how}, {m} checks"
            if m == 1:
                method = "TOST"
        return cls(claim, "equivalence", float(ach[i]), float(mar[i]), float(np.max(res / mar) * mar[i]),
                   bool(eq.passed), method, percent, unit)

    @classmethod
    def from_family(cls, fam, claim: str, *, unit: str = "", percent: bool = False,
                    method: str | None = None) -> "Check":
        """From a :class:`~qlib.stats.families.Family` (significance test of
        ``estimate = target``): worst ``|t|`` against the largest critical value,
        with the largest deviation detected with 80 % power."""
        t = np.abs(np.atleast_1d(fam.t))
        if method is None:
            method = f"{fam.method.capitalize()}, {fam.m} checks" if fam.m > 1 else "t-test"
        return cls(claim, "significance", float(np.max(t)), float(np.max(fam.crit)),
                   float(np.max(fam.detectable)), bool(fam.passed), method, percent, unit)

    @classmethod
    def from_burn_in(cls, b, claim: str = "burn-in is over", *, percent: bool = False,
                     unit: str = "") -> "Check":
        """From a :class:`~qlib.stats.burn_in.BurnIn` or
        :class:`~qlib.stats.burn_in.BurnInFamily` tested with a margin."""
        eq = getattr(b, "equivalence", None)
        if eq is None:
            raise ValueError("a burn-in verdict needs an equivalence test: pass margin= to "
                             "burn_in_check / burn_in_family")
        return cls.from_equivalence(eq, claim, percent=percent, unit=unit)

    @classmethod
    def bound(cls, claim: str, error: float, tolerance: float, *, method: str = "",
              percent: bool = False, unit: str = "") -> "Check":
        """A deterministic error against a tolerance argued in the text."""
        error, tolerance = float(error), float(tolerance)
        if not tolerance > 0:
            raise ValueError(f"tolerance must be > 0, got {tolerance}")
        return cls(claim, "bound", abs(error), tolerance, math.nan,
                   bool(abs(error) <= tolerance), method, percent, unit)

    @classmethod
    def estimate(cls, claim: str, value: float, half_width: float = math.nan, *,
                 method: str = "", percent: bool = False, unit: str = "") -> "Check":
        """A reported number with its half-width: an audit, not a test.

        It never fails (``passed`` is true, so :meth:`Checks.add` does not
        raise), but it is not shown as passed: its mark is the neutral ``–``.

        Examples
        --------
        >>> print(Check.estimate("leftover bias", 0.01, 0.002).line())
        – leftover bias: 0.01 ± 0.002
        """
        return cls(claim, "estimate", float(value), math.nan, float(half_width), True,
                   method, percent, unit)

    # -- output ---------------------------------------------------------------
    @property
    def mark(self) -> str:
        """``✓`` when passed, ``✗`` otherwise; ``–`` (no verdict) for an estimate."""
        if self.kind == "estimate":
            return "–"
        return "✓" if self.passed else "✗"

    def finding(self) -> str:
        """The measured part of the line, without the claim."""
        f = lambda x: _fmt(x, self.percent, self.unit)  # noqa: E731
        how = f"; {self.method}" if self.method else ""
        if self.kind == "equivalence":
            word = "within" if self.passed else "NOT shown: bound"
            return f"{word} {f(self.value)} (margin {f(self.threshold)}, resolvable {f(self.sensitivity)}{how})"
        if self.kind == "significance":
            word = "not rejected" if self.passed else "REJECTED"
            rel = "<" if self.passed else "≥"
            how = f", {self.method}" if self.method else ""
            return (f"{word} (worst |t| {self.value:.2f} {rel} critical {self.threshold:.2f}{how}); "
                    f"a deviation of {f(self.sensitivity)} would have been detected")
        if self.kind == "bound":
            rel = "≤" if self.passed else ">"
            return f"error {f(self.value)} {rel} tolerance {f(self.threshold)}{how.replace(';', ',', 1) if how else ''}"
        pm = f" ± {f(self.sensitivity)}" if np.isfinite(self.sensitivity) else ""
        return f"{f(self.value)}{pm}{(' (' + self.method + ')') if self.method else ''}"

    def line(self) -> str:
        """The one line a chapter glues: mark, claim, finding."""
        return f"{self.mark} {self.claim}: {self.finding()}"

    def require(self) -> "Check":
        """Raise ``AssertionError`` with the line unless passed; return self."""
        if not self.passed:
            raise AssertionError(self.line())
        return self

    def to_dict(self) -> dict:
        """The record as a plain dict."""
        return asdict(self)

    def __str__(self) -> str:
        return self.line()

    def _repr_markdown_(self) -> str:
        return self.line()


class Checks:
    """A chapter's checks: glue each line, fail on a required check, render the table.

    Parameters
    ----------
    chapter : str
        Prefix of the glue keys (``"{chapter}-check-{key}"``) and of the table's
        key (``"{chapter}-checks"``).
    glue : bool, default True
        Glue through ``myst_nb.glue`` when it is importable (in the book); off
        it is a no-op, so the same code runs in a plain script.

    Examples
    --------
    >>> from qlib.stats.verdict import Check, Checks
    >>> checks = Checks("demo", glue=False)
    >>> _ = checks.add("trunc", Check.bound("truncation error", 3e-9, 1e-8))
    >>> print(checks.markdown().splitlines()[2])
    | truncation error | bound | 3e-09 | 1e-08 | n/a | ✓ |
    """

    def __init__(self, chapter: str, *, glue: bool = True):
        if not isinstance(chapter, str) or not chapter:
            raise TypeError("chapter must be a non-empty str")
        self.chapter = chapter
        self.rows: dict[str, Check] = {}
        self._glue = None
        if glue:
            try:
                from myst_nb import glue as _g
                self._glue = _g
            except ImportError:  # outside the book
                self._glue = None

    def key(self, name: str) -> str:
        """The glue key of check ``name``."""
        return f"{self.chapter}-check-{name}"

    def add(self, name: str, check: Check, *, required: bool = True) -> Check:
        """Record ``check`` under ``name``, glue its line, and assert it when ``required``.

        A check that is not required (an audit, a claim the design cannot
        resolve and says so) is recorded and shown with its mark, but does not
        fail the build.
        """
        if not isinstance(check, Check):
            raise TypeError(f"check must be a Check, got {type(check).__name__}")
        if name in self.rows:
            raise ValueError(f"a check named {name!r} is already recorded")
        self.rows[name] = check
        if self._glue is not None:
            self._glue(self.key(name), check.line(), display=False)
        if required:
            check.require()
        return check

    def markdown(self) -> str:
        """The Checks table as a Markdown pipe table."""
        f = lambda c, x: _fmt(x, c.percent, c.unit)  # noqa: E731
        out = ["| check | kind | finding | threshold | resolvable / detectable | verdict |",
               "|---|---|---|---|---|---|"]
        for c in self.rows.values():
            val = f"{c.value:.2f} (\\|t\\|)" if c.kind == "significance" else f(c, c.value)
            thr = f"{c.threshold:.2f}" if c.kind == "significance" else f(c, c.threshold)
            claim = c.claim.replace("|", "\\|")
            out.append(f"| {claim} | {c.kind} | {val} | {thr} | {f(c, c.sensitivity)} | {c.mark} |")
        return "\n".join(out)

    def table(self):
        """The table as an IPython ``Markdown`` object (display it, or glue it)."""
        from IPython.display import Markdown
        return Markdown(self.markdown())

    def glue_table(self) -> str:
        """Glue the table under ``"{chapter}-checks"``; return the key."""
        key = f"{self.chapter}-checks"
        if self._glue is not None:
            self._glue(key, self.table(), display=False)
        return key

    @property
    def passed(self) -> bool:
        """True when every recorded check passed."""
        return all(c.passed for c in self.rows.values())

    def __len__(self) -> int:
        return len(self.rows)

    def __repr__(self) -> str:
        bad = sum(not c.passed for c in self.rows.values())
        return f"Checks({self.chapter!r}: {len(self)} checks, {bad} not passed)"

    def _repr_markdown_(self) -> str:
        return self.markdown()


def level_one_check(estimates: ArrayLike, se: ArrayLike, df: ArrayLike, lam: ArrayLike, *, level: float = 0.95,
                    claim: str = "the busy fraction equals λ") -> Check:
    """The exact identity every stationary cell gets for free: ``E q(1) = λ``.

    In a stationary system with unit service rate the fraction of busy
    servers has mean ``λ`` (rate balance), whatever the graph, the degree law
    or the resampling rate. A simulator is wrong, or a run not stationary,
    when its ``q(1)`` misses ``λ`` by more than its noise. Tested as a Holm
    family over the cells (the null: the simulator is right).

    Parameters
    ----------
    estimates, se : array_like
        One ``q(1)`` estimate per cell and its standard error.
    df : float or array_like
        Degrees of freedom of each s.e. (``r − 1`` for ``r`` replications).
    lam : float or array_like
        The load of each cell.

    Examples
    --------
    >>> print(level_one_check([0.899, 0.902], [0.001, 0.0015], 9, 0.9).passed)
    True
    """
    from qlib.stats.families import simultaneous
    fam = simultaneous(estimates, se, df, target=lam, level=level, method="holm")
    return Check.from_family(fam, claim)
