"""Unit tests of the helpers behind the bounded-resampling chapter:
qlib.stats.cells, qlib.sim.own_starts, qlib.meanfield.qbd."""
import math
from types import SimpleNamespace as NS

import numpy as np
import pytest

from qlib import graphs
from qlib.meanfield.qbd import tail_ratio_qbd
from qlib.sim.own_starts import replicate_own_starts
from qlib.stats.cells import cell_summary, first_reached, paired_difference


def test_tail_ratio_limits_and_monotone():
    lam, p0 = 0.9, 0.5
    z = [tail_ratio_qbd(lam, mu, p0) for mu in (0.0, 0.1, 1.0, 10.0, 1e4)]
    assert z[0] == pytest.approx(lam)
    assert z[-1] == pytest.approx(lam * p0, rel=1e-3)
    assert all(a > b for a, b in zip(z, z[1:]))


def test_tail_ratio_root_of_characteristic_equation():
    lam, mu, p0 = 0.9, 1.0, 0.5
    z = tail_ratio_qbd(lam, mu, p0)
    Q = np.array([[-mu * (1 - p0), mu * (1 - p0)], [mu * p0, -mu * p0]])
    U, Dm = np.diag([lam, 0.0]), np.eye(2)
    assert abs(np.linalg.det(U + z * (Q - U - Dm) + z**2 * Dm)) < 1e-10


@pytest.mark.parametrize("kw", [dict(lam=1.2, mu=1, p0=.5), dict(lam=.9, mu=-1, p0=.5),
                                dict(lam=.9, mu=math.inf, p0=.5), dict(lam=.9, mu=1, p0=0)])
def test_tail_ratio_rejects(kw):
    with pytest.raises(ValueError):
        tail_ratio_qbd(**kw)


def test_cell_summary_and_difference():
    runs = [NS(mean_response_time=t, occupancy=[1, .9, q]) for t, q in ((2.2, .5), (1.8, .3), (2.0, .4))]
    d, s, q, sq = cell_summary(NS(results=runs), 2.0)
    assert d == pytest.approx(0.0) and q == pytest.approx(0.4)
    assert s == pytest.approx(np.std([.1, -.1, 0], ddof=1) / math.sqrt(3))
    diff, se, b = paired_difference([((d, s), (0.1, 0.0))])
    assert diff[0] == pytest.approx(-0.1) and se[0] == pytest.approx(s) and b[0] == 0.1
    with pytest.raises(ValueError):
        cell_summary(NS(results=runs), 0.0)
    with pytest.raises(ValueError):
        paired_difference([])


def test_first_reached():
    pts = [(0, 5), (1, 0.5), (2, 2), (3, 0.1)]
    assert first_reached(pts, lambda v: v < 1) == 3
    assert first_reached(pts, lambda v: v < 10) == 0
    assert first_reached(pts, lambda v: v < 0) == math.inf
    with pytest.raises(TypeError):
        first_reached(pts, 3)


@pytest.mark.filterwarnings("ignore:standard errors unreliable:RuntimeWarning")
def test_replicate_own_starts_uses_each_start():
    g = graphs.ring(30)
    starts = [np.zeros(30, int), np.full(30, 5)]
    rr = replicate_own_starts(g, 0.5, 1.0, starts, seed=3, t_end=2.0, burn_in=0.0)
    # over so short a window the run started high keeps far more tasks
    assert rr.results[1].occupancy[1:].sum() > rr.results[0].occupancy[1:].sum() + 1
    with pytest.raises(ValueError):
        replicate_own_starts(g, 0.5, 1.0, starts[:1], seed=3, t_end=2.0)
    with pytest.raises(TypeError):
        replicate_own_starts(g, 0.5, 1.0, starts, seed=3, t_end=2.0, initial=None)
