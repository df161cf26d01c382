"""``graph.json``: the graph as networkx node-link JSON, written and read back.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from itertools import compress
from operator import itemgetter
from pathlib import Path

import networkx as nx

from kg.graph.stats import _edges


def json_encoder(**options):
    """``json.JSONEncoder(**options).encode`` for many small objects: the same text, with the
    C encoder made once rather than at every call (most of the cost of encoding a small dict).
    No check for circular references (kg's outputs have none)."""
    encoder = json.JSONEncoder(**options, check_circular=False)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None or encoder.indent is not None:
        return encoder.encode
    quote = json.encoder.encode_basestring_ascii if encoder.ensure_ascii else json.encoder.encode_basestring
    iterencode = make(None, encoder.default, quote, None, encoder.key_separator, encoder.item_separator,
                      encoder.sort_keys, encoder.skipkeys, encoder.allow_nan)

    def encode(o) -> str:
        return quote(o) if isinstance(o, str) else "".join(iterencode(o, 0))

    return encode


def graph_to_json(G: nx.Graph) -> str:
    """Node-link JSON, nodes and links in a fixed order, one node or link a line."""
    import io

    buffer = io.BytesIO()
    write_graph_json(G, buffer)
    return buffer.getvalue().decode("utf-8")


def write_graph_json(G: nx.Graph, f) -> None:
    """Write `graph_to_json` of *G* (UTF-8) to the binary file *f*, some thousands of nodes or
    links at a time."""
    # What nx.node_link_data(G, edges="links") gives, written a block of nodes or links at a time
    # rather than copied whole first: a 10,000-paper graph has ~600,000 links, and their text at
    # once took over 1 GiB. Only the links' order is held (a tuple of three references each).
    encode = json_encoder(**_GRAPH_JSON)

    def block(key: str, texts: Iterable[list[str]]) -> None:
        f.write(f"{encode(key)}: ".encode("utf-8"))
        start = "[\n"
        for some in texts:
            f.write((start + ",\n".join(some)).encode("utf-8"))
            start = ",\n"
        f.write(b"[]" if start == "[\n" else b"\n]")

    links = list(_edges(G))
    links.sort()  # by (u, v): no two links have the same, so their data are never compared
    f.write(f"{{\n{encode('directed')}: {encode(G.is_directed())},\n{encode('graph')}: {encode(G.graph)},\n".encode("utf-8"))
    ids = {n: encode(n) for n in G}  # for the links' source and target
    block("links", (_json_objects(encode, data, {"source": u, "target": v}, ids) for u, v, data in _columns(links, 8192)))
    del links
    f.write(f",\n{encode('multigraph')}: {encode(G.is_multigraph())},\n".encode("utf-8"))
    nodes = sorted(G._node.items())
    block("nodes", (list(map(encode, [{**d, "id": n} for n, d in nodes[i:i + 8192]])) for i in range(0, len(nodes), 8192)))
    f.write(b"\n}\n")


_GRAPH_JSON = dict(ensure_ascii=False, sort_keys=True, separators=(", ", ": "))  # graph.json's encoder


def _columns(rows: Sequence[tuple], size: int):
    """The columns of each *size* rows in turn."""
    for start in range(0, len(rows), size):
        yield zip(*rows[start:start + size])


def _json_objects(encode, objects: Sequence[Mapping], extra: Mapping[str, Sequence], known: Mapping[object, str]) -> list[str]:
    """``encode({**o, **extra at o})`` of each object *o*, with *encode* the `_GRAPH_JSON` encoder,
    *extra* columns of values (one per object) and *known* their JSON texts: the same texts,
    made a column at a time. The objects with the same keys share a template, and each of its
    columns becomes JSON in one go (`_json_values`), where encoding each object whole (~2 µs a
    link, ~700,000 links at 10,000 papers) makes the text of every key and value anew."""
    shapes = list(map(tuple, objects))  # each object's keys
    distinct = set(shapes)
    texts = {}  # per shape, its objects' texts in order
    for keys in distinct:
        if len(distinct) == 1:
            group, columns = objects, extra.values()
        else:
            mine = list(map(keys.__eq__, shapes))
            group, columns = list(compress(objects, mine)), [compress(c, mine) for c in extra.values()]
        columns = dict(zip(extra, columns))
        if not all(type(k) is str for k in keys):  # the encoder's own way with other keys (or its error)
            texts[keys] = iter([encode({**o, **dict(zip(columns, row))}) for o, *row in zip(group, *columns.values())])
            continue
        names = sorted({*keys, *extra})
        template = "{" + ", ".join(encode(k).replace("%", "%%") + ": %s" for k in names) + "}"
        values = [
            list(map(known.__getitem__, columns[k])) if k in columns else _json_values(encode, list(map(itemgetter(k), group)))
            for k in names
        ]
        texts[keys] = map(template.__mod__, zip(*values))
    return list(map(next, map(texts.__getitem__, shapes)))


def _json_values(encode, values: list) -> list[str]:
    """``[encode(v) for v in values]`` (*encode* the `_GRAPH_JSON` encoder), with C calls for
    the usual columns of links."""
    kinds = set(map(type, values))
    if kinds == {str}:
        distinct = set(values)
        if len(distinct) * 2 > len(values):  # phrases, mostly different
            return list(map(json.encoder.encode_basestring, values))
        return list(map(dict(zip(distinct, map(json.encoder.encode_basestring, distinct))).__getitem__, values))
    if kinds == {int}:
        return list(map(int.__repr__, values))
    if kinds == {float} and all(map(math.isfinite, values)):
        return list(map(float.__repr__, values))
    if kinds == {bool}:
        return ["true" if v else "false" for v in values]
    return list(map(encode, values))


def load_graph(path: str | Path) -> nx.Graph:
    """The graph from a node-link ``graph.json`` written by `kg build`."""
    from kg.errors import InputError

    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise InputError(f"{path}: no such file; run `kg build` first or name a graph.json") from e
    except IsADirectoryError as e:
        raise InputError(f"{path}: a folder, not a graph.json") from e
    except OSError as e:
        raise InputError(f"{path}: cannot be read ({e.strerror or e})") from e
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"{path}: not a graph.json written by kg build ({e})") from e
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
