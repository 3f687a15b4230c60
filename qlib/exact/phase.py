"""Exact stationary laws of tiny graphs with phase-type services (Erlang, hyperexponential)."""
from __future__ import annotations

import math
import numpy as np
import functools
from dataclasses import dataclass, field
from itertools import permutations
from qlib.sim.start import _as_graph
from qlib.stats._results import ResultIO
from qlib.graphs import Graph
from qlib.sim.service import ServiceLaw

from qlib.exact.tiny import MAX_STATES, _check, _solve_left
from qlib.exact._truncation import _LevelEstimates
from typing import TYPE_CHECKING
if TYPE_CHECKING:   # names for the annotations only
    from qlib._types import GraphLike

__all__ = ['stationary_phase', 'PhaseResult']


# ------------------------------------------- phase-type services (issue 21) ----
@dataclass(frozen=True, repr=False, eq=False)
class PhaseResult(_LevelEstimates, ResultIO):
    """Stationary quantities of the chain with service phases
    (:func:`~qlib.exact.phase.stationary_phase`).

    Attributes
    ----------
    occupancy : numpy.ndarray
        ``q(0..levels)``: mean fraction of servers with at least i tasks.
    mean_response_time : float
        Little's law: ``E[total tasks] / (lam n (1 - blocking_probability))``.
    blocking_probability : float
        Fraction of arrivals lost at the truncation ``levels``.
    truncated_mass : float
        Stationary probability that some queue holds ``levels`` tasks.
    n_states : int
    n, lam, mu
        The inputs (``lam`` per server).
    response_time : float
        ``mean_response_time``, under the name every result shares.
    error_estimates, error_bounds : dict
        ``{"occupancy": array, "response_time": float}``: *estimated*
        truncation errors from the solves at ``levels − 1`` and
        ``levels − 2`` (made on first use), as for
        :class:`~qlib.exact.tiny.ExactResult`; not certified bounds.
    """

    occupancy: np.ndarray
    mean_response_time: float
    blocking_probability: float
    truncated_mass: float
    n_states: int
    n: int = 0
    lam: float = float("nan")
    mu: float = float("nan")
    _rerun: object = field(default=None, repr=False, compare=False)

    @property
    def response_time(self):
        """``mean_response_time``."""
        return self.mean_response_time


def stationary_phase(graph: GraphLike, lam: float, mu: float, service: ServiceLaw,
                     truncation: int) -> PhaseResult:
    """Exact stationary law of JSQ on a tiny graph with phase-type services (``lam`` per server, resampling rate ``mu``).

    The state of a server is idle, or (queue length ``l`` in ``1..levels``,
    phase ``k`` of the task in service); FIFO, the phase is drawn from
    ``alpha`` when a service starts.  By position for finite ``mu``
    (resampling: a uniform permutation of the positions at rate ``mu``),
    and for ``mu = inf`` by server, where an arrival at position ``v`` sees
    a uniformly random set of ``deg(v) + 1`` servers.  An arrival to a
    queue holding ``truncation`` tasks is lost.

    Parameters
    ----------
    graph : qlib.graphs.Graph
        ``n <= 3`` vertices.
    lam : float
        Arrival rate per server.
    mu : float
        ``0 <= mu <= inf``.
    service : qlib.sim.service.ServiceLaw
        A law with a phase-type representation (exponential, erlang,
        hyperexponential).
    truncation : int
        Truncation, ``>= 1``; ``(1 + truncation m)^n`` states for ``m`` phases.

    Returns
    -------
    PhaseResult
    """
    from itertools import combinations
    if not isinstance(service, ServiceLaw):
        raise TypeError("service must be a qlib.sim.service.ServiceLaw, got "
                        f"{type(service).__name__}")
    if service.phase_type is None:
        raise ValueError(f"service must be phase type, got {service.name}")
    if isinstance(graph, Graph) and graph.n > 3:
        raise ValueError(f"graph.n must be <= 3 for stationary_phase, got {graph.n}")
    graph = _as_graph(graph)   # a qlib Graph or an undirected networkx graph
    lam, mu, L = _check(graph, lam, mu, truncation, "truncation")
    al, T = (np.asarray(a, float) for a in service.phase_type)
    m = al.size
    t0 = -T.sum(axis=1)
    n = graph.n
    B = 1 + L * m
    size = B ** n
    if size > MAX_STATES:
        raise ValueError(f"truncation={L} gives {size} states > {MAX_STATES}")
    nbh = [np.concatenate([[v], graph.indices[graph.indptr[v]:graph.indptr[v + 1]]])
           for v in range(n)]
    # where arrivals look: lists of (rate, candidate servers)
    if math.isinf(mu):
        looks = []
        for v in range(n):
            subs = list(combinations(range(n), len(nbh[v])))
            looks += [(lam / len(subs), np.array(c)) for c in subs]
    else:
        looks = [(lam, nb) for nb in nbh]
    perms = list(permutations(range(n))) if 0 < mu < math.inf else []
    states = np.array(np.unravel_index(np.arange(size), (B,) * n)).T[:, ::-1]
    pw = B ** np.arange(n)
    ln = np.where(states == 0, 0, 1 + (states - 1) // m)
    ph = (states - 1) % m
    rows, cols, vals = [], [], []
    block = np.zeros(size)
    out = np.zeros(size)

    def add(r, c, v):
        rows.append(r)
        cols.append(c)
        vals.append(v)
        np.add.at(out, r, v)

    idx = np.arange(size)
    for rate, cand in looks:
        lc = ln[:, cand]
        mn = lc.min(axis=1)
        tied = lc == mn[:, None]
        nt = tied.sum(axis=1)
        for a, s in enumerate(cand):
            r = idx[tied[:, a]]
            w = rate / nt[tied[:, a]]
            j = states[r, s]
            full = ln[r, s] >= L
            np.add.at(block, r[full], w[full])
            r, w, j = r[~full], w[~full], j[~full]
            busy = j > 0
            add(r[busy], r[busy] + m * pw[s], w[busy])
            for k in range(m):
                if al[k] > 0:
                    add(r[~busy], r[~busy] + (1 + k) * pw[s], w[~busy] * al[k])
    for s in range(n):
        j = states[:, s]
        for k in range(m):
            r = idx[(j > 0) & (ph[:, s] == k)]
            base = r - (j[r] - 1 - (ln[r, s] - 1) * m) * pw[s]   # phase 0 of the same length
            for k2 in range(m):
                if k2 != k and T[k, k2] > 0:
                    add(r, base + k2 * pw[s], np.full(r.size, T[k, k2]))
            one = ln[r, s] == 1
            add(r[one], r[one] - j[r[one]] * pw[s], np.full(one.sum(), t0[k]))
            rr = r[~one]
            for k2 in range(m):
                if al[k2] > 0:
                    tgt = rr - (j[rr] - (1 + (ln[rr, s] - 2) * m + k2)) * pw[s]
                    add(rr, tgt, np.full(rr.size, t0[k] * al[k2]))
    for p in perms[1:]:
        tgt = states[:, list(p)] @ pw
        add(idx, tgt, np.full(size, mu / len(perms)))
    rows = np.concatenate(rows + [idx])
    cols = np.concatenate(cols + [idx])
    vals = np.concatenate(vals + [-out])
    pi = _solve_left(rows, cols, vals, size, size)
    pi = np.maximum(pi, 0.0)
    pi /= pi.sum()
    occ = np.array([(pi[:, None] * (ln >= i)).sum() / n for i in range(L + 1)])
    blk = float(pi @ block) / (lam * n)
    R = float(pi @ ln.sum(axis=1)) / (lam * n * (1 - blk))
    return PhaseResult(occupancy=occ, mean_response_time=R, blocking_probability=blk,
                       truncated_mass=float(pi[(ln >= L).any(axis=1)].sum()),
                       n_states=int(size), n=int(n), lam=float(lam), mu=float(mu),
                       _rerun=functools.partial(stationary_phase, graph, lam, mu, service))
