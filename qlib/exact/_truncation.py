"""Truncation-error estimates of a level-capped solve from the same solve at one and two levels fewer."""
from __future__ import annotations

import math
import warnings
import numpy as np

__all__ = []


def _geometric(d1, d2):
    """The factor that turns a last change ``d1`` (previous change ``d2``)
    into the error left, summing the tail of a geometric sequence of changes
    with the observed ratio ``ρ = max|d1| / max|d2|``: ``max(1, ρ/(1 − ρ))``;
    ``inf`` when the changes do not shrink."""
    a, b = np.max(np.abs(d1)), np.max(np.abs(d2))
    if a == 0:
        return 0.0
    if not b > a:
        return math.inf
    rho = a / b
    return max(1.0, rho / (1.0 - rho))


def level_estimates(result, rerun, response="mean_response_time"):
    """``{"occupancy": array, "response_time": float}``: the *estimated*
    truncation error of ``result``, a solve at ``L`` levels (its occupancy
    has ``L + 1`` entries), against the untruncated chain.

    ``rerun(L)`` solves the same model at ``L`` levels.  With ``d_L`` the
    change from ``L − 1`` to ``L`` levels and ``ρ = |d_L|/|d_{L−1}|`` (largest
    over the levels for the occupancy), the estimate is
    ``|d_L| · max(1, ρ/(1 − ρ))``: what remains if the changes keep shrinking
    geometrically at the observed ratio.  It is not a bound; ``inf`` when
    ``L < 3`` or the changes do not shrink.
    """
    L = result.occupancy.size - 1
    inf = {"occupancy": np.full(L + 1, math.inf), "response_time": math.inf}
    if L < 3:
        return inf
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r1, r2 = rerun(L - 1), rerun(L - 2)

    def pad(x):
        return np.concatenate([x, np.zeros(L + 1 - x.size)])

    q0, q1, q2 = result.occupancy, pad(r1.occupancy), pad(r2.occupancy)
    fo = _geometric(q0 - q1, q1 - q2)
    R0, R1, R2 = (getattr(r, response) for r in (result, r1, r2))
    fr = _geometric(R0 - R1, R1 - R2)
    occ = np.full(L + 1, math.inf) if math.isinf(fo) else np.abs(q0 - q1) * fo
    rt = math.inf if math.isinf(fr) else float(abs(R0 - R1) * fr)
    return {"occupancy": occ, "response_time": rt}


class _LevelEstimates:
    """``error_estimates`` (and its alias ``error_bounds``) of a
    level-capped exact result, computed on first use from the two smaller
    solves that its private ``_rerun`` field makes (``None``: every
    estimate is ``inf``)."""

    _response = "mean_response_time"

    @property
    def mean_queue_length(self) -> float:
        """Mean number of tasks per server, ``Σ_{i≥1} q(i)``; by Little's law
        ``lam (1 − blocking_probability) response_time``."""
        return float(np.sum(self.occupancy[1:]))

    @property
    def lam_total(self) -> float:
        """The total arrival rate ``n λ`` (``lam`` is per server)."""
        return self.n * self.lam

    @property
    def error_estimates(self):
        """Estimated truncation errors against the uncapped chain, a dict
        ``{"occupancy": array (one per level), "response_time": float}``:
        the change from one level fewer, scaled up by the geometric tail of
        the changes (``qlib.exact._truncation.level_estimates``).  Estimates,
        not certified bounds; ``inf`` with fewer than 3 levels or changes
        that do not shrink.  Computed on first use (two smaller solves)."""
        est = self.__dict__.get("_estimates")
        if est is None:
            L = self.occupancy.size - 1
            est = ({"occupancy": np.full(L + 1, math.inf), "response_time": math.inf}
                   if self._rerun is None else level_estimates(self, self._rerun, self._response))
            object.__setattr__(self, "_estimates", est)
        return est

    @property
    def error_bounds(self):
        """The name every exact solver's result shares: here the same dict
        as ``error_estimates`` (estimates, not certified bounds)."""
        return self.error_estimates
