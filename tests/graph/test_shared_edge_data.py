"""The co-occurrence edges' shared data (`kg.graph.build.EdgeData`): the edges whose count, association and
relatedness agree hold one read-only dict, and the graph is otherwise the one networkx's own `add_edges_from` makes."""

from __future__ import annotations

import copy
import pickle

import networkx as nx
import pytest

import kg.graph.build as build
from kg.graph.build import EdgeData, build_graph
from tests.graph.test_cooccurrence_later import inputs


def cooccurs(G: nx.Graph) -> list[dict]:
    return [d for _, _, d in G.edges(data=True) if d.get("kind") == "cooccurs"]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_graph_is_the_one_networkx_makes_with_a_dict_an_edge(seed, monkeypatch):
    shared = build_graph(*inputs(seed))
    monkeypatch.setattr(build, "add_edges_as_they_are", lambda G, edges: G.add_edges_from(edges))
    copied = build_graph(*inputs(seed))
    assert len(cooccurs(copied)) > 100
    assert all(type(d) is dict for d in cooccurs(copied))
    assert nx.node_link_data(shared, edges="links") == nx.node_link_data(copied, edges="links")
    assert [list(shared.adj[n]) for n in shared] == [list(copied.adj[n]) for n in copied]  # neighbours in order


def test_edges_with_the_same_data_share_one_dict():
    G = build_graph(*inputs(1))
    data = cooccurs(G)
    distinct = {(d["count"], d["association"], d["related"]) for d in data}
    assert all(isinstance(d, EdgeData) for d in data)
    assert len({id(d) for d in data}) == len(distinct) < len(data)


def test_shared_data_cannot_be_changed_but_a_copy_of_the_graph_can():
    G = build_graph(*inputs(2))
    (u, v, d), *_ = [(u, v, d) for u, v, d in G.edges(data=True) if d["kind"] == "cooccurs"]
    for change in (lambda: d.__setitem__("count", 9), lambda: d.update(count=9), lambda: d.pop("count"),
                   lambda: d.setdefault("weight", 1), lambda: d.clear(), lambda: d.popitem(),
                   lambda: d.__delitem__("count"), lambda: G.add_edge(u, v, weight=2)):
        with pytest.raises(TypeError, match="G.copy"):
            change()
    assert d["kind"] == "cooccurs" and "weight" not in d
    H = G.copy()
    H.edges[u, v]["count"] = 99
    assert H.edges[u, v]["count"] == 99 and G.edges[u, v]["count"] == d["count"] != 99
    assert all(type(e) is dict for e in cooccurs(H))


def test_copies_and_pickles_keep_the_data_and_its_sharing():
    G = build_graph(*inputs(3))
    for other in (copy.deepcopy(G), pickle.loads(pickle.dumps(G))):
        assert nx.node_link_data(other, edges="links") == nx.node_link_data(G, edges="links")
        data = cooccurs(other)
        assert all(isinstance(d, EdgeData) for d in data)
        assert len({id(d) for d in data}) == len({id(d) for d in cooccurs(G)})
    directed = G.to_directed()  # networkx copies each edge's data into a dict of its own, as G.copy() does
    assert all(type(d) is dict for _, _, d in directed.edges(data=True))
    assert nx.node_link_data(directed.to_undirected(), edges="links") == nx.node_link_data(G, edges="links")


def test_an_edge_there_already_keeps_its_data_merged_in_a_dict_of_its_own():
    G = nx.Graph()
    G.add_edge("a", "b", kind="other", note="kept")
    G.add_node("c")
    shared = EdgeData(kind="cooccurs", count=2, association=0.5, related=False)
    build.add_edges_as_they_are(G, [("a", "b", shared), ("a", "c", shared), ("b", "c", shared)])
    assert G.edges["a", "b"] == {"kind": "cooccurs", "note": "kept", "count": 2, "association": 0.5, "related": False}
    assert type(G.edges["a", "b"]) is dict
    assert G.edges["a", "c"] is shared and G.edges["b", "c"] is shared
    assert list(G.adj["c"]) == ["a", "b"]
    with pytest.raises(ValueError, match="no node 'd'"):
        build.add_edges_as_they_are(G, [("a", "d", shared)])


def test_networkx_cached_conversions_are_dropped_when_the_edges_are_added():
    G = nx.Graph([("a", "b")])
    G.__networkx_cache__["stale"] = "a conversion of the graph before its new edges"
    build.add_edges_as_they_are(G, [("a", "b", EdgeData(kind="cooccurs"))])
    assert "stale" not in G.__networkx_cache__


def test_subject_edges_share_equal_scores_and_phrases_as_given():
    G = build_graph(*inputs(1))
    data = [d for _, _, d in G.edges(data=True) if d["kind"] == "subject"]
    assert len(data) > 100
    assert len({id(d["score"]) for d in data}) == len({d["score"] for d in data}) < len(data)
    assert len({id(d["phrase"]) for d in data}) == len({d["phrase"] for d in data}) < len(data)
    shared: dict[float, float] = {}
    assert [build._one_of(shared, x) for x in (0.5, 0.5, -0.0, 0.0, 1, 1.0, None)] == [0.5, 0.5, -0.0, 0.0, 1, 1.0, None]
    assert [type(x) for x in (build._one_of(shared, 1), build._one_of(shared, 1.0))] == [int, float]
    assert str(build._one_of(shared, -0.0)) == "-0.0" and build._one_of(shared, float("2.5")) is build._one_of(shared, float("2.50"))
