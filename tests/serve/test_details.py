"""The explorer's node details read from the Oxigraph store (`kg.serve.details.StoreDetails`) are
`Explorer.node`'s, node for node: on the seeds build (its on-disk store, typed concepts and
relations), on the typed graph of tests/view and on the fixture graph (authors, DOIs, keywords,
venues), each written as kg writes its RDF and loaded into an in-memory store."""

from __future__ import annotations

import sys
from pathlib import Path

import networkx as nx
import pyoxigraph as ox
import pytest
from fixture_graph import P1, fixture_graph, unsorted_orders

from kg.graph.io import graph_to_json, load_graph
from kg.rdf.statements import to_rdf
from kg.rdf.write import serialize
from kg.serve.details import StoreDetails, local_runner
from kg.view.explorer import Explorer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "view"))
from typedgraph import typed_graph  # noqa: E402


def _in_memory(G: nx.Graph, tmp_path: Path) -> tuple[StoreDetails, Explorer]:
    """*G*'s details from a store loaded with its RDF, and its explorer as `kg serve` builds it (from graph.json)."""
    store = ox.Store()
    store.load(serialize(to_rdf(G), "nt").encode("utf-8"), format=ox.RdfFormat.N_TRIPLES)
    (tmp_path / "graph.json").write_text(graph_to_json(G), encoding="utf-8")
    return StoreDetails(local_runner(store)), Explorer(load_graph(tmp_path / "graph.json"))


def _every_node_equal(details: StoreDetails, explorer: Explorer) -> int:
    nodes = explorer.concepts + explorer.papers + explorer.venues
    for n in nodes:
        assert details.node(n) == explorer.node(n), n
    return len(nodes)


def test_every_node_of_the_seeds_build_is_the_explorers(seeds_build):
    explorer = Explorer(load_graph(seeds_build.out / "graph.json"))
    details = StoreDetails(local_runner(seeds_build.out))
    assert _every_node_equal(details, explorer) > 400
    typed = [n for n in explorer.concepts if explorer.node(n).get("relations")]
    assert typed, "the seeds build has typed relations to compare"


def test_every_node_of_the_typed_graph_is_the_explorers(tmp_path):
    details, explorer = _in_memory(typed_graph(), tmp_path)
    _every_node_equal(details, explorer)
    assert details.node("concept:transformer")["relations"]


def _but_what_rdf_does_not_keep(got: dict, want: dict) -> tuple[dict, dict]:
    """*got* and *want* with what the RDF does not keep made alike (kg.serve.details): the spacing of an author's
    name, and an author's own ORCID iD when the author gave none (the store has the person's, who may be named the
    same as an author with one). The order of a paper's URLs, sources and keywords it keeps."""
    if want.get("kind") != "paper":
        return got, want
    got, want = dict(got), dict(want)
    assert len(got["authors"]) == len(want["authors"])
    want["authors"] = [{"name": " ".join(w["name"].split()), "orcid": w["orcid"] if w["orcid"] else g["orcid"]}
                       for g, w in zip(got["authors"], want["authors"])]
    return got, want


def test_every_node_of_the_fixture_graph_is_the_explorers_but_what_rdf_does_not_keep(tmp_path):
    G = unsorted_orders(fixture_graph(keywords={P1: ("zeta", "Alpha", "mid")}))
    details, explorer = _in_memory(G, tmp_path)
    differ = set()
    for n in explorer.concepts + explorer.papers + explorer.venues:
        got, want = details.node(n), explorer.node(n)
        if got != want:
            differ |= {k for k in want if got[k] != want[k]}
            assert got.keys() == want.keys()
            got, want = _but_what_rdf_does_not_keep(got, want)
            assert got == want, n
    assert differ == {"authors"}


def test_a_papers_keywords_urls_and_sources_and_a_concepts_broader_concepts_are_in_the_graphs_order(tmp_path):
    """Not sorted: the authors' keywords as they gave them, and the others as the graph lists them (kgv:keywordOrder,
    kgv:urlOrder, kgv:sourceOrder, kgv:broaderOrder); a list whose order is the sorted one (no such literal) too."""
    G = unsorted_orders(fixture_graph(keywords={P1: ("zeta", "Alpha", "mid"), "p400000000000000": ("a", "b")}))
    details, _ = _in_memory(G, tmp_path)
    paper = details.node(f"paper:{P1}")
    assert paper["keywords"] == ["zeta", "Alpha", "mid"]
    assert paper["urls"] == ["https://github.com/example/zo-llm", "https://arxiv.org/abs/2501.00001"]
    assert paper["sources"] == ["seeds/fixture.txt#paragraph=1", "seeds/fixture.jsonl#row=9"]
    assert details.node("paper:p400000000000000")["keywords"] == ["a", "b"]
    broader = details.node("concept:stochastic-zeroth-order-optimization")["broader"]
    assert [b["id"] for b in broader] == ["concept:zeroth-order-optimization", "concept:stochastic-gradient-descent"]


@pytest.mark.parametrize("n", ["concept:no-such-concept", "paper:p000000000000000", "venue:nowhere", "concept:", "paper",
                               "", "nothing:x", "concept:a b", "concept:<x>", 'paper:x"} ; DROP ALL #', "venue:{x}",
                               "concept:\\u0041", "concept:\x00", "paper:\ud800", "concept:transformer/x"])
def test_an_unknown_or_malformed_id_is_none(n, tmp_path):
    details, _ = _in_memory(typed_graph(), tmp_path)
    assert details.node(n) is None


def test_a_node_of_another_kind_is_none(tmp_path):
    details, _ = _in_memory(typed_graph(), tmp_path)
    assert details.node("concept:transformer") is not None
    assert details.node("paper:transformer") is None and details.node("venue:transformer") is None


def _broad_graph(n_papers: int = 700, seed: int = 3) -> nx.Graph:
    """Concepts with hundreds of papers (and so `kgv:LinkBlock`s), scores of one decimal (ties across blocks),
    narrower concepts (links below a concept listed after its own), two venues, years or none."""
    import random

    rnd = random.Random(seed)
    G = nx.Graph(base_iri="https://example.org/kg/")
    for v in ("ICML", "ACL"):
        G.add_node(f"venue:{v.lower()}", kind="venue", label=v)
    concepts = {"c0": [], "c1": [], "c2": ["concept:c0"], "c3": ["concept:c0", "concept:c1"], "c4": []}
    links = []
    for i in range(n_papers):
        pid, venue, year = f"paper:p{i:015x}", ("ICML", "ACL")[i % 2], (None, 2020, 2021, 2022)[i % 4]
        G.add_node(pid, kind="paper", label=f"Paper {rnd.randrange(50)}", title=None, abstract=f"Abstract {i}.", text="",
                   venue=venue, year=year, urls=[], sources=[], source_id=None, authors=[])
        G.add_edge(pid, f"venue:{venue.lower()}", kind="venue", year=year)
        for rank, c in enumerate(rnd.sample(sorted(concepts), rnd.randrange(1, 4)), 1):
            links.append((pid, f"concept:{c}", rank))
    for c, broader in concepts.items():
        G.add_node(f"concept:{c}", kind="concept", label=f"concept {c}", alt_labels=[], broader=broader,
                   papers=sum(1 for _, d, _ in links if d == f"concept:{c}"))
    for pid, c, rank in links:
        G.add_edge(pid, c, kind="subject", score=round(rnd.random(), 1), rank=rank, phrase=c.partition(":")[2])
    return G


# listed -> the concepts whose papers were all read: the listed ones tie with a paper past the blocks read (seeded data)
@pytest.mark.parametrize(("listed", "read_all"), [(1, 0), (7, 0), (99, 5), (100, 5), (101, 0), (200, 5)])
def test_a_concepts_first_papers_are_read_from_its_link_blocks_and_ties_past_them_are_found(listed, read_all, tmp_path,
                                                                                             monkeypatch):
    import kg.view.explorer

    monkeypatch.setattr(kg.view.explorer, "MAX_LISTED", listed)
    details, explorer = _in_memory(_broad_graph(), tmp_path)
    details.listed = listed
    assert max(explorer.node(c)["papers"] for c in explorer.concepts) > 200
    queries, run = [], details.run
    details.run = lambda q: queries.append(q) or run(q)
    _every_node_equal(details, explorer)
    assert sum("skos:prefLabel ?label" in q and "kgv:KeyphraseAssignment" in q for q in queries) == read_all
