"""xoshiro256++ streams and a ziggurat Exp(1) sampler, inlined into every numba kernel."""
from __future__ import annotations

import math
import numba
import numpy as np

__all__ = []

# ---------------------------------------------------------------- PRNG ----
_U11 = np.uint64(11)
_U17 = np.uint64(17)
_U23 = np.uint64(23)
_U41 = np.uint64(41)
_U45 = np.uint64(45)
_U19 = np.uint64(19)
_TWO53 = 1.0 / 9007199254740992.0  # 2**-53


@numba.njit(cache=True, inline="always")
def _step(s0, s1, s2, s3):
    """xoshiro256++ (Blackman & Vigna) on a state held in local variables
    (registers): returns (uniform double in [0, 1) from the top 53 bits of
    the output, new state).  The state lives in locals rather than an array
    because an array state would be reloaded and stored around every write
    to another array; the kernel copies it in and out of ``rs``."""
    x = s0 + s3
    res = ((x << _U23) | (x >> _U41)) + s0
    t = s1 << _U17
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = (s3 << _U45) | (s3 >> _U19)
    return float(res >> _U11) * _TWO53, s0, s1, s2, s3


@numba.njit(cache=True, inline="always")
def _next(s0, s1, s2, s3):
    """xoshiro256++ as ``_step``, returning the raw 64-bit output."""
    x = s0 + s3
    res = ((x << _U23) | (x >> _U41)) + s0
    t = s1 << _U17
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = (s3 << _U45) | (s3 >> _U19)
    return res, s0, s1, s2, s3


def _ziggurat_tables(r=7.69711747013104972, v=0.0039496598225815571993):
    """Marsaglia & Tsang's 256-layer ziggurat for Exp(1), 53-bit version (as
    in numpy's ``random_standard_exponential``): ``ke`` acceptance bounds,
    ``we`` scales, ``fe`` the density at the layers' edges."""
    m = 2.0**53
    ke = np.zeros(256, np.uint64)
    we = np.zeros(256)
    fe = np.zeros(256)
    q = v / math.exp(-r)
    ke[0] = np.uint64(int(r / q * m))
    we[0], we[255] = q / m, r / m
    fe[0], fe[255] = 1.0, math.exp(-r)
    de = tde = r
    for i in range(254, 0, -1):
        de = -math.log(v / de + math.exp(-de))
        ke[i + 1] = np.uint64(int(de / tde * m))
        tde = de
        fe[i] = math.exp(-de)
        we[i] = de / m
    return ke, we, fe, r


_ZKE, _ZWE, _ZFE, _ZR = _ziggurat_tables()
_U3 = np.uint64(3)
_U8 = np.uint64(8)
_UFF = np.uint64(0xFF)


@numba.njit(cache=True, inline="always")
def _exp1(s0, s1, s2, s3):
    """An Exp(1) variate by the ziggurat (exact; about 99 % of the draws
    take one 64-bit output, a multiply and a compare, no logarithm).
    Returns (x, new state)."""
    while True:
        ri, s0, s1, s2, s3 = _next(s0, s1, s2, s3)
        ri >>= _U3
        idx = ri & _UFF
        ri >>= _U8
        x = float(ri) * _ZWE[idx]
        if ri < _ZKE[idx]:
            return x, s0, s1, s2, s3
        u, s0, s1, s2, s3 = _step(s0, s1, s2, s3)
        if idx == 0:  # the tail beyond r: r + Exp(1), by memorylessness
            return _ZR - math.log1p(-u), s0, s1, s2, s3
        if (_ZFE[idx - 1] - _ZFE[idx]) * u + _ZFE[idx] < math.exp(-x):
            return x, s0, s1, s2, s3
