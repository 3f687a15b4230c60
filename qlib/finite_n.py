"""Deprecated path: use :mod:`qlib.meanfield.refined` (``qlib.finite_n`` keeps working and warns)."""
from qlib._compat import deprecated_alias

deprecated_alias(__name__, "qlib.meanfield.refined", ['qlib.meanfield.refined'])
