"""Figures of the graph (``stats.json``): counts, sharing, components, papers under a concept.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Iterator, Sequence
from pathlib import Path

import networkx as nx

# The figures `graph_stats` gives, in the order `kg stats` prints them (stats.json sorts its keys).
FIGURES = ("papers", "concepts", "venues", "edges", "paper_concept_edges", "cooccurrence_edges", "related_edges",
           "shared_concepts", "papers_sharing_a_concept", "papers_sharing_a_concept_or_broader",
           "papers_sharing_a_specific_concept_or_broader", "concepts_shared_or_under_shared_broader", "broader_links",
           "papers_without_concepts", "connected_components", "largest_component_paper_share", "map_concepts",
           "clusters", "cluster_summary", "top_concepts")

def papers_of(G: nx.Graph, concept: str) -> list[str]:
    return sorted(n for n in G[concept] if G.nodes[n]["kind"] == "paper")


def top_concepts(G: nx.Graph, n: int = 10) -> list[tuple[str, str, int]]:
    """(node, label, papers) of the *n* concepts with the most papers."""
    rows = [(node, d["label"], d["papers"]) for node, d in G.nodes(data=True) if d["kind"] == "concept"]
    return sorted(rows, key=lambda r: (-r[2], r[1]))[:n]


def figures_of_build(path: Path) -> dict | None:
    """What `kg stats` prints, from the ``stats.json`` at *path*: `FIGURES` in their order, then
    its ``entities`` when any concept has typed mentions; None when there is no such file or it
    has no ``top_concepts`` (an older kg's, which did not keep them there: figure them from graph.json).
    A stats.json that is no JSON object is an `InputError` naming it."""
    from kg.errors import InputError
    from kg.text.files import load_json

    if not path.is_file():
        return None
    figures = load_json(path, expected="a stats.json written by kg build")
    if not isinstance(figures, dict):
        raise InputError(f"{path}: not a stats.json written by kg build (a JSON {type(figures).__name__}, not an object)")
    if "top_concepts" not in figures:
        return None
    missing = [key for key in FIGURES if key not in figures]
    if missing:
        raise InputError(f"{path}: not a stats.json written by kg build (no {', '.join(missing)})")
    entities = figures.get("entities")
    typed = {"entities": entities} if isinstance(entities, dict) and entities.get("concepts_with_mentions") else {}
    return {key: figures[key] for key in FIGURES} | typed


def typed_figures(G: nx.Graph) -> dict[str, object]:
    """The concepts by voted type and the typed relations between concepts by type (docs/model.md);
    all zero for a graph built without typed entities."""
    from collections import Counter

    concepts, statements, voted = Counter(), Counter(), 0
    for _, d in G.nodes(data=True):
        if d.get("kind") == "concept" and "type_votes" in d:
            voted += 1
            concepts[d.get("entity_type", "none")] += 1
            statements.update(r["type"] for r in d.get("relations", ()))
    return {"concepts_with_mentions": voted, "concepts_by_type": dict(sorted(concepts.items())),
            "concept_relations": sum(statements.values()), "concept_relations_by_type": dict(sorted(statements.items()))}


def graph_stats(G: nx.Graph) -> dict[str, object]:
    """Figures of a paper-concept graph (paper-concept links only), `FIGURES` in that order; the
    ``top_concepts`` are `top_concepts`' rows, so that `kg stats` reads them from stats.json."""
    import numpy as np

    nodes = dict(G.nodes(data=True))
    papers = [n for n, d in nodes.items() if d["kind"] == "paper"]
    concepts = [n for n, d in nodes.items() if d["kind"] == "concept"]
    subject, edges, cooccurs, related = [], 0, 0, 0
    for u, v, d in _edges(G):
        edges += 1
        kind = d["kind"]
        if kind == "cooccurs":
            cooccurs += 1
            if d.get("related"):
                related += 1
        elif kind == "subject":
            subject.append((u, v))
    # The paper-concept links, then the broader links, as rows of two node numbers: papers, concepts,
    # then any other node in the order met (as an nx.Graph of them would hold them).
    index = {n: i for i, n in enumerate(papers + concepts)}
    links = _numbered(index, subject)
    broader = [(c, b) for c in concepts for b in nodes[c].get("broader") or ()]
    above = _numbered(index, broader)
    first, last = len(papers), len(papers) + len(concepts)  # the concepts' numbers
    degree = np.bincount(links.ravel(), minlength=len(index))  # over the paper-concept links
    shared = np.zeros(len(index), dtype=bool)
    shared[first:last] = degree[first:last] >= 2
    connected_papers = np.unique(np.concatenate((links[shared[links[:, 0]], 1], links[shared[links[:, 1]], 0])))
    # Papers that meet another paper at a concept or at a broader concept above theirs.
    ancestors = ancestry(G)
    reach = _papers_under(G, subject, ancestors, set(papers))
    wide = {a for a, members in reach.items() if len(members) >= 2}
    meeting = {p for a in wide for p in reach[a]}
    meeting_specific = {p for a in wide if not nodes[a].get("generic") for p in reach[a]}  # not at a generic one
    # Concepts that two or more papers reach (directly or through narrower concepts), or that
    # hang below such a concept.
    anchored = sum(1 for c in concepts if not wide.isdisjoint(ancestors(c)))
    every_link = np.concatenate((links, above))
    linked = np.bincount(every_link.ravel(), minlength=len(index))  # over both kinds of links
    components, largest = _components(len(index), every_link)
    papers_in_largest = int(np.count_nonzero(largest[:first]))
    figures = {
        "papers": len(papers),
        "concepts": len(concepts),
        "venues": sum(1 for d in nodes.values() if d["kind"] == "venue"),
        "edges": edges,
        "paper_concept_edges": len(subject),
        "cooccurrence_edges": cooccurs,
        "related_edges": related,
        "shared_concepts": int(np.count_nonzero(shared)),
        "papers_sharing_a_concept": len(connected_papers),
        "papers_sharing_a_concept_or_broader": len(meeting),
        "papers_sharing_a_specific_concept_or_broader": len(meeting_specific),
        "concepts_shared_or_under_shared_broader": round(anchored / len(concepts), 4) if concepts else 0.0,
        "broader_links": len(broader),
        "papers_without_concepts": int(np.count_nonzero(linked[:first] == 0)),
        "connected_components": components,
        "largest_component_paper_share": round(papers_in_largest / len(papers), 4) if papers else 0.0,
        **map_stats(G),
        "top_concepts": [{"concept": n, "label": label, "papers": count} for n, label, count in top_concepts(G)],
    }
    return {key: figures[key] for key in FIGURES}


def map_stats(G: nx.Graph) -> dict[str, object]:
    """Figures of the map (`kg.graph.layout.add_map`): the concepts on it, the number of clusters
    and each cluster's id, name, concepts and papers (those whose dominant cluster it is)."""
    clusters = G.graph.get("clusters", [])
    return {
        "map_concepts": sum(1 for _, d in G.nodes(data=True) if d.get("kind") == "concept" and "x" in d),
        "clusters": len(clusters),
        "cluster_summary": [{k: c[k] for k in ("id", "label", "concepts", "papers")} for c in clusters],
    }


def _numbered(index: dict[str, int], pairs: Sequence[tuple[str, str]]):
    """The *pairs* of nodes as an integer array of rows of two numbers, each node's from *index*, a
    node not in it numbered there next (in the order met). The nodes are looked up in C (``map``)
    until one is missing (not so in a graph kg built), then again a node at a time."""
    from itertools import chain

    import numpy as np

    count = 2 * len(pairs)
    try:
        numbers = np.fromiter(map(index.__getitem__, chain.from_iterable(pairs)), dtype=np.int64, count=count)
    except KeyError:
        numbers = np.fromiter((index.setdefault(n, len(index)) for n in chain.from_iterable(pairs)), dtype=np.int64,
                              count=count)
    return numbers.reshape(-1, 2)


def _components(size: int, links) -> tuple[int, object]:
    """The number of connected components of the graph of nodes 0 to *size* - 1 linked by the rows
    of *links* (an integer array of two columns), and a boolean array of the nodes of the largest
    of them (the first, in the order of its first node, among equally large ones; none when *size*
    is 0). SciPy's connected components: an nx.Graph of every paper-concept link would hold ~0.5 kB
    per link (1.2 GB at 200,000 abstracts); the links are given once each, as an array (`_numbered`),
    not as Python lists of each node's neighbours."""
    import numpy as np
    from scipy.sparse import coo_array
    from scipy.sparse.csgraph import connected_components

    graph = coo_array((np.ones(len(links), dtype=np.int8), (links[:, 0], links[:, 1])), shape=(size, size))
    components, labels = connected_components(graph, directed=False)
    if not size:
        return 0, np.zeros(0, dtype=bool)
    largest = int(np.argmax(np.bincount(labels)))  # labels are numbered in the order of their first node
    return int(components), labels == largest


def papers_under(G: nx.Graph, subject: Iterable[tuple[str, str]] | None = None) -> dict[str, set[str]]:
    """For each concept some paper reaches, the papers linked to it or to a concept below it
    (``skos:broader``, transitively). *subject*: G's paper-concept edges, if the caller has them."""
    if subject is None:
        subject = _subject_edges(G)
    return _papers_under(G, subject, ancestry(G))


def _edges(G: nx.Graph) -> Iterator[tuple]:
    """``G.edges(data=True)``: each edge once, (u, v, data), in the same order and orientation,
    read from ``G.adjacency()`` (a 10,000-paper graph has ~700,000 edges: ``G.edges`` calls a
    function per edge)."""
    return edges_once(G.adjacency())


def edges_once(adjacency: Iterable[tuple]) -> Iterator[tuple]:
    """Each edge of an undirected graph's *adjacency* ((node, {neighbour: data}) in node order, as
    ``G.adjacency()`` gives it) once, as (u, v, data) with u the node met first: networkx's
    ``edges(data=True)`` order and orientation."""
    seen = set()
    for u, nbrs in adjacency:
        for v, d in nbrs.items():
            if v not in seen:
                yield u, v, d
        seen.add(u)


def _subject_edges(G: nx.Graph) -> list[tuple[str, str]]:
    """G's paper-concept edges (u, v), in the order of ``G.edges``."""
    return [(u, v) for u, v, d in _edges(G) if d["kind"] == "subject"]


def _papers_under(G: nx.Graph, subject: Iterable[tuple[str, str]], ancestors, papers: Container[str] | None = None) -> dict[str, set[str]]:
    """`papers_under`, with *ancestors* giving `ancestors_of` of a concept of *G*, and *papers*
    G's paper nodes if the caller has them."""
    if papers is None:
        nodes = G.nodes
        subject = list(subject)
        papers = {u for u, _ in subject if nodes[u]["kind"] == "paper"}
    papers_of: dict[str, list[str]] = {}  # each concept's papers, concepts in the order of their first link
    for u, v in subject:
        paper, concept = (u, v) if u in papers else (v, u)
        members = papers_of.get(concept)
        if members is None:
            papers_of[concept] = [paper]
        else:
            members.append(paper)
    reach: dict[str, set[str]] = {}  # in the order that a link at a time would give
    for concept, members in papers_of.items():
        for ancestor in ancestors(concept):
            found = reach.get(ancestor)
            if found is None:
                reach[ancestor] = set(members)
            else:
                found.update(members)
    return reach


def ancestry(G: nx.Graph):
    """A function giving `ancestors_of` of a concept of *G*, each worked out once: below a single
    broader concept, a concept's ancestors are itself then its broader concept's ancestors."""
    nodes = G.nodes
    known: dict[str, list[str]] = {}

    def ancestors(concept: str) -> list[str]:
        found = known.get(concept)
        if found is not None:
            return found
        chain, c = [], concept  # up the concepts with a single broader concept, to a known one
        while c not in known:
            broader = nodes[c].get("broader", [])
            if len(broader) != 1 or c in chain:  # the top, a fork or a cycle: a search of its own
                known[c] = ancestors_of(G, c)
                break
            chain.append(c)
            c = broader[0]
        for c in reversed(chain):
            if c not in known:
                above = known[nodes[c]["broader"][0]]
                known[c] = [c, *above] if c not in above else ancestors_of(G, c)
        return known[concept]

    return ancestors


def ancestors_of(G: nx.Graph, concept: str) -> list[str]:
    """The concept and every broader concept above it."""
    out, todo = [], [concept]
    while todo:
        c = todo.pop()
        if c not in out:
            out.append(c)
            todo.extend(G.nodes[c].get("broader", []))
    return out
