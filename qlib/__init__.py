"""qlib: fluid limits and simulation of join-the-shortest-queue load balancing.

The package accompanies the book *Load balancing in large server networks*.
Each module holds one idea:

``qlib.degrees``   degree distributions and their generating functions
``qlib.fluid``     the fluid ODE, its equilibrium and tail bounds
``qlib.graphs``    immutable CSR graphs and generators
``qlib.simulate``  exact event-driven JSQ simulation (numba)
"""

__version__ = "0.1.0"

__all__ = ["__version__"]

from qlib.degrees import DegreeDistribution  # noqa: E402
from qlib import fluid, graphs  # noqa: E402
from qlib.simulate import SimulationResult, simulate  # noqa: E402

__all__ += ["DegreeDistribution", "fluid", "graphs", "simulate", "SimulationResult"]
