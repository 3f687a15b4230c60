"""What both kernels' front ends share: argument checks, seeds, the start state, growing the tracked levels."""
from __future__ import annotations

import warnings
import numpy as np
from qlib.graphs import Graph

__all__ = []


def _initial(initial, n, seed=None):
    """The start state as queue lengths by server.

    ``initial`` is None (empty), integer queue lengths by server (used as
    given), or an occupancy vector ``q`` (``q[0] = 1``, non-increasing): then
    ``round(n q(i))`` servers hold at least ``i`` tasks, and which servers
    hold which load is a uniform random permutation drawn from ``seed`` (a
    ``numpy.random.SeedSequence``; a child stream, so the kernel's own
    streams are unchanged). With ``seed=None`` the loads are sorted by server
    index, which at ``mu = 0`` lays them out contiguously along the positions
    (an atypical start): the simulators always pass their seed.
    """
    if initial is None:
        return np.zeros(n, np.int64)
    a = np.asarray(initial)
    if a.dtype == bool or not (np.issubdtype(a.dtype, np.integer)
                              or np.issubdtype(a.dtype, np.floating)):
        raise TypeError("initial must be an integer array of queue lengths or "
                        f"a float occupancy vector, got dtype {a.dtype}")
    if a.ndim != 1:
        raise ValueError(f"initial must be one-dimensional, got shape {a.shape}")
    if np.issubdtype(a.dtype, np.integer):
        if a.shape[0] != n:
            raise ValueError(f"initial: queue lengths need length n={n}, "
                             f"got {a.shape[0]}")
        if np.any(a < 0):
            raise ValueError("initial: queue lengths must be >= 0")
        if np.any(a >= 2**30):
            raise ValueError("initial: queue lengths must be < 2**30")
        return a.astype(np.int64).copy()
    q = a.astype(float)
    if (q.size == 0 or not np.all(np.isfinite(q)) or not np.isclose(q[0], 1)
            or np.any(np.diff(q) > 1e-12) or np.any(q < 0)):
        raise ValueError("initial: an occupancy vector needs q[0] = 1, "
                         "non-increasing entries in [0, 1]")
    # servers with >= i tasks: round(n q(i)), kept non-increasing
    cnt = np.minimum.accumulate(np.round(n * q).astype(np.int64))
    cnt[0] = n
    X = np.zeros(n, np.int64)
    for i in range(1, cnt.size):
        X[:cnt[i]] = i
    if seed is not None:
        # a stream of its own (spawn key off the kernel's), so that runs of
        # one seed are reproducible and the runs of replicate independent
        start = np.random.SeedSequence(seed.entropy,
                                       spawn_key=tuple(seed.spawn_key) + (0x5747,))
        X = np.random.default_rng(start).permutation(X)
    return X


def _seed(seed):
    """Return (SeedSequence, the value stored as result.seed)."""
    if seed is None:
        ss = np.random.SeedSequence()
        return ss, ss.entropy
    if isinstance(seed, np.random.SeedSequence):
        return seed, seed
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError("seed must be None, a non-negative int or a "
                        f"numpy.random.SeedSequence, got {type(seed).__name__}")
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    return np.random.SeedSequence(int(seed)), int(seed)


def _check_args(graph, lam, mu, t_end, burn_in, batches):
    if not isinstance(graph, Graph):
        raise TypeError("graph must be a qlib.graphs.Graph, "
                        f"got {type(graph).__name__}")
    if not 1 <= graph.n < 2**31:
        raise ValueError(f"graph must have 1 <= n < 2**31 vertices, got {graph.n}")
    try:
        lam = float(lam)
        mu = float(mu)
        t_end = float(t_end)
        burn_in = float(burn_in)
    except (TypeError, ValueError) as e:
        raise TypeError(f"lam, mu, t_end, burn_in must be real numbers ({e})")
    if not np.isfinite(lam) or lam <= 0:
        raise ValueError(f"lam must be positive and finite, got {lam}")
    if np.isnan(mu) or mu < 0:
        raise ValueError(f"mu must be >= 0 (inf allowed), got {mu}")
    if not np.isfinite(burn_in) or burn_in < 0:
        raise ValueError(f"burn_in must be finite and >= 0, got {burn_in}")
    if not np.isfinite(t_end) or not t_end > burn_in:
        raise ValueError(f"t_end must be finite and > burn_in={burn_in}, "
                         f"got {t_end}")
    if lam >= 1:
        if burn_in != 0:
            raise ValueError(f"lam must be < 1 when burn_in > 0 (the system "
                             f"is unstable for lam >= 1), got lam={lam}")
        warnings.warn(f"lam={lam} >= 1: the system is unstable; only the "
                      "transient over [0, t_end] is meaningful",
                      RuntimeWarning, stacklevel=3)
    if batches is None:
        return lam, mu, t_end, burn_in
    if isinstance(batches, bool) or not isinstance(batches, (int, np.integer)):
        raise TypeError("batches must be an int or None")
    if batches < 2:
        raise ValueError(f"batches must be >= 2, got {batches}")
    return lam, mu, t_end, burn_in


def _grow(arr, K1, axis_len=None):
    """Pad the last axis of ``arr`` with zeros to length K1."""
    shape = arr.shape[:-1] + (K1,)
    out = np.zeros(shape, arr.dtype)
    out[..., :arr.shape[-1]] = arr
    return out
