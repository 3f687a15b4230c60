"""replicate: a networkx graph with interleave=True, and no warning leaks
from its worker threads (the runs' warnings are switched off by argument,
not by a process-global filter)."""
import subprocess
import sys
import warnings

import networkx as nx
import numpy as np
import pytest

import qlib
from qlib.sim import replicate


def test_networkx_graph_interleaved():
    g = nx.cycle_graph(60)
    a = replicate(g, 0.8, 1.0, replications=4, seed=3, t_end=40, burn_in=10,
                  interleave=True, n_jobs=2)
    b = replicate(qlib.graphs.ring(60), 0.8, 1.0, replications=4, seed=3, t_end=40,
                  burn_in=10, n_jobs=2)
    np.testing.assert_array_equal(a.occupancy, b.occupancy)


@pytest.mark.parametrize("interleave", [False, True])
def test_no_leaked_warning_from_threads(interleave):
    # short windows: every run's batch means would warn ("standard errors
    # unreliable"); replicate must never let one out, whatever the threads do
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for k in range(12):
            replicate(qlib.graphs.ring(40), 0.9, 0.0, replications=8, seed=k, t_end=6,
                      burn_in=1, n_jobs=4, interleave=interleave)


def test_simulate_warns_unless_told_not():
    g = qlib.graphs.ring(40)
    with pytest.warns(RuntimeWarning, match="standard errors unreliable"):
        qlib.simulate(g, 0.9, t_end=6, burn_in=1, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        qlib.simulate(g, 0.9, t_end=6, burn_in=1, seed=1, warn=False)


def test_replicate_under_W_error():
    # a fresh interpreter with -W error: a warning leaked from any thread fails it
    code = ("import qlib\n"
            "for k in range(24):\n"
            "    qlib.replicate(qlib.graphs.ring(40), 0.9, 0.0, replications=6, seed=k,\n"
            "                   t_end=6, burn_in=1, n_jobs=3)\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
