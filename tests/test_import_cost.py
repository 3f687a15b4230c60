"""``import qlib`` stays light: the subpackages load on first use of a name,
SciPy's stats, optimize and integrate on first use of a function that needs them.

(Speed is measured, not asserted: the CPU time of ``import qlib`` with
``-X importtime`` is in the CHANGELOG; here only what is imported is checked.)
"""
import subprocess
import sys


def _run(code):
    """Run ``code`` in a fresh interpreter (so nothing is imported yet) and fail on its error."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]


def test_import_qlib_does_not_import_scipy_stats():
    code = ("import sys, qlib\n"
            "heavy = [m for m in ('scipy.stats', 'scipy.optimize', 'scipy.integrate') "
            "if m in sys.modules]\n"
            "assert not heavy, heavy\n"
            "from qlib.stats import t_quantile\n"
            "x = float(t_quantile(0.975, 10))\n"
            "assert 'scipy.stats' in sys.modules\n"
            "import scipy.stats\n"
            "assert x == float(scipy.stats.t.ppf(0.975, 10))\n")
    _run(code)


def test_import_qlib_is_lazy_and_names_resolve():
    """``import qlib`` loads no subpackage; each public name loads its own on first use."""
    code = ("import sys, qlib\n"
            "loaded = [m for m in ('numba', 'scipy', 'qlib.sim', 'qlib.meanfield') if m in sys.modules]\n"
            "assert not loaded, loaded\n"
            "assert set(qlib.__all__) <= set(dir(qlib))\n"
            "for name in qlib.__all__:\n"
            "    assert getattr(qlib, name) is not None, name\n"
            "assert 'numba' in sys.modules and qlib.simulate is qlib.sim.simulate\n"
            "try:\n"
            "    qlib.no_such_name\n"
            "except AttributeError as e:\n"
            "    assert 'no_such_name' in str(e)\n"
            "else:\n"
            "    raise AssertionError('no AttributeError')\n")
    _run(code)
