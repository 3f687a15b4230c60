"""qlib: fluid limits and simulation of join-the-shortest-queue load balancing.

The package accompanies the book *Load balancing in large server networks*.
It is a small tree, one package per area and one module per idea; a lower
floor never imports a higher one:

* ``qlib.stats``: honest error bars: intervals and families, batch means,
  equivalence and burn-in tests;
* ``qlib.meanfield``: degree laws, the fluid ODE and its equilibrium, its
  tails, the refined 1/n expansion, the pair approximation, the cavity
  approximation;
* ``qlib.graphs``: immutable CSR graphs and generators;
* ``qlib.sim``: exact event-driven JSQ simulation (numba): ``simulate``,
  ``replicate``, service-time laws;
* ``qlib.exact``: exact laws: tiny graphs, the occupancy chain, the M/M/1
  transient;
* ``qlib.halfin_whitt``: JSQ with many servers in the Halfin–Whitt regime:
  the chain's simulation, its diffusion limit, exact laws, the alternatives;
* ``qlib.sweep``: parameter sweeps on Dask (optional extra ``qlib[sweep]``).

The most used names are re-exported here (``qlib.simulate``,
``qlib.replicate``, ``qlib.DegreeDistribution``, ``qlib.stationary_jsq``, …).
"""

__version__ = "0.4.0"

import importlib
from typing import TYPE_CHECKING, Any

# ``import qlib`` is light: the subpackages (NumPy, SciPy, numba and the
# compiled kernels behind them) load on first use of a name (PEP 562), so a
# script that needs only the degree laws or the statistics never pays for
# the simulator.
_SUBPACKAGES = ("stats", "meanfield", "graphs", "sim", "exact", "halfin_whitt", "sweep")
_REEXPORTS = {
    "DegreeDistribution": "qlib.meanfield.degrees",
    "simulate": "qlib.sim", "replicate": "qlib.sim",
    "SimulationResult": "qlib.sim", "ReplicationResult": "qlib.sim",
    "simulate_jsq": "qlib.halfin_whitt", "simulate_jsq_d": "qlib.halfin_whitt",
    "simulate_tasks": "qlib.halfin_whitt", "stationary_jsq": "qlib.halfin_whitt",
}

__all__ = ["__version__", "stats", "meanfield", "graphs", "sim", "exact", "halfin_whitt",
           "DegreeDistribution", "simulate", "SimulationResult", "replicate",
           "ReplicationResult", "simulate_jsq", "simulate_jsq_d", "simulate_tasks",
           "stationary_jsq", "sweep"]

if TYPE_CHECKING:  # static analysers and IDEs see the names directly
    from qlib import exact, graphs, halfin_whitt, meanfield, sim, stats
    # qlib.sweep is a callable package: what a script does with it is call it
    # (qlib.sweep(grid, ...)); its other names: from qlib.sweep import points, ...
    from qlib.sweep import sweep
    from qlib.halfin_whitt import simulate_jsq, simulate_jsq_d, simulate_tasks, stationary_jsq
    from qlib.meanfield.degrees import DegreeDistribution
    from qlib.sim import ReplicationResult, SimulationResult, replicate, simulate


def __getattr__(name: str) -> Any:
    if name in _SUBPACKAGES:
        value = importlib.import_module(f"qlib.{name}")
    elif name in _REEXPORTS:
        value = getattr(importlib.import_module(_REEXPORTS[name]), name)
    else:
        raise AttributeError(f"module 'qlib' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
