"""HYPONYM-OF statements made by enough papers propose broader concepts (kg.graph.build)."""

from __future__ import annotations

from kg.concepts.entities import ConceptTypes, Evidence, TypedRelation
from kg.graph.build import HYPONYM_SUPPORT
from kg.rdf.write import rdf_files
from tests.fixture_graph import P1, P2, P3, P4, P5, P6, fixture_graph, fixture_types


def _kind_of(head: str, tail: str, papers) -> TypedRelation:
    return TypedRelation(head, "HYPONYM-OF", tail, tuple(Evidence(p, 0, 10, 0.8) for p in papers))


def _graph(*relations: TypedRelation):
    types = fixture_types()
    return fixture_graph(types=ConceptTypes(types.votes, types.relations + relations))


def test_a_kind_of_stated_by_enough_papers_becomes_a_broader_concept():
    assert HYPONYM_SUPPORT == 2
    G = _graph(_kind_of("stochastic-gradient-descent", "optimization", [P3, P6]),
               _kind_of("fine-tuning", "federated-learning", [P4]))
    sgd = G.nodes["concept:stochastic-gradient-descent"]
    assert sgd["broader"] == ["concept:optimization"] == sgd["broader_stated"]
    assert G.nodes["concept:fine-tuning"]["broader"] == [] and "broader_stated" not in G.nodes["concept:fine-tuning"]
    nt = next(v for k, v in rdf_files(G).items() if k.endswith(".nt")).decode()
    assert any("stochastic-gradient-descent" in line and "skos/core#broader" in line and "concept/optimization" in line
               for line in nt.splitlines())
    untyped = fixture_graph(typed=False)
    assert untyped.nodes["concept:stochastic-gradient-descent"]["broader"] == []


def test_no_cycle_no_generic_concept_and_no_repeat():
    G = _graph(_kind_of("optimization", "stochastic-zeroth-order-optimization", [P2, P5]),  # optimization is above it
               _kind_of("federated-learning", "memory", [P2, P4]),  # memory is generic
               _kind_of("stochastic-zeroth-order-optimization", "zeroth-order-optimization", [P1, P2]))  # already its broader
    assert G.nodes["concept:optimization"]["broader"] == []
    assert G.nodes["concept:federated-learning"]["broader"] == []
    szo = G.nodes["concept:stochastic-zeroth-order-optimization"]
    assert szo["broader"] == ["concept:zeroth-order-optimization"] and "broader_stated" not in szo
