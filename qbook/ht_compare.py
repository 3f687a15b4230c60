"""The alternatives to JSQ at one Halfin–Whitt load, side by side (``chapters/ht_alternatives.md``).

* :func:`pooled`, :func:`random_routing`: ``(P(wait), E[W | wait], E[W])`` of the
  pooled M/M/n queue and of random routing, exact;
* :func:`jsq_chain_row`: the same triple for JSQ from a stored row of
  ``stationary_jsq`` (``benchmarks/ht_alternatives_chain.json``), computed from
  means of the one truncated law so that ``E[W | wait] = E[N − Q_1]/E[Q_2] >= 1``
  holds by construction;
* :func:`identity_gap`: the rate-balance identity ``λ_n P(wait) = E[Q_2]`` of such a
  row, its gap over the error estimates;
* :func:`replication_cis`: Student-t intervals of the triple from a
  :class:`~qlib.halfin_whitt.jsq_d.JSQdResult`;
* :func:`glue_slug`: a glue-key fragment from a policy label.
"""
from __future__ import annotations

import math
import numbers
import re
from typing import TYPE_CHECKING
if TYPE_CHECKING:   # names for the annotations only
    from collections.abc import Mapping
    from collections.abc import Sequence
    from qlib.halfin_whitt.jsq_d import JSQdResult
    from qlib.stats.intervals import ReplicationCI
    import numpy as np

__all__ = ["pooled", "random_routing", "jsq_chain_row", "identity_gap", "replication_cis", "glue_slug",
           "coupled_gaps", "burn_in_halves"]


def _check(n, beta):
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise TypeError(f"n must be an int, got {n!r}")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n!r}")
    if not (0 < beta < math.sqrt(n)):
        raise ValueError(f"beta must be in (0, sqrt(n)), got {beta!r}")


def pooled(n: int, beta: float) -> tuple[float, float, float]:
    """``(P(wait), E[W | wait], E[W])`` of the M/M/n queue at ``λ_n = n − β√n``.

    Examples
    --------
    >>> p, cw, w = pooled(100, 1.0)
    >>> round(cw, 6), round(w / p, 6)
    (0.1, 0.1)
    """
    from qlib.halfin_whitt.classical import erlang_c
    _check(n, beta)
    lam = n - beta * math.sqrt(n)
    p = erlang_c(n, lam)
    return p, 1 / (n - lam), p / (n - lam)


def random_routing(n: int, beta: float) -> tuple[float, float, float]:
    """``(P(wait), E[W | wait], E[W])`` of ``n`` independent M/M/1 queues at
    ``ρ_n = 1 − β/√n``.

    Examples
    --------
    >>> random_routing(16, 2.0)
    (0.5, 2.0, 1.0)
    """
    _check(n, beta)
    rho = 1 - beta / math.sqrt(n)
    return rho, 1 / (1 - rho), rho / (1 - rho)


def _means(row, n, beta):
    lam = n - beta * math.sqrt(n)
    waiting = row.get("mean_waiting", row["mean_wait"] * lam)          # E[N − Q_1]
    e = row["err"]
    e_waiting = e.get("mean_waiting", e["mean_wait"] * lam)
    return lam, waiting, e_waiting, row["mean_q2"], e["mean_q2"]


def jsq_chain_row(row: Mapping, n: int, beta: float) -> tuple[tuple[float, float, float],
                  tuple[float, float, float]]:
    """JSQ's ``(P(wait), E[W | wait], E[W])`` and their error estimates from a
    stored ``stationary_jsq`` row (keys ``mean_q2``, ``mean_wait`` or
    ``mean_waiting``, ``err``).

    ``P(wait) = E[Q_2]/λ_n`` (rate balance), ``E[W] = E[N − Q_1]/λ_n`` (Little)
    and ``E[W | wait] = E[N − Q_1]/E[Q_2]``, all means of one truncated law:
    since ``N − Q_1 >= Q_2`` pointwise, ``E[W | wait] >= 1`` whatever the
    truncation (``π(Q_1 = n)`` of a truncated law is biased by the redirected
    flux; :func:`identity_gap` measures that).  The error estimates are
    a-posteriori estimates, not bounds.

    Returns
    -------
    values, errors : tuple of 3 floats each

    Examples
    --------
    >>> row = {"mean_q2": 10.0, "mean_wait": 0.12, "err": {"mean_q2": 1e-6, "mean_wait": 1e-8}}
    >>> v, e = jsq_chain_row(row, 100, 1.0)
    >>> round(v[1], 4)
    1.08
    """
    _check(n, beta)
    lam, w, ew, q2, eq2 = _means(row, n, beta)
    cw = w / q2
    return (q2 / lam, cw, w / lam), (eq2 / lam, ew / q2 + w * eq2 / q2**2, ew / lam)


def identity_gap(row: Mapping, n: int, beta: float) -> float:
    """``|λ_n π(Q_1 = n) − E[Q_2]| / (λ_n e_P + e_Q2)`` of a stored row: the
    rate-balance identity's gap in units of its error estimates (below 1:
    the estimates cover it).

    Examples
    --------
    >>> row = {"p_wait": 0.1, "mean_q2": 9.0, "err": {"p_wait": 1e-3, "mean_q2": 0.0}}
    >>> round(identity_gap(row, 100, 1.0), 6)
    0.0
    """
    _check(n, beta)
    lam = n - beta * math.sqrt(n)
    e = row["err"]
    return abs(lam * row["p_wait"] - row["mean_q2"]) / (lam * e["p_wait"] + e["mean_q2"])


def replication_cis(result: JSQdResult, j: int | None = None) -> list[ReplicationCI]:
    """Student-t intervals over replications of ``(P(wait), E[W | wait], E[W])``
    of chain ``j`` of a :class:`~qlib.halfin_whitt.jsq_d.JSQdResult` (``None``:
    a result with one chain).

    Returns
    -------
    list of :class:`~qlib.stats.intervals.ReplicationCI`
    """
    from qlib.stats import replication_ci
    keys = ("p_wait", "cond_wait", "mean_wait")
    if not all(hasattr(result, k) for k in keys):
        raise TypeError(f"result must have {keys}, got {type(result).__name__}")
    pick = (lambda x: x) if j is None else (lambda x: x[:, j])
    return [replication_ci(pick(getattr(result, k))) for k in keys]


def glue_slug(label: str) -> str:
    """Letters, digits and dots of ``label``: a glue-key fragment.

    Examples
    --------
    >>> glue_slug("JSQ(n^0.8)")
    'JSQn0.8'
    """
    if not isinstance(label, str):
        raise TypeError(f"label must be a str, got {type(label).__name__}")
    return re.sub(r"[^A-Za-z0-9.]", "", label)


def coupled_gaps(result: JSQdResult, names: Sequence[str], n: int) -> dict:
    """Per-replication gaps of coupled chains to chain 0 (JSQ) of a
    :class:`~qlib.halfin_whitt.jsq_d.JSQdResult` run on common random numbers:
    ``name -> (CI of √n (P_j(wait) − P_0(wait)), CI of (E[Q_2]_j − E[Q_2]_0)/√n)``
    for every chain ``j >= 1`` named ``names[j]``.

    Raises
    ------
    ValueError
        If ``names`` does not match the result's chains.
    """
    from qlib.stats import replication_ci
    p = getattr(result, "p_wait", None)
    if p is None or getattr(p, "ndim", 0) != 2 or p.shape[1] != len(names):
        raise ValueError("names must name every chain of a multi-d result")
    s = math.sqrt(n)
    return {name: (replication_ci(s * (result.p_wait[:, j] - result.p_wait[:, 0])),
                   replication_ci((result.mean_q2[:, j] - result.mean_q2[:, 0]) / s))
            for j, name in enumerate(names) if j >= 1}


def burn_in_halves(result: JSQdResult) -> np.ndarray:
    """The block averages of ``P(wait)`` and ``Q_2`` of every chain of a
    :class:`~qlib.halfin_whitt.jsq_d.JSQdResult`, as an array
    ``(replications, blocks, columns)`` for
    :func:`~qlib.stats.burn_in.burn_in_check` with ``replications=True``."""
    import numpy as np
    b = getattr(result, "blocks", None)
    if b is None or b.ndim not in (3, 4):
        raise TypeError("result must be a JSQdResult with blocks")
    b = b[..., [0, 2]]
    return b if b.ndim == 3 else np.moveaxis(b, 2, 1).reshape(b.shape[0], b.shape[2], -1)
