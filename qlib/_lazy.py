"""SciPy submodules on first use: ``import qlib`` does not pay for scipy.stats, optimize, integrate."""
import importlib


class _Lazy:
    """Stands for a module; imports it on the first attribute read."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        return getattr(importlib.import_module(self._name), attr)


#: ``scipy.stats``, ``scipy.optimize``, ``scipy.integrate``, imported when first used
scipy_stats = _Lazy("scipy.stats")
scipy_optimize = _Lazy("scipy.optimize")
scipy_integrate = _Lazy("scipy.integrate")
