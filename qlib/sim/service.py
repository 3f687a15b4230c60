"""Service-time laws of mean 1 for the general-service simulator.

A law is a small frozen :class:`~qlib.sim.service.ServiceLaw`: its name, its squared
coefficient of variation ``scv = Var(S) / E[S]^2``, the parameters of its
numba sampler, and (for the phase-type laws) a phase-type representation
``(alpha, T)`` used by the exact chains and the cavity approximation.  Time
is measured in mean service times, so every law has mean 1.

Public constructors::

    deterministic()          S = 1                                 scv = 0
    exponential()            Exp(1)                                scv = 1
    erlang(k)                sum of k Exp(k)                       scv = 1/k
    hyperexponential(scv)    two Exp phases, balanced means        scv >= 1
    lognormal(scv)           exp(N(m, s^2)), s^2 = log(1 + scv)    scv >= 0
    pareto(alpha)            x_m U^(-1/alpha), x_m = (alpha-1)/alpha, alpha > 2

The samplers are ``@numba.njit`` functions of the parameter array and the
xoshiro256++ state of :mod:`qlib.sim` (four ``uint64`` held in
locals); each returns ``(sample, new state)``.  ``draw`` dispatches on
the law's integer ``code``, so one compiled kernel serves every law.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numba
import numpy as np

from qlib import _validate as V
from qlib.sim.rng import _step

__all__ = ["ServiceLaw", "deterministic", "exponential", "erlang",
           "hyperexponential", "lognormal", "pareto",
           "pollaczek_khinchine", "md1_distribution"]

# law codes (the kernel's dispatch)
DET, EXP, ERL, HYP, LOGN, PAR = range(6)


# ----------------------------------------------------------- samplers ----
@numba.njit(cache=True, inline="always")
def _det(par, s0, s1, s2, s3):
    return 1.0, s0, s1, s2, s3


@numba.njit(cache=True, inline="always")
def _exp(par, s0, s1, s2, s3):
    u, s0, s1, s2, s3 = _step(s0, s1, s2, s3)
    return -math.log(1.0 - u), s0, s1, s2, s3


@numba.njit(cache=True, inline="always")
def _erl(par, s0, s1, s2, s3):
    # sum of k Exp(k): -(1/k) sum log(1 - u_j)
    k = np.int64(par[0])
    x = 0.0
    for _ in range(k):
        u, s0, s1, s2, s3 = _step(s0, s1, s2, s3)
        x -= math.log(1.0 - u)
    return x / k, s0, s1, s2, s3


@numba.njit(cache=True, inline="always")
def _hyp(par, s0, s1, s2, s3):
    # par = (p1, rate1, rate2): phase 1 with probability p1
    u, s0, s1, s2, s3 = _step(s0, s1, s2, s3)
    rate = par[1] if u < par[0] else par[2]
    u, s0, s1, s2, s3 = _step(s0, s1, s2, s3)
    return -math.log(1.0 - u) / rate, s0, s1, s2, s3


@numba.njit(cache=True, inline="always")
def _logn(par, s0, s1, s2, s3):
    # par = (m, s): Box-Muller, one normal per call
    u, s0, s1, s2, s3 = _step(s0, s1, s2, s3)
    v, s0, s1, s2, s3 = _step(s0, s1, s2, s3)
    z = math.sqrt(-2.0 * math.log(1.0 - u)) * math.cos(2.0 * math.pi * v)
    return math.exp(par[0] + par[1] * z), s0, s1, s2, s3


@numba.njit(cache=True, inline="always")
def _par(par, s0, s1, s2, s3):
    # par = (x_m, alpha): inverse CDF, 1 - u in (0, 1]
    u, s0, s1, s2, s3 = _step(s0, s1, s2, s3)
    return par[0] * (1.0 - u) ** (-1.0 / par[1]), s0, s1, s2, s3


@numba.njit(cache=True, inline="always")
def draw(code, par, s0, s1, s2, s3):
    """One service time of the law ``(code, par)``: returns (S, new state)."""
    if code == EXP:
        return _exp(par, s0, s1, s2, s3)
    if code == DET:
        return _det(par, s0, s1, s2, s3)
    if code == ERL:
        return _erl(par, s0, s1, s2, s3)
    if code == HYP:
        return _hyp(par, s0, s1, s2, s3)
    if code == LOGN:
        return _logn(par, s0, s1, s2, s3)
    return _par(par, s0, s1, s2, s3)


@numba.njit(cache=True)
def _sample(code, par, size, rs):
    out = np.empty(size)
    s0, s1, s2, s3 = rs[0], rs[1], rs[2], rs[3]
    for i in range(size):
        out[i], s0, s1, s2, s3 = draw(code, par, s0, s1, s2, s3)
    return out


_SAMPLERS = {DET: _det, EXP: _exp, ERL: _erl, HYP: _hyp, LOGN: _logn, PAR: _par}


# --------------------------------------------------------------- laws ----
@dataclass(frozen=True)
class ServiceLaw:
    """A service-time law of mean 1.

    Attributes
    ----------
    name : str
        Readable name, e.g. ``"erlang(2)"``.
    scv : float
        Squared coefficient of variation ``Var(S)``.
    code : int
        Which sampler ``draw`` uses.
    params : numpy.ndarray
        The sampler's parameters.
    phase_type : tuple or None
        ``(alpha, T)``: initial phase law and sub-generator of a phase-type
        representation (exit rates ``-T @ 1``), or None when the law is
        not phase type.
    """

    name: str
    scv: float
    code: int
    params: np.ndarray = field(repr=False)
    phase_type: tuple = field(default=None, repr=False)

    @property
    def mean(self):
        """Always 1: time is measured in mean service times."""
        return 1.0

    @property
    def sampler(self):
        """The numba sampler ``f(params, s0, s1, s2, s3) -> (S, s0..s3)``."""
        return _SAMPLERS[self.code]

    def sample(self, size, seed=0):
        """``size`` independent draws (numba sampler, xoshiro256++ seeded
        from ``numpy.random.SeedSequence(seed)``)."""
        size = V.integer(size, "size", lo=0)
        rs = np.random.SeedSequence(seed).generate_state(4, np.uint64)
        if not rs.any():
            rs[0] = np.uint64(1)
        return _sample(self.code, self.params, int(size), rs)

    def cdf(self, x):
        """Distribution function ``P(S <= x)`` (numpy, vectorised)."""
        x = np.asarray(x, float)
        p = self.params
        with np.errstate(divide="ignore", invalid="ignore"):
            if self.code == DET:
                return (x >= 1.0).astype(float)
            if self.code == EXP:
                return np.where(x > 0, -np.expm1(-np.maximum(x, 0)), 0.0)
            if self.code == ERL:
                from scipy.stats import gamma
                return gamma.cdf(x, int(p[0]), scale=1.0 / p[0])
            if self.code == HYP:
                y = np.maximum(x, 0)
                return np.where(x > 0, 1 - p[0] * np.exp(-p[1] * y)
                                - (1 - p[0]) * np.exp(-p[2] * y), 0.0)
            if self.code == LOGN:
                from scipy.special import ndtr
                if p[1] == 0:
                    return (x >= 1.0).astype(float)
                return np.where(x > 0, ndtr((np.log(np.maximum(x, 1e-300)) - p[0]) / p[1]), 0.0)
            return np.where(x > p[0], 1 - (p[0] / np.maximum(x, p[0])) ** p[1], 0.0)


def _check_mean(mean):
    m = V.real(mean, "mean", allow_inf=True)
    if m != 1.0:
        raise ValueError(f"mean must be 1 (time is measured in mean service "
                         f"times), got {mean}")


def _real(x, name):
    """``x`` as a float: a real number (not a bool, not a str), not NaN; the
    callers check the range."""
    return V.real(x, name, allow_inf=True)


def deterministic(*, mean: float = 1.0) -> ServiceLaw:
    """Every service takes exactly 1 (M/D/1 at each server): scv = 0."""
    _check_mean(mean)
    return ServiceLaw("deterministic", 0.0, DET, np.zeros(1))


def exponential(*, mean: float = 1.0) -> ServiceLaw:
    """Exp(1) services, the source paper's model: scv = 1."""
    _check_mean(mean)
    return ServiceLaw("exponential", 1.0, EXP, np.zeros(1),
                      (np.ones(1), -np.ones((1, 1))))


def erlang(k: int, *, mean: float = 1.0) -> ServiceLaw:
    """Erlang-k: the sum of ``k`` independent Exp(k) phases; scv = 1/k.

    Examples
    --------
    >>> erlang(2)
    ServiceLaw(name='erlang(2)', scv=0.5, code=2)
    """
    _check_mean(mean)
    k = V.integer(k, "k", lo=1, hi=10_000)
    T = -k * np.eye(k) + k * np.eye(k, k=1)
    a = np.zeros(k)
    a[0] = 1.0
    return ServiceLaw(f"erlang({k})", 1.0 / k, ERL, np.array([float(k)]), (a, T))


def hyperexponential(scv: float, *, mean: float = 1.0) -> ServiceLaw:
    """Two exponential phases with balanced means (``p1/r1 = p2/r2 = 1/2``).

    ``p1 = (1 + sqrt((scv - 1)/(scv + 1)))/2``, rates ``r_j = 2 p_j``;
    ``scv >= 1`` (scv = 1 is Exp(1)).
    """
    _check_mean(mean)
    c2 = _real(scv, "scv")
    if c2 < 0:
        raise ValueError(f"scv must be >= 0, got {scv}")
    if c2 < 1 or not math.isfinite(c2):
        raise ValueError(f"scv must be finite and >= 1 for a hyperexponential "
                         f"law, got {scv}")
    p1 = 0.5 * (1 + math.sqrt((c2 - 1) / (c2 + 1)))
    p2 = 1 - p1
    r1, r2 = 2 * p1, 2 * p2
    if r2 <= 0:
        raise ValueError(f"scv too large for double precision, got {scv}")
    a = np.array([p1, p2])
    T = np.diag([-r1, -r2])
    return ServiceLaw(f"hyperexponential({c2:g})", c2, HYP, np.array([p1, r1, r2]), (a, T))


def lognormal(scv: float, *, mean: float = 1.0) -> ServiceLaw:
    """``exp(N(m, s^2))`` with ``s^2 = log(1 + scv)``, ``m = -s^2/2``."""
    _check_mean(mean)
    c2 = _real(scv, "scv")
    if c2 < 0 or not math.isfinite(c2):
        raise ValueError(f"scv must be finite and >= 0, got {scv}")
    s2 = math.log1p(c2)
    return ServiceLaw(f"lognormal({c2:g})", c2, LOGN,
                      np.array([-s2 / 2, math.sqrt(s2)]))


def pareto(alpha: float, *, mean: float = 1.0) -> ServiceLaw:
    """Pareto with tail ``P(S > x) = (x_m/x)^alpha``, ``x_m = (alpha-1)/alpha``.

    ``alpha > 2`` (finite variance); scv = 1/(alpha (alpha - 2)).
    """
    _check_mean(mean)
    a = _real(alpha, "alpha")
    if not a > 2 or not math.isfinite(a):
        raise ValueError(f"alpha must be finite and > 2 (finite variance), got {alpha}")
    return ServiceLaw(f"pareto({a:g})", 1.0 / (a * (a - 2)), PAR,
                      np.array([(a - 1) / a, a]))


def check_law(service):
    """Return the law for ``service`` (None/"exp" -> None), or raise."""
    if service is None or (isinstance(service, str) and service == "exp"):
        return None
    if isinstance(service, ServiceLaw):
        return service
    if isinstance(service, str):
        raise ValueError(f"service must be None, 'exp' or a qlib.sim.service law, "
                         f"got {service!r}")
    raise TypeError("service must be None, 'exp' or a qlib.sim.service.ServiceLaw, "
                    f"got {type(service).__name__}")


# ------------------------------------------------- M/G/1 reference values ----
def pollaczek_khinchine(lam: float, scv: float) -> float:
    """Mean response time of the M/G/1 queue with mean-1 services:
    ``R = 1 + lam (1 + scv) / (2 (1 - lam))``."""
    lam = V.real(lam, "lam", lo=0, hi=1, lo_open=True, hi_open=True)
    c2 = _real(scv, "scv")
    if c2 < 0:
        raise ValueError(f"scv must be >= 0, got {scv}")
    return 1.0 + lam * (1.0 + c2) / (2.0 * (1.0 - lam))


def md1_distribution(lam: float, kmax: int) -> np.ndarray:
    """Stationary number in system of M/D/1 (service 1), ``P(N = k)``,
    ``k = 0..kmax``, by the classical closed form (Erlang/Crommelin)::

        P(0) = 1 - lam,   P(1) = (1 - lam)(e^lam - 1),
        P(k) = (1 - lam) sum_{j=1}^{k} (-1)^(k-j) e^(j lam)
               [ (j lam)^(k-j)/(k-j)! + (j lam)^(k-j-1)/(k-j-1)! ],  k >= 2

    (the second term absent for j = k).  The alternating sum cancels badly,
    so it is evaluated with mpmath at 60 digits.
    """
    import mpmath as mp
    lam = V.real(lam, "lam", lo=0, hi=1, lo_open=True, hi_open=True)
    V.integer(kmax, "kmax", lo=0)
    with mp.workdps(60):
        r = mp.mpf(lam)
        out = [1 - r, (1 - r) * (mp.e ** r - 1)]
        for k in range(2, int(kmax) + 1):
            s = mp.mpf(0)
            for j in range(1, k + 1):
                a = (j * r) ** (k - j) / mp.factorial(k - j)
                b = (j * r) ** (k - j - 1) / mp.factorial(k - j - 1) if j < k else 0
                s += (-1) ** (k - j) * mp.e ** (j * r) * (a + b)
            out.append((1 - r) * s)
        return np.array([float(v) for v in out[:int(kmax) + 1]])
