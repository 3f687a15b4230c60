"""Tests of the pieces that benchmarks/peers adds for model (b) (standard library only)."""
import random
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.peers import heapq_jsq  # noqa: E402
from benchmarks.peers.common import Buckets, queues_from_occupancy  # noqa: E402


def test_queues_from_occupancy_round_trip():
    X = queues_from_occupancy(6, [5, 3, 1])
    assert X == [3, 2, 2, 1, 1, 0]
    occ = [sum(x >= i for x in X) for i in (1, 2, 3, 4)]
    assert occ == [5, 3, 1, 0]
    assert queues_from_occupancy(3, None) == [0, 0, 0]
    with pytest.raises(ValueError, match="non-increasing"):
        queues_from_occupancy(4, [2, 3])


def test_buckets_track_the_shortest_queue():
    rng = random.Random(5)
    b = Buckets(queues_from_occupancy(7, [7, 4, 2]))
    for _ in range(5000):
        if rng.random() < 0.5:
            s = b.pick(rng.random)
            assert b.X[s] == min(b.X)            # a shortest queue
            b.move(s, b.X[s] + 1)
        else:
            busy = [s for s, x in enumerate(b.X) if x > 0]
            if busy:
                s = rng.choice(busy)
                b.move(s, b.X[s] - 1)
        assert b.m == min(b.X)
        for k, lst in enumerate(b.members):
            assert sorted(lst) == [s for s, x in enumerate(b.X) if x == k]
            assert all(b.where[s] == i for i, s in enumerate(lst))


def test_heapq_complete_from_an_initial_state():
    init = [10, 6, 2]
    r = heapq_jsq.complete(10, 1.0, t_end=50.0, seed=3, initial=init)
    # tasks at the end = initial + arrivals - departures, and the occupancy at
    # time 0 enters the time average (q(3) > 0 early on)
    assert r.arrivals + sum(init) - r.departures >= 0
    assert r.events == r.arrivals + r.departures
    with pytest.raises(ValueError):
        heapq_jsq.complete(10, 1.0, t_end=1.0, initial=[3, 5])
