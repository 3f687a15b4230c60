"""Deprecated path: use :mod:`qlib.meanfield.degrees` (``qlib.degrees`` keeps working and warns)."""
from qlib._compat import deprecated_alias

deprecated_alias(__name__, "qlib.meanfield.degrees", ['qlib.meanfield.degrees'])
