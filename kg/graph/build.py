"""The knowledge graph: papers, concepts and venues in one networkx graph.

This graph is kg's single in-memory model; RDF (`kg.rdf`) and HTML (`kg.view`) are views
of it. Node and edge attributes are documented in ``docs/model.md``.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence

import networkx as nx

from kg.concepts.entities import ConceptTypes
from kg.concepts.model import ConceptIndex
from kg.extract.keyphrases import PaperKeyphrases
from kg.graph.stats import ancestors_of, ancestry
from kg.text.records import unique_keywords
from kg.text.sources import Paper, Source


# Papers that must state "A is a kind of B" (a HYPONYM-OF relation) before B is made a broader
# concept of A: one paper's statement is too often a misread (of 36 such statements with 2+ papers
# in a 10,000-abstract build, read by hand, about three in four were right).
HYPONYM_SUPPORT = 2


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
    """``file#paragraph=N`` (an abstract list), ``file#row=N`` (a JSON Lines or CSV row, the Nth
    work of a JSON file) or ``file#line=N`` (the line a BibTeX entry or RIS record starts at)."""
    if source.paragraph is not None:
        return f"{source.file}#paragraph={source.paragraph}"
    if source.row is not None:
        return f"{source.file}#row={source.row}"
    return f"{source.file}#line={source.line}"


def build_graph(
    papers: Sequence[Paper],
    keyphrases: Sequence[PaperKeyphrases],
    index: ConceptIndex,
    labels: Mapping[str, str],
    *,
    metadata: Mapping[str, object] | None = None,
    types: ConceptTypes | None = None,
    cooccurrence: bool = True,
) -> nx.Graph:
    """The graph of *papers*, their *keyphrases* joined to concepts by *index*; with *types*, the
    concepts' types and typed relations (`add_types`). Without *cooccurrence*, no concept-concept
    edge yet: `add_cooccurrence` adds them later (`kg.build` does, once it has dropped the papers,
    keyphrases and index, so that the largest part of the graph takes the memory they held).

    >>> from kg.text.sources import Paper
    >>> from kg.extract.keyphrases import PaperKeyphrases, Keyphrase
    >>> from kg.concepts.merge import merge_concepts
    >>> p = Paper("p1", "Graph neural networks.", "Graph neural networks.", venue="ICML", year=2026)
    >>> k = PaperKeyphrases("p1", (Keyphrase("graph neural networks", 0.9, 1),))
    >>> g = build_graph([p], [k], merge_concepts([("p1", ["graph neural networks"], ())]), {"p1": "GNN"})
    >>> sorted(g.nodes)
    ['concept:graph-neural-network', 'paper:p1', 'venue:icml']
    """
    G = nx.Graph()
    G.graph.update(dict(metadata or {}))
    # concept id -> its node, the very key of G's dicts (and the one string of each name in them)
    concept_nodes = {c.id: concept_node(c.id) for c in index.concepts}
    generic: set[str] = set()  # the nodes of generic concepts: no paper's subject (kg.concepts.specificity)
    for c in index.concepts:
        node = concept_nodes[c.id]
        G.add_node(node, kind="concept", label=c.label, alt_labels=list(c.alt_labels), papers=len(c.papers), key=c.key,
                   broader=[concept_nodes.get(b) or concept_node(b) for b in c.broader])
        if c.specificity is not None:
            G.nodes[node].update(specificity=c.specificity, generic=c.generic)
            if c.generic:
                generic.add(node)
                G.nodes[node]["mentions"] = len(c.papers)  # the papers whose keyphrases name it
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
            doi=p.doi,
            arxiv=p.arxiv,
            authors=[a.as_dict() for a in p.authors],
            journal_ref=p.journal_ref,
        )
        if keywords := unique_keywords(p.keywords):  # a paper without keywords has no attribute, not an empty list
            G.nodes[node]["keywords"] = list(keywords)
        if p.venue:
            v = venue_node(p.venue)
            if v not in G:
                G.add_node(v, kind="venue", label=p.venue)
            G.add_edge(node, v, kind="venue", year=p.year)
    assignment = index.assignment
    subject: list[tuple[str, str, object]] = []  # (paper node, concept node, keyphrase), in the order found
    concepts_of: dict[str, list[str]] = {}  # paper node -> its concept nodes
    for found in keyphrases:
        node = paper_nodes.get(found.paper_id) or paper_node(found.paper_id)
        linked = None
        for k in found.keyphrases:
            target = concept_nodes.get(assignment.get((found.paper_id, k.phrase)))
            if target is None or target in generic:
                continue
            if linked is None:
                if node not in G:  # a paper not among *papers*
                    raise KeyError(f"{node}: no such paper")
                linked = concepts_of.setdefault(node, [])
            if target in linked:  # two phrases of one paper joined one concept: keep the best
                continue
            subject.append((node, target, k))
            linked.append(target)
    # each edge's data made as it is added (networkx copies it): not a second dict per link held meanwhile;
    # its score and phrase one object per distinct value (scores have 4 decimals; many papers share a phrase)
    scores: dict[float, float] = {}
    phrases: dict[str, str] = {}
    G.add_edges_from((n, t, {"kind": "subject", "score": _one_of(scores, k.score), "rank": k.rank,
                             "phrase": phrases.setdefault(k.phrase, k.phrase)}) for n, t, k in subject)
    papers_linked = Counter(target for _, target, _ in subject)
    for node in concept_nodes.values():  # paper counts as linked in the graph (only papers link to concepts yet)
        G.nodes[node]["papers"] = papers_linked[node]
    # A broader concept implied by its narrower ones, none of whose papers stayed linked, goes.
    referenced = {b for node in concept_nodes.values() for b in G.nodes[node]["broader"]}
    removed = set()
    for c in index.concepts:
        node = concept_nodes[c.id]
        if not c.papers and node not in referenced:
            G.remove_node(node)
            removed.add(node)
    if removed:
        concepts_of = {p: [c for c in found if c not in removed] for p, found in concepts_of.items()}
    if types is not None:  # first: its HYPONYM-OF statements add broader concepts, which no related pair may join
        add_types(G, types, concept_nodes)
    if cooccurrence:
        _add_cooccurrence(G, concepts_of)
    return G


def _one_of(shared: dict[float, float], value: float) -> float:
    """*value*, or the equal float *shared* holds (put there the first time): one object for each
    value. Floats alone (1 == 1.0), and not zero, whose sign a dict would lose (-0.0 == 0.0), nor NaN."""
    if type(value) is not float or not value or value != value:
        return value
    return shared.setdefault(value, value)


def add_cooccurrence(G: nx.Graph) -> None:
    """The concept-concept edges of a graph `build_graph` made without them, from each paper's
    subject edges: the same edges as it adds itself (`_add_cooccurrence`)."""
    adjacency = G.adj
    concepts_of = {}
    for node, kind in G.nodes(data="kind"):
        if kind == "paper":
            found = [c for c, e in adjacency[node].items() if e.get("kind") == "subject"]
            if found:
                concepts_of[node] = found
    _add_cooccurrence(G, concepts_of)


def add_types(G: nx.Graph, types: ConceptTypes, concept_nodes: Mapping[str, str]) -> None:
    """Each typed concept's ``type_votes`` and ``entity_type`` (when the votes elect one), and
    its ``relations`` (those it is the head of), as docs/model.md describes them."""
    for cid, votes in types.votes.items():
        node = concept_nodes.get(cid)
        if node in G:
            G.nodes[node]["type_votes"] = dict(votes)
            kind = types.type_of(cid)
            if kind is not None:
                G.nodes[node]["entity_type"] = kind
    for r in types.relations:
        head, tail = concept_nodes.get(r.head), concept_nodes.get(r.tail)
        if head not in G or tail not in G:
            continue
        G.nodes[head].setdefault("relations", []).append({
            "type": r.type, "object": tail, "papers": r.papers, "score": r.score,
            "evidence": [{"paper": paper_node(e.paper), "start": e.start, "end": e.end, "score": e.score} for e in r.evidence],
        })
        if r.type == "HYPONYM-OF" and r.papers >= HYPONYM_SUPPORT:
            _propose_broader(G, head, tail)


def _propose_broader(G: nx.Graph, narrower: str, broader: str) -> None:
    """*broader* joins *narrower*'s broader concepts ("A is a kind of B", stated by enough papers),
    beside the one its words give (kg.concepts.hierarchy), unless it is there already, generic
    (no paper's subject), or below *narrower* (a cycle); ``broader_stated`` keeps which came so."""
    data = G.nodes[narrower]
    if broader in data["broader"] or G.nodes[broader].get("generic") or narrower in ancestors_of(G, broader):
        return
    data["broader"] = [*data["broader"], broader]
    data.setdefault("broader_stated", []).append(broader)


def _add_cooccurrence(G: nx.Graph, concepts_of: Mapping[str, list[str]], *, partition_size: int = 4096) -> None:
    """Concept-concept edges with the number of papers that share both (the bipartite
    projection of *concepts_of*, each paper's concept nodes), marked as `_related` says; only
    among the concepts `_projected` keeps.

    The pairs are counted a partition of papers at a time (`pair_counts`, added by `add_pair_counts`: a
    round, as the stages after extraction run), and the edges added in the order of their sorted
    (concept, concept) pairs, so each concept's new neighbours follow in sorted order."""
    import numpy as np

    concepts_of = _projected(G, concepts_of)
    names = sorted({c for found in concepts_of.values() for c in found})
    position = {c: i for i, c in enumerate(names)}  # in sorted order, as the pairs are
    rows = [[position[c] for c in found] for found in concepts_of.values() if len(found) >= 2]
    codes, count = add_pair_counts([pair_counts(rows[i:i + partition_size], len(names))
                                    for i in range(0, len(rows), partition_size)])
    if not len(codes):
        return
    first, second = np.divmod(codes, len(names))
    papers = np.array([G.nodes[c]["papers"] for c in names], dtype=np.int64)
    # count / sqrt(papers_a * papers_b) as Python computes it (IEEE division and square root),
    # rounded by Python's round (decimal-exact, unlike numpy's) once per distinct value
    exact, which = np.unique(count / np.sqrt(papers[first] * papers[second]), return_inverse=True)
    rounded = [round(x, 4) for x in exact.tolist()]  # at most 10,001 values, each one float object shared by its edges
    which = which.ravel()
    related = _related(first, second, count, np.array(rounded)[which], _in_line(G, names))
    shared: dict[tuple, EdgeData] = {}  # one data dict for the edges whose count, association and relatedness agree

    def data_of(key: tuple) -> EdgeData:
        found = shared.get(key)
        if found is None:
            c, w, r = key
            found = shared[key] = EdgeData(kind="cooccurs", count=c, association=rounded[w], related=r)
        return found

    data = map(data_of, zip(count.tolist(), which.tolist(), related.tolist()))
    add_edges_as_they_are(G, zip([names[i] for i in first.tolist()], [names[i] for i in second.tolist()], data))


class EdgeData(dict):
    """The data of the `cooccurs` edges that have the same attributes: one dict shared by them all,
    so read-only. Those edges are the graph's largest part (533,952 at 40,000 synthetic abstracts,
    with 8,281 distinct data; millions at 100,000), and a dict of their own cost each 184 bytes.

    Changing one raises `TypeError`: edit a copy of the graph (``G.copy()`` gives each edge a dict
    of its own). A copy or pickle of the graph keeps the sharing (`copy.deepcopy` returns it as is)."""

    __slots__ = ()

    def _read_only(self, *args, **kwargs):
        raise TypeError("this co-occurrence edge's data is shared with the edges that have the same data, so"
                        " read-only; edit a copy of the graph (G.copy() gives each edge a dict of its own)")

    __setitem__ = __delitem__ = __ior__ = update = pop = popitem = clear = setdefault = _read_only

    def __reduce__(self):
        return EdgeData, (dict(self),)

    def __copy__(self) -> EdgeData:
        return self

    def __deepcopy__(self, memo) -> EdgeData:
        return self


def add_edges_as_they_are(G: nx.Graph, edges) -> None:
    """``G.add_edges_from(edges)`` for (u, v, data) between nodes of *G*, each *data* kept as it
    is rather than copied into a new dict (networkx copies; `EdgeData` is shared). Where *G* has an
    edge already, its data and *data* are merged into a dict of its own, as networkx would."""
    adj = G._adj
    for u, v, data in edges:
        if u not in adj or v not in adj:
            raise ValueError(f"no node {u if u not in adj else v!r} in the graph for its co-occurrence edge")
        before = adj[u].get(v)
        if before is not None:
            data = {**before, **data}
        adj[u][v] = adj[v][u] = data
    clear = getattr(nx, "_clear_cache", None)  # networkx >= 3.3 caches conversions of a graph until it changes
    if clear is not None:
        clear(G)


def pair_counts(rows: Sequence[Sequence[int]], n: int):
    """The concept pairs within each of *rows* (a paper's concept positions among *n*, each once), as
    codes ``a * n + b`` (a < b, sorted) and how many rows have each: a partition's share of the projection."""
    import numpy as np

    by_size: dict[int, list[list[int]]] = {}  # a paper's sorted concept positions, by their number
    for row in rows:
        if len(row) >= 2:
            by_size.setdefault(len(row), []).append(sorted(row))
    if not by_size:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    codes = []
    for size, found in by_size.items():
        first, second = np.triu_indices(size, 1)
        found = np.array(found, dtype=np.int64)
        codes.append((found[:, first] * n + found[:, second]).ravel())
    return np.unique(np.concatenate(codes), return_counts=True)


def add_pair_counts(parts):
    """The `pair_counts` of several partitions added: each code once, sorted, with its total (integers: the
    same in any order)."""
    import numpy as np

    parts = [(codes, count) for codes, count in parts if len(codes)]
    if not parts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if len(parts) == 1:
        return parts[0]
    codes, which = np.unique(np.concatenate([codes for codes, _ in parts]), return_inverse=True)
    total = np.zeros(len(codes), dtype=np.int64)
    np.add.at(total, which.ravel(), np.concatenate([count for _, count in parts]).astype(np.int64))
    return codes, total


def _projected(G: nx.Graph, concepts_of: Mapping[str, list[str]]) -> Mapping[str, list[str]]:
    """*concepts_of* (each paper's concept nodes) with only the concepts whose co-occurrences the
    graph keeps: all of them while fewer than `MAP_MIN_CONCEPTS` concepts have `MAP_MIN_PAPERS`
    papers (a small corpus, whose map those of one paper fill), else only those.

    A concept of one paper co-occurs once with each other concept of its paper: most of the pairs
    (docs/model.md), none of them related (that needs two shared papers) or on the
    map, and each already said by the paper's two subject edges. Kept, they made the graph's size
    grow with the pairs within papers rather than with the concepts."""
    from kg.graph.cooccurrence import MAP_MIN_CONCEPTS, MAP_MIN_PAPERS

    nodes = G.nodes
    shared = {c for found in concepts_of.values() for c in found if nodes[c]["papers"] >= MAP_MIN_PAPERS}
    if len(shared) < MAP_MIN_CONCEPTS:
        return concepts_of
    return {p: [c for c in found if c in shared] for p, found in concepts_of.items()}


def _in_line(G: nx.Graph, names: Sequence[str]):
    """A function telling, for two arrays of concept positions in *names*, which pairs are in
    line in *G*'s ``broader`` hierarchy: one concept above the other, directly or further up.

    Such a pair is never related (SKOS S27: skos:related is disjoint with skos:broaderTransitive).
    The hierarchy wins: "deep generative model" is a kind of "generative model", which says more
    than that papers name the two together, and its papers are counted under the broader concept
    (kgv:paperCountWithNarrower); co-occurring is what a narrower concept and its broader one do
    anyway, so their relatedness would say nothing new."""
    import numpy as np

    ancestors = ancestry(G)

    def in_line(first, second):
        pairs = zip(first.tolist(), second.tolist())
        return np.array([names[b] in ancestors(names[a]) or names[a] in ancestors(names[b]) for a, b in pairs], dtype=bool)

    return in_line


RELATED_MIN_COOCCURRENCES = 2
RELATED_PER_CONCEPT = 5


def _related(first, second, count, association, in_line):
    """Which `cooccurs` edges make two concepts related (``skos:related``): a boolean array over
    the edges, given as arrays of their two concepts' positions in sorted order (*first*,
    *second*), *count* and *association*. Related means shared by at least
    `RELATED_MIN_COOCCURRENCES` papers, not two concepts one of which is above the other
    (*in_line*, `_in_line`), and among the `RELATED_PER_CONCEPT` strongest associations of such
    pairs of one of the two concepts (then most papers, then the other concept first in sorted
    order). The association is the cosine of their paper sets, ``count / sqrt(papers_u *
    papers_v)`` (1 when every paper of each has the other too), 4 decimals."""
    import numpy as np

    related = np.zeros(len(count), dtype=bool)
    strong = np.flatnonzero(count >= RELATED_MIN_COOCCURRENCES)
    strong = strong[~in_line(first[strong], second[strong])]
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
