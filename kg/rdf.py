"""RDF view of the graph, with rdflib and standard vocabularies.

Papers are ``schema:ScholarlyArticle``; concepts ``skos:Concept`` in one
``skos:ConceptScheme`` with ``skos:prefLabel``/``skos:altLabel``; ``dcterms:subject`` links a
paper to each of its concepts; each link is also a ``kgv:KeyphraseAssignment`` (a
``prov:Entity``) that keeps its phrase, score and rank and the extraction activity and
model that produced it (PROV-O). Venues are ``schema:CreativeWorkSeries``; each one's
`VENUE_RANKS` concepts with the most papers there are ``kgv:VenueConcept`` nodes (count, rank).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from decimal import Decimal
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
    terms: the one place that says which triples exist (`to_rdf` and `rdf_files` read it).

    Each subject has one group, without repeated statements; the order depends only on the
    content (subjects by node id, a paper's assignments after it by rank), never on the order
    the graph was built in. IRIs depend only on content ids.
    """
    import pyoxigraph as ox

    from kg.graph import papers_under

    base = check_base(base or G.graph.get("base_iri") or DEFAULT_BASE)
    N, L = ox.NamedNode, ox.Literal
    rdf_type, label = N(str(RDF.type)), N(str(RDFS.label))
    xsd = {name: N(str(XSD[name])) for name in ("integer", "decimal", "gYear")}
    sdo = {name: N(str(SDO[name])) for name in ("ScholarlyArticle", "CreativeWorkSeries", "identifier", "name", "headline",
                                                 "abstract", "datePublished", "url", "codeRepository", "isPartOf")}
    skos = {name: N(str(SKOS[name])) for name in ("Concept", "ConceptScheme", "inScheme", "prefLabel", "altLabel", "broader",
                                                  "related")}
    prov = {name: N(str(PROV[name])) for name in ("Activity", "Entity", "SoftwareAgent", "used", "wasAssociatedWith",
                                                   "wasGeneratedBy", "wasDerivedFrom")}
    kgv = {name: N(str(KGV._NS[name])) for name in ("KeyphraseAssignment", "paper", "concept", "phrase", "score", "rank",
                                                     "paperCount", "cleanAbstract", "source", "sourceId", "settings", "sha256",
                                                     "ConceptRelation", "relates", "cooccurrences", "association", "labelKey",
                                                     "paperCountWithNarrower", "conceptCount", "VenueConcept", "venue", "venuePaperCount")}
    subject = N(str(DCTERMS.subject))

    iris: dict[str, Any] = {}  # a node's IRI, made once (a concept is named by hundreds of papers)

    def iri_of(node: str):
        iri = iris.get(node)
        if iri is None:
            kind, _, local = node.partition(":")
            iri = iris[node] = N(f"{base}{kind}/{local}")
        return iri

    integers: dict[int, Any] = {}
    decimals: dict[str, Any] = {}

    def integer(value) -> Any:
        value = int(value)
        term = integers.get(value)
        if term is None:
            term = integers[value] = L(str(value), datatype=xsd["integer"])
        return term

    def decimal(value: float) -> Any:
        text = str(value)
        term = decimals.get(text)
        if term is None:
            term = decimals[text] = L(format(Decimal(text), "f"), datatype=xsd["decimal"])
        return term

    meta = G.graph
    scheme, model, software = N(f"{base}concepts"), N(f"{base}agent/model"), N(f"{base}agent/kg")
    activity = N(f"{base}activity/{meta.get('fingerprint', 'extraction')}")
    groups: list[tuple[Any, list[tuple[Any, Any]]]] = [
        (scheme, [(rdf_type, skos["ConceptScheme"]), (N(str(DCTERMS.title)), L("Concepts extracted by kg"))]),
    ]
    about_activity = [(rdf_type, prov["Activity"]), (label, L(f"keyphrase extraction ({meta.get('extractor', 'KeyBERT')})")),
                      (prov["used"], model), (prov["wasAssociatedWith"], software)]
    if meta.get("settings") is not None:
        about_activity.append((kgv["settings"], L(json.dumps(meta["settings"], sort_keys=True))))
    groups.append((activity, about_activity))
    about_model = [(rdf_type, prov["Entity"]), (label, L(str(meta.get("model", "unknown model"))))]
    if meta.get("model_sha256"):
        about_model.append((kgv["sha256"], L(meta["model_sha256"])))
    groups.append((model, about_model))
    groups.append((software, [(rdf_type, prov["SoftwareAgent"]), (label, L(f"kg {meta.get('kg_version', '')}".strip()))]))

    kinds = {n: d.get("kind") for n, d in G.nodes(data=True)}
    nodes, adj = G.nodes, G.adj
    broader = {b for node, kind in kinds.items() if kind == "concept" for b in nodes[node].get("broader", [])}
    under = papers_under(G)  # papers linked to a concept or to one below it

    for node in sorted(kinds):
        d, kind = nodes[node], kinds[node]
        s = iri_of(node)
        if kind == "paper":
            pid = node.partition(":")[2]
            about = [(rdf_type, sdo["ScholarlyArticle"]), (sdo["identifier"], L(pid)), (sdo["name"], L(d["label"]))]
            if d.get("title"):
                about.append((sdo["headline"], L(d["title"])))
            about += [(sdo["abstract"], L(d["abstract"])), (kgv["cleanAbstract"], L(d["text"]))]
            if d.get("year") is not None:
                about.append((sdo["datePublished"], L(f"{int(d['year']):04d}", datatype=xsd["gYear"])))
            if d.get("source_id"):
                about.append((kgv["sourceId"], L(d["source_id"])))
            about += [(kgv["source"], L(ref)) for ref in d.get("sources", [])]
            for url in d.get("urls", []):
                about.append((sdo["url"], _iri(url)))
                if _is_code(url):
                    about.append((sdo["codeRepository"], _iri(url)))
            links = []
            for other, e in adj[node].items():
                if e.get("kind") == "venue" and kinds.get(other) == "venue":
                    about.append((sdo["isPartOf"], iri_of(other)))
                elif e.get("kind") == "subject" and kinds.get(other) == "concept":
                    links.append((int(e["rank"]), other, e))
            links.sort(key=lambda x: (x[0], x[1]))
            about += [(subject, iri_of(c)) for _, c, _ in links]
            groups.append((s, list(dict.fromkeys(about))))
            for rank, c, e in links:
                groups.append((N(f"{base}assignment/{pid}/{rank}"), [
                    (rdf_type, kgv["KeyphraseAssignment"]), (rdf_type, prov["Entity"]), (kgv["paper"], s),
                    (kgv["concept"], iri_of(c)), (kgv["phrase"], L(e["phrase"])),
                    (kgv["score"], decimal(e["score"])),
                    (kgv["rank"], integer(rank)), (prov["wasGeneratedBy"], activity), (prov["wasDerivedFrom"], s),
                ]))
        elif kind == "concept":
            about = [(rdf_type, skos["Concept"]), (skos["inScheme"], scheme), (skos["prefLabel"], L(d["label"], language="en"))]
            about += [(skos["altLabel"], L(alt, language="en")) for alt in d.get("alt_labels", [])]
            # A label with capitals also gives its lowercase form (Unicode, as SPARQL's LCASE), so
            # that a case-insensitive lookup is an index lookup: LCASE(text)@en among the labels
            # (a label without capitals is its own key) or LCASE(text) among the kgv:labelKey.
            about += [(kgv["labelKey"], L(text.lower()))
                      for text in [d["label"], *d.get("alt_labels", [])] if text.lower() != text]
            about.append((kgv["paperCount"], integer(d["papers"])))
            if node in broader:
                about.append((kgv["paperCountWithNarrower"], integer(len(under.get(node, ())))))
            about += [(skos["broader"], iri_of(b)) for b in d.get("broader", [])]
            related = sorted((other, e) for other, e in adj[node].items() if e.get("kind") == "cooccurs" and e.get("related"))
            about += [(skos["related"], iri_of(other)) for other, _ in related]
            groups.append((s, list(dict.fromkeys(about))))
            for other, e in related:  # the evidence of each skos:related pair, once
                if node < other:
                    groups.append((N(f"{base}relation/{node.partition(':')[2]}/{other.partition(':')[2]}"), [
                        (rdf_type, kgv["ConceptRelation"]), (kgv["relates"], s), (kgv["relates"], iri_of(other)),
                        (kgv["cooccurrences"], integer(e["count"])), (kgv["association"], decimal(e["association"])),
                    ]))
        elif kind == "venue":
            counts = Counter(c for p, e in adj[node].items() if e.get("kind") == "venue" and kinds.get(p) == "paper"
                             for c, f in adj[p].items() if f.get("kind") == "subject" and kinds.get(c) == "concept")
            groups.append((s, [(rdf_type, sdo["CreativeWorkSeries"]), (sdo["name"], L(d["label"])),
                               (kgv["conceptCount"], integer(len(counts)))]))
            # The venue's VENUE_RANKS concepts with the most papers there, ranked as the query
            # top-concepts-per-venue ranks them (ties by lowercase label, then IRI), so that it is
            # a lookup, not a count of every (venue, concept) pair. Their count is not a
            # kgv:paperCount, which queries scan as the concepts' own.
            ranked = sorted(counts, key=lambda c: (-counts[c], nodes[c]["label"].lower(), iri_of(c).value))
            for rank, c in enumerate(ranked[:VENUE_RANKS], start=1):
                groups.append((N(f"{base}venue-concept/{node.partition(':')[2]}/{c.partition(':')[2]}"), [
                    (rdf_type, kgv["VenueConcept"]), (kgv["venue"], s), (kgv["concept"], iri_of(c)),
                    (kgv["venuePaperCount"], integer(counts[c])), (kgv["rank"], integer(rank)),
                ]))
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


def rdf_files(G: nx.Graph, *, base: str | None = None) -> dict[str, bytes]:
    """The text (UTF-8) of each RDF output file of *G*: ``graph.ttl``, ``graph.nt`` and
    ``graph.jsonld``, written by Oxigraph's serializers (and kg's compact JSON-LD) from
    `statements`, without building an rdflib graph. The same graph gives the same bytes."""
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
    import pyoxigraph as ox

    base = check_base(base or G.graph.get("base_iri") or DEFAULT_BASE)
    groups = statements(G, base=base)
    names = prefixes(base)

    def triples():  # made afresh for each format: a list of them all would double the memory
        return (ox.Triple(s, p, o) for s, about in groups for p, o in about)

    writers = {
        "graph.ttl": lambda f: _turtle(triples(), names, f),
        "graph.nt": lambda f: ox.serialize(triples(), f, format=ox.RdfFormat.N_TRIPLES),
        "graph.jsonld": lambda f: _jsonld(groups, names, f),
    }
    for name in FORMATS:
        with open_output(name) as f:
            writers[name](f)
        if written is not None:
            written(name)


class _SortedHead:
    """Writes to *f* what Oxigraph's Turtle serializer gives, its first *lines* lines (the
    ``@prefix`` lines) sorted and followed by an empty line, the rest as it comes."""

    def __init__(self, f, lines: int) -> None:
        self._f, self._lines, self._head, self._done = f, lines, b"", False
        self.write = self._buffer

    def flush(self) -> None:
        self._f.flush()

    def _buffer(self, data) -> int:
        self._head += bytes(data)
        if self._head.count(b"\n") >= self._lines:
            self.close()
        return len(data)

    def close(self) -> None:
        if self._done:
            return
        *head, body = self._head.split(b"\n", self._lines)
        if not all(line.startswith(b"@prefix ") for line in head):
            raise KGError("unexpected Turtle from pyoxigraph: the @prefix lines do not come first")
        self._f.write(b"".join(line + b"\n" for line in sorted(head)) + b"\n" + body)
        self.write, self._done = self._f.write, True


def _turtle(triples, names: dict[str, str], f) -> None:
    """Write Turtle of *triples* by Oxigraph to *f*, its ``@prefix`` lines in name order
    (Oxigraph's own order is that of a hash map)."""
    import pyoxigraph as ox

    out = _SortedHead(f, len(names))
    ox.serialize(triples, out, format=ox.RdfFormat.TURTLE, prefixes=names)
    out.close()


def _jsonld(groups: list[tuple[Any, list[tuple[Any, Any]]]], names: dict[str, str], f) -> None:
    """Write to *f* compact JSON-LD of the statement *groups*: a ``@context`` of the *names* prefixes and one
    node object a line in ``@graph``. Integers are JSON numbers; other typed literals say their type."""
    import pyoxigraph as ox

    by_length = sorted(names.items(), key=lambda kv: -len(kv[1]))
    compacted: dict[str, str] = {}

    def compact(iri: str) -> str:
        found = compacted.get(iri)
        if found is None:
            found = iri
            for prefix, ns in by_length:
                if iri.startswith(ns) and len(iri) > len(ns):
                    found = f"{prefix}:{iri[len(ns):]}"
                    break
            if len(compacted) < 100_000:
                compacted[iri] = found
        return found

    rdf_type, integer, string = str(RDF.type), str(XSD.integer), str(XSD.string)
    string_type = ox.NamedNode(string)

    def value(o) -> Any:
        if isinstance(o, ox.NamedNode):
            return {"@id": compact(o.value)}
        if o.language:
            return {"@value": o.value, "@language": o.language}
        dt = o.datatype.value
        if dt == string:
            return o.value
        if dt == integer and re.fullmatch(r"-?[1-9][0-9]{0,14}|0", o.value):
            return int(o.value)
        return {"@value": o.value, "@type": compact(dt)}

    # IRIs and typed literals repeat (concepts, ranks, scores): their JSON values are made once
    # per term (the encoder only reads them); plain strings are read as they come.
    known: dict[Any, Any] = {}
    keys: dict[Any, str | None] = {}  # predicate -> its key, None for rdf:type

    def value_of(o) -> Any:
        if isinstance(o, ox.Literal) and not o.language and o.datatype == string_type:
            return o.value
        found = known.get(o)
        if found is None:
            found = value(o)
            if len(known) < 500_000:
                known[o] = found
        return found

    from kg.graph import json_encoder

    encode = json_encoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    head = encode({"@context": dict(sorted(names.items()))})
    f.write((head[:-1] + ',"@graph":[').encode("utf-8"))
    separator = "\n"
    for s, about in groups:
        node: dict[str, Any] = {"@id": compact(s.value)}
        for p, o in about:
            if p not in keys:
                keys[p] = None if p.value == rdf_type else compact(p.value)
            key = keys[p]
            if key is None:
                node.setdefault("@type", []).append(compact(o.value))
            else:
                node.setdefault(key, []).append(value_of(o))
        f.write((separator + encode(node)).encode("utf-8"))
        separator = ",\n"
    f.write(b"\n\n]}\n" if separator == "\n" else b"\n]}\n")


def serialize(g: Graph, fmt: str) -> str:
    """Text of *g* in an rdflib format, stable from run to run (N-Triples lines sorted)."""
    if fmt in ("nt", "ntriples", "nt11"):
        lines = sorted(set(g.serialize(format="nt").splitlines()) - {""})
        return "\n".join(lines) + "\n"
    if fmt == "json-ld":
        context = {prefix: str(uri) for prefix, uri in g.namespaces()}
        return g.serialize(format="json-ld", context=context, indent=1, sort_keys=True)
    return g.serialize(format=fmt)
