"""JSQ with many servers in the Halfin–Whitt regime (Eschenfeldt–Gamarnik).

The model: ``n`` servers on the complete graph, Exp(1) services, Poisson
arrivals of total rate ``λ_n = n − β√n``; every task joins a shortest queue.
The state is the occupancy vector ``Q_1 ≥ Q_2 ≥ …`` with ``Q_i`` the number of
queues holding at least ``i`` tasks (``Q_0 = n``).  An arrival increments
``Q_{s+1}`` where ``s`` (the length of a shortest queue) is the largest ``i``
with ``Q_i = n``; a departure happens at rate ``Q_1`` and comes from a queue of
length exactly ``i`` with probability ``(Q_i − Q_{i+1}) / Q_1``.  Because the
chain at occupancy level is itself Markov, simulating it is exact.

Simulation of the chain:

* ``simulate_jsq``: exact simulation of the occupancy chain (uniformized where that pays, else event by event);

its diffusion limit, the two-dimensional reflected OU process of
``X_1 = (Q_1 − n)/√n`` and ``X_2 = Q_2/√n``:

* ``reflected_ou``: one path (bridge scheme, optional forcing term);
* ``reflected_ou_crn``: the same scheme at ``Δt, 2Δt, 4Δt`` on one Brownian
  path (common random numbers, for Richardson extrapolation in ``Δt``);
* ``ou_halving``: independent runs at ``Δt, Δt/2, …`` (a step-bias check);

exact laws of the finite-``n`` chain:

* ``stationary_jsq``: the stationary law, structured level reduction with a
  certified bound on the truncated idle servers;
* ``transient_jsq``: transient means of the chain truncated to three levels,
  by uniformization;

and the alternatives at the same load (chapter ``ht_alternatives``):

* ``erlang_c``, ``halfin_whitt_alpha``: the pooled M/M/n queue and its
  Halfin–Whitt limit;
* ``simulate_jsq_d``: JSQ(d), ``d`` servers sampled without replacement;
* ``jsq_d_fixed_point``: the mean-field fixed point of JSQ(d) at load
  ``λ_n/n``.

Modules: :mod:`~qlib.halfin_whitt.simulate`, :mod:`~qlib.halfin_whitt.tasks`,
:mod:`~qlib.halfin_whitt.diffusion`, :mod:`~qlib.halfin_whitt.stationary`
(the diffusion's stationary law on a grid), :mod:`~qlib.halfin_whitt.chain`,
:mod:`~qlib.halfin_whitt.transient`, :mod:`~qlib.halfin_whitt.classical`,
:mod:`~qlib.halfin_whitt.jsq_d`.
"""
from qlib.halfin_whitt.simulate import JSQResult, simulate_jsq
from qlib.halfin_whitt.tasks import TasksResult, simulate_tasks, thinned_waits
from qlib.halfin_whitt.diffusion import OUCRN, OUResult, ou_halving, reflected_ou, reflected_ou_crn
from qlib.halfin_whitt.stationary import (CONSTANTS, CRNEstimate, Extrapolation, OUGrid,
                                          OUStationary, chain_constants, crn_extrapolate,
                                          crn_functionals, default_box, extrapolate_inv_sqrt,
                                          ou_stationary, ou_stationary_grid)
from qlib.halfin_whitt.chain import SOLVER_VERSION, StationaryJSQ, stationary_jsq
from qlib.halfin_whitt.transient import TransientJSQ, transient_jsq
from qlib.halfin_whitt.classical import erlang_c, halfin_whitt_alpha, jsq_d_fixed_point
from qlib.halfin_whitt.jsq_d import JSQdResult, simulate_jsq_d

__all__ = ["simulate_jsq", "JSQResult", "simulate_tasks", "TasksResult", "thinned_waits",
           "reflected_ou", "OUResult", "reflected_ou_crn", "OUCRN", "ou_halving",
           "ou_stationary", "OUStationary", "ou_stationary_grid", "OUGrid", "default_box",
           "chain_constants", "CONSTANTS", "extrapolate_inv_sqrt", "Extrapolation",
           "crn_functionals", "crn_extrapolate", "CRNEstimate",
           "stationary_jsq", "StationaryJSQ", "SOLVER_VERSION", "transient_jsq", "TransientJSQ",
           "erlang_c", "halfin_whitt_alpha", "jsq_d_fixed_point", "simulate_jsq_d", "JSQdResult"]
