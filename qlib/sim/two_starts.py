"""Replications split between two starts, pooled: a bracket of the stationary value.

Where the transient is not short against the window, runs from a low start
(empty) and from a high start approach the stationary value from the two
sides; their pooled mean is the estimate and their difference bounds what is
left of the transient. :func:`replicate_two_starts` runs half the
replications from each start and returns them as one
:class:`~qlib.sim.result.ReplicationResult` (the low half first).

Examples
--------
>>> import numpy as np
>>> from qlib import graphs
>>> from qlib.sim import replicate_two_starts
>>> g = graphs.ring(30)
>>> high = np.random.default_rng(0).geometric(0.5, size=30) - 1
>>> r = replicate_two_starts(g, 0.5, 1.0, 4, seed=1, high=high, t_end=20, burn_in=5)
>>> len(r.results)
4
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:   # names for the annotations only
    import networkx as nx

    from qlib.graphs import Graph
    from qlib.sim.result import ReplicationResult

__all__ = ["replicate_two_starts"]


def replicate_two_starts(graph: Graph | nx.Graph, lam: float, mu: float, replications: int, *, seed: int,
                         high: object, **replicate_kwargs) -> ReplicationResult:
    """Half the replications from the empty state, half from ``high``; pooled, low half first.

    Parameters
    ----------
    graph, lam, mu
        As for :func:`~qlib.sim.replications.replicate`.
    replications : int
        Even, ``>= 4``.
    seed : int
        Root seed; the two halves use ``SeedSequence([seed, 0])`` and ``([seed, 1])``.
    high : array_like
        The high start (queue lengths by server, or anything ``initial`` accepts).
    **replicate_kwargs
        Passed to ``replicate`` (``t_end``, ``burn_in``, ``record_dt``, ...).

    Returns
    -------
    ReplicationResult
        ``results[:replications // 2]`` from empty, the rest from ``high``.

    Examples
    --------
    >>> from qlib import graphs
    >>> replicate_two_starts(graphs.ring(10), 0.5, 1.0, 3, seed=0, high=None, t_end=5)
    Traceback (most recent call last):
    ...
    ValueError: replications must be an even int >= 4, got 3
    """
    from qlib.sim.replications import replicate
    from qlib.sim.result import ReplicationResult

    if isinstance(replications, bool) or not isinstance(replications, (int, np.integer)) \
            or replications < 4 or replications % 2:
        raise ValueError(f"replications must be an even int >= 4, got {replications!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    lo, hi = (replicate(graph, lam, mu, replications=replications // 2, seed=np.random.SeedSequence([seed, k]),
                        initial=x, **replicate_kwargs) for k, x in enumerate((None, high)))
    return ReplicationResult.from_runs(lo.results + hi.results, seed=seed)
