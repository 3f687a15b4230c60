"""qbook.static_runs: rows of simulated cells, their tables, test families, figures, burn-in helpers."""
from types import SimpleNamespace as NS

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from qlib import DegreeDistribution, graphs, replicate  # noqa: E402
from qlib.meanfield import fluid, refined  # noqa: E402
from qbook import static_runs as sr  # noqa: E402
from qlib.stats import burn_in_family, simultaneous  # noqa: E402

ROW = dict(top="g", lam=0.5, R=1.2, se=0.01, fluid=1.1, refined=1.15, pair=1.16, local=1.2)


def test_mm1_start_has_the_geometric_mean_and_refuses_bad_input():
    x = sr.mm1_start(200_000, 0.8, seed=3)
    assert abs(x.mean() - 0.8 / 0.2) < 0.05 and x.min() == 0
    np.testing.assert_array_equal(x, sr.mm1_start(200_000, 0.8, seed=3))
    with pytest.raises(ValueError, match="lam"):
        sr.mm1_start(10, 1.0)
    with pytest.raises(ValueError, match="n must"):
        sr.mm1_start(0, 0.5)


def test_prediction_rows_hold_the_predictions():
    law = DegreeDistribution.point(2)
    rr = NS(mean_response_time=1.3, response_time_se=0.02)
    (row,) = sr.prediction_rows({("ring", 0.7): rr}, law, {"ring": law}, {"ring": 50}, {0.7: 1.4}, {("ring", 0.7): 1.5})
    assert row == dict(top="ring", lam=0.7, R=1.3, se=0.02, fluid=fluid.response_time(0.7, law),
                       refined=refined(0.7, law).at(50).response_time, pair=1.4, local=1.5)
    with pytest.raises(TypeError, match="refined_laws"):
        sr.prediction_rows({}, law, [], {}, {}, {})


def test_sim_table_and_its_bad_input():
    assert sr.sim_table([ROW], 2.0).splitlines()[-1].startswith("| g | 0.5 | 1.2000 ± 0.0200 |")
    with pytest.raises(ValueError, match="t must"):
        sr.sim_table([ROW], 0.0)
    with pytest.raises(TypeError, match="rows"):
        sr.sim_table(ROW, 2.0)


def test_families_are_the_simultaneous_tests():
    rows = [ROW, dict(ROW, R=1.25, local=1.2, fluid=1.0)]
    fam = sr.family_against(rows, "pair", 15)
    ref = simultaneous([1.2, 1.25], [0.01, 0.01], 15, target=[1.16, 1.16])
    np.testing.assert_array_equal(fam.t, ref.t)
    side = sr.midpoint_family(rows, "local", "fluid", 15)
    np.testing.assert_allclose(side.target, [1.15, 1.1])       # midpoints, local above fluid: sign +1
    flipped = sr.midpoint_family([dict(ROW, local=1.0, fluid=1.2)], "local", "fluid", 15)
    assert flipped.estimate[0] == -1.2 and flipped.target[0] == pytest.approx(-1.1)   # R on the far side
    with pytest.raises(ValueError, match="key"):
        sr.family_against(rows, "star", 15)


def test_plots_and_their_bad_input():
    fig, axs = plt.subplots(1, 2)
    sr.plot_predictions(axs, [ROW, dict(ROW, top="h")], ["g", "h"], 2.0)
    assert [a.get_title() for a in axs] == ["g", "h"] and axs[0].get_yscale() == "log"
    with pytest.raises(ValueError, match="axs"):
        sr.plot_predictions(axs, [ROW], ["g"], 2.0)
    grid = np.geomspace(0.1, 10, 4)
    with pytest.raises(ValueError, match="w must"):
        sr.plot_resampling(axs[0], {}, {}, grid, [1.0] * 4, 1.0, {"window": 1.0}, 1.0, sim_label="s")
    with pytest.raises(ValueError, match="pair must"):
        sr.plot_resampling(axs[0], {}, {}, grid, [1.0], 1.0, {"window": 1.0, "pair": 1.0}, 1.0, sim_label="s")
    plt.close(fig)


def test_burn_in_helpers_on_a_small_run():
    rr = replicate(graphs.ring(30), 0.5, 0.0, replications=3, seed=4, t_end=60, burn_in=20, batches=10)
    cells = {("ring", 0.5): rr, ("other", 0.5): rr}
    margin = {("ring", 0.5): 0.05, ("other", 0.5): 0.1}
    bi = burn_in_family({k: r.batch_response_times for k, r in cells.items()}, margin, relative=True)
    rel = sr.worst_cell_relative(bi, margin)
    eq = bi.checks[bi.worst].equivalence
    assert rel.margin == margin[bi.worst] and rel.m == 2 and rel.passed == bi.passed
    np.testing.assert_allclose(np.asarray(rel.achieved) / rel.margin, np.asarray(eq.achieved) / np.max(eq.margin))
    assert sr.relaxation_time(rr) >= rr.results[0].batch_length
    with pytest.raises(ValueError, match="batch means"):
        sr.relaxation_time(NS(results=[]))
