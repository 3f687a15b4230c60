"""Argument checks and seeds shared by the Halfin–Whitt tools."""
from __future__ import annotations

import math
import numbers
import numpy as np

from qlib import _validate as V

__all__ = []


# ---------------------------------------------------------------- validation

def _check_n(n):
    return V.integer(n, "n", lo=1)


def _check_beta(beta, n=None):
    beta = V.positive(beta, "beta")
    if n is not None and not n - beta * math.sqrt(n) > 0:
        raise ValueError(f"beta must be < sqrt(n) = {math.sqrt(n):.6g} so that "
                         f"lam_n = n - beta*sqrt(n) > 0, got beta = {beta}")
    return beta


def _check_pos(name, x):
    return V.positive(x, name)


def _check_x0(x0):
    """The diffusion's starting point ``(X_1, X_2)`` with ``X_1 <= 0 <= X_2``."""
    try:
        x1, x2 = (float(v) for v in x0)
    except (TypeError, ValueError):
        raise TypeError(f"x0 must be a pair of numbers (X_1, X_2), got {x0!r}") from None
    if not (np.isfinite(x1) and np.isfinite(x2) and x1 <= 0 <= x2):
        raise ValueError(f"x0 must satisfy X_1 <= 0 <= X_2, got {x0!r}")
    return x1, x2


def _check_times(t_end, burn_in):
    t_end = _check_pos("t_end", t_end)
    burn_in = V.nonnegative(burn_in, "burn_in")
    if not t_end > burn_in:
        raise ValueError(f"t_end must be > burn_in = {burn_in}, got {t_end}")
    return t_end, burn_in


def _seed32(seed):
    """A 32-bit seed for numba's generator, drawn through SeedSequence, the
    entropy to record, and the SeedSequence itself."""
    if isinstance(seed, np.random.SeedSequence):
        ss = seed
    elif isinstance(seed, np.random.Generator):
        ss = np.random.SeedSequence(int(seed.integers(0, 2**63)))
    elif seed is None:
        ss = np.random.SeedSequence()
    elif isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        if seed < 0:
            raise ValueError(f"seed must be >= 0, got {seed}")
        ss = np.random.SeedSequence(int(seed))
    else:
        raise TypeError("seed must be None, an int >= 0, a numpy.random.SeedSequence or a "
                        f"numpy.random.Generator, got {seed!r}")
    return int(ss.generate_state(1)[0]), ss.entropy, ss


def _seed_record(seed, entropy):
    """What the result records as its seed: the int given, else the entropy
    of the SeedSequence (an int, or a tuple of ints for a list entropy)."""
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        return int(seed)
    if isinstance(entropy, numbers.Integral):
        return int(entropy)
    return tuple(int(e) for e in entropy)


def _mean_se(x):
    x = np.asarray(x, float)
    if x.size < 2:
        return float(x.mean()), float("nan")
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))
