"""The occupancy chain at μ = ∞ (JSQ(d+1) sampled without replacement): a level cap, or the adaptive projection without one."""
from __future__ import annotations

import math
import numpy as np
import scipy.sparse as sp
import functools
from dataclasses import dataclass, field

from qlib.stats._results import ResultIO
from qlib import _validate as V
from qlib.exact import _fsp as fsp
from qlib.exact._iad import _solve_iad
from qlib.exact._truncation import _LevelEstimates
from qlib.meanfield import fluid
from qlib.meanfield.degrees import DegreeDistribution
from typing import TYPE_CHECKING
if TYPE_CHECKING:   # names for the annotations only
    from qlib._types import DegreeLike

__all__ = ['occupancy_chain', 'OccupancyChainResult', 'occupancy_chain_adaptive', 'AdaptiveChainResult',
           'MAX_CHAIN_STATES']


@dataclass(frozen=True, repr=False, eq=False)
class OccupancyChainResult(_LevelEstimates, ResultIO):
    """Stationary law of the ``μ = ∞`` occupancy chain (:func:`~qlib.exact.occupancy.occupancy_chain`).

    Attributes
    ----------
    occupancy : numpy.ndarray, shape (levels+1,)
        ``E q_n(0..levels)``, ``q_n(i) = Q_i / n``.
    response_time : float
        Mean response time of accepted tasks by Little's law,
        ``E[Σ_i Q_i] / (n λ (1 − blocking_probability))``.
    blocking_probability : float
        Fraction of arrivals lost because the shortest queue seen holds
        ``levels`` tasks.
    truncated_mass : float
        ``P(Q_levels > 0)``.
    n_states : int
        ``C(n + levels, levels)``.
    n, lam, levels, replacement
        The inputs.
    mean_response_time : float
        ``response_time`` (the name of the other exact results).
    error_estimates, error_bounds : dict
        ``{"occupancy": array, "response_time": float}``: *estimated*
        errors against the uncapped chain, from the solves at ``levels − 1``
        and ``levels − 2`` (made on first use), as for
        :class:`~qlib.exact.tiny.ExactResult`; not certified bounds.
    """

    _response = "response_time"
    occupancy: np.ndarray
    response_time: float
    blocking_probability: float
    truncated_mass: float
    n_states: int
    n: int
    lam: float
    levels: int
    replacement: bool
    _rerun: object = field(default=None, repr=False, compare=False)

    @property
    def mean_response_time(self):
        """``response_time``."""
        return self.response_time


#: Largest state space :func:`~qlib.exact.occupancy.occupancy_chain` builds.
MAX_CHAIN_STATES = 3_000_000


def _chain_states(n, K):
    """All ``n >= Q_1 >= ... >= Q_K >= 0`` as rows, indexed by their rank.

    ``u = (Q_K, ..., Q_1)`` is non-decreasing; ``c_m = u_m + m − 1``
    (``m = 1..K``) is strictly increasing in ``[0, n + K − 1]`` and the
    rank is ``Σ_m C(c_m, m)`` (combinatorial number system), a bijection
    onto ``[0, C(n + K, K))``.
    """
    from itertools import combinations
    N = math.comb(n + K, K)
    c = np.fromiter((x for comb in combinations(range(n + K), K) for x in comb),
                    np.int64, N * K).reshape(N, K)
    B = np.array([[math.comb(a, b) for b in range(K + 1)]
                  for a in range(n + K + 1)], dtype=np.int64)
    m = np.arange(1, K + 1)
    rank = B[c, m].sum(axis=1)
    order = np.empty(N, np.int64)
    order[rank] = np.arange(N)
    c = c[order]
    Q = (c - (m - 1))[:, ::-1]            # Q[:, j-1] = Q_j
    return Q, c, B


def occupancy_chain(n: int, lam: float, degrees: DegreeLike, truncation: int, *,
                    replacement: bool = False) -> OccupancyChainResult:
    """Exact stationary law of the ``μ = ∞`` occupancy chain, truncated.

    States ``n >= Q_1 >= ... >= Q_K >= 0`` (``Q_i`` servers hold at least
    ``i`` tasks, ``K = truncation``).  An arrival raises level ``j`` at rate

        n λ Σ_d p(d) [C(Q_{j-1}, d+1) − C(Q_j, d+1)] / C(n, d+1),   Q_0 = n,

    (the task meets ``d + 1`` distinct uniform servers and joins a shortest
    one; with ``replacement=True`` the ratio of binomials is replaced by
    ``(Q/n)^{d+1}``); an arrival whose shortest queue holds ``K`` tasks is
    lost.  A departure lowers level ``j`` at rate ``Q_j − Q_{j+1}``.

    Parameters
    ----------
    n : int
        Number of servers, ``>= max_degree + 1`` (``>= 1`` with replacement).
    lam : float
        ``λ ∈ (0, 1)``.
    degrees : qlib.DegreeDistribution
        Degree law ``p``.
    truncation : int
        Truncation ``K >= 1``.
    replacement : bool
        Sample with replacement.

    Returns
    -------
    OccupancyChainResult

    Raises
    ------
    ValueError
        If ``n`` or ``truncation`` is out of range, ``lam`` not in ``(0, 1)``,
        or ``C(n + K, K) > MAX_CHAIN_STATES``.
    TypeError
        If ``degrees`` is not a DegreeDistribution.

    Notes
    -----
    Truncation only removes tasks, so (by the usual coupling of JSQ with
    and without a buffer) the truncated occupancy grows with ``K``; the
    chapter *How large must n be?* takes ``K`` where one more level changes
    nothing to the digits used.

    Examples
    --------
    >>> from qlib import DegreeDistribution, exact
    >>> c = exact.occupancy_chain(6, 0.8, DegreeDistribution.point(1), 6)
    >>> L = 0.8 * (1 - c.blocking_probability) * c.response_time   # Little's law
    >>> round(float(c.occupancy[1]), 4), abs(c.mean_queue_length - L) < 1e-12
    (0.7989, True)
    """
    degrees = DegreeDistribution.coerce(degrees)
    lam = V.real(lam, "lam", lo=0, hi=1, lo_open=True, hi_open=True)
    nmin = 1 if replacement else degrees.max_degree + 1
    n, K = V.integer(n, "n", lo=nmin), V.integer(truncation, "truncation", lo=1)
    if math.comb(n + K, K) > MAX_CHAIN_STATES:
        raise ValueError(f"C(n + truncation, truncation) = {math.comb(n + K, K)} states "
                         f"exceeds MAX_CHAIN_STATES = {MAX_CHAIN_STATES}")
    # T[a] = P(a uniform sample of d+1 servers lies among a given a servers)
    a = np.arange(n + 1)
    T = np.zeros(n + 1)
    for d, pd in enumerate(degrees.pmf.tolist()):
        if pd > 0:
            T += pd * ((a / n) ** (d + 1) if replacement else
                       np.array([math.comb(int(x), d + 1) for x in a]) / math.comb(n, d + 1))
    Q, c, B = _chain_states(n, K)
    N = Q.shape[0]
    ar = np.arange(N)
    Qx = np.column_stack([np.full(N, n), Q, np.zeros(N, np.int64)])   # Q_0..Q_{K+1}
    rr, cc, vv = [], [], []
    out = np.zeros(N)
    for j in range(1, K + 1):
        col = K - j                        # c[:, col] is c_m with m = K + 1 - j
        m = K + 1 - j
        up = n * lam * (T[Qx[:, j - 1]] - T[Qx[:, j]])
        ok = up > 0
        rr.append(ar[ok]); vv.append(up[ok])
        cc.append(ar[ok] + B[c[ok, col], m - 1])
        out += up
        dn = (Qx[:, j] - Qx[:, j + 1]).astype(float)
        ok = dn > 0
        rr.append(ar[ok]); vv.append(dn[ok])
        cc.append(ar[ok] - B[c[ok, col] - 1, m - 1])
        out += dn
    rows = np.concatenate(rr + [ar])
    cols = np.concatenate(cc + [ar])
    vals = np.concatenate(vv + [-out])
    GT = sp.csr_matrix((vals, (cols, rows)), shape=(N, N))
    acc = out - Q[:, 0]                       # accepted arrival rate
    pi = _solve_iad(GT, Q.sum(axis=1), acc, Q[:, 0].astype(float), out.max())
    occ = np.concatenate([[1.0], pi @ Q / n])
    blocked = float(pi @ T[Q[:, -1]])
    tasks = float(pi @ Q.sum(axis=1))
    return OccupancyChainResult(
        occupancy=occ, response_time=tasks / (n * lam * (1.0 - blocked)),
        blocking_probability=blocked, truncated_mass=float(pi[Q[:, -1] > 0].sum()),
        n_states=int(N), n=n, lam=lam, levels=K, replacement=bool(replacement),
        _rerun=functools.partial(occupancy_chain, n, lam, degrees, replacement=replacement))


@dataclass(frozen=True, repr=False, eq=False)
class AdaptiveChainResult(ResultIO):
    """Stationary law of the ``μ = ∞`` occupancy chain on an adaptively
    chosen state set (:func:`~qlib.exact.occupancy.occupancy_chain_adaptive`).

    Attributes
    ----------
    occupancy : numpy.ndarray
        ``E q_n(0..L)``, ``L`` the highest level any kept state reaches.
    response_time : float
        ``E[Σ_i Q_i] / (n λ)`` (Little's law; no arrival is lost).
    response_time_error : float
        Truncation error estimate: ``|R(tol) − R(10 tol)|``, the change of
        ``response_time`` over the last decade of the threshold.
    occupancy_error : float
        The same for the occupancy, largest over the levels.
    frontier_mass : float
        Summed estimated probability of the states just outside the set.
    n_states : int
        Number of states kept at ``tol``.
    n_states_coarse : int
        Number of states kept at ``10 tol``.
    n, lam, tol, replacement
        The inputs.
    error_estimates, error_bounds : dict
        ``{"occupancy": occupancy_error, "response_time":
        response_time_error}``: the two estimates above under the names
        every exact solver's result shares (estimates, not bounds).
    mean_response_time : float
        ``response_time`` (the name of the other exact results).
    """

    occupancy: np.ndarray
    response_time: float
    response_time_error: float
    occupancy_error: float
    frontier_mass: float
    n_states: int
    n_states_coarse: int
    n: int
    lam: float
    tol: float
    replacement: bool

    @property
    def mean_queue_length(self) -> float:
        """Mean number of tasks per server, ``Σ_{i≥1} q(i)`` (``= lam · response_time``)."""
        return float(np.sum(self.occupancy[1:]))

    @property
    def lam_total(self) -> float:
        """The total arrival rate ``n λ`` (``lam`` is per server)."""
        return self.n * self.lam

    @property
    def error_estimates(self):
        """``{"occupancy": occupancy_error, "response_time": response_time_error}``."""
        return {"occupancy": self.occupancy_error, "response_time": self.response_time_error}

    @property
    def error_bounds(self):
        """The same dict as ``error_estimates`` (estimates, not certified bounds)."""
        return self.error_estimates

    @property
    def mean_response_time(self):
        """``response_time``."""
        return self.response_time


def _sample_table(n, degrees, replacement):
    """``T[a]``: probability that the ``d + 1`` servers an arrival meets all
    lie among a given ``a`` of the ``n`` servers, averaged over ``d ~ p``."""
    a = np.arange(n + 1)
    T = np.zeros(n + 1)
    for d, pd in enumerate(degrees.pmf.tolist()):
        if pd > 0:
            T += pd * ((a / n) ** (d + 1) if replacement else
                       np.array([math.comb(int(x), d + 1) for x in a]) / math.comb(n, d + 1))
    T[n] = 1.0
    return T


def occupancy_chain_adaptive(n: int, lam: float, degrees: DegreeLike, *, tol: float = 1e-9,
                             replacement: bool = False,
                             max_states: int = 400_000) -> AdaptiveChainResult:
    """Stationary law of the ``μ = ∞`` occupancy chain without a level cap.

    The chain is that of :func:`~qlib.exact.occupancy.occupancy_chain` (states
    ``n >= Q_1 >= Q_2 >= ...``, arrivals raise level ``j`` at rate
    ``n λ Σ_d p(d) [C(Q_{j-1}, d+1) − C(Q_j, d+1)] / C(n, d+1)``, departures
    lower it at rate ``Q_j − Q_{j+1}``), but no arrival is lost: instead of
    all states below a level ``K``, the solver keeps the states whose
    estimated stationary probability exceeds ``tol`` (an adaptive
    finite-state projection).  At heavy load the chain spends long spells
    with many full levels, which a level cap must pay for with
    ``C(n + K, K)`` states; here a state is stored as its number of full
    levels and the partial levels above them.

    Parameters
    ----------
    n : int
        Number of servers, ``>= max_degree + 1`` (``>= 1`` with replacement).
    lam : float
        ``λ ∈ (0, 1)``.
    degrees : qlib.DegreeDistribution
        Degree law ``p``.
    tol : float
        Admission threshold for a state's estimated probability, in
        ``[1e-13, 1e-3]``.
    replacement : bool
        Sample with replacement (``C(Q, d+1)/C(n, d+1)`` becomes
        ``(Q/n)^{d+1}``).
    max_states : int
        Refuse (``ValueError``) to keep more states than this.

    Returns
    -------
    AdaptiveChainResult
        Occupancy, response time, and their truncation error estimates.

    Raises
    ------
    ValueError
        If ``n`` is out of range, ``lam`` not in ``(0, 1)``, ``tol`` or
        ``max_states`` out of range, or more than ``max_states`` states are
        needed.
    TypeError
        If ``degrees`` is not a DegreeDistribution.

    Notes
    -----
    Rounds: the chain restricted to the current set is solved (a transition
    leaving the set is redirected to the most probable kept state with the
    same total number of tasks, so the total still moves by ±1; aggregation
    over the total and power sweeps, warm started); each state just outside
    gets the estimate inflow / outflow rate; those above the threshold, and
    breadth first their own outside neighbours above it, are admitted; until
    none is.  This is done at ``10 tol`` and then continued at ``tol``; the
    change between the two is reported as the error.  It is an *estimate*,
    not a proven bound: in the cases the tests measure against full
    enumeration the error falls by a factor of about 5 per decade of the
    threshold, so the change over one decade exceeds the remaining error.
    """
    degrees = DegreeDistribution.coerce(degrees)
    lam = V.real(lam, "lam", lo=0, hi=1, lo_open=True, hi_open=True)
    nmin = 1 if replacement else degrees.max_degree + 1
    n = V.integer(n, "n", lo=nmin)
    tol = V.real(tol, "tol", lo=1e-13, hi=1e-3)
    V.integer(max_states, "max_states", lo=1)
    T = _sample_table(n, degrees, replacement)
    # start from the fluid equilibrium, rounded
    q = fluid.equilibrium(lam, degrees)
    c = np.round(n * np.asarray(q)[1:]).astype(np.int64)
    c = c[c > 0]
    s = int(np.sum(c >= n))
    W0 = np.concatenate([[s], c[s:], [0]])[None, :].astype(np.int64)
    (Wc, pc, _), (W, pi, frontier) = fsp.grow(n, lam, T, W0, (10 * tol, tol), int(max_states))
    occ_c, occ = fsp.occupancy(Wc, n, pc), fsp.occupancy(W, n, pi)
    occ_c = np.concatenate([occ_c, np.zeros(max(0, occ.size - occ_c.size))])[: occ.size]
    R_c = float(pc @ fsp.tasks(Wc, n)) / (n * lam)
    R = float(pi @ fsp.tasks(W, n)) / (n * lam)
    return AdaptiveChainResult(
        occupancy=occ, response_time=R, response_time_error=abs(R - R_c),
        occupancy_error=float(np.max(np.abs(occ - occ_c))), frontier_mass=frontier,
        n_states=int(W.shape[0]), n_states_coarse=int(Wc.shape[0]), n=n, lam=lam,
        tol=tol, replacement=bool(replacement))
