"""Names for the type annotations of qlib's public signatures (used under
``typing.TYPE_CHECKING`` only, so importing them costs nothing at run time)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Union

import numpy as np

if TYPE_CHECKING:
    import networkx as nx
    from qlib.graphs import Graph
    from qlib.meanfield.degrees import DegreeDistribution

#: a seed as every qlib function accepts one
Seed = Union[None, int, np.random.SeedSequence, np.random.Generator]
#: a qlib Graph or an undirected networkx graph
GraphLike = Union["Graph", "nx.Graph"]
#: a degree law: a DegreeDistribution, a mapping {degree: probability}, a pmf
#: sequence or a graph (its empirical law)
DegreeLike = Union["DegreeDistribution", Mapping[int, float], Sequence[float], "Graph", "nx.Graph"]
