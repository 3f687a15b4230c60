"""Aggregation–disaggregation iteration for stationary laws of chains whose moves change a level by ±1."""
from __future__ import annotations

import numpy as np

__all__ = []


def _solve_iad(GT, S, up, down, rate, tol=1e-14, sweeps=8, max_iter=20000, x0=None):
    """Stationary law of a chain whose total ``S`` moves by ±1 per jump.

    Iterative aggregation–disaggregation: the law of ``S`` (the slow
    coordinate) is solved exactly as a birth–death chain with the rates
    ``up``/``down`` averaged over the current conditional law given ``S``;
    then ``sweeps`` uniformized power steps ``π ← π + π G / rate`` relax the
    (fast) shape given ``S``.  Stops when ``||π G||_1 <= tol · rate``.
    ``GT`` is the transposed generator in CSR form; ``x0`` (optional) is
    a warm start.
    """
    M = int(S.max()) + 1
    pi = np.ones(S.size) / S.size if x0 is None else np.asarray(x0, float) / np.sum(x0)
    rate = 1.02 * float(rate)
    for _ in range(max_iter):
        mass = np.bincount(S, pi, minlength=M)
        cond = pi / np.where(mass[S] > 0, mass[S], 1.0)
        u = np.bincount(S, cond * up, minlength=M)
        dn = np.bincount(S, cond * down, minlength=M)
        logp = np.concatenate([[0.0], np.cumsum(np.log(u[:-1]) - np.log(dn[1:]))])
        P = np.exp(logp - logp.max())
        pi = P[S] * cond
        pi /= pi.sum()
        for _ in range(sweeps):
            pi = pi + (GT @ pi) / rate
        res = np.abs(GT @ pi).sum()
        if res <= tol * rate:
            break
    else:
        raise RuntimeError(f"aggregation-disaggregation did not converge (residual {res:.3g})")
    pi = np.clip(pi, 0.0, None)
    return pi / pi.sum()
