"""The occupancy-vector start: exact counts, positions drawn at random from the run's seed."""
import numpy as np
from scipy import stats

from qlib.sim.start import _initial, _seed

Q = np.array([1.0, 0.9, 0.5, 0.1])


def test_counts_are_kept():
    for s in range(5):
        X = _initial(Q, 1000, _seed(s)[0])
        assert [int((X >= i).sum()) for i in range(5)] == [1000, 900, 500, 100, 0]


def test_reproducible_and_seed_dependent():
    a, b = (_initial(Q, 1000, _seed(7)[0]) for _ in range(2))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, _initial(Q, 1000, _seed(8)[0]))
    # replicate's children (spawned SeedSequences) give different starts too
    kids = np.random.SeedSequence(3).spawn(2)
    assert not np.array_equal(_initial(Q, 1000, kids[0]), _initial(Q, 1000, kids[1]))


def test_positions_are_uniform():
    """The loaded servers of the first half are hypergeometric (500 of 1000 hold >= 2)."""
    first = [int((_initial(Q, 1000, _seed(s)[0])[:500] >= 2).sum()) for s in range(200)]
    law = stats.hypergeom(1000, 500, 500)
    z = (np.mean(first) - law.mean()) / (law.std() / np.sqrt(200))
    assert abs(z) < 4       # sorted along the positions it would be 500 (z ~ 1e3)
    assert np.std(first) > 0.5 * law.std()


def test_queue_lengths_and_empty_are_used_as_given():
    x = np.arange(10) % 3
    assert np.array_equal(_initial(x, 10, _seed(1)[0]), x)
    assert not _initial(None, 10, _seed(1)[0]).any()
