"""``graph.json``: the graph as networkx node-link JSON, written and read back; above
`FULL_GRAPH_MAX_PAPERS` papers, the projection the map draws (`graph_json_view`).
"""

from __future__ import annotations

import json
from operator import itemgetter
from pathlib import Path

import networkx as nx

from kg.text.chars import utf8



def graph_to_json(G: nx.Graph) -> str:
    """Node-link JSON, nodes and links in a fixed order, one node or link a line."""
    import io

    buffer = io.BytesIO()
    write_graph_json(G, buffer)
    return buffer.getvalue().decode("utf-8")


# Up to this many papers graph.json is the whole graph; above it, `map_projection`. The whole graph's
# graph.json grows ~8 kB a paper and loads in networkx at ~0.4 ms and ~60 kB a paper (10,119 ML
# abstracts: 79 MB, 3.7 s, 0.62 GiB; 200,000: 1.6 GB, 6.6 GiB): at 50,000 about 400 MB, 20 s and
# 3 GiB, what a laptop's Python session still holds; past it the store answers what the papers'
# nodes would (`kg query`, `kg serve`), and graph.json keeps what a network tool can lay out.
FULL_GRAPH_MAX_PAPERS = 50_000


def graph_json_view(G: nx.Graph, *, max_papers: int | None = None) -> nx.Graph:
    """What graph.json holds: *G* itself up to *max_papers* papers (`FULL_GRAPH_MAX_PAPERS`),
    its `map_projection` above."""
    limit = FULL_GRAPH_MAX_PAPERS if max_papers is None else max_papers
    papers = sum(1 for _, kind in G.nodes(data="kind") if kind == "paper")
    return G if papers <= limit else map_projection(G, limit=limit)


def map_projection(G: nx.Graph, *, limit: int = FULL_GRAPH_MAX_PAPERS) -> nx.Graph:
    """The part of *G* the map draws (`kg.graph.cooccurrence.concept_map`'s concepts: those two or
    more papers share) with every attribute they have in *G* and the links among them
    (co-occurrences), and each venue with its number of ``papers`` in place of its links; no paper.
    ``graph["projection"]`` says so: the whole graph's papers, concepts and links, and *limit*.
    A concept's ``broader`` may name a concept outside the projection, as in *G*. A projection is its own."""
    from kg.graph.build import EdgeData, add_edges_as_they_are
    from kg.graph.cooccurrence import map_concepts

    if "projection" in G.graph:
        return G

    ordered = map_concepts(G)
    kept = set(ordered)
    P = nx.Graph()
    P.graph.update(G.graph)
    kinds = dict(G.nodes(data="kind"))
    venue_papers: dict[str, int] = {}
    for n, kind in kinds.items():
        if kind == "paper":
            for v in G.adj[n]:
                if kinds.get(v) == "venue":
                    venue_papers[v] = venue_papers.get(v, 0) + 1
    P.graph["projection"] = {
        "papers": sum(1 for kind in kinds.values() if kind == "paper"),
        "concepts": sum(1 for kind in kinds.values() if kind == "concept"),
        "links": G.number_of_edges(),
        "full_graph_max_papers": limit,
    }
    for n in ordered:
        P.add_node(n, **G.nodes[n])
    for v in sorted(n for n, kind in kinds.items() if kind == "venue"):
        P.add_node(v, **G.nodes[v], papers=venue_papers.get(v, 0))
    # the links as `add_edge` adds them, in the same order, without a call each (millions at 200,000 abstracts); the
    # co-occurrences' shared read-only data (`EdgeData`) as it is, any other a copy of its own
    adj = dict(G.adjacency())  # plain dicts: networkx's views cost a call per item
    add_edges_as_they_are(P, ((u, v, e if type(e) is EdgeData else dict(e))
                              for u in ordered for v, e in adj[u].items() if v in kept and u < v))
    return P


_GRAPH_JSON = dict(ensure_ascii=False, sort_keys=True, separators=(", ", ": "))  # graph.json's encoder
_BLOCK = 8192  # nodes or links encoded and written at a time


def write_graph_json(G: nx.Graph, f) -> None:
    """Write `graph_to_json` of *G* (UTF-8) to the binary file *f*: what ``nx.node_link_data(G,
    edges="links")`` gives, nodes and links sorted, written a block at a time rather than copied
    whole first: the links are made in order (`_sorted_links`), not listed and sorted (a 10,000-paper
    graph has ~700,000 links; a list of them and its sort keys held ~150 bytes each). A lone
    surrogate in a string is written as U+FFFD (`kg.text.chars.utf8`): UTF-8 cannot hold it."""
    encode = json.JSONEncoder(**_GRAPH_JSON, check_circular=False).encode
    item = _item_encoder()

    def block(key: str, items, as_object) -> None:
        f.write(utf8(f"{encode(key)}: ["))
        sep = b"\n"
        for part in _blocks(items, _BLOCK):
            f.write(sep + utf8(",\n".join([item(as_object(x)) for x in part])))
            sep = b",\n"
        f.write(b"]" if sep == b"\n" else b"\n]")

    f.write(utf8(f"{{\n{encode('directed')}: {encode(G.is_directed())},\n{encode('graph')}: {encode(G.graph)},\n"))
    block("links", _sorted_links(G), lambda e: {**e[2], "source": e[0], "target": e[1]})
    f.write(utf8(f",\n{encode('multigraph')}: {encode(G.is_multigraph())},\n"))
    block("nodes", sorted(G.nodes(data=True), key=itemgetter(0)), lambda nd: {**nd[1], "id": nd[0]})
    f.write(b"\n}\n")


def _item_encoder():
    """The text of one node or link (a dict) as ``json.JSONEncoder(**_GRAPH_JSON).encode`` gives it:
    its C encoder made once and called for each (``encode`` makes one at each call: a third of the time
    that encoding a 10,000-paper graph's ~290,000 nodes and links took), or ``encode`` itself when
    this Python has no C encoder."""
    from json.encoder import c_make_encoder, encode_basestring

    encoder = json.JSONEncoder(**_GRAPH_JSON, check_circular=False)
    if c_make_encoder is None:  # a Python without the json C module
        return encoder.encode
    made = c_make_encoder(None, encoder.default, encode_basestring, None, encoder.key_separator, encoder.item_separator,
                          encoder.sort_keys, encoder.skipkeys, encoder.allow_nan)
    return lambda value: "".join(made(value, 0))


def _sorted_links(G: nx.Graph):
    """``sorted(G.edges(data=True))`` by (source, target), made a source at a time: networkx gives
    an edge of an undirected graph as (u, v) with u the endpoint added to the graph first (a
    self-loop once), so each node's links are those to itself and to nodes added after it."""
    if G.is_directed() or G.is_multigraph():
        yield from sorted(G.edges(data=True), key=lambda e: (e[0], e[1]))
        return
    order = {n: i for i, n in enumerate(G)}
    adj = dict(G.adjacency())  # plain dicts: networkx's views cost a call per item
    for u in sorted(order):
        i, nbrs = order[u], adj[u]
        for v in sorted([v for v in nbrs if order[v] >= i]):
            yield u, v, nbrs[v]


def _blocks(items, size: int):
    """*items* in lists of *size*."""
    from itertools import islice

    it = iter(items)
    while part := list(islice(it, size)):
        yield part


def load_graph(path: str | Path) -> nx.Graph:
    """The graph from a node-link ``graph.json`` written by `kg build` (a `map_projection`, with
    ``graph["projection"]``, when the build had more than `FULL_GRAPH_MAX_PAPERS` papers)."""
    from kg.errors import InputError

    from kg.text.files import load_json

    path = Path(path)
    if not path.exists() and not path.is_symlink():
        raise InputError(f"{path}: no such file; run `kg build` first or name a graph.json")
    if path.is_dir():
        raise InputError(f"{path}: a folder, not a graph.json")
    data = load_json(path, expected="a graph.json written by kg build")  # a regular file, once
    problem = _not_node_link(data)
    if problem:
        raise InputError(f"{path}: not a graph.json written by kg build ({problem})")
    try:
        return nx.node_link_graph(data, edges="links")
    except (KeyError, TypeError, ValueError, AttributeError, nx.NetworkXError) as e:
        raise InputError(f"{path}: not a graph.json written by kg build ({e})") from e


def _not_node_link(data) -> str | None:
    """What keeps *data* from being the node-link form `write_graph_json` writes, or None: an
    object with a list of nodes (each an object with an id and a kind) and of links (each an
    object with a source, a target and a kind)."""
    if not isinstance(data, dict):
        return f"a JSON {type(data).__name__}, not an object"
    for key, needed in (("nodes", ("id", "kind")), ("links", ("source", "target", "kind"))):
        items = data.get(key)
        if not isinstance(items, list):
            return f"no list of {key}"
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                return f"{key}[{i}] is not an object"
            missing = [k for k in needed if k not in item]
            if missing:
                return f"{key}[{i}] has no {', '.join(missing)}"
    return None
