"""graph.json above `FULL_GRAPH_MAX_PAPERS` papers: the map's projection (kg.graph.io.map_projection),
and `kg stats` from stats.json, so that it never needs the whole graph."""

from __future__ import annotations

import json
import shutil

import pytest

import kg
import kg.graph.io as graph_io
from kg.errors import InputError
from kg.graph.cooccurrence import concept_map
from kg.graph.io import graph_json_view, load_graph, map_projection, write_graph_json
from kg.graph.stats import FIGURES, graph_stats
from tests.fixture_graph import fixture_graph


def test_graph_json_is_the_whole_graph_up_to_the_limit_and_the_projection_above():
    G = fixture_graph()
    assert graph_json_view(G, max_papers=6) is G
    P = graph_json_view(G, max_papers=5)
    assert P is not G and P.graph["projection"]["full_graph_max_papers"] == 5


def test_the_projection_keeps_the_map_concepts_their_links_and_the_venues_paper_counts():
    G = fixture_graph()
    P = map_projection(G, limit=5)
    kinds = dict(G.nodes(data="kind"))
    on_map = set(concept_map(G).nodes)
    venues = {n for n, k in kinds.items() if k == "venue"}
    assert set(P) == on_map | venues and on_map and venues
    assert not any(k == "paper" for _, k in P.nodes(data="kind"))
    for n in on_map:
        assert P.nodes[n] == G.nodes[n]  # every attribute, unchanged (x, y, cluster, label, papers, ...)
    for v in venues:
        papers = sum(1 for p in G[v] if kinds[p] == "paper")
        assert P.nodes[v] == {**G.nodes[v], "papers": papers} and papers
    expected = {frozenset((u, v)): d for u, v, d in G.edges(data=True) if u in on_map and v in on_map}
    assert {frozenset((u, v)): d for u, v, d in P.edges(data=True)} == expected and expected
    assert P.graph["projection"] == {"papers": 6, "concepts": sum(1 for k in kinds.values() if k == "concept"),
                                     "links": G.number_of_edges(), "full_graph_max_papers": 5}
    assert {k: v for k, v in P.graph.items() if k != "projection"} == G.graph


def test_the_projection_is_the_graph_add_edge_makes_its_shared_data_kept_and_the_rest_its_own():
    import networkx as nx

    from kg.graph.build import EdgeData

    G = fixture_graph()
    (u, v), (x, y) = [(u, v) for u, v, d in G.edges(data=True) if d["kind"] == "cooccurs"][:2]
    shared, plain = EdgeData(G.edges[u, v]), dict(G.edges[x, y])
    G._adj[u][v] = G._adj[v][u] = shared  # as a build's co-occurrence edges are
    G._adj[x][y] = G._adj[y][x] = plain  # as those of a graph read from graph.json are
    P = map_projection(G, limit=5)
    made = nx.Graph()  # what map_projection made with networkx's add_node and add_edge
    made.graph.update(P.graph)
    made.add_nodes_from(P.nodes(data=True))
    kept = set(concept_map(G).nodes)
    for a in sorted(kept):
        for b, e in G.adj[a].items():
            if b in kept and a < b:
                made.add_edge(a, b, **e)
    assert nx.node_link_data(P, edges="links") == nx.node_link_data(made, edges="links")
    assert all(list(P.adj[n]) == list(made.adj[n]) for n in P)  # each node's neighbours in the same order
    assert P.adj[u][v] is shared and P.adj[x][y] == plain and P.adj[x][y] is not plain
    P.edges[x, y]["weight"] = 1
    assert "weight" not in G.edges[x, y]


def test_a_projection_is_its_own_projection():
    P = map_projection(fixture_graph(), limit=5)
    assert map_projection(P, limit=5) is P and graph_json_view(P, max_papers=0) is P


def test_the_projection_reads_back_from_graph_json(tmp_path):
    P = map_projection(fixture_graph(), limit=5)
    with (tmp_path / "graph.json").open("wb") as f:
        write_graph_json(P, f)
    back = load_graph(tmp_path / "graph.json")
    assert dict(back.nodes(data=True)) == dict(P.nodes(data=True)) and back.graph == P.graph


def test_graph_stats_gives_its_figures_in_the_printed_order():
    figures = graph_stats(fixture_graph())
    assert tuple(figures) == FIGURES
    assert figures["top_concepts"][0] == {"concept": "concept:fine-tuning", "label": "fine-tuning", "papers": 3}  # tied with large language model: by label


def _copy(build, tmp_path, name):
    folder = tmp_path / name
    shutil.copytree(build.out, folder, ignore=shutil.ignore_patterns("store", ".cache"))
    return folder


@pytest.mark.model
def test_kg_stats_reads_stats_json_and_gives_what_graph_json_gives(seeds_build, tmp_path):
    from_file = kg.stats(seeds_build.out)
    folder = _copy(seeds_build, tmp_path, "no-stats")
    (folder / "stats.json").unlink()
    assert kg.stats(folder) == {k: v for k, v in from_file.items() if k != "entities"} | {
        "entities": {k: from_file["entities"][k] for k in ("concepts_with_mentions", "concepts_by_type", "concept_relations",
                                                            "concept_relations_by_type")}}
    assert list(from_file)[:len(FIGURES)] == list(FIGURES)
    stored = json.loads((seeds_build.out / "stats.json").read_text(encoding="utf-8"))
    assert from_file["top_concepts"] == stored["top_concepts"] and len(stored["top_concepts"]) == 10


@pytest.mark.model
def test_a_build_above_the_limit_writes_the_projection_and_kg_stats_still_answers(tmp_path, monkeypatch, default_embedder, nlp,
                                                                                   seeds_build, run_cli):
    from tests.support import ROOT

    monkeypatch.setattr(graph_io, "FULL_GRAPH_MAX_PAPERS", 20)  # the seeds have 38 papers
    monkeypatch.chdir(ROOT)
    result = kg.build(["seeds"], tmp_path / "big", embedder=default_embedder, nlp=nlp, store=False)
    P = load_graph(tmp_path / "big" / "graph.json")
    assert P.graph["projection"] == {"papers": 38, "concepts": seeds_build.stats["concepts"],
                                     "links": seeds_build.stats["edges"], "full_graph_max_papers": 20}
    assert not any(k == "paper" for _, k in P.nodes(data="kind"))
    assert result.stats == seeds_build.stats
    assert kg.stats(tmp_path / "big") == kg.stats(seeds_build.out)
    assert run_cli("stats", "--graph", str(tmp_path / "big")).out == run_cli("stats", "--graph", str(seeds_build.out)).out
    (tmp_path / "big" / "stats.json").unlink()
    with pytest.raises(InputError, match="projection of a build of more than 20 papers.*run `kg build` again"):
        kg.stats(tmp_path / "big" / "graph.json")


@pytest.mark.parametrize("content, named, problem", [
    ("{", "stats.json", "not a stats.json written by kg build"),
    ("[1, 2]", "stats.json", "not a stats.json written by kg build (a JSON list, not an object)"),
    ('{"top_concepts": []}', "stats.json", "not a stats.json written by kg build (no papers, concepts"),
    ('{"papers": 1}', "graph.json", "not a graph.json written by kg build"),  # an older kg's stats.json: graph.json is read
])
def test_a_stats_json_kg_did_not_write_is_one_line(run_cli, tmp_path, content, named, problem):
    (tmp_path / "graph.json").write_text("{}", encoding="utf-8")
    (tmp_path / "stats.json").write_text(content, encoding="utf-8")
    result = run_cli("stats", "--graph", str(tmp_path))
    assert result.code == 2 and f"{named}: {problem}" in result.err
    assert "Traceback" not in result.err and len(result.err.strip().splitlines()) == 1
