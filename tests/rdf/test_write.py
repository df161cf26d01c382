"""The RDF files are written from the statements a slice at a time (kg.rdf.statements.Statements):
where the slices fall changes no byte."""

import pytest
from fixture_graph import fixture_graph
from rdflib import Graph
from rdflib.compare import isomorphic

import kg.rdf.statements
from kg.rdf.statements import Statements, statements, to_rdf
from kg.rdf.write import rdf_files


@pytest.mark.parametrize("size", [1, 2, 7])
def test_the_rdf_files_are_the_same_bytes_whatever_the_slices(monkeypatch, size):
    G = fixture_graph()
    whole, whole_statements = rdf_files(G), [(str(s), [(str(p), str(o)) for p, o in about]) for s, about in statements(G)]
    assert len(list(Statements(G, G.graph["base_iri"]).chunks())) == 3  # by default a slice each: concepts, papers, the rest
    monkeypatch.setattr(kg.rdf.statements, "SLICE", size)
    assert len(list(Statements(G, G.graph["base_iri"]).chunks())) > 10
    assert rdf_files(G) == whole
    assert [(str(s), [(str(p), str(o)) for p, o in about]) for s, about in statements(G)] == whole_statements


def test_each_slice_holds_the_terms_of_its_own_statements_only():
    G = fixture_graph()
    seen = []
    for groups, terms in Statements(G, G.graph["base_iri"]).chunks(3):
        named = {t for s, ps, os in groups for t in (s, *ps, *os)}
        assert named <= terms.iris | set(terms.literals)  # every term a writer looks up is there
        seen.append(len(terms.iris) + len(terms.literals))
    assert max(seen) < sum(seen) / 2  # no slice holds (nearly) every term


def test_the_three_files_are_one_graph():
    G = fixture_graph()
    files = rdf_files(G)
    expected = to_rdf(G)
    for name, fmt in (("graph.nt", "nt"), ("graph.ttl", "turtle"), ("graph.jsonld", "json-ld")):
        assert isomorphic(Graph().parse(data=files[name].decode("utf-8"), format=fmt), expected), name


# Hostile text: each RDF file is what a strict parser of its format accepts, whatever a title holds.

from hostile_text import HOSTILE_TEXT, with_text
from hypothesis import given, settings

_GRAPH = fixture_graph()


@settings(max_examples=40, deadline=None)
@given(text=HOSTILE_TEXT)
def test_the_rdf_files_parse_whatever_the_text(text):
    """A lone surrogate made the RDF writers fail (UTF-8 cannot encode it); now it is U+FFFD.
    Controls are escaped as N-Triples and Turtle's grammar says (\\u0001), by Oxigraph."""
    import json

    import pyoxigraph as ox

    from kg.text.chars import encodable

    out = rdf_files(with_text(_GRAPH, text))
    parsed = {}
    for name, fmt, rdflib_fmt in (("graph.nt", ox.RdfFormat.N_TRIPLES, "nt"), ("graph.ttl", ox.RdfFormat.TURTLE, "turtle"),
                                  ("graph.jsonld", ox.RdfFormat.JSON_LD, "json-ld")):
        parsed[name] = list(ox.parse(out[name], format=fmt))  # strict: bad UTF-8, an unescaped control or a bad escape raises
        Graph().parse(data=out[name].decode("utf-8"), format=rdflib_fmt)
    json.loads(out["graph.jsonld"].decode("utf-8"))
    titles = {t.object.value for t in parsed["graph.nt"] if t.predicate.value == "https://schema.org/headline"}
    assert encodable(text) in titles
    assert len(parsed["graph.nt"]) == len(parsed["graph.ttl"]) == len(parsed["graph.jsonld"])


def test_types_only_add_their_own_triples():
    """A graph without concept types gives the triples it gave before types existed; the types add
    triples of their own subjects (classes, votes, statements, evidence) or predicates only."""
    from fixture_graph import fixture_graph
    from rdflib import RDF, RDFS, URIRef

    from kg.rdf.statements import to_rdf
    from kg.rdf.vocabulary import CONCEPT_CLASSES, KGV, RELATION_PREDICATES

    plain, typed = set(to_rdf(fixture_graph(typed=False))), set(to_rdf(fixture_graph()))
    assert plain < typed
    new_subjects = ("/type-vote/", "/statement/", str(KGV._NS))
    new_predicates = {KGV.typeVote, *(KGV[p] for p in RELATION_PREDICATES.values())}
    classes = {KGV[c] for c in CONCEPT_CLASSES}
    for s, p, o in typed - plain:
        assert any(x in str(s) for x in new_subjects) or p in new_predicates or (p == RDF.type and o in classes), (s, p, o)
    assert not any(p == RDFS.subClassOf or isinstance(o, URIRef) and o in classes for _, p, o in plain)


def test_relation_evidence_is_a_sentence_of_the_abstract():
    from fixture_graph import P1, fixture_graph
    from rdflib import Namespace

    from kg.rdf.statements import to_rdf
    from kg.rdf.vocabulary import DEFAULT_BASE, KGV

    G = fixture_graph()
    kg = Namespace(DEFAULT_BASE)
    evidence = kg[f"statement/zeroth-order-optimization/usedFor/fine-tuning/{P1}"]
    sentence = str(to_rdf(G).value(evidence, KGV.sentence))
    assert sentence == "We fine-tune LLMs with zeroth-order optimization and cut the memory footprint."
    assert sentence in G.nodes[f"paper:{P1}"]["abstract"]


def test_the_authors_keywords_only_add_their_own_triples():
    """Each keyword of a paper is one plain ``schema:keywords`` literal on it, in every file, and their order a
    ``kgv:keywordOrder`` where it is not the sorted one; a paper without keywords gives the triples it gave before
    they were stated."""
    from fixture_graph import P1, P2, P4, fixture_graph
    from rdflib import Literal, Namespace

    from kg.rdf.vocabulary import DEFAULT_BASE

    sdo, kg = Namespace("https://schema.org/"), Namespace(DEFAULT_BASE)
    keywords = {P1: ("zeroth-order optimization", "LLMs", "Zeroth-order  optimization"), P4: ("federated learning",)}
    plain, G = set(to_rdf(fixture_graph())), fixture_graph(keywords=keywords)
    expected = {(kg[f"paper/{P1}"], sdo.keywords, Literal("zeroth-order optimization")),
                (kg[f"paper/{P1}"], sdo.keywords, Literal("LLMs")),
                (kg[f"paper/{P4}"], sdo.keywords, Literal("federated learning"))}
    added = set(to_rdf(G)) - plain
    assert {t for t in added if t[1] == sdo.keywords} == expected and plain < set(to_rdf(G))
    # and the search index of their words (queries/search.rq): a paper's kgv:word link to each word, each new word's text
    kgv = Namespace("https://example.org/kg/vocab#")
    assert {t[1] for t in added - expected} <= {kgv.word, kgv.text, kgv.keywordOrder}  # (a word no label has gets its kgv:text)
    # and their order, where it is not the sorted one (P4's one keyword has none): a JSON array of them
    order = {(s, o) for s, p, o in added if p == kgv.keywordOrder}
    assert order == {(kg[f"paper/{P1}"], Literal('["zeroth-order optimization", "LLMs"]'))}
    assert (kg[f"paper/{P1}"], kgv.word, kg["word/optimization"]) in added  # in a keyword of P1, not in its title
    assert all(o.datatype is None and o.language is None for _, _, o in expected)
    out = rdf_files(G)
    for name, fmt in (("graph.nt", "nt"), ("graph.ttl", "turtle"), ("graph.jsonld", "json-ld")):
        found = {t for t in Graph().parse(data=out[name].decode("utf-8"), format=fmt) if t[1] in (sdo.keywords, kgv.keywordOrder)}
        assert found == expected | {(s, kgv.keywordOrder, o) for s, o in order}, name
    assert not any(p == sdo.keywords for _, p, _ in plain) and not set(to_rdf(G).objects(kg[f"paper/{P2}"], sdo.keywords))


def test_a_slice_holds_at_most_slice_statements_and_the_bytes_stay_the_same(monkeypatch):
    # the year figures' groups come as one list (at 40,000 abstracts ~600,000 statements, 27 times a slice's median)
    G = fixture_graph()
    whole = rdf_files(G)
    sizes = [sum(len(ps) for _, ps, _ in groups) for groups, _ in Statements(G, G.graph["base_iri"]).chunks()]
    assert len(sizes) == 3 and max(sizes) > 40
    monkeypatch.setattr(kg.rdf.statements, "SLICE_STATEMENTS", 40)
    sliced = list(Statements(G, G.graph["base_iri"]).chunks())
    assert len(sliced) > 6
    for groups, terms in sliced:  # each at most 40 statements, or one group larger than that alone
        assert sum(len(ps) for _, ps, _ in groups) <= 40 or len(groups) == 1
        assert {t for s, ps, os in groups for t in (s, *ps, *os)} <= terms.iris | set(terms.literals)
    assert rdf_files(G) == whole
