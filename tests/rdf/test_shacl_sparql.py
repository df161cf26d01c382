"""kg.rdf.shacl_sparql: SHACL-SPARQL constraints on Oxigraph, checked against pySHACL on small shapes."""

from __future__ import annotations

import pyoxigraph as ox
import pyshacl
import pytest
from rdflib import Graph

from kg.errors import InputError
from kg.rdf.shacl_sparql import run_rules, sparql_rules

DATA = """
@prefix ex: <http://example.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:Paper rdfs:subClassOf ex:Work .
ex:a a ex:Paper ; ex:year 2020 ; ex:cites ex:b .
ex:b a ex:Work ; ex:year 2024 .
ex:c a ex:Work ; ex:year 1990 .
"""

PREFIXES = """
@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix ex: <http://example.org/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex: sh:declare [ sh:prefix "ex" ; sh:namespace "http://example.org/"^^xsd:anyURI ] .
"""

# A work cites only older works: the focus nodes come from each kind of target.
RULE = """
    sh:sparql [ a sh:SPARQLConstraint ; sh:prefixes ex: ;
        sh:message "{$this} cites {?value}, of {?y}" ;
        sh:select \"\"\"SELECT $this ?value ?y WHERE { $this ex:year ?x ; ex:cites ?value . ?value ex:year ?y . FILTER(?y >= ?x) }\"\"\" ] .
"""


def _results(shapes_text: str) -> list[tuple[str, str, str]]:
    shapes = Graph().parse(data=PREFIXES + shapes_text, format="turtle")
    store = ox.Store()
    store.load(DATA.encode(), format=ox.RdfFormat.TURTLE)
    return sorted((r.focus, r.value, r.message) for r in run_rules(store, sparql_rules(shapes)))


def _pyshacl_conforms(shapes_text: str) -> bool:
    data = Graph().parse(data=DATA, format="turtle")
    return pyshacl.validate(data, shacl_graph=Graph().parse(data=PREFIXES + shapes_text, format="turtle"))[0]


@pytest.mark.parametrize("target", ["sh:targetClass ex:Work", "sh:targetNode ex:a", "sh:targetSubjectsOf ex:cites"])
def test_each_target_kind_finds_the_focus_node_and_fills_the_message(target):
    shapes = f"ex:S a sh:NodeShape ; {target} ; {RULE}"
    found = _results(shapes)
    assert found == [("http://example.org/a", "http://example.org/b", "http://example.org/a cites http://example.org/b, of 2024")]
    assert not _pyshacl_conforms(shapes)


def test_a_target_with_no_offender_and_a_deactivated_rule_find_nothing():
    assert _results(f"ex:S a sh:NodeShape ; sh:targetObjectsOf ex:cites ; {RULE}") == []
    assert _results(f"ex:S a sh:NodeShape ; sh:targetNode ex:a ; sh:deactivated true ; {RULE}") == []


def test_an_implicit_class_target():
    shapes = f"ex:Paper a sh:NodeShape , rdfs:Class ; {RULE}"
    assert [f for f, _, _ in _results(shapes)] == ["http://example.org/a"]


def test_what_it_does_not_support_is_refused_not_skipped():
    with pytest.raises(InputError, match="property shape"):
        _results(f"ex:S a sh:PropertyShape ; sh:path ex:cites ; sh:targetNode ex:a ; {RULE}")
    with pytest.raises(InputError, match="not a query Oxigraph reads"):
        _results("ex:S a sh:NodeShape ; sh:targetNode ex:a ; sh:sparql [ sh:select \"SELECT WHERE {\" ] .")
    with pytest.raises(InputError, match="must select \\$this"):
        _results("ex:S a sh:NodeShape ; sh:targetNode ex:a ; sh:sparql [ sh:select \"SELECT ?x WHERE { $this ?p ?x }\" ] .")
