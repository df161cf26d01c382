"""The map in files other tools open: ``graph.gexf`` (Gephi and any GEXF reader, written by
networkx) and ``map.json`` (VOSviewer Online's JSON map format). docs/model.md lists their fields.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict

import networkx as nx

VOSVIEWER_MAX_CLUSTER = 1000  # VOSviewer numbers clusters from 1 to 1000
_PALETTE = ((31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189), (140, 86, 75),
            (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207))  # a colour per cluster, in turn


def map_graph(G: nx.Graph) -> nx.Graph:
    """The map as a graph of its own, for `write_gexf`: the placed concepts, the papers and the
    venues with plain attributes (``kind``, ``label``, ``cluster``, ``papers``, ``year``, ...)
    and a ``viz`` position, colour and size; the co-occurrence and broader links among the
    placed concepts (``weight``: papers sharing both) and the papers' links to them and to their
    venues. Nodes and edges in sorted order."""
    H = nx.Graph()
    placed = {n for n, d in G.nodes(data=True) if "x" in d and (d.get("kind") != "concept" or "cluster" in d)}
    for n in sorted(placed):
        d = G.nodes[n]
        attrs = {"kind": d["kind"], "label": str(d.get("label") or n)}
        if d.get("cluster") is not None:
            attrs["cluster"] = int(d["cluster"])
        if d["kind"] == "concept":
            attrs["papers"] = int(d.get("papers", 0))
        elif d["kind"] == "paper":
            if d.get("year") is not None:
                attrs["year"] = int(d["year"])
            if d.get("venue"):
                attrs["venue"] = str(d["venue"])
        size = 1.0 + math.sqrt(attrs.get("papers", 1))
        r, g, b = _PALETTE[(attrs["cluster"] - 1) % len(_PALETTE)] if "cluster" in attrs else (170, 170, 170)
        attrs["viz"] = {"position": {"x": float(d["x"]), "y": float(d["y"]), "z": 0.0}, "size": size,
                        "color": {"r": r, "g": g, "b": b, "a": 1.0}}
        H.add_node(n, **attrs)
    for u in sorted(placed):
        for v, e in sorted(G[u].items()):
            if v in placed and u < v:
                kind = e.get("kind")
                if kind in ("cooccurs", "subject", "venue"):
                    H.add_edge(u, v, kind=kind, weight=float(e.get("count", 1)))
    for u in sorted(placed):
        for b in G.nodes[u].get("broader", []):
            if b in placed and not H.has_edge(u, b):
                H.add_edge(u, b, kind="broader", weight=1.0)
    return H


def write_gexf(G: nx.Graph, f) -> None:
    """Write `map_graph` of *G* as GEXF 1.2 (networkx's writer) to the binary file *f*."""
    nx.write_gexf(map_graph(G), f, encoding="utf-8", prettyprint=False)


def vosviewer_map(G: nx.Graph, *, title: str = "kg") -> dict:
    """The map of *G* in VOSviewer Online's JSON format: ``{"network": {"items", "links",
    "clusters"}, "config", "info"}``. Items are the placed concepts (``id`` their node id, ``label``,
    ``x``, ``y`` with y upwards as VOSviewer draws it, ``cluster`` when at most 1,000, ``weights``
    Links / Total link strength / Occurrences, ``scores`` Avg. pub. year of their papers (null
    when none has a year)); links are their co-occurrences (``strength``: papers sharing both)."""
    items, links = [], []
    concepts = sorted(n for n, d in G.nodes(data=True) if d.get("kind") == "concept" and "x" in d and "cluster" in d)
    on_map = set(concepts)
    degree: dict[str, int] = defaultdict(int)
    strength: dict[str, int] = defaultdict(int)
    for u in concepts:
        for v, e in sorted(G[u].items()):
            if v in on_map and u < v and e.get("kind") == "cooccurs":
                links.append({"source_id": u, "target_id": v, "strength": int(e["count"])})
                for n in (u, v):
                    degree[n] += 1
                    strength[n] += int(e["count"])
    for n in concepts:
        d = G.nodes[n]
        years = [G.nodes[p]["year"] for p, e in G[n].items() if e.get("kind") == "subject" and G.nodes[p].get("year") is not None]
        item = {"id": n, "label": d["label"], "x": d["x"], "y": -d["y"]}
        if d["cluster"] <= VOSVIEWER_MAX_CLUSTER:
            item["cluster"] = int(d["cluster"])
        item["weights"] = {"Links": degree[n], "Total link strength": strength[n], "Occurrences": int(d.get("papers", 0))}
        item["scores"] = {"Avg. pub. year": round(sum(years) / len(years), 2) if years else None}
        items.append(item)
    clusters = [{"cluster": c["id"], "label": c["label"]} for c in G.graph.get("clusters", []) if c["id"] <= VOSVIEWER_MAX_CLUSTER]
    return {
        "config": {"terminology": {"item": "concept", "items": "concepts", "link": "co-occurrence link",
                                   "links": "co-occurrence links"}},
        "info": {"title": title, "description": "A concept map made by kg: concepts that two or more papers share, "
                                                "laid out and clustered by their co-occurrences."},
        "network": {"items": items, "links": links, "clusters": clusters},
    }


def write_vosviewer_json(G: nx.Graph, f, *, title: str = "kg") -> None:
    """Write `vosviewer_map` of *G* to the binary file *f* (UTF-8 JSON, one item or link a line)."""
    data = vosviewer_map(G, title=title)
    network = data.pop("network")
    head = json.dumps(data, ensure_ascii=False, sort_keys=True)[:-1]
    f.write(f'{head}, "network": {{\n'.encode("utf-8"))
    for i, key in enumerate(("clusters", "items", "links")):
        rows = ",\n".join(json.dumps(row, ensure_ascii=False, sort_keys=True) for row in network[key])
        f.write(f'"{key}": [\n{rows}\n]{"," if i < 2 else ""}\n'.encode("utf-8"))
    f.write(b"}}\n")
