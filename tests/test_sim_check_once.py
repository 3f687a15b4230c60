"""A public simulation call checks its graph and rates once.

``replicate`` converts the graph (``start._as_graph``) and checks the rates
(``start._check_args``) once, in the caller's thread, and its runs take the
checked values; ``simulate``, ``simulate_general`` and
``simulate_interleaved`` alone do the same.  The counter wraps the two
functions wherever a module of ``qlib`` holds them, so a path that calls
them through any module is counted.
"""
import math
import sys
import warnings

import pytest

from qlib import graphs as g
from qlib.sim import replicate, service, simulate, simulate_general
from qlib.sim import start
from qlib.sim.interleave import simulate_interleaved


@pytest.fixture
def calls(monkeypatch):
    count = {"_check_args": 0, "_as_graph": 0}
    for name in count:
        orig = getattr(start, name)

        def counted(*a, _orig=orig, _name=name, **kw):
            count[_name] += 1
            return _orig(*a, **kw)

        for mod in list(sys.modules.values()):
            if (getattr(mod, "__name__", "").startswith("qlib")
                    and getattr(mod, name, None) is orig):
                monkeypatch.setattr(mod, name, counted)
    return count


KW = dict(t_end=6.0, burn_in=1.0, batches=2)


@pytest.mark.parametrize("extra", [
    dict(n_jobs=1), dict(n_jobs=2), dict(interleave=True, n_jobs=1),
    dict(interleave=True, n_jobs=2), dict(choices=2, n_jobs=2),
    dict(service=service.lognormal(1.0), n_jobs=2),
    dict(record_response=True, n_jobs=1)],
    ids=["lone", "threads", "interleaved", "interleaved-threads", "choices",
         "general", "record_response"])
@pytest.mark.parametrize("mu", [0.0, math.inf])
def test_replicate_checks_once(calls, extra, mu):
    rr = replicate(g.ring(30), 0.7, mu, replications=4, seed=1, **KW, **extra)
    assert rr.replications == 4
    assert calls == {"_check_args": 1, "_as_graph": 1}


@pytest.mark.parametrize("run", [
    lambda G: simulate(G, 0.7, 1.0, seed=1, **KW),
    lambda G: simulate(G, 0.7, 1.0, seed=1, service=service.deterministic(), **KW),
    lambda G: simulate_general(G, 0.7, 1.0, seed=1, service=service.erlang(2), **KW),
    lambda G: simulate_interleaved(G, 0.7, 1.0, seeds=[1, 2], **KW)],
    ids=["simulate", "simulate-general", "simulate_general", "simulate_interleaved"])
def test_one_run_checks_once(calls, run):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        run(g.ring(30))
    assert calls == {"_check_args": 1, "_as_graph": 1}


def test_replicate_still_refuses_bad_input():
    """What the runs no longer check, replicate checks before any run."""
    G = g.ring(10)
    with pytest.raises(ValueError, match="lam"):
        replicate(G, -1.0, replications=2, t_end=5.0)
    with pytest.raises(ValueError, match="choices needs exponential"):
        replicate(G, 0.5, replications=2, t_end=5.0, choices=2,
                  service=service.deterministic())
    with pytest.raises(TypeError, match="unexpected keyword argument 'tend'"):
        replicate(G, 0.5, replications=2, t_end=5.0, tend=3)
    with pytest.raises(ValueError, match="t_end"):
        replicate(G, 0.5, replications=2, t_end=1.0, burn_in=2.0)
