"""replicate: independent replications of one model, in parallel threads, with Student-t intervals."""
from __future__ import annotations

import inspect
import os
import time
import numpy as np
from concurrent.futures import ThreadPoolExecutor

from typing import TYPE_CHECKING

if TYPE_CHECKING:   # names for the annotations only
    import networkx as nx
    from qlib.graphs import Graph
from qlib.sim.result import ReplicationResult
from qlib.sim.start import _as_graph, _check_args, _check_choices, _seed, _warn_unstable
from qlib.sim.run import Seed, _check_kernel, _fast, _general, _simulate_checked, simulate

__all__ = ['replicate']


def replicate(graph: Graph | nx.Graph, lam: float, mu: float = 0.0, *, replications: int,
              seed: Seed = None, n_jobs: int | None = None, interleave: bool = False,
              **simulate_kwargs) -> ReplicationResult:
    """Independent replications of :func:`~qlib.sim.run.simulate` (``lam`` per server, resampling rate ``mu``), in parallel threads.

    Parameters
    ----------
    graph, lam, mu
        As for :func:`~qlib.sim.run.simulate`.
    replications : int
        Number of independent runs R, >= 2.
    seed : None, int >= 0 or numpy.random.SeedSequence
        Root seed; the runs use ``SeedSequence(seed).spawn(R)``, so the
        result does not depend on ``n_jobs``.
    n_jobs : int, optional
        Number of threads (the kernel releases the GIL); default
        ``min(R, os.cpu_count())``.
    interleave : bool
        Run the replications of each thread in groups, each group advanced
        by one interleaved loop (:mod:`qlib.sim.interleave`).  Every run,
        and hence the result, is bit for bit the same as without (only
        ``wall_time`` differs); it changes speed only, and only for runs on
        the event kernel with exponential services without
        ``record_response`` (otherwise the runs go one by one as usual; the
        fast path, which ``kernel="auto"`` picks for Exp(1) services, never
        interleaves).  Default False: it is not faster at
        every n (``benchmarks/simulate_results.json``, key ``interleave``).
    **simulate_kwargs
        Passed to :func:`~qlib.sim.run.simulate` (``t_end`` is required; ``progress=True``
        shows one bar over the replications; with ``choices`` set the runs go
        one by one, never interleaved).  ``kernel`` picks the kernel of every
        run, as in ``simulate`` (chosen once, for all of them).

    Returns
    -------
    ReplicationResult

    Examples
    --------
    >>> import qlib
    >>> rr = qlib.replicate(qlib.graphs.ring(500), 0.7, mu=1.0, replications=3, t_end=200,
    ...                     burn_in=50, seed=1)
    >>> rr.replications, rr.response_time_ci.df, rr.results[0].stream
    (3, 2, 'uniformized-2')
    >>> low, high = rr.response_time_ci
    >>> bool(low < rr.response_time < high)
    True
    """
    if isinstance(replications, bool) or not isinstance(replications,
                                                        (int, np.integer)):
        raise TypeError("replications must be an int")
    if replications < 2:
        raise ValueError(f"replications must be >= 2, got {replications}")
    R = int(replications)
    if n_jobs is None:
        n_jobs = min(R, os.cpu_count() or 1)
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)):
        raise TypeError("n_jobs must be an int or None")
    if n_jobs < 1:
        raise ValueError(f"n_jobs must be >= 1, got {n_jobs}")
    if not isinstance(interleave, bool):
        raise TypeError(f"interleave must be True or False, got {interleave!r}")
    if "seed" in simulate_kwargs:
        raise TypeError("pass the root seed as seed=")
    if "warn" in simulate_kwargs:
        raise TypeError("replicate's runs never warn about their batch means (the intervals "
                        "come from the replications): do not pass warn=")
    # convert once, before anything reads graph.n (a networkx graph included)
    graph = _as_graph(graph)
    progress = bool(simulate_kwargs.pop("progress", False))
    # validate once, in the caller's thread, so errors are raised here
    if "t_end" not in simulate_kwargs:
        raise TypeError("replicate() needs t_end= (passed on to simulate)")
    unknown = sorted(set(simulate_kwargs) - _SIMULATE_KEYWORDS)
    if unknown:
        raise TypeError(f"simulate() got an unexpected keyword argument {unknown[0]!r}")
    kw = dict(simulate_kwargs)
    kernel = kw.pop("kernel", "auto")
    _check_kernel(kernel)
    ch = _check_choices(kw.pop("choices", None))
    allow_unstable = kw.pop("allow_unstable", False)
    general = _general(kw.get("service"), kw.get("record_response", False), ch,
                       allow_unstable)
    # the graph and the rates are checked here once; the runs take them as they are
    lam, mu, kw["t_end"], kw["burn_in"] = _check_args(
        graph, lam, mu, kw["t_end"], kw.get("burn_in", 0.0), kw.get("batches", None),
        allow_unstable, warn=False)
    if lam >= 1:
        _warn_unstable(lam, stacklevel=3)
    fast = _fast(kernel, graph, lam, mu, kw["t_end"], kw["burn_in"], ch, kw.get("batches"),
                 general=general, record_dt=kw.get("record_dt"), service=kw.get("service"),
                 record_response=kw.get("record_response", False))
    ss, seed_out = _seed(seed)
    children = ss.spawn(R)
    w0 = time.perf_counter()

    # the runs' own warnings (batch means, lam >= 1) are switched off by argument: a
    # warnings filter is process-global and not thread-safe
    def one(c):
        return _simulate_checked(graph, lam, mu, seed=c, warn=False, ch=ch, general=general,
                                 fast=fast, **kw)

    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=R, unit="run", desc="replicate")
    try:
        if interleave and not fast and _interleavable(simulate_kwargs):
            results = _interleaved(graph, lam, mu, children, int(n_jobs), bar, kw)
        elif n_jobs == 1:
            results = []
            for c in children:
                results.append(one(c))
                if bar is not None:
                    bar.update(1)
        else:
            results = [None] * R
            with ThreadPoolExecutor(max_workers=int(n_jobs)) as ex:
                futs = {ex.submit(one, c): r for r, c in enumerate(children)}
                for f in futs:
                    results[futs[f]] = f.result()
                    if bar is not None:
                        bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return ReplicationResult.from_runs(results, seed=seed_out,
                                       wall_time=time.perf_counter() - w0)


# the keywords of simulate that replicate passes on
_SIMULATE_KEYWORDS = set(inspect.signature(simulate).parameters) - {
    "graph", "lam", "mu", "seed", "warn", "progress"}

# the keywords of simulate that the interleaved loop takes (anything else,
# a service law or record_response, runs the lone path)
_INTERLEAVED = {"t_end", "burn_in", "levels", "record_dt", "initial", "batches"}


def _interleavable(kw):
    if kw.get("service") not in (None, "exp") or kw.get("record_response", False) is not False:
        return False
    return set(kw) - {"service", "record_response", "kernel"} <= _INTERLEAVED


def _group_size(n, per_job):
    """Replications in one interleaved group: at most 16, at most the
    thread's share, and at most 2**28 bytes (256 MiB) of per-run state
    (24 bytes per server) in a group."""
    return max(1, min(16, per_job, (2**28) // (24 * max(n, 1))))


def _interleaved(graph, lam, mu, children, n_jobs, bar, kw):
    """The replications in groups (``_group_size``), each group one
    interleaved loop, the groups spread over ``n_jobs`` threads; results in
    the order of ``children``; ``graph``, ``lam``, ``mu`` and ``kw``'s
    ``t_end`` and ``burn_in`` already checked."""
    from qlib.sim.interleave import _interleaved_checked
    kw = {k: v for k, v in kw.items() if k in _INTERLEAVED}
    R = len(children)
    G = _group_size(graph.n, -(-R // n_jobs))
    groups = [list(range(a, min(a + G, R))) for a in range(0, R, G)]
    results = [None] * R

    def run(idx):
        return _interleaved_checked(graph, lam, mu, seeds=[children[i] for i in idx],
                                    warn=False, **kw)

    if n_jobs == 1 or len(groups) == 1:
        outs = map(run, groups)
    else:
        ex = ThreadPoolExecutor(max_workers=min(n_jobs, len(groups)))
        outs = ex.map(run, groups)
    try:
        for idx, out in zip(groups, outs):
            for i, r in zip(idx, out):
                results[i] = r
            if bar is not None:
                bar.update(len(idx))
    finally:
        if n_jobs != 1 and len(groups) != 1:
            ex.shutdown()
    return results
