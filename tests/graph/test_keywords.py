"""The authors' keywords on the paper nodes (docs/model.md) and in graph.json."""

from __future__ import annotations

import json

from fixture_graph import P1, P2, P4, fixture_graph

from kg.graph.build import paper_node
from kg.graph.io import graph_to_json, load_graph

KEYWORDS = {P1: ("zeroth-order optimization", "LLMs", "LLMs", "Zeroth-order  optimization", "memory"), P4: ("federated learning",)}


def test_a_paper_carries_its_keywords_in_input_order_without_repeats():
    G = fixture_graph(keywords=KEYWORDS)
    assert G.nodes[paper_node(P1)]["keywords"] == ["zeroth-order optimization", "LLMs", "memory"]
    assert G.nodes[paper_node(P4)]["keywords"] == ["federated learning"]


def test_a_paper_without_keywords_is_as_before():
    """No empty list: the attribute is absent, and nothing else of the graph changes."""
    plain, G = fixture_graph(), fixture_graph(keywords=KEYWORDS)
    assert "keywords" not in G.nodes[paper_node(P2)]
    assert not any("keywords" in d for _, d in plain.nodes(data=True))
    assert {n: {k: v for k, v in d.items() if k != "keywords"} for n, d in G.nodes(data=True)} == dict(plain.nodes(data=True))
    assert list(G.edges(data=True)) == list(plain.edges(data=True)) and G.graph == plain.graph


def test_graph_json_carries_the_keywords(tmp_path):
    G = fixture_graph(keywords=KEYWORDS)
    nodes = {n["id"]: n for n in json.loads(graph_to_json(G))["nodes"]}
    assert nodes[paper_node(P1)]["keywords"] == ["zeroth-order optimization", "LLMs", "memory"]
    assert "keywords" not in nodes[paper_node(P2)]
    (tmp_path / "graph.json").write_text(graph_to_json(G), encoding="utf-8")
    assert load_graph(tmp_path / "graph.json").nodes[paper_node(P1)]["keywords"] == ["zeroth-order optimization", "LLMs", "memory"]
    assert graph_to_json(fixture_graph()).count('"keywords"') == 0
