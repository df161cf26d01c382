"""The knowledge graph: papers, concepts and venues in one networkx graph.

This graph is kg's single in-memory model; RDF (`kg.rdf`) and HTML (`kg.view`) are views
of it. Node and edge attributes are documented in ``docs/model.md``.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from itertools import compress
from operator import itemgetter
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
    concept_nodes: dict[str, str] = {}  # concept id -> its node, the very key of G's dicts
    for c in index.concepts:
        node = concept_nodes[c.id] = concept_node(c.id)
        G.add_node(node, kind="concept", label=c.label, alt_labels=list(c.alt_labels), papers=len(c.papers), key=c.key,
                   broader=[concept_node(b) for b in c.broader])
    paper_nodes: dict[str, str] = {}  # paper id -> its node
    for p in papers:
        node = paper_nodes[p.id] = paper_node(p.id)
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
    # The ~120,000 paper-concept edges of 10,000 papers go straight into the adjacency, as
    # add_edge would put them (one data dict at both ends), without its checks.
    adj, assignment = G._adj, index.assignment
    concepts_of: dict[str, list[str]] = {}  # paper node -> its concept nodes
    for found in keyphrases:
        node = paper_nodes.get(found.paper_id) or paper_node(found.paper_id)
        linked = None
        for k in found.keyphrases:
            target = concept_nodes.get(assignment.get((found.paper_id, k.phrase)))
            if target is None:
                continue
            if linked is None:
                if node not in adj:  # a paper not among *papers*
                    raise KeyError(f"{node}: no such paper")
                linked = adj[node]
            if target in linked:  # two phrases of one paper joined one concept: keep the best
                continue
            linked[target] = adj[target][node] = {"kind": "subject", "score": k.score, "rank": k.rank, "phrase": k.phrase}
            concepts_of.setdefault(node, []).append(target)
    nodes = G._node
    for node in concept_nodes.values():  # paper counts as linked in the graph (only papers link to concepts yet)
        nodes[node]["papers"] = len(adj[node])
    # A broader concept implied by its narrower ones, none of whose papers stayed linked, goes.
    referenced = {b for node in concept_nodes.values() for b in nodes[node]["broader"]}
    removed = set()
    for c in index.concepts:
        node = concept_nodes[c.id]
        if not c.papers and node not in referenced:
            G.remove_node(node)
            removed.add(node)
    if removed:
        concepts_of = {p: [c for c in found if c not in removed] for p, found in concepts_of.items()}
    _add_cooccurrence(G, concepts_of)
    return G


def _add_cooccurrence(G: nx.Graph, concepts_of: Mapping[str, list[str]]) -> None:
    """Concept-concept edges with the number of papers that share both (the bipartite
    projection of *concepts_of*, each paper's concept nodes), marked as `_related` says.

    The pairs are counted with numpy, and the edges added in the order of their sorted
    (concept, concept) pairs, so each concept's new neighbours follow in sorted order."""
    import numpy as np

    names = sorted({c for found in concepts_of.values() for c in found})
    position = {c: i for i, c in enumerate(names)}  # in sorted order, as the pairs are
    by_size: dict[int, list[list[int]]] = {}  # a paper's sorted concept positions, by their number
    for found in concepts_of.values():
        if len(found) >= 2:
            by_size.setdefault(len(found), []).append(sorted(map(position.__getitem__, found)))
    if not by_size:
        return
    n = len(names)
    codes = []  # each pair (a, b), a < b, within a paper as a * n + b
    for size, rows in by_size.items():
        first, second = np.triu_indices(size, 1)
        rows = np.array(rows, dtype=np.int64)
        codes.append((rows[:, first] * n + rows[:, second]).ravel())
    codes, count = np.unique(np.concatenate(codes), return_counts=True)
    first, second = np.divmod(codes, n)
    papers = np.array([G.nodes[c]["papers"] for c in names], dtype=np.int64)
    # count / sqrt(papers_a * papers_b) as Python computes it (IEEE division and square root),
    # rounded by Python's round (decimal-exact, unlike numpy's) once per distinct value
    exact, which = np.unique(count / np.sqrt(papers[first] * papers[second]), return_inverse=True)
    association = np.array([round(x, 4) for x in exact.tolist()])[which.ravel()]
    related = _related(first, second, count, association)
    data = [{"kind": "cooccurs", "count": c, "association": s, "related": r}
            for c, s, r in zip(count.tolist(), association.tolist(), related.tolist())]
    # New edges between nodes of G, put in as add_edges_from would (sorted pair by pair, one data
    # dict at both ends) but a concept at a time: the concepts before it in sorted order (its
    # pairs as the second), then those after it (its pairs as the first, consecutive).
    by_second = np.argsort(second, kind="stable")
    before = [names[i] for i in first[by_second].tolist()]
    before_data = [data[i] for i in by_second.tolist()]
    after = [names[i] for i in second.tolist()]
    bounds = np.arange(n + 1)
    ends_before = np.searchsorted(second[by_second], bounds).tolist()
    ends_after = np.searchsorted(first, bounds).tolist()
    adj = G._adj
    for i, name in enumerate(names):
        neighbours = adj[name]
        b0, b1, a0, a1 = ends_before[i], ends_before[i + 1], ends_after[i], ends_after[i + 1]
        if b0 < b1:
            neighbours.update(zip(before[b0:b1], before_data[b0:b1]))
        if a0 < a1:
            neighbours.update(zip(after[a0:a1], data[a0:a1]))


RELATED_MIN_COOCCURRENCES = 2
RELATED_PER_CONCEPT = 5


def _related(first, second, count, association):
    """Which `cooccurs` edges make two concepts related (``skos:related``): a boolean array over
    the edges, given as arrays of their two concepts' positions in sorted order (*first*,
    *second*), *count* and *association*. Related means shared by at least
    `RELATED_MIN_COOCCURRENCES` papers, and among the `RELATED_PER_CONCEPT` strongest associations
    of one of the two concepts (then most papers, then the other concept first in sorted order).
    The association is the cosine of their paper sets, ``count / sqrt(papers_u * papers_v)``
    (1 when every paper of each has the other too), 4 decimals."""
    import numpy as np

    related = np.zeros(len(count), dtype=bool)
    strong = np.flatnonzero(count >= RELATED_MIN_COOCCURRENCES)
    if not len(strong):
        return related
    edge = np.concatenate([strong, strong])  # each strong edge, ranked at both of its concepts
    concept = np.concatenate([first[strong], second[strong]])
    other = np.concatenate([second[strong], first[strong]])
    order = np.lexsort((other, -count[edge], -association[edge], concept))
    concept, edge = concept[order], edge[order]
    start = np.flatnonzero(np.r_[True, concept[1:] != concept[:-1]])  # each concept's first row
    rank = np.arange(len(concept)) - np.repeat(start, np.diff(np.r_[start, len(concept)]))
    related[edge[rank < RELATED_PER_CONCEPT]] = True
    return related


def papers_of(G: nx.Graph, concept: str) -> list[str]:
    return sorted(n for n in G[concept] if G.nodes[n]["kind"] == "paper")


def top_concepts(G: nx.Graph, n: int = 10) -> list[tuple[str, str, int]]:
    """(node, label, papers) of the *n* concepts with the most papers."""
    rows = [(node, d["label"], d["papers"]) for node, d in G.nodes(data=True) if d["kind"] == "concept"]
    return sorted(rows, key=lambda r: (-r[2], r[1]))[:n]


def graph_stats(G: nx.Graph) -> dict[str, object]:
    """Figures of a paper-concept graph (paper-concept links only)."""
    nodes, adj = G._node, G._adj  # read straight rather than through networkx's views
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
    # Each paper's and concept's neighbours over the paper-concept links (then the broader
    # links), in the order of an nx.Graph of them: papers, concepts, then any other node met.
    linked: dict[str, list[str]] = {n: [] for n in papers + concepts}
    for u, v in subject:
        if u not in linked:
            linked[u] = []
        if v not in linked:
            linked[v] = []
        linked[u].append(v)
        linked[v].append(u)
    shared = [c for c in concepts if len(linked[c]) >= 2]
    connected_papers = {p for c in shared for p in linked[c]}
    # Papers that meet another paper at a concept or at a broader concept above theirs.
    ancestors = _ancestry(G)
    reach = _papers_under(G, subject, ancestors, set(papers))
    wide = {a for a, members in reach.items() if len(members) >= 2}
    meeting = {p for a in wide for p in reach[a]}
    # Concepts that two or more papers reach (directly or through narrower concepts), or that
    # hang below such a concept.
    anchored = sum(1 for c in concepts if not wide.isdisjoint(ancestors(c)))
    broader_links = 0
    for c in concepts:
        broader = nodes[c].get("broader", [])
        if broader:
            broader_links += len(broader)
            linked[c].extend(broader)
            for b in broader:
                if b not in linked:
                    linked[b] = []
                linked[b].append(c)
    components, largest = _components(linked)
    papers_in_largest = sum(1 for p in papers if p in largest)
    return {
        "papers": len(papers),
        "concepts": len(concepts),
        "venues": sum(1 for d in nodes.values() if d["kind"] == "venue"),
        "edges": edges,
        "paper_concept_edges": len(subject),
        "cooccurrence_edges": cooccurs,
        "related_edges": related,
        "shared_concepts": len(shared),
        "papers_sharing_a_concept": len(connected_papers),
        "papers_sharing_a_concept_or_broader": len(meeting),
        "concepts_shared_or_under_shared_broader": round(anchored / len(concepts), 4) if concepts else 0.0,
        "broader_links": broader_links,
        "papers_without_concepts": sum(1 for p in papers if not linked[p]),
        "connected_components": components,
        "largest_component_paper_share": round(papers_in_largest / len(papers), 4) if papers else 0.0,
    }


def _components(neighbours: Mapping[str, list[str]]) -> tuple[int, set[str]]:
    """The number of connected components of the graph given as *neighbours* lists, and the
    largest of them (the first, in the order of its first node, among equally large ones)."""
    seen: set[str] = set()
    components, largest = 0, set()
    for source in neighbours:
        if source in seen:
            continue
        component, todo = {source}, [source]
        while todo:
            for n in neighbours[todo.pop()]:
                if n not in component:
                    component.add(n)
                    todo.append(n)
        seen |= component
        components += 1
        if len(component) > len(largest):
            largest = component
    return components, largest


def papers_under(G: nx.Graph, subject: Iterable[tuple[str, str]] | None = None) -> dict[str, set[str]]:
    """For each concept some paper reaches, the papers linked to it or to a concept below it
    (``skos:broader``, transitively). *subject*: G's paper-concept edges, if the caller has them."""
    if subject is None:
        subject = _subject_edges(G)
    return _papers_under(G, subject, _ancestry(G))


def _edges(G: nx.Graph) -> Iterator[tuple]:
    """``G.edges(data=True)``: each edge once, (u, v, data), in the same order and orientation,
    read from the adjacency rather than through networkx's views (a 10,000-paper graph has
    ~700,000 edges)."""
    seen = set()
    for u, nbrs in G._adj.items():
        for v, d in nbrs.items():
            if v not in seen:
                yield u, v, d
        seen.add(u)


def _subject_edges(G: nx.Graph) -> list[tuple[str, str]]:
    """G's paper-concept edges (u, v), in the order of ``G.edges``."""
    return [(u, v) for u, v, d in _edges(G) if d["kind"] == "subject"]


def _papers_under(G: nx.Graph, subject: Iterable[tuple[str, str]], ancestors, papers: Container[str] | None = None) -> dict[str, set[str]]:
    """`papers_under`, with *ancestors* giving `_ancestors` of a concept of *G*, and *papers*
    G's paper nodes if the caller has them."""
    if papers is None:
        nodes = G._node
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


def _ancestry(G: nx.Graph):
    """A function giving `_ancestors` of a concept of *G*, each worked out once: below a single
    broader concept, a concept's ancestors are itself then its broader concept's ancestors."""
    nodes = G._node
    known: dict[str, list[str]] = {}

    def ancestors(concept: str) -> list[str]:
        found = known.get(concept)
        if found is not None:
            return found
        chain, c = [], concept  # up the concepts with a single broader concept, to a known one
        while c not in known:
            broader = nodes[c].get("broader", [])
            if len(broader) != 1 or c in chain:  # the top, a fork or a cycle: a search of its own
                known[c] = _ancestors(G, c)
                break
            chain.append(c)
            c = broader[0]
        for c in reversed(chain):
            if c not in known:
                above = known[nodes[c]["broader"][0]]
                known[c] = [c, *above] if c not in above else _ancestors(G, c)
        return known[concept]

    return ancestors


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
    """Write `graph_to_json` of *G* (UTF-8) to the binary file *f*, some thousands of nodes or
    links at a time."""
    # What nx.node_link_data(G, edges="links") gives, written a block of nodes or links at a time
    # rather than copied whole first: a 10,000-paper graph has ~600,000 links, and their text at
    # once took over 1 GiB. Only the links' order is held (a tuple of three references each).
    encode = json_encoder(**_GRAPH_JSON)

    def block(key: str, texts: Iterable[list[str]]) -> None:
        f.write(f"{encode(key)}: ".encode("utf-8"))
        start = "[\n"
        for some in texts:
            f.write((start + ",\n".join(some)).encode("utf-8"))
            start = ",\n"
        f.write(b"[]" if start == "[\n" else b"\n]")

    links = list(_edges(G))
    links.sort()  # by (u, v): no two links have the same, so their data are never compared
    f.write(f"{{\n{encode('directed')}: {encode(G.is_directed())},\n{encode('graph')}: {encode(G.graph)},\n".encode("utf-8"))
    ids = {n: encode(n) for n in G}  # for the links' source and target
    block("links", (_json_objects(encode, data, {"source": u, "target": v}, ids) for u, v, data in _columns(links, 8192)))
    del links
    f.write(f",\n{encode('multigraph')}: {encode(G.is_multigraph())},\n".encode("utf-8"))
    nodes = sorted(G._node.items())
    block("nodes", (list(map(encode, [{**d, "id": n} for n, d in nodes[i:i + 8192]])) for i in range(0, len(nodes), 8192)))
    f.write(b"\n}\n")


_GRAPH_JSON = dict(ensure_ascii=False, sort_keys=True, separators=(", ", ": "))  # graph.json's encoder


def _columns(rows: Sequence[tuple], size: int):
    """The columns of each *size* rows in turn."""
    for start in range(0, len(rows), size):
        yield zip(*rows[start:start + size])


def _json_objects(encode, objects: Sequence[Mapping], extra: Mapping[str, Sequence], known: Mapping[object, str]) -> list[str]:
    """``encode({**o, **extra at o})`` of each object *o*, with *encode* the `_GRAPH_JSON` encoder,
    *extra* columns of values (one per object) and *known* their JSON texts: the same texts,
    made a column at a time. The objects with the same keys share a template, and each of its
    columns becomes JSON in one go (`_json_values`), where encoding each object whole (~2 µs a
    link, ~700,000 links at 10,000 papers) makes the text of every key and value anew."""
    shapes = list(map(tuple, objects))  # each object's keys
    distinct = set(shapes)
    texts = {}  # per shape, its objects' texts in order
    for keys in distinct:
        if len(distinct) == 1:
            group, columns = objects, extra.values()
        else:
            mine = list(map(keys.__eq__, shapes))
            group, columns = list(compress(objects, mine)), [compress(c, mine) for c in extra.values()]
        columns = dict(zip(extra, columns))
        if not all(type(k) is str for k in keys):  # the encoder's own way with other keys (or its error)
            texts[keys] = iter([encode({**o, **dict(zip(columns, row))}) for o, *row in zip(group, *columns.values())])
            continue
        names = sorted({*keys, *extra})
        template = "{" + ", ".join(encode(k).replace("%", "%%") + ": %s" for k in names) + "}"
        values = [
            list(map(known.__getitem__, columns[k])) if k in columns else _json_values(encode, list(map(itemgetter(k), group)))
            for k in names
        ]
        texts[keys] = map(template.__mod__, zip(*values))
    return list(map(next, map(texts.__getitem__, shapes)))


def _json_values(encode, values: list) -> list[str]:
    """``[encode(v) for v in values]`` (*encode* the `_GRAPH_JSON` encoder), with C calls for
    the usual columns of links."""
    kinds = set(map(type, values))
    if kinds == {str}:
        distinct = set(values)
        if len(distinct) * 2 > len(values):  # phrases, mostly different
            return list(map(json.encoder.encode_basestring, values))
        return list(map(dict(zip(distinct, map(json.encoder.encode_basestring, distinct))).__getitem__, values))
    if kinds == {int}:
        return list(map(int.__repr__, values))
    if kinds == {float} and all(map(math.isfinite, values)):
        return list(map(float.__repr__, values))
    if kinds == {bool}:
        return ["true" if v else "false" for v in values]
    return list(map(encode, values))


def load_graph(path: str | Path) -> nx.Graph:
    """The graph from a node-link ``graph.json`` written by `kg build`."""
    from kg.errors import InputError

    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise InputError(f"{path}: no such file; run `kg build` first or name a graph.json") from e
    except IsADirectoryError as e:
        raise InputError(f"{path}: a folder, not a graph.json") from e
    except OSError as e:
        raise InputError(f"{path}: cannot be read ({e.strerror or e})") from e
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"{path}: not a graph.json written by kg build ({e})") from e
    problem = _not_node_link(data)
    if problem:
        raise InputError(f"{path}: not a graph.json written by kg build ({problem})")
    try:
        return nx.node_link_graph(data, edges="links")
    except (KeyError, TypeError, ValueError, AttributeError, nx.NetworkXError) as e:
        raise InputError(f"{path}: not a graph.json written by kg build ({e})") from e


def _not_node_link(data) -> str | None:
    """What keeps *data* from being the node-link form `write_graph_json` writes, or None: an
    object with a list of nodes (each an object with an id and a kind) and of links (each an
    object with a source, a target and a kind)."""
    if not isinstance(data, dict):
        return f"a JSON {type(data).__name__}, not an object"
    for key, needed in (("nodes", ("id", "kind")), ("links", ("source", "target", "kind"))):
        items = data.get(key)
        if not isinstance(items, list):
            return f"no list of {key}"
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                return f"{key}[{i}] is not an object"
            missing = [k for k in needed if k not in item]
            if missing:
                return f"{key}[{i}] has no {', '.join(missing)}"
    return None
