"""Peer implementations of qlib's models, for the benchmarks (issue 8).

* :mod:`benchmarks.peers.heapq_jsq` -- plain Python on ``heapq`` (standard
  library only; the book imports it);
* :mod:`benchmarks.peers.simpy_jsq` -- SimPy 4.1;
* :mod:`benchmarks.peers.ciw_jsq` -- Ciw 3.2.

Each offers ``ring(n, lam, mu, *, t_end, burn_in, seed, batches)`` (model (a):
JSQ on the closed neighbourhoods of a ring resampled at rate ``mu``) and
``complete(n, beta, *, t_end, burn_in, seed, batches, initial)`` (model (b):
JSQ on the complete graph, total arrival rate ``n - beta sqrt(n)``, the
shortest queue read from buckets of servers by queue length, as in
``qlib.halfin_whitt.tasks``; ``initial``: occupancy counts at time 0), returning a
:class:`~benchmarks.peers.common.PeerResult`.  Importing this package does not
import SimPy or Ciw; import those modules explicitly.
"""
