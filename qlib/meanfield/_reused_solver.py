"""One sparse linear solve after another, for slowly changing generators.

The fixed-point iterations of the window closures (:mod:`qlib.meanfield.pair`)
solve ``x Q = −src`` for a generator ``Q`` that changes a little at every step;
an incomplete LU of one matrix preconditions GMRES for the next ones.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla


class _ReusedSolver:
    """Solve ``x Q = −src`` for a sequence of slowly changing generators:
    an incomplete LU of the first matrix preconditions GMRES for the later
    ones (GMRES starting from the previous solution) and is refactored only
    when GMRES needs many iterations.  A full LU
    of the window chain at ``L = 4`` has far too much fill to repeat at
    every fixed-point step; near the fixed point the matrix barely changes
    and GMRES converges in a few iterations."""

    def __init__(self, max_krylov=40):
        self.ilu, self.max_krylov, self.factorizations = None, max_krylov, 0
        self.x = None                         # the last solution: GMRES starts there

    def __call__(self, Q, src):
        A = Q.T.tocoo()
        rhs = -np.asarray(src, dtype=float).copy()
        if not np.any(rhs):
            keep = A.row != 0
            A = sp.coo_matrix((np.append(A.data[keep], 1.0),
                               (np.append(A.row[keep], 0), np.append(A.col[keep], 0))),
                              shape=A.shape)
            rhs[0] = 1.0
        A = A.tocsc()
        for attempt in range(2):
            if self.ilu is None:
                self.ilu = spla.spilu(A, drop_tol=1e-3, fill_factor=20,
                                      permc_spec="MMD_AT_PLUS_A")
                self.factorizations += 1
            M = spla.LinearOperator(A.shape, self.ilu.solve)
            x0 = self.x if self.x is not None and self.x.shape == rhs.shape else None
            x, info = spla.gmres(A, rhs, x0=x0, M=M, rtol=1e-13, atol=0.0,
                                 restart=self.max_krylov, maxiter=3)
            if info == 0:
                self.x = x
                return x / x.sum()
            self.ilu = None                   # too far from the factorised matrix
        x = spla.spsolve(A, rhs)
        return x / x.sum()
