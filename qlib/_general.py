"""Deprecated path: use :mod:`qlib.sim.general` (``qlib._general`` keeps working and warns)."""
from qlib._compat import deprecated_alias

deprecated_alias(__name__, "qlib.sim.general", ['qlib.sim.general'])
