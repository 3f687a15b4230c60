"""The brute-force occupancy chain of JSQ at small n: every state up to L levels, one sparse solve.

An independent route to the stationary law that :func:`~qlib.halfin_whitt.chain.stationary_jsq` computes
by adaptive truncation: no windows, no redirection, no growth.  The chain of
``(Q_1, …, Q_L)``, ``n >= Q_1 >= … >= Q_L >= 0``, is enumerated whole; the
only truncation is the level cap ``L``: an arrival that would create a queue
of length ``L + 1`` (every queue has ``L`` tasks) is blocked.  It has
``C(n + L, L)`` states (75 k at ``n = 16``, ``L = 6``).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from qlib import _validate as V
from qlib.halfin_whitt._common import _check_beta, _check_n
from typing import TYPE_CHECKING
from qlib.stats._results import fields_eq
if TYPE_CHECKING:   # names for the annotations only
    from qlib.halfin_whitt.chain import StationaryJSQ
    from scipy import sparse

__all__ = ["occupancy_generator", "brute_force_jsq", "BruteForceJSQ", "estimate_ratios",
           "brute_force_converged", "BruteForceConverged"]

#: the quantities both routes report (names as in :class:`~qlib.halfin_whitt.chain.StationaryJSQ`)
QUANTITIES = ("p_wait", "mean_q1", "mean_idle", "mean_q2", "mean_q3", "mean_tasks",
              "mean_waiting", "var_x1", "mean_x1x2")


def _check_truncation(truncation):
    return V.integer(truncation, "truncation", lo=2)


def occupancy_generator(n: int, lam: float, truncation: int) -> tuple[np.ndarray, sparse.csr_matrix]:
    """States and generator of JSQ's occupancy chain capped at ``truncation``.

    Parameters
    ----------
    n : int
        Number of servers, ``n >= 1``.
    lam : float
        Total arrival rate ``λ_n > 0``.
    truncation : int
        The level cap ``L >= 2``; arrivals with ``Q_L = n`` are blocked.

    Returns
    -------
    states : ndarray, shape (C(n + L, L), L)
        Every occupancy vector ``n >= Q_1 >= … >= Q_L >= 0``, ordered by the
        number of tasks ``N = Σ_i Q_i``.
    A : scipy.sparse.csr_matrix
        The generator: an arrival raises ``Q_{i+1}`` for the smallest ``i``
        with ``Q_{i+1} < n`` (it joins a shortest queue, of length ``i``); a
        departure from a queue of length exactly ``i`` has rate
        ``Q_i − Q_{i+1}`` and lowers ``Q_i``.

    Raises
    ------
    TypeError, ValueError
        For a bad ``n``, ``lam`` or ``truncation``, naming it.
    """
    n = _check_n(n)
    L = _check_truncation(truncation)
    if not (np.isfinite(lam) and lam > 0):
        raise ValueError(f"lam must be finite and > 0, got {lam}")
    S = np.array(list(itertools.combinations_with_replacement(range(n, -1, -1), L)),
                 dtype=np.int64)
    # ordered by the number of tasks N: the generator is then block
    # tridiagonal (every move changes N by one) and a sparse LU in this
    # natural order has little fill
    S = S[np.argsort(S.sum(axis=1), kind="stable")]
    code = S @ (n + 1) ** np.arange(L - 1, -1, -1, dtype=np.int64)
    order = np.argsort(code)

    def index(T):
        return order[np.searchsorted(code[order], T @ (n + 1) ** np.arange(L - 1, -1, -1))]

    rows, cols, rates = [], [], []
    free = S < n
    k = np.nonzero(free.any(axis=1))[0]          # an arrival is admitted
    T = S[k].copy()
    T[np.arange(k.size), np.argmax(free[k], axis=1)] += 1
    rows.append(k); cols.append(index(T)); rates.append(np.full(k.size, float(lam)))
    nxt = np.concatenate([S[:, 1:], np.zeros((S.shape[0], 1), np.int64)], axis=1)
    for i in range(L):                            # departures from queues of length i + 1
        r = S[:, i] - nxt[:, i]
        k = np.nonzero(r > 0)[0]
        T = S[k].copy()
        T[:, i] -= 1
        rows.append(k); cols.append(index(T)); rates.append(r[k].astype(float))
    m = S.shape[0]
    A = sp.csr_matrix((np.concatenate(rates), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(m, m))
    return S, (A - sp.diags(np.asarray(A.sum(axis=1)).ravel())).tocsr()


@fields_eq
@dataclass(frozen=True)
class BruteForceJSQ:
    """Result of :func:`~qlib.halfin_whitt.brute.brute_force_jsq`: the stationary law ``pi`` on
    ``states`` of the chain capped at ``levels``, ``blocked = π(Q_L = n)``
    (the fraction of arrivals blocked), ``residual = ‖π A‖₁`` and the
    quantities of :class:`~qlib.halfin_whitt.chain.StationaryJSQ` with the same names (``p_wait``,
    ``mean_q1``, ``mean_idle``, ``mean_q2``, ``mean_q3``, ``mean_tasks``,
    ``mean_waiting``, ``var_x1``, ``mean_x1x2``), in ``values`` too."""

    n: int
    beta: float
    lam_total: float
    levels: int
    states: np.ndarray
    pi: np.ndarray
    blocked: float
    residual: float
    values: dict

    @property
    def lam(self) -> float:
        """The arrival rate per server ``λ_n / n`` (``lam_total`` is the total)."""
        return self.lam_total / self.n

    def __getattr__(self, name):
        v = self.__dict__.get("values", {})
        if name in v:
            return v[name]
        raise AttributeError(name)


def _values(S, pi, n):
    sq = math.sqrt(n)
    q1 = S[:, 0].astype(float)
    q2 = S[:, 1].astype(float)
    q3 = S[:, 2].astype(float) if S.shape[1] > 2 else np.zeros_like(q1)
    N = S.sum(axis=1).astype(float)
    x1, x2 = (q1 - n) / sq, q2 / sq
    m1 = float(pi @ x1)
    return {"p_wait": float(pi[S[:, 0] == n].sum()), "mean_q1": float(pi @ q1),
            "mean_idle": float(pi @ (n - q1)), "mean_q2": float(pi @ q2),
            "mean_q3": float(pi @ q3), "mean_tasks": float(pi @ N),
            "mean_waiting": float(pi @ (N - q1)), "var_x1": float(pi @ (x1 - m1) ** 2),
            "mean_x1x2": float(pi @ (x1 * x2))}


def brute_force_jsq(n: int, beta: float, truncation: int) -> BruteForceJSQ:
    """Stationary law of JSQ's occupancy chain with ``λ_n = n − β√n``, capped
    at ``truncation``, by one sparse LU solve of the whole chain.

    Parameters
    ----------
    n : int
        ``n >= 1``.
    beta : float
        ``0 < beta < √n``.
    truncation : int
        ``L >= 2``; the chain has ``C(n + L, L)`` states.

    Returns
    -------
    BruteForceJSQ

    Raises
    ------
    TypeError, ValueError
        For a bad ``n``, ``beta`` or ``truncation``, naming it.

    Notes
    -----
    The cap changes the chain only through the blocked arrivals, so in the
    capped chain rate balance for the number of tasks reads
    ``E[Q_1] = λ_n (1 − blocked)`` and balance for ``N − Q_1`` reads
    ``E[Q_2] = λ_n (P(wait) − blocked)``: both identities of the true chain
    hold up to ``λ_n · blocked`` *by construction*, for any solution of the
    capped balance equations; they check the solve, not the truncation.
    """
    n = _check_n(n)
    beta = _check_beta(beta, n)
    lam = n - beta * math.sqrt(n)
    S, A = occupancy_generator(n, lam, truncation)
    m = S.shape[0]
    # π(empty) = 1 and its balance equation dropped (a row of ones for the
    # normalisation would be dense and ruin the sparse LU's fill); the empty
    # system is the first state
    j0 = 0
    keep = np.arange(m) != j0
    G = A.T.tocsr()
    M = G[keep][:, keep].tocsc()
    x = spla.splu(M, permc_spec="NATURAL").solve(-G[keep][:, [j0]].toarray().ravel())
    pi = np.empty(m)
    pi[keep], pi[j0] = x, 1.0
    pi /= pi.sum()
    res = float(np.abs(A.T @ pi).sum())
    return BruteForceJSQ(n=n, beta=beta, lam_total=lam, levels=int(truncation), states=S, pi=pi,
                         blocked=float(pi[S[:, -1] == n].sum()), residual=res,
                         values=_values(S, pi, n))


@fields_eq
@dataclass(frozen=True)
class BruteForceConverged:
    """Result of :func:`~qlib.halfin_whitt.brute.brute_force_converged`: ``values`` at the highest cap,
    ``own_error[q]``: the estimated remaining truncation error of each (the
    geometric tail of the changes between successive caps, summed),
    ``changes[q]``: the last two changes, ``levels``: the caps solved,
    ``states``: the size of the largest chain, ``blocked``: its blocking
    probability."""

    n: int
    beta: float
    levels: tuple
    values: dict
    own_error: dict
    changes: dict
    states: int
    blocked: float


def brute_force_converged(n: int, beta: float, truncation: int) -> BruteForceConverged:
    """The brute force at three successive caps ``L − 2, L − 1, L``, with the
    error of the last estimated by summing the geometric tail of its changes.

    With ``d₁ = |q(L−1) − q(L−2)|``, ``d₂ = |q(L) − q(L−1)|`` and ``r = d₂/d₁``
    the estimated remaining error of ``q(L)`` is ``d₂ · r/(1 − r)`` (the sum
    of the changes still to come if they keep shrinking by ``r``); where
    ``d₂`` is at round-off (``1e-14`` relative) it is that round-off, and
    where the changes do not shrink (``r >= 1``) it is ``inf``.  The
    level cap changes only blocked arrivals at ``Q_L = n``, whose probability
    falls by about ``ρ^n`` per level, so ``r`` is small at heavy load too.

    Parameters
    ----------
    n : int
    beta : float
    truncation : int
        The highest cap ``L >= 4``.

    Returns
    -------
    BruteForceConverged
    """
    L = _check_truncation(truncation)
    if L < 4:
        raise ValueError(f"truncation must be >= 4 (three caps >= 2), got {L}")
    runs = [brute_force_jsq(n, beta, k) for k in (L - 2, L - 1, L)]
    own, changes = {}, {}
    floor = 1e-14
    for q in QUANTITIES:
        v = [r.values[q] for r in runs]
        scale = max(1.0, abs(v[2]))
        d1, d2 = abs(v[1] - v[0]), abs(v[2] - v[1])
        changes[q] = (d1, d2)
        if d2 <= floor * scale:
            own[q] = floor * scale
        elif d1 > d2:
            rr = d2 / d1
            own[q] = d2 * rr / (1 - rr)
        else:
            own[q] = math.inf
    last = runs[-1]
    return BruteForceConverged(n=last.n, beta=last.beta, levels=(L - 2, L - 1, L),
                               values=dict(last.values), own_error=own, changes=changes,
                               states=int(last.states.shape[0]), blocked=last.blocked)


def estimate_ratios(st: StationaryJSQ, bf: BruteForceConverged) -> dict:
    """Ratio of true error to error estimate for each quantity of a
    :func:`~qlib.halfin_whitt.chain.stationary_jsq` result ``st`` against a
    :class:`~qlib.halfin_whitt.brute.BruteForceConverged` ``bf`` at the same ``(n, β)``.

    The truth of ``mean_q1`` and ``mean_idle`` is exact (``λ_n`` and
    ``β√n``, rate balance); for the others it is the brute force, known to
    within its ``own_error``.

    Returns
    -------
    dict
        quantity → ``(error, own, estimate)``: ``error = |st − truth|`` (the
        truth as above), ``own`` the truth's uncertainty (0 for the exact
        two), ``estimate = st.error_estimates[q]``.  The estimate covers the
        error iff ``error <= estimate + own``; the ratio is resolved where
        ``own`` is small against ``estimate``.
    """
    if (st.n, st.beta) != (bf.n, bf.beta):
        raise ValueError(f"st is at (n, beta) = {(st.n, st.beta)}, bf at {(bf.n, bf.beta)}")
    out = {}
    for q in QUANTITIES:
        if q == "mean_q1":
            truth, own = st.lam_total, 0.0
        elif q == "mean_idle":
            truth, own = st.n - st.lam_total, 0.0
        else:
            truth, own = bf.values[q], bf.own_error[q]
        out[q] = (abs(getattr(st, q) - truth), own, st.error_estimates[q])
    return out
