"""The two models in Ciw (3.2), written the way Ciw's documentation does.

A network of ``n + 1`` nodes: node 1 is a dispatcher (Poisson arrivals of the
total rate, zero service time, infinitely many servers) whose router sends each
task to one of the server nodes ``2 .. n+1`` (one Exp(1) server each, FIFO),
which send it to the exit.  The occupancy is recorded by a state tracker (Ciw's
hook for state statistics) through the tracker's accept/release callbacks.

* :func:`ring` -- model (a): a custom router (subclass of
  ``ciw.routing.NodeRouting``) picks a uniform position, looks up the servers
  of its closed ring neighbourhood under the current permutation (the same
  lazy permutation as ``qlib.simulate``) and joins a shortest one, ties
  uniform.  Ciw has no hook for an event that only changes the routing, so
  the resampling Poisson process is simulated lazily in the router: at a
  routing decision at time ``t`` its epochs up to ``t`` are drawn (and
  counted as events) and the permutation is redrawn once if there was any --
  the same law, since only the last redraw before an arrival matters;
* :func:`complete` -- model (b): JSQ over all server nodes, total rate
  ``n - beta sqrt(n)``, by default with a router that reads the shortest
  queues from buckets kept by the state tracker (O(1) per arrival, the
  algorithm of the other per-server simulators); ``router="ciw"`` uses Ciw's
  own ``ciw.routing.LoadBalancing`` (a scan of all nodes per arrival).
  Ciw's event loop itself costs O(n) per event (it asks every node for its
  next event date), whatever the router.
"""
from __future__ import annotations

import math
import random
import time

import ciw

from .common import (Buckets, LazyPermutation, Occupancy, PeerResult, hw_rate,
                     queues_from_occupancy, ring_neighbours)

__all__ = ["ring", "complete"]


class OccupancyTracker(ciw.trackers.StateTracker):
    """Feeds :class:`~benchmarks.peers.common.Occupancy` from Ciw's callbacks."""

    def __init__(self, occ):
        self.occ = occ
        self.departures = 0

    def initialise(self, simulation):
        self.simulation = simulation
        self.state = None
        self.history = []

    def change_state_accept(self, node, ind):
        if node.id_number >= 2:  # a server node (node 1 is the dispatcher)
            self.occ.up(node.now, node.number_of_individuals)

    def change_state_release(self, node, destination, ind, blocked):
        if node.id_number >= 2:  # released after the decrement
            self.occ.down(node.now, node.number_of_individuals + 1)
            self.departures += 1

    def timestamp(self):
        pass


class RingJSQ(ciw.routing.NodeRouting):
    """Closed-neighbourhood JSQ on a ring resampled at rate ``mu``."""

    def __init__(self, n, mu):
        self.n = n
        self.mu = mu
        self.nbrs = ring_neighbours(n)
        self.perm = LazyPermutation(n, random)  # Ciw seeds `random`
        self.next_epoch = random.expovariate(mu) if 0 < mu < math.inf else math.inf
        self.resamples = 0
        self.arrivals = 0

    def next_node(self, ind):
        nodes = self.simulation.nodes  # nodes[k] is node number k
        t = self.simulation.current_time
        if math.isinf(self.mu):
            self.perm.resample()
        elif self.next_epoch <= t:
            while self.next_epoch <= t:
                self.resamples += 1
                self.next_epoch += random.expovariate(self.mu)
            self.perm.resample()
        v = int(random.random() * self.n)
        best = self.perm.server(v)
        bx = nodes[best + 2].number_of_individuals
        cand = [best]
        for w in self.nbrs[v]:
            u = self.perm.server(w)
            x = nodes[u + 2].number_of_individuals
            if x < bx:
                bx, cand = x, [u]
            elif x == bx:
                cand.append(u)
        self.arrivals += 1
        return nodes[ciw.random_choice(cand) + 2]


def _network(n, rate, router):
    return ciw.create_network(
        arrival_distributions=[ciw.dists.Exponential(rate)] + [None] * n,
        service_distributions=[ciw.dists.Deterministic(0.0)]
        + [ciw.dists.Exponential(1.0) for _ in range(n)],
        number_of_servers=[float("inf")] + [1] * n,
        routing=ciw.routing.NetworkRouting(
            routers=[router] + [ciw.routing.Leave() for _ in range(n)]),
    )


def _run(n, rate, router, t_end, burn_in, batches):
    occ = Occupancy(n, t_end, burn_in, batches)
    tracker = OccupancyTracker(occ)
    sim = ciw.Simulation(_network(n, rate, router), tracker=tracker)
    c0 = time.process_time()
    sim.simulate_until_max_time(t_end)
    q, se = occ.finish()
    cpu = time.process_time() - c0
    arrivals = sum(occ.Q[1:]) + tracker.departures  # tasks in system + gone
    return q, se, arrivals, tracker.departures, cpu, router


def ring(n, lam, mu=0.0, *, t_end, burn_in=0.0, seed=0, batches=20):
    """JSQ on a resampled ring (see :func:`benchmarks.peers.heapq_jsq.ring`)."""
    ciw.seed(seed)  # seeds `random` (the router's draws) and Ciw's streams
    router = RingJSQ(n, mu)
    q, se, arr, dep, cpu, router = _run(n, lam * n, router, t_end, burn_in,
                                        batches)
    # tasks still at the dispatcher at t_end (zero service) are not counted:
    # events = what reached a server + departures + resampling epochs
    ev = arr + dep + (0 if math.isinf(mu) else router.resamples)
    return PeerResult("ciw", "ring", n, mu, t_end, q, se, ev, arr, dep,
                      router.resamples, cpu)


class BucketTracker(OccupancyTracker):
    """:class:`OccupancyTracker` that also keeps the servers in buckets by
    queue length (:class:`benchmarks.peers.common.Buckets`) for the router."""

    def __init__(self, occ, n):
        super().__init__(occ)
        self.buckets = Buckets([0] * n)

    def change_state_accept(self, node, ind):
        if node.id_number >= 2:
            self.buckets.move(node.id_number - 2, node.number_of_individuals)
            self.occ.up(node.now, node.number_of_individuals)

    def change_state_release(self, node, destination, ind, blocked):
        if node.id_number >= 2:
            self.buckets.move(node.id_number - 2, node.number_of_individuals)
            self.occ.down(node.now, node.number_of_individuals + 1)
            self.departures += 1


class BucketJSQ(ciw.routing.NodeRouting):
    """JSQ over all server nodes in O(1): a uniform server among the shortest
    queues, read from the tracker's buckets (ties uniform, as Ciw's own
    ``LoadBalancing(tie_break="random")``, which scans all ``n`` nodes)."""

    def __init__(self, tracker):
        self.tracker = tracker

    def next_node(self, ind):
        s = self.tracker.buckets.pick(random.random)
        return self.simulation.nodes[s + 2]


def complete(n, beta, *, t_end, burn_in=0.0, seed=0, batches=20, initial=None,
             router="buckets"):
    """JSQ over ``n`` server nodes, total arrival rate ``n - beta sqrt(n)``.

    ``router="buckets"`` (default): :class:`BucketJSQ`, O(1) per arrival, the
    routing of the other per-server simulators; ``router="ciw"``: Ciw's own
    ``ciw.routing.LoadBalancing`` (a scan of the ``n`` nodes per arrival).
    ``initial``: occupancy counts ``(Q_1, Q_2, ...)`` at time 0, placed in
    the server nodes with ``Node.accept`` before the run (Ciw has no other
    way to start a non-empty network).
    """
    lam_n = hw_rate(n, beta)
    ciw.seed(seed)
    occ = Occupancy(n, t_end, burn_in, batches)
    tracker = BucketTracker(occ, n)
    if router == "buckets":
        rt = BucketJSQ(tracker)
    elif router == "ciw":
        rt = ciw.routing.LoadBalancing(destinations=list(range(2, n + 2)),
                                       tie_break="random")
    else:
        raise ValueError(f"router must be 'buckets' or 'ciw', got {router!r}")
    sim = ciw.Simulation(_network(n, lam_n, rt), tracker=tracker)
    k0 = 0
    for s, k in enumerate(queues_from_occupancy(n, initial)):
        node = sim.nodes[s + 2]
        for _ in range(k):
            k0 += 1
            node.accept(sim.IndividualType(-k0, "Customer", 0, simulation=sim))
        node.update_next_event_date()
    c0 = time.process_time()
    sim.simulate_until_max_time(t_end)
    q, se = occ.finish()
    cpu = time.process_time() - c0
    dep = tracker.departures
    arr = sum(occ.Q[1:]) + dep - k0  # tasks in system + gone - initial
    return PeerResult("ciw", "complete", n, math.nan, t_end, q, se, arr + dep,
                      arr, dep, 0, cpu, {"beta": beta, "router": router})
