"""The mechanics of ``chapters/solver_check.md``: the table of the adaptive
solver's true errors against its error estimates, and its figure.
"""
from __future__ import annotations

import json
import os
import pathlib
import types
from dataclasses import dataclass

import numpy as np

from qlib.halfin_whitt import SOLVER_VERSION, stationary_jsq
from qlib.halfin_whitt.brute import QUANTITIES, BruteForceConverged, estimate_ratios
from qlib.halfin_whitt.chain_fsp import stationary_jsq_fsp

__all__ = ["EstimateTable", "estimate_table", "plot_estimates", "solve_20", "stored_solve",
           "truncation_gaps"]

#: the stored solve of ``stationary_jsq(20, 0.5, tol=1e-6)`` (``benchmarks/bench_solver_check.py``)
STORE = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "solver_check_fsp.json"


def solve_20(n: int = 20, beta: float = 0.5, tol: float = 1e-6) -> dict:
    """The call the chapter checks at ``(n, β) = (20, 0.5)``, ``stationary_jsq(n, beta, tol=tol)``
    (half a minute of CPU there: the adaptive solver at its threshold 1e-10), as the plain dict
    that ``benchmarks/solver_check_fsp.json`` stores: ``n``, ``beta``, ``tol``, ``method``,
    ``lam_total``, the quantities of :data:`qlib.halfin_whitt.brute.QUANTITIES`, their
    ``error_estimates`` and the ``solver_version`` that wrote it.

    Examples
    --------
    >>> d = solve_20(9, 1.0)
    >>> d["method"], d["n"], sorted(d["error_estimates"]) == sorted(QUANTITIES)
    ('fsp', 9, True)
    """
    st = stationary_jsq(n, beta, tol=tol)
    return {"n": n, "beta": beta, "tol": tol, "method": st.method, "lam_total": float(st.lam_total),
            **{q: float(getattr(st, q)) for q in QUANTITIES},
            "error_estimates": {q: float(st.error_estimates[q]) for q in QUANTITIES},
            "solver_version": SOLVER_VERSION}


def stored_solve(full: bool | None = None) -> types.SimpleNamespace:
    """:func:`solve_20` read from ``benchmarks/solver_check_fsp.json``, as an object
    :func:`~qlib.halfin_whitt.brute.estimate_ratios` reads; solved again (and not
    written) where ``full`` (default: ``FULL`` set in the environment), where the file
    is missing or where it was written by an older solver (``SOLVER_VERSION``)."""
    full = bool(os.environ.get("FULL")) if full is None else full
    d = json.loads(STORE.read_text()) if STORE.exists() and not full else {}
    if d.get("solver_version") != SOLVER_VERSION:
        d = solve_20()
    return types.SimpleNamespace(**d)



@dataclass(frozen=True)
class EstimateTable:
    """One row per quantity and setting: what ran (``label``), the quantity, the true
    error, the brute force's own error and the solver's estimate.

    Attributes
    ----------
    label, quantity : numpy.ndarray of str
    err, own, est : numpy.ndarray
        ``|solver − truth|``, the truth's uncertainty, ``error_estimates[q]``.
    """

    label: np.ndarray
    quantity: np.ndarray
    err: np.ndarray
    own: np.ndarray
    est: np.ndarray

    @property
    def resolved(self) -> np.ndarray:
        """Rows where the brute force is ten times sharper than the estimate."""
        return self.own <= 0.1 * self.est

    @property
    def exact_truth(self) -> np.ndarray:
        """Rows whose truth is exact by rate balance (``own = 0``)."""
        return np.isin(self.quantity, ("mean_q1", "mean_idle"))

    def cover_ratio(self) -> float:
        """The worst true error over estimate plus the brute force's own error (at most 1 if
        every estimate covers its error)."""
        return float((self.err / (self.est + self.own)).max())

    def summary(self) -> dict:
        """The glued figures: the worst resolved ratio of true error to estimate at ``n = 16``
        (``est-ratio``), at ``n = 20`` (``est-ratio-20``), overall (``est-ratio-all``), where it
        falls (``est-worst-q``), and how many rows are resolved (``resolved``) or exact
        (``exact-truth``)."""
        res, exact = self.resolved, self.exact_truth
        ratio, sel16 = self.err / self.est, np.char.startswith(self.label, "n = 16")
        worst = int(np.argmax(np.where(res, ratio, -1)))
        return {"est-ratio": float(ratio[res & sel16].max()),
                "est-ratio-20": float(ratio[res & ~sel16].max()),
                "est-ratio-all": float(ratio[res].max()),
                "est-worst-q": f"{self.quantity[worst]} ({self.label[worst]})",
                "resolved": f"{res[~exact].sum()} of {(~exact).sum()}",
                "exact-truth": int(exact.sum())}

    def labels(self) -> list[str]:
        """The settings, in the order of the rows."""
        return list(dict.fromkeys(self.label))


def _rows(label, st, ref):
    return [(label, q, *v) for q, v in estimate_ratios(st, ref).items()]


def estimate_table(ref16: BruteForceConverged, ref20: BruteForceConverged,
                   tols16: tuple[float, ...] = (1e-8, 1e-10), st20=None) -> EstimateTable:
    """The adaptive solver's true errors and estimates at ``n = 16, β = 1`` and ``n = 20, β = 0.5``.

    At ``n = 16`` the adaptive solver :func:`~qlib.halfin_whitt.chain_fsp.stationary_jsq_fsp`
    runs at each admission threshold of ``tols16``; at ``n = 20, β = 0.5`` the call is
    ``stationary_jsq(20, 0.5, tol=1e-6)``, which answers with that solver (servers with four
    tasks matter there) at its threshold ``min(1e-10, 100 tol)``. Each label says what ran.

    Parameters
    ----------
    ref16, ref20 : BruteForceConverged
        The brute force at ``(16, 1)`` and ``(20, 0.5)``.
    tols16 : tuple of float
        The admission thresholds at ``n = 16``.
    st20 : StationaryJSQ or types.SimpleNamespace, optional
        The result of ``stationary_jsq(20, 0.5, tol=1e-6)`` if already at hand (the
        stored one of :func:`stored_solve`); solved here when ``None``.

    Returns
    -------
    EstimateTable

    Examples
    --------
    >>> from qlib.halfin_whitt.brute import brute_force_converged
    >>> t = estimate_table(brute_force_converged(16, 1.0, 5), brute_force_converged(20, 0.5, 4),
    ...                    tols16=(1e-8,))  # doctest: +SKIP
    >>> t.labels()  # doctest: +SKIP
    ['n = 16, fsp at 1e-08', 'n = 20, β = 0.5, fsp at 1e-10']
    """
    rows = [r for tol in tols16 for r in _rows(f"n = 16, fsp at {tol:g}",
                                               stationary_jsq_fsp(16, 1.0, tol=tol), ref16)]
    st20 = stationary_jsq(20, 0.5, tol=1e-6) if st20 is None else st20
    what = f"fsp at {min(1e-10, 100 * 1e-6):g}" if st20.method == "fsp" else f"{st20.method} at tol 1e-06"
    rows += _rows(f"n = 20, β = 0.5, {what}", st20, ref20)
    label, quantity, err, own, est = zip(*rows)
    return EstimateTable(np.array(label), np.array(quantity), *(np.array(x, dtype=float)
                                                                 for x in (err, own, est)))


def plot_estimates(ax, table: EstimateTable, floor: float = 1e-18) -> None:
    """True error against estimate on log axes, one colour per setting; filled where resolved,
    open (true error plus the brute force's own error: an upper bound) where not.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    table : EstimateTable
    floor : float
        Errors below this are drawn at it.
    """
    res = table.resolved
    for k, lab in enumerate(table.labels()):
        sel = table.label == lab
        ax.loglog(table.est[sel & res], np.maximum(table.err[sel & res], floor), "o", color=f"C{k}",
                  label=lab)
        ax.loglog(table.est[sel & ~res], np.maximum((table.err + table.own)[sel & ~res], floor), "o",
                  mfc="none", color=f"C{k}")
    g = np.array([table.est.min() / 3, table.est.max() * 3])
    ax.loglog(g, g, "k:", label="true error = estimate")
    ax.set_xlabel("error estimate of the adaptive solver")
    ax.set_ylabel("true error")
    ax.legend(fontsize=7)


def truncation_gaps(bfs, levels: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """The solve's identity on brute-force truncations: ``E[n − Q_1] − β√n = λ_n b``.

    Parameters
    ----------
    bfs : sequence of brute-force results
        Ordered by setting, then by level cap (``levels`` caps per setting).
    levels : int
        Caps per setting.

    Returns
    -------
    gap : numpy.ndarray
        ``|E[n − Q_1] − β√n − λ_n b|`` per truncation (zero up to rounding in any solution).
    b : numpy.ndarray
        ``λ_n b``, one row per setting, one column per cap.
    """
    rows = np.array([(r.mean_idle - r.beta * np.sqrt(r.n), r.lam_total * r.blocked) for r in bfs])
    return np.abs(rows[:, 0] - rows[:, 1]), rows[:, 1].reshape(-1, levels)
