"""The ring window with a reused (incomplete) factorisation and a warm start."""
import numpy as np
import pytest

from qlib.meanfield import ring_window
from qlib.meanfield.pair import _solve_window


def test_reused_factorisation_gives_the_direct_solution():
    direct = _solve_window(0.8, 0.0, 4, 6, 1e-11, 2000, reuse=False)[0]
    reused = _solve_window(0.8, 0.0, 4, 6, 1e-11, 2000, reuse=True)[0]
    assert np.max(np.abs(direct - reused)) < 1e-9


def test_warm_start_from_the_shorter_window():
    w3 = ring_window(0.7, 3, truncation=7)
    cold = ring_window(0.7, 4, truncation=7)
    warm = ring_window(0.7, 4, truncation=7, start=w3)
    assert abs(cold.response_time - warm.response_time) < 1e-8
    assert warm.iterations <= cold.iterations


def test_start_refusals():
    w3 = ring_window(0.7, 3, truncation=7)
    with pytest.raises(ValueError, match="start"):
        ring_window(0.7, 4, truncation=8, start=w3)
    with pytest.raises(TypeError, match="start"):
        ring_window(0.7, 4, truncation=7, start=np.zeros(3))
