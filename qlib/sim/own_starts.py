"""Independent replications from start states other than one shared vector.

:func:`~qlib.sim.replications.replicate` starts every run from the same
``initial`` (an occupancy vector is placed by a permutation of each run's own
seed, but the vector is shared). Where the start itself is random (queue
lengths drawn per run), :func:`replicate_own_starts` runs one
:func:`~qlib.sim.run.simulate` per start, in threads (the kernel releases the
GIL), and gathers them into one :class:`~qlib.sim.result.ReplicationResult`. Where
the stationary state is far from any vector one can write down (the double
star's hubs), :func:`replicate_after_pilot` starts the replications from the
occupancy at the end of one pilot run.
"""
from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np

from qlib.sim.result import ReplicationResult
from qlib.sim.replications import replicate
from qlib.sim.run import Seed, simulate
if TYPE_CHECKING:   # names for the annotations only
    from qlib._types import GraphLike

if TYPE_CHECKING:   # names for the annotations only
    import networkx as nx

    from qlib.graphs import Graph

__all__ = ["replicate_own_starts", "replicate_after_pilot"]


def replicate_own_starts(graph: GraphLike, lam: float, mu: float, starts: Sequence, *,
                         seed: Seed = None,
                         n_jobs: int | None = None, **simulate_kwargs) -> ReplicationResult:
    """One independent run of :func:`~qlib.sim.run.simulate` (resampling rate ``mu``) per start state.

    Parameters
    ----------
    graph, lam, mu
        As for :func:`~qlib.sim.run.simulate`.
    starts : sequence
        At least two start states, one per run (each anything
        ``simulate``'s ``initial`` accepts, e.g. queue lengths by server).
    seed : None, int >= 0 or numpy.random.SeedSequence
        Root seed; run ``k`` uses child ``k`` of ``SeedSequence(seed)``.
    n_jobs : int, optional
        Threads; default one per run, at most the number of CPUs.
    **simulate_kwargs
        Passed to ``simulate`` (``t_end``, ``burn_in``, ``batches``, ...);
        not ``initial`` or ``seed``.

    Returns
    -------
    ReplicationResult

    Raises
    ------
    ValueError
        If fewer than two starts are given.
    TypeError
        If ``initial`` or ``seed`` is passed through ``simulate_kwargs``.

    Examples
    --------
    >>> from qlib import graphs
    >>> starts = [np.zeros(20, int), np.ones(20, int)]
    >>> rr = replicate_own_starts(graphs.ring(20), 0.5, 1.0, starts, seed=1, t_end=50.0,
    ...                           burn_in=10.0)
    >>> len(rr.results)
    2
    """
    starts = list(starts)
    if len(starts) < 2:
        raise ValueError(f"starts must hold at least two start states, got {len(starts)}")
    for k in ("initial", "seed"):
        if k in simulate_kwargs:
            raise TypeError(f"pass {k!r} through starts / seed, not simulate_kwargs")
    kids = np.random.SeedSequence(seed).spawn(len(starts))

    def run(k):
        return simulate(graph, lam, mu, seed=kids[k], initial=starts[k], **simulate_kwargs)

    import os
    jobs = n_jobs or min(len(starts), os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        return ReplicationResult.from_runs(list(ex.map(run, range(len(starts)))))


def replicate_after_pilot(graph: Graph | nx.Graph, lam: float, mu: float, *, start: object,
                          pilot_t_end: float, pilot_burn_in: float, seed: Seed = None,
                          **replicate_kwargs) -> ReplicationResult:
    """Replications started from the mean occupancy of one pilot run begun at ``start``.

    Parameters
    ----------
    graph, lam, mu
        As for :func:`~qlib.sim.run.simulate`.
    start : array_like
        The pilot's start (anything ``simulate``'s ``initial`` accepts).
    pilot_t_end, pilot_burn_in : float
        The pilot's horizon and burn-in, ``0 <= pilot_burn_in < pilot_t_end``;
        its occupancy averaged after the burn-in is the replications' start.
    seed : None, int >= 0 or numpy.random.SeedSequence
        Root seed: child 0 seeds the pilot, child 1 the replications.
    **replicate_kwargs
        Passed to :func:`~qlib.sim.replications.replicate` (``replications``,
        ``t_end``, ``burn_in``, ``batches``, ...); not ``initial`` or ``seed``.

    Returns
    -------
    ReplicationResult
        The replications (the pilot is not among them).

    Raises
    ------
    ValueError
        If the pilot's horizon and burn-in are out of range.
    TypeError
        If ``initial`` or ``seed`` is passed through ``replicate_kwargs``.

    Examples
    --------
    >>> from qlib import graphs
    >>> rr = replicate_after_pilot(graphs.ring(20), 0.5, 1.0, start=np.zeros(20, int),
    ...                            pilot_t_end=40.0, pilot_burn_in=20.0, seed=1,
    ...                            replications=2, t_end=30.0, burn_in=10.0)
    >>> len(rr.results)
    2
    """
    if not 0 <= pilot_burn_in < pilot_t_end:
        raise ValueError(f"need 0 <= pilot_burn_in < pilot_t_end, got {pilot_burn_in}, {pilot_t_end}")
    for k in ("initial", "seed"):
        if k in replicate_kwargs:
            raise TypeError(f"pass {k!r} through start / seed, not replicate_kwargs")
    kids = np.random.SeedSequence(seed).spawn(2)
    pilot = simulate(graph, lam, mu, t_end=pilot_t_end, burn_in=pilot_burn_in, seed=kids[0],
                     initial=start, batches=4)
    return replicate(graph, lam, mu, initial=pilot.occupancy, seed=kids[1], **replicate_kwargs)
