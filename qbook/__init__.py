"""qbook: the book's own support code, beside the library it explains.

``qlib`` is what someone outside this book would call: graphs, simulators,
mean-field and exact solvers, statistics, sweeps. This package holds what
serves the book alone: one chapter's runs, tables and figures, the loaders of
the results stored in ``benchmarks/``, the audits of a chapter's runs, and
recorded runs. It lives in the repository only (the ``qlib`` wheel does not
ship it) and may read the repository's files; ``qlib`` never does.

One module per chapter or per stored result:

* :mod:`qbook.audit`: a replicated cell with the audit of its burn-in
  (``simulator_check``);
* :mod:`qbook.recorded`: recorded runs, replayed from ``benchmarks/``
  (``bounded_resampling``);
* :mod:`qbook.refined_check`: exact chains and simulations against the
  refined 1/n coefficient (``finite_n``);
* :mod:`qbook.rounding`: the equilibrium recursion in floating point against
  50 digits (``equilibrium``);
* :mod:`qbook.static_runs`, :mod:`qbook.stored_closures`,
  :mod:`qbook.closure_checks`: simulated and stored static-graph closures
  (``static_graphs``);
* :mod:`qbook.one_or_all`: the stored runs of one neighbour or all
  (``one_or_all``);
* :mod:`qbook.ht_constants`: the stored Halfin–Whitt chain and grid
  (``ht_stationary`` and the chapters that quote its constants);
* :mod:`qbook.ht_paths`, :mod:`qbook.diffusion_checks`,
  :mod:`qbook.wait_runs`, :mod:`qbook.ht_alternatives`,
  :mod:`qbook.ht_compare`: the mechanics of ``ht_paths``, ``ht_diffusion``,
  ``ht_waiting`` and ``ht_alternatives``;
* :mod:`qbook.bounded_resampling`, :mod:`qbook.experiments`,
  :mod:`qbook.general_service`, :mod:`qbook.tails`: the burn-in and
  leftover-bias audits of those chapters;
* :mod:`qbook.how_we_check`: the margins table, the coverage study of
  ``se_reliable`` and the monotone-coupling check (``how_we_check``);
* :mod:`qbook.equilibrium`, :mod:`qbook.fluid_limit`, :mod:`qbook.fluid_heavy_traffic`,
  :mod:`qbook.solver_check`, :mod:`qbook.simulator_check`: the tables, figures and checks of those chapters.
"""
