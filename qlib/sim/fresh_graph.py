"""One run of JSQ on a freshly drawn configuration-model graph, from a chosen start.

Where replications must average over graphs too (a static graph is part of
the randomness), each run draws its own graph, its own start and its own
event stream from one seed: :func:`fresh_graph_run`.

Examples
--------
>>> from qlib import DegreeDistribution
>>> from qlib.sim import fresh_graph_run
>>> R, q1, path = fresh_graph_run(200, DegreeDistribution.point(2), 0.5, float("inf"),
...                               burn=5, window=20, seed=1)
>>> bool(0 < q1 < 1 and R >= 1 and path.size == 21)   # window + 1 unit steps
True
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:   # names for the annotations only
    from qlib.meanfield.degrees import DegreeDistribution

__all__ = ["fresh_graph_run"]

_STARTS = ("fluid", "empty", "high")


def fresh_graph_run(n: int, p: DegreeDistribution, lam: float, mu: float, *, burn: float, window: float,
                    seed: int | Sequence[int] | np.random.SeedSequence,
                    start: str = "fluid") -> tuple[float, float, np.ndarray]:
    """Draw a configuration-model graph of degree law ``p``, start it, simulate it.

    Parameters
    ----------
    n : int
        Servers, ``>= 2``.
    p : DegreeDistribution
        Degree law of the graph (``graphs.configuration(..., method="quota")``).
    lam : float
        Load per server, in ``(0, 1)``.
    mu : float
        Resampling rate, ``>= 0`` (``inf``: a fresh placement before every arrival).
    burn, window : float
        Burn-in and averaging window (``t_end = burn + window``), ``burn >= 0 < window``.
    seed : int, sequence of int or numpy.random.SeedSequence
        Root seed; its three children seed the graph, the start and the run.
    start : {"fluid", "empty", "high"}
        ``"fluid"``: independent queue lengths with ``P(X ≥ i) = q*(i)`` of the
        graph's own degree law; ``"empty"``; ``"high"``: independent M/M/1
        stationary queues, ``P(X ≥ i) = λ^i``. At ``mu = 0`` the isolated servers
        (M/M/1 queues for ever) start from their stationary law whatever ``start``.

    Returns
    -------
    (R, q1, path)
        Mean response time and busy fraction over the window, and the mean
        queue length per server divided by ``lam`` at each unit time step of the
        window (so that its mean is ``R``, Little's law).

    Examples
    --------
    >>> from qlib import DegreeDistribution
    >>> fresh_graph_run(50, DegreeDistribution.point(2), 0.5, 1.0, burn=1, window=2, seed=0,
    ...                 start="full")
    Traceback (most recent call last):
    ...
    ValueError: start must be one of ('fluid', 'empty', 'high'), got 'full'
    """
    from qlib import graphs
    from qlib.meanfield import fluid
    from qlib.sim.run import simulate

    if start not in _STARTS:
        raise ValueError(f"start must be one of {_STARTS}, got {start!r}")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"n must be an int, got {type(n).__name__}")
    if not 0 < lam < 1:
        raise ValueError(f"lam must be in (0, 1), got {lam!r}")
    if not (burn >= 0 and window > 0):
        raise ValueError(f"burn must be >= 0 and window > 0, got burn={burn!r}, window={window!r}")
    s_graph, s_start, s_sim = np.random.SeedSequence(seed).spawn(3)
    G = graphs.configuration(n, p, seed=s_graph, method="quota")
    rng = np.random.default_rng(s_start)
    mm1 = rng.geometric(1 - lam, n) - 1
    if start == "fluid":
        q = fluid.equilibrium(lam, G.degree_distribution())
        X = (rng.random(n)[:, None] < q[None, 1:]).sum(axis=1)     # P(X >= i) = q*(i)
    else:
        X = mm1.copy() if start == "high" else np.zeros(n, dtype=int)
    if mu == 0:
        iso = np.diff(G.indptr) == 0
        X[iso] = mm1[iso]
    with warnings.catch_warnings():          # the per-run batch-means s.e. is not used here
        warnings.simplefilter("ignore", RuntimeWarning)
        res = simulate(G, lam, mu, t_end=burn + window, burn_in=burn, seed=s_sim, initial=X, record_dt=1.0)
    return res.mean_response_time, res.occupancy[1], res.paths[int(burn):, 1:].sum(axis=1) / lam
