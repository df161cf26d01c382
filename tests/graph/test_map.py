"""The map on the graph (kg.graph.cooccurrence, clusters, layout): which concepts are placed, the
clusters and their names, the positions of concepts, papers and venues, and bad input."""

from __future__ import annotations

import math
import random
from dataclasses import replace

import networkx as nx
import pytest
from fixture_graph import P1, P2, P3, P4, P5, P6, fixture_graph

from kg.concepts.model import Concept, ConceptIndex
from kg.extract.keyphrases import Keyphrase, PaperKeyphrases
from kg.graph.build import build_graph
from kg.graph.clusters import characteristic, find_communities
from kg.graph.cooccurrence import concept_map
from kg.graph.layout import EXTENT, add_map
from kg.text.sources import Paper, Source

MAPPED = ["concept:federated-learning", "concept:fine-tuning", "concept:large-language-model", "concept:memory-efficiency",
          "concept:optimization", "concept:stochastic-gradient-descent", "concept:stochastic-zeroth-order-optimization",
          "concept:zeroth-order-optimization"]


def graph_of(papers: dict[str, list[str]], *, venues: dict[str, str] | None = None, broader: dict[str, list[str]] | None = None) -> nx.Graph:
    """A graph made by the real build_graph: paper id -> its concept ids (best first)."""
    venues, broader = venues or {}, broader or {}
    records = [Paper(pid, f"About {pid}.", f"About {pid}.", venue=venues.get(pid), year=2024, sources=(Source("t.txt", paragraph=k),))
               for k, pid in enumerate(papers, start=1)]
    found = [PaperKeyphrases(pid, tuple(Keyphrase(c, 0.5, r) for r, c in enumerate(cs, start=1))) for pid, cs in papers.items()]
    assignment = {(pid, c): c for pid, cs in papers.items() for c in cs}
    ids = sorted({c for cs in papers.values() for c in cs} | {b for bs in broader.values() for b in bs})
    concepts = tuple(Concept(c, c, c.replace("-", " "), (), tuple(sorted(p for p, cs in papers.items() if c in cs)),
                             tuple(broader.get(c, ()))) for c in ids)
    return build_graph(records, found, ConceptIndex(concepts, assignment), {pid: pid for pid in papers})


def mapped(G: nx.Graph) -> list[str]:
    return sorted(n for n, d in G.nodes(data=True) if d["kind"] == "concept" and "x" in d)


MAP_ATTRIBUTES = ("x", "y", "cluster", "cluster_rank")


def without_map(G: nx.Graph) -> nx.Graph:
    """*G* with the map taken off (the fixture graph has it, as the build makes it)."""
    for _, d in G.nodes(data=True):
        for key in MAP_ATTRIBUTES:
            d.pop(key, None)
    G.graph.pop("clusters", None)
    return G


@pytest.fixture(scope="module")
def G() -> nx.Graph:
    return fixture_graph()


# --------------------------------------------------------------------------- the fixture


def test_concepts_two_papers_share_are_placed_and_clustered(G):
    assert mapped(G) == MAPPED
    for n, d in G.nodes(data=True):
        if d["kind"] == "concept":
            has = {"x", "y", "cluster", "cluster_rank"} & set(d)
            assert has == ({"x", "y", "cluster", "cluster_rank"} if n in MAPPED else set()), n
    assert "x" not in G.nodes["concept:language-model"]  # a broader concept with no paper of its own


def test_a_small_map_is_filled_with_concepts_of_one_paper():
    """Fewer than MAP_MIN_CONCEPTS concepts are shared by two papers: those of one paper join
    (stochastic zeroth-order optimization); a map that is big enough keeps only the shared ones."""
    G = fixture_graph()
    assert "concept:stochastic-zeroth-order-optimization" in concept_map(G).nodes
    assert concept_map(G, min_concepts=7).nodes == tuple(n for n in MAPPED if n != "concept:stochastic-zeroth-order-optimization")
    assert concept_map(G, min_concepts=0).nodes == concept_map(G, min_concepts=7).nodes


def test_positions_are_rounded_and_scaled(G):
    xs = [(d["x"], d["y"]) for _, d in G.nodes(data=True) if "x" in d]
    assert all(round(v, 2) == v and isinstance(v, float) for xy in xs for v in xy)
    concepts = [(G.nodes[n]["x"], G.nodes[n]["y"]) for n in MAPPED]
    assert max(abs(v) for xy in concepts for v in xy) == EXTENT
    assert len(set(concepts)) == len(concepts)  # no two concepts on one point
    spread = [max(x for x, _ in concepts) - min(x for x, _ in concepts), max(y for _, y in concepts) - min(y for _, y in concepts)]
    assert spread[0] >= spread[1]  # widest along x


def test_every_paper_and_venue_is_placed(G):
    for n, d in G.nodes(data=True):
        if d["kind"] in ("paper", "venue"):
            assert isinstance(d["x"], float) and isinstance(d["y"], float), n
    # P6 has one concept on the map (stochastic gradient descent): it sits next to it
    sgd = G.nodes["concept:stochastic-gradient-descent"]
    assert math.dist((G.nodes[f"paper:{P6}"]["x"], G.nodes[f"paper:{P6}"]["y"]), (sgd["x"], sgd["y"])) <= EXTENT * 0.01 + 0.01


def test_papers_sit_among_their_concepts_of_their_cluster(G):
    """A paper is inside the box of its placed concepts in its dominant cluster (give or take its
    small offset)."""
    for paper in (P1, P2, P3, P4, P5):
        node = G.nodes[f"paper:{paper}"]
        concepts = [G.nodes[c] for c in G[f"paper:{paper}"] if c in MAPPED and G.nodes[c]["cluster"] == node["cluster"]]
        assert concepts
        for axis in ("x", "y"):
            assert min(c[axis] for c in concepts) - 10.01 <= node[axis] <= max(c[axis] for c in concepts) + 10.01


def test_venues_sit_near_their_papers(G):
    for venue, papers in (("venue:icml", [P1, P2]), ("venue:iclr", [P3, P4, P5])):
        centre = [sum(G.nodes[f"paper:{p}"][a] for p in papers) / len(papers) for a in ("x", "y")]
        assert math.dist(centre, (G.nodes[venue]["x"], G.nodes[venue]["y"])) <= EXTENT * 0.03 + 0.01


def test_clusters_are_listed_with_names_sizes_and_centres(G):
    clusters = G.graph["clusters"]
    assert [c["id"] for c in clusters] == list(range(1, len(clusters) + 1)) and len(clusters) >= 2
    assert [c["concepts"] for c in clusters] == sorted((c["concepts"] for c in clusters), reverse=True)
    members = {c["id"]: sorted(n for n in MAPPED if G.nodes[n]["cluster"] == c["id"]) for c in clusters}
    for c in clusters:
        assert c["concepts"] == len(members[c["id"]])
        assert sorted(c["top"]) == members[c["id"]]  # fewer than TOP_CONCEPTS: all of them
        assert [G.nodes[n]["cluster_rank"] for n in c["top"]] == list(range(1, len(c["top"]) + 1))
        named = [n for n in c["top"] if G.nodes[n]["papers"] >= 2][:3]  # concepts of one paper name no cluster
        assert c["label"] == " / ".join(G.nodes[n]["label"] for n in named)
        assert c["papers"] == sum(1 for _, d in G.nodes(data=True) if d["kind"] == "paper" and d.get("cluster") == c["id"])
        xs = [G.nodes[n]["x"] for n in members[c["id"]]]
        assert min(xs) <= c["x"] <= max(xs)
    assert sum(c["papers"] for c in clusters) == 6
    assert [c["label"] for c in clusters] == ["memory efficiency / fine-tuning / zeroth-order optimization",
                                              "stochastic gradient descent / federated learning"]


def test_a_paper_gets_the_cluster_most_of_its_concepts_are_in(G):
    for paper in (P1, P2, P3, P4, P5, P6):
        concepts = [(G[f"paper:{paper}"][c]["rank"], G.nodes[c]["cluster"]) for c in G[f"paper:{paper}"] if c in MAPPED]
        votes = {k: sum(1 for _, c in concepts if c == k) for _, k in concepts}
        best = max(votes.values())
        expected = min(concepts, key=lambda rc: (votes[rc[1]] != best, rc[0]))[1]
        assert G.nodes[f"paper:{paper}"]["cluster"] == expected


def test_the_same_graph_built_in_another_order_gets_the_same_map(G):
    other = nx.Graph()
    source = without_map(fixture_graph())
    other.graph.update(source.graph)
    other.add_nodes_from(reversed(list(source.nodes(data=True))))
    other.add_edges_from(reversed(list(source.edges(data=True))))
    assert "clusters" not in other.graph and not any("x" in d for _, d in other.nodes(data=True))
    state = random.getstate()
    add_map(other)
    assert random.getstate() == state  # python-igraph's generator is its own; Python's is untouched
    assert dict(other.nodes(data=True)) == dict(G.nodes(data=True))
    assert other.graph["clusters"] == G.graph["clusters"]


def test_the_layout_leaves_python_igraph_on_pythons_generator():
    import igraph as ig

    add_map(without_map(fixture_graph()))
    random.seed(7)
    first = ig.Graph.Ring(10).layout_random().coords
    random.seed(7)
    assert ig.Graph.Ring(10).layout_random().coords == first


# --------------------------------------------------------------------------- names


def test_a_cluster_is_named_by_its_own_concepts_not_the_ones_everywhere():
    """Two topics, each with its own concepts, and 'learning' and 'models' in every paper: the
    clusters are the topics, and neither is named first by a concept that is everywhere."""
    papers = {}
    for k in range(12):
        topic = ["bandit", "regret", "arm", "reward"] if k % 2 else ["graph", "node", "edge", "message-passing"]
        papers[f"p{k:015x}"] = ["learning", "models", topic[k % 4 // 2 * 2], topic[k % 4 // 2 * 2 + 1], topic[(k // 2) % 4]]
    G = graph_of(papers)
    add_map(G)
    for c in G.graph["clusters"]:
        assert c["top"][0] not in ("concept:learning", "concept:models"), c
    topics = {G.nodes[f"concept:{c}"]["cluster"] for c in ("bandit", "regret", "arm", "reward")}
    assert len(topics) == 1 and G.nodes["concept:graph"]["cluster"] not in topics


def test_a_cluster_is_named_by_concepts_several_papers_have_not_generic_ones():
    """Three papers share 'a', 'b' and 'c', each with phrases of its own: the name skips the phrases
    of one paper (weak) and a concept marked generic, though all lie inside the cluster."""
    G = graph_of({f"p{k:015x}": ["a", "b", "c", f"own{k}", f"more{k}"] for k in range(3)})
    G.nodes["concept:c"]["generic"] = True
    add_map(G)
    [cluster] = G.graph["clusters"]
    assert sorted(cluster["label"].split(" / ")) == ["a", "b"] and cluster["concepts"] == 9


def test_a_community_of_one_paper_joins_the_cluster_it_is_linked_to():
    """Concepts 0-4 a clique three papers share; 5-9 a clique of one paper, linked to the others
    by one broader link: two communities, but the second is one paper's and joins the first (as
    it stays apart when the map does not know its concepts' papers)."""
    from kg.graph.cooccurrence import ConceptMap

    links = sorted({(i, j) for i in range(5) for j in range(i + 1, 5)} | {(i, j) for i in range(5, 10) for j in range(i + 1, 10)}
                   | {(4, 5)})
    cmap = ConceptMap(tuple(f"c{i}" for i in range(10)), tuple(links), (1.0,) * len(links),
                      tuple(0 if link == (4, 5) else 1 for link in links), (3,) * 5 + (1,) * 5)
    assert find_communities(cmap).clusters == 1 and len(set(find_communities(cmap).membership)) == 1
    unknown = find_communities(replace(cmap, papers=()))
    assert unknown.clusters == 2 and unknown.membership == (0,) * 5 + (1,) * 5


def test_one_papers_concepts_linked_to_nothing_are_placed_but_no_cluster():
    """Three papers share a topic; a fourth shares nothing: its concepts are placed, grey (no
    cluster), and so is the paper; one concept two papers share, alone, is still a cluster."""
    papers = {f"p{k:015x}": ["a", "b", "c"] for k in range(3)}
    papers["p00000000000000f"] = ["x", "y", "z"]
    papers |= {"p00000000000000d": ["lone"], "p00000000000000e": ["lone"]}
    G = graph_of(papers)
    add_map(G)
    assert mapped(G) == sorted(f"concept:{c}" for c in ("a", "b", "c", "lone", "x", "y", "z"))
    assert sorted(c["concepts"] for c in G.graph["clusters"]) == [1, 3]
    for c in ("x", "y", "z"):
        assert "cluster" not in G.nodes[f"concept:{c}"] and "cluster_rank" not in G.nodes[f"concept:{c}"]
        assert all(math.isfinite(G.nodes[f"concept:{c}"][k]) for k in ("x", "y"))
    assert "cluster" not in G.nodes["paper:p00000000000000f"]
    assert G.nodes["paper:p000000000000000"]["cluster"] == G.nodes["concept:a"]["cluster"]


def test_characteristic_prefers_the_concept_inside_its_cluster():
    # 0-1-2 a triangle of one community, 3 linked to 0 and to 4 of the other
    from kg.graph.cooccurrence import ConceptMap

    cmap = ConceptMap(("a", "b", "c", "d", "e"), ((0, 1), (0, 2), (0, 3), (1, 2), (3, 4)), (1.0,) * 5, (5, 5, 5, 5, 1))
    ranked = characteristic(cmap, [0, 0, 0, 1, 1])
    assert ranked[0][0] in (1, 2) and ranked[0][-1] == 0  # 'a' has a third of its co-occurrences outside
    assert ranked[1] == [4, 3]


# --------------------------------------------------------------------------- bad input


def test_an_empty_graph_has_no_map():
    G = nx.Graph()
    add_map(G)
    assert G.graph["clusters"] == [] and len(G) == 0


def test_one_paper_without_concepts_is_placed():
    G = graph_of({"p000000000000001": []}, venues={"p000000000000001": "ICML"})
    add_map(G)
    paper, venue = G.nodes["paper:p000000000000001"], G.nodes["venue:icml"]
    assert G.graph["clusters"] == [] and "cluster" not in paper
    assert all(math.isfinite(v) for v in (paper["x"], paper["y"], venue["x"], venue["y"]))


def test_one_paper_with_concepts_of_its_own_is_placed_but_no_cluster():
    G = graph_of({"p000000000000001": ["a", "b"]})
    add_map(G)
    assert mapped(G) == ["concept:a", "concept:b"] and G.graph["clusters"] == []
    paper = G.nodes["paper:p000000000000001"]
    assert "cluster" not in paper and all(math.isfinite(paper[k]) for k in ("x", "y"))
    assert (G.nodes["concept:a"]["x"], G.nodes["concept:a"]["y"]) != (G.nodes["concept:b"]["x"], G.nodes["concept:b"]["y"])


def test_papers_without_concepts_go_round_the_map():
    G = graph_of({"p000000000000001": ["a", "b"], "p000000000000002": ["a", "b"], "p000000000000003": [],
                  "p000000000000004": []})  # papers 3 and 4 have no concept
    add_map(G)
    assert mapped(G) == ["concept:a", "concept:b"]
    for p in ("p000000000000003", "p000000000000004"):
        d = G.nodes[f"paper:{p}"]
        assert math.hypot(d["x"], d["y"]) > EXTENT and "cluster" not in d
    ring = {(G.nodes[f"paper:{p}"]["x"], G.nodes[f"paper:{p}"]["y"]) for p in ("p000000000000003", "p000000000000004")}
    assert len(ring) == 2


def test_concepts_that_cooccur_with_nothing_are_clusters_of_one():
    """Three concepts, each in two papers that have nothing else: three clusters of one concept,
    three distinct points."""
    G = graph_of({f"p{k:015x}": [f"c{k // 2}"] for k in range(6)})
    add_map(G)
    assert mapped(G) == ["concept:c0", "concept:c1", "concept:c2"]
    assert [c["concepts"] for c in G.graph["clusters"]] == [1, 1, 1]
    assert [c["label"] for c in G.graph["clusters"]] == ["c0", "c1", "c2"]
    points = {(G.nodes[n]["x"], G.nodes[n]["y"]) for n in mapped(G)}
    assert len(points) == 3 and all(math.isfinite(v) for p in points for v in p)


def test_a_concept_linked_only_by_broader_is_in_its_broader_concepts_cluster():
    G = graph_of({f"p{k:015x}": ([f"t{k % 3}", "u"] if k < 6 else ["v"]) for k in range(8)}, broader={"v": ["u"]})
    add_map(G)
    assert G.nodes["concept:v"]["cluster"] == G.nodes["concept:u"]["cluster"]


def test_one_concept_on_the_map():
    G = graph_of({"p000000000000001": ["a"], "p000000000000002": ["a"]})
    add_map(G)
    assert (G.nodes["concept:a"]["x"], G.nodes["concept:a"]["y"]) == (0.0, 0.0)
    assert G.graph["clusters"] == [{"id": 1, "label": "a", "concepts": 1, "papers": 2, "top": ["concept:a"], "x": 0.0, "y": 0.0}]


def test_the_concept_map_weighs_links_by_association_strength():
    cmap = concept_map(fixture_graph())
    assert cmap.nodes == tuple(MAPPED)
    links = [tuple(p) for p in cmap.links.tolist()]
    assert links == sorted(set(links)) and all(i < j for i, j in links)
    index = {n: i for i, n in enumerate(cmap.nodes)}
    broader = {(index["concept:zeroth-order-optimization"], index["concept:optimization"]),
               (index["concept:stochastic-zeroth-order-optimization"], index["concept:zeroth-order-optimization"])}
    broader = {tuple(sorted(p)) for p in broader}
    weights = [w for p, w in zip(links, cmap.weights.tolist()) if p not in broader]
    assert sum(weights) == pytest.approx(len(weights))  # co-occurrences scaled to a mean of 1
    fl, llm = index["concept:federated-learning"], index["concept:large-language-model"]
    assert cmap.counts[links.index((fl, llm))] == 1  # P4
    assert find_communities(cmap) == find_communities(cmap)


def test_stats_count_the_clusters(G):
    from kg.graph.stats import graph_stats

    stats = graph_stats(G)
    assert stats["map_concepts"] == 8 and stats["clusters"] == 2
    assert stats["cluster_summary"] == [
        {"id": 1, "label": "memory efficiency / fine-tuning / zeroth-order optimization", "concepts": 5, "papers": 4},
        {"id": 2, "label": "stochastic gradient descent / federated learning",
         "concepts": 3, "papers": 2},
    ]


def label_boxes(G: nx.Graph, concepts: list[str]) -> list[tuple[float, float, float, float]]:
    """The labels' boxes of *concepts* (centre x, y, width, height in screen pixels) as the map
    page draws them (map.js: 12 px at one paper to 22 px at 200; about 0.6 em a character), the
    concepts fitted into 1200 x 900 pixels."""
    placed = [d for _, d in G.nodes(data=True) if d["kind"] == "concept" and "x" in d]
    xs, ys = [d["x"] for d in placed], [d["y"] for d in placed]
    scale = min(1200 / (max(xs) - min(xs)), 900 / (max(ys) - min(ys)))
    out = []
    for c in concepts:
        d = G.nodes[c]
        size = round(12 + 10 * min(1.0, math.log(max(d["papers"], 1)) / math.log(200)))
        out.append((d["x"] * scale, d["y"] * scale, 0.6 * size * len(d["label"]), 1.2 * size))
    return out


def test_the_labels_of_hubs_laid_out_together_get_room():
    # five hubs with long labels in every paper (without room for labels, two of their labels lie
    # on each other): each is moved a little, to where its label overlaps none before it
    from kg.graph.layout import concept_positions

    hubs = [f"a-long-hub-concept-label-{k}" for k in range(5)]
    G = graph_of({f"p{k:015d}": [*hubs, f"own-{k % 10}", f"own-{(k + 1) % 10}"] for k in range(30)})
    add_map(G)
    boxes = label_boxes(G, [f"concept:{h}" for h in hubs])
    for k, (x, y, w, h) in enumerate(boxes):
        for x2, y2, w2, h2 in boxes[:k]:
            assert abs(x - x2) >= (w + w2) / 2 or abs(y - y2) >= (h + h2) / 2, (k, boxes)
    cmap = concept_map(G)
    laid = concept_positions(cmap, [G.nodes[c]["cluster"] - 1 for c in cmap.nodes])
    moved = [math.dist(xy, (G.nodes[c]["x"], G.nodes[c]["y"])) for c, xy in zip(cmap.nodes, laid)]
    assert 0 < max(moved) <= 0.15 * EXTENT


def test_the_layout_sizes_labels_as_the_map_page_draws_them():
    import re
    from pathlib import Path

    from kg.graph import layout

    js = (Path(layout.__file__).parent.parent / "view" / "static" / "map.js").read_text(encoding="utf-8")
    font = re.search(r"CONCEPT_FONT = \[(\d+), (\d+)\], FULL_SIZE = (\d+)", js)
    assert font and (layout.FONT == (float(font[1]), float(font[2]), int(font[3])))
    assert f"CONCEPT_CHARS = {layout.LABEL_CHARS}," in js
