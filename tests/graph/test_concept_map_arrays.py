"""The concept map's links as numpy arrays (`kg.graph.cooccurrence.ConceptMap`): the same links, weights and counts
as the association-strength formula computed link by link with Python's integers, and the helpers its consumers use."""

from __future__ import annotations

import math
import random

import networkx as nx
import numpy as np
import pytest

from kg.graph.cooccurrence import ConceptMap, _association, concept_map


def random_graph(seed: int, concepts: int = 60, edges: int = 400) -> nx.Graph:
    """Concepts with paper counts, co-occurrence edges with counts and some broader links, as a build makes them."""
    rng = random.Random(seed)
    G = nx.Graph()
    names = [f"concept:c{i:03d}" for i in rng.sample(range(1000), concepts)]
    for n in names:
        G.add_node(n, kind="concept", papers=rng.choice([0, 1, 2, 3, 5, 40]), broader=[])
    for _ in range(edges):
        a, b = rng.sample(names, 2)
        G.add_edge(a, b, kind="cooccurs", count=rng.choice([1, 1, 2, 3, 17]))
    for n in rng.sample(names, 10):
        G.nodes[n]["broader"] = [rng.choice(names)]
    G.add_node("paper:p", kind="paper")
    for n in names[:5]:
        G.add_edge("paper:p", n, kind="subject", rank=1)
    return G


def by_the_formula(G: nx.Graph, nodes: tuple[str, ...]):
    """The map's links among *nodes* computed link by link: VOSviewer's association strength with Python's exact
    integers, scaled to a mean of 1, broader links at least 1 (count 0 when no paper shares them)."""
    position = {n: i for i, n in enumerate(nodes)}
    counts = {}
    for u, v, e in G.edges(data=True):
        if e.get("kind") == "cooccurs" and u in position and v in position:
            counts[tuple(sorted((position[u], position[v])))] = e["count"]
    strength = [0] * len(nodes)
    for (i, j), c in counts.items():
        strength[i] += c
        strength[j] += c
    total = sum(counts.values())
    weights = {p: c * 2 * total / (strength[p[0]] * strength[p[1]]) for p, c in counts.items()}
    mean = math.fsum(weights.values()) / len(weights)
    weights = {p: w / mean for p, w in weights.items()}
    for u in nodes:
        for b in G.nodes[u].get("broader", []):
            if b in position and b != u:
                p = tuple(sorted((position[u], position[b])))
                weights[p] = max(weights.get(p, 0.0), 1.0)
                counts.setdefault(p, 0)
    links = sorted(weights)
    return links, [weights[p] for p in links], [counts[p] for p in links]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_map_has_the_links_weights_and_counts_of_the_formula_to_the_last_bit(seed):
    G = random_graph(seed)
    for min_concepts in (1, 1000):  # the concepts of 2+ papers; and those filled up with concepts of one paper
        cmap = concept_map(G, min_concepts=min_concepts)
        links, weights, counts = by_the_formula(G, cmap.nodes)
        assert len(links) > 50
        assert [tuple(p) for p in cmap.links.tolist()] == links
        assert cmap.weights.tolist() == weights  # exactly: the same floats, not approximately
        assert cmap.counts.tolist() == counts
        assert cmap.links.dtype == np.int64 and cmap.weights.dtype == np.float64


def test_the_association_is_pythons_exact_division_past_what_floats_hold_exactly():
    counts = np.array([3, 7, 2**40], dtype=np.int64)
    first, second = np.array([2.0**30, 11.0, 3.0]), np.array([2.0**30 + 1, 13.0, 5.0])
    total = 2**20
    expected = [c * 2 * total / (int(a) * int(b)) for c, a, b in zip(counts.tolist(), first.tolist(), second.tolist())]
    assert _association(counts, total, first, second).tolist() == expected  # the products pass 2**53: Python's path
    small = _association(counts[1:2], 9, first[1:2], second[1:2])
    assert small.tolist() == [7 * 2 * 9 / (11 * 13)]


def test_a_map_made_by_hand_from_tuples_is_held_as_arrays_and_compared_by_value():
    cmap = ConceptMap(("a", "b", "c"), ((0, 1), (1, 2)), (1.0, 2.0), (3, 0))
    assert cmap.links.shape == (2, 2) and cmap.weights.tolist() == [1.0, 2.0] and cmap.counts.tolist() == [3, 0]
    assert cmap == ConceptMap(("a", "b", "c"), np.array([[0, 1], [1, 2]]), [1.0, 2.0], [3, 0])
    assert cmap != ConceptMap(("a", "b", "c"), ((0, 1), (1, 2)), (1.0, 2.5), (3, 0))
    empty = ConceptMap(("a",), (), (), ())
    assert empty.links.shape == (0, 2) and empty.igraph().ecount() == 0
    with pytest.raises(ValueError, match="differ in number"):
        ConceptMap(("a", "b"), ((0, 1),), (), (1,))


def test_igraph_takes_the_links_in_chunks_in_order_and_between_sums_as_a_loop_does():
    cmap = concept_map(random_graph(4), min_concepts=1000)
    g = cmap.igraph(chunk=7)
    assert g.vcount() == len(cmap.nodes) and g.get_edgelist() == [tuple(p) for p in cmap.links.tolist()]
    rng = random.Random(5)
    membership = [rng.randrange(4) for _ in cmap.nodes]
    looped: dict[tuple[int, int], float] = {}
    for (i, j), w in zip(cmap.links.tolist(), cmap.weights.tolist()):
        a, b = sorted((membership[i], membership[j]))
        if a != b:
            looped[(a, b)] = looped.get((a, b), 0.0) + w
    pairs, sums = cmap.between(membership, cmap.weights)
    assert pairs == sorted(looped) and sums == [looped[p] for p in pairs]  # the same floats: added in the same order
