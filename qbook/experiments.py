"""The mechanics of ``chapters/experiments.md``: the plan and the runs of its
cells, the burn-in of the ring and triangle cells and the leftover bias it allows.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

import qlib
from qlib.meanfield import fluid
from qlib.meanfield.double_star import hub_cap
from qlib.sim import replicate_two_starts
from qlib.stats import Check, burn_in_check, iat, leftover_bias, mm1_relaxation_time, tau_upper

__all__ = ["burn_in_bias", "plan", "run_cell"]


def plan(top: str, m: str, n: int, *, lam: float, full: bool = False) -> tuple[int, int]:
    """(burn-in, window) of a cell: the double star's grows with its hubs' cap K(n).

    Parameters
    ----------
    top : str
        ``"ring"``, ``"triangles"`` or ``"double star"``.
    m : str
        The resampling rate's name (``"static"`` or another).
    n : int
        Number of servers.
    lam : float
        The load.
    full : bool, default False
        The chapter's FULL design: windows twice as long.

    Returns
    -------
    tuple of int

    Examples
    --------
    >>> plan("ring", "static", 1500, lam=0.9), plan("ring", "log", 1500, lam=0.9, full=True)
    ((250, 400), (200, 600))
    """
    if top == "double star":
        burn, window = round(2 * hub_cap(n, lam) / (1 - lam)), 750
    elif m == "static":
        burn, window = (250, 400) if top == "ring" else (750, 1000)
    else:
        burn, window = 200, 300
    return burn, window * (2 if full else 1)


def run_cell(runs, topologies: Mapping, top: str, n: int, mu: float, m: str, seed: int, *, lam: float,
             reps: int, full: bool = False):
    """The cell's replications, through ``runs`` (a :class:`qbook.recorded.RecordedRuns`); the
    double star's half from empty, half from M/M/1 queues.

    Parameters
    ----------
    runs : callable
        ``runs(fn, *args, **kwargs)`` runs or replays a simulation.
    topologies : mapping
        Topology name -> graph constructor of ``n``.
    top, n, mu, m, seed
        Topology, number of servers, resampling rate and its name, root seed.
    lam, reps, full
        The load, the replications, the FULL design (see :func:`plan`).

    Returns
    -------
    qlib.sim.result.ReplicationResult

    Examples
    --------
    >>> from qlib import graphs
    >>> run = lambda fn, *a, **kw: fn(*a, **(kw | {"t_end": 30.0, "burn_in": 10.0}))
    >>> run_cell(run, {"ring": graphs.ring}, "ring", 30, 1.0, "log", 1, lam=0.5, reps=2).replications
    2
    """
    g, (burn, window) = topologies[top](n), plan(top, m, n, lam=lam, full=full)
    kw = dict(t_end=burn + window, burn_in=burn, record_dt=2.0)
    if top != "double star":
        return runs(qlib.replicate, g, lam, mu, replications=reps, seed=seed, **kw)
    high = np.random.default_rng(seed).geometric(1 - lam, size=g.n) - 1
    return runs(replicate_two_starts, g, lam, mu, reps, seed=seed, high=high, **kw)


def burn_in_bias(checks, cells: Mapping, plan: Callable, mus: Mapping, lam: float, phi,
                 tol_bias: float) -> dict[str, float]:
    """Add the burn-in checks of the ring and triangle cells to ``checks`` and return the values glued.

    The halves of ``R`` and ``q(2)`` are shown to agree within 3 % (intersection-union);
    each halves bound becomes a leftover-bias bound through ``τ_up`` (2 × the upper limit
    of the replications' ``τ̂`` of the queue paths, with the M/M/1 (ring) or M/M/3
    (triangles) relaxation time for the static cells and the fluid's otherwise as a
    floor), checked against ``tol_bias`` for the resampled cells and reported for the
    static ones (one-sided: the runs start empty).

    Parameters
    ----------
    checks : qlib.stats.Checks
        Gets ``burn-in``, ``bias`` and ``bias-ring`` (not required).
    cells : mapping
        ``(topology, n, m) -> replicated run``; the double star's cells are skipped.
    plan : callable
        ``plan(topology, m, n) -> (burn-in, window)``.
    mus : mapping
        The resampling-rate names measured at every ``n`` (others are fitted at ``"log"``'s plan).
    lam : float
        The load.
    phi : DegreeDistribution
        The degree law (for the fluid relaxation rate).
    tol_bias : float
        The tolerance of the resampled cells' bias, relative to ``R``.

    Returns
    -------
    dict
        ``burn-bias`` and ``burn-wtau`` (resampled cells: largest bias bound, smallest
        window / τ_up), ``burn-bias-ring`` (static cells' largest bound).

    Examples
    --------
    >>> burn_in_bias.__name__
    'burn_in_bias'
    """
    local = {k: c for k, c in cells.items() if k[0] != "double star"}
    h = {k: np.stack([np.column_stack([r.batch_response_time, r.batch_occupancy[:, 2]]) for r in c.results])
         for k, c in local.items()}  # per replication and batch: R and q(2)
    burn = {k: burn_in_check(x, replications=True, margin=0.03 * x.mean(axis=(0, 1)), method="iut")
            for k, x in h.items()}
    worst = max(burn.values(), key=lambda b: float(np.max(b.equivalence.achieved / b.equivalence.margin)))
    checks.add("burn-in", Check.from_burn_in(worst, f"halves agree in all {len(burn)} ring and triangle cells"))
    model_tau = {("ring", "static"): mm1_relaxation_time(lam), ("triangles", "static"): mm1_relaxation_time(lam) / 3}
    d_up = {k: b.equivalence.achieved / h[k].mean(axis=(0, 1)) for k, b in burn.items()}  # halves bounds, relative
    bias, wtau, tau_up = [], [], {}
    for (top, n, m), c in local.items():
        b, w = plan(top, m if m in mus else "log", n)
        τ = tau_upper([iat(p) * 2.0 for p in c.queue_paths(after=b)], factor=2,   # record_dt = 2
                      model=model_tau.get((top, m), 1 / fluid.relaxation_rate(lam, phi)))
        tau_up[top, n, m] = τ
        wtau.append(w / τ.value)
        bias.append(float(np.max(leftover_bias(d_up[top, n, m], w, τ.value))))
    # static cells relax on the M/M/1 and M/M/3 scales: their halves bound the bias only loosely, and it is
    # one-sided (runs start empty, so by the monotonicity lemma the window mean is below the stationary one)
    ring_static = np.array([k[2] == "static" for k in local])
    bias_arr = np.array(bias)
    worst_b = int(np.flatnonzero(~ring_static)[np.argmax(bias_arr[~ring_static])])
    checks.add("bias", Check.bound("leftover bias of every resampled cell within the exact check's "
                                   "detectable deviation", bias[worst_b], tol_bias, percent=True,
                                   method=f"worst cell {list(local)[worst_b]}, τ_up = "
                                          f"{list(tau_up.values())[worst_b].value:.0f}"))
    checks.add("bias-ring", Check.estimate("static cells: leftover bias bound (one-sided, downward)",
                                           float(bias_arr[ring_static].max()), percent=True,
                                           method="τ_up = the M/M/1 relaxation time"), required=False)
    return {"burn-bias-ring": float(bias_arr[ring_static].max()),
            "burn-bias": float(max(bias_arr[~ring_static])),
            "burn-wtau": float(np.min(np.array(wtau)[~ring_static]))}
