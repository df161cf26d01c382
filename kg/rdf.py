"""RDF view of the graph, with rdflib and standard vocabularies.

Papers are ``schema:ScholarlyArticle``; concepts ``skos:Concept`` in one
``skos:ConceptScheme`` with ``skos:prefLabel``/``skos:altLabel``; ``dcterms:subject`` links a
paper to each of its concepts; each link is also a ``kgv:KeyphraseAssignment`` (a
``prov:Entity``) that keeps its phrase, score and rank and the extraction activity and
model that produced it (PROV-O). Venues are ``schema:CreativeWorkSeries``; each one's
`VENUE_RANKS` concepts with the most papers there are ``kgv:VenueConcept`` nodes (count, rank).
Each concept, paper and venue has a ``kgv:word`` link to each word of its lowercase labels (a
``kg:word/...`` node with its ``kgv:text``): the word index that ``queries/search.rq`` reads.
"""

from __future__ import annotations

import heapq
import json
import re
from collections import Counter
from collections.abc import Callable
from decimal import Decimal
from itertools import chain
from operator import itemgetter
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import networkx as nx
from rdflib import RDF, RDFS, XSD, Graph, Literal, Namespace, URIRef
from rdflib.namespace import DCTERMS, PROV, SDO, SKOS, DefinedNamespace

from kg.errors import KGError

__all__ = ["DEFAULT_BASE", "VENUE_RANKS", "KGV", "to_rdf", "serialize", "FORMATS", "check_base", "statements", "rdf_files", "write_rdf", "prefixes"]

DEFAULT_BASE = "https://example.org/kg/"
FORMATS = {"graph.nt": "nt", "graph.ttl": "turtle", "graph.jsonld": "json-ld"}  # in the order write_rdf writes them
VENUE_RANKS = 1000  # a venue's concepts with the most papers there, stored with their rank (kgv:VenueConcept)
CODE_HOSTS = ("github.com", "gitlab.com", "bitbucket.org", "codeberg.org", "huggingface.co", "sourceforge.net", "gitee.com")


class KGV(DefinedNamespace):
    """kg's own small vocabulary, for what schema.org, SKOS and PROV-O do not say."""

    _NS = Namespace("https://example.org/kg/vocab#")
    _fail = True

    KeyphraseAssignment: URIRef
    paper: URIRef
    concept: URIRef
    phrase: URIRef
    score: URIRef
    rank: URIRef
    paperCount: URIRef
    cleanAbstract: URIRef
    source: URIRef
    sourceId: URIRef
    settings: URIRef
    sha256: URIRef
    ConceptRelation: URIRef
    relates: URIRef
    cooccurrences: URIRef
    association: URIRef
    labelKey: URIRef
    paperCountWithNarrower: URIRef
    conceptCount: URIRef
    VenueConcept: URIRef
    venue: URIRef
    venuePaperCount: URIRef
    word: URIRef
    text: URIRef


def check_base(base: str) -> str:
    """An absolute http(s) base IRI ending in ``/`` or ``#``."""
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.netloc or not base.endswith(("/", "#")) or any(c in base for c in ' <>"{}|\\^`'):
        raise KGError(f"base IRI {base!r} is not an absolute http(s) IRI ending in '/' or '#'; give one such as {DEFAULT_BASE}")
    return base


def _iri(url: str):
    """A URL from an abstract as a valid IRI (characters IRIs forbid are percent-encoded);
    one that still is not an IRI (a broken host) stays an ``xsd:anyURI`` literal.
    Oxigraph terms (``NamedNode`` or ``Literal``)."""
    import pyoxigraph as ox

    url = re.sub(r"%(?![0-9A-Fa-f]{2})", "%25", url)  # a stray % is a literal percent sign
    parts = urlsplit(url)
    safe = "/:@!$&'()*+,;=%~-._"
    iri = urlunsplit((parts.scheme, parts.netloc, quote(parts.path, safe=safe), quote(parts.query, safe=safe + "?"),
                      quote(parts.fragment, safe=safe + "?")))
    try:
        return ox.NamedNode(iri)  # the strict RFC 3987 check
    except ValueError:
        return ox.Literal(url, datatype=ox.NamedNode(str(XSD.anyURI)))


def _is_code(url: str) -> bool:
    host = urlsplit(url).netloc.lower().removeprefix("www.")
    return host in CODE_HOSTS


def prefixes(base: str) -> dict[str, str]:
    """The prefixes of every RDF output: the standard vocabularies, ``kgv:`` and ``kg:`` (*base*)."""
    return {"schema": str(SDO), "skos": str(SKOS), "dcterms": str(DCTERMS), "prov": str(PROV), "xsd": str(XSD),
            "rdfs": str(RDFS), "kgv": str(KGV._NS), "kg": base}


def statements(G: nx.Graph, *, base: str | None = None) -> list[tuple[Any, list[tuple[Any, Any]]]]:
    """Every RDF statement of *G*, as (subject, [(predicate, object), ...]) groups of Oxigraph
    terms: the one place that says which triples exist (`to_rdf` reads it, `rdf_files` reads
    the same groups with each term as its N-Triples text: `_statement_groups`).

    Each subject has one group, without repeated statements; the order depends only on the
    content (subjects by node id, a paper's assignments after it by rank), never on the order
    the graph was built in. IRIs depend only on content ids.
    """
    base = check_base(base or G.graph.get("base_iri") or DEFAULT_BASE)
    groups, terms = _statement_groups(G, base)
    made: dict[str, Any] = {}  # one Oxigraph term for each text

    def term(key: str):
        found = made.get(key)
        if found is None:
            found = made[key] = terms.term(key)
        return found

    return [(term(s), [(term(p), term(o)) for p, o in zip(ps, os)]) for s, ps, os in groups]


_Group = tuple[str, tuple[str, ...], tuple[str, ...]]  # subject, predicates, objects (the nth object is the nth predicate's)


class _Terms:
    """The terms of a graph's statements, each written as its N-Triples text (a term has one,
    and no other term has it, so the text stands for the term in `_statement_groups`): the
    IRIs (`iris`) and each literal's value, language tag and datatype IRI (`literals`).
    Oxigraph checks each term as it comes (an invalid IRI raises ValueError) and writes its text."""

    def __init__(self) -> None:
        import pyoxigraph as ox

        self._named, self._literal = ox.NamedNode, ox.Literal
        self.iris: set[str] = set()
        self.literals: dict[str, tuple[str, str | None, str | None]] = {}
        self._tags: dict[str, str] = {}  # language tag -> its text after a literal's, as Oxigraph writes it
        self._types: dict[str, Any] = {}  # datatype IRI -> its Oxigraph term

    def iri(self, iri: str) -> str:
        """The IRI *iri*."""
        key = f"<{iri}>"
        if key not in self.iris:
            self._named(iri)
            self.iris.add(key)
        return key

    def text(self, value: str) -> str:
        """A plain (``xsd:string``) literal (of a number or a boolean: the typed literal Oxigraph makes)."""
        if type(value) is not str:
            return self.add(self._literal(value))
        # Oxigraph writes a string without characters N-Triples escapes as it is, in quotes.
        key = str(self._literal(value)) if _ESCAPED(value) else f'"{value}"'
        if key not in self.literals:
            self.literals[key] = (value, None, None)
        return key

    def tagged(self, value: str, language: str) -> str:
        """A language-tagged literal."""
        tag = self._tags.get(language)
        if tag is None:
            tag = self._tags[language] = str(self._literal("", language=language))[2:]
        key = str(self._literal(value, language=language)) if _ESCAPED(value) else f'"{value}"{tag}'
        if key not in self.literals:
            self.literals[key] = (value, tag[1:], None)
        return key

    def typed(self, value: str, datatype: str) -> str:
        """A literal of the *datatype* IRI (not ``xsd:string``)."""
        found = self._types.get(datatype)
        if found is None:
            found = self._types[datatype] = self._named(datatype)
        key = str(self._literal(value, datatype=found))
        if key not in self.literals:
            self.literals[key] = (value, None, datatype)
        return key

    def add(self, term) -> str:
        """An Oxigraph term made elsewhere (a ``NamedNode`` or a ``Literal``)."""
        import pyoxigraph as ox

        if isinstance(term, ox.NamedNode):
            return self.iri(term.value)
        if term.language:
            return self.tagged(term.value, term.language)
        if term.datatype.value == str(XSD.string):
            return self.text(term.value)
        return self.typed(term.value, term.datatype.value)

    def term(self, key: str):
        """The Oxigraph term that *key* is the text of."""
        if key in self.iris:
            return self._named(key[1:-1])
        value, language, datatype = self.literals[key]
        if datatype is not None:
            return self._literal(value, datatype=self._types[datatype])
        return self._literal(value, language=language)


_ESCAPED = re.compile(r'[\x00-\x1f"\\\x7f\ud800-\udfff\ufffe\uffff]').search  # characters Oxigraph escapes (or refuses)
_XSD_INTEGER = str(XSD.integer)


def _statement_groups(G: nx.Graph, base: str) -> tuple[list[_Group], _Terms]:
    """The groups of `statements`, each term written as its N-Triples text, each group as
    (subject, predicates, objects) (groups of the same kind share their tuple of predicates),
    and the `_Terms` those texts stand for."""
    from kg.graph import papers_under

    terms = _Terms()
    N, text, tagged, typed = terms.iri, terms.text, terms.tagged, terms.typed
    rdf_type, label = N(str(RDF.type)), N(str(RDFS.label))
    xsd = {name: str(XSD[name]) for name in ("integer", "decimal", "gYear")}
    sdo = {name: N(str(SDO[name])) for name in ("ScholarlyArticle", "CreativeWorkSeries", "identifier", "name", "headline",
                                                 "abstract", "datePublished", "url", "codeRepository", "isPartOf")}
    skos = {name: N(str(SKOS[name])) for name in ("Concept", "ConceptScheme", "inScheme", "prefLabel", "altLabel", "broader",
                                                  "related")}
    prov = {name: N(str(PROV[name])) for name in ("Activity", "Entity", "SoftwareAgent", "used", "wasAssociatedWith",
                                                   "wasGeneratedBy", "wasDerivedFrom")}
    kgv = {name: N(str(KGV._NS[name])) for name in ("KeyphraseAssignment", "paper", "concept", "phrase", "score", "rank",
                                                     "paperCount", "cleanAbstract", "source", "sourceId", "settings", "sha256",
                                                     "ConceptRelation", "relates", "cooccurrences", "association", "labelKey",
                                                     "paperCountWithNarrower", "conceptCount", "VenueConcept", "venue", "venuePaperCount",
                                                     "word", "text")}
    subject = N(str(DCTERMS.subject))
    assignment, entity = kgv["KeyphraseAssignment"], prov["Entity"]
    about_assignment = (rdf_type, rdf_type, kgv["paper"], kgv["concept"], kgv["phrase"], kgv["score"], kgv["rank"],
                        prov["wasGeneratedBy"], prov["wasDerivedFrom"])
    about_relation = (rdf_type, kgv["relates"], kgv["relates"], kgv["cooccurrences"], kgv["association"])
    about_venue_concept = (rdf_type, kgv["venue"], kgv["concept"], kgv["venuePaperCount"], kgv["rank"])

    class NodeIRIs(dict):
        """A node's IRI, made once (a concept is named by hundreds of papers)."""

        def __missing__(self, node: str) -> str:
            kind, _, local = node.partition(":")
            self[node] = iri = N(f"{base}{kind}/{local}")
            return iri

    iri_of = NodeIRIs().__getitem__

    class WordIRIs(dict):
        """A label word's IRI (kg:word/<the word, percent-encoded>), made once."""

        def __missing__(self, word: str) -> str:
            self[word] = iri = N(f"{base}word/{quote(word, safe='')}")
            return iri

    word_iris = WordIRIs()
    word_iri = word_iris.__getitem__

    def words(*labels: str | None) -> list[tuple[str, str]]:
        # The search index of an item's labels (queries/search.rq): a kgv:word link to each
        # distinct word of their lowercase forms (Python's str.lower, as SPARQL's LCASE), the
        # words split at each space, so that a text found in a label is found within one of its
        # words: a text's space-free piece lies inside one word (docs/model.md).
        found = {w for label in labels if label for w in label.lower().split(" ") if w}
        return [(kgv["word"], word_iri(w)) for w in sorted(found)]

    integers: dict[int, str] = {}
    decimals: dict[str, str] = {}

    def integer(value) -> str:
        value = int(value)
        term = integers.get(value)
        if term is None:
            term = integers[value] = typed(str(value), xsd["integer"])
        return term

    def decimal(value: float) -> str:
        text_ = str(value)
        term = decimals.get(text_)
        if term is None:
            term = decimals[text_] = typed(format(Decimal(text_), "f"), xsd["decimal"])
        return term

    groups: list[_Group] = []

    def add(s: str, about) -> None:  # (predicate, object) pairs
        groups.append((s, *zip(*about)) if about else (s, (), ()))

    meta = G.graph
    scheme, model, software = N(f"{base}concepts"), N(f"{base}agent/model"), N(f"{base}agent/kg")
    activity = N(f"{base}activity/{meta.get('fingerprint', 'extraction')}")
    add(scheme, [(rdf_type, skos["ConceptScheme"]), (N(str(DCTERMS.title)), text("Concepts extracted by kg"))])
    about_activity = [(rdf_type, prov["Activity"]), (label, text(f"keyphrase extraction ({meta.get('extractor', 'KeyBERT')})")),
                      (prov["used"], model), (prov["wasAssociatedWith"], software)]
    if meta.get("settings") is not None:
        about_activity.append((kgv["settings"], text(json.dumps(meta["settings"], sort_keys=True))))
    add(activity, about_activity)
    about_model = [(rdf_type, prov["Entity"]), (label, text(str(meta.get("model", "unknown model"))))]
    if meta.get("model_sha256"):
        about_model.append((kgv["sha256"], text(meta["model_sha256"])))
    add(model, about_model)
    add(software, [(rdf_type, prov["SoftwareAgent"]), (label, text(f"kg {meta.get('kg_version', '')}".strip()))])

    nodes = dict(G.nodes(data=True))  # plain dicts: networkx's views cost a call per item
    adj = dict(G.adjacency())
    kinds = {n: d.get("kind") for n, d in nodes.items()}
    broader = {b for node, kind in kinds.items() if kind == "concept" for b in nodes[node].get("broader", [])}
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
    under = papers_under(G, [(paper, c) for paper, found in concepts_of.items() for c in found])  # linked to a concept or below it

    for node in sorted(kinds):
        d, kind = nodes[node], kinds[node]
        s = iri_of(node)
        if kind == "paper":
            pid = node.partition(":")[2]
            about = [(rdf_type, sdo["ScholarlyArticle"]), (sdo["identifier"], text(pid)), (sdo["name"], text(d["label"]))]
            if d.get("title"):
                about.append((sdo["headline"], text(d["title"])))
            about += [(sdo["abstract"], text(d["abstract"])), (kgv["cleanAbstract"], text(d["text"]))]
            if d.get("year") is not None:
                about.append((sdo["datePublished"], typed(f"{int(d['year']):04d}", xsd["gYear"])))
            if d.get("source_id"):
                about.append((kgv["sourceId"], text(d["source_id"])))
            about += [(kgv["source"], text(ref)) for ref in d.get("sources", [])]
            for url in d.get("urls", []):
                iri = terms.add(_iri(url))
                about.append((sdo["url"], iri))
                if _is_code(url):
                    about.append((sdo["codeRepository"], iri))
            venues, links = edges_of[node]
            about += [(sdo["isPartOf"], iri_of(v)) for v in venues]
            about += [(subject, iri_of(c)) for _, c, _ in links]
            about += words(d["label"], d.get("title"))
            add(s, dict.fromkeys(about))
            for rank, c, e in links:
                groups.append((N(f"{base}assignment/{pid}/{rank}"), about_assignment, (
                    assignment, entity, s, iri_of(c), text(e["phrase"]), decimal(e["score"]), integer(rank), activity, s)))
        elif kind == "concept":
            about = [(rdf_type, skos["Concept"]), (skos["inScheme"], scheme), (skos["prefLabel"], tagged(d["label"], "en"))]
            about += [(skos["altLabel"], tagged(alt, "en")) for alt in d.get("alt_labels", [])]
            # A label with capitals also gives its lowercase form (Unicode, as SPARQL's LCASE), so
            # that a case-insensitive lookup is an index lookup: LCASE(text)@en among the labels
            # (a label without capitals is its own key) or LCASE(text) among the kgv:labelKey.
            about += [(kgv["labelKey"], text(text_.lower()))
                      for text_ in [d["label"], *d.get("alt_labels", [])] if text_.lower() != text_]
            about.append((kgv["paperCount"], integer(d["papers"])))
            if node in broader:
                about.append((kgv["paperCountWithNarrower"], integer(len(under.get(node, ())))))
            about += [(skos["broader"], iri_of(b)) for b in d.get("broader", [])]
            related = sorted([(other, e) for other, e in adj[node].items() if e.get("related") and e.get("kind") == "cooccurs"])
            about += [(skos["related"], iri_of(other)) for other, _ in related]
            about += words(d["label"], *d.get("alt_labels", []))
            add(s, dict.fromkeys(about))
            for other, e in related:  # the evidence of each skos:related pair, once
                if node < other:
                    groups.append((N(f"{base}relation/{node.partition(':')[2]}/{other.partition(':')[2]}"), about_relation, (
                        kgv["ConceptRelation"], s, iri_of(other), integer(e["count"]), decimal(e["association"]))))
        elif kind == "venue":
            counts = Counter(chain.from_iterable(concepts_of[p] for p, e in adj[node].items()
                                                 if e.get("kind") == "venue" and kinds.get(p) == "paper"))
            add(s, [(rdf_type, sdo["CreativeWorkSeries"]), (sdo["name"], text(d["label"])),
                    (kgv["conceptCount"], integer(len(counts))), *words(d["label"])])
            # The venue's VENUE_RANKS concepts with the most papers there, ranked as the query
            # top-concepts-per-venue ranks them (ties by lowercase label, then IRI), so that it is
            # a lookup, not a count of every (venue, concept) pair. Their count is not a
            # kgv:paperCount, which queries scan as the concepts' own.
            ranked = list(counts)
            if len(ranked) > VENUE_RANKS:  # none with fewer papers there than the last one ranked can be ranked
                least = heapq.nlargest(VENUE_RANKS, counts.values())[-1]
                ranked = [c for c in ranked if counts[c] >= least]
            ranked.sort(key=lambda c: (-counts[c], nodes[c]["label"].lower(), iri_of(c)[1:-1]))
            for rank, c in enumerate(ranked[:VENUE_RANKS], start=1):
                groups.append((N(f"{base}venue-concept/{node.partition(':')[2]}/{c.partition(':')[2]}"), about_venue_concept, (
                    kgv["VenueConcept"], s, iri_of(c), integer(counts[c]), integer(rank))))
    about_word = (kgv["text"],)
    for word, iri in sorted(word_iris.items()):
        groups.append((iri, about_word, (text(word),)))
    return groups, terms


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


def rdf_files(G: nx.Graph, *, base: str | None = None) -> dict[str, bytes]:
    """The text (UTF-8) of each RDF output file of *G*: ``graph.ttl``, ``graph.nt`` and
    ``graph.jsonld``: the N-Triples and Turtle that Oxigraph's serializers write (and kg's
    compact JSON-LD) of `statements`, without building an rdflib graph. The same graph gives
    the same bytes."""
    out = in_memory(lambda open_output: write_rdf(G, open_output, base=base))
    return {name: out[name] for name in FORMATS}


def in_memory(write: Callable[[Callable], None]) -> dict[str, bytes]:
    """What *write* writes, by file name, when it is handed an ``open_output(name)`` context
    manager that gives in-memory binary files (the writers of `write_rdf`'s kind)."""
    import io
    from contextlib import contextmanager

    out: dict[str, bytes] = {}

    @contextmanager
    def open_output(name: str):
        buffer = io.BytesIO()
        yield buffer
        out[name] = buffer.getvalue()

    write(open_output)
    return out


def write_rdf(G: nx.Graph, open_output, *, base: str | None = None, written: Callable[[str], None] | None = None) -> None:
    """Write each RDF output file of *G* (`rdf_files`), one after the other (``graph.nt``
    first), to the binary file that ``open_output(name)`` (a context manager) gives: no file's
    text is held whole in memory (at 10,000 papers the three come to ~400 MB). *written* is
    called with each file's name once it is written (a store can load ``graph.nt`` meanwhile)."""
    base = check_base(base or G.graph.get("base_iri") or DEFAULT_BASE)
    groups, terms = _statement_groups(G, base)
    names = prefixes(base)
    writers = {
        "graph.ttl": lambda f: _turtle(groups, terms, names, f),
        "graph.nt": lambda f: _ntriples(groups, f),
        "graph.jsonld": lambda f: _jsonld(groups, terms, names, f),
    }
    for name in FORMATS:
        with open_output(name) as f:
            writers[name](f)
        if written is not None:
            written(name)


def _chunks(groups: list[_Group], size: int = 2000):
    """*groups* in consecutive slices of *size*: the writers join and write a slice at a time."""
    for start in range(0, len(groups), size):
        yield groups[start:start + size]


def _literally(text: str) -> str:
    """*text* as a literal part of a %-format template."""
    return text.replace("%", "%%")


def _ntriples(groups: list[_Group], f) -> None:
    """Write the statement *groups* (terms as N-Triples text) to *f* as N-Triples: a triple a
    line, as Oxigraph's serializer writes them."""
    for chunk in _chunks(groups):
        f.write("".join([f"{s} {p} {o} .\n" for s, ps, os in chunk for p, o in zip(ps, os)]).encode("utf-8"))


def _turtle(groups: list[_Group], terms: _Terms, names: dict[str, str], f) -> None:
    """Write to *f* the Turtle that Oxigraph's serializer writes for the triples of the statement
    *groups* with the *names* prefixes, its ``@prefix`` lines in name order (Oxigraph's own
    order is that of a hash map).

    Oxigraph writes each IRI and typed literal (`_turtle_forms` asks it for them all at once)
    and each plain or language-tagged literal as in N-Triples; its layout is kept here: a
    subject's next predicate after `` ;`` on a new line with a tab, a repeated predicate's
    next object after `` , ``, a subject's last statement ended by `` .``. The text of a
    group's statements comes from a template made once for its predicates."""
    forms, head = _turtle_forms(terms, names)
    predicates: dict[str, str] = {}

    def template(ps: tuple[str, ...], last: str | None) -> str:
        """The text of statements of *ps* after their subject's, %s for each object; *last*:
        the predicate of the statement just before of the same subject, if any."""
        parts = []
        for p in ps:
            if p == last:
                parts.append(" , %s")
                continue
            if p not in predicates:
                predicates[p] = _literally(_turtle_predicate(terms.term(p), names))
            parts.append((" ;\n\t" if last is not None else " ") + predicates[p] + " %s")
            last = p
        return "".join(parts)

    templates: dict[tuple[str, ...], str] = {}
    get = forms.get
    last_s = last_p = None
    for chunk in _chunks(groups):
        out = []
        for s, ps, os in chunk:
            if not ps:
                continue
            if s == last_s:  # the subject goes on (each has one group: not from `_statement_groups`)
                out.append(template(ps, last_p) % (*map(get, os, os),))
            else:
                found = templates.get(ps)
                if found is None:
                    found = templates[ps] = "%s" + template(ps, None)
                out += (" .\n" if last_s is not None else head, found % (get(s, s), *map(get, os, os)))
            last_s, last_p = s, ps[-1]
        f.write("".join(out).encode("utf-8"))
    f.write(b" .\n" if last_s is not None else b"\n")


def _turtle_forms(terms: _Terms, names: dict[str, str]) -> tuple[dict[str, str], str]:
    """The Turtle text Oxigraph writes for each IRI and typed literal of *terms* (by N-Triples
    text) under the *names* prefixes, and its ``@prefix`` lines (sorted) with the empty line
    after them: all from one Turtle serialization of a triple for each term, one subject and two
    predicates by turns, so that each term ends up on a line of its own."""
    import pyoxigraph as ox

    asked = [*terms.iris, *(key for key in terms.literals if key.endswith(">"))]  # a typed literal's ends with its datatype
    nt = "".join([f"<urn:kg:s> <urn:kg:p{i & 1}> {key} .\n" for i, key in enumerate(asked)]).encode("utf-8")
    out = ox.serialize(ox.parse(nt, format=ox.RdfFormat.N_TRIPLES, lenient=True), format=ox.RdfFormat.TURTLE, prefixes=names)
    *lines, body = out.decode("utf-8").split("\n", len(names))
    pieces = re.split(r" ;\n\t<urn:kg:p[01]> ", body.removeprefix("<urn:kg:s> <urn:kg:p0> ").removesuffix(" .\n"))
    if not all(line.startswith("@prefix ") for line in lines) or len(pieces) != len(asked) \
            or not body.startswith("<urn:kg:s> <urn:kg:p0> "):
        raise KGError("unexpected Turtle from pyoxigraph: not the @prefix lines and then one term a line")
    return dict(zip(asked, pieces)), "".join(line + "\n" for line in sorted(lines)) + "\n"


def _turtle_predicate(p, names: dict[str, str]) -> str:
    """The Turtle text Oxigraph writes for the predicate *p* (an Oxigraph ``NamedNode``)."""
    import pyoxigraph as ox

    out = ox.serialize([ox.Triple(ox.NamedNode("urn:kg:s"), p, ox.NamedNode("urn:kg:o"))], format=ox.RdfFormat.TURTLE, prefixes=names)
    line = out.decode("utf-8").split("\n")[len(names)]
    return line.removeprefix("<urn:kg:s> ").removesuffix(" <urn:kg:o> .")


def _jsonld(groups: list[_Group], terms: _Terms, names: dict[str, str], f) -> None:
    """Write to *f* compact JSON-LD of the statement *groups*: a ``@context`` of the *names* prefixes and one
    node object a line in ``@graph``. Integers are JSON numbers; other typed literals say their type.

    A node object is the text the JSON encoder writes for it (keys sorted, no spaces, each
    key's values in a list), put together from the JSON text of each term's value by a
    template made once for its predicates."""
    from kg.graph import json_encoder

    encode = json_encoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    quote = json.encoder.encode_basestring  # what `encode` writes for a str
    compact = _compactor(names)
    literals, iris = terms.literals, terms.iris
    rdf_type = f"<{RDF.type}>"

    class Values(dict):
        """The JSON text of each term's value, made when first asked for."""

        def __missing__(self, key: str) -> str:
            if key in iris:
                self[key] = text = '{"@id":' + quote(compact(key[1:-1])) + "}"  # as `encode` writes {"@id": ...}
                return text
            value, language, datatype = literals[key]
            if language is not None:
                text = encode({"@value": value, "@language": language})
            elif datatype == _XSD_INTEGER and re.fullmatch(r"-?[1-9][0-9]{0,14}|0", value):
                text = encode(int(value))
            else:
                text = encode({"@value": value, "@type": compact(datatype)})
            self[key] = text
            return text

    values = Values({key: quote(value) for key, (value, language, datatype) in literals.items()
                     if language is None and datatype is None})  # strings, most read once: at C speed
    ids: dict[str, str] = {}  # IRI -> the JSON text of its compact form (as an @type)

    def template(ps: tuple[str, ...]) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
        """The node object of statements of *ps*: its text with %s for each value, the
        values' places among (@id, object of each statement), and the places of the rdf:type
        statements' objects (whose value is written as an @type)."""
        fields: dict[str, list[int]] = {"@id": [0]}
        for i, p in enumerate(ps, 1):
            fields.setdefault("@type" if p == rdf_type else compact(p[1:-1]), []).append(i)
        fields = dict(sorted(fields.items()))
        text = ",".join(['"@id":%s' if key == "@id" else f"{_literally(encode(key))}:[{','.join(['%s'] * len(at))}]"
                         for key, at in fields.items()])
        return "{" + text + "}", tuple(chain.from_iterable(fields.values())), tuple(fields.get("@type", ()))

    templates: dict[tuple[str, ...], tuple[str, tuple[int, ...], tuple[int, ...]]] = {}
    head = encode({"@context": dict(sorted(names.items()))})
    f.write((head[:-1] + ',"@graph":[').encode("utf-8"))
    separator = "\n"
    for chunk in _chunks(groups):
        out = []
        for s, ps, os in chunk:
            found = templates.get(ps)
            if found is None:
                found = templates[ps] = template(ps)
            text, places, types = found
            texts = [quote(compact(s[1:-1])), *map(values.__getitem__, os)]
            for i in types:
                o = os[i - 1]
                texts[i] = ids.get(o) or ids.setdefault(o, quote(compact(o[1:-1])))
            out += (separator, text % (*map(texts.__getitem__, places),))
            separator = ",\n"
        f.write("".join(out).encode("utf-8"))
    f.write(b"\n\n]}\n" if separator == "\n" else b"\n]}\n")


def _compactor(names: dict[str, str]) -> Callable[[str], str]:
    """A function that writes an IRI as ``prefix:local`` under the longest of the *names*
    namespaces it extends, else as it is."""
    by_length = sorted(names.items(), key=lambda kv: -len(kv[1]))
    longest = re.compile("|".join(re.escape(ns) for _, ns in by_length)).match  # alternatives are tried in order
    prefix_of = {ns: prefix for prefix, ns in reversed(by_length)}  # the first of two names of one namespace

    def compact(iri: str) -> str:
        found = longest(iri)
        if found is None:
            return iri
        if found.end() < len(iri):
            return f"{prefix_of[found.group()]}:{iri[found.end():]}"
        for prefix, ns in by_length:  # the IRI of a namespace itself
            if iri.startswith(ns) and len(iri) > len(ns):
                return f"{prefix}:{iri[len(ns):]}"
        return iri

    return compact


def serialize(g: Graph, fmt: str) -> str:
    """Text of *g* in an rdflib format, stable from run to run (N-Triples lines sorted)."""
    if fmt in ("nt", "ntriples", "nt11"):
        lines = sorted(set(g.serialize(format="nt").splitlines()) - {""})
        return "\n".join(lines) + "\n"
    if fmt == "json-ld":
        context = {prefix: str(uri) for prefix, uri in g.namespaces()}
        return g.serialize(format="json-ld", context=context, indent=1, sort_keys=True)
    return g.serialize(format=fmt)
