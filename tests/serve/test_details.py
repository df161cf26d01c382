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
from fixture_graph import P1, fixture_graph

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
    """*got* and *want* with what the RDF does not keep made alike (kg.serve.details): the order of a paper's URLs,
    sources and keywords, the spacing of an author's name, and an author's own ORCID iD when the author gave none
    (the store has the person's, who may be named the same as an author with one)."""
    if want.get("kind") != "paper":
        return got, want
    got, want = dict(got), dict(want)
    for key in ("urls", "sources", "keywords"):
        want[key] = sorted(want[key])
    assert len(got["authors"]) == len(want["authors"])
    want["authors"] = [{"name": " ".join(w["name"].split()), "orcid": w["orcid"] if w["orcid"] else g["orcid"]}
                       for g, w in zip(got["authors"], want["authors"])]
    return got, want


def test_every_node_of_the_fixture_graph_is_the_explorers_but_what_rdf_does_not_keep(tmp_path):
    details, explorer = _in_memory(fixture_graph(keywords={P1: ("zeroth-order optimization", "LLMs")}), tmp_path)
    differ = set()
    for n in explorer.concepts + explorer.papers + explorer.venues:
        got, want = details.node(n), explorer.node(n)
        if got != want:
            differ |= {k for k in want if got[k] != want[k]}
            assert got.keys() == want.keys()
            got, want = _but_what_rdf_does_not_keep(got, want)
            assert got == want, n
    assert differ == {"keywords", "authors"}  # the fixture's papers have one URL and one source each


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
