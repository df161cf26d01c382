"""shapes/kg.shacl.ttl: the fixture's RDF conforms, and each way of breaking the model is caught, by kg's
validator (rudof) with the message the shapes give, and by pySHACL, the reference it is compared with."""

from __future__ import annotations

import tempfile
from decimal import Decimal
from pathlib import Path

import pyshacl
import pytest
from fixture_graph import P1, P2, P4, fixture_graph, fixture_types
from rdflib import RDF, Graph, Literal, Namespace, URIRef
from rdflib.namespace import DCTERMS, PROV, SKOS

from kg.concepts.entities import ConceptTypes, Evidence, TypedRelation
from kg.rdf.statements import to_rdf
from kg.rdf.validate import validate_graph
from kg.rdf.vocabulary import DEFAULT_BASE, KGV
from kg.rdf.write import serialize
from kg.resources import shapes_file

SHAPES = shapes_file()
KG = Namespace(DEFAULT_BASE)
SDO = Namespace("https://schema.org/")  # plain namespaces: rdflib's SDO and XSD warn when pytest inspects them
XSD = Namespace("http://www.w3.org/2001/XMLSchema#")


@pytest.fixture(scope="module")
def shapes() -> Graph:
    return Graph().parse(SHAPES, format="turtle")


@pytest.fixture(scope="module")
def rdf() -> Graph:
    return to_rdf(fixture_graph())


def validate(data: Graph, shapes: Graph) -> tuple[bool, str]:
    """kg's verdict on *data* and its report (`kg.rdf.validate`, rudof), checked against pySHACL's
    verdict: the two engines agree on every graph of this file, broken or not."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "graph.nt"
        path.write_text(serialize(data, "nt"), encoding="utf-8")
        found = validate_graph(path)
    reference, _, text = pyshacl.validate(data, shacl_graph=shapes, inference="none")
    assert found.conforms == reference, f"kg: {found.report}\npySHACL: {text}"
    assert found.triples == len(data)
    return found.conforms, found.report


@pytest.mark.filterwarnings("ignore:ConjunctiveGraph is deprecated:DeprecationWarning")
@pytest.mark.parametrize("fmt", [None, "turtle", "nt", "json-ld"])
def test_fixture_conforms(rdf, shapes, fmt):
    """to_rdf's graph conforms, and so does each serialized file read back."""
    data = rdf if fmt is None else Graph().parse(data=serialize(rdf, fmt), format=fmt)
    conforms, text = validate(data, shapes)
    assert conforms, text


def concept(slug: str) -> URIRef:
    return KG[f"concept/{slug}"]


def paper(pid: str) -> URIRef:
    return KG[f"paper/{pid}"]


def assignment(pid: str, rank: int) -> URIRef:
    return KG[f"assignment/{pid}/{rank}"]


def block(slug: str, n: int = 0) -> URIRef:
    """The *n*th kgv:LinkBlock of a concept's links (from 0)."""
    return KG[f"link-block/{slug}/{n}"]


OPT = concept("optimization")
ZOO = concept("zeroth-order-optimization")
SZOO = concept("stochastic-zeroth-order-optimization")
LLM = concept("large-language-model")  # altLabels LLM and LLMs: kgv:labelKey "llm" and "llms"
A11 = assignment(P1, 1)  # P1 -> zeroth-order-optimization, score 0.71, rank 1
MEMORY = concept("memory")  # generic: no paper's subject, kgv:mentionCount 2


def _set(g: Graph, s, p, o) -> None:
    g.remove((s, p, None))
    g.add((s, p, o))


def _drop_subject(g: Graph) -> None:
    g.remove((paper(P1), DCTERMS.subject, ZOO))
    _set(g, ZOO, KGV.paperCount, Literal(1))  # keep the count honest: only the link rule fails


def _extra_subject(g: Graph) -> None:
    g.add((paper(P1), DCTERMS.subject, OPT))
    _set(g, OPT, KGV.paperCount, Literal(3))


VC_FT = KG["venue-concept/iclr/fine-tuning"]  # rank 1 at ICLR, 2 papers; large-language-model is rank 2


def _swap_venue_ranks(g: Graph) -> None:
    _set(g, VC_FT, KGV.rank, Literal(2))
    _set(g, KG["venue-concept/iclr/large-language-model"], KGV.rank, Literal(1))


def _move_counted(g: Graph) -> None:
    """optimization (2 papers of 2025) counted among the concepts of 1 paper in 2025."""
    g.remove((KG["year-concepts/2025/2"], KGV.countedConcept, OPT))
    g.add((KG["year-concepts/2025/1"], KGV.countedConcept, OPT))


def _same_rank(g: Graph) -> None:
    _set(g, assignment(P1, 2), KGV.rank, Literal(1))



def _add_word(g: Graph, item: URIRef, text: str, iri: URIRef | None = None) -> None:
    """Link *item* to a word node with *text* (new unless *iri* names one)."""
    iri = iri or KG[f"word/{text.replace(' ', '%20')}"]
    g.add((iri, KGV.text, Literal(text)))
    g.add((item, KGV.word, iri))


C1, C2 = KG["cluster/1"], KG["cluster/2"]  # 1: memory-efficiency (rank 1), fine-tuning, ZOO, LLM, optimization; P1, P3, P4, P5
FT = concept("fine-tuning")  # kgv:clusterRank 2 in cluster 1

ADA = KG["person/orcid-0000-0002-1825-0097"]  # P1's first author, P3's too
GRACE = KG["person/orcid-0000-0001-5109-3700"]
AU12 = KG[f"authorship/{P1}/2"]  # P1's second author, Alan Turing


def _orphan_person(g: Graph) -> None:
    g.add((KG["person/nobody"], RDF.type, SDO.Person))
    g.add((KG["person/nobody"], SDO.name, Literal("Nobody")))


# (id, mutation, a phrase the report must contain)
BREAKAGES = [
    ("link-unlisted", lambda g: g.remove((ZOO, KGV.link, A11)), "it is listed 0 times for https://example.org/kg/concept/zeroth-order-optimization"),
    ("link-listed-elsewhere", lambda g: g.add((LLM, KGV.link, A11)), "is to neither its concept nor one below it"),
    ("link-from-a-paper", lambda g: g.add((paper(P2), KGV.link, A11)), "only a skos:Concept or a kgv:LinkBlock has kgv:link"),
    ("labelOrder-missing", lambda g: g.remove((OPT, KGV.labelOrder, None)), "exactly one kgv:labelOrder"),
    ("labelOrder-twice", lambda g: _set(g, OPT, KGV.labelOrder, Literal(1)), "is also that of"),
    ("doi-not-iri", lambda g: g.add((paper(P2), SDO.sameAs, Literal("10.5555/x.1"))), "schema:sameAs of a paper is its"),
    ("doi-malformed", lambda g: g.add((paper(P2), SDO.sameAs, URIRef("https://doi.org/11.5555/x"))), "schema:sameAs of a paper is its"),
    ("arxiv-with-version", lambda g: g.add((paper(P2), SDO.sameAs, URIRef("https://arxiv.org/abs/2501.00002v2"))),
     "schema:sameAs of a paper is its"),
    ("two-dois", lambda g: g.add((paper(P1), SDO.sameAs, URIRef("https://doi.org/10.5555/other.1"))), "at most one DOI"),
    ("two-journal-refs", lambda g: g.addN([(paper(P1), KGV.journalRef, Literal(r), g) for r in ("A", "B")]), "at most one kgv:journalRef"),
    ("keyword-empty", lambda g: g.add((paper(P1), SDO.keywords, Literal(""))), "schema:keywords of a paper are its authors' keywords"),
    ("keyword-iri", lambda g: g.add((paper(P1), SDO.keywords, concept("optimization"))), "schema:keywords of a paper are its authors' keywords"),
    ("keyword-tagged", lambda g: g.add((paper(P1), SDO.keywords, Literal("optimization", lang="en"))),
     "schema:keywords of a paper are its authors' keywords"),
    ("keywordOrder-twice", lambda g: g.addN([(paper(P1), KGV.keywordOrder, Literal(o), g) for o in ('["b", "a"]', '["a"]')]),
     "at most one kgv:keywordOrder"),
    ("keywordOrder-not-an-array", lambda g: g.add((paper(P1), KGV.keywordOrder, Literal("b; a"))), "at most one kgv:keywordOrder"),
    ("urlOrder-on-a-concept", lambda g: g.add((OPT, KGV.urlOrder, Literal("[]"))), "only a paper has kgv:keywordOrder"),
    ("broaderOrder-on-a-paper", lambda g: g.add((paper(P2), KGV.broaderOrder, Literal("[]"))),
     "only a skos:Concept has kgv:broaderOrder"),
    ("author-not-person", lambda g: g.add((paper(P1), SDO.author, paper(P2))), "schema:author links a paper to schema:Persons"),
    ("author-without-authorship", lambda g: g.add((paper(P1), SDO.author, GRACE)), "but no kgv:Authorship of that person on it"),
    ("authorship-without-author", lambda g: g.remove((paper(P1), SDO.author, ADA)), "has no schema:author link to that person"),
    ("same-position", lambda g: _set(g, AU12, KGV.position, Literal(1)), "2 authorships have kgv:position 1"),
    ("position-above-count", lambda g: _set(g, AU12, KGV.position, Literal(3)), "has kgv:position 3 but the paper has 2 authorships"),
    ("position-0", lambda g: _set(g, AU12, KGV.position, Literal(0)), "an xsd:integer >= 1 (1 = first author)"),
    ("authorship-without-person", lambda g: g.remove((AU12, KGV.person, None)), "exactly one kgv:person, a schema:Person"),
    ("authorship-of-a-concept", lambda g: _set(g, AU12, KGV.work, OPT), "exactly one kgv:work, a schema:ScholarlyArticle"),
    ("authorship-without-name", lambda g: g.remove((AU12, SDO.name, None)), "the author's name as the paper gives it"),
    ("untyped-authorship", lambda g: g.remove((AU12, RDF.type, None)), "only a kgv:Authorship has kgv:work"),
    ("person-without-name", lambda g: g.remove((ADA, SDO.name, None)), "a person has exactly one non-empty schema:name"),
    ("person-bad-orcid", lambda g: _set(g, ADA, SDO.identifier, Literal("0000-0002-1825")), "its ORCID iD"),
    ("person-two-orcids", lambda g: g.add((ADA, SDO.sameAs, URIRef("https://orcid.org/0000-0001-5109-3700"))),
     "at most one https://orcid.org/ IRI"),
    ("person-orphan", _orphan_person, "at least one kgv:Authorship (the author of a paper)"),
    ("cluster-without-name", lambda g: g.remove((C1, SKOS.prefLabel, None)), "a cluster has exactly one skos:prefLabel"),
    ("cluster-name-untagged", lambda g: _set(g, C1, SKOS.prefLabel, Literal("memory efficiency / fine-tuning / optimization")),
     "a cluster has exactly one skos:prefLabel"),
    ("cluster-name-not-its-top", lambda g: _set(g, C1, SKOS.prefLabel, Literal("fine-tuning / optimization", lang="en")),
     "does not hold the skos:prefLabel memory efficiency of its member ranked 1"),
    ("cluster-member-not-concept", lambda g: g.add((C1, SKOS.member, paper(P1))), "each a skos:Concept"),
    ("cluster-without-members", lambda g: g.remove((C2, SKOS.member, None)), "one or more skos:member"),
    ("cluster-conceptCount-wrong", lambda g: _set(g, C1, KGV.conceptCount, Literal(6)), "kgv:conceptCount 6 but 5 skos:member"),
    ("cluster-paperCount-wrong", lambda g: _set(g, C1, KGV.clusterPaperCount, Literal(3)), "kgv:clusterPaperCount 3 but 4 papers"),
    ("cluster-paperCount-missing", lambda g: g.remove((C2, KGV.clusterPaperCount, None)), "exactly one kgv:clusterPaperCount"),
    ("concept-in-two-clusters", lambda g: g.add((C2, SKOS.member, FT)), "a skos:member of at most one cluster"),
    ("clusterRank-twice", lambda g: _set(g, OPT, KGV.clusterRank, Literal(2)), "has kgv:clusterRank 2, above its kgv:conceptCount or also"),
    ("clusterRank-above-count", lambda g: _set(g, ZOO, KGV.clusterRank, Literal(6)), "has kgv:clusterRank 6, above"),
    ("clusterRank-missing", lambda g: g.remove((FT, KGV.clusterRank, None)), "exactly one kgv:clusterRank"),
    ("clusterRank-out-of-cluster", lambda g: g.add((concept("language-model"), KGV.clusterRank, Literal(1))),
     "has a kgv:clusterRank but is in no cluster"),
    ("paper-in-two-clusters", lambda g: g.add((paper(P1), KGV.cluster, C2)), "at most one kgv:cluster"),
    ("paper-cluster-not-dominant", lambda g: _set(g, paper(P1), KGV.cluster, C2), "holds 0 of its concepts, but"),
    ("paper-cluster-missing", lambda g: g.remove((paper(P1), KGV.cluster, None)), "is in a cluster but the paper has no kgv:cluster"),
    ("cluster-on-a-concept", lambda g: g.add((OPT, KGV.cluster, C1)), "only a schema:ScholarlyArticle has a kgv:cluster"),
    ("no-prefLabel", lambda g: g.remove((OPT, SKOS.prefLabel, None)), "exactly one skos:prefLabel"),
    ("two-prefLabels", lambda g: g.add((OPT, SKOS.prefLabel, Literal("optimisation", lang="en"))), "exactly one skos:prefLabel"),
    ("prefLabel-untagged", lambda g: _set(g, OPT, SKOS.prefLabel, Literal("optimization")), "language-tagged"),
    ("altLabel-is-prefLabel", lambda g: g.add((OPT, SKOS.altLabel, Literal("optimization", lang="en"))), "SKOS S13"),
    ("no-inScheme", lambda g: g.remove((OPT, SKOS.inScheme, None)), "skos:inScheme"),
    ("paperCount-string", lambda g: _set(g, OPT, KGV.paperCount, Literal("2")), "kgv:paperCount, an xsd:integer"),
    ("paperCount-negative", lambda g: _set(g, OPT, KGV.paperCount, Literal(-1)), "kgv:paperCount, an xsd:integer"),
    ("paperCount-wrong", lambda g: _set(g, OPT, KGV.paperCount, Literal(7)), "kgv:paperCount 7 but 2 papers"),
    ("labelKey-missing", lambda g: g.remove((LLM, KGV.labelKey, Literal("llms"))), "has capitals but no kgv:labelKey"),
    ("labelKey-wrong", lambda g: g.add((LLM, KGV.labelKey, Literal("large language models"))), "is not the lowercase form"),
    ("labelKey-of-lowercase-label", lambda g: g.add((OPT, KGV.labelKey, Literal("optimization"))), "is not the lowercase form"),
    ("paperCountWithNarrower-wrong", lambda g: _set(g, OPT, KGV.paperCountWithNarrower, Literal(4)),
     "kgv:paperCountWithNarrower 4 but 5 papers"),
    ("paperCountWithNarrower-missing", lambda g: g.remove((OPT, KGV.paperCountWithNarrower, None)), "stated exactly on the concepts"),
    ("paperCountWithNarrower-on-leaf", lambda g: g.add((concept("fine-tuning"), KGV.paperCountWithNarrower, Literal(3))),
     "stated exactly on the concepts"),
    ("broader-not-concept", lambda g: g.add((OPT, SKOS.broader, paper(P1))), "skos:broader links"),
    ("broader-cycle", lambda g: g.add((OPT, SKOS.broader, SZOO)), "skos:broader cycle"),
    ("score-string", lambda g: _set(g, A11, KGV.score, Literal("0.71")), "xsd:decimal in [-1, 1]"),
    ("score-double", lambda g: _set(g, A11, KGV.score, Literal(0.71)), "xsd:decimal in [-1, 1]"),
    ("score-above-1", lambda g: _set(g, A11, KGV.score, Literal(Decimal("1.5"))), "xsd:decimal in [-1, 1]"),
    ("score-below-minus-1", lambda g: _set(g, A11, KGV.score, Literal(Decimal("-1.01"))), "xsd:decimal in [-1, 1]"),
    ("two-scores", lambda g: g.add((A11, KGV.score, Literal(Decimal("0.5")))), "xsd:decimal in [-1, 1]"),
    ("rank-0", lambda g: _set(g, A11, KGV.rank, Literal(0)), "xsd:integer >= 1"),
    ("same-rank", _same_rank, "keyphrase assignments have kgv:rank 1"),
    ("no-phrase", lambda g: g.remove((A11, KGV.phrase, None)), "exactly one kgv:phrase"),
    ("no-paper", lambda g: g.remove((A11, KGV.paper, None)), "exactly one kgv:paper"),
    ("concept-not-concept", lambda g: _set(g, A11, KGV.concept, paper(P2)), "kgv:concept, a skos:Concept"),
    ("no-activity", lambda g: g.remove((A11, PROV.wasGeneratedBy, None)), "prov:wasGeneratedBy exactly one prov:Activity"),
    ("derived-from-other", lambda g: _set(g, A11, PROV.wasDerivedFrom, paper(P2)), "prov:wasDerivedFrom its kgv:paper"),
    ("not-an-entity", lambda g: g.remove((A11, RDF.type, PROV.Entity)), "class http://www.w3.org/ns/prov#Entity"),
    ("untyped-assignment", lambda g: g.remove((A11, RDF.type, KGV.KeyphraseAssignment)), "only a kgv:KeyphraseAssignment has"),
    ("assignment-without-subject", _drop_subject, "has no dcterms:subject link to its kgv:concept"),
    ("subject-without-assignment", _extra_subject, "no kgv:KeyphraseAssignment for its dcterms:subject link"),
    ("no-name", lambda g: g.remove((paper(P1), SDO.name, None)), "exactly one non-empty schema:name"),
    ("bad-identifier", lambda g: _set(g, paper(P1), SDO.identifier, Literal("P1")), "schema:identifier: p followed by 15 hex"),
    ("year-as-string", lambda g: _set(g, paper(P1), SDO.datePublished, Literal("2024")), "xsd:gYear"),
    ("venue-not-series", lambda g: _set(g, paper(P1), SDO.isPartOf, OPT), "schema:CreativeWorkSeries"),
    ("subject-not-concept", lambda g: g.add((paper(P1), DCTERMS.subject, paper(P2))), "dcterms:subject links a paper to skos:Concepts"),
    ("code-not-url", lambda g: g.remove((paper(P1), SDO.url, None)), "is not also a schema:url"),
    ("venue-conceptCount-wrong", lambda g: _set(g, KG["venue/icml"], KGV.conceptCount, Literal(6)),
     "kgv:conceptCount 6 but its papers have 7 distinct"),
    ("venue-conceptCount-missing", lambda g: g.remove((KG["venue/icml"], KGV.conceptCount, None)), "exactly one kgv:conceptCount"),
    ("venue-without-name", lambda g: g.remove((KG["venue/icml"], SDO.name, None)), "a venue has exactly one schema:name"),
    ("venue-rank-swapped", _swap_venue_ranks, "kgv:rank 2 but no concept ranked 1 at its venue comes before it"),
    ("venue-rank-twice", lambda g: _set(g, VC_FT, KGV.rank, Literal(2)), "is also the rank of"),
    ("venue-rank-above-count", lambda g: _set(g, VC_FT, KGV.rank, Literal(8)), "kgv:rank 8 but its venue has 7 concepts"),
    ("word-missing", lambda g: g.remove((LLM, KGV.word, KG["word/llms"])), "a word of its label LLMs has no kgv:word link"),
    ("word-missing-all", lambda g: g.remove((paper(P2), KGV.word, None)), "a word of its label Federated zeroth-order optimization"),
    ("word-wrong", lambda g: g.add((LLM, KGV.word, KG["word/memory"])), "kgv:word memory is not a word of any"),
    ("word-part-of-a-word", lambda g: _add_word(g, LLM, "lang"), "kgv:word lang is not a word of any"),
    ("word-with-capitals", lambda g: _add_word(g, LLM, "LLM"), "kgv:word LLM is not a word of any"),
    ("word-unused", lambda g: g.add((KG["word/unused"], KGV.text, Literal("unused"))), "no concept, paper or venue has it"),
    ("word-twice", lambda g: _add_word(g, LLM, "llm", iri=KG["word/llm2"]), "has the same kgv:text llm"),
    ("word-with-space", lambda g: _add_word(g, LLM, "large language"), "non-empty plain string without spaces"),
    ("word-without-text", lambda g: g.remove((KG["word/llm"], KGV.text, None)), "has exactly one kgv:text"),
    ("word-on-assignment", lambda g: g.add((A11, KGV.word, KG["word/llm"])), "only a skos:Concept, schema:ScholarlyArticle"),
    ("venue-concept-count-wrong", lambda g: _set(g, VC_FT, KGV.venuePaperCount, Literal(3)), "kgv:venuePaperCount 3 but 2 papers of its venue"),
    ("venue-concept-missing", lambda g: g.remove((KG["venue-concept/iclr/optimization"], None, None)),
     "6 kgv:VenueConcept but it has 7 concepts (1000 stated at most)"),
    ("venue-concept-rank-above-1000", lambda g: _set(g, VC_FT, KGV.rank, Literal(1001)), "an xsd:integer from 1 to 1000"),
    ("venue-concept-not-concept", lambda g: _set(g, VC_FT, KGV.concept, paper(P1)), "exactly one kgv:concept, a skos:Concept"),
    ("paperCount-on-venue-concept", lambda g: g.add((VC_FT, KGV.paperCount, Literal(2))), "only a skos:Concept has kgv:paperCount"),
    ("untyped-venue-concept", lambda g: g.remove((VC_FT, RDF.type, None)), "a kgv:KeyphraseAssignment or a kgv:VenueConcept"),
    ("bad-model-sha", lambda g: _set(g, KG["agent/model"], KGV.sha256, Literal("xyz")), "Pattern"),
    ("specificity-above-1", lambda g: _set(g, OPT, KGV.specificity, Literal(Decimal("1.2"))), "kgv:specificity, an xsd:decimal in [0, 1]"),
    ("specificity-string", lambda g: _set(g, OPT, KGV.specificity, Literal("0.47")), "kgv:specificity, an xsd:decimal in [0, 1]"),
    ("specificity-without-generic", lambda g: g.remove((OPT, KGV.generic, None)), "kgv:specificity and kgv:generic are stated together"),
    ("generic-string", lambda g: _set(g, OPT, KGV.generic, Literal("false")), "kgv:generic, an xsd:boolean"),
    ("generic-subject", lambda g: _set(g, OPT, KGV.generic, Literal(True)), "is kgv:generic but a paper has it as dcterms:subject"),
    ("mentionCount-missing", lambda g: g.remove((MEMORY, KGV.mentionCount, None)), "kgv:mentionCount is stated exactly on the kgv:generic"),
    ("year-count-wrong", lambda g: _set(g, KG["year/2025"], KGV.yearPaperCount, Literal(4)),
     "year 2025 has 3 papers but its kgv:Year says 4"),
    ("year-concepts-wrong", _move_counted, "2 papers of 2025 but kgv:YearConcepts says 1"),
    ("year-concepts-missing", lambda g: g.remove((KG["year-concepts/2025/2"], KGV.countedConcept, OPT)),
     "2 papers of 2025 but kgv:YearConcepts says nothing"),
    ("year-concepts-extra", lambda g: g.add((KG["year-concepts/2024/1"], KGV.countedConcept, concept("language-model"))),
     "counted in 2024 but no paper of that year has it"),
    ("venue-year-wrong", lambda g: _set(g, KG["venue-year/iclr/2025"], KGV.yearPaperCount, Literal(3)),
     "2 papers of 2025 but kgv:VenueYear says 3"),
    ("venue-new-missing", lambda g: g.remove((KG["venue-new-concepts/iclr/2025/0"], KGV.newConcept, OPT)),
     "first at https://example.org/kg/venue/iclr in 2025 with 2 papers but kgv:VenueNewConcepts says nothing"),
    ("venue-new-not-new", lambda g: g.add((KG["venue-new-concepts/iclr/2025/1"], KGV.newConcept, concept("fine-tuning"))),
     "new at https://example.org/kg/venue/iclr in 2025 but a paper there had it before"),
    ("venue-new-absent", lambda g: g.add((KG["venue-new-concepts/iclr/2025/1"], KGV.newConcept, concept("language-model"))),
     "new at https://example.org/kg/venue/iclr in 2025 but no paper there that year has it"),
    ("venue-new-first-place", lambda g: _set(g, KG["venue-new-concepts/iclr/2025/1"], KGV.firstPlace, Literal(3)),
     "kgv:firstPlace 3 but the blocks of its venue's year before it hold 1 concepts"),
    ("venue-new-order", lambda g: (_set(g, KG["venue-new-concepts/iclr/2025/1"], KGV.firstPlace, Literal(1)),
                                   _set(g, KG["venue-new-concepts/iclr/2025/0"], KGV.firstPlace, Literal(3))),
     "comes before a block of more papers"),
    ("venue-new-not-a-venue-year", lambda g: _set(g, KG["venue-new-concepts/iclr/2025/0"], KGV.venueYear, KG["year/2025"]),
     "exactly one kgv:venueYear, a kgv:VenueYear"),
    ("mentionCount-on-specific", lambda g: g.add((OPT, KGV.mentionCount, Literal(2))), "kgv:mentionCount is stated exactly on the kgv:generic"),
]


# Breakages of the kgv:LinkBlocks, in the fixture's RDF with blocks of 2 links (a concept with more
# than 2 links, its own and those below it, has blocks; with kg's 100, none of the fixture's has)
BLOCK_BREAKAGES = [
    ("block-link-missing", lambda g: g.remove((block("optimization", 1), KGV.link, None)), "it is listed 0 times for"),
    ("block-link-twice", lambda g: g.addN((block("optimization", n), KGV.link, A11, g) for n in (0, 1)),
     "times for https://example.org/kg/concept/optimization, not once"),
    ("block-and-list", lambda g: g.add((OPT, KGV.link, A11)), "it has kgv:LinkBlocks and lists links itself too"),
    ("block-first-place", lambda g: _set(g, block("optimization"), KGV.firstPlace, Literal(2)),
     "kgv:firstPlace 2 but its concept's blocks before it hold 0 links"),
    ("block-of-nothing", lambda g: g.remove((block("optimization"), KGV.blockOf, None)), "kgv:blockOf exactly one skos:Concept"),
]


@pytest.fixture(scope="module")
def blocked_rdf() -> Graph:
    import kg.rdf.statements as statements

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(statements, "LINK_BLOCK", 2)
        return to_rdf(fixture_graph())


def test_blocked_fixture_conforms(blocked_rdf, shapes):
    assert len(set(blocked_rdf.subjects(RDF.type, KGV.LinkBlock))) >= 3
    conforms, text = validate(blocked_rdf, shapes)
    assert conforms, text


def _assert_caught(rdf: Graph, shapes: Graph, mutate, expected: str) -> None:
    """A copy of *rdf* changed by *mutate* does not conform, and the report says *expected*."""
    broken = Graph()
    for triple in rdf:
        broken.add(triple)
    mutate(broken)
    assert len(broken) != len(rdf) or set(broken) != set(rdf), "the mutation changed nothing"
    conforms, text = validate(broken, shapes)
    assert not conforms
    assert expected in text, text


@pytest.mark.parametrize("mutate,expected", [pytest.param(m, e, id=i) for i, m, e in BLOCK_BREAKAGES])
def test_block_breakage_is_caught(blocked_rdf, shapes, mutate, expected):
    _assert_caught(blocked_rdf, shapes, mutate, expected)


@pytest.mark.parametrize("mutate,expected", [pytest.param(m, e, id=i) for i, m, e in BREAKAGES])
def test_breakage_is_caught(rdf, shapes, mutate, expected):
    _assert_caught(rdf, shapes, mutate, expected)


def test_the_authors_keywords_conform(shapes):
    """Papers with keywords (one plain literal each) beside papers without any conform: the shapes
    allow schema:keywords, need none; and so do the order literals of values not in sorted order."""
    from fixture_graph import fixture_graph, unsorted_orders

    g = to_rdf(unsorted_orders(fixture_graph(keywords={P1: ("zeroth-order optimization", "LLMs"), P4: ("federated learning",)})))
    assert set(g.objects(paper(P1), SDO.keywords)) == {Literal("zeroth-order optimization"), Literal("LLMs")}
    assert not set(g.objects(paper(P2), SDO.keywords))
    orders = {p: len(set(g.subject_objects(p))) for p in (KGV.keywordOrder, KGV.urlOrder, KGV.sourceOrder, KGV.broaderOrder)}
    assert orders == dict.fromkeys(orders, 1)  # P1's (P4's one keyword, P3's one URL: none), one concept's
    conforms, text = validate(g, shapes)
    assert conforms, text


def test_negative_scores_are_allowed(rdf, shapes):
    """A cosine similarity may be negative: the fixture holds one (-0.0412) and conforms."""
    scores = {float(o) for o in rdf.objects(None, KGV.score)}
    assert min(scores) < 0
    assert all(o.datatype == XSD.decimal for o in rdf.objects(None, KGV.score))


# --------------------------------------------------------------------------- concept types and typed relations

ZOO_FT = KG["statement/zeroth-order-optimization/usedFor/fine-tuning"]  # support 2 (P1, P4), score 0.91
ZOO_FT_P1 = KG[f"statement/zeroth-order-optimization/usedFor/fine-tuning/{P1}"]
SGD = concept("stochastic-gradient-descent")
VOTE_FT = KG["type-vote/fine-tuning/Task"]  # fine-tuning: 3 Task mentions, a kgv:Task

TYPED_BREAKAGES = [
    ("relation-without-subject", lambda g: g.remove((ZOO_FT, RDF.subject, None)), "exactly one rdf:subject"),
    ("relation-support-string", lambda g: _set(g, ZOO_FT, KGV.support, Literal("2")), "kgv:support, an xsd:integer"),
    ("relation-support-wrong", lambda g: _set(g, ZOO_FT, KGV.support, Literal(3)), "kgv:support 3 and kgv:score 0.91 but 2 evidence"),
    ("relation-score-not-best", lambda g: _set(g, ZOO_FT, KGV.score, Literal(Decimal("0.74"))), "best score 0.91"),
    ("relation-score-double", lambda g: _set(g, ZOO_FT, KGV.score, Literal(0.91)), "kgv:score, an xsd:decimal in [0, 1] (its best"),
    ("relation-bad-predicate", lambda g: _set(g, ZOO_FT, RDF.predicate, SKOS.related), "one of kg's relation predicates"),
    ("relation-without-direct-triple", lambda g: g.remove((ZOO, KGV.usedFor, FT)), "its direct triple"),
    ("relation-not-statement", lambda g: g.remove((ZOO_FT, RDF.type, RDF.Statement)), "Statement"),
    ("relation-without-evidence", lambda g: g.remove((ZOO_FT, KGV.evidence, None)), "one kgv:evidence or more"),
    ("evidence-without-paper", lambda g: g.remove((ZOO_FT_P1, KGV.paper, None)), "exactly one kgv:paper, a schema:ScholarlyArticle"),
    ("evidence-empty-sentence", lambda g: _set(g, ZOO_FT_P1, KGV.sentence, Literal("")), "a non-empty string"),
    ("evidence-orphan", lambda g: g.remove((None, KGV.evidence, ZOO_FT_P1)), "the kgv:evidence of exactly one"),
    ("support-on-concept", lambda g: g.add((FT, KGV.support, Literal(1))), "only a kgv:TypedRelation has kgv:support"),
    ("vote-count-string", lambda g: _set(g, VOTE_FT, KGV.mentionCount, Literal("3")), "kgv:mentionCount, an xsd:integer >= 1"),
    ("vote-unknown-type", lambda g: _set(g, VOTE_FT, KGV.entityType, KGV.TypedRelation), "one of kg's concept types"),
    ("vote-unlinked", lambda g: g.remove((FT, KGV.typeVote, VOTE_FT)), "the kgv:typeVote of exactly its kgv:concept"),
    ("type-not-elected", lambda g: g.add((OPT, RDF.type, KGV.Task)), "concept https://example.org/kg/concept/optimization is a"),
    ("two-types", lambda g: g.add((FT, RDF.type, KGV.Method)), "at most one concept type"),
    ("type-not-subclass", lambda g: g.remove((KGV.Task, None, None)), "rdfs:subClassOf skos:Concept"),
]


def test_typed_fixture_conforms(rdf, shapes):
    """The fixture's typed concepts, votes and typed relations are there, and the graph conforms."""
    assert (FT, RDF.type, KGV.Task) in rdf and (OPT, RDF.type, SKOS.Concept) in rdf
    assert not set(rdf.objects(OPT, RDF.type)) - {SKOS.Concept}  # a tie: no type
    assert (SGD, KGV.comparedWith, SZOO) in rdf and (SZOO, KGV.comparedWith, SGD) in rdf
    assert rdf.value(ZOO_FT, KGV.support) == Literal(2) and rdf.value(ZOO_FT, KGV.support).datatype == XSD.integer
    conforms, text = validate(rdf, shapes)
    assert conforms, text


@pytest.mark.parametrize("mutate,expected", [pytest.param(m, e, id=i) for i, m, e in TYPED_BREAKAGES])
def test_typed_breakage_is_caught(rdf, shapes, mutate, expected):
    _assert_caught(rdf, shapes, mutate, expected)


def test_a_pair_both_related_and_in_line_is_caught_and_never_built(rdf, shapes):
    """A concept skos:related to one it is skos:broader of breaks SKOS S27; the build never makes
    one, not even when papers that have both state that one is a kind of the other (HYPONYM-OF)."""
    assert (FT, SKOS.related, ZOO) in rdf  # P1 and P4 have both
    _assert_caught(rdf, shapes, lambda g: g.add((FT, SKOS.broader, ZOO)), "never to one it is skos:broader of")
    types = fixture_types()
    stated = tuple(TypedRelation(head, "HYPONYM-OF", tail, tuple(Evidence(p, 0, 10, 0.8) for p in (P1, P4)))
                   for head, tail in (("large-language-model", "fine-tuning"), ("fine-tuning", "zeroth-order-optimization")))
    data = to_rdf(fixture_graph(types=ConceptTypes(types.votes, types.relations + stated)))
    assert (FT, SKOS.broader, ZOO) in data
    conforms, text = validate(data, shapes)
    assert conforms, text


def test_words_that_differ_by_a_sign_are_each_found_in_their_labels(shapes):
    """kgsh:WordRulesShape finds each word of a label among the item's kgv:word links, also when
    another of its words is the same but for a sign ("it" and "it:", "struc" and "struc-", "n" and
    "n."): the pattern for such a word matches no space, so it cannot eat the one before the next word."""
    G = fixture_graph()
    G.nodes[f"paper:{P1}"].update(label="Make It", title="Fake It Till You Make It: Learning-Compatible Performance Support")
    G.nodes[f"paper:{P2}"].update(title="Multiple Choice Learning: Learning to Produce Multiple Structured Outputs")
    G.nodes["concept:fine-tuning"]["alt_labels"] += ["struc tured language model", "struc- tured language model"]
    G.nodes["concept:optimization"].update(label="n inter domain gaussian process", alt_labels=["n. inter-domain GPs"])
    data = to_rdf(G)
    assert (paper(P1), KGV.word, KG["word/it%3A"]) in data and (paper(P1), KGV.word, KG["word/it"]) in data
    conforms, text = validate(data, shapes)
    assert conforms, text
