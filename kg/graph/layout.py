"""The map's positions: concepts laid out by cluster and co-occurrence, papers among their
concepts, venues near their papers (``x``, ``y`` on the nodes and on ``G.graph["clusters"]``;
docs/model.md).

A layout in two levels: each cluster is a disc whose area grows with its concepts, the discs
placed by a Fruchterman-Reingold layout of the clusters (weighted by the association strength of
the co-occurrences between them) and pushed apart until none overlap; inside its disc, a
cluster's concepts are placed by a Fruchterman-Reingold layout of their own links (python-igraph,
its grid variant for large clusters); then the most important concepts are moved a little, in rank
order, so that their labels, as the page draws them, have room (`_room_for_labels`). A layout of all concepts at once mixes the clusters into one
disc on real co-occurrence graphs (docs/design.md has the figures). Every random choice comes
from one seeded generator and the input is read in sorted order, so the same graph gives the same
numbers however it was built.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

import networkx as nx

from kg.graph.clusters import add_clusters
from kg.graph.cooccurrence import SEED, ConceptMap, concept_map, seeded_igraph

EXTENT = 1000.0  # the concepts' largest |x| or |y|, in layout units
ITERATIONS = 500  # Fruchterman-Reingold iterations (python-igraph's default)
GAP = 0.05  # the space left between two cluster discs, a share of their radii
JITTER = 0.01  # how far a paper or venue may sit from the point it is placed at, a share of EXTENT
# Room for labels (`_room_for_labels`), as the map page draws them (kg/view/static/map.js, labels.js):
VIEW = (1200.0, 900.0)  # screen pixels the concepts are fitted into: a 1600x1000 page less its panel
ROOM = 0.35  # the share of that view the labels kept apart may cover, taken in rank order
FONT = (12.0, 22.0, 200)  # label font in pixels: 12 at one paper, 22 at 200 papers and more (map.js)
LABEL_CHARS = 36  # a label's characters on the map (map.js's CONCEPT_CHARS)
EM = 0.62  # a character's mean width in bold sans serif, a share of the font size
PAD = (6.0, 8.0)  # pixels kept free between two labels, across and down (twice labels.js's PAD, VPAD)
REACH = 60.0  # pixels: how far a concept may be moved to give its label room


def add_map(G: nx.Graph, *, seed: int = SEED) -> None:
    """Put the map on *G*, in place: the clusters (`kg.graph.clusters.add_clusters`) and the
    positions of concepts, papers, venues and cluster centres."""
    cmap = concept_map(G)
    membership = add_clusters(G, cmap, seed=seed)
    add_layout(G, cmap, membership, seed=seed)


def map_positions(G: nx.Graph) -> tuple[dict[str, tuple[float, float]], list[tuple[float, float]]]:
    """The positions `add_layout` put on *G*: each placed node's (x, y), and each of
    ``G.graph["clusters"]``'s in order; `put_positions` puts them on a copy of *G* made before
    the layout (a build lays the map out in the process that writes the views, beside the RDF)."""
    nodes = {n: (d["x"], d["y"]) for n, d in G.nodes(data=True) if "x" in d}
    return nodes, [(c["x"], c["y"]) for c in G.graph.get("clusters", [])]


def put_positions(G: nx.Graph, positions: tuple[dict[str, tuple[float, float]], list[tuple[float, float]]]) -> None:
    """Put the positions of `map_positions` on *G*, as `add_layout` would have."""
    nodes, clusters = positions
    for node, (x, y) in nodes.items():
        G.nodes[node]["x"], G.nodes[node]["y"] = x, y
    for cluster, (x, y) in zip(G.graph.get("clusters", []), clusters):
        cluster["x"], cluster["y"] = x, y


def add_layout(G: nx.Graph, cmap: ConceptMap, membership: Sequence[int], *, seed: int = SEED) -> None:
    """Set ``x`` and ``y`` (rounded to 2 decimals) on the concepts of *cmap* (each in its
    *membership* community), on every paper and venue of *G*, and on each of
    ``G.graph["clusters"]`` (the mean of its concepts' positions, weighted by their papers)."""
    positions = concept_positions(cmap, membership, seed=seed)
    nodes = [G.nodes[node] for node in cmap.nodes]
    labels = [str(d.get("label") or n) for d, n in zip(nodes, cmap.nodes)]
    papers = [int(d.get("papers") or 0) for d in nodes]
    ranks = [(bool(d.get("generic")), -p, label.lower(), n) for d, p, label, n in zip(nodes, papers, labels, cmap.nodes)]
    positions = _room_for_labels(positions, papers, labels, ranks)
    placed = dict(zip(cmap.nodes, positions))
    for node, (x, y) in placed.items():
        G.nodes[node]["x"], G.nodes[node]["y"] = round(x, 2), round(y, 2)
    papers = _paper_positions(G, placed)
    for node, (x, y) in papers.items():
        G.nodes[node]["x"], G.nodes[node]["y"] = round(x, 2), round(y, 2)
    for node, (x, y) in _venue_positions(G, papers).items():
        G.nodes[node]["x"], G.nodes[node]["y"] = round(x, 2), round(y, 2)
    members: dict[int, list[tuple[tuple[float, float], int]]] = {}
    for node, m in zip(cmap.nodes, membership):
        members.setdefault(m + 1, []).append((placed[node], G.nodes[node].get("papers", 1) or 1))
    for cluster in G.graph.get("clusters", []):
        found = members[cluster["id"]]
        weight = sum(w for _, w in found)
        cluster["x"] = round(sum(p[0] * w for p, w in found) / weight, 2)
        cluster["y"] = round(sum(p[1] * w for p, w in found) / weight, 2)


def concept_positions(cmap: ConceptMap, membership: Sequence[int], *, seed: int = SEED,
                      iterations: int = ITERATIONS) -> list[tuple[float, float]]:
    """The position of each concept of *cmap* (in its order), each *membership* community in a
    disc of its own; centred, turned so that the map is widest along x, and scaled so that the
    largest coordinate is `EXTENT`."""
    import numpy as np

    n = len(cmap.nodes)
    if n <= 1:
        return [(0.0, 0.0)] * n
    membership = np.asarray(membership)
    sizes = np.bincount(membership)
    radii = np.sqrt(sizes)
    links, weights = cmap.links, cmap.weights
    inside = membership[links[:, 0]] == membership[links[:, 1]]
    links, weights = links[inside], weights[inside]
    by_cluster = np.argsort(membership[links[:, 0]], kind="stable")  # each cluster's links, in cmap's order
    links, weights = links[by_cluster], weights[by_cluster]
    bounds = np.searchsorted(membership[links[:, 0]], np.arange(len(sizes) + 1))
    local = np.zeros(n, dtype=np.int64)  # a concept's place among its cluster's members
    with seeded_igraph(seed):
        centres = _separated(_cluster_centres(cmap, membership, iterations), radii)
        xy = np.zeros((n, 2))
        for k in range(len(sizes)):
            members = np.flatnonzero(membership == k)
            local[members] = np.arange(len(members))
            own = slice(bounds[k], bounds[k + 1])
            xy[members] = centres[k] + _disc(local[links[own]], weights[own], len(members), radii[k], iterations)
    return _normalized(xy)


def _cluster_centres(cmap: ConceptMap, membership, iterations: int):
    """A Fruchterman-Reingold layout of the communities, linked by the association strength of
    the co-occurrences between them (python-igraph, from its seeded generator)."""
    import igraph as ig
    import numpy as np

    k = int(membership.max()) + 1
    if k == 1:
        return np.zeros((1, 2))
    between = dict(zip(*cmap.between(membership, np.maximum(cmap.counts, 1))))  # a broader link without papers: 1
    strength = [0.0] * k
    for (a, b), c in between.items():
        strength[a] += c
        strength[b] += c
    total = sum(between.values())
    pairs = sorted(between)
    weights = [between[p] * 2 * total / (strength[p[0]] * strength[p[1]]) for p in pairs]
    layout = ig.Graph(n=k, edges=pairs).layout_fruchterman_reingold(weights=weights or None, niter=iterations * 4,
                                                                    grid="nogrid")
    return np.array(layout.coords, dtype=float)


def _separated(centres, radii, *, steps: int = 500):
    """*centres* scaled so that a cluster about touches its nearest neighbour, then drawn in
    towards their middle and pushed apart, a step at a time, until no two discs of *radii*
    overlap (with `GAP`): the smaller of two overlapping discs moves more."""
    import numpy as np

    centres = centres - centres.mean(axis=0)
    if len(centres) == 1:
        return centres
    need = (radii[:, None] + radii[None, :]) * (1 + GAP)
    np.fill_diagonal(need, 0.0)
    distance = np.sqrt(((centres[:, None] - centres[None, :]) ** 2).sum(-1))
    np.fill_diagonal(distance, np.inf)
    distance[distance == 0] = 1e-9
    centres = centres * float(np.median((need / distance).max(axis=1)))
    mass = radii ** 2
    share = mass[None, :] / (mass[:, None] + mass[None, :])  # of an overlap, the part the row's disc moves
    spread = _spread(len(centres))
    for step in range(2 * steps):
        if step < steps:  # drawn in, so the discs end packed; then only pushed apart
            centres = (centres - centres.mean(axis=0)) * 0.99
        apart = centres[:, None] - centres[None, :]
        distance = np.sqrt((apart ** 2).sum(-1))
        np.fill_diagonal(distance, np.inf)
        overlap = np.maximum(need - distance, 0.0)
        if not overlap.any():
            if step >= steps:
                break
            continue
        direction = np.where(distance[..., None] > 1e-9, apart / np.maximum(distance, 1e-9)[..., None], spread)
        centres = centres + (direction * (overlap * share)[..., None]).sum(axis=1)
    return centres


def _spread(n: int):
    """Fixed directions for discs that sit exactly on each other: (i, j) -> unit vector."""
    import numpy as np

    angle = np.subtract.outer(np.arange(n), np.arange(n)) * 2.399963229728653  # the golden angle
    return np.stack([np.cos(angle), np.sin(angle)], axis=-1)


def _disc(links, weights, n: int, radius: float, iterations: int):
    """The positions of *n* concepts around (0, 0): a Fruchterman-Reingold layout of their
    *links* (pairs of indices from 0 to n - 1) with their *weights*, scaled so that 95 % lie
    within *radius*, the others drawn in to just outside it."""
    import igraph as ig
    import numpy as np

    if n == 1:
        return np.zeros((1, 2))
    layout = ig.Graph(n=n, edges=links.tolist()).layout_fruchterman_reingold(
        weights=weights.tolist() or None, niter=iterations, grid="auto")
    xy = np.array(layout.coords, dtype=float)
    xy -= np.median(xy, axis=0)
    r = np.sqrt((xy ** 2).sum(axis=1))
    scale = float(np.percentile(r, 95))
    if scale <= 0:
        return np.zeros_like(xy)
    xy *= radius / scale
    r = r * (radius / scale)
    far = r > radius
    xy[far] *= (radius * (1 + 0.1 * np.tanh(r[far] / radius - 1)) / r[far])[:, None]
    return xy


def _normalized(xy) -> list[tuple[float, float]]:
    """*xy* centred, turned so that its main axis is x (the axes' signs fixed by the third
    moment), scaled so that the largest |coordinate| is `EXTENT`."""
    import numpy as np

    xy = xy - xy.mean(axis=0)
    _, vectors = np.linalg.eigh(xy.T @ xy)
    xy = xy @ vectors[:, ::-1]  # the axis of most spread first
    signs = np.where((xy ** 3).sum(axis=0) < 0, -1.0, 1.0)
    xy = xy * signs
    largest = float(np.abs(xy).max())
    if largest > 0:
        xy = xy * (EXTENT / largest)
    return [(float(x), float(y)) for x, y in xy]


def _label_box(label: str, papers: int) -> tuple[float, float]:
    """The width and height in screen pixels of a concept's label as the map page draws it."""
    t = min(1.0, math.log(max(papers, 1)) / math.log(FONT[2]))
    size = round(FONT[0] + (FONT[1] - FONT[0]) * t)
    chars = len(label) if len(label) <= LABEL_CHARS else LABEL_CHARS + 1
    return chars * size * EM, size * 1.2


def _room_for_labels(positions, papers: Sequence[int], labels: Sequence[str], ranks: Sequence[tuple]):
    """*positions* with room for the labels of the most important concepts: in the order of
    *ranks* (the page's, `kg.view.mapdata.rank_key`: by papers, then label and id), each of the
    labels that together cover `ROOM` of the `VIEW` is moved to the nearest place, at most
    `REACH` pixels away and inside the map's box, where its box centred on it overlaps none of
    those before it (one with no such place stays); then the map is scaled so that its largest
    |coordinate| is `EXTENT` again. The page places labels greedily in the same order, so a hub
    no longer hides the hubs laid out beside it."""
    import numpy as np

    xy = np.array(positions, dtype=float).reshape(-1, 2)
    if len(xy) < 2:
        return positions
    low, high = xy.min(axis=0), xy.max(axis=0)
    scale = min(VIEW[0] / max(high[0] - low[0], 1e-9), VIEW[1] / max(high[1] - low[1], 1e-9))  # pixels per unit
    budget, boxes = ROOM * VIEW[0] * VIEW[1], np.zeros((0, 4))  # centre x, y and half sizes of the boxes kept
    for i in sorted(range(len(xy)), key=ranks.__getitem__):
        w, h = _label_box(labels[i], papers[i])
        budget -= w * h
        if budget < 0:
            break
        half = np.array([w + PAD[0], h + PAD[1]]) / 2 / scale
        at = _free_place(xy[i], half, boxes, reach=REACH / scale, bounds=(low, high))
        if at is not None:
            xy[i] = at
            boxes = np.vstack([boxes, [*at, *half]])
    largest = float(np.abs(xy).max())
    xy = xy * (EXTENT / largest) if largest > 0 else xy
    return [(float(x), float(y)) for x, y in xy]


def _free_place(at, half, boxes, *, reach: float, bounds):
    """The nearest point to *at*, within *reach* and *bounds* (low and high corners), where a box
    of *half* sizes centred there overlaps none of *boxes* (rows of centre x, y, half sizes);
    None if there is none. The nearest free point has each coordinate its own or at the edge of
    a box it touches, so those are the candidates."""
    import numpy as np

    near = boxes[(np.abs(boxes[:, :2] - at) < boxes[:, 2:] + half + reach).all(axis=1)]
    if not len(near):
        return at
    gap = near[:, 2:] + half
    xs = np.concatenate([[at[0]], near[:, 0] - gap[:, 0], near[:, 0] + gap[:, 0]])
    ys = np.concatenate([[at[1]], near[:, 1] - gap[:, 1], near[:, 1] + gap[:, 1]])
    points = np.stack(np.meshgrid(xs, ys, indexing="ij"), axis=-1).reshape(-1, 2)
    distance = np.sqrt(((points - at) ** 2).sum(axis=1))
    inside = (distance <= reach) & (points >= bounds[0]).all(axis=1) & (points <= bounds[1]).all(axis=1)
    points, distance = points[inside], distance[inside]
    free = ~(np.abs(points[:, None] - near[None, :, :2]) < gap[None] - 1e-9).all(axis=2).any(axis=1)
    if not free.any():
        return None
    return points[free][np.argmin(distance[free])]


def _offset(node: str, radius: float) -> tuple[float, float]:
    """A fixed small displacement of *node* within *radius* (from a hash of its id), so that
    nodes placed at one point do not sit on each other."""
    h = hashlib.sha256(node.encode("utf-8")).digest()
    angle = int.from_bytes(h[:4], "big") / 2**32 * 2 * math.pi
    r = radius * math.sqrt(int.from_bytes(h[4:8], "big") / 2**32)
    return r * math.cos(angle), r * math.sin(angle)


def _paper_positions(G: nx.Graph, placed: dict[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
    """Each paper at the mean of the positions of its placed concepts in its dominant cluster
    (weighted by 1 / rank), so that it lies in its cluster's region, moved a little by `_offset`;
    the papers with none on a ring around the map, in id order."""
    out, unplaced = {}, []
    jitter = EXTENT * JITTER
    nodes, adjacency = dict(G.nodes(data=True)), dict(G.adjacency())  # plain dicts, not networkx's views
    for paper in sorted(n for n, d in nodes.items() if d.get("kind") == "paper"):
        cluster = nodes[paper].get("cluster")
        found = [(placed[c], 1.0 / max(int(e.get("rank", 1)), 1)) for c, e in sorted(adjacency[paper].items())
                 if e.get("kind") == "subject" and c in placed and nodes[c].get("cluster") == cluster]  # summed in a fixed order
        if not found:
            unplaced.append(paper)
            continue
        weight = sum(w for _, w in found)
        dx, dy = _offset(paper, jitter)
        out[paper] = (sum(p[0] * w for p, w in found) / weight + dx, sum(p[1] * w for p, w in found) / weight + dy)
    ring = 1.1 * (EXTENT if placed else EXTENT / 2)
    for k, paper in enumerate(unplaced):
        angle = 2 * math.pi * k / len(unplaced)
        out[paper] = (ring * math.cos(angle), ring * math.sin(angle))
    return out


def _venue_positions(G: nx.Graph, papers: dict[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
    """Each venue at the mean position of its papers, moved a little by `_offset`."""
    out = {}
    for venue in sorted(n for n, d in G.nodes(data=True) if d.get("kind") == "venue"):
        found = [papers[p] for p, e in sorted(G.adj[venue].items()) if e.get("kind") == "venue" and p in papers]
        dx, dy = _offset(venue, EXTENT * JITTER * 3)
        if found:
            out[venue] = (sum(p[0] for p in found) / len(found) + dx, sum(p[1] for p in found) / len(found) + dy)
        else:
            out[venue] = (dx, dy)
    return out
