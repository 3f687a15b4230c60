"""Degree distributions ``p`` and their generating functions ``φ``.

A degree distribution is a probability mass function ``p(d)``, ``d = 0..M``,
with finite support.  Its probability generating function is
``φ(x) = Σ_d p(d) x^d``; the fluid limit of JSQ on a sparse dynamic graph
depends on the graph only through ``φ``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence

import numpy as np

from qlib import _validate as V

__all__ = ["DegreeDistribution"]

_SUM_TOL = 1e-12
#: Largest degree a law can hold: its pmf ``p(0..M)`` takes ``8 (M + 1)``
#: bytes, at most qlib._validate.MEMORY_LIMIT (4 GiB).
MAX_DEGREE = V.MEMORY_LIMIT // 8 - 1


def _as_degree(d, name="degree") -> int:
    if isinstance(d, bool) or not isinstance(d, numbers.Integral):
        if isinstance(d, float) and float(d).is_integer() and math.isfinite(d):
            d = int(d)
        else:
            raise TypeError(f"{name} must be an integer, got {d!r}")
    d = int(d)
    if d < 0:
        raise ValueError(f"{name} must be non-negative, got {d}")
    if d > MAX_DEGREE:
        raise ValueError(f"{name} must be <= MAX_DEGREE = {MAX_DEGREE} (the pmf p(0..M) "
                         f"must fit in 4 GiB), got {d}")
    return d


def _as_prob(p, where) -> float:
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise TypeError(f"probability p({where}) must be a real number, got {p!r}")
    p = float(p)
    if not math.isfinite(p):
        raise ValueError(f"probability p({where}) must be finite, got {p}")
    if p < 0:
        raise ValueError(f"probability p({where}) must be >= 0, got {p}")
    return p



#: the Poisson tail mass that :meth:`DegreeDistribution.poisson` leaves out by default
POISSON_TAIL = 1e-12


def _poisson_d_max(c):
    """Smallest ``d >= c`` with ``P(Poisson(c) > d) < POISSON_TAIL``: past the mode the
    tail after ``d`` is at most ``p(d + 1) / (1 − c/(d + 2))``."""
    if c == 0:
        return 0
    d = int(math.ceil(c))
    while True:
        logp = (d + 1) * math.log(c) - c - math.lgamma(d + 2)
        if math.exp(logp) / (1.0 - c / (d + 2)) < POISSON_TAIL:
            return d
        d += 1


class DegreeDistribution:
    """An immutable law ``p`` of the degree ``D`` of a vertex.

    Parameters
    ----------
    p : mapping or sequence
        Either a mapping ``{d: p(d)}`` from non-negative integer degrees ``d``
        to probabilities, or a sequence whose entry ``d`` is ``p(d)``.  The
        probabilities must be finite, non-negative and sum to 1 within 1e-12.

    Attributes
    ----------
    pmf : numpy.ndarray
        Read-only array, ``pmf[d] = p(d)`` for ``d = 0..M`` (``p(M) > 0``).
    mean : float
        ``d̄ = Σ_d d p(d)``.
    min_degree : int
        ``m = min{d : p(d) > 0}``.
    max_degree : int
        ``M = max{d : p(d) > 0}``.

    Raises
    ------
    TypeError
        If ``p`` is not a mapping or sequence, or holds non-numbers.
    ValueError
        If the support is empty, a degree is negative, a probability is
        negative or not finite, or the probabilities do not sum to 1.
    """

    __slots__ = ("_pmf", "_mean", "_m", "_M", "_hash")

    def __init__(self, p):
        if isinstance(p, DegreeDistribution):
            pairs = list(enumerate(p.pmf.tolist()))
        elif isinstance(p, Mapping):
            pairs = [(_as_degree(d), None) for d in p]
            pairs = [(_as_degree(d), _as_prob(v, d)) for d, v in p.items()]
        elif isinstance(p, np.ndarray) or (
            isinstance(p, Sequence) and not isinstance(p, (str, bytes))
        ):
            arr = list(p) if not isinstance(p, np.ndarray) else p.tolist()
            if isinstance(p, np.ndarray) and p.ndim != 1:
                raise ValueError(f"pmf sequence must be one-dimensional, got shape {p.shape}")
            pairs = [(d, _as_prob(v, d)) for d, v in enumerate(arr)]
        else:
            raise TypeError(
                f"degree distribution must be a dict {{d: p}} or a sequence p[d], got {type(p).__name__}"
            )
        if not pairs:
            raise ValueError("degree distribution has empty support")
        seen = {}
        for d, v in pairs:
            seen[d] = seen.get(d, 0.0) + v
        total = math.fsum(seen.values())
        if abs(total - 1.0) > _SUM_TOL:
            raise ValueError(f"probabilities must sum to 1 (within 1e-12), got sum {total!r}")
        support = [d for d, v in seen.items() if v > 0]
        if not support:
            raise ValueError("degree distribution has no positive probability")
        M = max(support)
        pmf = np.zeros(M + 1)
        for d, v in seen.items():
            if d <= M:
                pmf[d] = v
        pmf.setflags(write=False)
        self._pmf = pmf
        self._M = M
        self._m = min(support)
        self._mean = math.fsum(d * v for d, v in enumerate(pmf.tolist()))
        self._hash = hash(pmf.tobytes())

    def __setattr__(self, name, value):
        if hasattr(self, "_hash"):
            raise AttributeError("DegreeDistribution is immutable")
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        raise AttributeError("DegreeDistribution is immutable")

    # -- properties -----------------------------------------------------
    @property
    def pmf(self) -> np.ndarray:
        """Read-only array ``p(0), ..., p(M)``."""
        return self._pmf

    @property
    def mean(self) -> float:
        """Mean degree ``d̄ = Σ_d d p(d)``."""
        return self._mean

    @property
    def min_degree(self) -> int:
        """``m = min{d : p(d) > 0}``."""
        return self._m

    @property
    def max_degree(self) -> int:
        """``M = max{d : p(d) > 0}``."""
        return self._M

    # -- generating function -------------------------------------------
    def pgf(self, x):
        """Probability generating function ``φ(x) = Σ_d p(d) x^d``.

        Parameters
        ----------
        x : float or array_like
            Points at which to evaluate ``φ`` (vectorised, Horner's scheme).

        Returns
        -------
        float or numpy.ndarray
            ``φ(x)``, same shape as ``x``.
        """
        return np.polyval(self._pmf[::-1], x)

    def pgf_derivative(self, x):
        """Derivative ``φ'(x) = Σ_d d p(d) x^{d-1}`` (vectorised)."""
        if self._M == 0:
            return np.zeros_like(np.asarray(x, dtype=float)) + 0.0
        c = self._pmf[1:] * np.arange(1, self._M + 1)
        return np.polyval(c[::-1], x)

    def pgf_symbolic(self, x):
        """``φ(x)`` as a sympy expression in the symbol ``x``.

        Each ``p(d)`` is converted with ``sympy.Rational(repr(p(d)))``, i.e.
        the shortest decimal that round-trips the float, so ``0.5`` becomes
        ``1/2`` and ``0.1`` becomes ``1/10`` exactly.
        """
        import sympy

        return sympy.Add(
            *[sympy.Rational(repr(float(v))) * x**d for d, v in enumerate(self._pmf.tolist()) if v > 0]
        )

    # -- dunder --------------------------------------------------------
    def __repr__(self) -> str:
        items = ", ".join(f"{d}: {v!r}" for d, v in enumerate(self._pmf.tolist()) if v > 0)
        return f"DegreeDistribution({{{items}}})"

    def __eq__(self, other):
        if not isinstance(other, DegreeDistribution):
            return NotImplemented
        return self._pmf.shape == other._pmf.shape and bool(np.all(self._pmf == other._pmf))

    def __hash__(self):
        return self._hash

    def __reduce__(self):
        return (DegreeDistribution, (self._pmf.tolist(),))

    # -- constructors ---------------------------------------------------
    @classmethod
    def point(cls, d) -> "DegreeDistribution":
        """Point mass ``p(d) = 1`` (every vertex has degree ``d``; ``φ(x) = x^d``)."""
        return cls({_as_degree(d): 1.0})

    @classmethod
    def poisson(cls, c: float, d_max: int | None = None) -> "DegreeDistribution":
        """Poisson(``c``) law truncated to ``{0..d_max}`` and renormalised.

        ``p(d) ∝ c^d / d!`` for ``0 <= d <= d_max``; ``c >= 0`` finite.

        Parameters
        ----------
        c : float
            The mean before truncation.
        d_max : int, optional
            The largest degree kept. Default: the smallest ``d_max >= c`` whose
            Poisson tail mass ``P(X > d_max)`` is below ``POISSON_TAIL = 1e-12``
            (the mass the truncation moves onto the kept degrees), e.g.
            ``d_max = 18`` for ``c = 2`` (tail mass 6.5e-13).

        Returns
        -------
        DegreeDistribution

        Examples
        --------
        >>> from qlib import DegreeDistribution
        >>> p = DegreeDistribution.poisson(2)
        >>> p.max_degree, round(p.mean, 10)
        (18, 2.0)
        """
        if isinstance(c, bool) or not isinstance(c, numbers.Real):
            raise TypeError(f"c must be a real number, got {c!r}")
        c = float(c)
        if not math.isfinite(c) or c < 0:
            raise ValueError(f"c must be finite and >= 0, got {c}")
        d_max = _poisson_d_max(c) if d_max is None else _as_degree(d_max, "d_max")
        d = np.arange(d_max + 1)
        if c == 0:
            return cls.point(0)
        logw = d * math.log(c) - np.array([math.lgamma(k + 1) for k in d])
        w = np.exp(logw - logw.max())
        w /= math.fsum(w)
        return cls(w)

    @classmethod
    def mixture(cls, weights, laws) -> "DegreeDistribution":
        """Mixture ``Σ_k w_k p_k`` of laws ``p_k`` with weights ``w_k`` summing to 1."""
        laws = list(laws)
        weights = [_as_prob(w, f"weight {k}") for k, w in enumerate(weights)]
        if len(weights) != len(laws) or not laws:
            raise ValueError("mixture needs as many weights as laws (at least one)")
        if abs(math.fsum(weights) - 1.0) > _SUM_TOL:
            raise ValueError(f"mixture weights must sum to 1, got {math.fsum(weights)!r}")
        for law in laws:
            if not isinstance(law, DegreeDistribution):
                raise TypeError(f"laws must be DegreeDistribution, got {type(law).__name__}")
        M = max(law.max_degree for law in laws)
        out = np.zeros(M + 1)
        for w, law in zip(weights, laws):
            out[: law.max_degree + 1] += w * law.pmf
        return cls(out / math.fsum(out))

    @classmethod
    def from_degrees(cls, degrees) -> "DegreeDistribution":
        """Empirical law ``p(d) = #{v : deg(v) = d} / n`` of a degree sequence."""
        arr = np.asarray(degrees)
        if arr.ndim != 1 or arr.size == 0:
            raise ValueError("degree sequence must be a non-empty 1-D sequence")
        if arr.dtype.kind == "f":
            if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
                raise ValueError("degree sequence must hold integers")
            arr = arr.astype(np.int64)
        elif arr.dtype.kind not in "iu":
            raise TypeError(f"degree sequence must hold integers, got dtype {arr.dtype}")
        if np.any(arr < 0):
            raise ValueError("degrees must be non-negative")
        if arr.max() > MAX_DEGREE:
            _as_degree(int(arr.max()))  # refused before bincount allocates
        counts = np.bincount(arr.astype(np.int64))
        return cls(counts / arr.size)

    @classmethod
    def coerce(cls, degrees, name: str = "degrees") -> "DegreeDistribution":
        """A degree law from what every qlib function accepts as one.

        Parameters
        ----------
        degrees : DegreeDistribution, mapping, sequence or graph
            A law (returned as is), a mapping ``{degree: probability}``, a pmf
            sequence ``p(0), p(1), …``, or a graph (a qlib ``Graph`` or an
            undirected networkx graph: its empirical law, :meth:`from_graph`).
        name : str
            The parameter's name, for the error message.

        Returns
        -------
        DegreeDistribution

        Raises
        ------
        TypeError, ValueError
            If ``degrees`` cannot be read as a law (the message names ``name``).

        Examples
        --------
        >>> from qlib import DegreeDistribution
        >>> DegreeDistribution.coerce({3: 1.0}) == DegreeDistribution.point(3)
        True
        """
        if isinstance(degrees, cls):
            return degrees
        if hasattr(degrees, "indptr") or type(degrees).__module__.startswith("networkx"):
            return cls.from_graph(degrees)
        try:
            return cls(degrees)
        except (TypeError, ValueError) as err:
            raise type(err)(f"{name} must be a degree law (a DegreeDistribution, a mapping "
                            f"{{degree: probability}}, a pmf sequence or a graph): {err}") from None

    @classmethod
    def from_graph(cls, G) -> "DegreeDistribution":
        """Empirical degree law of a graph.

        Accepts a networkx graph, any object with a ``degree_distribution()``
        method (its result is passed to the constructor, or returned if it is
        already a ``DegreeDistribution``), or a CSR object with attribute
        ``indptr`` (degrees ``np.diff(indptr)``).
        """
        if hasattr(G, "degree_distribution") and callable(G.degree_distribution):
            res = G.degree_distribution()
            return res if isinstance(res, DegreeDistribution) else cls(res)
        if hasattr(G, "indptr"):
            return cls.from_degrees(np.diff(np.asarray(G.indptr)))
        try:
            import networkx as nx
        except ImportError:  # pragma: no cover
            nx = None
        if nx is not None and isinstance(G, nx.Graph):
            if G.number_of_nodes() == 0:
                raise ValueError("graph has no vertices")
            return cls.from_degrees(np.fromiter((d for _, d in G.degree()), dtype=np.int64))
        raise TypeError(f"cannot read degrees from {type(G).__name__}")
