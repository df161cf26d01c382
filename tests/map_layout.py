"""Map positions and clusters for test graphs, as docs/model.md's map attributes say (the
contract in /work/notes/MAP-CONTRACT.md), made here with networkx (spring layout, Louvain) so the
page can be tested before, and independently of, kg's own layout. Not kg's layout: a fixture.
"""

from __future__ import annotations

import math

import networkx as nx


def with_map(G: nx.Graph, *, seed: int = 1, only_shared: bool = False) -> nx.Graph:
    """*G* with ``x``/``y``/``cluster`` on its concepts (all of them, or with *only_shared* those
    of 2+ papers), papers and venues, and ``G.graph["clusters"]``; unchanged if it has them."""
    kinds = dict(G.nodes(data="kind"))
    concepts = [n for n, k in kinds.items() if k == "concept" and (not only_shared or (G.nodes[n].get("papers") or 0) >= 2)]
    if not concepts or any("x" in G.nodes[c] for c in concepts):
        return G
    H = nx.Graph()
    H.add_nodes_from(sorted(concepts))
    chosen = set(concepts)
    for u, v, d in G.edges(data=True):
        if d.get("kind") == "cooccurs" and u in chosen and v in chosen:
            H.add_edge(u, v, weight=float(d.get("count") or 1))
    for c in concepts:
        for b in G.nodes[c].get("broader") or []:
            if b in chosen:
                H.add_edge(c, b, weight=1.0)
    pos = _packed_layout(H, seed)
    parts = sorted(nx.community.louvain_communities(H, weight="weight", seed=seed), key=lambda p: (-len(p), min(p)))
    clusters = []
    for cid, part in enumerate(parts, 1):
        ranked = sorted(part, key=lambda c: (-(G.nodes[c].get("papers") or 0), c))
        for c in part:
            G.nodes[c]["cluster"] = cid
        xs, ys = [pos[c][0] for c in part], [pos[c][1] for c in part]
        clusters.append({"id": cid, "label": " / ".join(str(G.nodes[c]["label"]) for c in ranked[:3]),
                         "concepts": len(part), "papers": 0, "top": ranked[:5],
                         "x": round(sum(xs) / len(xs), 2), "y": round(sum(ys) / len(ys), 2)})
    for c in concepts:
        G.nodes[c]["x"], G.nodes[c]["y"] = round(float(pos[c][0]) * 10, 2), round(float(pos[c][1]) * 10, 2)
    for c in clusters:
        c["x"], c["y"] = round(c["x"] * 10, 2), round(c["y"] * 10, 2)
    _place_papers(G, kinds, chosen, clusters)
    G.graph["clusters"] = clusters
    return G


def _packed_layout(H: nx.Graph, seed: int) -> dict:
    """A spring layout of each connected component, scaled by the square root of its size and
    packed in rows, biggest first, so that small components do not push the big one into a corner."""
    parts = sorted((sorted(p) for p in nx.connected_components(H)), key=lambda p: (-len(p), p[0]))
    pos, x, y, row, width = {}, 0.0, 0.0, 0.0, 2 * math.sqrt(len(parts[0])) * 1.6 if parts else 1
    for part in parts:
        r = math.sqrt(len(part)) * 0.5 + 0.5
        if x + 2 * r > width and x > 0:
            x, y, row = 0.0, y - row, 0.0
        sub = nx.spring_layout(H.subgraph(part), seed=seed, weight="weight", iterations=80) if len(part) > 1 else {part[0]: (0.0, 0.0)}
        for n, (a, b) in sub.items():
            pos[n] = (x + r + a * r, y - r + b * r)
        x, row = x + 2 * r + 0.3, max(row, 2 * r + 0.3)
    return pos


def _place_papers(G: nx.Graph, kinds, chosen: set, clusters: list[dict]) -> None:
    venue_papers: dict = {}
    for i, p in enumerate(sorted(n for n, k in kinds.items() if k == "paper")):
        mine = [m for m in G[p] if m in chosen]
        venue = [m for m in G[p] if kinds.get(m) == "venue"]
        if not mine:
            continue
        jitter = ((i * 7919) % 97 / 97 - 0.5) * 2, ((i * 104729) % 89 / 89 - 0.5) * 2
        G.nodes[p]["x"] = round(sum(G.nodes[c]["x"] for c in mine) / len(mine) + jitter[0], 2)
        G.nodes[p]["y"] = round(sum(G.nodes[c]["y"] for c in mine) / len(mine) + jitter[1], 2)
        counts: dict = {}
        for c in mine:
            counts[G.nodes[c]["cluster"]] = counts.get(G.nodes[c]["cluster"], 0) + 1
        G.nodes[p]["cluster"] = min(counts, key=lambda k: (-counts[k], k))
        for v in venue:
            venue_papers.setdefault(v, []).append(p)
    for c in clusters:
        c["papers"] = sum(1 for n, k in kinds.items() if k == "paper" and G.nodes[n].get("cluster") == c["id"])
    for v, papers in venue_papers.items():
        G.nodes[v]["x"] = round(sum(G.nodes[p]["x"] for p in papers) / len(papers), 2)
        G.nodes[v]["y"] = round(sum(G.nodes[p]["y"] for p in papers) / len(papers), 2)
