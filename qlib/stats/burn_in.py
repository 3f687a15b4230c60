"""Burn-in tests: does the start still show in the measurement window?"""
from __future__ import annotations

import math
import numbers
from collections.abc import Mapping

import numpy as np
from dataclasses import dataclass
from typing import TYPE_CHECKING
from qlib._lazy import scipy_stats as _st

from qlib.stats.tost import equivalence
from qlib.stats.families import detectable
if TYPE_CHECKING:   # names for the annotations only
    from qlib.stats.verdict import Check
from qlib.stats.intervals import (_as_float_array, _check_dt, _check_level, _scalar,
                                  replication_ci, t_quantile)
from qlib.stats.batch import _iat_and_length, batch_means
from typing import TYPE_CHECKING
from qlib.stats._results import fields_eq
if TYPE_CHECKING:   # names for the annotations only
    from numpy.typing import ArrayLike

__all__ = ['burn_in_check', 'BurnIn', 'burn_in_family', 'BurnInFamily', 'leftover_bias',
           'tau_upper', 'TauUpper', 'mm1_relaxation_time', 'bias_check']


# ---------------------------------------------------------------- burn-in

@fields_eq
@dataclass(frozen=True)
class BurnIn:
    """First half against second half of the measurement window.

    Attributes
    ----------
    diff, se, df : float or ndarray
        Mean of the first half minus mean of the second half, its s.e. and
        degrees of freedom.
    t, p : float or ndarray
        Test statistic and two-sided p-value.
    crit : float
        Critical value at the family level (Bonferroni over the columns).
    final_half_width : float or ndarray
        Half-width of the interval of the whole window (the one the chapter
        reports); the leftover bias is judged against it.
    detectable : float or ndarray
        Smallest first-vs-second-half difference detected with 80 % power.
    passed : bool
        Without a margin: no column's halves differ significantly. With a
        margin: every column's difference is shown to lie within
        ``±margin`` (``equivalent``).
    margin : float or ndarray or None
        The equivalence margin (``None``: no equivalence test).
    equivalent : bool or ndarray of bool or None
        Per column: the two one-sided tests show ``|diff| < margin``
        (Bonferroni over the columns); ``None`` without a margin.
    equivalence : Equivalence or None
        The full equivalence result (bounds, ``achieved`` and
        ``resolvable`` margins).
    """

    diff: object
    se: object
    df: object
    t: object
    p: object
    crit: float
    final_half_width: object
    detectable: object
    passed: bool
    margin: object = None
    equivalent: object = None
    equivalence: object = None

    @property
    def margin_used(self):
        """Largest share of its margin that a column's equivalence bound uses
        (``max |bound| / margin``; below 1 iff passed); ``nan`` without a margin."""
        if self.equivalence is None:
            return float("nan")
        e = self.equivalence
        return float(np.max(np.atleast_1d(e.achieved) / np.atleast_1d(e.margin)))

    @property
    def margin_resolvable(self):
        """Largest share of its margin that the test resolves with 80 % power
        (``max resolvable / margin``; well below 1: the test was not bound to
        fail); ``nan`` without a margin."""
        if self.equivalence is None:
            return float("nan")
        e = self.equivalence
        return float(np.max(np.atleast_1d(e.resolvable) / np.atleast_1d(e.margin)))

    @property
    def one_sided_crit(self):
        """One-sided critical value of the equivalence test (largest over the
        columns); ``nan`` without a margin."""
        return float("nan") if self.equivalence is None else float(np.max(self.equivalence.crit))

    def report(self, name="burn-in"):
        """One line to print next to the check."""
        d = np.atleast_1d(self.diff)
        if self.equivalence is not None:
            e = self.equivalence
            ratio = np.atleast_1d(e.achieved) / np.broadcast_to(np.atleast_1d(e.margin), d.shape)
            i = int(np.argmax(ratio))
            return (f"{name}: first - second half = {float(d[i]):.3g}, bounds "
                    f"[{float(np.atleast_1d(e.lower)[i]):.3g}, {float(np.atleast_1d(e.upper)[i]):.3g}] "
                    f"vs margin ±{float(np.atleast_1d(e.margin)[i] if np.ndim(e.margin) else e.margin):.3g} "
                    f"(worst column; one-sided critical {float(np.max(e.crit)):.2f}); resolvable "
                    f"margin {float(np.max(e.resolvable)):.3g}, final half-width "
                    f"{float(np.max(np.atleast_1d(self.final_half_width))):.3g}; "
                    f"{'equivalent' if self.passed else 'NOT shown equivalent'}")
        return (f"{name}: first - second half = {float(np.max(np.abs(d))):.3g} (largest), "
                f"worst |t| = {float(np.max(np.abs(np.atleast_1d(self.t)))):.2f} vs "
                f"{self.crit:.2f}; detectable {float(np.max(np.atleast_1d(self.detectable))):.3g}, "
                f"final half-width {float(np.max(np.atleast_1d(self.final_half_width))):.3g}; "
                f"{'passed' if self.passed else 'FAILED'}")

    def __str__(self):
        return self.report()


def burn_in_check(path: ArrayLike, dt: float = 1.0, *, replications: bool = False,
                  level: float = 0.95, margin: float | ArrayLike | str | None = None,
                  method: str = "bonferroni", **batch_kw) -> BurnIn:
    """Test that the first and second halves of the measurement window agree.

    A burn-in that is too short leaves a trend in the window: the first half
    is further from equilibrium than the second. Without ``margin`` the
    check fails when the difference of the two half-window means is
    significant at ``1 − level`` (Bonferroni over columns) -- a test that a
    noisy run passes whatever its trend. With ``margin`` it is an
    *equivalence* test (:func:`~qlib.stats.tost.equivalence`, TOST): it passes only when the
    data show ``|first − second| < margin`` in every column, so a noisy run
    fails.

    What margin can be shown: the two halves are about independent, each
    with twice the variance of the whole window's mean, so the difference
    has about twice the final standard error, and TOST needs ``|diff| +
    t_{1−α} · se_diff < margin``. ``margin="final"`` (the final interval's
    half-width, ``≈ 2 se`` at 95 %) can therefore *never* be shown from the
    same data (it would need ``|diff| < (2 − 2·1.7) se``); a margin of
    about three final half-widths is the smallest these data resolve with
    80 % power (``.equivalence.resolvable`` gives it). To establish
    agreement within the final interval itself, make the burn-in data more
    precise than the estimate (more replications of the start), or pass a
    margin that the chapter justifies.

    Parameters
    ----------
    path : array_like
        Either one path, shape (N,) or (N, m) (time on axis 0; each half gets
        batch-means errors, :func:`~qlib.stats.batch.batch_means`), or, with
        ``replications=True``, independent replications of shape (r, N) or
        (r, N, m) (the paired half difference is tested with ``r − 1``
        degrees of freedom, the recommended form).
    dt : float, default 1.0
        Time between samples.
    replications : bool, default False
        Whether axis 0 indexes independent replications.
    level : float, default 0.95
        Family-wise level of the test.
    margin : None, float, array_like or "final", default None
        Equivalence margin for ``first − second`` (units of the path; one
        per column or broadcast); ``"final"``: the half-width of the final
        interval of each column (see above). ``None``: the significance test
        only.
    method : {"bonferroni", "iut"}
        How the equivalence test treats the columns (:func:`~qlib.stats.tost.equivalence`):
        per-column verdicts at family-wise ``level``, or one global verdict
        (intersection–union: every column, and every call, at ``level``; for
        a study whose claim is that *all* its cells are burnt in).
    **batch_kw
        Passed to :func:`~qlib.stats.batch.batch_means` for a single path.

    Returns
    -------
    BurnIn
    """
    level = _check_level(level)
    dt = _check_dt(dt)
    if replications:
        a = np.asarray(path, dtype=float)
        if a.ndim not in (2, 3) or a.shape[0] < 2 or a.shape[1] < 2:
            raise ValueError("with replications=True, path must have shape (r >= 2, N >= 2[, m])")
        if not np.all(np.isfinite(a)):
            raise ValueError("path must be finite (no nan/inf)")
        h = a.shape[1] // 2
        d = a[:, :h].mean(axis=1) - a[:, a.shape[1] - h:].mean(axis=1)
        ci = replication_ci(d, level)
        full = replication_ci(a.mean(axis=1), level)
        diff, se, df, fhw = ci.mean, ci.se, ci.df, full.half_width
    else:
        a = _as_float_array(path, "path", min_len=8)
        h = a.shape[0] // 2
        tau = batch_kw.pop("tau", None)
        if tau is None:
            # measured on the second half: a trend in the first would inflate it
            taus, lens = _iat_and_length(a[a.shape[0] - h:].reshape(h, -1), dt)
            tau = float(max(taus.max(), lens.max()))
        kw = dict(level=level, tau=tau, check=False, **batch_kw)
        b1 = batch_means(a[:h], dt, **kw)
        b2 = batch_means(a[a.shape[0] - h:], dt, **kw)
        full = batch_means(a, dt, **kw)
        diff = b1.mean - b2.mean
        se = np.sqrt(b1.se ** 2 + b2.se ** 2)
        df = min(b1.df, b2.df)
        fhw = full.half_width
    se_a = np.maximum(np.atleast_1d(np.asarray(se, dtype=float)), 1e-300)
    m = se_a.size
    t = np.atleast_1d(diff) / se_a
    p = 2 * _st.t.sf(np.abs(t), df)
    crit = float(t_quantile(1 - (1 - level) / (2 * m), df))
    det = detectable(se_a, df, m, level)
    passed = bool(np.all(np.abs(t) <= crit))
    eq = None
    if margin is not None:
        if isinstance(margin, str):
            if margin != "final":
                raise ValueError(f"margin must be None, a number > 0, an array or 'final', got {margin!r}")
            margin = fhw
        eq = equivalence(np.atleast_1d(diff), se_a, df, np.atleast_1d(np.asarray(margin, dtype=float)),
                         level=level, method=method)
        passed = eq.passed
        margin = _scalar(np.asarray(eq.margin))
    return BurnIn(diff, se, df, _scalar(t) if m > 1 else float(t[0]),
                  _scalar(p) if m > 1 else float(p[0]), crit, fhw,
                  det if m > 1 else float(np.atleast_1d(det)[0]), passed,
                  margin if eq is None or m > 1 else float(np.atleast_1d(margin)[0]),
                  None if eq is None else (eq.equivalent if m > 1 else bool(np.all(eq.equivalent))),
                  eq)


# ---------------------------------------------------------------- a study's cells

@fields_eq
@dataclass(frozen=True)
class BurnInFamily:
    """Result of :func:`~qlib.stats.burn_in.burn_in_family`: every cell of a study burnt in?

    Attributes
    ----------
    checks : dict
        Cell key -> its :class:`~qlib.stats.burn_in.BurnIn` (with an equivalence margin).
    used : dict
        Cell key -> the share of its margin that its equivalence bound uses
        (``max |bound| / margin``; below 1 iff the cell passes).
    """

    checks: dict
    used: dict

    @property
    def passed(self):
        """True when every cell is shown burnt in."""
        return all(b.passed for b in self.checks.values())

    @property
    def worst(self):
        """The key of the cell that uses most of its margin."""
        return max(self.used, key=self.used.get)

    @property
    def margin_used(self):
        """Largest share of its margin that a cell's bound uses."""
        return max(self.used.values())

    @property
    def margin_resolvable(self):
        """Largest share of its margin that a cell's test resolves with 80 % power."""
        return max(b.margin_resolvable for b in self.checks.values())

    def report(self, name="burn-in"):
        """One line: the number of cells and the worst cell's check."""
        return self.checks[self.worst].report(f"{name}, {len(self.checks)} cells; worst {self.worst}")

    def __len__(self):
        return len(self.checks)


def burn_in_family(halves: Mapping, margin: float | Mapping, *, relative: bool = False,
                   level: float = 0.95, method: str = "iut") -> BurnInFamily:
    """Equivalence burn-in test of every cell of a study (:func:`~qlib.stats.burn_in.burn_in_check`).

    Each cell holds independent replications of a windowed statistic
    (shape ``(r, N)``: replication by batch of the window); the cell passes
    when the data show that its first and second halves differ by less than
    its margin. The claim of a study is that *all* its cells are burnt in,
    so with ``method="iut"`` every cell is tested at ``level`` and the study
    fails if any cell does (intersection–union: no multiplicity correction).

    Parameters
    ----------
    halves : mapping
        Cell key -> array_like of shape ``(r >= 2, N >= 2)``.
    margin : float or mapping
        Equivalence margin (``> 0``), one for all cells or one per key.
    relative : bool, default False
        Whether ``margin`` is relative to the cell's mean (``margin · mean``).
    level : float, default 0.95
        Level of each cell's test.
    method : {"iut", "bonferroni"}
        As for :func:`~qlib.stats.tost.equivalence`, over the columns of one cell.

    Returns
    -------
    BurnInFamily
        ``.passed``, ``.worst``, ``.margin_used``, ``.report(name)``.

    Raises
    ------
    TypeError
        If ``halves`` is not a mapping.
    ValueError
        If it is empty, or a margin is missing or not ``> 0``.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> fam = burn_in_family({"a": rng.normal(1, 0.01, (10, 4))}, 0.05, relative=True)
    >>> fam.passed, fam.worst
    (True, 'a')
    """
    if not isinstance(halves, Mapping):
        raise TypeError(f"halves must be a mapping of cell -> array, got {type(halves).__name__}")
    if not halves:
        raise ValueError("halves must hold at least one cell")
    if not isinstance(relative, bool):
        raise TypeError(f"relative must be True or False, got {relative!r}")
    checks, used = {}, {}
    for k, h in halves.items():
        x = np.asarray(h, dtype=float)
        if isinstance(margin, Mapping):
            if k not in margin:
                raise ValueError(f"margin has no entry for cell {k!r}")
            mk = margin[k]
        else:
            mk = margin
        if isinstance(mk, bool) or not isinstance(mk, numbers.Real) or not mk > 0:
            raise ValueError(f"margin must be > 0, got {mk!r} for cell {k!r}")
        mk = float(mk) * (abs(float(np.mean(x))) if relative else 1.0)
        b = burn_in_check(x, replications=True, margin=mk, level=level, method=method)
        checks[k], used[k] = b, b.margin_used
    return BurnInFamily(checks, used)


def leftover_bias(diff: ArrayLike, window: float, tau: ArrayLike) -> float | np.ndarray:
    """Bound on the bias a window mean keeps from an exponential transient, given its halves.

    For a transient ``a·e^{−t/τ}`` over a measurement window of length ``W``
    the first-minus-second-half difference ``D`` and the bias of the whole
    window's mean ``b`` are tied by (``x = W/(2τ)``)

    .. math:: b = D \\, \\frac{1 + e^{-x}}{2 (1 - e^{-x})},

    never below ``D/2`` (reached only as ``τ/W → 0``), about ``D`` at
    ``W = 2τ``, ``2D`` at ``W = τ`` and ``4D`` at ``W = τ/2``. A halves test
    with margin ``m`` therefore bounds the leftover bias by
    ``leftover_bias(m, W, τ)``, not by ``m/2``, unless the transient has
    died out well inside the window. Where ``τ`` is not small against ``W``
    bracket the answer from two starts instead.

    Parameters
    ----------
    diff : float or array_like
        Halves difference (or the margin it was shown within), ``>= 0``.
    window : float
        Length ``W`` of the measurement window, ``> 0``.
    tau : float or array_like
        Relaxation time ``τ`` of the transient (e.g. the integrated
        autocorrelation time, :func:`~qlib.stats.batch.iat`), ``> 0``.

    Returns
    -------
    float or ndarray
        The bias bound, in the units of ``diff``.

    Examples
    --------
    >>> round(float(leftover_bias(1.0, window=2.0, tau=1.0)), 3)   # W = 2τ
    1.082
    >>> round(float(leftover_bias(1.0, window=100.0, tau=1.0)), 3)  # transient long gone
    0.5
    """
    d = np.asarray(diff, dtype=float)
    t = np.asarray(tau, dtype=float)
    if not (np.isfinite(window) and window > 0):
        raise ValueError(f"window must be finite and > 0, got {window!r}")
    if np.any(~(t > 0)):
        raise ValueError(f"tau must be > 0, got {tau!r}")
    if np.any(d < 0):
        raise ValueError("diff must be >= 0 (pass the absolute halves difference or margin)")
    e = np.exp(-float(window) / (2.0 * t))
    return _scalar(d * (1.0 + e) / (2.0 * (1.0 - e)))


# ---------------------------------------------------------------- τ for the bias bound

def mm1_relaxation_time(rho: float) -> float:
    """Relaxation time ``1/(1 − √ρ)²`` of the M/M/1 queue at load ``ρ``.

    The spectral gap of the M/M/1 generator is ``(1 − √ρ)²`` (unit service
    rate), so a transient near equilibrium decays like ``e^{−t(1−√ρ)²}``.
    It is about twice the queue length's integrated autocorrelation time
    ``(1 + ρ)/(1 − ρ)²`` at high load (380 against 190 at ``ρ = 0.9``): the
    stationary ``τ_int`` is not an upper bound of the transient's slowest
    time constant.

    Parameters
    ----------
    rho : float
        Load, in ``(0, 1)``.

    Returns
    -------
    float

    Examples
    --------
    >>> round(mm1_relaxation_time(0.9))
    380
    """
    if isinstance(rho, bool) or not isinstance(rho, numbers.Real) or not 0 < rho < 1:
        raise ValueError(f"rho must be in (0, 1), got {rho!r}")
    return float(1.0 / (1.0 - np.sqrt(float(rho))) ** 2)


@dataclass(frozen=True)
class TauUpper:
    """Result of :func:`tau_upper`: an upper bound of the slowest time constant.

    Attributes
    ----------
    value : float
        ``τ_up = max(ucl, model)``: what the bias bound is fed.
    ucl : float
        One-sided upper confidence limit of the mean ``τ̂`` over the
        replications, times the ``factor`` passed (``nan`` without
        replications).
    mean : float
        Mean of the replications' ``τ̂`` (``nan`` without replications).
    model : float
        The model's (fluid, linearised) relaxation time (``nan`` if none).
    r : int
        Number of replications' ``τ̂`` (0 if none).
    level : float
        One-sided confidence level of ``ucl``.
    """

    value: float
    ucl: float
    mean: float
    model: float
    r: int
    level: float

    @property
    def source(self) -> str:
        """``"model"`` or ``"replications"``: which of the two sets ``value``."""
        return "model" if np.isfinite(self.model) and self.model >= (
            self.ucl if np.isfinite(self.ucl) else -np.inf) else "replications"

    def __float__(self) -> float:
        return self.value


def tau_upper(taus: ArrayLike | None = None, *, model: float | None = None,
              level: float = 0.95, factor: float = 1.0) -> TauUpper:
    """An upper bound ``τ_up`` of a transient's slowest time constant.

    The halves-to-bias ratio of :func:`leftover_bias` needs ``τ`` to bound
    the transient's slowest time constant *from above*; a single run's
    ``τ̂``, a mean of ``τ̂``, or the stationary integrated autocorrelation
    time (half the relaxation time of M/M/1 at high load,
    :func:`mm1_relaxation_time`) can all fall below it. This takes the
    larger of the model's relaxation time (``1/γ``, ``γ`` the spectral gap
    of the fluid or linearised dynamics, where one exists) and the one-sided
    Student-t upper confidence limit ``mean + t_{level, r−1} s/√r`` of the
    replications' ``τ̂``, times ``factor``.

    An *integrated* autocorrelation time (:func:`~qlib.stats.batch.iat`) is
    never above the relaxation time of a reversible chain (its
    autocorrelation is a mixture of exponentials no slower than the spectral
    gap), and for M/M/1 it is below it by a factor between 1 and 2 at every
    load (``(1 + √ρ)²/(1 + ρ)``). Pass ``factor=2`` when ``taus`` are
    integrated autocorrelation times and the model's relaxation time is not
    known to dominate: the M/M/1 ratio, taken as the allowance.

    Parameters
    ----------
    taus : array_like or None
        One ``τ̂`` per independent replication (``>= 2`` values, finite and
        ``> 0``); ``None`` when only the model's relaxation time is known.
    model : float or None
        The model's relaxation time (``> 0``), if one exists.
    level : float, default 0.95
        One-sided confidence level of the upper limit.
    factor : float, default 1.0
        Multiplier (``>= 1``) of the upper limit (see above).

    Returns
    -------
    TauUpper
        ``.value`` is ``τ_up`` (``float(result)`` gives it too).

    Raises
    ------
    ValueError
        If neither ``taus`` nor ``model`` is given, ``taus`` has fewer than
        two values or a value not finite and ``> 0``, or ``model`` is not
        ``> 0``.

    Examples
    --------
    >>> t = tau_upper([180.0, 200.0, 190.0, 185.0], model=mm1_relaxation_time(0.9))
    >>> round(t.value), t.source, round(t.ucl, 1)
    (380, 'model', 198.8)
    >>> round(tau_upper([1.0, 1.2, 0.9]).value, 3)
    1.291
    >>> round(tau_upper([1.0, 1.2, 0.9], factor=2).value, 3)   # τ̂ integrated, no model
    2.582
    """
    level = _check_level(level)
    if taus is None and model is None:
        raise ValueError("tau_upper needs taus (one per replication), model, or both")
    mod = math.nan
    if model is not None:
        if isinstance(model, bool) or not isinstance(model, numbers.Real) or not (
                math.isfinite(model) and model > 0):
            raise ValueError(f"model must be finite and > 0, got {model!r}")
        mod = float(model)
    if isinstance(factor, bool) or not isinstance(factor, numbers.Real) or not (
            math.isfinite(factor) and factor >= 1):
        raise ValueError(f"factor must be finite and >= 1, got {factor!r}")
    ucl = mean = math.nan
    r = 0
    if taus is not None:
        t = np.asarray(taus, dtype=float).ravel()
        if t.size < 2:
            raise ValueError(f"taus must hold at least 2 replications' values, got {t.size}")
        if not np.all(np.isfinite(t)) or np.any(t <= 0):
            raise ValueError("taus must be finite and > 0")
        r = int(t.size)
        mean = float(t.mean())
        ucl = float(factor) * (mean + float(t_quantile(level, r - 1)) * float(t.std(ddof=1)) / math.sqrt(r))
    value = float(np.nanmax([ucl, mod]))
    return TauUpper(value, ucl, mean, mod, r, level)


def bias_check(halves_bound: ArrayLike, window: float, tau: float | TauUpper | ArrayLike,
               tolerance: ArrayLike, *, claim: str = "leftover bias within its tolerance",
               percent: bool = False, unit: str = "") -> "Check":
    """The burn-in bias bound as a check that can fail.

    ``leftover_bias(D⁺, W, τ_up)`` bounds the bias the window mean keeps
    from an exponential transient, given ``D⁺`` an upper bound of the halves
    difference (the TOST bound of :func:`burn_in_check`, or its margin) and
    ``τ_up`` an upper bound of the slowest time constant
    (:func:`tau_upper`). Because ``D⁺`` is a confidence bound, so is the bias
    bound (one-sided, at the level of the halves test). The check passes
    when the bound is within ``tolerance``, which the chapter ties to the
    claim (its margin, or the deviation its check can detect).

    Parameters
    ----------
    halves_bound : float or array_like
        ``D⁺ >= 0``, one per cell or one for all.
    window : float
        Length ``W`` of the measurement window, ``> 0``.
    tau : float, TauUpper or array_like
        ``τ_up``, one per cell or one for all.
    tolerance : float or array_like
        Largest bias the claim tolerates (``> 0``), one per cell or one for all.
    claim, percent, unit
        As for :class:`~qlib.stats.verdict.Check`.

    Returns
    -------
    Check
        Kind ``"bound"``: the worst cell's bias bound against its tolerance.

    Examples
    --------
    >>> c = bias_check(0.01, window=2000.0, tau=tau_upper(model=380.0), tolerance=0.02)
    >>> c.passed, round(c.value, 4)
    (True, 0.0058)
    >>> bias_check(0.01, window=380.0, tau=380.0, tolerance=0.01).passed   # W = τ: bias up to 2 D
    False
    """
    from qlib.stats.verdict import Check
    t = np.asarray(float(tau) if isinstance(tau, TauUpper) else tau, dtype=float)
    tol = np.asarray(tolerance, dtype=float)
    if np.any(~(tol > 0)):
        raise ValueError(f"tolerance must be > 0, got {tolerance!r}")
    b = np.atleast_1d(np.asarray(leftover_bias(halves_bound, window, t), dtype=float))
    b, tol = np.broadcast_arrays(b, np.atleast_1d(tol))
    i = int(np.argmax(b / tol))
    tmax = float(np.max(t))
    method = (f"leftover_bias of the halves bound, W/τ_up = {float(window) / tmax:.3g}; "
              f"one-sided, at the halves test's level")
    return Check.bound(claim, float(b[i]), float(tol[i]), method=method, percent=percent, unit=unit)
