"""The mechanics of ``chapters/bounded_resampling.md``: the burn-in of all its
cells and the leftover bias each cell's halves bound allows.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from qlib.stats import Check, burn_in_family, iat, leftover_bias, tau_upper

__all__ = ["burn_in_bias"]


def burn_in_bias(checks, cells: Mapping, r_star: float, long: Mapping, model: Mapping, margin: float,
                 log_margin: float, mu_of: Callable) -> dict[str, float]:
    """Add the chapter's ``burn-in`` and ``bias`` checks to ``checks``; return the values it glues.

    The halves of every cell's ``R/R*`` are shown to agree (margin ``log_margin/2`` for
    the double star's cells, whose claims are on ``log R``, ``margin`` otherwise); each
    halves bound becomes a leftover-bias bound through ``τ_up`` (2 × the upper limit of
    ``τ_int`` of the long runs of the cell's slowest class: the static ring, the double
    star at ``n μ <= 10``, the ring at ``μ = 1`` otherwise), checked against the margin of
    the claims the cell enters.

    Parameters
    ----------
    checks : qlib.stats.Checks
        Gets ``burn-in`` and ``bias``.
    cells : mapping
        Cell key (first entry ``"ds"`` for the double star, ``"n-scan"`` for the size
        scan) to its replicated run.
    r_star : float
        The fluid response time ``R*``.
    long : mapping
        ``"static ring"``, ``"double star"``, ``"ring, μ = 1"`` to their long runs.
    model : mapping
        Class name to a model relaxation time used as a floor of ``τ_up``.
    margin, log_margin : float
        The agreement margins (relative, and on ``log R`` for the double star).
    mu_of : callable
        Cell key to its resampling rate.

    Returns
    -------
    dict
        ``tau-ring``, ``tau-ds``, ``tau-fast`` (the ``τ_up``), ``tau-ring-int``,
        ``bias-bound`` (the worst cell's bias relative to its tolerance) and ``bias-tol``.

    Examples
    --------
    >>> burn_in_bias.__name__
    'burn_in_bias'
    """
    bi = burn_in_family({k: rr.batch_response_times / r_star for k, rr in cells.items()},
                        {k: log_margin / 2 if k[0] == "ds" else margin for k in cells}, relative=True)
    checks.add("burn-in", Check.from_burn_in(bi.checks[bi.worst], f"halves agree in all {len(bi)} cells",
                                             percent=True))
    tau_up = {k: tau_upper([iat(x.batch_response_time, dt=x.batch_length) for x in rr.results],
                           model=model.get(k), factor=2) for k, rr in long.items()}   # 2 × the UCL of τ_int
    # the double star's slow class is its measured μ = 10 cell and below; at μ >= 100 its resampling is faster
    # than the resampled ring's at μ = 1, whose τ_up then bounds it
    cls = [("double star" if k[1] * k[2] <= 10 else "ring, μ = 1") if k[0] == "ds"
           else "static ring" if mu_of(k) < 1 else "ring, μ = 1" for k in cells]
    d_up = np.array([bi.used[k] * (log_margin / 2 if k[0] == "ds" else margin) for k in cells])  # halves bounds / R
    win = np.array([rr.results[0].batch_length * len(rr.results[0].batch_response_time) for rr in cells.values()])
    tau_c = np.array([tau_up[c].value for c in cls])
    tol = np.array([log_margin if k[0] == "ds" else margin for k in cells])   # the margin of the claims it enters
    bias_all = np.array([float(leftover_bias(d, w, t)) for d, w, t in zip(d_up, win, tau_c)])
    worst_b = int(np.argmax(bias_all / tol))
    checks.add("bias", Check.bound("leftover bias of every cell within its claims' margin", bias_all[worst_b],
                                   tol[worst_b], percent=True, method=f"worst cell {list(cells)[worst_b]}; "
                                   f"halves bound through τ_up = {tau_c[worst_b]:.0f}, window {win[worst_b]:.0f}"))
    return {"tau-ring": tau_up["static ring"].value, "tau-ds": tau_up["double star"].value,
            "tau-fast": tau_up["ring, μ = 1"].value, "tau-ring-int": tau_up["static ring"].mean,
            "bias-bound": float(bias_all[worst_b]), "bias-tol": float(tol[worst_b])}
