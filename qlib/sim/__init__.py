"""Simulation of JSQ on sparse (resampled) graphs: exact event-driven kernels and a uniformized fast path.

Modules, from the bottom up: :mod:`~qlib.sim.rng` (random streams),
:mod:`~qlib.sim.service` (service-time laws), :mod:`~qlib.sim.kernel` (the
exponential-service kernel), :mod:`~qlib.sim.result` (what a run returns),
:mod:`~qlib.sim.start` (argument checks and start states),
:mod:`~qlib.sim.general` (the general-service kernel), :mod:`~qlib.sim.run`
(:func:`~qlib.sim.run.simulate`), :mod:`~qlib.sim.replications` (:func:`~qlib.sim.replications.replicate`)
and :mod:`~qlib.sim.dense` (:func:`~qlib.sim.dense.simulate_dense`: dense random circulant graphs,
idle-server tracking); :mod:`~qlib.sim.uniformized` is the fast path that ``simulate`` runs
where it is exact in law (``kernel="auto"``).
"""
from qlib.sim.result import ReplicationResult, SimulationResult
from qlib.sim.general import GeneralSimulationResult, simulate_general
from qlib.sim.run import simulate
from qlib.sim.replications import replicate
from qlib.sim import service
from qlib.sim.fresh_graph import fresh_graph_run
from qlib.sim.two_starts import replicate_two_starts
from qlib.sim.uniformized import simulate_uniformized
from qlib.sim.dense import simulate_dense

__all__ = ["simulate", "SimulationResult", "replicate", "ReplicationResult",
           "simulate_general", "GeneralSimulationResult", "service", "fresh_graph_run",
           "replicate_two_starts", "simulate_uniformized", "simulate_dense"]
