"""The 1/μ coefficient w of the resampled ring from the window hierarchy."""
import pytest

from qlib.meanfield.resampling import first_order_coefficient


def test_window_three_and_four_give_the_same_w():
    # at the product state the L = 3 closure is exact to first order: L = 4 adds nothing
    w3 = first_order_coefficient(0.9, 3, truncation=6)
    w4 = first_order_coefficient(0.9, 4, truncation=6)
    assert abs(w3 - w4) < 1e-6
    assert 0.3 < w3 < 0.45


def test_pair_w_differs():
    # the pair closure drops the three-point correlation: a different (lower) w
    assert first_order_coefficient(0.9, 2, truncation=6) < first_order_coefficient(0.9, 3, truncation=6) - 0.05


def test_refusals():
    with pytest.raises(ValueError, match="mu"):
        first_order_coefficient(0.9, 3, mu=1.0)
    with pytest.raises(TypeError, match="length"):
        first_order_coefficient(0.9, 3.0)
    with pytest.raises(ValueError, match="lam"):
        first_order_coefficient(1.2, 3)
