"""qlib: fluid limits and simulation of join-the-shortest-queue load balancing.

The package accompanies the book *Load balancing in large server networks*.
Each module holds one idea:

``qlib.degrees``   degree distributions and their generating functions
``qlib.fluid``     the fluid ODE, its equilibrium and tail bounds
``qlib.graphs``    immutable CSR graphs and generators
``qlib.plotting``  figure helpers used by the chapters
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
