"""Pair approximation of the sampled-neighbour policy (``choices = k``) on a static d-regular graph.

The policy: a task arriving at a vertex ``u`` of degree ``d`` compares
``u`` with ``k − 1`` distinct neighbours drawn uniformly and joins a
shortest, ties uniform (``simulate(..., choices=k)``).  As in
:mod:`qlib.meanfield.pair`, the state is the law ``π(a, b)`` of the queue
lengths at the two ends of an edge ``(u, v)``, truncated at ``K``, and the
graph is treated as a tree: given ``u = a``, its other neighbours are
independent of ``v`` and of each other, each with law
``c(·|a) = π(a, ·)/p(a)``.  With ``s = (k − 1)/d`` the probability that a
given neighbour is among the sampled ones, ``u`` in state ``a`` with
partner ``v = b`` gains a task at rate ``r(a; b) = r_1 + r_2 + r_3``:

* ``r_1``: a task arriving at ``u`` (rate ``λ``).  With probability ``s``
  the sample holds ``v`` and ``k − 2`` other neighbours ``~ c(·|a)``; else
  ``k − 1`` other neighbours ``~ c(·|a)``;
* ``r_2``: a task arriving at ``v`` (rate ``λ``) whose sample holds ``u``
  (probability ``s``) with ``k − 2`` of ``v``'s other neighbours
  ``~ c(·|b)``;
* ``r_3``: tasks arriving at one of ``u``'s ``d − 1`` other neighbours
  ``w ~ c(·|a)`` whose sample holds ``u`` (probability ``s``), the other
  ``k − 2`` sampled ones ``~ c(·|w)``.

Ties are split as in :mod:`qlib.meanfield.pair`: ``E[1/(1 + T)] = ∫₀¹ E[t^T] dt``
with ``T`` the number of other tied queues.  For ``k = 2`` every arrival
compares the two ends of one edge and the rate is explicit,

    r(a; b) = (2λ/d) [1(a < b) + ½ 1(a = b)] + (2λ (d − 1)/d) g(a),
    g(a) = Σ_w c(w|a) [1(a < w) + ½ 1(a = w)]:

each edge receives tasks at rate ``2λ/d`` and sends them to its shorter
end (the edge-choice model of Gast 2015, whose pair approximation of the
ring is this one at ``d = 2``), and the only closure is
``P(w | u = a, v = b) = c(w|a)`` for a third vertex ``w`` adjacent to
``u``.  By the symmetry of ``π``, ``Σ π(a, b)[1(a < b) + ½ 1(a = b)] = ½``,
so ``E[r] = λ``: the closure conserves the arrival rate.

``π`` is the stationary law of the two-vertex chain with these rates and
unit service rates, and the equilibrium is the fixed point
``π = stationary law of G(π)``; the chain, its solve and the accelerated
fixed-point iteration are those of :mod:`qlib.meanfield.pair`.  Resampling
at a finite rate ``μ`` adds ``μ (p ⊗ p − π)`` as there.

Reductions (tested): for ``d = 1`` (disjoint edges, ``K2``) the pair is the
whole component and the approximation is the exact chain; for
``k ≥ d + 1`` the sample is the whole neighbourhood and the rates are those
of :func:`qlib.meanfield.pair.pair_approximation`; with
``closure="independent"`` (``c(·|a) = p``) the marginal is the supermarket
fluid ``q(i) = λ q(i − 1)^{min(k, d+1)}`` of :mod:`qlib.meanfield.choices`.

Accuracy against simulation (``benchmarks/pair_choices.py``, ``k = 2``,
``λ ≤ 0.95``): within half a percent on random 3- and 4-regular graphs,
and on the ring up to ``λ = 0.9`` (about one percent high at ``λ = 0.95``);
on the 2-D torus, whose 4-cycles the tree closure ignores, a few percent
low at high load.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from qlib import _validate as V
from qlib.meanfield.fluid import _check_lam
from qlib.meanfield.pair import PairResult
from qlib.meanfield.pair import _solve as _pair_solve
from qlib.meanfield.pair import _summary
from qlib.stats._results import fields_eq

__all__ = ["pair_approximation_choices", "ChoicesPairResult"]


@fields_eq
@dataclass(frozen=True)
class ChoicesPairResult(PairResult):
    """Equilibrium of :func:`pair_approximation_choices`.

    The fields of :class:`qlib.meanfield.pair.PairResult` (``pair``,
    ``marginal``, ``occupancy``, ``response_time``, ``correlation``,
    ``blocking``, ``residual``, ``iterations``, ``lam``, ``mu``, ``degree``,
    ``truncation``, ``closure``) and:

    Attributes
    ----------
    choices : int
        ``k``: the arrival's server and ``k − 1`` sampled neighbours.
    """

    choices: int

    @property
    def conditional(self) -> np.ndarray:
        """``c(b|a) = π(a, b)/p(a)``: law of a neighbour's queue given the vertex's (rows of ``p(a) = 0`` are ``p``)."""
        p = self.marginal
        return np.where(p[:, None] > 0, self.pair / np.where(p > 0, p, 1.0)[:, None], p[None, :])


def _rates(P, lam, d, k, closure, nodes, weights):
    """``r[a, b]``: rate at which an end in state ``a`` whose partner is in
    state ``b`` gains a task (before truncation), ``k <= d + 1``."""
    K1 = P.shape[0]
    p = P.sum(axis=1)
    if closure == "independent":
        C = np.broadcast_to(p, (K1, K1))
    else:
        C = np.where(p[:, None] > 0, P / np.where(p > 0, p, 1.0)[:, None], p[None, :])
    G = np.cumsum(C[:, ::-1], axis=1)[:, ::-1] - C          # [y, a]: P(Z > a | y)
    base = G[:, :, None] + nodes[None, None, :] * C[:, :, None]
    F = base ** (k - 2)                                      # [y, a, t]: k − 2 competitors ~ c(·|y)
    a = np.arange(K1)
    # ind[a, s, t] = 1(s > a) + t 1(s = a): u (at a) beats a competitor at s, ties by t
    ind = (a[None, :] > a[:, None]).astype(float)[:, :, None] + nodes[None, None, :] * np.eye(K1)[:, :, None]
    s = (k - 1) / d
    r1 = lam * s * np.einsum("abt,at,t->ab", ind, F[a, a, :], weights)
    if s < 1:
        r1 = r1 + lam * (1 - s) * (base[a, a, :] ** (k - 1) @ weights)[:, None]
    r2 = lam * s * np.einsum("abt,bat,t->ab", ind, F, weights)
    r3 = lam * (d - 1) * s * np.einsum("ay,ayt,yat,t->a", C, ind, F, weights)
    return r1 + r2 + r3[:, None]


def _solve(lam, mu, d, k, K, closure, tol, max_iter, P0=None):
    """The pair closure's fixed point (:mod:`qlib.meanfield.pair`'s solver) with this policy's rates."""
    def rates(P, nodes, weights):
        return _rates(P, lam, d, k, closure, nodes, weights)
    return _pair_solve(lam, mu, d, K, closure, tol, max_iter, P0, rates=rates, order=k)


def _result(P, it, res, blocked, lam, mu, d, k, K, closure):
    return ChoicesPairResult(**_summary(P, lam, blocked), residual=res, iterations=it, lam=lam, mu=mu,
                             degree=d, truncation=K, closure=closure, choices=k)


def pair_approximation_choices(lam: float, degree: int, mu: float = 0.0, *, choices: int = 2,
                               truncation: int | None = None, closure: str = "pair",
                               tol: float = 1e-12, max_iter: int = 5000,
                               max_truncation: int = 400) -> ChoicesPairResult:
    """Equilibrium of the pair approximation of the ``choices = k`` policy on a ``d``-regular graph.

    Parameters
    ----------
    lam : float
        Arrival rate per server, ``λ ∈ (0, 1)``.
    degree : int
        Degree ``d >= 1`` of every vertex (``d = 1``: disjoint edges, where
        the approximation is exact; ``d = 2``: the ring).
    mu : float
        Resampling rate ``μ >= 0`` (finite); ``0`` (default) is the static
        graph.
    choices : int
        ``k >= 2``: the arrival's server and ``k − 1`` distinct neighbours
        drawn uniformly (all of them when ``d < k − 1``); ``k >= d + 1`` is
        the closed-neighbourhood policy of
        :func:`qlib.meanfield.pair.pair_approximation`.
    truncation : int, optional
        Truncation ``K >= 2``.  Default: from ``K = 16``, grow by half until
        the response time changes by less than ``100 tol`` (relative) and
        the blocking is below ``tol``.
    closure : {"pair", "independent"}
        ``"pair"``: neighbours conditionally independent given the vertex.
        ``"independent"``: neighbours independent of the vertex: the
        supermarket fluid with ``min(k, d + 1)`` choices.
    tol : float
        Fixed-point tolerance on the entries of ``π``, in ``(0, 1)``.
    max_iter : int
        Largest number of fixed-point iterations.
    max_truncation : int
        Largest automatic truncation.

    Returns
    -------
    ChoicesPairResult

    Raises
    ------
    ValueError
        If ``lam`` is not in ``(0, 1)``, ``degree < 1``, ``choices < 2``,
        ``mu`` is negative or not finite, ``truncation < 2``, ``tol`` is not in
        ``(0, 1)``, or ``closure`` is unknown.
    TypeError
        If ``degree``, ``choices``, ``truncation``, ``max_iter`` or
        ``max_truncation`` is not an int, or ``mu``/``tol`` not a real number.
    RuntimeError
        If the iteration or the truncation does not converge.

    Examples
    --------
    On the ring at ``λ = 0.9`` the static graph's correlations cost
    response time over the supermarket fluid with two choices:

    >>> from qlib.meanfield.pair_choices import pair_approximation_choices
    >>> round(pair_approximation_choices(0.9, 2).response_time, 4)
    3.3332
    >>> round(pair_approximation_choices(0.9, 2, closure="independent").response_time, 4)
    2.6141
    """
    lam = _check_lam(lam)
    d = V.integer(degree, "degree", lo=1)
    k = V.integer(choices, "choices", lo=2)
    mu = V.nonnegative(mu, "mu")
    if closure not in ("pair", "independent"):
        raise ValueError(f"closure must be 'pair' or 'independent', got {closure!r}")
    tol = V.real(tol, "tol", lo=0, hi=1, lo_open=True, hi_open=True)
    max_iter = V.integer(max_iter, "max_iter", lo=1)
    max_truncation = V.integer(max_truncation, "max_truncation", lo=2)
    kk = min(k, d + 1)                        # the sample cannot exceed the neighbourhood

    def run(K, P0=None):
        return _result(*_solve(lam, mu, d, kk, K, closure, tol, max_iter, P0), lam, mu, d, k, K,
                       closure)

    if truncation is not None:
        return run(V.integer(truncation, "truncation", lo=2))
    prev = run(16)
    while True:
        K = prev.truncation + prev.truncation // 2
        if K > max_truncation:
            raise RuntimeError(f"no converged truncation up to max_truncation = {max_truncation}")
        cur = run(K, prev.pair)
        if (abs(cur.response_time - prev.response_time) <= 100 * tol * cur.response_time
                and cur.blocking <= tol):
            return cur
        prev = cur
