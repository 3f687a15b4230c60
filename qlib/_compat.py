"""Old import paths: thin modules that re-export a moved module and warn once."""
from __future__ import annotations

import importlib
import sys
import types
import warnings


class _CallableModule(types.ModuleType):
    """A module that can be called (``qlib.simulate`` is also a function)."""

    def __call__(self, *args, **kwargs):
        return self.__call_target__(*args, **kwargs)


def deprecated_alias(name, new, sources, call=None):
    """Fill the module ``name`` with every name of ``sources`` and warn.

    Parameters
    ----------
    name : str
        The old module path (``__name__`` of the shim).
    new : str
        The path readers should import from instead (for the message).
    sources : list of str
        Modules whose names (public and private) the old path re-exports.
    call : callable, optional
        Make the old module callable (it shadowed a function of that name).
    """
    mod = sys.modules[name]
    warnings.warn(f"{name} is deprecated: import from {new} instead "
                  f"(the old path keeps working)", DeprecationWarning, stacklevel=3)
    for src in sources:
        for k, v in vars(importlib.import_module(src)).items():
            if not k.startswith("__"):
                setattr(mod, k, v)
    if call is not None:
        mod.__class__ = _CallableModule
        mod.__call_target__ = call
