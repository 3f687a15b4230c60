"""Deprecated path: use :mod:`qlib.meanfield.cavity` (``qlib.cavity`` keeps working and warns)."""
from qlib._compat import deprecated_alias

deprecated_alias(__name__, "qlib.meanfield.cavity", ['qlib.meanfield.cavity'])
