"""The RDF vocabularies kg writes: the standard prefixes, kg's own terms (``kgv:``), base IRIs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from urllib.parse import quote, urlsplit, urlunsplit

from rdflib import RDFS, XSD, Namespace, URIRef
from rdflib.namespace import DCTERMS, PROV, SDO, SKOS, DefinedNamespace

from kg.concepts.entities import CONCEPT_TYPES, SYMMETRIC
from kg.errors import KGError
from kg.text.chars import encodable

DEFAULT_BASE = "https://example.org/kg/"
VENUE_RANKS = 1000  # a venue's concepts with the most papers there, stored with their rank (kgv:VenueConcept)
LINK_BLOCK = 100  # the links of a concept's kgv:LinkBlock (a page of papers-of-concept reads the blocks that reach it)
# The classes of typed concepts, and each relation type's predicate
CONCEPT_CLASSES = CONCEPT_TYPES
RELATION_PREDICATES = {"USED-FOR": "usedFor", "EVALUATE-FOR": "evaluatedFor", "FEATURE-OF": "featureOf", "PART-OF": "partOf",
                       "HYPONYM-OF": "hyponymOf", "COMPARE": "comparedWith", "CONJUNCTION": "conjunctionWith"}
SYMMETRIC_PREDICATES = frozenset(RELATION_PREDICATES[t] for t in SYMMETRIC)  # stated both ways between the concepts
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
    specificity: URIRef
    generic: URIRef
    mentionCount: URIRef
    Authorship: URIRef
    work: URIRef
    person: URIRef
    position: URIRef
    journalRef: URIRef
    LinkBlock: URIRef
    blockOf: URIRef
    firstPlace: URIRef
    link: URIRef
    labelOrder: URIRef
    # the graph's order of a node's values where it is not their sorted order (`order_literal`)
    keywordOrder: URIRef
    urlOrder: URIRef
    sourceOrder: URIRef
    broaderOrder: URIRef
    cluster: URIRef
    clusterRank: URIRef
    clusterPaperCount: URIRef
    # concept types (each rdfs:subClassOf skos:Concept), their votes, and typed relations
    Task: URIRef
    Method: URIRef
    Dataset: URIRef
    Metric: URIRef
    Material: URIRef
    OtherScientificTerm: URIRef
    TypeVote: URIRef
    typeVote: URIRef
    entityType: URIRef
    TypedRelation: URIRef
    RelationEvidence: URIRef
    support: URIRef
    evidence: URIRef
    sentence: URIRef
    usedFor: URIRef
    evaluatedFor: URIRef
    featureOf: URIRef
    partOf: URIRef
    hyponymOf: URIRef
    comparedWith: URIRef
    conjunctionWith: URIRef
    # figures by year, for the trend queries (kg.rdf.trends)
    Year: URIRef
    YearConcepts: URIRef
    VenueYear: URIRef
    VenueNewConcepts: URIRef
    year: URIRef
    yearOfVenue: URIRef
    yearPaperCount: URIRef
    countedConcept: URIRef
    venueYear: URIRef
    newConcept: URIRef


def check_base(base: str) -> str:
    """An absolute http(s) base IRI ending in ``/`` or ``#``, which every IRI kg makes from it
    extends into a valid IRI (RFC 3987, as Oxigraph checks it: ``%`` starts two hex digits)."""
    import pyoxigraph as ox

    why = None
    try:
        parts = urlsplit(base)
        _ = parts.port  # ValueError: a port that is not a number
        ox.NamedNode(base + "concept/x")
    except ValueError as e:  # urlsplit: a broken [IPv6] host, a bad port; Oxigraph: not an IRI
        why = str(e).splitlines()[0] if str(e) else "not an IRI"
    else:
        if parts.scheme not in ("http", "https") or not parts.hostname or any(c in base for c in ' <>"{}|\\^`'):
            why = "not an absolute http(s) IRI"
        elif not base.endswith(("/", "#")):
            why = "does not end in '/' or '#'"
    if why is not None:
        raise KGError(f"base IRI {base!r} is not an absolute http(s) IRI ending in '/' or '#' ({why});"
                      f" give one such as {DEFAULT_BASE}")
    return base


def link_iri(url: str):
    """A URL from an abstract as a valid IRI (characters IRIs forbid are percent-encoded);
    one that still is not an IRI (a broken host) stays an ``xsd:anyURI`` literal. A lone
    surrogate, which no IRI or UTF-8 holds, is U+FFFD.
    Oxigraph terms (``NamedNode`` or ``Literal``)."""
    import pyoxigraph as ox

    url = re.sub(r"%(?![0-9A-Fa-f]{2})", "%25", encodable(url))  # a stray % is a literal percent sign
    safe = "/:@!$&'()*+,;=%~-._"
    try:
        parts = urlsplit(url)  # ValueError: a broken [IPv6] host
        iri = urlunsplit((parts.scheme, parts.netloc, quote(parts.path, safe=safe), quote(parts.query, safe=safe + "?"),
                          quote(parts.fragment, safe=safe + "?")))
        return ox.NamedNode(iri)  # the strict RFC 3987 check
    except ValueError:
        return ox.Literal(url, datatype=ox.NamedNode(str(XSD.anyURI)))


def order_literal(values: Iterable[str]) -> str | None:
    """The text of a ``kgv:keywordOrder`` (``urlOrder``, ``sourceOrder``, ``broaderOrder``) literal: a JSON array
    of a node's values of that property (a keyword's or source's text, a URL's or broader concept's IRI, as stated)
    in the graph's order; or None when that is their sorted (code point) order, as a reader who sorts them gets
    it (`in_order`): so one URL, or keywords already sorted, add nothing. RDF keeps no order of a property's values."""
    values = list(dict.fromkeys(encodable(value) for value in values))  # each as its literal holds it
    return None if values == sorted(values) else json.dumps(values, ensure_ascii=False)


def in_order(values: Iterable[str], order: str | None) -> list[str]:
    """A node's stated *values* of a property in the order its `order_literal` *order* gives: those it names in its
    order, then any it leaves out sorted (a literal that is no JSON array of strings names none): all sorted without one."""
    try:
        named = json.loads(order) if order else []
    except ValueError:
        named = []
    values = set(values)
    named = [x for x in dict.fromkeys(x for x in named if isinstance(x, str)) if x in values] if isinstance(named, list) else []
    return named + sorted(values.difference(named))


def is_code_link(url: str) -> bool:
    try:
        host = urlsplit(url).netloc.lower().removeprefix("www.")
    except ValueError:  # a broken [IPv6] host: no code host
        return False
    return host in CODE_HOSTS


def prefixes(base: str) -> dict[str, str]:
    """The prefixes of every RDF output: the standard vocabularies, ``kgv:`` and ``kg:`` (*base*)."""
    return {"schema": str(SDO), "skos": str(SKOS), "dcterms": str(DCTERMS), "prov": str(PROV), "xsd": str(XSD),
            "rdfs": str(RDFS), "kgv": str(KGV._NS), "kg": base}
