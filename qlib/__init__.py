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

__version__ = "0.2.0"

from qlib import stats  # noqa: E402
from qlib.meanfield.degrees import DegreeDistribution  # noqa: E402
from qlib import graphs  # noqa: E402
from qlib import sim  # noqa: E402
from qlib.sim import (ReplicationResult, SimulationResult, replicate,  # noqa: E402
                      simulate)
from qlib import meanfield  # noqa: E402
from qlib import exact  # noqa: E402
from qlib import halfin_whitt  # noqa: E402
from qlib.halfin_whitt import (simulate_jsq, simulate_jsq_d, simulate_tasks,  # noqa: E402
                               stationary_jsq)
# the package imports Dask/xarray only when a sweep runs; it is callable: qlib.sweep(grid, ...)
from qlib import sweep  # noqa: E402

__all__ = ["__version__", "stats", "meanfield", "graphs", "sim", "exact", "halfin_whitt",
           "DegreeDistribution", "simulate", "SimulationResult", "replicate",
           "ReplicationResult", "simulate_jsq", "simulate_jsq_d", "simulate_tasks",
           "stationary_jsq", "sweep"]
