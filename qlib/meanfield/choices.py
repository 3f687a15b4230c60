"""The fluid limit of the sampled-neighbour policy (``choices = k``) under full resampling (μ → ∞).

The policy: a task arriving at a position of degree ``d`` compares the
server there with the servers at ``k − 1`` distinct neighbours drawn
uniformly (all ``d`` of them when ``d < k − 1``) and joins a shortest, ties
uniform.  Under resampling at rate ``μ → ∞`` the servers at the positions it
looks at are a uniform random set of ``m(d) = min(k, d + 1)`` distinct
servers: a uniform subset of the uniform ``(d + 1)``-set that the closed
neighbourhood maps to.  In the limit ``n → ∞`` sampling without replacement
is sampling with replacement, and the fluid ODE is

    dq(i)/dt = λ Σ_d p(d) [q(i−1)^{m(d)} − q(i)^{m(d)}] − [q(i) − q(i+1)],

which is the closed-neighbourhood fluid of :mod:`qlib.meanfield.fluid` for
the *looked-at degree* ``D' = min(D, k − 1)``: a vertex of degree ``d`` with
``k`` choices behaves as one of degree ``min(d, k − 1)`` that asks all its
neighbours.  Its equilibrium solves ``q(i) = λ Σ_d p(d) q(i−1)^{m(d)}``
(the flow up through level ``i`` equals the flow down), ``q(1) = λ``.  For a
``d``-regular graph with ``k ≤ d + 1`` it is the supermarket model with
``k`` choices, ``q(i) = λ^{(k^i − 1)/(k − 1)}``; with ``k ≥ d + 1`` the
sampled and the full policy coincide.
"""
from __future__ import annotations

import math

import numpy as np

from qlib import _validate as V
from qlib.meanfield import fluid
from qlib.meanfield.degrees import DegreeDistribution

__all__ = ["looked_degrees", "equilibrium", "response_time"]


def _check(degrees, choices):
    if not isinstance(degrees, DegreeDistribution):
        raise TypeError("degrees must be a qlib.DegreeDistribution, got "
                        f"{type(degrees).__name__}")
    if isinstance(choices, (bool, np.bool_)) or not isinstance(choices, (int, np.integer)):
        raise TypeError(f"choices must be an int >= 2, got {type(choices).__name__}")
    if choices < 2:
        raise ValueError(f"choices must be an int >= 2, got {choices}")
    return int(choices)


def looked_degrees(degrees: DegreeDistribution, choices: int) -> DegreeDistribution:
    """Law of the number of neighbours an arrival looks at, ``min(D, k − 1)``.

    Parameters
    ----------
    degrees : DegreeDistribution
        Degree law ``p`` of the graph.
    choices : int
        ``k >= 2``: the arrival's server and ``k − 1`` sampled neighbours.

    Returns
    -------
    DegreeDistribution
        The law of ``min(D, k − 1)``; with it, the closed-neighbourhood fluid
        of :mod:`qlib.meanfield.fluid` is the sampled policy's fluid at μ = ∞.

    Raises
    ------
    TypeError
        If ``degrees`` is not a DegreeDistribution or ``choices`` not an int.
    ValueError
        If ``choices < 2``.

    Examples
    --------
    >>> from qlib import DegreeDistribution
    >>> from qlib.meanfield.choices import looked_degrees
    >>> looked_degrees(DegreeDistribution({1: 0.5, 4: 0.5}), 2).pmf.tolist()
    [0.0, 1.0]
    """
    k = _check(degrees, choices)
    pmf = np.asarray(degrees.pmf, float)
    out = np.zeros(min(pmf.size, k))
    for d, p in enumerate(pmf):
        out[min(d, k - 1)] += p
    return DegreeDistribution({d: float(p) for d, p in enumerate(out) if p > 0})


def equilibrium(lam: float, degrees: DegreeDistribution, choices: int) -> np.ndarray:
    """Fluid equilibrium ``q*(0..)`` of the ``choices = k`` policy at μ = ∞.

    Parameters
    ----------
    lam : float
        ``λ ∈ (0, 1)``.
    degrees : DegreeDistribution
        Degree law ``p``.
    choices : int
        ``k >= 2``.

    Returns
    -------
    numpy.ndarray
        ``q*(0) = 1, q*(1) = λ, q*(i) = λ Σ_d p(d) q*(i−1)^{min(k, d+1)}``,
        down to the level where it falls below double precision.

    Raises
    ------
    TypeError, ValueError
        On a bad ``degrees`` or ``choices`` (see :func:`looked_degrees`) or
        ``lam`` outside ``(0, 1)``.

    Examples
    --------
    >>> from qlib import DegreeDistribution
    >>> from qlib.meanfield.choices import equilibrium
    >>> q = equilibrium(0.9, DegreeDistribution.point(4), 2)
    >>> [round(float(x), 6) for x in q[:4]]
    [1.0, 0.9, 0.729, 0.478297]
    """
    V.probability(lam, "lam", open=True)
    return fluid.equilibrium(float(lam), looked_degrees(degrees, choices))


def response_time(lam: float, degrees: DegreeDistribution, choices: int) -> float:
    """Fluid mean response time ``R = Σ_{i≥1} q*(i) / λ`` of the ``choices = k`` policy at μ = ∞.

    Parameters
    ----------
    lam, degrees, choices
        As for :func:`equilibrium`.

    Returns
    -------
    float

    Examples
    --------
    >>> from qlib import DegreeDistribution
    >>> from qlib.meanfield.choices import response_time
    >>> round(response_time(0.9, DegreeDistribution.point(3), 2), 4)
    2.6141
    """
    q = equilibrium(lam, degrees, choices)
    return math.fsum(q[1:].tolist()) / float(lam)
