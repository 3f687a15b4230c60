"""Deprecated path: use :mod:`qlib.halfin_whitt` (``qlib.heavy_traffic`` keeps working and warns)."""
from qlib._compat import deprecated_alias

deprecated_alias(__name__, "qlib.halfin_whitt", ['qlib.halfin_whitt._common', 'qlib.halfin_whitt.simulate', 'qlib.halfin_whitt.diffusion', 'qlib.halfin_whitt.transient', 'qlib.halfin_whitt.chain', 'qlib.halfin_whitt.classical', 'qlib.halfin_whitt.jsq_d'])
