import math

import networkx as nx
import numpy as np
import pytest
import sympy
from hypothesis import given, settings, strategies as st

from qlib.meanfield.degrees import DegreeDistribution as D


def test_dict_and_sequence_agree():
    a = D({0: 0.25, 2: 0.75})
    b = D([0.25, 0.0, 0.75])
    assert a == b and hash(a) == hash(b)
    assert a.mean == 1.5 and a.min_degree == 0 and a.max_degree == 2
    assert list(a.pmf) == [0.25, 0.0, 0.75]
    assert "DegreeDistribution" in repr(a)
    assert D(eval(repr(a)[len("DegreeDistribution("):-1])) == a


def test_immutable():
    a = D.point(2)
    with pytest.raises(ValueError):
        a.pmf[0] = 1.0
    with pytest.raises(AttributeError):
        a._pmf = None


def test_trailing_zeros_trimmed():
    a = D([0.0, 1.0, 0.0, 0.0])
    assert a.max_degree == 1 and a == D.point(1)


@pytest.mark.parametrize(
    "bad, exc",
    [
        ({}, ValueError),
        ([], ValueError),
        ({-1: 1.0}, ValueError),
        ({1.5: 1.0}, TypeError),
        ({1: 0.5}, ValueError),
        ([0.5, 0.6], ValueError),
        ([1.5, -0.5], ValueError),
        ([float("nan"), 1.0], ValueError),
        ([float("inf")], ValueError),
        (["a"], TypeError),
        ("abc", TypeError),
        (3, TypeError),
        (None, TypeError),
    ],
)
def test_bad_inputs(bad, exc):
    with pytest.raises(exc):
        D(bad)


def test_pgf_numeric_and_symbolic():
    a = D({0: 0.1, 1: 0.2, 3: 0.7})
    x = np.linspace(0, 1, 11)
    assert np.allclose(a.pgf(x), 0.1 + 0.2 * x + 0.7 * x**3, rtol=1e-15, atol=0)
    assert a.pgf(1.0) == pytest.approx(1.0, abs=1e-15)
    s = sympy.Symbol("x")
    expr = a.pgf_symbolic(s)
    assert sympy.simplify(expr - (sympy.Rational(1, 10) + sympy.Rational(1, 5) * s + sympy.Rational(7, 10) * s**3)) == 0
    assert np.allclose(a.pgf_derivative(x), 0.2 + 2.1 * x**2)


def test_point():
    a = D.point(3)
    assert a.mean == 3 and a.min_degree == a.max_degree == 3
    assert a.pgf(0.5) == 0.125
    with pytest.raises(ValueError):
        D.point(-1)


def test_poisson():
    a = D.poisson(2.0, 30)
    assert a.pmf.sum() == pytest.approx(1.0, abs=1e-14)
    assert a.pmf[3] == pytest.approx(math.exp(-2) * 8 / 6, rel=1e-9)
    b = D.poisson(2.0, 2)
    assert np.allclose(b.pmf, np.array([1, 2, 2]) / 5)
    assert D.poisson(0, 5) == D.point(0)
    with pytest.raises(ValueError):
        D.poisson(-1, 3)


def test_mixture():
    a = D.mixture([0.5, 0.5], [D.point(2), D.point(3)])
    assert a == D({2: 0.5, 3: 0.5})
    assert a.mean == 2.5
    with pytest.raises(ValueError):
        D.mixture([0.5, 0.4], [D.point(2), D.point(3)])
    with pytest.raises(TypeError):
        D.mixture([1.0], [{2: 1.0}])


def test_from_degrees_and_graph():
    assert D.from_degrees([2, 2, 3, 3]) == D({2: 0.5, 3: 0.5})
    assert D.from_graph(nx.cycle_graph(10)) == D.point(2)
    star = D.from_graph(nx.star_graph(4))  # hub of degree 4, four leaves
    assert star == D({1: 0.8, 4: 0.2})

    class CSR:
        indptr = np.array([0, 2, 4, 6])

    assert D.from_graph(CSR()) == D.point(2)

    class Dd:
        def degree_distribution(self):
            return {1: 1.0}

    assert D.from_graph(Dd()) == D.point(1)
    with pytest.raises(TypeError):
        D.from_graph(42)
    with pytest.raises(ValueError):
        D.from_degrees([-1, 2])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=7).filter(lambda w: sum(w) > 0.01))
def test_random_laws(w):
    p = np.array(w) / math.fsum(w)
    a = D(p)
    assert a.pgf(1.0) == pytest.approx(1.0, abs=1e-12)
    assert a.mean == pytest.approx(float(np.dot(np.arange(len(p)), p)), abs=1e-12)
    assert a == D(dict(enumerate(p)))


def test_from_qlib_graphs():
    # the double star is the one topology of the paper whose law is not a point
    # mass: p_n(2) = (n-2)/n, p_n(n-1) = 2/n (counts divided by n, exactly)
    from qlib import graphs

    n = 12
    assert D.from_graph(graphs.ring(n)) == D.point(2)
    assert D.from_graph(graphs.cliques(n, 3)) == D.point(2)
    assert D.from_graph(graphs.double_star(n)) == D({2: (n - 2) / n, n - 1: 2 / n})
    assert D.from_graph(graphs.empty(5)) == D.point(0)
    G = graphs.erdos_renyi(1000, 2.0, seed=1)
    assert D.from_graph(G) == D.from_degrees(G.degrees)
    assert D.from_graph(G.to_networkx()) == D.from_graph(G)


def test_pgf_symbolic_exact_rationals():
    x = sympy.Symbol("x")
    a = D({0: 0.5, 4: 0.5})
    assert sympy.expand(a.pgf_symbolic(x) - (x**4 + 1) / 2) == 0
    assert a.pgf_symbolic(x).subs(x, 1) == 1
    assert D.point(3).pgf_symbolic(x) == x**3
