"""Exact stationary laws where the chain is small enough to solve.

:mod:`~qlib.exact.tiny` (server-level chains of tiny graphs, any μ),
:mod:`~qlib.exact.occupancy` (the occupancy chain at μ = ∞, with a level cap
or by adaptive projection), :mod:`~qlib.exact.phase` (tiny graphs with
phase-type services), :mod:`~qlib.exact.transient` (the M/M/1
transient law by uniformization).
"""
from qlib.exact.tiny import MAX_N, MAX_STATES, ExactResult, stationary
from qlib.exact.occupancy import (MAX_CHAIN_STATES, AdaptiveChainResult, OccupancyChainResult,
                                  occupancy_chain, occupancy_chain_adaptive)
from qlib.exact.phase import PhaseResult, stationary_phase
from qlib.exact.transient import MM1Transient, mm1_transient

__all__ = ["stationary", "ExactResult", "MAX_N", "MAX_STATES", "occupancy_chain",
           "OccupancyChainResult", "occupancy_chain_adaptive", "AdaptiveChainResult",
           "MAX_CHAIN_STATES", "stationary_phase", "PhaseResult", "mm1_transient", "MM1Transient"]
