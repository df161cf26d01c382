"""kg.graph.stats's components agree with networkx's on any graph."""

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from kg.graph.stats import _components


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 40), st.lists(st.tuples(st.integers(0, 39), st.integers(0, 39)), max_size=60))
def test_components_are_networkx_components(n, pairs):
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from((u, v) for u, v in pairs if u < n and v < n)
    count, largest = _components({str(u): [str(v) for v in G[u]] for u in G})
    parts = list(nx.connected_components(G))
    assert count == len(parts)
    assert largest == ({str(u) for u in max(parts, key=len)} if parts else set())
