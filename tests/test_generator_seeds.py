"""Every seeded function takes a numpy ``Generator`` as well as an int or a
``SeedSequence``: the generator's state draws the root entropy, so equal
generator states give equal runs, and the call advances the generator."""
import numpy as np
import pytest

import qlib
from qlib.halfin_whitt import reflected_ou


def _root(state):
    return int(np.random.default_rng(state).integers(0, 2**63))


CALLS = {
    "simulate_jsq": lambda seed: qlib.simulate_jsq(50, 1.0, t_end=5.0, seed=seed).mean_q2,
    "simulate_jsq_d": lambda seed: qlib.simulate_jsq_d(50, 1.0, [2], t_end=5.0, burn_in=1.0,
                                                       replications=2, seed=seed).blocks,
    "simulate_tasks": lambda seed: qlib.simulate_tasks(50, 1.0, t_end=5.0, seed=seed).mean_wait,
    "reflected_ou": lambda seed: reflected_ou(1.0, (-1.0, 0.0), t_end=2.0, dt=0.01, seed=seed).x1,
    "replicate": lambda seed: qlib.replicate(qlib.graphs.ring(20), 0.5, 0.0, replications=2,
                                             t_end=5.0, seed=seed).response_time,
}


@pytest.mark.filterwarnings("ignore:standard errors unreliable")
@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_generator_seed_is_its_root_entropy(name):
    call = CALLS[name]
    g = np.random.default_rng(7)
    a = call(g)
    b = call(np.random.default_rng(7))
    np.testing.assert_array_equal(np.asarray(a, float), np.asarray(b, float))
    # the same run as the int the generator's state draws (recorded as the entropy)
    np.testing.assert_array_equal(np.asarray(a, float), np.asarray(call(_root(7)), float))
    # the generator advanced: the next call differs
    assert not np.array_equal(np.asarray(call(g), float), np.asarray(a, float))
