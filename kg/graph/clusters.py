"""Clusters of the map's concepts: communities found by the Leiden algorithm, each named by the
concepts most characteristic of it, and each paper's dominant cluster (``cluster`` on the nodes,
``G.graph["clusters"]``; docs/model.md).

The communities are those VOSviewer finds: modularity (with a resolution) over the co-occurrence
links weighted by association strength (`kg.graph.cooccurrence.concept_map`), here by
python-igraph's ``community_leiden`` drawing from one seeded generator; then each community
smaller than `MIN_CLUSTER_SIZE` joins the one it is most linked to. docs/design.md says why.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import networkx as nx

from kg.graph.cooccurrence import SEED, ConceptMap, seeded_igraph

RESOLUTION = 1.0  # modularity's resolution (VOSviewer's default): higher gives more, smaller clusters
# Leiden's iterations (VOSviewer's default): run to convergence they took ~30 at 40,000 synthetic abstracts, 118 s at
# 200,000, for modularity 0.0009 and 0.00006 higher than after ten (docs/design.md)
LEIDEN_ITERATIONS = 10
MIN_CLUSTER_SIZE = 5  # a smaller community joins the one it is most linked to (if it has a link out),
MIN_CLUSTER_SHARE = 0.05  # ... as does one under this share of the map's concepts, if that is fewer
MIN_CLUSTER_PAPERS = 2  # ... and one with fewer than two concepts this many papers share (one paper's)
LABEL_CONCEPTS = 3  # concepts named in a cluster's label
TOP_CONCEPTS = 10  # concepts listed in a cluster's "top"


@dataclass(frozen=True)
class Communities:
    """Each concept's community (*membership*, in the map's order) and how many of them are
    *clusters*: communities 0 .. clusters - 1, by size; the rest are one paper's concepts linked to
    no cluster, which the layout keeps together but which are no cluster (grey on the map)."""

    membership: tuple[int, ...]
    clusters: int


def find_communities(cmap: ConceptMap, *, resolution: float = RESOLUTION, min_size: int = MIN_CLUSTER_SIZE,
                     seed: int = SEED) -> Communities:
    """The communities of the concepts of *cmap* (0, 1, ...: clusters first, most concepts
    first; ties by first concept). Those under *min_size* concepts (or `MIN_CLUSTER_SHARE` of
    them, if fewer: a map of 7 concepts keeps its pairs) and those of one paper (`_one_papers`)
    join their most-linked neighbour; one of one paper with no link out stays, but is no cluster."""
    n = len(cmap.nodes)
    if not n:
        return Communities((), 0)
    g = cmap.igraph()
    with seeded_igraph(seed):  # the weights as a list: python-igraph reads it faster than a numpy array
        found = g.community_leiden(objective_function="modularity", weights=cmap.weights.tolist() or None,
                                   resolution=resolution, n_iterations=LEIDEN_ITERATIONS)
    min_size = min(min_size, int(n * MIN_CLUSTER_SHARE))
    membership = _join_small(_renumber(found.membership), cmap, min_size)
    lone = _one_papers(membership, cmap)
    membership = _renumber(membership, last=lone)
    return Communities(tuple(membership), len(set(membership)) - len(lone))


def _shared_concepts(membership: Sequence[int], cmap: ConceptMap) -> Counter:
    """How many concepts of each community several papers share (`MIN_CLUSTER_PAPERS` or
    more); all of them when *cmap* does not know its concepts' papers."""
    shared: Counter = Counter()
    for i, m in enumerate(membership):
        shared[m] += not cmap.papers or cmap.papers[i] >= MIN_CLUSTER_PAPERS
    return shared


def _is_one_papers(shared: int, size: int) -> bool:
    """Whether a community of *size* concepts, *shared* of them by several papers, is one
    paper's: fewer than two of its concepts are shared (its one concept, for a community of one),
    so what links it is one abstract's phrases around at most one shared concept."""
    return shared < min(2, size)


def _one_papers(membership: Sequence[int], cmap: ConceptMap) -> set[int]:
    """The communities of *membership* that are one paper's (`_is_one_papers`)."""
    shared, sizes = _shared_concepts(membership, cmap), Counter(membership)
    return {m for m in sizes if _is_one_papers(shared[m], sizes[m])}


def _join_small(membership: list[int], cmap: ConceptMap, min_size: int) -> list[int]:
    """*membership* with each community under *min_size* concepts or of one paper
    (`_is_one_papers`) joined, smallest first, to the community it has the most link weight to
    (one with no link out stays as it is)."""
    sizes, shared = Counter(membership), _shared_concepts(membership, cmap)
    links: dict[int, dict[int, float]] = defaultdict(dict)  # community -> community -> link weight between
    for (a, b), w in zip(*cmap.between(membership, cmap.weights)):
        links[a][b] = links[b][a] = w
    joined: dict[int, int] = {}
    while True:
        small = [(size, c) for c, size in sizes.items()
                 if (size < min_size or _is_one_papers(shared[c], size)) and links.get(c)]
        if not small:
            break
        _, c = min(small)
        out = links.pop(c)
        target = max(out, key=lambda other: (out[other], sizes[other], -other))
        sizes[target] += sizes.pop(c)
        shared[target] += shared.pop(c)
        joined[c] = target
        for other, w in out.items():  # c's links are now target's
            del links[other][c]
            if other != target:
                links[target][other] = links[target].get(other, 0.0) + w
                links[other][target] = links[other].get(target, 0.0) + w

    def final(c: int) -> int:
        while c in joined:
            c = joined[c]
        return c

    return [final(m) for m in membership]


def _renumber(membership: Sequence[int], *, last: set[int] = frozenset()) -> list[int]:
    """Communities numbered 0, 1, ... by size (most concepts first), then by first member; those
    in *last* after all others."""
    sizes = Counter(membership)
    first: dict[int, int] = {}
    for i, m in enumerate(membership):
        first.setdefault(m, i)
    number = {c: k for k, c in enumerate(sorted(sizes, key=lambda c: (c in last, -sizes[c], first[c])))}
    return [number[m] for m in membership]


def characteristic(cmap: ConceptMap, membership: Sequence[int]) -> list[list[int]]:
    """Each community's concepts (indices into *cmap*), most characteristic first.

    A concept characterizes its community by the share of its co-occurrences that fall inside
    it, smoothed towards the community's share of all co-occurrences (its *prior*):
    ``(inside + a * prior) / (total + a)``, with *a* the mean total of the map's concepts. A
    concept that co-occurs with everything (``learning``) has about the prior however often it
    occurs, and one seen in two papers cannot outrank a frequent one that lies as much inside.
    Ties by more co-occurrences, then by order in *cmap*."""
    n = len(cmap.nodes)
    k = max(membership) + 1 if n else 0
    inside, total = _inside_and_total(cmap, membership)
    weight = [0.0] * k
    for i, m in enumerate(membership):
        weight[m] += total[i]
    everything = sum(weight)
    alpha = everything / n if n else 0.0
    members: list[list[int]] = [[] for _ in range(k)]
    for i, m in enumerate(membership):
        members[m].append(i)

    def share(i: int) -> float:
        prior = weight[membership[i]] / everything if everything else 0.0
        return (inside[i] + alpha * prior) / (total[i] + alpha) if total[i] + alpha else 0.0

    return [sorted(found, key=lambda i: (-share(i), -total[i], i)) for found in members]


def _inside_and_total(cmap: ConceptMap, membership: Sequence[int]) -> tuple[list[float], list[float]]:
    """Each concept's co-occurrences (the counts of its links, as floats: sums of integers, exact in any order) inside
    its community of *membership*, and in all."""
    import numpy as np

    n = len(cmap.nodes)
    first, second = cmap.links[:, 0], cmap.links[:, 1]
    counts = cmap.counts.astype(np.float64)
    total = np.bincount(first, weights=counts, minlength=n) + np.bincount(second, weights=counts, minlength=n)
    member = np.asarray(membership, dtype=np.int64)
    same = member[first] == member[second] if n else np.zeros(0, dtype=bool)
    inside = (np.bincount(first[same], weights=counts[same], minlength=n)
              + np.bincount(second[same], weights=counts[same], minlength=n))
    return inside.tolist(), total.tolist()


def add_clusters(G: nx.Graph, cmap: ConceptMap, *, seed: int = SEED) -> list[int]:
    """Find the clusters of the concepts of *cmap* and put them on *G*: each clustered concept's
    and each paper's ``cluster`` (from 1), each clustered concept's ``cluster_rank`` (1 = the
    most characteristic of its cluster) and ``G.graph["clusters"]`` (without the centres, which
    `kg.graph.layout` adds). Returns each concept's community (``cluster - 1`` for a clustered
    one; a number past the clusters for one paper's concepts that are no cluster), in *cmap*'s
    order."""
    found = find_communities(cmap, seed=seed)
    ranked = characteristic(cmap, found.membership)[:found.clusters]
    for m, members in enumerate(ranked):
        for rank, i in enumerate(members, start=1):
            G.nodes[cmap.nodes[i]]["cluster"] = m + 1
            G.nodes[cmap.nodes[i]]["cluster_rank"] = rank
    papers = dominant_clusters(G)
    for paper, m in papers.items():
        G.nodes[paper]["cluster"] = m
    per_cluster = Counter(papers.values())
    G.graph["clusters"] = [
        {"id": m + 1, "label": " / ".join(G.nodes[n]["label"] for n in cluster_name(G, [cmap.nodes[i] for i in members])),
         "concepts": len(members), "papers": per_cluster.get(m + 1, 0), "top": [cmap.nodes[i] for i in members[:TOP_CONCEPTS]]}
        for m, members in enumerate(ranked)
    ]
    return list(found.membership)


def cluster_name(G: nx.Graph, ranked: Sequence[str]) -> list[str]:
    """The concepts that name a cluster, of its concepts *ranked* most characteristic first: the
    first `LABEL_CONCEPTS` that are neither generic (``generic``, kg.concepts.specificity) nor
    weak (of one paper: a phrase of one abstract, whose specificity measures no cohesion). A cluster with no such concept is
    named by its first concept that is not generic, or else its first."""
    def strong(n: str) -> bool:
        return not G.nodes[n].get("generic") and int(G.nodes[n].get("papers") or 0) >= MIN_CLUSTER_PAPERS

    named = [n for n in ranked if strong(n)][:LABEL_CONCEPTS]
    return named or [next((n for n in ranked if not G.nodes[n].get("generic")), ranked[0])] if ranked else []


def dominant_clusters(G: nx.Graph) -> dict[str, int]:
    """The dominant cluster of each paper of *G* that has a concept with a ``cluster``: the one
    most of its clustered concepts are in, ties to the cluster of its best-ranked one of them."""
    nodes, adjacency = dict(G.nodes(data=True)), dict(G.adjacency())  # plain dicts, not networkx's views
    found = {}
    for paper, d in nodes.items():
        if d.get("kind") != "paper":
            continue
        ranked = sorted((e.get("rank", 0), nodes[c]["cluster"]) for c, e in adjacency[paper].items()
                        if e.get("kind") == "subject" and "cluster" in nodes[c])
        if ranked:
            votes = Counter(cluster for _, cluster in ranked)
            best = max(votes.values())
            found[paper] = next(cluster for _, cluster in ranked if votes[cluster] == best)
    return found
