"""The bounded projection (kg.graph.build._projected): above `MAP_MIN_CONCEPTS` shared concepts
the graph keeps only the co-occurrences among concepts of two or more papers, and nothing the
map, the related pairs or the RDF read changes."""

from __future__ import annotations

import random

import networkx as nx
import pytest
from test_map import graph_of

import kg.graph.cooccurrence as cooccurrence
from kg.graph.cooccurrence import concept_map


def corpus(seed: int = 7) -> dict[str, list[str]]:
    """60 papers of 6 concepts each: some from a pool of 30 that papers share, the rest their own."""
    rng = random.Random(seed)
    pool = [f"shared-{i:02d}" for i in range(30)]
    return {f"p{k:02d}": rng.sample(pool, rng.randint(1, 4)) + [f"own-{k:02d}-{j}" for j in range(2)] for k in range(60)}


def cooccurs(G: nx.Graph) -> dict[frozenset, dict]:
    return {frozenset((u, v)): d for u, v, d in G.edges(data=True) if d["kind"] == "cooccurs"}


@pytest.fixture
def graphs(monkeypatch):
    papers = corpus()
    whole = graph_of(papers)  # 30 shared concepts < MAP_MIN_CONCEPTS: every pair kept
    monkeypatch.setattr(cooccurrence, "MAP_MIN_CONCEPTS", 10)
    return whole, graph_of(papers)


def test_a_small_corpus_keeps_every_pair():
    G = graph_of(corpus())
    single = {n for n, d in G.nodes(data=True) if d["kind"] == "concept" and d["papers"] < 2}
    assert any(single & pair for pair in cooccurs(G)), "the pairs of one-paper concepts are kept below the bound"


def test_above_the_bound_only_shared_concepts_cooccur(graphs):
    whole, projected = graphs
    papers = nx.get_node_attributes(whole, "papers")
    expected = {pair: d for pair, d in cooccurs(whole).items() if all(papers[c] >= 2 for c in pair)}
    assert len(expected) < len(cooccurs(whole))
    assert cooccurs(projected) == expected  # same pairs, counts, associations and related flags
    assert [e for e in projected.edges(data=True) if e[2]["kind"] != "cooccurs"] == \
        [e for e in whole.edges(data=True) if e[2]["kind"] != "cooccurs"]
    assert dict(projected.nodes(data=True)) == dict(whole.nodes(data=True))


def test_the_map_and_related_pairs_are_unchanged(graphs):
    whole, projected = graphs
    assert concept_map(projected, min_concepts=10) == concept_map(whole, min_concepts=10)
    related = {pair for pair, d in cooccurs(whole).items() if d["related"]}
    assert related and related == {pair for pair, d in cooccurs(projected).items() if d["related"]}
    for c in (n for n, d in whole.nodes(data=True) if d["kind"] == "concept"):  # each concept's neighbours, in order
        assert [m for m in projected.adj[c] if m in related_to(whole, c)] == [m for m in whole.adj[c] if m in related_to(whole, c)]


def related_to(G: nx.Graph, c: str) -> set[str]:
    return {m for m, d in G.adj[c].items() if d.get("related")}
