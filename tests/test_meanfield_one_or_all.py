"""qbook.one_or_all: the stored runs of both policies, the price of asking one, the pair errors."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from qlib.meanfield import DegreeDistribution, fluid, pair_approximation  # noqa: E402
from qbook import one_or_all as oa  # noqa: E402
from qlib.meanfield.choices import response_time as choices_R  # noqa: E402
from qlib.meanfield.pair_choices import pair_approximation_choices  # noqa: E402
from qlib.stats import t_quantile  # noqa: E402

ONE = {"replications": 5, "rows": [dict(graph="g", lam=0.5, sim=2.0, sim_low=1.8, sim_high=2.2)],
       "burn_in_check": {"t_end": 40, "burn_in": 20, "replications": 3,
                         "rows": [dict(graph="g", lam=0.5, sim=1.9, sim_low=1.8, sim_high=2.0, main_sim=2.0)]}}
EVERY = {"replications": 4, "t_end": 20, "burn_in": 10,
         "rows": [dict(graph="g", degree=3, lam=0.5, sim=1.5, sim_se=0.02, ci_half_rel=0.05,
                       rep_q1=[0.4, 0.5, 0.6, 0.5], batch_response=[[1.0, 2.0], [1.5, 1.5]])]}
for r in ONE["rows"]:
    r["ci_half_rel"] = 0.1


def test_policy_cells_recover_the_standard_error_from_the_interval():
    cells, deg = oa.policy_cells(ONE, EVERY)
    m, se, df = cells["one", "g", 0.5]
    assert (m, df) == (2.0, 4) and deg == {"g": 3}
    assert se == pytest.approx(0.2 / t_quantile(0.975, 4), rel=1e-14)
    assert cells["all", "g", 0.5] == (1.5, 0.02, 3)


def test_pair_response_time_is_the_solvers():
    assert oa.pair_response_time(0.7, 3, "all") == pair_approximation(0.7, 3).response_time
    assert oa.pair_response_time(0.7, 3, "one") == pair_approximation_choices(0.7, 3, choices=2).response_time


def test_supermarket_gap_is_within_rounding_and_a_wrong_law_is_caught():
    err, tol = oa.supermarket_gap(0.95, DegreeDistribution.point(4))
    assert 0 <= err <= tol < 1e-8
    with pytest.raises(TypeError, match="law"):
        oa.supermarket_gap(0.9, 3)


def test_price_of_one_against_a_hand_computation():
    cells = {("one", "g", 0.5): (3.0, 0.03, 9), ("all", "g", 0.5): (2.0, 0.04, 4)}
    ratio, half = oa.price_of_one(cells, ["g"], [0.5])["g", 0.5]
    assert ratio == 1.5
    assert half == pytest.approx(float(t_quantile(0.975, 4)) * 1.5 * np.hypot(0.01, 0.02), rel=1e-14)


def test_fluid_price_is_one_at_degree_one_and_the_ratio_of_the_fluids():
    assert oa.fluid_price(0.8, 1) == 1.0
    law = DegreeDistribution.point(3)
    assert oa.fluid_price(0.8, 3) == pytest.approx(choices_R(0.8, law, 2) / fluid.response_time(0.8, law))


def test_pair_errors_and_error_arrays():
    cells = {("one", "ring", 0.5): (1.4, 0.001, 9), ("all", "ring", 0.5): (1.2, 0.002, 9)}
    err, rows = oa.pair_errors(cells, {"ring": 2}, ["ring"], [0.5])
    pr = oa.pair_response_time(0.5, 2, "all")
    assert err["all", "ring", 0.5] == (float(pr / 1.2 - 1), pr * 0.002 / 1.2**2, 9)
    assert rows[0]["pair error, all"] == f"{pr / 1.2 - 1:+.2%}"
    e, s, df = oa.error_arrays(err, "all", [("ring", 0.5)])
    assert e[0] == err["all", "ring", 0.5][0] and df[0] == 9
    with pytest.raises(ValueError, match="policy"):
        oa.error_arrays(err, "two", [("ring", 0.5)])


def test_burn_in_shift_halves_busy_fraction_design():
    cells, _ = oa.policy_cells(ONE, EVERY)
    shift, se = oa.longer_burn_in_shift(ONE["burn_in_check"], cells)
    assert shift[0] == pytest.approx(2.0 / 1.9 - 1)
    assert se[0] > cells["one", "g", 0.5][1] / 1.9          # the rerun's error adds to the main one's
    np.testing.assert_array_equal(oa.relative_halves(EVERY)["g", 0.5], np.array([[1.0, 2.0], [1.5, 1.5]]) / 1.5)
    m, s, df, lam = oa.busy_fraction(EVERY)
    assert m[0] == pytest.approx(0.5) and df == 3 and lam[0] == 0.5
    assert s[0] == pytest.approx(np.std([0.4, 0.5, 0.6, 0.5], ddof=1) / 2)
    d = oa.design_numbers(ONE, EVERY, {"replications": 7})
    assert d["ci-max"] == 0.1 and d["reps-confirm"] == 7 and d["bi-t-end"] == 40


@pytest.mark.parametrize("call", [lambda: oa.policy_cells([], EVERY), lambda: oa.price_of_one(None, [], []),
                                  lambda: oa.relative_halves("x"), lambda: oa.busy_fraction(3),
                                  lambda: oa.design_numbers(ONE, EVERY, None)])
def test_non_mappings_are_refused(call):
    with pytest.raises(TypeError, match="must be a mapping"):
        call()


def test_bad_policy_and_labels_are_refused():
    with pytest.raises(ValueError, match="policy"):
        oa.pair_response_time(0.5, 2, "some")
    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match="labels"):
        oa.plot_price(ax, {}, {}, ["a", "b"], [0.5], ["a"])
    plt.close(fig)


def test_stored_runs_agree_on_the_design():
    one, every, confirm = oa.stored_runs()
    cells, deg = oa.policy_cells(one, every)
    assert {k[1:] for k in cells if k[0] == "one"} == {k[1:] for k in cells if k[0] == "all"}
    assert set(deg.values()) <= {2, 3, 4}
    with pytest.raises(FileNotFoundError):
        oa.stored_runs("/nonexistent")


def test_plots_draw_one_artist_per_series():
    cells, deg = oa.policy_cells(ONE, EVERY)
    cells["one", "g", 0.9], cells["all", "g", 0.9] = (3.0, 0.1, 4), (2.0, 0.1, 3)
    fig, (a, b, c) = plt.subplots(1, 3)
    oa.plot_policies(a, cells, "g", 3, [0.4, 0.5], [0.5])
    assert len(a.get_legend().get_texts()) == 4
    oa.plot_price(b, {("g", 0.5): (1.2, 0.01)}, {("g", 0.5): 1.1}, ["g"], [0.5], ["g"])
    assert [t.get_text() for t in b.get_legend().get_texts()] == ["μ = ∞", "λ = 0.5"]
    oa.plot_messages(c, cells, deg, ["g"], 0.9)
    assert c.get_ylabel().endswith("0.9$")
    plt.close(fig)
