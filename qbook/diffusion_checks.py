"""The two simulation checks of ``chapters/ht_diffusion.md``.

* :func:`noise_increments`: the martingale ``Z`` of the scaled number of tasks
  on a simulated chain path, its increments over unit intervals (variance
  ``2 λ_n / n``, mean 0, uncorrelated) and the busy fraction ``E[Q_1]/n``;
* :func:`identity_richardson`: the stationary identities of the reflected
  Ornstein–Uhlenbeck limit on the simulated diffusion, Richardson-extrapolated
  in the step, with batch-means standard errors.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import numpy as np

__all__ = ["noise_increments", "noise_family", "identity_richardson", "IDENTITIES", "generator_gap_table"]


def _beta(beta):
    if not isinstance(beta, numbers.Real) or not beta > 0:
        raise ValueError(f"beta must be > 0, got {beta!r}")


def noise_increments(n: int, beta: float, *, t_end: float, dt: float = 0.01, burn_in: float = 20.0,
                     seed: int | None = None) -> dict:
    """Increments of the martingale of ``X_1 + X_2`` on a path of the chain.

    The chain (:func:`~qlib.halfin_whitt.simulate.simulate_jsq`) starts at
    ``Q_1 = n − β√n``, records its path every ``dt`` and, after ``burn_in``,
    :func:`~qlib.halfin_whitt.generator.martingale_increments` integrates
    ``Z`` over unit intervals (it raises if a queue of length three forms).

    Parameters
    ----------
    n : int
        Number of servers, at least 2.
    beta : float
        Halfin–Whitt parameter, in ``(0, √n)``.
    t_end : float
        Length of the window after the burn-in, at least 2.
    dt : float
        Recording step, in ``(0, 1]``.
    burn_in : float
        Time dropped at the start, non-negative.
    seed : int, optional

    Returns
    -------
    dict
        ``var``, ``mean``, ``rho`` (lag-one correlation) and ``m`` (number) of
        the increments; ``target = 2 λ_n / n``; ``busy = (mean, se, df, λ_n/n)``
        of ``Q_1/n`` by batch means.

    Examples
    --------
    >>> r = noise_increments(100, 1.0, t_end=1000.0, seed=1)
    >>> r["m"], round(r["target"], 2)
    (1000, 1.8)
    """
    from qlib.stats import batch_means

    from qlib.halfin_whitt import simulate_jsq
    from qlib.halfin_whitt.generator import martingale_increments

    if not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 2:
        raise ValueError(f"n must be an int >= 2, got {n!r}")
    _beta(beta)
    if not beta < math.sqrt(n):
        raise ValueError(f"beta must be below sqrt(n) = {math.sqrt(n):.3g}, got {beta!r}")
    if not isinstance(t_end, numbers.Real) or not t_end >= 2:
        raise ValueError(f"t_end must be >= 2, got {t_end!r}")
    if not isinstance(dt, numbers.Real) or not 0 < dt <= 1:
        raise ValueError(f"dt must be in (0, 1], got {dt!r}")
    if not isinstance(burn_in, numbers.Real) or not burn_in >= 0:
        raise ValueError(f"burn_in must be >= 0, got {burn_in!r}")
    r = simulate_jsq(n, beta, t_end=t_end + burn_in, seed=seed, record_dt=dt, batches=20,
                     initial=[n - round(beta * math.sqrt(n))])
    inc = martingale_increments(r, beta, burn_in=burn_in, dt=dt)
    bm = batch_means(r.x1[round(burn_in / dt):], dt)          # X_1 on the grid, after burn-in
    s = math.sqrt(n)
    return {"var": float(inc.var(ddof=1)), "mean": float(inc.mean()),
            "rho": float(np.corrcoef(inc[1:], inc[:-1])[0, 1]), "m": int(inc.size),
            "target": 2 * (n - beta * s) / n,
            "busy": (1 + bm.mean / s, bm.se / s, bm.df, 1 - beta / s)}


#: The functionals whose stationary means vanish by the identities of the limit,
#: as coefficient maps over the monomials ``1, x1, x2, x1x1, x1x2`` (β filled in).
IDENTITIES = {
    "E[X1] + β": lambda b: {"x1": 1, "1": b},
    "E[X1 X2] + β E[X2]/2": lambda b: {"x1x2": 1, "x2": b / 2},
    "Var X1 − 1 + β E[X2]/2": lambda b: {"x1x1": 1, "x1": 2 * b, "1": b**2 - 1, "x2": b / 2},
}


def identity_richardson(beta: float, *, t_end: float, dt: float, burn_in: float = 20.0,
                        block: float = 0.5, seed: int | None = None) -> np.ndarray:
    """The identities of the limit on the diffusion simulated at three steps.

    :func:`~qlib.halfin_whitt.diffusion.reflected_ou_crn` runs the bridge scheme at
    ``dt``, ``2 dt``, ``4 dt`` on one Brownian path. For each functional of
    :data:`IDENTITIES`, with means ``m0, m1, m2`` at the three steps, the
    Richardson value ``2 m0 − m1``, its remaining-bias estimate
    ``(m1 − m2 − 2 (m0 − m1))/3`` and the step effect ``m0 − m1`` get
    batch-means standard errors over blocks of length ``block``.

    Parameters
    ----------
    beta : float
        Halfin–Whitt parameter, positive.
    t_end : float
        Window after the burn-in, positive.
    dt : float
        Finest step, positive.
    burn_in : float
        Time dropped at the start, non-negative.
    block : float
        Block length of the recorded averages, positive.
    seed : int, optional

    Returns
    -------
    numpy.ndarray
        Shape ``(3, 10)``, one row per identity: the three estimates, their
        three standard errors, the batches' degrees of freedom and the three
        lag-one correlations of the batch means.

    Examples
    --------
    >>> a = identity_richardson(1.0, t_end=200.0, dt=0.02, seed=1)
    >>> a.shape
    (3, 10)
    """
    from qlib.stats import batch_means

    from qlib.halfin_whitt import reflected_ou_crn

    _beta(beta)
    for name, v in (("t_end", t_end), ("dt", dt), ("block", block)):
        if not isinstance(v, numbers.Real) or not v > 0:
            raise ValueError(f"{name} must be > 0, got {v!r}")
    if not isinstance(burn_in, numbers.Real) or not burn_in >= 0:
        raise ValueError(f"burn_in must be >= 0, got {burn_in!r}")
    r = reflected_ou_crn(beta, (-beta, 0.0), t_end=t_end + burn_in, dt=dt, depth=3,
                         burn_in=burn_in, block=block, seed=seed)
    rows = []
    for coef in IDENTITIES.values():
        m0, m1, m2 = (r.series(coef(beta), lv) for lv in range(3))
        bm = batch_means(np.column_stack([2 * m0 - m1, (m1 - m2 - 2 * (m0 - m1)) / 3, m0 - m1]),
                         r.block, check=False)
        rows.append([*bm.mean, *bm.se, bm.df, *bm.lag1])
    return np.array(rows, dtype=float)


def generator_gap_table(ns: Sequence[int], betas: Sequence[float]) -> np.ndarray:
    """Worst ratios of the generator gap to its bounds, per ``(β, n)``.

    For each ``(β, n)``, :func:`~qlib.halfin_whitt.generator.generator_gap`
    evaluates ``L_n f − L f`` for ``f = sin(x_1) e^{−x_2/2}`` on the lattice
    states of the box ``−3 ≤ x_1 < 0 ≤ x_2 ≤ 3`` with the bounds ``hB``,
    ``h G_1``, ``h² C`` and a rounding allowance.

    Parameters
    ----------
    ns : sequence of int
        Numbers of servers, each at least 2.
    betas : sequence of float
        Positive Halfin–Whitt parameters.

    Returns
    -------
    numpy.ndarray
        One row per ``(β, n)``: ``β``, ``n``, ``max|gap|``, ``max |gap|/hB``,
        ``max |gap − hG_1|/h²C``, ``max|gap| / max|hG_1|``, and the two bound
        ratios with the rounding allowance added to the bound.

    Examples
    --------
    >>> t = generator_gap_table([100], [1.0])
    >>> t.shape, bool(t[0, 6] <= 1)
    ((1, 8), True)
    """
    from qlib.halfin_whitt.generator import generator_gap

    ns, betas = list(ns), list(betas)
    if not ns or not betas:
        raise ValueError("ns and betas must not be empty")
    for n in ns:
        if not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 2:
            raise ValueError(f"ns must hold ints >= 2, got {n!r}")
    for b in betas:
        _beta(b)
    rows = []
    for b in betas:
        for n in ns:
            gap, hB, hG1, h2C, rnd = generator_gap(int(n), b)
            a = np.abs(gap)
            rows.append((b, n, a.max(), (a / hB).max(), (np.abs(gap - hG1) / h2C).max(),
                         a.max() / np.abs(hG1).max(), (a / (hB + rnd)).max(),
                         (np.abs(gap - hG1) / (h2C + rnd)).max()))
    return np.array(rows, dtype=float)


def noise_family(qv: Sequence[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three checks of each :func:`noise_increments` result as one family.

    Per run: the increments' variance against ``2λ_n/n`` (s.e. ``target √(2/(m − 1))``),
    their mean against 0 (s.e. ``√(target/m)``) and their lag-1 correlation against 0
    (s.e. ``1/√(m − 1)``).

    Parameters
    ----------
    qv : sequence of dict
        Results of :func:`noise_increments`.

    Returns
    -------
    estimate, se, target : numpy.ndarray
        Three entries per run, for :func:`qlib.stats.simultaneous`.
    """
    rows = np.array([row for r in qv for row in (
        (r["var"], r["target"] * np.sqrt(2 / (r["m"] - 1)), r["target"]),
        (r["mean"], np.sqrt(r["target"] / r["m"]), 0.0),
        (r["rho"], 1 / np.sqrt(r["m"] - 1), 0.0))])
    return rows[:, 0], rows[:, 1], rows[:, 2]
