"""Mean-field theory of JSQ on sparse dynamic graphs.

:mod:`~qlib.meanfield.degrees` (degree laws and their generating functions),
:mod:`~qlib.meanfield.fluid` (the fluid ODE, its equilibrium and tail bounds),
:mod:`~qlib.meanfield.refined` (the refined 1/n expansion),
:mod:`~qlib.meanfield.cavity` (the cavity approximation for phase-type services).
"""
from qlib.meanfield.degrees import DegreeDistribution
from qlib.meanfield import fluid
from qlib.meanfield.refined import Approximation, Refined, refined
from qlib.meanfield.cavity import CavityResult, cavity

__all__ = ["DegreeDistribution", "fluid", "refined", "Refined", "Approximation",
           "cavity", "CavityResult"]
