"""kg.graph.stats's components agree with networkx's on any graph."""

import networkx as nx
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kg.graph.stats import _components


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 40), st.lists(st.tuples(st.integers(0, 39), st.integers(0, 39)), max_size=60))
def test_components_are_networkx_components(n, pairs):
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from((u, v) for u, v in pairs if u < n and v < n)
    links = np.array([(u, v) for u, v in G.edges], dtype=np.int64).reshape(-1, 2)
    count, largest = _components(n, links)
    parts = list(nx.connected_components(G))
    assert count == len(parts)
    assert set(np.flatnonzero(largest)) == (max(parts, key=len) if parts else set())
