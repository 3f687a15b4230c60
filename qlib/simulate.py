"""Deprecated path: use :mod:`qlib.sim` (``qlib.simulate`` keeps working and warns)."""
from qlib._compat import deprecated_alias
from qlib.sim.run import simulate as _simulate

deprecated_alias(__name__, "qlib.sim", ['qlib.sim.rng', 'qlib.sim.kernel', 'qlib.sim.result', 'qlib.sim.start', 'qlib.sim.run', 'qlib.sim.replicate'], call=_simulate)
