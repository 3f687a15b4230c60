"""simulate: one run of JSQ on a (resampled) graph, dispatched to the fast path, the exponential event kernel or the general-service kernel."""
from __future__ import annotations

import time
import numpy as np

from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:   # names for the annotations only
    import networkx as nx
    from qlib.graphs import Graph
Seed = Union[None, int, np.random.SeedSequence, np.random.Generator]
from qlib._feedback import compile_notice
from qlib.sim.general import _general_checked
from qlib.sim.service import check_law
from qlib.sim.kernel import EPOCH_MAX, _NST, _depth, _kernel
from qlib.sim.result import SimulationResult
from qlib.sim.uniformized import _lacks, _uniformized_checked
from qlib import _validate as V
from qlib.sim.start import (_as_graph, _check_args, _check_choices, _grow, _initial,
                             _bookkeeping, _record_grid, _result, _seed, _tracked,
                             _transient)

__all__ = ['simulate', 'KERNELS']

#: The values of ``simulate``'s and ``replicate``'s ``kernel``.
KERNELS = ("auto", "event", "fast")


# ------------------------------------------------------------ simulate ----
def simulate(graph: Graph | nx.Graph, lam: float, mu: float = 0.0, *, t_end: float,
             burn_in: float = 0.0, seed: Seed = None, levels: int | None = None,
             record_dt: float | None = None, initial: object = None, progress: bool = False,
             batches: int | None = None, service: object = None, record_response: bool = False,
             allow_unstable: bool = False, warn: bool = True,
             choices: int | None = None, kernel: str = "auto") -> SimulationResult:
    """Simulate JSQ on the closed neighbourhoods of a graph resampled at resampling rate ``mu``.

    Parameters
    ----------
    graph : qlib.graphs.Graph or networkx.Graph
        Base graph on positions ``0..n-1`` (an undirected networkx graph is
        converted with :func:`qlib.graphs.from_networkx`).
    lam : float
        Arrival rate per server (total ``lam * n``), ``0 < lam``. ``lam >= 1``
        is an unstable system whose queues grow without bound: it runs only as
        a transient (``burn_in = 0``, or any ``burn_in`` with
        ``allow_unstable=True``), with a ``RuntimeWarning``, and the result's
        standard errors and intervals are NaN (no stationary intervals).
    mu : float
        Total rate of the Poisson resampling epochs, ``0 <= mu <= inf``;
        ``0``: static graph, ``inf``: a fresh permutation before each arrival.
    t_end : float
        End of the run, ``t_end > burn_in``.
    burn_in : float
        Time averages are over ``[burn_in, t_end]``.
    seed : None, int >= 0 or numpy.random.SeedSequence
        Same seed and kernel, same result, bit for bit (the result's
        ``stream`` names the kernel's random stream).
    levels : int, optional
        Number of queue-length levels tracked at the start (default: enough
        for ``initial``); levels grow automatically when a queue reaches the
        top, so nothing is truncated.  The returned arrays have at least
        ``levels + 1`` entries.
    record_dt : float, optional
        Record the occupancy on the grid ``0, record_dt, ... <= t_end``.
    initial : array_like, optional
        Either per-server queue lengths (integer array of length n; server s
        at position s) or an occupancy vector (float, q[0] = 1,
        non-increasing: round(n q(i)) servers get at least i tasks, the
        servers chosen by a uniform random permutation drawn from ``seed``,
        so each replication of :func:`~qlib.sim.replications.replicate` has its own start).
        Default: empty.
    progress : bool
        Show a tqdm progress bar (the run is cut into time slices; the
        result does not depend on it).
    batches : int, optional
        Default: the batch length follows the correlation length measured
        on the run (see ``occupancy_se``), and a ``RuntimeWarning`` says when
        the run is too short. An int >= 2 forces that many equal batches
        (no check that they are long enough).
    service : None, "exp" or qlib.sim.service.ServiceLaw
        None or "exp": Exp(1) services, on the kernel ``kernel`` picks.
        A law of :mod:`qlib.sim.service`: FIFO servers, service times drawn
        from it at the start of service (``qlib.sim.general.simulate_general``,
        which returns a ``GeneralSimulationResult``).
    record_response : bool
        Also return every task's measured response time (runs the
        general-service kernel, with Exp(1) services when ``service`` is
        None or "exp").
    allow_unstable : bool
        Run ``lam >= 1`` with ``burn_in > 0`` too (exponential services
        only); refused by default, since a burn-in promises a stationary
        window that an unstable system never reaches.
    warn : bool, default True
        Issue this run's ``RuntimeWarning`` s (batch means too short or
        correlated, ``lam >= 1``). :func:`~qlib.sim.replications.replicate` passes
        False: its intervals come from the replications, not the batches.
    choices : int, optional
        ``None`` (default): a task joins a shortest queue of the whole closed
        neighbourhood of its position.  An int ``k >= 2``: it compares the
        server at its position with the servers at ``k - 1`` distinct
        neighbours of that position drawn uniformly without replacement (all
        of them when the degree is below ``k``) and joins a shortest of
        these, ties uniform (the supermarket model on graphs).  Exponential
        services only.
    kernel : {"auto", "event", "fast"}
        Which simulator runs Exp(1) services (a ``service`` law or
        ``record_response`` always runs the general-service kernel).
        ``"event"``: the exact event-driven kernel (:mod:`qlib.sim.kernel`;
        a lazily drawn uniform permutation per resampling epoch).
        ``"fast"``: the uniformized fast path
        (:func:`~qlib.sim.uniformized.simulate_uniformized`); a ``ValueError``
        names an option it lacks (``record_dt``, ``service``,
        ``record_response``, a fresh placement looking at more than 64
        positions).  ``"auto"`` (default): the fast path wherever it runs
        the call, that is at every ``0 <= mu <= inf`` (at ``mu = inf`` while
        an arrival looks at no more than 64 positions) without
        ``record_dt``; the event kernel otherwise.  The fast path simulates
        the same chain, exact in law (each epoch's permutation uniform,
        revealed where arrivals look); its time averages are step averages
        of the uniformized jump chain, unbiased at stationarity (module
        notes of :mod:`qlib.sim.uniformized`).  The two kernels draw
        different random numbers: the result's ``stream`` names the one
        that produced it, and ``kernel="event"`` gives back the numbers of
        ``"event-…"`` runs.

    Returns
    -------
    SimulationResult

    Examples
    --------
    >>> import qlib
    >>> r = qlib.simulate(qlib.graphs.ring(1000), 0.7, mu=1.0, t_end=200, burn_in=50, seed=1)
    >>> r.n, r.lam, float(r.occupancy[0]), r.stream
    (1000, 0.7, 1.0, 'uniformized-2')
    >>> bool(r.response_time_ci.low < r.response_time < r.response_time_ci.high)
    True

    Exp(1) services run on the fast path; ``kernel="event"`` forces the event kernel:

    >>> qlib.simulate(qlib.graphs.ring(1000), 0.7, mu=1.0, t_end=200, burn_in=50, seed=1,
    ...               kernel="event").stream
    'event-1'
    """
    graph = _as_graph(graph)
    _check_kernel(kernel)
    ch = _check_choices(choices)
    general = _general(service, record_response, ch, allow_unstable)
    lam, mu, t_end, burn_in = _check_args(graph, lam, mu, t_end, burn_in,
                                          batches, allow_unstable, warn)
    fast = _fast(kernel, graph, lam, mu, t_end, burn_in, ch, batches, general=general,
                 record_dt=record_dt, service=service, record_response=record_response)
    return _simulate_checked(graph, lam, mu, t_end=t_end, burn_in=burn_in, seed=seed,
                             levels=levels, record_dt=record_dt, initial=initial,
                             progress=progress, batches=batches, service=service,
                             record_response=record_response, warn=warn, ch=ch,
                             general=general, fast=fast)


def _check_kernel(kernel):
    """Refuse a ``kernel`` that is not one of :data:`KERNELS`."""
    if not isinstance(kernel, str) or kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {', '.join(map(repr, KERNELS))}, "
                         f"got {kernel!r}")


def _fast(kernel, graph, lam, mu, t_end, burn_in, ch, batches, *, general, record_dt,
          service=None, record_response=False):
    """Whether a run with checked arguments goes to the fast path: always for
    ``kernel="fast"`` (a ``ValueError`` names the option it lacks), never for
    ``"event"``, and for ``"auto"`` wherever the fast path runs it (any ``mu``
    it supports, no ``record_dt``, Exp(1) services)."""
    if kernel == "event":
        return False
    if general:
        lack = "service (a non-exponential law)" if check_law(service) is not None \
            else "record_response=True"
    elif record_dt is not None:
        lack = "record_dt (it records no paths)"
    else:
        lack = _lacks(graph, lam, mu, t_end, burn_in, ch, batches)
    if kernel == "fast":
        if lack is not None:
            raise ValueError(f"kernel='fast' does not take {lack}; use kernel='auto' or "
                             "'event'")
        return True
    return lack is None


def _general(service, record_response, ch=0, allow_unstable=False):
    """Whether a run with these ``service`` and ``record_response`` goes to
    the general-service kernel (a service law, or measured response times);
    refuses the options that only the exponential kernel has (``ch``, as
    ``start._check_choices`` returns it, and ``allow_unstable``)."""
    if service is None and record_response is False:
        return False
    if check_law(service) is None and record_response is False:
        return False
    if ch:
        raise ValueError("choices needs exponential services (service=None "
                         "or 'exp') and record_response=False")
    if allow_unstable is not False:
        raise ValueError("allow_unstable=True needs exponential services "
                         "(service=None or 'exp') and record_response=False")
    return True


def _simulate_checked(graph, lam, mu, *, t_end, burn_in=0.0, seed=None, levels=None,
                      record_dt=None, initial=None, progress=False, batches=None,
                      service=None, record_response=False, warn=True, ch=0, general=None,
                      fast=False):
    """:func:`simulate` on arguments already checked: ``graph`` a
    :class:`qlib.graphs.Graph`, ``lam, mu, t_end, burn_in`` as
    ``start._check_args`` returns them, ``ch`` as ``start._check_choices``
    returns it (choices), ``general`` as ``_general`` returns it (None:
    found here), ``fast`` as ``_fast`` returns it (the fast path).
    :func:`~qlib.sim.replications.replicate` checks once and runs its
    replications through here."""
    if fast:
        return _uniformized_checked(graph, lam, mu, t_end=t_end, burn_in=burn_in, seed=seed,
                                    ch=ch, initial=initial, batches=batches, warn=warn,
                                    levels=levels, progress=progress)
    if general is None:
        general = _general(service, record_response, ch)
    if general:
        return _transient(_general_checked(
            graph, lam, mu, t_end=t_end, burn_in=burn_in, seed=seed,
            levels=levels, record_dt=record_dt, initial=initial,
            progress=progress, batches=batches, service=service,
            record_response=record_response, warn=warn))
    batches = None if batches is None else int(batches)
    n = graph.n
    ss, seed_out = _seed(seed)
    X = _initial(initial, n, ss)
    rs = ss.generate_state(8, np.uint64)   # two xoshiro streams
    for k in (0, 4):
        if not rs[k:k + 4].any():  # xoshiro's one forbidden state
            rs[k] = np.uint64(1)
    K = _tracked(levels, int(X.max()))
    nrec, record_dt = _record_grid(record_dt, t_end)
    if nrec:
        V.check_memory(8 * nrec * (K + 1), "record_dt", record_dt, what=f"the {nrec} recorded rows")
    mu_inf = bool(np.isinf(mu))
    # the graph's own arrays, 32- or 64-bit (no copy; the kernels compile
    # for each width)
    indptr, indices = graph.indptr, graph.indices
    maxdeg = int(np.diff(indptr).max()) if n else 0

    Q = np.bincount(X, minlength=K + 1)[::-1].cumsum()[::-1].astype(np.int64)
    # 24 bytes per server: the lazy permutation's positions P ((stamp,
    # server) packed in an int64) and one 16-byte record per index holding
    # its slot A (packed likewise) and the queue length X of that server: a
    # fresh look-up reads slot j and, mostly, server j, in one cache line
    XA = np.empty((n, 2), np.int64)
    XA[:, 0] = -1
    XA[:, 1] = X
    del X   # the int32 start is copied into the records: no second copy lives on
    A, X = XA[:, 0], XA[:, 1]
    P = np.full(n, -1, np.int64)
    # the window is cut into nfine short slices; the batches of the standard
    # errors are groups of slices, sized from the measured correlation length
    nfine, integ, last, rsum, rcnt, paths, fs, st = _bookkeeping(batches, K, nrec, _NST)
    cand = np.empty(maxdeg + 1, np.int64)
    D = _depth(n)   # the pipeline's ring of drawn events
    bt, bk, bu = np.zeros(D), np.zeros(D, np.int64), np.zeros((D, maxdeg + 2))
    bs = np.zeros((D, max(ch - 1, 1)), np.int64)   # sampled neighbours' offsets
    scratch = tuple(np.empty(maxdeg + 1, np.int64) for _ in range(4))   # mu = inf maps

    if progress:
        from tqdm.auto import tqdm
        nslices = 100
        bar = tqdm(total=t_end, unit="time", desc=f"simulate n={n}")
    else:
        nslices = 1
        bar = None
    compile_notice(_kernel, "simulate")
    w0 = time.perf_counter()
    try:
        for j in range(1, nslices + 1):
            slice_end = t_end if j == nslices else t_end * j / nslices
            while True:
                code = _kernel(indptr, indices, n, lam, mu, mu_inf, t_end,
                               burn_in, nfine, slice_end, record_dt, nrec,
                               X, Q, P, A, rs, integ, last, rsum, rcnt,
                               paths, cand, fs, st, EPOCH_MAX, bt, bk, bu, ch, bs, scratch)
                if code == 0:
                    break
                K = 2 * K  # a queue reached the top level: track more
                Q = _grow(Q, K + 1)
                integ = _grow(integ, K + 1)
                last = _grow(last, K + 1)
                paths = _grow(paths, K + 1)
            if bar is not None:
                bar.update(slice_end - bar.n)
    finally:
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - w0
    del P, A   # before the copy of the final queues: the peak stays 24 bytes per server

    return _transient(_result(SimulationResult, integ, rsum, rcnt, paths, X, st, nfine, n,
                              K, levels, batches, t_end, burn_in, nrec, record_dt, wall,
                              seed_out, lam, mu, warn))
