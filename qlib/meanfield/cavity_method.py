"""The cavity (asymptotic-independence) approximation for general services.

As ``n -> inf`` with fast resampling, a tagged queue is assumed to see the
others as independent draws from the occupancy ``q`` (the *ansatz* of
Bramson, Lu and Prabhakar).  A task then joins a queue holding ``i`` tasks
with probability ``q(i) phi(q(i)) - q(i+1) phi(q(i+1))``, so the tagged queue
is a single FIFO server whose arrival rate, when it holds ``i`` tasks, is

    lam_i = lam [q(i) phi(q(i)) - q(i+1) phi(q(i+1))] / (q(i) - q(i+1)),

and ``q`` must be the tail of its own stationary law (a fixed point).  For
phase-type services the tagged queue is a level-structured Markov chain on
``(i, phase)``; :func:`~qlib.meanfield.cavity_method.cavity` solves it exactly for given ``q`` (sparse LU)
and iterates to the fixed point.  With Exp(1) services the fixed point is
the fluid equilibrium ``q*`` of :func:`qlib.meanfield.fluid.equilibrium`, and with
``phi = 1`` (no neighbours) it is the M/PH/1 queue.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from qlib.meanfield.degrees import DegreeDistribution
from qlib.stats._results import CompactResult
from typing import TYPE_CHECKING
if TYPE_CHECKING:   # names for the annotations only
    from numpy.typing import ArrayLike
    from qlib._types import DegreeLike
    from qlib.sim.service import ServiceLaw

__all__ = ["cavity", "CavityResult", "arrival_rates", "level_chain"]


@dataclass(frozen=True, repr=False, eq=False)
class CavityResult(CompactResult):
    """Fixed point of the cavity map.

    Attributes
    ----------
    occupancy : numpy.ndarray
        ``q(0..levels)``; ``q(1) = lam`` up to the truncation.
    mean_response_time : float
        ``sum_{i>=1} q(i) / lam`` (Little's law).
    rates : numpy.ndarray
        The state-dependent arrival rates ``lam_0..lam_{levels-1}``.
    iterations : int
    residual : float
        ``max |F(q) - q|`` at the returned ``q``.
    truncated_mass : float
        Stationary probability of the top level (arrivals there are lost).
    """

    occupancy: np.ndarray
    mean_response_time: float
    rates: np.ndarray
    iterations: int
    residual: float
    truncated_mass: float


def arrival_rates(q: ArrayLike, lam: float, degrees: DegreeDistribution) -> np.ndarray:
    """``lam_i = lam [g(q(i)) - g(q(i+1))] / (q(i) - q(i+1))``, ``g(x) = x phi(x)``,
    for ``i = 0..len(q)-2``; where ``q(i) - q(i+1)`` is tiny, the limit
    ``lam g'(q(i))``."""
    q = np.asarray(q, float)
    phi = degrees.pgf
    g = q * np.asarray(phi(q), float)
    a, b = q[:-1], q[1:]
    d = a - b
    gp = np.asarray(phi(a), float) + a * np.asarray(degrees.pgf_derivative(a), float)
    small = d <= 1e-12 * np.maximum(a, 1e-300)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(small, gp, (g[:-1] - g[1:]) / np.where(small, 1.0, d))
    return lam * r


def level_chain(rates: ArrayLike, service: ServiceLaw) -> np.ndarray:
    """Stationary law of one FIFO server with arrival rate ``rates[i]`` at
    ``i`` tasks (``i < L = len(rates)``; arrivals at ``L`` are lost) and
    phase-type services: returns ``P(i tasks)``, ``i = 0..L``.

    State 0 is idle, state ``1 + (i-1) m + k`` holds ``i`` tasks with the
    task in service in phase ``k``; solved by sparse LU with the balance
    equation of state 0 replaced by ``pi_0 = 1``.
    """
    al, T = (np.asarray(a, float) for a in service.phase_type)
    m = al.size
    t0 = -T.sum(axis=1)
    L = len(rates)
    N = 1 + L * m
    r, c, v = [], [], []
    for k in range(m):                       # idle -> 1 task, phase k
        r.append(np.array([0]))
        c.append(np.array([1 + k]))
        v.append(np.array([rates[0] * al[k]]))
    i = np.repeat(np.arange(1, L + 1), m)
    k = np.tile(np.arange(m), L)
    s = 1 + (i - 1) * m + k
    up = i < L
    r.append(s[up])
    c.append(s[up] + m)
    v.append(np.asarray(rates, float)[i[up]])
    for k2 in range(m):
        off = T[k, k2] * (k != k2)
        sel = off > 0
        r.append(s[sel])
        c.append(s[sel] - k[sel] + k2)
        v.append(off[sel])
        top = (i > 1) & (t0[k] * al[k2] > 0)
        r.append(s[top])
        c.append(1 + (i[top] - 2) * m + k2)
        v.append(t0[k][top] * al[k2])
    one = i == 1
    r.append(s[one])
    c.append(np.zeros(one.sum(), int))
    v.append(t0[k][one])
    r, c, v = (np.concatenate(x) for x in (r, c, v))
    out = np.bincount(r, weights=v, minlength=N)
    r = np.concatenate([r, np.arange(N)])
    c = np.concatenate([c, np.arange(N)])
    v = np.concatenate([v, -out])
    keep = c != 0
    GT = sp.csc_matrix((np.append(v[keep], 1.0), (np.append(c[keep], 0),
                                                  np.append(r[keep], 0))), shape=(N, N))
    rhs = np.zeros(N)
    rhs[0] = 1.0
    x = spla.spsolve(GT, rhs)
    x = np.maximum(x, 0.0)
    x /= x.sum()
    p = np.zeros(L + 1)
    p[0] = x[0]
    p[1:] = x[1:].reshape(L, m).sum(axis=1)
    return p


def cavity(lam: float, degrees: DegreeLike, service: ServiceLaw, truncation: int = 60, *,
           tol: float = 1e-12, max_iter: int = 5000,
           damping: float = 0.5) -> CavityResult:
    """Fixed point ``q`` of the cavity map for phase-type services.

    Parameters
    ----------
    lam : float
        Arrival rate per server, ``0 < lam < 1``.
    degrees : qlib.DegreeDistribution
        Limiting degree law (``phi``); a task sees ``d + 1`` queues.
    service : qlib.sim.service.ServiceLaw
        A phase-type law (exponential, erlang, hyperexponential).  Any
        object with the attributes ``name`` and ``phase_type`` (``None`` or
        the pair ``(α, T)``) is accepted: ``qlib.meanfield`` is a lower
        floor than ``qlib.sim`` and does not import it.
    truncation : int
        Truncation ``L`` of the queue length, ``>= 2``.
    tol : float
        Stop when ``max |F(q) - q| < tol``.
    max_iter : int
    damping : float
        ``q <- (1 - damping) q + damping F(q)``, in ``(0, 1]``.

    Returns
    -------
    CavityResult

    Examples
    --------
    >>> from qlib.meanfield import fluid
    >>> from qlib.sim.service import erlang, exponential
    >>> c = cavity(0.7, {2: 1.0}, exponential())   # exponential services: the fluid limit
    >>> round(c.mean_response_time, 4), round(fluid.response_time(0.7, {2: 1.0}), 4)
    (1.3568, 1.3568)
    >>> round(cavity(0.7, {2: 1.0}, erlang(2)).mean_response_time, 3)   # less variable services
    1.272
    """
    from qlib import _validate as V   # the shared checks: a bool or a str is no lam
    lam = V.real(lam, "lam", lo=0, hi=1, lo_open=True, hi_open=True)
    degrees = DegreeDistribution.coerce(degrees)
    # duck-typed: qlib.sim.service lives on a higher floor (reference page)
    if not (hasattr(service, "phase_type") and hasattr(service, "name")):
        raise TypeError(f"service must be a qlib.sim.service.ServiceLaw, got "
                        f"{type(service).__name__}")
    if service.phase_type is None:
        raise ValueError(f"service must be phase type, got {service.name}")
    V.integer(truncation, "truncation", lo=2)
    damping = V.real(damping, "damping", lo=0, hi=1, lo_open=True)
    L = int(truncation)
    # start: the M/M/1 tail lam^i (a fixed point for phi = 1, exp services)
    q = lam ** np.arange(L + 1, dtype=float)
    res = math.inf
    it = 0
    for it in range(1, max_iter + 1):
        p = level_chain(arrival_rates(q, lam, degrees), service)
        new = np.cumsum(p[::-1])[::-1]     # tail sums: exact far below 1e-16
        new /= new[0]
        res = float(np.max(np.abs(new - q)))
        q = (1 - damping) * q + damping * new
        if res < tol:
            break
    return CavityResult(occupancy=q, mean_response_time=float(q[1:].sum() / lam),
                        rates=arrival_rates(q, lam, degrees), iterations=it,
                        residual=res, truncated_mass=float(p[-1]))
