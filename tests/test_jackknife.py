"""qlib.stats.jackknife: delete-one jackknife over replications."""
import numpy as np
import pytest

from qlib.stats.jackknife import jackknife


def test_mean_gives_the_usual_standard_error():
    x = np.random.default_rng(1).normal(size=12)
    jk = jackknife(x, np.mean)
    assert np.isclose(jk.estimate, x.mean()) and np.isclose(jk.se, x.std(ddof=1) / np.sqrt(12))
    assert jk.df == 11 and jk.leave_one_out.shape == (12,)


def test_slope_of_a_fit_covers_the_truth():
    # slope of log y on log x through points shared by the replications
    rng = np.random.default_rng(2)
    xg = np.geomspace(1, 10, 5)
    cover = 0
    for _ in range(200):
        reps = xg ** -2.0 * np.exp(rng.normal(0, 0.1, (10, 5)))
        jk = jackknife(reps, lambda r: np.polyfit(np.log(xg), np.log(r.mean(axis=0)), 1)[0])
        cover += abs(jk.estimate + 2) < 2.262 * jk.se
    assert 0.88 < cover / 200 < 0.99


def test_bad_input():
    with pytest.raises(ValueError, match="replicates"):
        jackknife([1.0, 2.0], np.mean)
    with pytest.raises(TypeError, match="statistic"):
        jackknife([1.0, 2.0, 3.0], 3)
