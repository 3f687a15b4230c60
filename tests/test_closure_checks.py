"""qbook.closure_checks: predictions against exact chains of small static graphs."""
import math

import pytest

from qlib import DegreeDistribution, graphs
from qbook import closure_checks as cx
from qlib.exact import stationary
from qlib.meanfield import fluid


def test_exact_with_change_is_the_chain_at_two_truncations():
    (R, change), = cx.exact_with_change({"C4": graphs.ring(4)}, [("C4", 0.5, 10)]).values()
    a = stationary(graphs.ring(4), 0.5, 0.0, truncation=8).little_response_time
    assert R == stationary(graphs.ring(4), 0.5, 0.0, truncation=10).little_response_time
    assert change == abs(R - a)
    with pytest.raises(ValueError, match="truncation"):
        cx.exact_with_change({"C4": graphs.ring(4)}, [("C4", 0.5, 2)])
    with pytest.raises(TypeError, match="graphs"):
        cx.exact_with_change([graphs.ring(4)], [])


def test_prediction_errors_use_the_ring_only_on_two_regular_graphs():
    gr = {"C4": graphs.ring(4), "K13": graphs.from_edges(4, [(0, 1), (0, 2), (0, 3)])}
    err = cx.prediction_errors({("C4", 0.5): (1.5, 0.0), ("K13", 0.5): (1.6, 0.0)}, gr, {0.5: 1.2}, {0.5: 1.3})
    assert err["C4", 0.5]["pair"] == 1.2 / 1.5 - 1 and err["C4", 0.5]["window"] == 1.3 / 1.5 - 1
    assert math.isnan(err["K13", 0.5]["pair"]) and math.isnan(err["K13", 0.5]["window"])
    law = DegreeDistribution.from_graph(gr["K13"])
    assert err["K13", 0.5]["fluid"] == fluid.response_time(0.5, law) / 1.6 - 1
    table = cx.exact_table({("K13", 0.5): (1.6, 0.0)}, {("K13", 0.5): err["K13", 0.5]})
    assert table.splitlines()[-1].endswith("| — | — |")


def test_the_two_exact_cases_of_the_pair():
    assert cx.independent_closure_gap([0.7], [1, 3]) < 1e-9
    assert cx.two_server_gap([0.7]) < 1e-10
    with pytest.raises(ValueError, match="levels"):
        cx.independent_closure_gap([0.7], [2], levels=0)
    with pytest.raises(ValueError, match="truncation"):
        cx.two_server_gap([0.7], truncation=1)
