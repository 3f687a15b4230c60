"""Honest error bars: the statistics every chapter's checks use.

One home for the conventions of the book:

* **Independent replications** give a Student-t interval with ``r − 1``
  degrees of freedom (:func:`~qlib.stats.intervals.replication_ci`). A normal quantile over a
  handful of replications is wrong: ``t_3`` at 99.9 % is 12.9, not 3.3.
* **Time averages of one path** get their standard error from batch means
  whose batch length is many times the path's *measured* integrated
  autocorrelation time (:func:`~qlib.stats.batch.iat`, :func:`~qlib.stats.batch.batch_means`). The lag-1
  correlation of the batch means is returned and tested at a family-wise
  1 % over the series (a warning, never an exception: a correctly sized run
  fails it by chance). Simulators group their slices by one shared rule
  (:func:`~qlib.stats.batch.slice_batches`).
* **Families of checks** are tested together at a family-wise level
  (Bonferroni or Holm) with t quantiles (:func:`~qlib.stats.families.simultaneous`).
* Every check reports the **smallest deviation it could detect** with 80 %
  power (:func:`~qlib.stats.families.detectable`) and its critical value (:func:`~qlib.stats.families.critical_value`),
  so a reader can see that it could have failed; :func:`~qlib.stats.families.replications_needed`
  sizes a family from a pilot.
* **Agreement is shown, not presumed**: an equivalence test (TOST,
  :func:`~qlib.stats.tost.equivalence`) declares ``|θ| < margin`` only when the data show it.
* Burn-in is **tested, not guessed** (:func:`~qlib.stats.burn_in.burn_in_check`, with a
  ``margin`` as an equivalence test; :func:`~qlib.stats.burn_in.burn_in_family` for
  every cell of a study). The halves become a bias bound
  (:func:`~qlib.stats.burn_in.leftover_bias`) only with ``τ`` an *upper*
  bound of the transient's slowest time constant
  (:func:`~qlib.stats.burn_in.tau_upper`), and the bound is itself a check
  that can fail (:func:`~qlib.stats.burn_in.bias_check`).
* Rates are fitted on log-log axes with weights and a standard error
  (:func:`~qlib.stats.fits.loglog_slope`).

Conventions
-----------
The integrated autocorrelation time follows Sokal: for a stationary process
with autocorrelation ``ρ(t)``, ``τ_int = ∫_0^∞ ρ(t) dt`` (in discrete time
with step ``dt``: ``dt·(1/2 + Σ_{k≥1} ρ_k)``), so that the variance of a time
average over a window of length ``T ≫ τ_int`` is ``2 τ_int σ² / T``. For the
queue length of an M/M/1 queue at load ``ρ`` it is ``(1 + ρ)/(1 − ρ)²``
(190 at ``ρ = 0.9``); for an AR(1) process with coefficient ``φ`` sampled at
unit steps it is ``(1 + φ) / (2 (1 − φ))``.

Modules: :mod:`qlib.stats.intervals` (Student-t intervals),
:mod:`qlib.stats.families` (Holm/Bonferroni families, detectable deviations,
critical values, replications needed), :mod:`qlib.stats.tost`
(equivalence tests), :mod:`qlib.stats.fits` (log-log fits),
:mod:`qlib.stats.batch` (correlation lengths and batch means),
:mod:`qlib.stats.burn_in` (burn-in tests), :mod:`qlib.stats.verdict`
(one-line verdicts and a chapter's checks table).
"""
from qlib.stats.intervals import (Interval, IntervalArray, ReplicationCI,  # noqa: F401
                                  replication_ci, t_quantile)
from qlib.stats.families import (Family, critical_value, detectable,  # noqa: F401
                                 replications_needed, sigma_upper, simultaneous)
from qlib.stats.tost import Equivalence, equivalence, replications_for_equivalence  # noqa: F401
from qlib.stats.fits import LogLogFit, loglog_slope  # noqa: F401
from qlib.stats.batch import (BatchMeans, SliceBatches, batch_means, iat, lag1_threshold,  # noqa: F401
                              slice_batches, _lag1)
from qlib.stats.burn_in import (BurnIn, BurnInFamily, burn_in_check, burn_in_family,  # noqa: F401
                                TauUpper, bias_check, leftover_bias, mm1_relaxation_time,
                                tau_upper)
from qlib.stats.verdict import Check, Checks, level_one_check  # noqa: F401

__all__ = ["replication_ci", "ReplicationCI", "Interval", "IntervalArray", "iat", "batch_means", "BatchMeans",
           "simultaneous", "Family", "detectable", "loglog_slope", "LogLogFit",
           "burn_in_check", "BurnIn", "burn_in_family", "BurnInFamily", "t_quantile",
           "lag1_threshold", "critical_value",
           "replications_needed", "equivalence", "Equivalence", "slice_batches", "SliceBatches",
           "Check", "Checks", "level_one_check", "leftover_bias", "sigma_upper",
           "replications_for_equivalence", "tau_upper", "TauUpper", "mm1_relaxation_time",
           "bias_check"]
