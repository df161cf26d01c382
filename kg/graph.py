"""The knowledge graph: papers, concepts and venues in one networkx graph.

This graph is kg's single in-memory model; RDF (`kg.rdf`) and HTML (`kg.view`) are views
of it. Node and edge attributes are documented in ``docs/model.md``.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import networkx as nx

from kg.concepts import ConceptIndex
from kg.extract import PaperKeyphrases
from kg.sources import Paper, Source

__all__ = ["build_graph", "graph_stats", "load_graph", "graph_to_json", "write_graph_json", "papers_under", "paper_node", "concept_node", "venue_node", "top_concepts"]


def paper_node(paper_id: str) -> str:
    return f"paper:{paper_id}"


def concept_node(concept_id: str) -> str:
    return f"concept:{concept_id}"


def venue_slug(venue: str) -> str:
    ascii_venue = unicodedata.normalize("NFKD", venue).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_venue.lower()).strip("-")
    if not slug or slug != ascii_venue.lower().replace(" ", "-"):
        import hashlib

        slug = f"{slug or 'v'}-{hashlib.sha1(venue.encode()).hexdigest()[:8]}"
    return slug


def venue_node(venue: str) -> str:
    return f"venue:{venue_slug(venue)}"


def source_ref(source: Source) -> str:
    if source.paragraph is not None:
        return f"{source.file}#paragraph={source.paragraph}"
    return f"{source.file}#row={source.row}"


def build_graph(
    papers: Sequence[Paper],
    keyphrases: Sequence[PaperKeyphrases],
    index: ConceptIndex,
    labels: Mapping[str, str],
    *,
    metadata: Mapping[str, object] | None = None,
) -> nx.Graph:
    """The graph of *papers*, their *keyphrases* joined to concepts by *index*.

    >>> from kg.sources import Paper
    >>> from kg.extract import PaperKeyphrases, Keyphrase
    >>> from kg.concepts import merge_concepts
    >>> p = Paper("p1", "Graph neural networks.", "Graph neural networks.", venue="ICML", year=2026)
    >>> k = PaperKeyphrases("p1", (Keyphrase("graph neural networks", 0.9, 1),))
    >>> g = build_graph([p], [k], merge_concepts([("p1", ["graph neural networks"], ())]), {"p1": "GNN"})
    >>> sorted(g.nodes)
    ['concept:graph-neural-network', 'paper:p1', 'venue:icml']
    """
    G = nx.Graph()
    G.graph.update(dict(metadata or {}))
    concepts = index.by_id()
    for c in index.concepts:
        G.add_node(concept_node(c.id), kind="concept", label=c.label, alt_labels=list(c.alt_labels), papers=len(c.papers), key=c.key,
                   broader=[concept_node(b) for b in c.broader])
    for p in papers:
        node = paper_node(p.id)
        G.add_node(
            node,
            kind="paper",
            label=labels.get(p.id, p.id),
            title=p.title,
            abstract=p.abstract,
            text=p.text,
            venue=p.venue,
            year=p.year,
            urls=list(p.urls),
            sources=[source_ref(s) for s in p.sources],
            source_id=p.source_id,
        )
        if p.venue:
            v = venue_node(p.venue)
            if v not in G:
                G.add_node(v, kind="venue", label=p.venue)
            G.add_edge(node, v, kind="venue", year=p.year)
    for found in keyphrases:
        node = paper_node(found.paper_id)
        for k in found.keyphrases:
            cid = index.assignment.get((found.paper_id, k.phrase))
            if cid is None or cid not in concepts:
                continue
            target = concept_node(cid)
            if G.has_edge(node, target):  # two phrases of one paper joined one concept: keep the best
                continue
            G.add_edge(node, target, kind="subject", score=k.score, rank=k.rank, phrase=k.phrase)
    for c in index.concepts:  # paper counts as linked in the graph
        G.nodes[concept_node(c.id)]["papers"] = sum(1 for n in G[concept_node(c.id)] if G.nodes[n]["kind"] == "paper")
    # A broader concept implied by its narrower ones, none of whose papers stayed linked, goes.
    referenced = {b for _, d in G.nodes(data=True) if d["kind"] == "concept" for b in d["broader"]}
    for c in index.concepts:
        node = concept_node(c.id)
        if not c.papers and node not in referenced:
            G.remove_node(node)
    _add_cooccurrence(G)
    return G


def _add_cooccurrence(G: nx.Graph) -> None:
    """Concept-concept edges with the number of papers that share both (the bipartite
    projection, counted pair by pair within each paper's concepts), marked as `_related` says."""
    from collections import Counter

    concepts_of: dict[str, list[str]] = {}
    for u, v, d in G.edges(data=True):
        if d["kind"] == "subject":
            paper, concept = (u, v) if u.startswith("paper:") else (v, u)
            concepts_of.setdefault(paper, []).append(concept)
    pairs: Counter = Counter()
    for found in concepts_of.values():
        found.sort()
        pairs.update((a, b) for i, a in enumerate(found) for b in found[i + 1:])
    if not pairs:
        return
    papers = {c: G.nodes[c]["papers"] for found in concepts_of.values() for c in found}
    edges = []
    for (a, b), n in sorted(pairs.items()):
        association = round(n / math.sqrt(papers[a] * papers[b]), 4)
        edges.append((a, b, {"kind": "cooccurs", "count": n, "association": association, "related": False}))
    _related(edges)
    G.add_edges_from(edges)


RELATED_MIN_COOCCURRENCES = 2
RELATED_PER_CONCEPT = 5


def _related(edges: list[tuple[str, str, dict]]) -> None:
    """Set ``related`` on the `cooccurs` *edges* that make two concepts related (``skos:related``):
    shared by at least `RELATED_MIN_COOCCURRENCES` papers, and among the `RELATED_PER_CONCEPT`
    strongest associations of one of the two concepts. The association is the cosine of their
    paper sets, ``count / sqrt(papers_u * papers_v)`` (1 when every paper of each has the other
    too), 4 decimals."""
    strongest: dict[str, list[tuple[float, int, str, dict]]] = {}
    for u, v, d in edges:
        if d["count"] >= RELATED_MIN_COOCCURRENCES:
            for a, b in ((u, v), (v, u)):
                strongest.setdefault(a, []).append((-d["association"], -d["count"], b, d))
    for ranked in strongest.values():
        for *_, d in sorted(ranked, key=lambda r: r[:3])[:RELATED_PER_CONCEPT]:
            d["related"] = True


def papers_of(G: nx.Graph, concept: str) -> list[str]:
    return sorted(n for n in G[concept] if G.nodes[n]["kind"] == "paper")


def top_concepts(G: nx.Graph, n: int = 10) -> list[tuple[str, str, int]]:
    """(node, label, papers) of the *n* concepts with the most papers."""
    rows = [(node, d["label"], d["papers"]) for node, d in G.nodes(data=True) if d["kind"] == "concept"]
    return sorted(rows, key=lambda r: (-r[2], r[1]))[:n]


def graph_stats(G: nx.Graph) -> dict[str, object]:
    """Figures of a paper-concept graph (paper-concept links only)."""
    papers = [n for n, d in G.nodes(data=True) if d["kind"] == "paper"]
    concepts = [n for n, d in G.nodes(data=True) if d["kind"] == "concept"]
    subject, cooccurs, related = [], 0, 0
    for u, v, d in G.edges(data=True):  # one pass over the ~700,000 edges of a 10,000-paper graph
        kind = d["kind"]
        if kind == "subject":
            subject.append((u, v))
        elif kind == "cooccurs":
            cooccurs += 1
            related += bool(d.get("related"))
    linked = nx.Graph()
    linked.add_nodes_from(papers + concepts)
    linked.add_edges_from(subject)
    shared = [c for c in concepts if linked.degree(c) >= 2]
    connected_papers = {p for c in shared for p in linked[c]}
    # Papers that meet another paper at a concept or at a broader concept above theirs.
    reach = papers_under(G, subject)
    meeting = {p for members in reach.values() if len(members) >= 2 for p in members}
    # Concepts that two or more papers reach (directly or through narrower concepts), or that
    # hang below such a concept.
    anchored = [c for c in concepts if any(len(reach.get(a, ())) >= 2 for a in _ancestors(G, c))]
    linked.add_edges_from((c, b) for c in concepts for b in G.nodes[c].get("broader", []))
    components = list(nx.connected_components(linked))
    largest = max(components, key=len) if components else set()
    papers_in_largest = sum(1 for p in papers if p in largest)
    return {
        "papers": len(papers),
        "concepts": len(concepts),
        "venues": sum(1 for _, d in G.nodes(data=True) if d["kind"] == "venue"),
        "edges": G.number_of_edges(),
        "paper_concept_edges": len(subject),
        "cooccurrence_edges": cooccurs,
        "related_edges": related,
        "shared_concepts": len(shared),
        "papers_sharing_a_concept": len(connected_papers),
        "papers_sharing_a_concept_or_broader": len(meeting),
        "concepts_shared_or_under_shared_broader": round(len(anchored) / len(concepts), 4) if concepts else 0.0,
        "broader_links": sum(len(G.nodes[c].get("broader", [])) for c in concepts),
        "papers_without_concepts": sum(1 for p in papers if linked.degree(p) == 0),
        "connected_components": len(components),
        "largest_component_paper_share": round(papers_in_largest / len(papers), 4) if papers else 0.0,
    }


def papers_under(G: nx.Graph, subject: Iterable[tuple[str, str]] | None = None) -> dict[str, set[str]]:
    """For each concept some paper reaches, the papers linked to it or to a concept below it
    (``skos:broader``, transitively). *subject*: G's paper-concept edges, if the caller has them."""
    if subject is None:
        subject = ((u, v) for u, v, d in G.edges(data=True) if d["kind"] == "subject")
    reach: dict[str, set[str]] = {}
    for u, v in subject:
        paper, concept = (u, v) if G.nodes[u]["kind"] == "paper" else (v, u)
        for ancestor in _ancestors(G, concept):
            reach.setdefault(ancestor, set()).add(paper)
    return reach


def _ancestors(G: nx.Graph, concept: str) -> list[str]:
    """The concept and every broader concept above it."""
    out, todo = [], [concept]
    while todo:
        c = todo.pop()
        if c not in out:
            out.append(c)
            todo.extend(G.nodes[c].get("broader", []))
    return out


def json_encoder(**options):
    """``json.JSONEncoder(**options).encode`` for many small objects: the same text, with the
    C encoder made once rather than at every call (most of the cost of encoding a small dict).
    No check for circular references (kg's outputs have none)."""
    encoder = json.JSONEncoder(**options, check_circular=False)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None or encoder.indent is not None:
        return encoder.encode
    quote = json.encoder.encode_basestring_ascii if encoder.ensure_ascii else json.encoder.encode_basestring
    iterencode = make(None, encoder.default, quote, None, encoder.key_separator, encoder.item_separator,
                      encoder.sort_keys, encoder.skipkeys, encoder.allow_nan)

    def encode(o) -> str:
        return quote(o) if isinstance(o, str) else "".join(iterencode(o, 0))

    return encode


def graph_to_json(G: nx.Graph) -> str:
    """Node-link JSON, nodes and links in a fixed order, one node or link a line."""
    import io

    buffer = io.BytesIO()
    write_graph_json(G, buffer)
    return buffer.getvalue().decode("utf-8")


def write_graph_json(G: nx.Graph, f) -> None:
    """Write `graph_to_json` of *G* (UTF-8) to the binary file *f*, a node or link at a time."""
    # What nx.node_link_data(G, edges="links") gives, written a node or link at a time rather
    # than copied whole first: a 10,000-paper graph has ~600,000 links, and their text at once
    # took over 1 GiB. Only the links' order is held (three references each).
    encode = json_encoder(ensure_ascii=False, sort_keys=True, separators=(", ", ": "))

    def block(key: str, items) -> None:
        f.write(f"{encode(key)}: ".encode("utf-8"))
        first = True
        for item in items:
            f.write(((",\n" if not first else "[\n") + encode(item)).encode("utf-8"))
            first = False
        f.write(b"[]" if first else b"\n]")

    links = sorted(G.edges(data=True), key=lambda e: (e[0], e[1]))
    f.write(f"{{\n{encode('directed')}: {encode(G.is_directed())},\n{encode('graph')}: {encode(G.graph)},\n".encode("utf-8"))
    block("links", ({**d, "source": u, "target": v} for u, v, d in links))
    del links
    f.write(f",\n{encode('multigraph')}: {encode(G.is_multigraph())},\n".encode("utf-8"))
    block("nodes", ({**d, "id": n} for n, d in sorted(G.nodes(data=True), key=lambda x: x[0])))
    f.write(b"\n}\n")


def load_graph(path: str | Path) -> nx.Graph:
    """The graph from a node-link ``graph.json`` written by `kg build`."""
    from kg.errors import InputError

    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return nx.node_link_graph(data, edges="links")
    except FileNotFoundError as e:
        raise InputError(f"{path}: no such file; run `kg build` first or name a graph.json") from e
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise InputError(f"{path}: not a graph.json written by kg build ({e})") from e
