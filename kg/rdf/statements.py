"""The RDF view of the graph: every statement, made in one place as N-Triples text.

Papers are ``schema:ScholarlyArticle``; concepts ``skos:Concept`` in one
``skos:ConceptScheme`` with ``skos:prefLabel``/``skos:altLabel``; ``dcterms:subject`` links a
paper to each of its concepts; each link is also a ``kgv:KeyphraseAssignment`` (a
``prov:Entity``) that keeps its phrase, score and rank and the extraction activity and
model that produced it (PROV-O). docs/model.md has the whole model.
"""

from __future__ import annotations

import heapq
import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from itertools import chain
from operator import itemgetter
from typing import Any
from urllib.parse import quote

import networkx as nx
from rdflib import RDF, RDFS, XSD, Graph, Literal, Namespace, URIRef
from rdflib.namespace import DCTERMS, PROV, SDO, SKOS

from kg.rdf.papers import PaperRow, paper_groups
from kg.rdf.terms import Group, Terms, group, pieces
from kg.rdf.trends import year_figures, year_groups
from kg.rdf.vocabulary import (
    CONCEPT_CLASSES,
    DEFAULT_BASE,
    KGV,
    LINK_BLOCK,
    RELATION_PREDICATES,
    SYMMETRIC_PREDICATES,
    VENUE_RANKS,
    check_base,
    order_literal,
    prefixes,
)
from kg.text.chars import encodable
from kg.text.identifiers import orcid_iri


def statements(G: nx.Graph, *, base: str | None = None) -> list[tuple[Any, list[tuple[Any, Any]]]]:
    """Every RDF statement of *G*, as (subject, [(predicate, object), ...]) groups of Oxigraph
    terms: the one place that says which triples exist (`to_rdf` reads it, `rdf_files` reads
    the same groups, a slice at a time, with each term as its N-Triples text: `Statements`).

    Each subject has one group, without repeated statements; the order depends only on the
    content (subjects by node id, a paper's assignments after it by rank), never on the order
    the graph was built in. IRIs depend only on content ids.
    """
    base = check_base(base or G.graph.get("base_iri") or DEFAULT_BASE)
    made: dict[str, Any] = {}  # one Oxigraph term for each text
    out = []
    for groups, terms in Statements(G, base).chunks():

        def term(key: str):
            found = made.get(key)
            if found is None:
                found = made[key] = terms.term(key)
            return found

        out += [(term(s), [(term(p), term(o)) for p, o in zip(ps, os)]) for s, ps, os in groups]
    return out


_SDO = ("ScholarlyArticle", "CreativeWorkSeries", "identifier", "name", "headline", "abstract", "datePublished", "url",
        "codeRepository", "isPartOf", "Person", "author", "sameAs", "keywords")


_SKOS = ("Concept", "ConceptScheme", "inScheme", "prefLabel", "altLabel", "broader", "related", "Collection", "member")


_PROV = ("Activity", "Entity", "SoftwareAgent", "used", "wasAssociatedWith", "wasGeneratedBy", "wasDerivedFrom")


_KGV = ("KeyphraseAssignment", "paper", "concept", "phrase", "score", "rank", "paperCount", "cleanAbstract", "source",
        "sourceId", "settings", "sha256", "ConceptRelation", "relates", "cooccurrences", "association", "labelKey",
        "paperCountWithNarrower", "conceptCount", "VenueConcept", "venue", "venuePaperCount", "word", "text", "specificity",
        "generic", "mentionCount", "Authorship", "work", "person", "position", "journalRef", "LinkBlock", "blockOf", "firstPlace",
        "link", "labelOrder", "keywordOrder", "urlOrder", "sourceOrder", "broaderOrder", "cluster", "clusterRank", "clusterPaperCount",
        *CONCEPT_CLASSES, "TypeVote", "typeVote", "entityType", "TypedRelation", "RelationEvidence", "support", "evidence", "sentence",
        *RELATION_PREDICATES.values(), "Year", "YearConcepts", "VenueYear", "VenueNewConcepts", "year", "yearOfVenue",
        "yearPaperCount", "countedConcept", "venueYear", "newConcept")


class _Vocab:
    """The terms every kind of node's statements share, under one *base* IRI: the `Terms` they
    are written into, the predicates and classes (``sdo``, ``skos``, ``prov``, ``kgv``: name ->
    IRI text), each node's, word's and cluster's IRI, and the integer and decimal literals, each
    made once (a concept is named by hundreds of papers, a rank by thousands of links)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.terms = terms = Terms()
        self.N = N = terms.iri
        self.text, self.tagged, self.typed = terms.text, terms.tagged, terms.typed
        self.rdf_type, self.label, self.subject = N(str(RDF.type)), N(str(RDFS.label)), N(str(DCTERMS.subject))
        self.xsd = {name: str(XSD[name]) for name in ("integer", "decimal", "gYear", "boolean")}
        self.sdo = {name: N(str(SDO[name])) for name in _SDO}
        self.skos = {name: N(str(SKOS[name])) for name in _SKOS}
        self.prov = {name: N(str(PROV[name])) for name in _PROV}
        self.kgv = kgv = {name: N(str(KGV._NS[name])) for name in _KGV}
        rdf_type = self.rdf_type
        self.about_assignment = (rdf_type, rdf_type, kgv["paper"], kgv["concept"], kgv["phrase"], kgv["score"], kgv["rank"],
                                 self.prov["wasGeneratedBy"], self.prov["wasDerivedFrom"])
        self.about_relation = (rdf_type, kgv["relates"], kgv["relates"], kgv["cooccurrences"], kgv["association"])
        self.about_venue_concept = (rdf_type, kgv["venue"], kgv["concept"], kgv["venuePaperCount"], kgv["rank"])
        self.about_authorship = (rdf_type, kgv["work"], kgv["person"], kgv["position"], self.sdo["name"])
        self.about_block = (rdf_type, kgv["blockOf"], kgv["firstPlace"])
        self.about_vote = (rdf_type, kgv["concept"], kgv["entityType"], kgv["mentionCount"])
        self.rdf = {name: N(str(RDF[name])) for name in ("Statement", "subject", "predicate", "object")}
        self.subclass_of = N(str(RDFS.subClassOf))
        self.word_iris: dict[str, str] = {}
        self._node_iris: dict[str, str] = {}
        self._integers: dict[int, str] = {}
        self._decimals: dict[str, tuple[str, str]] = {}  # str(value) -> its term, its lexical form

    def iri_of(self, node: str) -> str:
        """A node's IRI: ``<base><kind>/<local>``."""
        iri = self._node_iris.get(node)
        if iri is None:
            kind, _, local = node.partition(":")
            iri = self._node_iris[node] = self.N(f"{self.base}{kind}/{local}")
        else:
            self.terms.iris.add(iri)  # (a slice's terms are those its statements name: `Terms.take`)
        return iri

    def assignment_iri(self, paper: str, rank: int) -> str:
        """The IRI of *paper*'s keyphrase assignment of rank *rank*."""
        return self.N(f"{self.base}assignment/{paper.partition(':')[2]}/{rank}")

    def cluster_iri(self, number: int) -> str:
        return self.N(f"{self.base}cluster/{int(number)}")

    def words(self, *labels: str | None) -> list[tuple[str, str]]:
        """The search index of an item's labels (queries/search.rq): a kgv:word link to each
        distinct word of their lowercase forms (Python's str.lower, as SPARQL's LCASE), the words
        split at each space, so that a text found in a label is found within one of its words: a
        text's space-free piece lies inside one word (docs/model.md)."""
        found = {w for label in labels if label for w in label.lower().split(" ") if w}
        word = self.kgv["word"]
        return [(word, self._word_iri(w)) for w in sorted(found)]

    def _word_iri(self, word: str) -> str:
        """A label word's IRI (kg:word/<the word, percent-encoded>)."""
        iri = self.word_iris.get(word)
        if iri is None:
            iri = self.word_iris[word] = self.N(f"{self.base}word/{quote(encodable(word), safe='')}")  # as its label's literal
        else:
            self.terms.iris.add(iri)
        return iri

    def order(self, name: str, values) -> list[tuple[str, str]]:
        """A node's ``kgv:<name>`` literal: its *values* of a property in the graph's order, unless sorted (`order_literal`)."""
        found = order_literal(values)
        return [] if found is None else [(self.kgv[name], self.text(found))]

    def integer(self, value) -> str:
        value = int(value)
        term = self._integers.get(value)
        if term is None:
            term = self._integers[value] = self.typed(str(value), self.xsd["integer"])
        elif term not in self.terms.literals:
            self.terms.literals[term] = (str(value), None, self.xsd["integer"])
        return term

    def decimal(self, value: float) -> str:
        text = str(value)
        found = self._decimals.get(text)
        if found is None:
            lexical = format(Decimal(text), "f")
            found = self._decimals[text] = (self.typed(lexical, self.xsd["decimal"]), lexical)
        elif found[0] not in self.terms.literals:
            self.terms.literals[found[0]] = (found[1], None, self.xsd["decimal"])
        return found[0]


@dataclass(frozen=True)
class _Nodes:
    """What the statements of one node need to know of the others: every node's data, neighbours
    and kind; the concepts some concept is broader than; each paper's venues and its concepts by
    rank (rank, concept, edge data); each concept's links and those below it in papers-of-concept's
    order, as (paper, rank) (`_ConceptLinks`); each node's place in label order; the people and
    each paper's authors (`kg.graph.people`); and the scheme and extraction activity IRIs."""

    data: dict[str, dict]
    adj: dict[str, dict]
    kinds: dict[str, str | None]
    broader: set[str]
    edges_of: dict[str, tuple[list[str], list[tuple[int, str, dict]]]]
    concepts_of: dict[str, list[str]]
    concept_links: _ConceptLinks
    label_order: dict[str, int]
    persons: dict
    authors_of: dict
    scheme: str
    activity: str
    symmetric_in: dict[str, list[tuple[str, str]]]  # concept -> (predicate name, head) of the symmetric relations it is the tail of


SLICE = 2000  # statement groups the RDF writers take at a time (a paper's and its links' are ~30)
# ... and at most this many statements: the year figures' groups come as one list of ~600,000 statements at 40,000
# abstracts (27 times a slice's median), whose text the writers held at once (~180 MB).
SLICE_STATEMENTS = 50_000


class Statements:
    """The groups of `statements`, each term written as its N-Triples text, each group as
    (subject, predicates, objects) (groups of the same kind share their tuple of predicates),
    given a slice at a time by `chunks` (as often as asked), each slice with the `Terms` its
    texts stand for: those of its own statements (a term of several slices is in each). So no
    writer holds every statement, or every term's text, of the graph at once: at 10,000 papers
    they came to ~230 MB. What every slice needs to know of the graph (`_Nodes`) is made once."""

    def __init__(self, G: nx.Graph, base: str) -> None:
        self._G = G
        self._v = v = _Vocab(base)
        self._provenance, scheme, activity = _provenance_groups(v, G.graph)
        if any("type_votes" in d or "relations" in d for _, d in G.nodes(data=True)):
            self._provenance += _class_groups(v)
        v.terms.keep()  # the predicates, classes, scheme and activity: in every slice
        self._nodes = nodes = _nodes(G, v, scheme=scheme, activity=activity)
        self._years = year_figures((nodes.data[p].get("year"), venues, nodes.concepts_of[p]) for p, (venues, _) in nodes.edges_of.items())

    def chunks(self, size: int | None = None) -> Iterator[tuple[list[Group], Terms]]:
        """Every group, in slices of about *size* groups (`SLICE`), each with its terms: the concepts' (`head`),
        the papers' (`paper_chunks` of `paper_rows`), then the rest (`tail`)."""
        yield from self.head(size)
        yield from self.paper_chunks(self.paper_rows(), size)
        yield from self.tail(size)

    def head(self, size: int | None = None) -> Iterator[tuple[list[Group], Terms]]:
        """The groups before the papers': the provenance and the concepts (by node id), in slices."""
        v, nodes = self._v, self._nodes
        v.terms.take()  # (start from the kept terms: each slice names its own)
        found = (_concept_groups(v, nodes, node) for node in _of_kind(nodes.kinds, "concept"))
        yield from _sliced(v, chain([self._provenance], found), size)

    def paper_rows(self) -> Iterator[PaperRow]:
        """Each paper's `PaperRow`, by node id."""
        nodes = self._nodes
        return (_paper_row(nodes, node) for node in _of_kind(nodes.kinds, "paper"))

    def paper_chunks(self, rows: Iterable[PaperRow], size: int | None = None) -> Iterator[tuple[list[Group], Terms]]:
        """The groups of the papers of *rows* (`paper_groups`), in slices. Each label word they name is added to the
        words the `tail` states."""
        v, activity = self._v, self._nodes.activity
        v.terms.take()
        yield from _sliced(v, (paper_groups(v, row, activity) for row in rows), size)

    def tail(self, size: int | None = None) -> Iterator[tuple[list[Group], Terms]]:
        """The groups after the papers': the venues, the people, the clusters, the figures by year and the label
        words named by all the groups before, in slices."""
        v = self._v
        v.terms.take()
        yield from _sliced(v, self._tail_groups(v, self._nodes), size)

    def _tail_groups(self, v: _Vocab, nodes: _Nodes) -> Iterator[list[Group]]:
        for node in _of_kind(nodes.kinds, "venue"):
            yield _venue_groups(v, nodes, node)
        for pid, person in nodes.persons.items():  # the people who wrote the papers (kg.graph.people)
            about = [(v.rdf_type, v.sdo["Person"]), (v.sdo["name"], v.text(" ".join(person.name.split())))]
            if person.orcid:
                about += [(v.sdo["identifier"], v.text(person.orcid)), (v.sdo["sameAs"], v.N(orcid_iri(person.orcid)))]
            yield [group(v.iri_of(pid), about)]
        yield _cluster_groups(self._G, nodes.kinds, v.iri_of, v.cluster_iri,
                              {"type": v.rdf_type, "integer": v.integer, "tagged": v.tagged, **v.skos, **v.kgv})
        yield year_groups(self._years, {"iri": v.N, "node": v.iri_of, "base": v.base, "type": v.rdf_type, "integer": v.integer,
                                        "place": nodes.label_order, **v.kgv})
        about_word = (v.kgv["text"],)
        for word, iri in sorted(v.word_iris.items()):
            v.terms.iris.add(iri)
            yield [(iri, about_word, (v.text(word),))]


def _of_kind(kinds: dict[str, str | None], kind: str) -> list[str]:
    """The nodes of *kind*, sorted: each kind's ids share a prefix (``concept:``, ``paper:``, ``venue:``), so the
    concepts', the papers' and the venues' in turn are every node by id, each section sorting only its own."""
    return sorted(node for node, k in kinds.items() if k == kind)


def _sliced(v: _Vocab, made: Iterable[list[Group]], size: int | None) -> Iterator[tuple[list[Group], Terms]]:
    """The groups of *made* (lists of groups) in slices of about *size* (`SLICE`) groups and at most
    `SLICE_STATEMENTS` statements (a group of more is a slice of its own), each with the terms *v* took for
    them (the pieces of one list cut so share its terms); the last slice possibly empty."""
    size = size or SLICE
    groups: list[Group] = []
    held = 0  # statements in *groups*
    for more in made:
        groups += more
        held += sum(len(g[1]) for g in more)
        if len(groups) >= size or held >= SLICE_STATEMENTS:
            terms = v.terms.take()
            for piece in pieces(groups, SLICE_STATEMENTS):
                yield piece, terms
            groups, held = [], 0
    terms = v.terms.take()
    for piece in pieces(groups, SLICE_STATEMENTS):
        yield piece, terms


def _provenance_groups(v: _Vocab, meta: dict) -> tuple[list[Group], str, str]:
    """The concept scheme, the extraction activity, the model and kg as a software agent, from
    the graph's metadata *meta*; and the scheme's and the activity's IRIs."""
    N, text, rdf_type, label, prov = v.N, v.text, v.rdf_type, v.label, v.prov
    base = v.base
    scheme, model, software = N(f"{base}concepts"), N(f"{base}agent/model"), N(f"{base}agent/kg")
    activity = N(f"{base}activity/{meta.get('fingerprint', 'extraction')}")
    about_activity = [(rdf_type, prov["Activity"]), (label, text(f"keyphrase extraction ({meta.get('extractor', 'KeyBERT')})")),
                      (prov["used"], model), (prov["wasAssociatedWith"], software)]
    if meta.get("settings") is not None:
        about_activity.append((v.kgv["settings"], text(json.dumps(meta["settings"], sort_keys=True))))
    about_model = [(rdf_type, prov["Entity"]), (label, text(str(meta.get("model", "unknown model"))))]
    if meta.get("model_sha256"):
        about_model.append((v.kgv["sha256"], text(meta["model_sha256"])))
    groups = [group(scheme, [(rdf_type, v.skos["ConceptScheme"]), (N(str(DCTERMS.title)), text("Concepts extracted by kg"))]),
              group(activity, about_activity), group(model, about_model),
              group(software, [(rdf_type, prov["SoftwareAgent"]), (label, text(f"kg {meta.get('kg_version', '')}".strip()))])]
    return groups, scheme, activity


def _class_groups(v: _Vocab) -> list[Group]:
    """The concept types as classes, each ``rdfs:subClassOf skos:Concept`` with its name: stated
    once, in a graph that has typed concepts."""
    return [group(v.kgv[name], [(v.subclass_of, v.skos["Concept"]), (v.label, v.text(name))]) for name in CONCEPT_CLASSES]


def _symmetric_in(data: dict, kinds: dict) -> dict[str, list[tuple[str, str]]]:
    """Each concept's symmetric relations (COMPARE, CONJUNCTION) that another concept holds
    (stored once, on the head): the tail states them too."""
    found: dict[str, list[tuple[str, str]]] = {}
    for node, kind in kinds.items():
        if kind == "concept":
            for r in data[node].get("relations", ()):
                name = RELATION_PREDICATES[r["type"]]
                if name in SYMMETRIC_PREDICATES:
                    found.setdefault(r["object"], []).append((name, node))
    return {node: sorted(pairs) for node, pairs in found.items()}


def _nodes(G: nx.Graph, v: _Vocab, *, scheme: str, activity: str) -> _Nodes:
    """The `_Nodes` of *G*."""
    from kg.graph.people import people
    from kg.graph.stats import ancestry

    data = dict(G.nodes(data=True))  # plain dicts: networkx's views cost a call per item
    adj = dict(G.adjacency())
    kinds = {n: d.get("kind") for n, d in data.items()}
    broader = {b for node, kind in kinds.items() if kind == "concept" for b in data[node].get("broader", [])}
    edges_of: dict[str, tuple[list[str], list[tuple[int, str, dict]]]] = {}  # a paper's venues, and its concepts by rank
    for node, kind in kinds.items():
        if kind == "paper":
            venues, links = [], []
            for other, e in adj[node].items():
                if e.get("kind") == "venue" and kinds.get(other) == "venue":
                    venues.append(other)
                elif e.get("kind") == "subject" and kinds.get(other) == "concept":
                    links.append((int(e["rank"]), other, e))
            links.sort(key=itemgetter(0, 1))
            edges_of[node] = venues, links
    concepts_of = {paper: [c for _, c, _ in links] for paper, (_, links) in edges_of.items()}
    persons, authors_of = people(G)
    links = _ConceptLinks(data, adj, kinds, ancestry(G), v.iri_of)
    return _Nodes(data, adj, kinds, broader, edges_of, concepts_of, links,
                  _label_order(kinds, data, v.iri_of), persons, authors_of, scheme, activity, _symmetric_in(data, kinds))


def _paper_row(nodes: _Nodes, node: str) -> PaperRow:
    """The `PaperRow` of paper *node*, read from *nodes*."""
    venues, links = nodes.edges_of[node]
    return PaperRow(node, nodes.data[node], tuple(venues), tuple((rank, c, e["score"], e["phrase"]) for rank, c, e in links),
                    tuple(nodes.authors_of.get(node, ())), nodes.label_order[node])


def _concept_groups(v: _Vocab, nodes: _Nodes, node: str) -> list[Group]:
    """A concept's statements, then the evidence of each skos:related pair it is the first of."""
    d, s, skos, kgv, text, integer = nodes.data[node], v.iri_of(node), v.skos, v.kgv, v.text, v.integer
    about = [(v.rdf_type, skos["Concept"])]
    if d.get("entity_type"):
        about.append((v.rdf_type, kgv[d["entity_type"]]))
    about += [(skos["inScheme"], nodes.scheme), (skos["prefLabel"], v.tagged(d["label"], "en"))]
    about += [(skos["altLabel"], v.tagged(alt, "en")) for alt in d.get("alt_labels", [])]
    # A label with capitals also gives its lowercase form (Unicode, as SPARQL's LCASE), so
    # that a case-insensitive lookup is an index lookup: LCASE(text)@en among the labels
    # (a label without capitals is its own key) or LCASE(text) among the kgv:labelKey.
    about += [(kgv["labelKey"], text(text_.lower()))
              for text_ in [d["label"], *d.get("alt_labels", [])] if text_.lower() != text_]
    about.append((kgv["paperCount"], integer(d["papers"])))
    if d.get("specificity") is not None:  # (kg.concepts.specificity; a generic concept is no paper's subject)
        about += [(kgv["specificity"], v.decimal(d["specificity"])),
                  (kgv["generic"], v.typed("true" if d.get("generic") else "false", v.xsd["boolean"]))]
        if d.get("generic"):
            about.append((kgv["mentionCount"], integer(d.get("mentions", 0))))
    links = nodes.concept_links.get(node)
    if node in nodes.broader:
        # the papers linked to it or to a concept below it (kg.graph.stats.papers_under): those of its links
        about.append((kgv["paperCountWithNarrower"], integer(len({p for p, _ in links}))))
    about += [(skos["broader"], v.iri_of(b)) for b in d.get("broader", [])]
    about += v.order("broaderOrder", [v.iri_of(b)[1:-1] for b in d.get("broader", [])])
    related = sorted([(other, e) for other, e in nodes.adj[node].items() if e.get("related") and e.get("kind") == "cooccurs"])
    about += [(skos["related"], v.iri_of(other)) for other, _ in related]
    if d.get("cluster_rank") is not None:
        about.append((kgv["clusterRank"], integer(d["cluster_rank"])))
    about += v.words(d["label"], *d.get("alt_labels", []))
    about.append((kgv["labelOrder"], integer(nodes.label_order[node])))
    typed, typed_groups = _typed_groups(v, nodes, node)
    held, blocks = _block_groups(v, node, links)
    groups = [group(s, dict.fromkeys(about + typed + held)), *blocks, *typed_groups]
    for other, e in related:  # the evidence of each skos:related pair, once
        if node < other:
            groups.append((v.N(f"{v.base}relation/{node.partition(':')[2]}/{other.partition(':')[2]}"), v.about_relation, (
                kgv["ConceptRelation"], s, v.iri_of(other), integer(e["count"]), v.decimal(e["association"]))))
    return groups


def _venue_groups(v: _Vocab, nodes: _Nodes, node: str) -> list[Group]:
    """A venue's statements, then its `VENUE_RANKS` concepts with the most papers there, ranked
    as the query top-concepts-per-venue ranks them (ties by lowercase label, then IRI), so that
    it is a lookup, not a count of every (venue, concept) pair. Their count is not a
    kgv:paperCount, which queries scan as the concepts' own."""
    d, s, kgv, integer, kinds = nodes.data[node], v.iri_of(node), v.kgv, v.integer, nodes.kinds
    counts = Counter(chain.from_iterable(nodes.concepts_of[p] for p, e in nodes.adj[node].items()
                                         if e.get("kind") == "venue" and kinds.get(p) == "paper"))
    groups = [group(s, [(v.rdf_type, v.sdo["CreativeWorkSeries"]), (v.sdo["name"], v.text(d["label"])),
                         (kgv["conceptCount"], integer(len(counts))), *v.words(d["label"]),
                         (kgv["labelOrder"], integer(nodes.label_order[node]))])]
    ranked = list(counts)
    if len(ranked) > VENUE_RANKS:  # none with fewer papers there than the last one ranked can be ranked
        least = heapq.nlargest(VENUE_RANKS, counts.values())[-1]
        ranked = [c for c in ranked if counts[c] >= least]
    ranked.sort(key=lambda c: (-counts[c], nodes.data[c]["label"].lower(), v.iri_of(c)[1:-1]))
    for rank, c in enumerate(ranked[:VENUE_RANKS], start=1):
        groups.append((v.N(f"{v.base}venue-concept/{node.partition(':')[2]}/{c.partition(':')[2]}"), v.about_venue_concept, (
            kgv["VenueConcept"], s, v.iri_of(c), integer(counts[c]), integer(rank))))
    return groups


def _typed_groups(v: _Vocab, nodes: _Nodes, node: str) -> tuple[list[tuple[str, str]], list[Group]]:
    """A typed concept's statements (about): a ``kgv:typeVote`` to each of its votes, a direct
    triple to each concept it relates to (and from each symmetric relation it is the tail of);
    and the groups of its votes (``kgv:TypeVote``) and of the relations it is the head of, each
    a qualified statement (``rdf:Statement``, ``kgv:TypedRelation``) with its evidence."""
    d, kgv, local = nodes.data[node], v.kgv, node.partition(":")[2]
    about, groups = [], []
    for kind, count in sorted(d.get("type_votes", {}).items()):
        vote = v.N(f"{v.base}type-vote/{local}/{kind}")
        about.append((kgv["typeVote"], vote))
        groups.append((vote, v.about_vote, (kgv["TypeVote"], v.iri_of(node), kgv[kind], v.integer(count))))
    relations = sorted(d.get("relations", ()), key=lambda r: (RELATION_PREDICATES[r["type"]], r["object"]))
    about += [(kgv[RELATION_PREDICATES[r["type"]]], v.iri_of(r["object"])) for r in relations]
    about += [(kgv[name], v.iri_of(head)) for name, head in nodes.symmetric_in.get(node, ())]
    for r in relations:
        groups += _relation_groups(v, nodes, node, r)
    return about, groups


def _relation_groups(v: _Vocab, nodes: _Nodes, node: str, r: dict) -> list[Group]:
    """*node*'s relation *r* as a qualified statement ``kg:statement/<head>/<predicate>/<tail>``:
    its subject, predicate and object, support (papers) and best score, and its evidence
    (``.../<paper id>``): each paper's sentence (sliced from its abstract) and score."""
    kgv, rdf, name = v.kgv, v.rdf, RELATION_PREDICATES[r["type"]]
    iri = f"{v.base}statement/{node.partition(':')[2]}/{name}/{r['object'].partition(':')[2]}"
    evidence = []
    for e in sorted(r["evidence"], key=itemgetter("paper")):
        about = [(v.rdf_type, kgv["RelationEvidence"]), (v.rdf_type, v.prov["Entity"]), (kgv["paper"], v.iri_of(e["paper"])),
                 (kgv["score"], v.decimal(e["score"]))]
        sentence = nodes.data.get(e["paper"], {}).get("abstract", "")[e["start"]:e["end"]]
        if sentence.strip():
            about.append((kgv["sentence"], v.text(sentence)))
        evidence.append(group(v.N(f"{iri}/{e['paper'].partition(':')[2]}"), about))
    about = [(v.rdf_type, rdf["Statement"]), (v.rdf_type, kgv["TypedRelation"]), (rdf["subject"], v.iri_of(node)),
             (rdf["predicate"], kgv[name]), (rdf["object"], v.iri_of(r["object"])), (kgv["support"], v.integer(r["papers"])),
             (kgv["score"], v.decimal(r["score"]))]
    about += [(kgv["evidence"], s) for s, _, _ in evidence]
    return [group(v.N(iri), about), *evidence]


class _ConceptLinks:
    """Each concept's links, and the links of the concepts below it (*ancestors* of a concept:
    itself, then those above it, `kg.graph.stats.ancestry`), as (paper, rank), in the order
    papers-of-concept gives them: its own first, then by highest score, the paper's name, the
    linked concept's label, the paper's IRI, that concept's IRI (code points, as SPARQL
    compares strings). Stored as `kgv:LinkBlock`s (`_block_groups`), so that a page of a
    concept's papers reads the blocks that reach the page, not every link (docs/model.md).
    Made for one concept at a time, when its statements are (`get`): held for every concept at
    once they were the RDF writer's largest table (benchmarks/README.md, 100,000 abstracts)."""

    def __init__(self, data: dict, adj: dict, kinds: dict, ancestors, iri_of) -> None:
        self._data, self._adj, self._kinds, self._iri_of = data, adj, kinds, iri_of
        self._below: dict[str, list[str]] = {}  # concept -> the linked concepts at or below it
        for c, kind in kinds.items():
            if kind == "concept" and next(self._links(c), None) is not None:
                for above in ancestors(c):
                    self._below.setdefault(above, []).append(c)

    def _links(self, concept: str) -> Iterator[tuple[str, dict]]:
        kinds = self._kinds
        return ((paper, e) for paper, e in self._adj[concept].items() if e.get("kind") == "subject" and kinds.get(paper) == "paper")

    def get(self, concept: str) -> list[tuple[str, int]]:
        data, iri_of = self._data, self._iri_of
        keys = []
        for c in self._below.get(concept, ()):
            label, c_iri = data[c]["label"], iri_of(c)[1:-1]
            for paper, e in self._links(c):
                keys.append((concept != c, -float(e["score"]), data[paper]["label"], label, iri_of(paper)[1:-1], c_iri, paper, int(e["rank"])))
        keys.sort()
        return [(paper, rank) for *_, paper, rank in keys]


def _block_groups(v: _Vocab, node: str, links: list[tuple[str, int]]) -> tuple[list[tuple[str, str]], list[Group]]:
    """Where a concept's links (`_ConceptLinks`, its own and those below it) are listed for
    papers-of-concept: up to `LINK_BLOCK` of them by the concept itself, a ``kgv:link`` to each
    (about), and more as `kgv:LinkBlock`s of `LINK_BLOCK` in order (groups):
    ``kg:link-block/<concept>/<n>`` (n from 0) with its concept (``kgv:blockOf``), the place of
    its first link (``kgv:firstPlace``, from 1) and a ``kgv:link`` to each of its assignments."""
    link = v.kgv["link"]
    if len(links) <= LINK_BLOCK:
        return [(link, v.assignment_iri(p, r)) for p, r in links], []
    local, s, kgv = node.partition(":")[2], v.iri_of(node), v.kgv
    groups = []
    for n, first in enumerate(range(0, len(links), LINK_BLOCK)):
        members = links[first:first + LINK_BLOCK]
        groups.append((v.N(f"{v.base}link-block/{local}/{n}"), v.about_block + (link,) * len(members),
                       (kgv["LinkBlock"], s, v.integer(first + 1), *(v.assignment_iri(p, r) for p, r in members))))
    return [], groups


_KIND_ORDER = {"concept": 0, "paper": 1, "venue": 2}


def _label_order(kinds: dict, nodes: dict, iri_of) -> dict[str, int]:
    """Each concept's, paper's and venue's place (from 1) in the order search.rq gives them:
    concepts, then papers, then venues, each by lowercase label (Python's str.lower, as SPARQL's
    LCASE), then IRI. Stored as ``kgv:labelOrder``, so that a page of matches is sorted on one
    integer and labels are read for the page's rows only."""
    items = [(_KIND_ORDER[kind], nodes[node]["label"].lower(), iri_of(node), node)
             for node, kind in kinds.items() if kind in _KIND_ORDER]
    items.sort()
    return {node: place for place, (*_, node) in enumerate(items, start=1)}


def _cluster_groups(G: nx.Graph, kinds: dict, iri_of, cluster_iri, terms: dict) -> list[Group]:
    """The map's clusters (``G.graph["clusters"]``): each a ``skos:Collection`` (``kg:cluster/<id>``)
    with its name (``skos:prefLabel``), its concepts (``skos:member``), their number
    (``kgv:conceptCount``) and the number of papers whose dominant cluster it is
    (``kgv:clusterPaperCount``). *terms*: the predicates, classes and literal makers of
    `Statements`."""
    members: dict[int, list[str]] = {}
    for node, kind in kinds.items():
        if kind == "concept" and G.nodes[node].get("cluster") is not None:
            members.setdefault(int(G.nodes[node]["cluster"]), []).append(node)
    groups = []
    for cluster in sorted(G.graph.get("clusters", []), key=lambda c: c["id"]):
        about = [(terms["type"], terms["Collection"]), (terms["prefLabel"], terms["tagged"](cluster["label"], "en")),
                 (terms["conceptCount"], terms["integer"](cluster["concepts"])),
                 (terms["clusterPaperCount"], terms["integer"](cluster["papers"]))]
        about += [(terms["member"], iri_of(c)) for c in sorted(members.get(int(cluster["id"]), []))]
        groups.append((cluster_iri(cluster["id"]), *zip(*about)))
    return groups


def _rdflib_term(term):
    """An Oxigraph term as the equal rdflib term."""
    import pyoxigraph as ox

    if isinstance(term, ox.NamedNode):
        return URIRef(term.value)
    if term.language:
        return Literal(term.value, lang=term.language)
    if term.datatype.value == str(XSD.string):
        return Literal(term.value)
    return Literal(term.value, datatype=URIRef(term.datatype.value))


def to_rdf(G: nx.Graph, *, base: str | None = None) -> Graph:
    """The RDF graph of *G* (rdflib) under the *base* IRI (by default the one *G* was built with).
    IRIs depend only on content ids."""
    base = check_base(base or G.graph.get("base_iri") or DEFAULT_BASE)
    g = Graph(bind_namespaces="none")
    for prefix, namespace in prefixes(base).items():
        g.bind(prefix, Namespace(namespace))
    for s, about in statements(G, base=base):
        subject = _rdflib_term(s)
        for p, o in about:
            g.add((subject, _rdflib_term(p), _rdflib_term(o)))
    return g
