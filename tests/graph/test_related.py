"""skos:related is kept apart from the skos:broader hierarchy (kg.graph.build): two concepts one of
which lies above the other, by their words or by a HYPONYM-OF statement, directly or further up,
are never related, however often papers have both (SKOS S27)."""

from __future__ import annotations

import networkx as nx
from test_map import graph_of

from kg.concepts.entities import ConceptTypes, Evidence, TypedRelation
from tests.fixture_graph import P1, P4, fixture_graph, fixture_types


def related(G: nx.Graph) -> set[tuple[str, str]]:
    """The related pairs of *G*, each as its two concept nodes in sorted order."""
    return {tuple(sorted((u, v))) for u, v, d in G.edges(data=True) if d.get("kind") == "cooccurs" and d.get("related")}


def test_a_concept_is_never_related_to_one_its_words_put_above_it():
    # deep-generative-model -> generative-model -> model (by their words); both papers have all three
    G = graph_of({"p1": ["deep-generative-model", "generative-model", "model", "sampling"],
                  "p2": ["deep-generative-model", "generative-model", "model", "sampling"]},
                 broader={"deep-generative-model": ["generative-model"], "generative-model": ["model"]})
    pairs = related(G)
    assert ("concept:deep-generative-model", "concept:generative-model") not in pairs  # directly above
    assert ("concept:deep-generative-model", "concept:model") not in pairs  # two steps above
    assert ("concept:generative-model", "concept:model") not in pairs
    assert G.edges["concept:deep-generative-model", "concept:generative-model"]["count"] == 2  # still co-occurring
    assert pairs == {("concept:deep-generative-model", "concept:sampling"), ("concept:generative-model", "concept:sampling"),
                     ("concept:model", "concept:sampling")}


def _kind_of(head: str, tail: str) -> TypedRelation:
    """"*head* is a kind of *tail*", stated by P1 and P4 (enough papers to make *tail* broader)."""
    return TypedRelation(head, "HYPONYM-OF", tail, tuple(Evidence(p, 0, 10, 0.8) for p in (P1, P4)))


def test_a_concept_is_never_related_to_one_a_hyponym_statement_puts_above_it():
    # P1 and P4 both have large-language-model, fine-tuning and zeroth-order-optimization: related pairs
    # all three, until the papers state large language model < fine-tuning < zeroth-order optimization
    assert {("concept:fine-tuning", "concept:large-language-model"), ("concept:fine-tuning", "concept:zeroth-order-optimization"),
            ("concept:large-language-model", "concept:zeroth-order-optimization")} <= related(fixture_graph())
    types = fixture_types()
    G = fixture_graph(types=ConceptTypes(types.votes, types.relations + (
        _kind_of("large-language-model", "fine-tuning"), _kind_of("fine-tuning", "zeroth-order-optimization"))))
    assert G.nodes["concept:fine-tuning"]["broader_stated"] == ["concept:zeroth-order-optimization"]
    assert related(G) == {("concept:fine-tuning", "concept:memory-efficiency")}
