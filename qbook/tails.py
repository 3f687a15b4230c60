"""The mechanics of ``chapters/tails.md``: the burn-in of its two simulated
cells and the leftover bias their halves allow.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from qlib import stats
from qlib.meanfield import fluid
from qlib.stats import iat, leftover_bias

__all__ = ["burn_in_bias"]


def burn_in_bias(sims: Mapping, lam: float, window: Mapping, burn_in: float = 20.0, margin: float = 0.02):
    """Halves check of each cell's mean queue length and the leftover bias it allows.

    Parameters
    ----------
    sims : mapping
        Cell name to ``(degree law, fluid equilibrium, replicated run)``.
    lam : float
        The load.
    window : mapping
        Cell name to its averaging window.
    burn_in : float
        The burn-in of the runs.
    margin : float
        The halves margin, relative to the mean queue length.

    Returns
    -------
    worst : qlib.stats.BurnIn
        The cell's halves check that uses most of its margin.
    bias : dict
        Cell name to its leftover bias bound, relative to the mean queue length, through
        ``τ_up = max(1/γ, 2 × UCL of τ_int)``.
    wtau : list of float
        Each cell's window over its ``τ_up``.

    Examples
    --------
    >>> burn_in_bias.__name__
    'burn_in_bias'
    """
    burn, bias, wtau = {}, {}, []
    for name, (pn, q, rep) in sims.items():
        h = rep.queue_paths(after=burn_in)
        burn[name] = stats.burn_in_check(h, replications=True, margin=margin * h.mean(), method="iut")
        τ = stats.tau_upper([iat(x) for x in h], model=1 / fluid.relaxation_rate(lam, pn, tol=1e-300), factor=2)
        d_up = float(np.max(np.atleast_1d(burn[name].equivalence.achieved)))       # halves bound
        bias[name] = float(leftover_bias(d_up / h.mean(), window[name], τ.value))
        wtau.append(window[name] / τ.value)
    worst = max(burn.values(), key=lambda b: float(np.max(b.equivalence.achieved / b.equivalence.margin)))
    return worst, bias, wtau
