"""Deprecated path: use :mod:`qlib.sim.service` (``qlib.service`` keeps working and warns)."""
from qlib._compat import deprecated_alias

deprecated_alias(__name__, "qlib.sim.service", ['qlib.sim.service'])
