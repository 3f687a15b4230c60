"""Independent replications, each from a start state of its own.

:func:`~qlib.sim.replications.replicate` starts every run from the same
``initial`` (an occupancy vector is placed by a permutation of each run's own
seed, but the vector is shared). Where the start itself is random (queue
lengths drawn per run), :func:`replicate_own_starts` runs one
:func:`~qlib.sim.run.simulate` per start, in threads (the kernel releases the
GIL), and gathers them into one :class:`~qlib.sim.result.ReplicationResult`.
"""
from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from qlib.sim.result import ReplicationResult
from qlib.sim.run import simulate

__all__ = ["replicate_own_starts"]


def replicate_own_starts(graph, lam: float, mu: float, starts: Sequence, *, seed=None,
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
