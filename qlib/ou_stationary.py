"""Deprecated path: use :mod:`qlib.halfin_whitt.stationary` (``qlib.ou_stationary`` keeps working and warns)."""
from qlib._compat import deprecated_alias

deprecated_alias(__name__, "qlib.halfin_whitt.stationary", ['qlib.halfin_whitt.stationary'])
