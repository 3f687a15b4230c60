"""First-order finite-``n`` bias of the stationary occupancy (``μ = ∞``).

With a fresh random placement of the servers before every arrival
(``mu = inf``), an arrival at a position of degree ``d`` sees ``d + 1``
distinct servers drawn uniformly.  By PASTA and the balance of the rate at
which tasks join queues holding at least ``i`` tasks with the departure rate
from queues holding at least ``i + 1``, the stationary means satisfy exactly

    E q_n(i+1) = λ Σ_d p_n(d) E[ C(N_i, d+1) / C(n, d+1) ],   N_i = n q_n(i),

and ``E q_n(1) = λ``.  For ``N_i`` Binomial(n, q) (independent servers) the
right side is ``λ q φ(q)``, the fluid recursion, exactly; the bias comes from
the variance of ``N_i`` differing from the binomial one.  Writing
``Var N_i = v_i n q (1 − q)`` and expanding to first order in ``1/(n q)``:

* level ``i`` adds to level ``i + 1`` the relative bias
  ``Σ_d w_d C(d+1, 2) (1 − q)(v_i − 1)/(n q)``, with ``w_d = p(d) q^{d+1} /
  (q φ(q))`` the share of degree ``d`` at ``q = q*(i)``;
* a relative bias at level ``i`` reaches level ``i + 1`` multiplied by
  ``Σ_d w_d (d + 1) = d log(x φ(x)) / d log x`` at ``x = q*(i)``.

:func:`variance_ratio` measures ``v_i`` from recorded simulation paths and
:func:`bias_first_order` runs the recursion (chapter *tails*, where the
prediction is checked against simulations).
"""

from __future__ import annotations

import numbers

import numpy as np

from .degrees import DegreeDistribution
from .fluid import _check_occupancy

__all__ = ["variance_ratio", "bias_first_order", "response_time_bias"]


def _check_n(n) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    return int(n)


def variance_ratio(result, q, burn_in=None) -> np.ndarray:
    """Measured ratio ``v_i = Var N_i / (n q(1 − q))`` from recorded paths.

    Parameters
    ----------
    result : qlib.SimulationResult or qlib.ReplicationResult
        Run(s) made with ``record_dt`` set (so that ``times`` and ``paths``
        exist).  For a ``ReplicationResult`` the variances are averaged over
        the replications.
    q : array_like, shape (K+1,)
        Occupancy ``q(0..K)`` to normalise by (usually ``q*``); ``q[0] = 1``,
        non-increasing, in ``[0, 1]``.
    burn_in : float, optional
        Only path points at times ``>= burn_in`` are used; default: the run's
        own ``burn_in``.

    Returns
    -------
    numpy.ndarray, shape (K+1,)
        ``v_i``: the variance over time of ``q_n(t, i)`` on the recording grid,
        times ``n / (q(i)(1 − q(i)))``; 1 where ``q(i)(1 − q(i)) = 0``.
        Levels the run never tracked count as identically 0.

    Raises
    ------
    TypeError
        If ``result`` is not a simulation or replication result.
    ValueError
        If ``q`` is not an occupancy vector, no paths were recorded, or fewer
        than two path points lie after ``burn_in``.
    """
    runs = getattr(result, "results", None)
    if runs is None:
        runs = (result,)
    for r in runs:
        if not all(hasattr(r, a) for a in ("times", "paths", "n", "burn_in")):
            raise TypeError("result must be a qlib.SimulationResult or qlib.ReplicationResult")
        if r.paths is None or r.times is None:
            raise ValueError("result has no recorded paths: simulate with record_dt=...")
    q = _check_occupancy(q)
    K = q.size
    n = runs[0].n
    v = np.zeros(K)
    for r in runs:
        t0 = r.burn_in if burn_in is None else float(burn_in)
        keep = r.times >= t0
        if keep.sum() < 2:
            raise ValueError(f"fewer than two path points after burn_in = {t0}")
        P = np.zeros((int(keep.sum()), K))
        m = min(K, r.paths.shape[1])
        P[:, :m] = r.paths[keep, :m]
        v += P.var(axis=0) / len(runs)
    binom = q * (1 - q)
    out = np.ones(K)
    pos = binom > 0
    out[pos] = v[pos] * n / binom[pos]
    return out


def bias_first_order(degrees, q, n, v) -> np.ndarray:
    """First-order relative bias ``b_i`` of the stationary mean ``E q_n(i)``.

    ``E q_n(i) ≈ q(i) (1 + b_i)`` to first order in ``1/(n q)``, with
    ``b_0 = b_1 = 0`` and, for ``i >= 1``,

        b_{i+1} = s_i b_i + Σ_d w_d C(d+1, 2) (1 − q_i)(v_i − 1) / (n q_i),
        s_i = Σ_d w_d (d + 1),   w_d = p(d) q_i^{d+1} / (q_i φ(q_i)),

    (module docstring).  Levels where ``q_i = 0`` end the recursion (the
    remaining entries are 0).

    Parameters
    ----------
    degrees : DegreeDistribution
        Degree law ``p_n`` of the simulated graph.
    q : array_like, shape (K+1,)
        Fluid equilibrium ``q*(0..K)`` of ``p_n``.
    n : int
        Number of servers, ``>= 1``.
    v : array_like, shape (K+1,)
        Variance ratios ``v_i`` (:func:`variance_ratio`), finite and ``>= 0``.

    Returns
    -------
    numpy.ndarray, shape (K+1,)
        ``b_0, ..., b_K``.
    """
    if not isinstance(degrees, DegreeDistribution):
        raise TypeError(f"degrees must be a DegreeDistribution, got {type(degrees).__name__}")
    q = _check_occupancy(q)
    n = _check_n(n)
    try:
        v = np.asarray(v, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("v must be an array of variance ratios") from None
    if v.shape != q.shape:
        raise ValueError(f"v must have the shape of q, {q.shape}, got {v.shape}")
    if not np.all(np.isfinite(v)) or np.any(v < 0):
        raise ValueError("v must be finite and >= 0")
    d = np.arange(degrees.max_degree + 1)
    b = np.zeros(q.size)
    for i in range(1, q.size - 1):
        x = q[i]
        if x <= 0:
            break
        w = degrees.pmf * x ** (d + 1)
        w = w / w.sum()
        local = (w * (d + 1) * d / 2).sum() * (1 - x) * (v[i] - 1) / (n * x)
        b[i + 1] = (w * (d + 1)).sum() * b[i] + local
    return b


def response_time_bias(lam, degrees, q, n, v) -> float:
    """Allowance ``Σ_i |b_i| q(i) / λ`` for the finite-``n`` bias of ``R``.

    The arrival-side mean response time has expectation ``Σ_i E q_n(i) / λ``,
    so to first order its bias is ``Σ_i b_i q(i) / λ``; the absolute values
    make it an allowance that does not rely on cancellations.

    Parameters are those of :func:`bias_first_order`, plus ``lam`` in ``(0, 1)``.
    """
    if isinstance(lam, bool) or not isinstance(lam, numbers.Real) or not (0 < float(lam) < 1):
        raise ValueError(f"lam must be in (0, 1), got {lam!r}")
    b = bias_first_order(degrees, q, n, v)
    q = np.asarray(q, dtype=float)
    return float(np.sum(np.abs(b) * q) / float(lam))
