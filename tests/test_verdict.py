"""qlib.stats.verdict: one-line verdicts that can fail, and the chapter's checks table."""
import math

import pytest

from qlib.stats import equivalence, simultaneous
from qlib.stats.verdict import Check, Checks, level_one_check


def test_equivalence_line_passes_and_fails():
    ok = Check.from_equivalence(equivalence(0.004, se=0.001, df=9, margin=0.02), "burn-in is over",
                                percent=True)
    assert ok.passed and ok.line().startswith("✓ burn-in is over: within")
    bad = Check.from_equivalence(equivalence(0.019, se=0.004, df=9, margin=0.02), "agrees")
    assert not bad.passed and "NOT shown" in bad.line()
    with pytest.raises(AssertionError, match="NOT shown"):
        bad.require()


def test_significance_never_says_agree():
    fam = simultaneous([0.5, 0.2], se=[0.01, 0.01], df=9, target=0.2)
    c = Check.from_family(fam, "equals the exact value")
    assert not c.passed and "REJECTED" in c.line() and "agree" not in c.line()
    assert c.value == pytest.approx(30.0)


def test_bound_and_estimate():
    assert Check.bound("truncation", -3e-9, 1e-8).passed
    assert not Check.bound("truncation", 2e-8, 1e-8).passed
    with pytest.raises(ValueError, match="tolerance"):
        Check.bound("x", 1.0, 0.0)
    e = Check.estimate("leftover bias", 0.01, 0.002)
    assert e.passed and math.isnan(e.threshold)
    # an estimate is not a passed test: neutral mark in its line and its table row
    assert e.mark == "–" and e.line().startswith("– leftover bias") and "✓" not in e.line()
    checks = Checks("chap", glue=False)
    checks.add("audit", e)
    assert checks.markdown().splitlines()[2].endswith("– |")


def test_checks_collects_glues_and_fails():
    checks = Checks("chap", glue=False)
    checks.add("audit", Check.bound("x", 2.0, 1.0), required=False)
    with pytest.raises(AssertionError):
        checks.add("hard", Check.bound("y", 2.0, 1.0))
    with pytest.raises(ValueError, match="already"):
        checks.add("audit", Check.bound("x", 0.0, 1.0))
    assert len(checks) == 2 and not checks.passed
    md = checks.markdown().splitlines()
    assert md[0].startswith("| check |") and len(md) == 4 and md[2].endswith("✗ |")
    with pytest.raises(TypeError):
        checks.add("z", "not a check")
    with pytest.raises(TypeError):
        Checks("")


def test_level_one_check():
    assert level_one_check([0.899, 0.902], [0.001, 0.0015], 9, 0.9).passed
    assert not level_one_check([0.85, 0.902], [0.001, 0.0015], 9, 0.9).passed


def test_bad_kind():
    with pytest.raises(ValueError, match="kind"):
        Check("c", "vibes", 0.0, 1.0, 1.0, True)


def test_leftover_bias_formula():
    from qlib.stats import leftover_bias
    import numpy as np
    # the halves of a window over a·e^{-t/τ}: D and the bias, computed directly
    a, tau, W = 1.0, 3.0, 4.0
    mean = lambda s, e: a * tau * (np.exp(-s / tau) - np.exp(-e / tau)) / (e - s)  # noqa: E731
    D, bias = mean(0, W / 2) - mean(W / 2, W), mean(0, W)
    assert leftover_bias(D, W, tau) == pytest.approx(bias, rel=1e-12)
    assert leftover_bias(1.0, 1000.0, 1.0) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="tau"):
        leftover_bias(1.0, 1.0, 0.0)


def test_sigma_upper_covers():
    import numpy as np
    from qlib.stats import sigma_upper
    rng = np.random.default_rng(3)
    s = rng.standard_normal((20000, 4)).std(axis=1, ddof=1)
    assert np.mean(sigma_upper(s, 4, level=0.9) >= 1.0) == pytest.approx(0.9, abs=0.01)
    with pytest.raises(ValueError, match="r_pilot"):
        sigma_upper(1.0, 1)


def test_replications_for_equivalence_resolves():
    from qlib.stats import replications_for_equivalence, equivalence
    r = replications_for_equivalence(2.0, 1.0)
    res = lambda r: float(equivalence(0.0, 2.0 / r ** 0.5, r - 1, 1.0, method="iut").resolvable)  # noqa: E731
    assert res(r) <= 1.0 < res(r - 1)


def test_checks_table_escapes_pipes_in_claims():
    from qlib.stats import Check, Checks
    cs = Checks("t", glue=None)
    cs.add("abs", Check.bound("largest |x| small", 0.1, 1.0))
    body = cs.markdown().splitlines()[2]
    assert body.count("|") - body.count("\\|") == 7
