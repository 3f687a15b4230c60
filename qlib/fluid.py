"""Deprecated path: use :mod:`qlib.meanfield.fluid` (``qlib.fluid`` keeps working and warns)."""
from qlib._compat import deprecated_alias

deprecated_alias(__name__, "qlib.meanfield.fluid", ['qlib.meanfield.fluid', 'qlib.meanfield.tails'])
