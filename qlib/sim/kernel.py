"""The exponential-service JSQ kernel: lazy epoch-stamped shuffles, uniformization, a prefetch pipeline.

The model (``shared/MATH.md``): ``n`` single-server FIFO queues with Exp(1)
services; tasks arrive at rate ``lam`` per server (total ``lam * n``) at a
uniformly random position of a fixed base graph on positions; a task joins a
shortest queue of the *closed* neighbourhood of its position, ties broken
uniformly at random among all shortest queues.  Servers sit on positions by a
permutation, redrawn uniformly at the epochs of a Poisson process of total
rate ``mu`` (``mu = 0``: static graph; ``mu = inf``: a fresh permutation
before every arrival).  At time 0 server ``s`` sits at position ``s``.

Implementation (all O(1) per event, memory 24 bytes per server; the loop
and the pieces the kernels share are in ``qlib.sim._loop``):

* the permutation of the current epoch is materialised lazily, one position
  at a time, only where an arrival looks: a sparse Fisher–Yates shuffle whose
  entries are stamped with the epoch number, so a resampling is ``epoch += 1``
  (stamp and server packed in one int64; the stamps are cleared, O(n), once
  every 2**31 epochs); slot ``j`` of the shuffle and the queue length of
  server ``j`` share one 16-byte record, hence one cache line; under
  ``mu = inf`` the shuffle of each arrival lives in small local maps;
* events are drawn by uniformization at the constant rate
  ``lam n + n + mu``: a departure candidate is a uniform server, a real
  departure if it is busy (so a real departure is from a uniform busy
  server at total rate ``Q_1``), and nothing happens otherwise;
* ``Q[i]`` = number of servers with at least ``i`` tasks; its time integral is
  kept per level with a per-level "last change" time, so an event touches only
  the one level it changes;
* the random numbers come from two xoshiro256++ streams (state: eight
  ``uint64`` words passed in and out of the kernel), seeded from
  ``numpy.random.SeedSequence``; what an event draws does not depend on the
  state, so the kernel draws the events ``e+1, ..., e+D`` ahead and asks for
  their cache lines (software prefetch) while event ``e`` runs: at large n
  the memory misses of D events overlap (see "the pipeline" below); for
  0 < mu < inf the lazy permutation itself is drawn D/3 events ahead (it
  depends on the positions and epochs, not on the queues), so that the
  dependent misses of its used-slot fallback overlap other events.  The
  kernel can stop at any time (``progress=True`` bars, growing the tracked
  levels) and resume with bitwise-identical results.
"""
from __future__ import annotations

import numba

# the shared pieces, also read from here by the other kernels and the tests
from qlib.sim._loop import (EPOCH_MAX, _ARR, _BATCH, _DEP, _EC, _EPOCH, _EVENTS,  # noqa: F401
                            _H0, _H1, _HP, _IREC, _KC, _NB, _NST, _RES, _STARTED,
                            _NJIT, _events, _lookup, _place, _place_local, _prefetch,
                            _slot)
from qlib.sim.rng import _exp1, _step  # noqa: F401

__all__ = []


# ---------------------------------------------------------- the kernel ----
# The exponential kernel runs a software pipeline: the random numbers
# of event e + D are drawn, and the cache lines it will touch are requested
# (``_prefetch``), while event e runs, so the memory misses of about D events
# overlap instead of queueing one after the other.  That needs the random
# numbers an event uses, and hence the addresses it touches, to be known
# before the event runs, independently of the state:
#
# * uniformization: events are drawn at the constant total rate
#   ``R = lam n + n + mu`` (``mu`` counted only when finite): an arrival at a
#   uniform position with probability ``lam n / R``, a *departure candidate*
#   (a uniform server; a real departure if it is busy, else nothing happens)
#   with probability ``n / R``, a resampling epoch with ``mu / R``.  A real
#   departure is thus from a uniform busy server at total rate ``Q_1``, as in
#   the model; no busy list is needed;
# * two xoshiro256++ streams: stream 1 draws, per event, the time increment,
#   the event, and (arrivals) the tie-breaking uniform; stream 2 draws one
#   uniform per position of an arrival's closed neighbourhood (when mu > 0),
#   used by the lazy permutation if that position is new in its epoch.
#
# Each stream is used in event order and the number of draws per event does
# not depend on the state, so the result is the same for every pipeline depth
# D (``_depth``; tests/test_simulate_pipeline.py checks depth 1 against 32 bit
# for bit); D only changes speed.  The loop itself is ``qlib.sim._loop._events``,
# shared with the interleaved replications; this entry point compiles it for
# one run alone.


@numba.njit(**_NJIT)
def _kernel(indptr, indices, n, lam, mu, mu_inf, t_end, burn_in, nbatch,
            slice_end, rec_dt, nrec, X, Q, P, A, rs, integ, last, rsum,
            rcnt, paths, cand, fs, st, epoch_max, bt, bk, bu, ch, bs, scratch):
    """Advance the simulation to ``slice_end`` (<= t_end).

    Returns 0 when ``slice_end`` is reached, 1 when a queue has reached the
    top tracked level ``K = Q.size - 1`` (the caller grows the level arrays
    and calls again).  All state lives in the arrays, the drawn but not yet
    run events included (``bt``: times, ``bk``: what, ``bu``: uniforms, a
    ring of ``D = bt.size`` events, a power of 2), so where the run is cut
    into slices does not change it.  ``fs = [t, time of the last drawn
    event]``; ``rs`` holds the two xoshiro streams.  ``ch = 0``: an
    arrival looks at its whole closed neighbourhood; ``ch = k >= 2``: at its
    own position and ``k - 1`` distinct neighbours drawn uniformly (stream
    1, when the event is drawn; their offsets in ``bs``), all of them when
    the degree is below ``k``.  ``scratch``: four int64 arrays as long as
    ``cand``, the local maps of mu = inf.
    """
    par = (n, lam, mu, mu_inf, t_end, burn_in, nbatch, slice_end, rec_dt, nrec, epoch_max)
    return _events(indptr, indices, par, X, Q, P, A, rs, integ, last, rsum, rcnt, paths,
                   cand, fs, st, bt, bk, bu, ch, bs, Q.shape[0] - 1, 0, scratch, False)


def _depth(n):
    """Pipeline depth for n servers: 1 (no pipeline) while the state fits in
    the caches (n < 2**15), else 32.  The result does not depend on it.

    With D = 1 the type of an event is branched on right after it is drawn,
    which the branch predictor follows; deeper pipelines pay a mispredicted
    branch per stage (about 20 ns per event measured at n = 1000) and gain
    only once the misses they hide cost more."""
    return 1 if n < 2**15 else 32
