"""Mean-field theory of JSQ on sparse dynamic graphs.

:mod:`~qlib.meanfield.degrees` (degree laws and their generating functions),
:mod:`~qlib.meanfield.fluid` (the fluid ODE and its equilibrium),
:mod:`~qlib.meanfield.tails` (the equilibrium's tail: bounds, log-space recursion),
:mod:`~qlib.meanfield.refined` (the refined 1/n expansion),
:mod:`~qlib.meanfield.cavity` (the cavity approximation for phase-type services).
"""
from qlib.meanfield.degrees import DegreeDistribution
from qlib.meanfield import fluid, tails
from qlib.meanfield.refined import Approximation, Refined, refined
from qlib.meanfield.cavity import CavityResult, cavity

__all__ = ["DegreeDistribution", "fluid", "tails", "refined", "Refined", "Approximation",
           "cavity", "CavityResult"]
