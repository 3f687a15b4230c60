"""What both kernels' front ends share: argument checks, seeds, the start state, growing the tracked levels."""
from __future__ import annotations

import dataclasses
import math
import warnings
import numpy as np
from qlib import _validate as V
from qlib.graphs import Graph, ImplicitGraph

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

    Returns an ``int32`` array (queue lengths are below ``2**30``): the
    callers copy it into their own state, so it costs 4 bytes per server.
    """
    if initial is None:
        return np.zeros(n, np.int32)
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
        return a.astype(np.int32)
    q = a.astype(float)
    if (q.size == 0 or not np.all(np.isfinite(q)) or not np.isclose(q[0], 1)
            or np.any(np.diff(q) > 1e-12) or np.any(q < 0)):
        raise ValueError("initial: an occupancy vector needs q[0] = 1, "
                         "non-increasing entries in [0, 1]")
    # servers with >= i tasks: round(n q(i)), kept non-increasing
    cnt = np.minimum.accumulate(np.round(n * q).astype(np.int64))
    cnt[0] = n
    X = np.zeros(n, np.int32)
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
    if isinstance(seed, np.random.Generator):
        # a Generator (as networkx and scipy take): draw the root entropy from it, so
        # the run is reproducible from the generator's state and advances it
        ss = np.random.SeedSequence(int(seed.integers(0, 2**63)))
        return ss, ss.entropy
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError("seed must be None, a non-negative int, a "
                        "numpy.random.SeedSequence or a numpy.random.Generator, got "
                        f"{type(seed).__name__}")
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    return np.random.SeedSequence(int(seed)), int(seed)


#: Bytes per server that ``simulate`` holds at its peak besides the graph:
#: the packed records XA (16) with the permutation P (8) while it runs, XA
#: with the returned final queues (8) after it (the int32 start state, 4, is
#: freed before P is allocated; measured by tracemalloc at n = 10**7: 24.1).
#: ``simulate_general`` needs more (its heap and FIFO pool): a floor for it.
_BYTES_PER_SERVER = 24


def _as_graph(graph, implicit_ok=False):
    """``graph`` as a :class:`qlib.graphs.Graph`; a networkx graph is converted
    with :func:`qlib.graphs.from_networkx` (nodes relabelled ``0..n-1`` in
    their iteration order), an :class:`~qlib.graphs.ImplicitGraph` by its
    ``to_graph()`` unless ``implicit_ok`` (then it is returned as is)."""
    if isinstance(graph, Graph):
        return graph
    if isinstance(graph, ImplicitGraph):
        return graph if implicit_ok else graph.to_graph()
    try:
        import networkx as nx
    except ImportError:  # pragma: no cover
        nx = None
    if nx is not None and isinstance(graph, nx.Graph):
        from qlib.graphs import from_networkx
        if graph.is_directed():
            raise TypeError(V.directed_graph("graph", graph))
        return from_networkx(graph)
    raise TypeError("graph must be a qlib.graphs.Graph or an undirected networkx.Graph "
                    "(convert other graphs with qlib.graphs.from_networkx or "
                    f"qlib.graphs.from_edges), got {type(graph).__name__}")


def _check_args(graph, lam, mu, t_end, burn_in, batches, allow_unstable=False, warn=True,
                per_server=_BYTES_PER_SERVER):
    """Check simulate's common arguments; return ``lam, mu, t_end, burn_in`` as floats.

    ``graph`` is a :class:`qlib.graphs.Graph` or, for the fast path, an
    :class:`~qlib.graphs.ImplicitGraph` (``_as_graph`` converts the caller's
    graph once, before).

    ``lam >= 1`` is an unstable system: with ``burn_in = 0`` (a transient run)
    or ``allow_unstable=True`` it runs with a ``RuntimeWarning`` unless ``warn`` is
    False (the result's
    standard errors are then NaN, see ``_transient``); with ``burn_in >
    0`` and ``allow_unstable=False`` it is refused.
    """
    if not isinstance(graph, (Graph, ImplicitGraph)):     # only its size is read here
        raise TypeError(f"graph must be a qlib.graphs.Graph here, got {type(graph).__name__}")
    if not 1 <= graph.n < 2**31:
        raise ValueError(f"graph must have 1 <= n < 2**31 vertices, got {graph.n}")
    V.check_memory(V.memory_estimate(n=graph.n, per_item=per_server), "n", graph.n,
                   what=f"the per-server state ({per_server} bytes per server)")
    lam = V.positive(lam, "lam")
    mu = V.nonnegative(mu, "mu", allow_inf=True)
    burn_in = V.nonnegative(burn_in, "burn_in")
    t_end = V.positive(t_end, "t_end")
    if not t_end > burn_in:
        raise ValueError(f"t_end must be finite and > burn_in={burn_in}, "
                         f"got {t_end}")
    allow_unstable = V.flag(allow_unstable, "allow_unstable")
    if lam >= 1:
        if burn_in != 0 and not allow_unstable:
            raise ValueError(f"lam must be < 1 when burn_in > 0 (the system "
                             f"is unstable for lam >= 1), got lam={lam}; pass "
                             "allow_unstable=True for a transient run")
        if warn:
            _warn_unstable(lam, stacklevel=4)
    if batches is None:
        return lam, mu, t_end, burn_in
    V.integer(batches, "batches", lo=2)
    return lam, mu, t_end, burn_in


def _check_choices(choices):
    """``choices`` as the kernel's ``ch``: 0 for None (the whole closed
    neighbourhood), else the int ``k >= 2`` (the arrival's position and
    ``k - 1`` distinct uniform neighbours)."""
    if choices is None:
        return 0
    if isinstance(choices, (bool, np.bool_)) or not isinstance(choices, (int, np.integer)):
        raise TypeError("choices must be None or an int >= 2, got "
                        f"{type(choices).__name__}")
    if not 2 <= choices < 2**31:
        raise ValueError(f"choices must be None or an int >= 2, got {choices}")
    return int(choices)


def _warn_unstable(lam, stacklevel):
    """The one warning of an unstable run (``lam >= 1``), for ``simulate``
    and ``replicate`` alike; ``stacklevel`` as for ``warnings.warn``, counted
    from this function."""
    warnings.warn(f"lam={lam} >= 1: the system is unstable; the result is the "
                  "transient over [0, t_end], with no stationary intervals "
                  "(standard errors are nan)", RuntimeWarning, stacklevel=stacklevel)


def _transient(result):
    """``result`` with its standard errors and intervals set to NaN when
    ``result.lam >= 1`` (an unstable run: batch means of a transient estimate
    nothing stationary); otherwise ``result`` itself."""
    if result.lam < 1:
        return result
    nan = float("nan")
    return dataclasses.replace(
        result, occupancy_se=np.full_like(result.occupancy_se, nan),
        occupancy_ci=np.full_like(result.occupancy_ci, nan), mean_response_time_se=nan,
        response_time_ci=(nan, nan), se_reliable=False)


def _bookkeeping(batches, K, nrec, nst):
    """The arrays of a run's time bookkeeping, ``(nfine, integ, last, rsum,
    rcnt, paths, fs, st)``: the window cut into ``nfine`` slices (``batches``
    of them when forced; their groups are the batches of the standard
    errors), level integrals and response sums per slice (a last row for
    the burn-in), ``nrec`` recorded rows, ``K + 1`` levels, the clock pair
    ``fs`` and a state vector of ``nst`` entries (before the first batch)."""
    from qlib.sim._loop import _BATCH
    from qlib.sim.result import _FINE
    nfine = _FINE if batches is None else batches
    st = np.zeros(nst, np.int64)
    st[_BATCH] = -1
    return (nfine, np.zeros((nfine + 1, K + 1)), np.zeros(K + 1), np.zeros(nfine + 1),
            np.zeros(nfine + 1), np.zeros((nrec, K + 1)), np.zeros(2), st)


def _result(cls, integ, rsum, rcnt, paths, X, st, nfine, n, K, levels, batches, t_end,
            burn_in, nrec, record_dt, wall, seed_out, lam, mu, warn=True, **extra):
    """The result of a finished run, of class ``cls``: time averages over the
    levels reached (at least ``levels + 1`` of them), batch-means errors,
    the counts of the state vector ``st``, the final queues ``X``;
    ``extra``: fields of ``cls`` beyond those of ``SimulationResult`` and its
    ``stream`` (default: the event kernel's)."""
    from qlib.sim._loop import _ARR, _DEP, _EVENTS, _RES
    from qlib.sim.result import EVENT_STREAM, _batch_fields
    blen = (t_end - burn_in) / nfine
    occ_f = integ[:nfine] / (n * blen)
    occ = occ_f.mean(axis=0)
    nz = np.nonzero(occ > 0)[0]
    top = int(nz[-1]) + 2 if nz.size else 2
    if levels is not None:
        top = max(top, int(levels) + 1)
    top = min(top, K + 1)
    occ, occ_f = occ[:top], occ_f[:, :top]
    fields = _batch_fields(occ, occ_f, rsum, rcnt, nfine, blen, batches, t_end - burn_in,
                           warn=warn)
    return cls(
        occupancy=occ, times=(np.arange(nrec) * record_dt) if nrec else None,
        paths=paths[:, :top] if nrec else None, events=int(st[_EVENTS]),
        resamples=int(st[_RES]), arrivals=int(st[_ARR]),
        departures=int(st[_DEP]), final_queues=X.astype(np.int64), wall_time=wall,
        seed=seed_out, n=n, lam=lam, mu=mu, t_end=t_end, burn_in=burn_in, levels=K,
        **{"stream": EVENT_STREAM, **extra}, **fields)


def _tracked(levels, xmax):
    """The top level tracked at the start of a run whose longest queue holds
    ``xmax`` tasks: ``levels`` (checked: an int >= 1) or 16, and at least
    ``2 xmax`` and ``xmax + 1``."""
    if levels is not None:
        V.integer(levels, "levels", lo=1)
    return max(int(levels) if levels is not None else 16, 2 * xmax, xmax + 1)


def _record_grid(record_dt, t_end):
    """(rows recorded on the grid ``0, record_dt, ... <= t_end``, ``record_dt``
    checked as a float); (0, 1.0) when ``record_dt`` is None."""
    if record_dt is None:
        return 0, 1.0
    record_dt = V.positive(record_dt, "record_dt")
    return int(math.floor(t_end / record_dt + 1e-9)) + 1, record_dt


def _grow(arr, K1, axis_len=None):
    """Pad the last axis of ``arr`` with zeros to length K1."""
    shape = arr.shape[:-1] + (K1,)
    out = np.zeros(shape, arr.dtype)
    out[..., :arr.shape[-1]] = arr
    return out
