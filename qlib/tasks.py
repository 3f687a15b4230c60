"""Deprecated path: use :mod:`qlib.halfin_whitt.tasks` (``qlib.tasks`` keeps working and warns)."""
from qlib._compat import deprecated_alias

deprecated_alias(__name__, "qlib.halfin_whitt.tasks", ['qlib.halfin_whitt.tasks'])
