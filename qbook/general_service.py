"""The mechanics of ``chapters/general_service.md``: the audit of the burn-in of
its cells (the halves of every cell, the leftover bias of the slow H2 cells,
the bracket of two starts, and the level-one identity).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

import qlib
from qlib.stats import (Check, bias_check, burn_in_family, equivalence, iat, leftover_bias, level_one_check,
                        replication_ci, tau_upper)

if TYPE_CHECKING:   # names for the annotations only
    from qlib.stats import Checks

__all__ = ["burn_in_audit"]


def _R(rep):
    return replication_ci([r.mean_response_time for r in rep.results])


def burn_in_audit(checks: Checks, cells: Sequence, ring, lam: float, h2, q_star: np.ndarray, low, *,
                  reps: int, burn: float, window: float, margin: float, run=None) -> dict:
    """Add the chapter's burn-in checks to ``checks`` and return the values it glues.

    Parameters
    ----------
    checks : qlib.stats.Checks
        The chapter's checks; ``burn``, ``bias-slow`` (not required), ``bracket`` and
        ``level-one`` are added.
    cells : sequence of (mu, law, replicated run)
        The chapter's measured cells.
    ring : graph
        The static ring the slow-cell and bracket runs use.
    lam : float
        The load.
    h2 : service law
        The H2(4) law of the slow cells.
    q_star : numpy.ndarray
        The fluid fixed point (the low start).
    low : replicated run
        The static ring under ``h2`` from ``q_star`` (the bracket's lower start).
    reps, burn, window, margin : int, float, float, float
        Replications, burn-in (the H2 cells at μ < ∞ use 4 × burn), window, and the
        agreement margin relative to R.
    run : callable, optional
        Runs a simulation: ``run(qlib.replicate, *args, **kwargs)``; a
        :class:`qbook.recorded.RecordedRuns` replays recorded ones. Default: call it.

    Returns
    -------
    dict
        ``burn-cells``, ``tau-slow``, ``tau-slow-int``, ``bias-slow``, ``bias-slow-x``, ``bracket-diff``.

    Examples
    --------
    >>> burn_in_audit.__name__
    'burn_in_audit'
    """
    bi = burn_in_family({j: rep.batch_response_times for j, (_, _, rep) in enumerate(cells)}, margin, relative=True)
    rel_ach, w = {j: u * margin for j, u in bi.used.items()}, bi.worst   # each cell's halves bound, relative to R
    checks.add("burn", Check("window halves agree in every cell (worst cell)", "equivalence", rel_ach[w], margin,
                             bi.checks[w].margin_resolvable * margin, bi.passed,
                             f"TOST, intersection-union, {len(bi)} checks", percent=True))
    run = run or (lambda fn, *a, **kw: fn(*a, **kw))
    slow_runs = run(qlib.replicate, ring, lam, 0.0, replications=4, t_end=4 * burn + 20 * window, burn_in=4 * burn,
                               seed=10**6 + 1, service=h2, initial=q_star[q_star > 1e-12], batches=10 * window)
    tau_slow = tau_upper([iat(x.batch_response_time, dt=x.batch_length) for x in slow_runs.results], factor=2)
    slow = [j for j, (mu, law, _) in enumerate(cells) if law.scv > 1 and mu < math.inf]
    d_slow = max(rel_ach[j] for j in slow)                          # their largest halves bound, relative to R
    bias_slow = float(leftover_bias(d_slow, window, tau_slow.value))
    # not required: the H2 cells have no monotone coupling to fall back on, and the verdict is reported as it is
    checks.add("bias-slow", bias_check(d_slow, window, tau_slow, margin, percent=True,
                                       claim="leftover bias of the H2 cells at μ < ∞ within the 2 % margin"),
               required=False)
    q_high = np.concatenate([np.ones(4), q_star])                   # four more tasks at every server
    high = run(qlib.replicate, ring, lam, 0.0, replications=reps, seed=10**6, t_end=4 * burn + window, burn_in=4 * burn,
                          batches=4, service=h2, initial=q_high[q_high > 1e-12])
    lo_ci, hi_ci = _R(low), _R(high)
    eq_br = equivalence((hi_ci.mean - lo_ci.mean) / lo_ci.mean, math.hypot(lo_ci.se, hi_ci.se) / lo_ci.mean,
                        reps - 1, margin)
    checks.add("bracket", Check.from_equivalence(eq_br, "static ring, H2(4): starts from below and above agree",
                                                 percent=True))
    q1 = [replication_ci([r.occupancy[1] for r in rep.results]) for _, _, rep in cells]
    checks.add("level-one", level_one_check([c.mean for c in q1], [c.se for c in q1], reps - 1, lam))
    return {"burn-cells": len(cells), "tau-slow": tau_slow.value, "tau-slow-int": tau_slow.mean,
            "bias-slow": bias_slow, "bias-slow-x": bias_slow / margin,
            "bracket-diff": (hi_ci.mean - lo_ci.mean) / lo_ci.mean}
