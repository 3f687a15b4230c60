"""``import qlib`` stays light: SciPy's stats, optimize and integrate load on first use.

(Speed is measured, not asserted: the CPU time of ``import qlib`` with
``-X importtime`` is in the CHANGELOG; here only what is imported is checked.)
"""
import subprocess
import sys


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
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
