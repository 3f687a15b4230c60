"""Argument checks and seeds shared by the Halfin–Whitt tools."""
from __future__ import annotations

import math
import numbers
import numpy as np

__all__ = []


# ---------------------------------------------------------------- validation

def _check_n(n):
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"n must be an integer >= 1, got {n!r}")
    n = int(n)
    if n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n}")
    return n


def _check_beta(beta, n=None):
    if isinstance(beta, bool) or not isinstance(beta, numbers.Real):
        raise TypeError(f"beta must be a real number > 0, got {beta!r}")
    beta = float(beta)
    if not (np.isfinite(beta) and beta > 0):
        raise ValueError(f"beta must be finite and > 0, got {beta}")
    if n is not None and not n - beta * math.sqrt(n) > 0:
        raise ValueError(f"beta must be < sqrt(n) = {math.sqrt(n):.6g} so that "
                         f"lam_n = n - beta*sqrt(n) > 0, got beta = {beta}")
    return beta


def _check_pos(name, x):
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a real number > 0, got {x!r}")
    x = float(x)
    if not (np.isfinite(x) and x > 0):
        raise ValueError(f"{name} must be finite and > 0, got {x}")
    return x


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
    if isinstance(burn_in, bool) or not isinstance(burn_in, numbers.Real):
        raise TypeError(f"burn_in must be a real number >= 0, got {burn_in!r}")
    burn_in = float(burn_in)
    if not (np.isfinite(burn_in) and burn_in >= 0):
        raise ValueError(f"burn_in must be finite and >= 0, got {burn_in}")
    if not t_end > burn_in:
        raise ValueError(f"t_end must be > burn_in = {burn_in}, got {t_end}")
    return t_end, burn_in


def _seed32(seed):
    """A 32-bit seed for numba's generator, drawn through SeedSequence."""
    if isinstance(seed, np.random.SeedSequence):
        ss = seed
    elif seed is None:
        ss = np.random.SeedSequence()
    elif isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        if seed < 0:
            raise ValueError(f"seed must be >= 0, got {seed}")
        ss = np.random.SeedSequence(int(seed))
    else:
        raise TypeError(f"seed must be None, an int >= 0 or a SeedSequence, got {seed!r}")
    return int(ss.generate_state(1)[0]), ss.entropy


def _seed_record(seed, entropy):
    """What the result records as its seed: the int given, else the entropy
    of the SeedSequence (an int, or a tuple of ints for a list entropy)."""
    if isinstance(seed, numbers.Integral):
        return int(seed)
    if isinstance(entropy, numbers.Integral):
        return int(entropy)
    return tuple(int(e) for e in entropy)


def _mean_se(x):
    x = np.asarray(x, float)
    if x.size < 2:
        return float(x.mean()), float("nan")
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))
