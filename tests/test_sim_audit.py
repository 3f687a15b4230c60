"""qbook.audit: a replicated cell with its burn-in test and autocorrelation time."""
import dataclasses

import numpy as np
import pytest

from qlib import graphs, replicate
from qbook.audit import AuditedCell, audited_replicate, burn_in_verdict
from qlib.stats import burn_in_check, iat, leftover_bias, replication_ci


def _cell(seed=1, **kw):
    args = dict(replications=4, seed=seed, burn_in=20.0, window=300.0, record_dt=1.0)
    args.update(kw)
    return audited_replicate(graphs.ring(4), 0.5, 1.0, **args)


def test_same_runs_and_audit_as_by_hand():
    c = _cell()
    rr = replicate(graphs.ring(4), 0.5, 1.0, replications=4, seed=1, t_end=320.0, burn_in=20.0,
                   record_dt=1.0)
    assert np.array_equal(c.result.occupancy, rr.occupancy)          # the same runs, bit for bit
    path = rr.queue_paths(after=20.0)
    assert c.tau.high == replication_ci([iat(p, 1.0) for p in path]).high
    by_hand = burn_in_check(path, 1.0, replications=True, margin=0.03 * path.mean(), method="iut")
    assert c.burn.margin_used == by_hand.margin_used and c.mean_queue == path.mean()
    achieved = float(np.max(np.atleast_1d(by_hand.equivalence.achieved)))
    assert c.leftover_share == pytest.approx(leftover_bias(achieved, 300.0, c.tau.high) / path.mean())


def test_levels_may_be_chosen_from_the_estimates():
    c = _cell(which=lambda rr: [1])
    assert c.mean_queue == pytest.approx(float(c.result.queue_paths(after=20.0, which=[1]).mean()))
    assert c.mean_queue < _cell().mean_queue                     # level 1 alone is part of the sum


def test_verdict_is_the_worst_cell_and_passes_only_if_all_do():
    a, b = _cell(seed=1), _cell(seed=2)
    v = burn_in_verdict([a, b], "over")
    worst = max((a, b), key=lambda c: c.burn.margin_used)
    assert v.claim == "over" and v.value == pytest.approx(float(np.max(worst.burn.equivalence.achieved)))
    assert v.passed == (a.burn.passed and b.burn.passed)
    failed = dataclasses.replace(b, burn=dataclasses.replace(b.burn, passed=False))
    assert not burn_in_verdict([a, failed], "over").passed


@pytest.mark.parametrize("kw, exc", [(dict(window=0.0), ValueError), (dict(record_dt=-1.0), ValueError),
                                     (dict(burn_in=-1.0), ValueError), (dict(burn_margin=1.5), ValueError),
                                     (dict(tau_level=0.0), ValueError), (dict(replications=4.0), TypeError)])
def test_bad_input(kw, exc):
    with pytest.raises(exc):
        _cell(**kw)


def test_verdict_bad_input():
    with pytest.raises(ValueError, match="cells"):
        burn_in_verdict([], "over")
    with pytest.raises(TypeError, match="AuditedCell"):
        burn_in_verdict(["x"], "over")
    assert AuditedCell.__dataclass_params__.frozen
