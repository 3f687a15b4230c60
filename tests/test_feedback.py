"""Feedback on long work: the one-line compile notice, exact.stationary's size line,
stationary_jsq's progress bar."""
import math

import pytest

from qlib import _feedback, exact, graphs


class _FakeDispatcher:
    signatures = []

    class _cache:
        class _cache_file:
            _index_path = "/nonexistent/kernel.nbi"


def test_compile_notice_once_when_the_cache_is_cold(capsys, monkeypatch):
    monkeypatch.setenv("QLIB_VERBOSE", "1")
    monkeypatch.setattr(_feedback, "_told", set())
    _feedback.compile_notice(_FakeDispatcher, "test")
    _feedback.compile_notice(_FakeDispatcher, "test")
    err = capsys.readouterr().err
    assert err.count("compiling the test kernels (once") == 1


def test_compile_notice_silent_when_switched_off(capsys, monkeypatch):
    monkeypatch.setenv("QLIB_VERBOSE", "0")
    monkeypatch.setattr(_feedback, "_told", set())
    _feedback.compile_notice(_FakeDispatcher, "test")
    assert capsys.readouterr().err == ""


def test_exact_stationary_says_its_size(capsys):
    exact.stationary(graphs.ring(3), 0.5, math.inf, 4, progress=True)
    assert "exact.stationary: about 35 states" in capsys.readouterr().err


def test_exact_stationary_warns_of_a_long_solve_before_it(capsys, monkeypatch):
    from qlib.exact import tiny
    monkeypatch.setattr(tiny, "_SLOW_UNKNOWNS", 10)
    exact.stationary(graphs.ring(3), 0.5, math.inf, 4, progress=True)
    assert "a lower truncation may do" in capsys.readouterr().err


def test_stationary_jsq_progress_runs():
    from qlib import stationary_jsq
    a = stationary_jsq(6, 1.0, progress=True)
    b = stationary_jsq(6, 1.0)
    assert a.p_wait == b.p_wait
