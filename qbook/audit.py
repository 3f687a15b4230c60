"""A replicated cell together with the audit of its burn-in and autocorrelation time.

A stationary comparison needs, besides the estimates, two facts about the
runs: that the burn-in is over (the two halves of the window agree within a
margin fixed in advance, an equivalence test over the replications) and how
long the mean queue length stays correlated (its integrated autocorrelation
time ``τ``, which turns the halves bound into a bound on the leftover bias,
:func:`qlib.stats.burn_in.leftover_bias`). :func:`audited_replicate` runs the
replications and measures both; :func:`burn_in_verdict` joins the burn-in
tests of many cells into one verdict line (intersection–union: passed only
if every cell passed).

Examples
--------
>>> from qlib import graphs
>>> from qbook.audit import audited_replicate, burn_in_verdict
>>> cell = audited_replicate(graphs.ring(4), 0.5, 1.0, replications=4, seed=1,
...                          burn_in=20.0, window=400.0, record_dt=1.0)
>>> len(cell.result.results), cell.window
(4, 400.0)
>>> burn_in_verdict([cell], "burn-in is over").claim
'burn-in is over'
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from qlib.graphs import Graph
from qlib.sim.replications import replicate
from qlib.sim.result import ReplicationResult
from qlib.stats.batch import iat
from qlib.stats.burn_in import BurnIn, burn_in_check, leftover_bias
from qlib.stats._results import ResultIO
from qlib.stats.intervals import ReplicationCI, replication_ci
from qlib.stats.verdict import Check

__all__ = ["AuditedCell", "audited_replicate", "burn_in_verdict", "bias_share", "design_audit"]


@dataclass(frozen=True, eq=False, repr=False)
class AuditedCell(ResultIO):
    """Replications of one cell with their burn-in test and autocorrelation time.

    Attributes
    ----------
    result : ReplicationResult
        The replications (averages over ``[burn_in, burn_in + window]``).
    tau : ReplicationCI
        Interval for the integrated autocorrelation time ``τ`` of the recorded
        path (``Σ_i q(t, i)`` over the levels audited) after the burn-in.
    burn : BurnIn
        The halves test of that path (equivalence, intersection–union over the
        replications) with margin ``burn_margin`` times its mean.
    window : float
        Length of the averaging window.
    mean_queue : float
        Mean of the audited path (the mean queue length when all levels are audited).
    """

    result: ReplicationResult
    tau: ReplicationCI
    burn: BurnIn
    window: float
    mean_queue: float

    def __repr__(self) -> str:
        return f"AuditedCell(window={self.window:g}, mean_queue={self.mean_queue:.4g}, tau={self.tau!r})"

    def to_dict(self, *, json: bool = False) -> dict:
        """The fields, the replications' recorded paths left out (the audit has used
        them; a stored cell stays small); :meth:`from_dict` reads it back."""
        if json:
            raise ValueError("an AuditedCell is recorded as a pickle, not as JSON")
        runs = tuple(dataclasses.replace(r, times=None, paths=None) for r in self.result.results)
        return {"type": "AuditedCell", "result": dataclasses.replace(self.result, results=runs),
                **{f: getattr(self, f) for f in ("tau", "burn", "window", "mean_queue")}}

    @property
    def leftover_share(self) -> float:
        """Bound on the leftover burn-in bias over the mean of the audited path.

        From the achieved halves bound, the window and the upper limit of ``τ``
        by :func:`qlib.stats.burn_in.leftover_bias`.
        """
        achieved = float(np.max(np.atleast_1d(self.burn.equivalence.achieved)))
        return float(leftover_bias(achieved, self.window, self.tau.high)) / self.mean_queue


def audited_replicate(graph: Graph, lam: float, mu: float, *, replications: int,
                      seed: int | np.random.SeedSequence, burn_in: float, window: float,
                      record_dt: float = 1.0, burn_margin: float = 0.03, tau_level: float = 0.95,
                      which: Sequence[int] | Callable[[ReplicationResult], Sequence[int]] | None = None,
                      recorded=None, **replicate_kwargs) -> AuditedCell:
    """Replicate one cell and audit its burn-in and autocorrelation time.

    Parameters
    ----------
    graph, lam, mu
        As for :func:`~qlib.sim.replications.replicate`.
    replications : int
        Number of independent replications, ``>= 2``.
    seed : int or numpy.random.SeedSequence
        Root seed of the replications.
    burn_in : float
        Burn-in, ``>= 0``; the runs end at ``burn_in + window``.
    window : float
        Averaging window, ``> 0``.
    record_dt : float, default 1
        Grid of the recorded path, ``> 0``.
    burn_margin : float, default 0.03
        Margin of the halves test, relative to the mean of the audited path, in ``(0, 1)``.
    tau_level : float, default 0.95
        Level of the interval for ``τ`` (lower it for a family of cells), in ``(0, 1)``.
    which : sequence of int or callable, optional
        Levels summed into the audited path; default all. A callable receives
        the :class:`ReplicationResult` and returns the levels (for levels chosen
        from the estimates, e.g. those resolved).
    recorded : qbook.recorded.RecordedRuns, optional
        Replay the cell from this store when it holds the same call (the
        replications' paths are not stored: the replayed ``result`` has none).
    **replicate_kwargs
        Passed on to :func:`~qlib.sim.replications.replicate` (``initial``, ...).

    Returns
    -------
    AuditedCell

    Raises
    ------
    ValueError
        If ``window``, ``record_dt`` or ``burn_in`` is out of range, or
        ``burn_margin`` or ``tau_level`` is not in ``(0, 1)``.
    TypeError
        If ``replications`` is not an integer.

    Examples
    --------
    >>> from qlib import graphs
    >>> c = audited_replicate(graphs.ring(4), 0.5, 0.0, replications=3, seed=2,
    ...                       burn_in=10.0, window=200.0)
    >>> bool(c.tau.high > 0) and c.mean_queue > 0
    True
    """
    if isinstance(replications, bool) or not isinstance(replications, (int, np.integer)):
        raise TypeError(f"replications must be an integer, got {type(replications).__name__}")
    window, record_dt, burn_in = float(window), float(record_dt), float(burn_in)
    if not (math.isfinite(window) and window > 0):
        raise ValueError(f"window must be finite and > 0, got {window}")
    if not (math.isfinite(record_dt) and record_dt > 0):
        raise ValueError(f"record_dt must be finite and > 0, got {record_dt}")
    if not (math.isfinite(burn_in) and burn_in >= 0):
        raise ValueError(f"burn_in must be finite and >= 0, got {burn_in}")
    for name, val in (("burn_margin", burn_margin), ("tau_level", tau_level)):
        if not 0 < val < 1:
            raise ValueError(f"{name} must be in (0, 1), got {val}")
    if recorded is not None:
        return recorded(audited_replicate, graph, lam, mu, replications=replications, seed=seed,
                        burn_in=burn_in, window=window, record_dt=record_dt, burn_margin=burn_margin,
                        tau_level=tau_level, which=which, **replicate_kwargs)
    rr = replicate(graph, lam, mu, replications=replications, seed=seed, t_end=burn_in + window,
                   burn_in=burn_in, record_dt=record_dt, **replicate_kwargs)
    path = rr.queue_paths(after=burn_in, which=which(rr) if callable(which) else which)
    tau = replication_ci([iat(p, record_dt) for p in path], level=tau_level)
    mean = float(path.mean())
    burn = burn_in_check(path, record_dt, replications=True, margin=burn_margin * mean, method="iut")
    return AuditedCell(result=rr, tau=tau, burn=burn, window=window, mean_queue=mean)


def burn_in_verdict(cells: Sequence[AuditedCell], claim: str) -> Check:
    """One verdict for the burn-in of many cells: the worst cell's line, passed only if all passed.

    Parameters
    ----------
    cells : sequence of AuditedCell
        At least one cell.
    claim : str
        The claim the verdict line states.

    Returns
    -------
    Check
        :meth:`~qlib.stats.verdict.Check.from_burn_in` of the cell that uses most of its margin,
        with ``passed`` the intersection–union over all cells.

    Raises
    ------
    ValueError
        If ``cells`` is empty.
    TypeError
        If an element is not an :class:`AuditedCell`.

    Examples
    --------
    >>> from qlib import graphs
    >>> c = audited_replicate(graphs.ring(4), 0.5, 1.0, replications=3, seed=3,
    ...                       burn_in=10.0, window=200.0)
    >>> burn_in_verdict([c, c], "over").method
    'TOST, intersection-union, 2 cells'
    """
    cells = list(cells)
    if not cells:
        raise ValueError("cells must hold at least one AuditedCell, got none")
    if not all(isinstance(c, AuditedCell) for c in cells):
        raise TypeError("cells must be AuditedCell instances")
    worst = max(cells, key=lambda c: c.burn.margin_used)
    c = Check.from_burn_in(worst.burn, claim)
    return dataclasses.replace(c, passed=all(x.burn.passed for x in cells),
                               method=f"TOST, intersection-union, {len(cells)} cells")


def bias_share(cell: AuditedCell) -> float:
    """Leftover burn-in bias bound over the cell's mean queue length.

    The halves bound (the largest achieved equivalence bound) becomes a bias bound
    through :func:`~qlib.stats.burn_in.leftover_bias` with ``τ_up`` = 2 × the upper
    limit of the replications' ``τ̂``.

    Parameters
    ----------
    cell : AuditedCell
        A cell from :func:`audited_replicate`.

    Returns
    -------
    float

    Examples
    --------
    >>> from qlib import graphs
    >>> c = audited_replicate(graphs.ring(4), 0.5, 1.0, replications=3, seed=3,
    ...                       burn_in=10.0, window=200.0)
    >>> bias_share(c) >= 0
    True
    """
    if not isinstance(cell, AuditedCell):
        raise TypeError(f"cell must be an AuditedCell, got {type(cell).__name__}")
    d_up = float(np.max(np.atleast_1d(cell.burn.equivalence.achieved)))
    return float(leftover_bias(d_up, cell.window, 2 * cell.tau.high)) / cell.mean_queue


def design_audit(checks, families: dict, target_r: float, target_q: float) -> dict[str, int]:
    """Replications each family would need to detect a target error, added to ``checks`` as audits.

    The target is ``target_r`` times the exact value for values >= 1 (response times)
    and ``target_q`` absolute for the others (levels ``q(i) <= λ < 1``).

    Parameters
    ----------
    checks : qlib.stats.Checks
        Gets one ``design-<name>`` estimate per family, not required.
    families : dict
        ``name -> (exact values, standard errors, replications, family)``; the family's
        ``m`` is its number of checks.
    target_r, target_q : float
        The relative and absolute target errors.

    Returns
    -------
    dict
        ``name -> replications needed``.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from qlib.stats import Checks
    >>> design_audit(Checks("x"), {"a": ([2.0, 0.5], [0.01, 0.01], 20, SimpleNamespace(m=2))}, 0.02, 0.01)["a"] >= 2
    True
    """
    from qlib import stats
    need = {}
    for name, (ex_, se_, r_, fam_) in families.items():
        delta = np.where(np.asarray(ex_) >= 1, target_r * np.asarray(ex_), target_q)    # q(i) <= λ < 1 <= R
        need[name] = stats.replications_needed(np.asarray(se_) * math.sqrt(r_), delta, m=fam_.m, level=0.95)
        checks.add(f"design-{name}", Check.estimate(f"audit: replications needed, {name}, from these runs' own "
                                                    f"s.e. ({r_} runs)", need[name]), required=False)
    return need
