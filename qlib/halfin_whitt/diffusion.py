"""The reflected Ornstein–Uhlenbeck diffusion limit: one path, common-random-number paths, step halving."""
from __future__ import annotations

import math
import numbers
import numba
import numpy as np
from dataclasses import dataclass

from qlib.halfin_whitt._common import _check_beta, _check_pos, _check_times, _check_x0, _seed32, _seed_record
from typing import TYPE_CHECKING
from qlib.stats._results import fields_eq
if TYPE_CHECKING:   # names for the annotations only
    from collections.abc import Callable
    from collections.abc import Sequence
    from qlib._types import Seed

__all__ = ['reflected_ou', 'OUResult', 'reflected_ou_crn', 'OUCRN', 'ou_halving']


# ---------------------------------------------------------------- diffusion

@numba.njit(cache=True)
def _ou_kernel(seed, beta, x1, x2, nsteps, dt, burn_steps, every, nrec, bridge,
               nslice, force):
    # acc[j] sums X_1, X_2 over slice j of the window: the steps k with
    # (k − burn_steps)·nslice // m == j (m steps; slice sizes differ by <= 1)
    np.random.seed(seed)
    path = np.zeros((nrec, 3))
    sig = math.sqrt(2.0 * dt)
    u = 0.0
    acc = np.zeros((nslice, 2))
    cnt = np.zeros(nslice)
    m = nsteps - burn_steps
    irec = 0
    for k in range(nsteps + 1):
        if irec < nrec and k % every == 0:
            path[irec, 0] = x1
            path[irec, 1] = x2
            path[irec, 2] = u
            irec += 1
        if k == nsteps:
            break
        if k >= burn_steps:
            b = ((k - burn_steps) * nslice) // m
            acc[b, 0] += x1
            acc[b, 1] += x2
            cnt[b] += 1.0
        drift = -beta - (x1 - x2)
        w = drift * dt + sig * np.random.standard_normal()
        if bridge:
            # exact maximum of the frozen-coefficient Brownian step given its
            # endpoint w (Brownian-bridge maximum, variance 2 dt)
            v = np.random.random()
            mx = 0.5 * (w + math.sqrt(w * w - 4.0 * dt * math.log(1.0 - v)))
            du = x1 + mx
            if du < 0.0:
                du = 0.0
        else:
            du = x1 + w
            if du < 0.0:
                du = 0.0
        x3 = force[k] if force.size > 0 else 0.0  # forcing X_3 at the step's midpoint
        x2 = x2 + du - (x2 - x3) * dt
        x1 = x1 + w - du
        u += du
    return path, acc, cnt


def _ou_forcing(forcing, nsteps, dt):
    """The forcing ``X_3`` at the step midpoints (empty array: none)."""
    if forcing is None:
        return np.zeros(0)
    mid = (np.arange(nsteps) + 0.5) * dt
    if callable(forcing):
        f = np.asarray(forcing(mid), dtype=float)
        if f.shape != mid.shape or not np.all(np.isfinite(f)) or np.any(f < 0):
            raise ValueError("forcing(t) must return finite values >= 0 of the shape of t")
        return f
    if isinstance(forcing, bool) or not isinstance(forcing, numbers.Real):
        raise TypeError(f"forcing must be None, a number >= 0 or a callable, got {forcing!r}")
    if not (np.isfinite(forcing) and forcing >= 0):
        raise ValueError(f"forcing must be finite and >= 0, got {forcing}")
    return float(forcing) * np.exp(-mid) if forcing > 0 else np.zeros(0)


@fields_eq
@dataclass(frozen=True)
class OUResult:
    """Result of :func:`~qlib.halfin_whitt.diffusion.reflected_ou`.

    ``times, x1, x2, u``: the path on the grid (``u`` = the pushing process
    ``U``).  ``mean_x1, mean_x2``: step averages over ``[burn_in, t_end]``;
    ``*_se``: their batch-means standard errors.

    Batch diagnostics, as in :class:`~qlib.halfin_whitt.simulate.JSQResult`:
    ``batches`` (the number ``k`` of batches behind the standard errors),
    ``batch_length`` (time units), ``corr_length`` (the correlation length
    ``L`` measured on the run; ``nan`` with a fixed ``batches``),
    ``batch_lag1`` (the larger lag-1 correlation of the batch means of
    ``X_1`` and ``X_2``) and ``se_reliable`` (the window holds 10 batches
    of ``max(20 L, 80 τ)``, :func:`~qlib.stats.batch.reliable_window`; the
    lag-1 test is reported, not part of the flag; always True with a fixed
    ``batches``, which is not checked).
    """

    beta: float
    dt: float
    t_end: float
    burn_in: float
    scheme: str
    times: np.ndarray | None
    x1: np.ndarray | None
    x2: np.ndarray | None
    u: np.ndarray | None
    mean_x1: float
    mean_x1_se: float
    mean_x2: float
    mean_x2_se: float
    seed: object
    batches: int = 0
    batch_length: float = float("nan")
    corr_length: float = float("nan")
    batch_lag1: float = float("nan")
    se_reliable: bool = True


def reflected_ou(beta: float, x0: Sequence[float], *, t_end: float, dt: float, seed: Seed = None,
                 burn_in: float = 0.0, record_dt: float | None = None,
                 scheme: str = "bridge", batches: int | None = None,
                 forcing: float | Callable[..., float] | None = None) -> OUResult:
    """Simulate the reflected OU limit of JSQ in the Halfin–Whitt regime.

    ``dX_1 = √2 dB − β dt − (X_1 − X_2) dt − dU``, ``X_1 ≤ 0``,
    ``dX_2 = dU − (X_2 − X_3) dt``, ``U`` nondecreasing, growing only at
    ``X_1 = 0``; ``X_3 ≡ 0`` unless ``forcing`` is given.

    Parameters
    ----------
    beta : float
        ``beta > 0``.
    x0 : pair of float
        ``(X_1(0), X_2(0))`` with ``X_1(0) <= 0 <= X_2(0)``.
    t_end, dt : float
        Horizon and step, ``0 < dt <= t_end``.
    seed : None, int, numpy.random.SeedSequence or numpy.random.Generator
    burn_in : float
        Averages are over the steps in ``[burn_in, t_end)``.
    record_dt : float, optional
        Grid of the recorded path, rounded to a multiple of ``dt``;
        ``None``: every step (at most ``2·10^6`` points); ``0``: no path.
    scheme : {"bridge", "projected"}
        ``"projected"``: Euler step, then projection onto ``X_1 <= 0``
        (the discrete Skorokhod map); ``"bridge"``: the same, but the push
        ``dU`` is the exact one of the step's frozen-drift Brownian motion,
        through the law of its maximum given its endpoint.
    batches : int, optional
        Default ``None``: the automatic rule of
        :func:`qlib.stats.slice_batches <qlib.stats.batch.slice_batches>`
        (the one :func:`~qlib.halfin_whitt.simulate.simulate_jsq` uses): the
        window is cut into ``min(4000, steps)`` slices, the correlation
        length ``L`` is measured on the slice averages of ``X_1`` and
        ``X_2``, and 10 to 20 batches of at least ``max(20 L, 80 τ)`` carry the
        standard errors (the oldest rest of slices left out of the batches,
        not of the means).  When the run is too short for that,
        ``se_reliable`` is False, and with ``record_dt=0`` (a run made for
        its averages) a ``RuntimeWarning`` says so; a run that records its
        path is not warned about errors it was not asked for.  An int
        ``>= 2`` forces that many (nearly) equal batches, unchecked.
    forcing : None, float or callable, optional
        The deterministic forcing ``X_3(t)`` of ``X_2``: the scaled number of
        queues of length three, which in the limit of Eschenfeldt and
        Gamarnik drains as ``X_3(0) e^{−t}``.  A number ``x3`` means
        ``X_3(t) = x3 · e^{−t}``; a callable ``f`` is called once with the
        array of the steps' midpoints ``(k + ½) dt`` and must return finite
        values ``X_3 >= 0`` of the same shape.  The scheme uses ``X_3`` at
        each step's midpoint.  ``None`` (or ``0``): no forcing, the
        two-dimensional limit.

    Returns
    -------
    OUResult

    Notes
    -----
    Both schemes keep ``X_1 + X_2`` free of the push: summing the two
    updates, ``d(X_1 + X_2) = −(β + X_1) dt + √2 dB`` exactly, so in
    stationarity ``E[X_1] = −β`` holds for the scheme as for the diffusion
    (no discretisation error in this functional).
    """
    beta = _check_beta(beta)
    x1, x2 = _check_x0(x0)
    t_end, burn_in = _check_times(t_end, burn_in)
    dt = _check_pos("dt", dt)
    if dt > t_end:
        raise ValueError(f"dt must be <= t_end = {t_end}, got {dt}")
    if scheme not in ("bridge", "projected"):
        raise ValueError(f"scheme must be 'bridge' or 'projected', got {scheme!r}")
    nsteps = int(round(t_end / dt))
    burn_steps = int(round(burn_in / dt))
    if batches is not None and (isinstance(batches, bool) or not isinstance(batches, numbers.Integral)):
        raise TypeError(f"batches must be None or an integer >= 2, got {batches!r}")
    lo = 4 if batches is None else batches
    if (batches is not None and batches < 2) or nsteps - burn_steps < lo:
        raise ValueError(f"batches must be None or an integer in [2, steps after burn-in], and "
                         f"the window must hold at least {lo} steps; got batches={batches!r} "
                         f"with {nsteps - burn_steps} steps")
    if record_dt is None:
        every = 1
        nrec = nsteps + 1
        if nrec > 2_000_001:
            raise ValueError("record_dt=None records every step: too many; give record_dt")
    elif record_dt == 0:
        every, nrec = 1, 0
    else:
        record_dt = _check_pos("record_dt", record_dt)
        every = max(1, int(round(record_dt / dt)))
        nrec = nsteps // every + 1
    force = _ou_forcing(forcing, nsteps, dt)
    seed32, entropy, _ = _seed32(seed)
    m = nsteps - burn_steps
    nslice = min(_OU_FINE, m) if batches is None else int(batches)
    path, acc, cnt = _ou_kernel(seed32, beta, x1, x2, nsteps, dt, burn_steps, every,
                                nrec, scheme == "bridge", nslice, force)
    bf = _ou_batch_fields(acc, cnt, m * dt, batches, warn=(nrec == 0))
    return OUResult(
        beta=beta, dt=dt, t_end=nsteps * dt, burn_in=burn_steps * dt, scheme=scheme,
        times=np.arange(nrec) * every * dt if nrec else None,
        x1=path[:, 0].copy() if nrec else None, x2=path[:, 1].copy() if nrec else None,
        u=path[:, 2].copy() if nrec else None,
        seed=_seed_record(seed, entropy), **bf)


_OU_FINE = 4000   # slices of reflected_ou's window (batch means group them)


def _ou_batch_fields(acc, cnt, window, batches, warn):
    """Means, batch-means standard errors and batch diagnostics of
    :func:`~qlib.halfin_whitt.diffusion.reflected_ou` from the kernel's per-slice sums ``acc``
    (shape ``(nslice, 2)``) over ``cnt`` steps each."""
    from qlib import stats
    x = acc / cnt[:, None]                          # per-slice averages
    sb = stats.slice_batches(x, window, batches=batches, warn=warn, stacklevel=3,
                             instead="run several seeds and combine them (qlib.stats.replication_ci)")
    xb = sb.sums(acc) / sb.sums(cnt)[:, None]       # batch means (slices differ by <= 1 step)
    se = xb.std(axis=0, ddof=1) / math.sqrt(sb.n_batches)
    mean = acc.sum(axis=0) / cnt.sum()
    return dict(mean_x1=float(mean[0]), mean_x1_se=float(se[0]), mean_x2=float(mean[1]),
                mean_x2_se=float(se[1]), batches=int(sb.n_batches),
                batch_length=float(sb.batch_length), corr_length=float(sb.corr_length),
                batch_lag1=float(sb.lag1), se_reliable=bool(sb.reliable))


@numba.njit(cache=True)
def _ou_crn_kernel(seed, beta, x1_0, x2_0, nfine, dt, levels, burn_fine, block_fine,
                   nblocks):
    # Level l steps by dt·2^l; all levels see the same Brownian increments and
    # the same bridge uniforms of the finest grid (common random numbers).
    np.random.seed(seed)
    x1 = np.full(levels, x1_0)
    x2 = np.full(levels, x2_0)
    c = np.zeros(levels)    # frozen drift of the level's current step
    W = np.zeros(levels)    # frozen-drift Brownian increment so far in the step
    mx = np.zeros(levels)   # its running maximum over the step
    acc = np.zeros((nblocks, levels, 5))
    cnt = np.zeros((nblocks, levels))
    sig = math.sqrt(2.0 * dt)
    for k in range(nfine):
        for lv in range(levels):
            if k % (1 << lv) == 0:          # a step of level lv starts
                c[lv] = -beta - (x1[lv] - x2[lv])
                W[lv] = 0.0
                mx[lv] = 0.0
                if k >= burn_fine:
                    b = (k - burn_fine) // block_fine
                    if b < nblocks:
                        a, y = x1[lv], x2[lv]
                        acc[b, lv, 0] += a
                        acc[b, lv, 1] += y
                        acc[b, lv, 2] += a * a
                        acc[b, lv, 3] += a * y
                        acc[b, lv, 4] += y * y
                        cnt[b, lv] += 1.0
        g = sig * np.random.standard_normal()
        e = -4.0 * dt * math.log(1.0 - np.random.random())
        for lv in range(levels):
            w = c[lv] * dt + g
            # the maximum of a fine sub-step given its endpoint (bridge); the
            # level's maximum is the largest over its sub-steps
            m = W[lv] + 0.5 * (w + math.sqrt(w * w + e))
            if m > mx[lv]:
                mx[lv] = m
            W[lv] += w
            if (k + 1) % (1 << lv) == 0:    # the step of level lv ends
                big = dt * (1 << lv)
                du = x1[lv] + mx[lv]
                if du < 0.0:
                    du = 0.0
                x2[lv] = x2[lv] + du - x2[lv] * big
                x1[lv] = x1[lv] + W[lv] - du
    for b in range(nblocks):
        for lv in range(levels):
            for j in range(5):
                acc[b, lv, j] /= cnt[b, lv]
    return acc


@fields_eq
@dataclass(frozen=True)
class OUCRN:
    """Result of :func:`~qlib.halfin_whitt.diffusion.reflected_ou_crn`.

    ``dt[l] = dt · 2^l`` is the step of level ``l``; ``moments[b, l, j]`` is
    the average over the steps of level ``l`` in block ``b`` of the ``j``-th of
    ``names = ("x1", "x2", "x1x1", "x1x2", "x2x2")``.  The blocks have length
    ``block`` and follow each other after ``burn_in``; a linear combination
    of the moments, per block, is a series for :func:`qlib.stats.batch_means <qlib.stats.batch.batch_means>`
    (with ``dt = block``).
    """

    beta: float
    dt: np.ndarray
    block: float
    burn_in: float
    t_end: float
    names: tuple
    moments: np.ndarray
    seed: object

    def series(self, coef, level):
        """Block series of ``Σ_j coef[name_j] · moment_j`` at ``level`` (a dict
        name -> coefficient; the key ``"1"`` adds a constant)."""
        out = np.full(self.moments.shape[0], float(coef.get("1", 0.0)))
        for j, name in enumerate(self.names):
            out = out + float(coef.get(name, 0.0)) * self.moments[:, level, j]
        return out


def reflected_ou_crn(beta: float, x0: Sequence[float], *, t_end: float, dt: float, depth: int = 3,
                     burn_in: float = 0.0, block: float = 1.0, seed: Seed = None) -> OUCRN:
    """The bridge scheme of :func:`~qlib.halfin_whitt.diffusion.reflected_ou` at ``dt, 2dt, 4dt, …``, with
    common random numbers, for the discretisation error of stationary means.

    Level ``l`` steps by ``dt · 2^l``.  Every level is driven by the same
    Brownian path, sampled on the finest grid, and the push of a coarse step
    is the exact maximum of its frozen-drift Brownian motion given the fine
    increments (the largest of the fine sub-steps' bridge maxima), so each
    level is, in law, the bridge scheme at its own step, and the levels are
    strongly coupled: differences between levels have a small variance.  With
    a bias ``a·dt + b·dt² + …`` of a stationary mean, Richardson extrapolation
    ``2 m(dt) − m(2dt)`` removes the first term, and a third level estimates
    what remains (see Notes).

    Parameters
    ----------
    beta : float
        ``beta > 0``.
    x0 : pair of float
        ``(X_1(0), X_2(0))`` with ``X_1(0) <= 0 <= X_2(0)``.
    t_end : float
        Horizon, ``> burn_in``.
    dt : float
        The finest step, ``> 0``.
    depth : int
        Number of coupled steps (levels ``dt, 2 dt, …``), ``1 <= depth <= 8``.
    burn_in : float
        Averages start here (rounded down to a multiple of the coarsest step).
    block : float
        Length of the blocks of the averages, rounded to a multiple of the
        coarsest step ``dt · 2^(depth − 1)``.
    seed : None, int, numpy.random.SeedSequence or numpy.random.Generator

    Returns
    -------
    OUCRN

    Notes
    -----
    With ``m_l`` the stationary mean at level ``l`` and a bias expansion
    ``m_l = m + a h_l + b h_l² + O(h_l³)``, ``h_l = dt · 2^l``:
    ``R = 2 m_0 − m_1 = m − 2 b dt² + O(dt³)`` and
    ``E = (m_1 − m_2 − 2(m_0 − m_1)) / 3 = −2 b dt² + O(dt³)`` estimates the
    remaining bias of ``R`` (so ``R − E`` is the second-order extrapolation).
    """
    beta = _check_beta(beta)
    x1, x2 = _check_x0(x0)
    t_end, burn_in = _check_times(t_end, burn_in)
    dt = _check_pos("dt", dt)
    if isinstance(depth, bool) or not isinstance(depth, numbers.Integral) \
            or not 1 <= depth <= 8:
        raise ValueError(f"depth must be an integer in [1, 8], got {depth!r}")
    block = _check_pos("block", block)
    coarse = 1 << (int(depth) - 1)
    block_fine = max(1, int(round(block / (dt * coarse)))) * coarse
    burn_fine = int(burn_in / (dt * coarse)) * coarse
    nblocks = (int(round(t_end / dt)) - burn_fine) // block_fine
    if nblocks < 2:
        raise ValueError(f"t_end - burn_in must hold at least 2 blocks of {block_fine * dt:g}")
    nfine = burn_fine + nblocks * block_fine
    seed32, entropy, _ = _seed32(seed)
    mom = _ou_crn_kernel(seed32, beta, x1, x2, nfine, dt, int(depth), burn_fine,
                         block_fine, nblocks)
    return OUCRN(beta=beta, dt=dt * 2.0 ** np.arange(depth), block=block_fine * dt,
                 burn_in=burn_fine * dt, t_end=nfine * dt,
                 names=("x1", "x2", "x1x1", "x1x2", "x2x2"), moments=mom,
                 seed=_seed_record(seed, entropy))


def ou_halving(beta: float, dt: float, *, t_end: float, burn_in: float, seed: Seed = None,
               scheme: str = "bridge", halvings: int = 2) -> dict[str, np.ndarray]:
    """Discretisation error of :func:`~qlib.halfin_whitt.diffusion.reflected_ou` by halving ``dt``.

    Runs the stationary scheme at ``dt, dt/2, …, dt/2^halvings`` (independent
    streams from one SeedSequence) and returns, for each step, the stationary
    means of ``X_1`` and ``X_2`` with standard errors.  The differences of
    successive rows estimate the discretisation error (their s.e. is the
    root-sum-square of the two rows' s.e.).

    Returns
    -------
    dict
        ``dt, mean_x1, mean_x1_se, mean_x2, mean_x2_se`` (arrays).
    """
    dt = _check_pos("dt", dt)
    if isinstance(halvings, bool) or not isinstance(halvings, numbers.Integral) \
            or halvings < 1:
        raise ValueError(f"halvings must be an integer >= 1, got {halvings!r}")
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    out = {k: [] for k in ("dt", "mean_x1", "mean_x1_se", "mean_x2", "mean_x2_se")}
    for h, child in enumerate(ss.spawn(halvings + 1)):
        d = dt / 2 ** h
        r = reflected_ou(beta, (-beta, 0.0), t_end=t_end, dt=d, seed=child,
                         burn_in=burn_in, record_dt=0, scheme=scheme)
        out["dt"].append(d)
        for k in ("mean_x1", "mean_x1_se", "mean_x2", "mean_x2_se"):
            out[k].append(getattr(r, k))
    return {k: np.array(v) for k, v in out.items()}
