"""The concepts a map draws and the links between them, weighted as VOSviewer weighs them: the
input of the clusters (`kg.graph.clusters`) and of the layout (`kg.graph.layout`).
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import dataclass

import networkx as nx

MAP_MIN_PAPERS = 2  # a concept is on the map when at least this many papers have it,
MAP_MIN_CONCEPTS = 1000  # and concepts of fewer papers fill a map of fewer concepts up to this many
SEED = 20  # the seed of every random choice of the clusters and the layout


@dataclass(frozen=True)
class ConceptMap:
    """The concepts on the map and the links between them, in a fixed order: *nodes* sorted by
    id; *links* (i, j), i < j, sorted, each with its *weight* (association strength scaled to a
    mean of 1; a ``skos:broader`` link weighs at least 1) and *count* (papers sharing both
    concepts, 0 for a broader link between concepts that share none); and each node's number of
    *papers* (empty when not known, as in a map made by hand), which tell the clusters whether a
    community is one paper's (`kg.graph.clusters`)."""

    nodes: tuple[str, ...]
    links: tuple[tuple[int, int], ...]
    weights: tuple[float, ...]
    counts: tuple[int, ...]
    papers: tuple[int, ...] = ()


def concept_map(G: nx.Graph, *, min_papers: int = MAP_MIN_PAPERS, min_concepts: int = MAP_MIN_CONCEPTS) -> ConceptMap:
    """The concepts of *G* that at least *min_papers* papers have (when they are fewer than
    *min_concepts*, concepts of fewer papers fill the map up to that many: more papers first,
    then the best rank any paper gives them, then id; so a small corpus such as the seeds, with
    16 concepts two papers share, still has a map), with the co-occurrence and broader links among
    them.

    A co-occurrence link weighs its association strength, VOSviewer's normalization of
    co-occurrence counts: ``count * 2m / (s_u * s_v)``, with *s* a concept's total count over the
    map's links and *m* the sum of all counts, so that a pair weighs 1 when it co-occurs as often
    as its totals predict (rare pairs are not drowned by frequent concepts, which co-occur with
    everything)."""
    adjacency = dict(G.adjacency())  # plain dicts: networkx's views cost a call per item
    nodes = tuple(sorted(_map_concepts(G, adjacency, min_papers, min_concepts)))
    position = {n: i for i, n in enumerate(nodes)}
    counts: dict[tuple[int, int], int] = {}
    for u in nodes:
        i = position[u]
        for v, e in adjacency[u].items():
            j = position.get(v)
            if j is not None and i < j and e.get("kind") == "cooccurs":
                counts[(i, j)] = int(e["count"])
    strength = [0] * len(nodes)
    for (i, j), c in counts.items():
        strength[i] += c
        strength[j] += c
    total = sum(counts.values())
    weights = {pair: c * 2 * total / (strength[pair[0]] * strength[pair[1]]) for pair, c in counts.items()}
    mean = math.fsum(weights.values()) / len(weights) if weights else 1.0  # fsum: the same in any order
    weights = {pair: w / mean for pair, w in weights.items()}
    for u in nodes:
        for b in G.nodes[u].get("broader", []):
            j = position.get(b)
            if j is not None and j != position[u]:
                pair = (min(position[u], j), max(position[u], j))
                weights[pair] = max(weights.get(pair, 0.0), 1.0)
                counts.setdefault(pair, 0)
    links = tuple(sorted(weights))
    papers = tuple(int(G.nodes[u].get("papers") or 0) for u in nodes)
    return ConceptMap(nodes, links, tuple(weights[p] for p in links), tuple(counts[p] for p in links), papers)


def _map_concepts(G: nx.Graph, adjacency: dict, min_papers: int, min_concepts: int) -> list[str]:
    """The concepts on the map: see `concept_map`."""
    concepts = [(n, d.get("papers", 0)) for n, d in G.nodes(data=True) if d.get("kind") == "concept"]
    chosen = [n for n, papers in concepts if papers >= min_papers]
    if len(chosen) < min_concepts:
        def best_rank(n: str) -> int:
            return min((int(e.get("rank", 0)) for e in adjacency[n].values() if e.get("kind") == "subject"), default=0)

        fill = sorted(((-papers, best_rank(n), n) for n, papers in concepts if 0 < papers < min_papers))
        chosen += [n for _, _, n in fill[:min_concepts - len(chosen)]]
    return chosen


@contextmanager
def seeded_igraph(seed: int = SEED):
    """python-igraph drawing its random numbers from a `random.Random` seeded with *seed* while
    the block runs, then from Python's `random` module again (its default: python-igraph has no
    way to read the generator it had)."""
    import random

    import igraph as ig

    ig.set_random_number_generator(random.Random(seed))
    try:
        yield
    finally:
        ig.set_random_number_generator(random)
