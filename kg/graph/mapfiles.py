"""The map in files other tools open: ``graph.gexf`` (Gephi and any GEXF reader, written by
networkx) and ``map.json`` (VOSviewer Online's JSON map format). docs/model.md lists their fields.
"""

from __future__ import annotations

import io
import json
import math
from collections import defaultdict

import networkx as nx

from kg.text.chars import utf8, xml_text

VOSVIEWER_MAX_CLUSTER = 1000  # VOSviewer numbers clusters from 1 to 1000
_PALETTE = ((31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189), (140, 86, 75),
            (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207))  # a colour per cluster, in turn


def map_graph(G: nx.Graph) -> nx.Graph:
    """The map as a graph of its own (what `write_gexf` writes): the placed concepts, the papers
    and the venues with plain attributes (``kind``, ``label``, ``cluster``, ``papers``, ``year``,
    ...) and a ``viz`` position, colour and size; the co-occurrence and broader links among the
    placed concepts (``weight``: papers sharing both) and the papers' links to them and to their
    venues. Nodes and edges in sorted order."""
    placed = _placed(G)
    H = nx.Graph()
    H.add_nodes_from(_map_nodes(G, placed))
    H.add_edges_from(_map_edges(G, placed))
    return H


_MAP_LINKS = ("cooccurs", "subject", "venue")  # the kinds of G's edges that are the map's links


def _placed(G: nx.Graph) -> set[str]:
    return {n for n, d in G.nodes(data=True) if "x" in d}


def _map_nodes(G: nx.Graph, placed: set[str]):
    """(node, attributes) of `map_graph`, by node id; ids and text as XML can hold them (`xml_text`)."""
    for n in sorted(placed):
        d = G.nodes[n]
        attrs = {"kind": d["kind"], "label": xml_text(str(d.get("label") or n))}
        if d.get("cluster") is not None:
            attrs["cluster"] = int(d["cluster"])
        if d["kind"] == "concept":
            attrs["papers"] = int(d.get("papers", 0))
        elif d["kind"] == "paper":
            if d.get("year") is not None:
                attrs["year"] = int(d["year"])
            if d.get("venue"):
                attrs["venue"] = xml_text(str(d["venue"]))
        size = 1.0 + math.sqrt(attrs.get("papers", 1))
        r, g, b = _PALETTE[(attrs["cluster"] - 1) % len(_PALETTE)] if "cluster" in attrs else (170, 170, 170)
        attrs["viz"] = {"position": {"x": float(d["x"]), "y": float(d["y"]), "z": 0.0}, "size": size,
                        "color": {"r": r, "g": g, "b": b, "a": 1.0}}
        yield xml_text(n), attrs


def _map_edges(G: nx.Graph, placed: set[str]):
    """(u, v, attributes) of `map_graph`, each link once: G's links among the placed nodes, then
    each placed concept's broader concepts that are placed and not linked to it already; the
    node ids as `_map_nodes` gives them."""
    adj = G.adj
    for u in sorted(placed):
        for v, e in sorted(adj[u].items()):
            if v in placed and u < v and e.get("kind") in _MAP_LINKS:
                yield xml_text(u), xml_text(v), {"kind": e["kind"], "weight": float(e.get("count", 1))}
    seen: set[tuple[str, str]] = set()
    for u in sorted(placed):
        for b in G.nodes[u].get("broader", []):
            pair = (u, b) if u < b else (b, u)
            if b not in placed or pair in seen or (u != b and adj[u].get(b, {}).get("kind") in _MAP_LINKS):
                continue
            seen.add(pair)
            yield xml_text(u), xml_text(b), {"kind": "broader", "weight": 1.0}


_GEXF_BLOCK = 5000  # nodes or edges made into XML elements at a time


def write_gexf(G: nx.Graph, f) -> None:
    """Write `map_graph` of *G* as GEXF 1.2 to the binary file *f*, with networkx's GEXF writer
    a block of nodes or edges at a time: its `write_gexf` makes one XML element tree of the
    whole file first (at 100,000 papers a 584 MB file, several GiB as elements). The blocks
    go to a temporary file, since the attribute declarations that open the file are known at
    the end. Text XML 1.0 forbids (a control character in a title) is left out (`_map_nodes`)."""
    import tempfile
    from itertools import islice
    from xml.etree.ElementTree import Element, ElementTree, tostring

    from networkx.readwrite.gexf import GEXFWriter

    writer = GEXFWriter(encoding="utf-8", prettyprint=False)
    writer.graph_element = graph = Element("graph", defaultedgetype="undirected", mode="static", name="")
    placed = _placed(G)

    def elements(items, add) -> None:
        items = iter(items)
        while block := list(islice(items, _GEXF_BLOCK)):
            holder = Element("holder")
            add(block, holder)
            text = tostring(holder[0], encoding="unicode")  # <nodes xmlns:viz="…">…</nodes>
            body.write(text[text.index(">") + 1:text.rindex("</")].encode("utf-8"))

    def add_nodes(block, holder) -> None:
        H = nx.Graph()
        H.add_nodes_from(block)
        writer.add_nodes(H, holder)

    def add_edges(block, holder) -> None:
        H = nx.Graph()
        H.add_edges_from(block)
        writer.add_edges(H, holder)

    with tempfile.TemporaryFile() as body:
        elements(_map_nodes(G, placed), add_nodes)
        nodes_end = body.tell()
        elements(_map_edges(G, placed), add_edges)
        edges_end = body.tell()
        writer.xml.set("xmlns:viz", writer.NS_VIZ)
        writer.xml.append(graph)
        graph.append(Element("nodes"))
        head = io.BytesIO()
        ElementTree(writer.xml).write(head, encoding="utf-8", xml_declaration=True)
        text = head.getvalue()
        f.write(text[:text.rindex(b"<nodes />")] + b"<nodes>")
        body.seek(0)
        _copy(body, f, nodes_end)
        f.write(b"</nodes><edges>")
        _copy(body, f, edges_end - nodes_end)
        f.write(b"</edges></graph></gexf>")


def _copy(src, dst, n: int, size: int = 1 << 20) -> None:
    """Copy *n* bytes from *src* to *dst*."""
    while n > 0:
        chunk = src.read(min(size, n))
        dst.write(chunk)
        n -= len(chunk)


def vosviewer_map(G: nx.Graph, *, title: str = "kg") -> dict:
    """The map of *G* in VOSviewer Online's JSON format: ``{"network": {"items", "links",
    "clusters"}, "config", "info"}``. Items are the placed concepts (``id`` their node id, ``label``,
    ``x``, ``y`` with y upwards as VOSviewer draws it, ``cluster`` when it has one of at most 1,000, ``weights``
    Links / Total link strength / Occurrences, ``scores`` Avg. pub. year of their papers (null
    when none has a year)); links are their co-occurrences (``strength``: papers sharing both)."""
    items, links = [], []
    concepts = sorted(n for n, d in G.nodes(data=True) if d.get("kind") == "concept" and "x" in d)
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
        if d.get("cluster") is not None and d["cluster"] <= VOSVIEWER_MAX_CLUSTER:
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
    """Write `vosviewer_map` of *G* to the binary file *f* (UTF-8 JSON, one item or link a line;
    a lone surrogate as U+FFFD: `kg.text.chars.utf8`)."""
    data = vosviewer_map(G, title=title)
    network = data.pop("network")
    head = json.dumps(data, ensure_ascii=False, sort_keys=True)[:-1]
    f.write(utf8(f'{head}, "network": {{\n'))
    for i, key in enumerate(("clusters", "items", "links")):
        rows = ",\n".join(json.dumps(row, ensure_ascii=False, sort_keys=True) for row in network[key])
        f.write(utf8(f'"{key}": [\n{rows}\n]{"," if i < 2 else ""}\n'))
    f.write(b"}}\n")
