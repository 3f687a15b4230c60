"""Mean-field theory of JSQ on sparse dynamic graphs.

:mod:`~qlib.meanfield.degrees` (degree laws and their generating functions),
:mod:`~qlib.meanfield.fluid` (the fluid ODE and its equilibrium),
:mod:`~qlib.meanfield.tails` (the equilibrium's tail: bounds, log-space recursion),
:mod:`~qlib.meanfield.expansion` (the refined 1/n expansion),
:mod:`~qlib.meanfield.cavity_method` (the cavity approximation for phase-type services),
:mod:`~qlib.meanfield.pair` (pair and ring-window approximations of static graphs).
"""
from qlib.meanfield.degrees import DegreeDistribution
from qlib.meanfield import fluid, tails
from qlib.meanfield.expansion import Approximation, Refined, refined
from qlib.meanfield.cavity_method import CavityResult, cavity
from qlib.meanfield.pair import PairResult, WindowResult, pair_approximation, ring_window
from qlib.meanfield.budget_search import (BudgetAudit, budget_optimum_audit, minimise_over_budget,
                                          random_budget_laws)
from qlib.meanfield.tail_audit import (GeometricAudit, RecursionAudit, crossover_violations,
                                       double_exponential_constant, geometric_tail_audit,
                                       log_recursion_audit)

__all__ = ["DegreeDistribution", "fluid", "tails", "refined", "Refined", "Approximation",
           "cavity", "CavityResult", "pair_approximation", "PairResult", "ring_window",
           "WindowResult", "BudgetAudit", "budget_optimum_audit", "minimise_over_budget",
           "random_budget_laws", "RecursionAudit", "log_recursion_audit", "GeometricAudit",
           "geometric_tail_audit", "double_exponential_constant", "crossover_violations"]
