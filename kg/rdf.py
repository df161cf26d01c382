"""RDF view of the graph, with rdflib and standard vocabularies.

Papers are ``schema:ScholarlyArticle``; concepts ``skos:Concept`` in one
``skos:ConceptScheme`` with ``skos:prefLabel``/``skos:altLabel``; ``dcterms:subject`` links a
paper to each of its concepts; each link is also a ``kgv:KeyphraseAssignment`` (a
``prov:Entity``) that keeps its phrase, score and rank and the extraction activity and
model that produced it (PROV-O). Venues are ``schema:CreativeWorkSeries``.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from urllib.parse import quote, urlsplit, urlunsplit

import networkx as nx
from rdflib import RDF, RDFS, XSD, Graph, Literal, Namespace, URIRef
from rdflib.namespace import DCTERMS, PROV, SDO, SKOS, DefinedNamespace

from kg.errors import KGError

__all__ = ["DEFAULT_BASE", "KGV", "to_rdf", "serialize", "FORMATS", "check_base"]

DEFAULT_BASE = "https://example.org/kg/"
FORMATS = {"graph.ttl": "turtle", "graph.nt": "nt", "graph.jsonld": "json-ld"}
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


def check_base(base: str) -> str:
    """An absolute http(s) base IRI ending in ``/`` or ``#``."""
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.netloc or not base.endswith(("/", "#")) or any(c in base for c in ' <>"{}|\\^`'):
        raise KGError(f"base IRI {base!r} is not an absolute http(s) IRI ending in '/' or '#'; give one such as {DEFAULT_BASE}")
    return base


def _iri(url: str) -> URIRef | Literal:
    """A URL from an abstract as a valid IRI (characters IRIs forbid are percent-encoded);
    one that still is not an IRI (a broken host) stays an ``xsd:anyURI`` literal."""
    url = re.sub(r"%(?![0-9A-Fa-f]{2})", "%25", url)  # a stray % is a literal percent sign
    parts = urlsplit(url)
    safe = "/:@!$&'()*+,;=%~-._"
    iri = urlunsplit((parts.scheme, parts.netloc, quote(parts.path, safe=safe), quote(parts.query, safe=safe + "?"),
                      quote(parts.fragment, safe=safe + "?")))
    try:
        import pyoxigraph

        pyoxigraph.NamedNode(iri)  # the strict RFC 3987 check
    except ValueError:
        return Literal(url, datatype=XSD.anyURI)
    return URIRef(iri)


def _is_code(url: str) -> bool:
    host = urlsplit(url).netloc.lower().removeprefix("www.")
    return host in CODE_HOSTS


def to_rdf(G: nx.Graph, *, base: str | None = None) -> Graph:
    """The RDF graph of *G* under the *base* IRI (by default the one *G* was built with).
    IRIs depend only on content ids."""
    base = check_base(base or G.graph.get("base_iri") or DEFAULT_BASE)
    ns = Namespace(base)
    g = Graph(bind_namespaces="none")
    for prefix, namespace in (("schema", SDO), ("skos", SKOS), ("dcterms", DCTERMS), ("prov", PROV), ("xsd", XSD),
                              ("rdfs", RDFS), ("kgv", KGV._NS), ("kg", ns)):
        g.bind(prefix, namespace)
    scheme = ns["concepts"]
    meta = G.graph
    activity = ns[f"activity/{meta.get('fingerprint', 'extraction')}"]
    model = ns["agent/model"]
    software = ns["agent/kg"]
    g.add((scheme, RDF.type, SKOS.ConceptScheme))
    g.add((scheme, DCTERMS.title, Literal("Concepts extracted by kg")))
    g.add((activity, RDF.type, PROV.Activity))
    g.add((activity, RDFS.label, Literal(f"keyphrase extraction ({meta.get('extractor', 'KeyBERT')})")))
    g.add((activity, PROV.used, model))
    g.add((activity, PROV.wasAssociatedWith, software))
    if meta.get("settings") is not None:
        g.add((activity, KGV.settings, Literal(json.dumps(meta["settings"], sort_keys=True))))
    g.add((model, RDF.type, PROV.Entity))
    g.add((model, RDFS.label, Literal(str(meta.get("model", "unknown model")))))
    if meta.get("model_sha256"):
        g.add((model, KGV.sha256, Literal(meta["model_sha256"])))
    g.add((software, RDF.type, PROV.SoftwareAgent))
    g.add((software, RDFS.label, Literal(f"kg {meta.get('kg_version', '')}".strip())))

    iri = {}
    for node, d in G.nodes(data=True):
        kind, _, local = node.partition(":")
        iri[node] = ns[f"{kind}/{local}"]
    for node, d in sorted(G.nodes(data=True)):
        s = iri[node]
        if d["kind"] == "paper":
            g.add((s, RDF.type, SDO.ScholarlyArticle))
            g.add((s, SDO.identifier, Literal(node.partition(":")[2])))
            g.add((s, SDO.name, Literal(d["label"])))
            if d.get("title"):
                g.add((s, SDO.headline, Literal(d["title"])))
            g.add((s, SDO.abstract, Literal(d["abstract"])))
            g.add((s, KGV.cleanAbstract, Literal(d["text"])))
            if d.get("year") is not None:
                g.add((s, SDO.datePublished, Literal(f"{int(d['year']):04d}", datatype=XSD.gYear)))
            if d.get("source_id"):
                g.add((s, KGV.sourceId, Literal(d["source_id"])))
            for ref in d.get("sources", []):
                g.add((s, KGV.source, Literal(ref)))
            for url in d.get("urls", []):
                g.add((s, SDO.url, _iri(url)))
                if _is_code(url):
                    g.add((s, SDO.codeRepository, _iri(url)))
        elif d["kind"] == "concept":
            g.add((s, RDF.type, SKOS.Concept))
            g.add((s, SKOS.inScheme, scheme))
            g.add((s, SKOS.prefLabel, Literal(d["label"], lang="en")))
            for alt in d.get("alt_labels", []):
                g.add((s, SKOS.altLabel, Literal(alt, lang="en")))
            g.add((s, KGV.paperCount, Literal(int(d["papers"]))))
            for broader in d.get("broader", []):
                g.add((s, SKOS.broader, iri[broader]))
        elif d["kind"] == "venue":
            g.add((s, RDF.type, SDO.CreativeWorkSeries))
            g.add((s, SDO.name, Literal(d["label"])))
    for u, v, d in G.edges(data=True):
        if d["kind"] == "venue":
            paper, venue = (u, v) if u.startswith("paper:") else (v, u)
            g.add((iri[paper], SDO.isPartOf, iri[venue]))
        elif d["kind"] == "subject":
            paper, concept = (u, v) if u.startswith("paper:") else (v, u)
            p, c = iri[paper], iri[concept]
            g.add((p, DCTERMS.subject, c))
            link = ns[f"assignment/{paper.partition(':')[2]}/{d['rank']}"]
            g.add((link, RDF.type, KGV.KeyphraseAssignment))
            g.add((link, RDF.type, PROV.Entity))
            g.add((link, KGV.paper, p))
            g.add((link, KGV.concept, c))
            g.add((link, KGV.phrase, Literal(d["phrase"])))
            g.add((link, KGV.score, Literal(Decimal(str(d["score"])))))
            g.add((link, KGV.rank, Literal(int(d["rank"]))))
            g.add((link, PROV.wasGeneratedBy, activity))
            g.add((link, PROV.wasDerivedFrom, p))
    return g


def serialize(g: Graph, fmt: str) -> str:
    """Text of *g* in an rdflib format, stable from run to run (N-Triples lines sorted)."""
    if fmt in ("nt", "ntriples", "nt11"):
        lines = sorted(set(g.serialize(format="nt").splitlines()) - {""})
        return "\n".join(lines) + "\n"
    if fmt == "json-ld":
        context = {prefix: str(uri) for prefix, uri in g.namespaces()}
        return g.serialize(format="json-ld", context=context, indent=1, sort_keys=True)
    return g.serialize(format=fmt)
