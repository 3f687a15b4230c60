"""qbook.rounding: the equilibrium recursion in floating point against 50 digits."""
import pytest

from qbook.rounding import recursion_rounding


def test_recursion_rounding_within_bound():
    r = recursion_rounding(3, 0.5)
    assert r.worst_ratio <= 1 and r.worst_equilibrium <= 1 and r.levels > 3


def test_recursion_rounding_refuses_a_bad_degree():
    with pytest.raises(ValueError):
        recursion_rounding(0, 0.5)
