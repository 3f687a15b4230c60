"""qlib: fluid limits and simulation of join-the-shortest-queue load balancing.

The package accompanies the book *Load balancing in large server networks*.
Each module holds one idea:

``qlib.degrees``   degree distributions and their generating functions
``qlib.fluid``     the fluid ODE, its equilibrium and tail bounds
``qlib.graphs``    immutable CSR graphs and generators
``qlib.simulate``  exact event-driven JSQ simulation (numba), ``replicate``
``qlib.service``   service-time laws of mean 1 (``simulate(..., service=law)``)
``qlib.cavity``    the cavity approximation for phase-type services
``qlib.finite_n``  first-order finite-n corrections to fluid quantities
``qlib.exact``     exact stationary laws of tiny graphs (sparse linear algebra)
``qlib.heavy_traffic``  JSQ on the complete graph in the Halfin-Whitt regime
``qlib.ou_stationary``  the stationary law of its diffusion limit, on a grid
``qlib.tasks``     the same, task by task: per-server FIFO queues, measured waits
``qlib.stats``     honest error bars: replications, batch means, families, power
``qlib.sweep``     parameter sweeps on Dask (optional extra ``qlib[sweep]``)
"""

__version__ = "0.1.0"

__all__ = ["__version__"]

from qlib.degrees import DegreeDistribution  # noqa: E402
from qlib import exact, finite_n, fluid, graphs, heavy_traffic, ou_stationary, stats, tasks  # noqa: E402
from qlib.simulate import (ReplicationResult, SimulationResult,  # noqa: E402
                           replicate, simulate)
from qlib import service  # noqa: E402

__all__ += ["DegreeDistribution", "exact", "finite_n", "fluid", "graphs", "heavy_traffic", "ou_stationary", "stats", "tasks",
            "simulate", "SimulationResult", "replicate", "ReplicationResult", "service"]

# the module imports Dask/xarray only when a sweep runs
from qlib.sweep import sweep  # noqa: E402

__all__ += ["sweep"]
