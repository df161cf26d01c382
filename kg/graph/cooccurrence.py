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


@dataclass(frozen=True, eq=False)
class ConceptMap:
    """The concepts on the map and the links between them, in a fixed order: *nodes* sorted by
    id; *links* (i, j), i < j, sorted, each with its *weight* (association strength scaled to a
    mean of 1; a ``skos:broader`` link weighs at least 1) and *count* (papers sharing both
    concepts, 0 for a broader link between concepts that share none); and each node's number of
    *papers* (empty when not known, as in a map made by hand), which tell the clusters whether a
    community is one paper's (`kg.graph.clusters`).

    The links are numpy arrays (*links* of shape (m, 2), *weights* and *counts* of m; given as
    sequences, they are made so): a build's map has millions of links, which as tuples of Python
    numbers took ~110 bytes each (32 as arrays) and ~320 while made (docs/design.md)."""

    nodes: tuple[str, ...]
    links: object  # numpy int64 (m, 2)
    weights: object  # numpy float64 (m,)
    counts: object  # numpy int64 (m,)
    papers: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        import numpy as np

        object.__setattr__(self, "links", np.asarray(self.links, dtype=np.int64).reshape(-1, 2))
        object.__setattr__(self, "weights", np.asarray(self.weights, dtype=np.float64).reshape(-1))
        object.__setattr__(self, "counts", np.asarray(self.counts, dtype=np.int64).reshape(-1))
        if not len(self.links) == len(self.weights) == len(self.counts):
            raise ValueError(f"a map's links, weights and counts differ in number: "
                             f"{len(self.links)}, {len(self.weights)}, {len(self.counts)}")

    def __eq__(self, other: object) -> bool:
        import numpy as np

        if not isinstance(other, ConceptMap):
            return NotImplemented
        return (self.nodes == other.nodes and tuple(self.papers) == tuple(other.papers)
                and all(np.array_equal(getattr(self, f), getattr(other, f)) for f in ("links", "weights", "counts")))

    __hash__ = None  # its arrays are mutable

    def igraph(self, chunk: int = 65536):
        """The map as a python-igraph ``Graph`` of its nodes (by position) and links, in order. The links go in
        *chunk* at a time as lists of Python pairs: python-igraph reads those many times faster than numpy arrays,
        and a chunk at a time holds no Python object per link of the whole map."""
        import igraph as ig

        g = ig.Graph(n=len(self.nodes))
        for start in range(0, len(self.links), chunk):
            part = self.links[start:start + chunk]
            g.add_edges(list(zip(part[:, 0].tolist(), part[:, 1].tolist())))
        return g

    def between(self, membership, values) -> tuple[list[tuple[int, int]], list[float]]:
        """The links between two communities of *membership* (one per node): each pair of communities (a, b),
        a < b, sorted, with the sum of *values* (one per link) over the links between them, added in the map's
        order (as `numpy.bincount` adds: the floats a loop over the links would give)."""
        import numpy as np

        member = np.asarray(membership, dtype=np.int64)
        first, second = member[self.links[:, 0]], member[self.links[:, 1]]
        out = first != second
        low, high = np.minimum(first[out], second[out]), np.maximum(first[out], second[out])
        k = int(member.max()) + 1 if len(member) else 0
        codes, which = np.unique(low * k + high, return_inverse=True)
        sums = np.bincount(which.ravel(), weights=np.asarray(values, dtype=np.float64)[out], minlength=len(codes))
        pairs = np.stack(np.divmod(codes, k), axis=1) if k else np.zeros((0, 2), dtype=np.int64)
        return [(i, j) for i, j in pairs.tolist()], sums.tolist()


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
    import numpy as np

    adjacency = dict(G.adjacency())  # plain dicts: networkx's views cost a call per item
    nodes = tuple(sorted(_map_concepts(G, adjacency, min_papers, min_concepts)))
    n = len(nodes)
    position = {u: i for i, u in enumerate(nodes)}
    codes, counts = _cooccurrences(nodes, position, adjacency)  # each pair as i * n + j (i < j), sorted
    first, second = np.divmod(codes, n) if n else (codes, codes)
    strength = np.bincount(first, weights=counts, minlength=n) + np.bincount(second, weights=counts, minlength=n)
    weights = _association(counts, int(counts.sum()), strength[first], strength[second])
    mean = math.fsum(weights.tolist()) / len(weights) if len(weights) else 1.0  # fsum: the same in any order
    weights = weights / mean
    broader = _broader_codes(G, nodes, position)
    if len(broader):  # a broader link weighs at least 1; one between concepts no paper shares, with a count of 0
        at = np.searchsorted(codes, broader)
        known = at < len(codes)
        known[known] = codes[at[known]] == broader[known]
        weights[at[known]] = np.maximum(weights[at[known]], 1.0)
        new = broader[~known]
        codes = np.concatenate([codes, new])
        order = np.argsort(codes, kind="stable")
        codes = codes[order]
        weights = np.concatenate([weights, np.ones(len(new))])[order]
        counts = np.concatenate([counts, np.zeros(len(new), dtype=np.int64)])[order]
    links = np.stack(np.divmod(codes, n), axis=1) if n else np.zeros((0, 2), dtype=np.int64)
    papers = tuple(int(G.nodes[u].get("papers") or 0) for u in nodes)
    return ConceptMap(nodes, links, weights, counts, papers)


def _cooccurrences(nodes: tuple[str, ...], position: dict[str, int], adjacency: dict):
    """The co-occurrence links among *nodes* (sorted; *position*: each one's place): each pair's code ``i * n + j``
    (positions, i < j), sorted, and its count, as int64 arrays (made without a Python object per link)."""
    import numpy as np
    from array import array

    n = len(nodes)
    codes, counts = array("q"), array("q")
    for i, u in enumerate(nodes):
        for v, e in adjacency[u].items():
            j = position.get(v)
            if j is not None and i < j and e.get("kind") == "cooccurs":
                codes.append(i * n + j)
                counts.append(int(e["count"]))
    codes, counts = np.frombuffer(codes, dtype=np.int64), np.frombuffer(counts, dtype=np.int64)
    order = np.argsort(codes, kind="stable")
    return codes[order], counts[order]


def _association(counts, total: int, first, second):
    """``count * 2 * total / (s_first * s_second)`` for each link, as Python computes it on integers: exact products,
    one correctly rounded division (numpy's float64 division of the two exact products is the same while they are
    below 2**53, as they are for any corpus kg builds; Python's integers past it)."""
    import numpy as np

    numerator = counts.astype(np.float64) * (2 * total)
    denominator = first * second  # float64 strengths: sums of integer counts, exact
    if len(counts) and max(float(numerator.max()), float(denominator.max())) >= 2.0**53:
        return np.array([c * 2 * total / (int(a) * int(b))
                         for c, a, b in zip(counts.tolist(), first.tolist(), second.tolist())], dtype=np.float64)
    return numerator / denominator


def _broader_codes(G: nx.Graph, nodes: tuple[str, ...], position: dict[str, int]):
    """The ``broader`` links among *nodes* (*position*: each one's place) as sorted distinct codes ``i * n + j``
    (i < j)."""
    import numpy as np

    n = len(nodes)
    found = set()
    for i, u in enumerate(nodes):
        for b in G.nodes[u].get("broader", []):
            j = position.get(b)
            if j is not None and j != i:
                found.add(min(i, j) * n + max(i, j))
    return np.array(sorted(found), dtype=np.int64)


def map_concepts(G: nx.Graph, *, min_papers: int = MAP_MIN_PAPERS, min_concepts: int = MAP_MIN_CONCEPTS) -> list[str]:
    """The concepts `concept_map` puts on the map, sorted (its ``nodes``), without its links."""
    return sorted(_map_concepts(G, dict(G.adjacency()), min_papers, min_concepts))


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
