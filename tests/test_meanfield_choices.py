"""qlib.meanfield.choices: the sampled-neighbour policy's fluid limit at μ = ∞."""
import math

import numpy as np
import pytest

from qlib import DegreeDistribution
from qlib.meanfield import choices as mc
from qlib.meanfield import fluid


@pytest.mark.parametrize("lam", [0.5, 0.9, 0.95])
@pytest.mark.parametrize("d, k", [(2, 2), (3, 2), (4, 3), (6, 2)])
def test_regular_is_the_supermarket_with_k_choices(lam, d, k):
    # k <= d + 1 on a d-regular graph: q(i) = lam^((k^i - 1)/(k - 1))
    q = mc.equilibrium(lam, DegreeDistribution.point(d), k)
    i = np.arange(min(q.size, 6))
    np.testing.assert_allclose(q[i], lam ** ((k ** i - 1) / (k - 1)), rtol=1e-12, atol=1e-300)


def test_enough_choices_is_the_full_neighbourhood():
    p = DegreeDistribution({1: 0.3, 2: 0.5, 4: 0.2})
    for k in (5, 6, 9):
        assert mc.response_time(0.9, p, k) == pytest.approx(fluid.response_time(0.9, p), rel=1e-13)


def test_sum_rule_and_monotone_in_k():
    p = DegreeDistribution({1: 0.25, 3: 0.25, 5: 0.5})
    Rs = []
    for k in (2, 3, 4, 6):
        q = mc.equilibrium(0.8, p, k)
        assert q[0] == 1 and q[1] == pytest.approx(0.8, rel=1e-14)
        assert np.all(np.diff(q) <= 0)
        Rs.append(mc.response_time(0.8, p, k))
    assert all(a > b for a, b in zip(Rs, Rs[1:]))   # more choices, shorter queues


def test_mixed_law_recursion():
    # q(i) = lam sum_d p(d) q(i-1)^min(k, d+1), written out for one law
    p = DegreeDistribution({0: 0.2, 1: 0.3, 5: 0.5})
    q = mc.equilibrium(0.7, p, 3)
    for i in range(1, 5):
        x = q[i - 1]
        assert q[i] == pytest.approx(0.7 * (0.2 * x + 0.3 * x ** 2 + 0.5 * x ** 3), rel=1e-12)


@pytest.mark.parametrize("args, err, word", [
    ((0.9, {2: 1.0}, 2), TypeError, "degrees"),
    ((0.9, DegreeDistribution.point(2), 1), ValueError, "choices"),
    ((0.9, DegreeDistribution.point(2), 2.0), TypeError, "choices"),
    ((1.2, DegreeDistribution.point(2), 2), ValueError, "lam"),
])
def test_refused(args, err, word):
    with pytest.raises(err, match=word):
        mc.equilibrium(*args)
