"""The map in files other tools open: ``graph.gexf`` (Gephi and any GEXF reader; the XML text
made here, byte for byte what networkx's GEXF writer made of it) and ``map.json`` (VOSviewer
Online's JSON map format). docs/model.md lists their fields.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict

import networkx as nx

from kg.graph.stats import edges_once
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
    adj = dict(G.adjacency())  # plain dicts: networkx's views cost a call per item
    ids = {n: xml_text(n) for n in placed}  # each node's once (not at each of its links: millions at 200,000 abstracts)
    for u in sorted(placed):
        for v, e in sorted(adj[u].items()):
            if v in placed and u < v and e.get("kind") in _MAP_LINKS:
                yield ids[u], ids[v], {"kind": e["kind"], "weight": float(e.get("count", 1))}
    seen: set[tuple[str, str]] = set()
    for u in sorted(placed):
        for b in G.nodes[u].get("broader", []):
            pair = (u, b) if u < b else (b, u)
            if b not in placed or pair in seen or (u != b and adj[u].get(b, {}).get("kind") in _MAP_LINKS):
                continue
            seen.add(pair)
            yield ids[u], ids[b], {"kind": "broader", "weight": 1.0}


_GEXF_BLOCK = 5000  # nodes or edges made into XML text at a time
_GEXF_TYPES = {str: "string", int: "long", float: "double", bool: "boolean"}  # networkx's names for them
_GEXF_FLOATS = {"inf": "INF", "-inf": "-INF", "nan": "NaN"}  # networkx writes these so in an attvalue
_NS_GEXF = "http://www.gexf.net/1.2draft"


def write_gexf(G: nx.Graph, f) -> None:
    """Write `map_graph` of *G* as GEXF 1.2 to the binary file *f*: XML text made with string
    formatting a block of nodes or edges at a time, byte for byte what networkx's GEXF writer
    wrote here before (its header, attribute ids, number formats, escaping and edge order), which
    made and serialized an element tree of each block, four times slower (6.1 s against 1.6 s at
    10,000 papers). The blocks go to a temporary file, since the attribute declarations that
    open the file are known at the end. Text XML 1.0 forbids (a control character in a title)
    is left out (`_map_nodes`)."""
    import tempfile
    from itertools import count

    placed = _placed(G)
    declared: dict[tuple[str, str], tuple[str, str]] = {}  # (class, title): (id, type), in networkx's order
    edge_ids = count()
    known: tuple[dict, dict] = ({}, {})  # the escaped ids and the attvalues of the edges met, for the next edges
    with tempfile.TemporaryFile() as body:
        _write_blocks(body, _map_nodes(G, placed), lambda block: _nodes_xml(_merged_nodes(block), declared))
        nodes_end = body.tell()
        _write_blocks(body, _map_edges(G, placed), lambda block: _edges_xml(_graph_edges(block), edge_ids, declared, known))
        edges_end = body.tell()
        f.write(_gexf_head(declared).encode("utf-8") + b"<nodes>")
        body.seek(0)
        _copy(body, f, nodes_end)
        f.write(b"</nodes><edges>")
        _copy(body, f, edges_end - nodes_end)
        f.write(b"</edges></graph></gexf>")


def _write_blocks(body, items, xml) -> None:
    """Write *xml* of each block of `_GEXF_BLOCK` *items* to the binary file *body* as UTF-8:
    the file's text made and held a block at a time."""
    from itertools import islice

    items = iter(items)
    while block := list(islice(items, _GEXF_BLOCK)):
        body.write(xml(block).encode("utf-8"))


def _merged_nodes(block) -> dict:
    """The (node, attributes) of *block* as a networkx graph of them holds them: one node per id,
    the attributes of a repeated id updated by the later ones (ids `xml_text` made the same)."""
    nodes: dict = {}
    for n, a in block:
        nodes[n] = {**nodes[n], **a} if n in nodes else a
    return nodes


def _graph_edges(block):
    """The (u, v, attributes) of *block* in the order and direction a networkx graph of them
    gives them (its nodes as first met, each one's new neighbours), how the GEXF writer wrote
    them; a repeated pair once, its attributes updated by the later ones."""
    adj: dict = {}
    for u, v, d in block:
        nbrs = adj.setdefault(u, {})
        adj.setdefault(v, {})
        e = nbrs.get(v)
        e = {**e, **d} if e is not None else d
        nbrs[v] = adj[v][u] = e
    return edges_once(adj.items())


def _nodes_xml(nodes: dict, declared: dict) -> str:
    """The ``<node>`` elements of *nodes* (id: `_map_nodes` attributes), each with its viz
    colour, size and position and the attvalues of the rest but its label."""
    out = []
    for n, a in nodes.items():
        viz = a["viz"]
        c, p = viz["color"], viz["position"]
        values = _attvalues("node", a, declared)
        out.append(f'<node id="{_escape(n)}" label="{_escape(a["label"])}">'
                   f'<viz:color r="{c["r"]}" g="{c["g"]}" b="{c["b"]}" a="{c["a"]}" />'
                   f'<viz:size value="{viz["size"]}" />'
                   f'<viz:position x="{p["x"]}" y="{p["y"]}" z="{p["z"]}" />{values}</node>')
    return "".join(out)


def _edges_xml(edges, ids, declared: dict, known: tuple[dict, dict]) -> str:
    """The ``<edge>`` elements of *edges* (u, v, `_map_edges` attributes), each numbered by the
    next of *ids*, with its weight and the attvalues of the rest. *known* keeps what the edges of
    earlier blocks gave: each node's escaped id, and the attvalues of each kind of an edge whose only
    other datum is its weight (a node has many links, and the edges have a few kinds)."""
    escaped, kinds = known
    out = []
    for (u, v, d), i in zip(edges, ids):
        source, target = escaped.get(u), escaped.get(v)
        if source is None:
            source = escaped[u] = _escape(u)
        if target is None:
            target = escaped[v] = _escape(v)
        if len(d) == 2 and "weight" in d and type(d.get("kind")) is str:
            values = kinds.get(d["kind"])
            if values is None:
                values = kinds[d["kind"]] = _attvalues("edge", d, declared)
        else:
            values = _attvalues("edge", d, declared)
        out.append(f'<edge source="{source}" target="{target}" id="{i}" weight="{d["weight"]}">{values}</edge>')
    return "".join(out)


_GEXF_OWN = {"node": ("label", "viz"), "edge": ("weight",)}  # data GEXF holds elsewhere than in attvalues


def _attvalues(kind: str, data: dict, declared: dict) -> str:
    """The ``<attvalues>`` element of a node's or edge's *data* but what GEXF holds elsewhere
    (`_GEXF_OWN`); a title met first is declared with the next id, as networkx numbers them."""
    own = _GEXF_OWN[kind]
    out = []
    for title, value in data.items():
        if title in own:
            continue
        key = (kind, title)
        if key not in declared:
            if type(value) not in _GEXF_TYPES:
                raise TypeError(f"attribute value type is not allowed: {type(value)}")
            declared[key] = (str(len(declared)), _GEXF_TYPES[type(value)])
        out.append(f'<attvalue for="{declared[key][0]}" value="{_gexf_value(value)}" />')
    return f"<attvalues>{''.join(out)}</attvalues>" if out else ""


def _gexf_value(value) -> str:
    """*value* as networkx writes an attvalue: booleans in lower case, infinite and NaN floats as
    INF, -INF and NaN, text XML-escaped."""
    if type(value) is str:
        return _escape(value)
    if type(value) is bool:
        return str(value).lower()
    text = str(value)
    return _GEXF_FLOATS.get(text, text) if type(value) is float else text


def _escape(text: str) -> str:
    """*text* as an XML attribute value, escaped as ElementTree escapes it: ``&<>"`` and the tab,
    LF and CR that would otherwise read back as spaces. Each replaced only where present: twice as fast
    as ``xml.sax.saxutils.escape`` on a label with none (a call per label, id and value of the file)."""
    for char, entity in _ATTRIBUTE_ENTITIES:
        if char in text:
            text = text.replace(char, entity)
    return text


_ATTRIBUTE_ENTITIES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;"), ("\r", "&#13;"), ("\n", "&#10;"),
                       ("\t", "&#09;"))  # "&" first: the others' entities start with it


def _gexf_head(declared: dict) -> str:
    """What opens the file up to ``<nodes>``: the XML declaration, the ``<gexf>`` element, the meta
    networkx writes (its name and version as creator, today's date) and the attribute declarations,
    the edges' first (networkx puts each class's ahead of the others as it meets it)."""
    import time

    head = (f"<?xml version='1.0' encoding='utf-8'?>\n"
            f'<gexf xmlns="{_NS_GEXF}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
            f'xsi:schemaLocation="{_NS_GEXF} {_NS_GEXF}/gexf.xsd" version="1.2" xmlns:viz="{_NS_GEXF}/viz">'
            f'<meta lastmodifieddate="{time.strftime("%Y-%m-%d")}"><creator>NetworkX {nx.__version__}</creator></meta>'
            '<graph defaultedgetype="undirected" mode="static" name="">')
    for kind in ("edge", "node"):
        attributes = "".join(f'<attribute id="{i}" title="{_escape(title)}" type="{t}" />'
                             for (k, title), (i, t) in declared.items() if k == kind)
        if attributes:
            head += f'<attributes mode="static" class="{kind}">{attributes}</attributes>'
    return head


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
    adj, nodes = dict(G.adjacency()), G.nodes  # plain dicts: networkx's views cost a call per item
    for u in concepts:
        for v, e in sorted(adj[u].items()):
            if v in on_map and u < v and e.get("kind") == "cooccurs":
                links.append({"source_id": u, "target_id": v, "strength": int(e["count"])})
                for n in (u, v):
                    degree[n] += 1
                    strength[n] += int(e["count"])
    for n in concepts:
        d = nodes[n]
        years = [nodes[p]["year"] for p, e in adj[n].items() if e.get("kind") == "subject" and nodes[p].get("year") is not None]
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
