"""graph.gexf read back by networkx, and map.json checked against VOSviewer Online's JSON format."""

from __future__ import annotations

import io
import json
import numbers

import networkx as nx
import pytest
from fixture_graph import P1, fixture_graph

from kg.graph.mapfiles import write_gexf, write_vosviewer_json

# VOSviewer Online's JSON map format (its documentation, "VOSviewer JSON files"): the attributes
# each object may have, and the checks its reader (src/utils/errors.js, getJsonDataError) makes.
TOP = {"network", "config", "info"}
NETWORK = {"items", "links", "clusters"}
ITEM = {"id", "label", "description", "url", "x", "y", "cluster", "weights", "scores"}
LINK = {"source_id", "target_id", "strength"}
CLUSTER = {"cluster", "label"}


def vosviewer_problems(data) -> list[str]:
    """What VOSviewer Online would refuse in *data*, or what its documentation does not name."""
    problems = []
    if not isinstance(data, dict) or not set(data) <= TOP or not isinstance(data.get("network"), dict):
        return ["not an object with a network (and only config and info beside it)"]
    network = data["network"]
    if not set(network) <= NETWORK:
        problems.append(f"network has {sorted(set(network) - NETWORK)}")
    items, links = network.get("items", []), network.get("links", [])
    if len(items) < 3:
        problems.append("fewer than three items")
    ids = [item.get("id") for item in items]
    if len(set(ids)) != len(ids) or any(i in (None, "") or not isinstance(i, (str, int)) for i in ids):
        problems.append("item ids missing, empty or not unique")
    for item in items:
        if not set(item) <= ITEM:
            problems.append(f"item {item.get('id')} has {sorted(set(item) - ITEM)}")
        if not isinstance(item.get("label"), str):
            problems.append(f"item {item.get('id')} has no label")
        if not all(isinstance(item.get(k), numbers.Real) and not isinstance(item.get(k), bool) for k in ("x", "y")):
            problems.append(f"item {item.get('id')}: x or y is not a number")
        cluster = item.get("cluster")
        if cluster is not None and (not isinstance(cluster, int) or not 1 <= cluster <= 1000):
            problems.append(f"item {item.get('id')}: cluster {cluster!r} is not an integer from 1 to 1000")
        if any(not isinstance(w, numbers.Real) or w < 0 for w in item.get("weights", {}).values()):
            problems.append(f"item {item.get('id')}: a weight is not a non-negative number")
        if any(s is not None and not isinstance(s, numbers.Real) for s in item.get("scores", {}).values()):
            problems.append(f"item {item.get('id')}: a score is not a number")
    if items and len({(i.get("x"), i.get("y")) for i in items}) == 1:
        problems.append("every item has the same coordinates")
    known = set(ids)
    for link in links:
        if not set(link) <= LINK or "source_id" not in link or "target_id" not in link:
            problems.append(f"link {link} has other attributes or lacks source_id / target_id")
        elif link["source_id"] not in known or link["target_id"] not in known:
            problems.append(f"link {link} names an item that is not there")
        if not isinstance(link.get("strength", 0), numbers.Real) or link.get("strength", 0) < 0:
            problems.append(f"link {link}: strength is not a non-negative number")
    for cluster in network.get("clusters", []):
        if set(cluster) != CLUSTER or not isinstance(cluster["cluster"], int) or not isinstance(cluster["label"], str):
            problems.append(f"cluster {cluster} is not a cluster number and a label")
    return problems


@pytest.fixture(scope="module")
def G() -> nx.Graph:
    return fixture_graph()


@pytest.fixture(scope="module")
def vos(G) -> dict:
    f = io.BytesIO()
    write_vosviewer_json(G, f, title="fixture")
    return json.loads(f.getvalue().decode("utf-8"))


def test_gexf_reads_back_with_positions_and_clusters(G):
    f = io.BytesIO()
    write_gexf(G, f)
    H = nx.read_gexf(io.BytesIO(f.getvalue()))
    placed = sorted(n for n, d in G.nodes(data=True) if "x" in d)
    assert sorted(H.nodes) == placed  # the 8 concepts on the map, the 6 papers, the 2 venues
    assert len([n for n in H if n.startswith("concept:")]) == 8
    for n in placed:
        d, h = G.nodes[n], H.nodes[n]
        assert (h["viz"]["position"]["x"], h["viz"]["position"]["y"]) == (d["x"], d["y"])
        assert h.get("cluster") == d.get("cluster") and h["kind"] == d["kind"] and h["label"] == d["label"]
    assert H.nodes["concept:fine-tuning"]["papers"] == 3
    assert H.nodes[f"paper:{P1}"]["year"] == 2024 and H.nodes[f"paper:{P1}"]["venue"] == "ICML"
    kinds = {d["kind"] for _, _, d in H.edges(data=True)}
    assert kinds == {"cooccurs", "broader", "subject", "venue"}
    assert H.edges["concept:fine-tuning", "concept:large-language-model"]["weight"] == 2.0  # P1 and P4
    # zeroth-order optimization (P1, P4) is narrower than optimization (P3, P5): no paper has both
    assert H.edges["concept:zeroth-order-optimization", "concept:optimization"]["kind"] == "broader"
    assert not any("concept:language-model" in e for e in H.edges)  # off the map (no paper of its own)


def test_map_json_has_vosviewers_documented_fields(vos):
    assert vosviewer_problems(vos) == []
    items = {i["id"]: i for i in vos["network"]["items"]}
    assert sorted(items) == ["concept:federated-learning", "concept:fine-tuning", "concept:large-language-model",
                             "concept:memory-efficiency", "concept:optimization", "concept:stochastic-gradient-descent",
                             "concept:stochastic-zeroth-order-optimization", "concept:zeroth-order-optimization"]
    ft = items["concept:fine-tuning"]
    assert ft["label"] == "fine-tuning" and ft["cluster"] == 1
    # fine-tuning (P1, P4, P5) shares papers with LLM (2), ZOO (2), memory efficiency (2),
    # federated learning (1), optimization (1)
    assert ft["weights"] == {"Links": 5, "Total link strength": 8, "Occurrences": 3}
    assert ft["scores"] == {"Avg. pub. year": round((2024 + 2024 + 2025) / 3, 2)}
    assert vos["network"]["clusters"] == [
        {"cluster": 1, "label": "memory efficiency / fine-tuning / zeroth-order optimization"},
        {"cluster": 2, "label": "stochastic gradient descent / federated learning"}]
    assert vos["info"]["title"] == "fixture"
    strengths = {(link["source_id"], link["target_id"]): link["strength"] for link in vos["network"]["links"]}
    assert strengths[("concept:fine-tuning", "concept:large-language-model")] == 2


def test_map_json_y_is_upwards(G, vos):
    """VOSviewer draws y upwards, the page (like every screen) downwards: map.json turns it over."""
    item = next(i for i in vos["network"]["items"] if i["id"] == "concept:fine-tuning")
    assert (item["x"], item["y"]) == (G.nodes["concept:fine-tuning"]["x"], -G.nodes["concept:fine-tuning"]["y"])


@pytest.mark.parametrize("breakage,expected", [
    (lambda d: d["network"]["items"][0].update(cluster=1001), "not an integer from 1 to 1000"),
    (lambda d: d["network"]["items"][0]["weights"].update(Links=-1), "not a non-negative number"),
    (lambda d: d["network"]["links"].append({"source_id": "concept:nowhere", "target_id": "concept:fine-tuning", "strength": 1}),
     "names an item that is not there"),
    (lambda d: d["network"]["items"][1].update(id=d["network"]["items"][0]["id"]), "not unique"),
    (lambda d: d["network"]["items"][0].update(size=3), "has ['size']"),
    (lambda d: d["network"].update(items=d["network"]["items"][:2]), "fewer than three items"),
])
def test_the_check_catches_what_vosviewer_refuses(vos, breakage, expected):
    broken = json.loads(json.dumps(vos))
    breakage(broken)
    assert any(expected in p for p in vosviewer_problems(broken)), vosviewer_problems(broken)


def test_map_json_leaves_clusters_past_1000_without_a_number():
    G = fixture_graph()
    G.nodes["concept:optimization"]["cluster"] = 1001
    G.graph["clusters"] = G.graph["clusters"] + [{"id": 1001, "label": "far", "concepts": 1, "papers": 0, "top": [], "x": 0.0, "y": 0.0}]
    f = io.BytesIO()
    write_vosviewer_json(G, f)
    data = json.loads(f.getvalue())
    assert vosviewer_problems(data) == []
    assert "cluster" not in next(i for i in data["network"]["items"] if i["id"] == "concept:optimization")
    assert [c["cluster"] for c in data["network"]["clusters"]] == [1, 2]


def test_empty_map_files_are_still_well_formed():
    G = nx.Graph()
    from kg.graph.layout import add_map

    add_map(G)
    f = io.BytesIO()
    write_vosviewer_json(G, f)
    assert json.loads(f.getvalue())["network"] == {"clusters": [], "items": [], "links": []}
    g = io.BytesIO()
    write_gexf(G, g)
    assert len(nx.read_gexf(io.BytesIO(g.getvalue()))) == 0


@pytest.mark.model
def test_the_seeds_build_writes_both_files(seeds_build):
    """The real build: graph.gexf reads back with the map's positions and clusters, map.json passes
    VOSviewer's checks and has every concept on the map."""
    G = seeds_build.graph
    H = nx.read_gexf(seeds_build.out / "graph.gexf")
    concepts = sorted(n for n, d in G.nodes(data=True) if d["kind"] == "concept" and "x" in d)
    assert len(concepts) >= 100 and [n for n in sorted(H) if n.startswith("concept:")] == concepts  # filled up
    assert any("cluster" not in G.nodes[n] for n in concepts)  # one paper's concepts linked to no cluster: grey
    for n in concepts:
        assert H.nodes[n].get("cluster") == G.nodes[n].get("cluster")
        assert (H.nodes[n]["viz"]["position"]["x"], H.nodes[n]["viz"]["position"]["y"]) == (G.nodes[n]["x"], G.nodes[n]["y"])
    data = json.loads((seeds_build.out / "map.json").read_text(encoding="utf-8"))
    assert vosviewer_problems(data) == []
    assert sorted(i["id"] for i in data["network"]["items"]) == concepts
    assert [c["label"] for c in data["network"]["clusters"]] == [c["label"] for c in G.graph["clusters"]]


# Hostile text: each file is what its format's own strict parser accepts, whatever a title holds.

from hostile_text import HOSTILE_TEXT, with_text
from hypothesis import HealthCheck, given, settings

from kg.graph.io import write_graph_json
from kg.text.chars import xml_text

_PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def test_a_control_character_in_a_venue_leaves_the_gexf_xml(G):
    """Gephi refused graph.gexf: a venue holding \\x01 was written as it is, and XML 1.0 forbids it."""
    import xml.etree.ElementTree as ET

    f = io.BytesIO()
    write_gexf(with_text(G, "Venue\x01\x08\x1b[1m"), f)
    root = ET.fromstring(f.getvalue())
    venues = {a.get("value") for a in root.iter() if a.tag.endswith("}attvalue")}
    assert "Venue[1m" in venues


@_PROPERTY
@given(text=HOSTILE_TEXT)
def test_gexf_is_xml_whatever_the_text(G, text):
    import xml.etree.ElementTree as ET

    f = io.BytesIO()
    write_gexf(with_text(G, text), f)
    root = ET.fromstring(f.getvalue())  # strict: a forbidden character or bad UTF-8 raises
    labels = [n.get("label") for n in root.iter() if n.tag.endswith("}node")]
    assert xml_text(text) in labels


@_PROPERTY
@given(text=HOSTILE_TEXT)
def test_map_json_and_graph_json_are_utf8_json_whatever_the_text(G, text):
    H = with_text(G, text)
    for write in (write_vosviewer_json, write_graph_json):
        f = io.BytesIO()
        write(H, f)
        json.loads(f.getvalue().decode("utf-8"))  # strict UTF-8: a lone surrogate would not encode at all


# graph.gexf is XML text made directly; these check it byte for byte against networkx's GEXF writer,
# which wrote it before (`_networkx_gexf`, that writer kept here as it was), and read back by networkx.

import time
from itertools import islice

from kg.graph import mapfiles
from kg.graph.mapfiles import map_graph

_TRICKY = ("amp & lt < gt > quot \" apos ' lf \n tab \t cr \r crlf \r\n é 中文 😀 "
           "ctl \x01\x08\x0b\x1b[1m \ufffe lone \ud800 end")


def _networkx_gexf(G: nx.Graph, f, block: int) -> None:
    """graph.gexf as kg wrote it until the text writer: networkx's GEXFWriter making an element
    tree of each *block* of nodes or edges (kg.graph.mapfiles.write_gexf of main at 8b8cec7)."""
    import tempfile
    from xml.etree.ElementTree import Element, ElementTree, tostring

    from networkx.readwrite.gexf import GEXFWriter

    writer = GEXFWriter(encoding="utf-8", prettyprint=False)
    writer.graph_element = graph = Element("graph", defaultedgetype="undirected", mode="static", name="")
    placed = mapfiles._placed(G)

    def elements(items, add) -> None:
        items = iter(items)
        while part := list(islice(items, block)):
            holder = Element("holder")
            add(part, holder)
            text = tostring(holder[0], encoding="unicode")  # <nodes xmlns:viz="…">…</nodes>
            body.write(text[text.index(">") + 1:text.rindex("</")].encode("utf-8"))

    def add_nodes(part, holder) -> None:
        H = nx.Graph()
        H.add_nodes_from(part)
        writer.add_nodes(H, holder)

    def add_edges(part, holder) -> None:
        H = nx.Graph()
        H.add_edges_from(part)
        writer.add_edges(H, holder)

    with tempfile.TemporaryFile() as body:
        elements(mapfiles._map_nodes(G, placed), add_nodes)
        nodes_end = body.tell()
        elements(mapfiles._map_edges(G, placed), add_edges)
        edges_end = body.tell()
        writer.xml.set("xmlns:viz", writer.NS_VIZ)
        writer.xml.append(graph)
        graph.append(Element("nodes"))
        head = io.BytesIO()
        ElementTree(writer.xml).write(head, encoding="utf-8", xml_declaration=True)
        text = head.getvalue()
        f.write(text[:text.rindex(b"<nodes />")] + b"<nodes>")
        body.seek(0)
        mapfiles._copy(body, f, nodes_end)
        f.write(b"</nodes><edges>")
        mapfiles._copy(body, f, edges_end - nodes_end)
        f.write(b"</edges></graph></gexf>")


def _made_up_map(papers: int, text: str = "", *, same_ids: bool = False) -> nx.Graph:
    """A graph with a map on it, made up to reach every case of `_map_nodes` and `_map_edges`:
    concepts with and without a cluster, with broader concepts (placed or not, linked already,
    themselves, each other), papers with and without year, venue and cluster, venues, links of the
    map's kinds and of others, an unplaced node; *text* in every label and venue; *same_ids*:
    two ids that `xml_text` makes one."""
    G = nx.Graph()
    concepts = [f"concept:c{i}" for i in range(max(papers // 4, 6))]
    for i, c in enumerate(concepts):
        G.add_node(c, kind="concept", label=f"{text}c{i}", x=i * 1.5, y=-i / 3, papers=2 + i % 5,
                   broader=[concepts[(i + 1) % len(concepts)], concepts[i // 2], "concept:off-map"][:1 + i % 3])
        if i % 4:
            G.nodes[c]["cluster"] = 1 + i % 13
    G.nodes[concepts[0]]["broader"] = [concepts[0], concepts[1]]  # itself, and a concept it co-occurs with
    G.add_node("concept:off-map", kind="concept", label="off", papers=1)  # no position: left out
    for v in ("venue:a", "venue:b"):
        G.add_node(v, kind="venue", label=f"{text}{v}", x=0.25, y=1e-7, cluster=2)
    for p in range(papers):
        n = f"paper:p{p:06d}"
        G.add_node(n, kind="paper", label=f"{text}paper {p}", x=float(p), y=p * 0.1, cluster=1 + p % 3 if p % 5 else None)
        if p % 3:
            G.nodes[n]["year"] = 2000 + p % 25
        if p % 4:
            G.nodes[n]["venue"] = f"{text}V{p % 2}"
            G.add_edge(n, f"venue:{'ab'[p % 2]}", kind="venue")
        for k in range(3):
            G.add_edge(n, concepts[(p + 2 * k) % len(concepts)], kind="subject", score=0.5)
    for i, c in enumerate(concepts):
        G.add_edge(c, concepts[(i + 1) % len(concepts)], kind="cooccurs", count=1 + i % 4)
        G.add_edge(c, concepts[(i + 3) % len(concepts)], kind="related", count=9)  # not a link of the map
    G.add_edge(concepts[0], "concept:off-map", kind="cooccurs", count=2)  # to a node off the map
    if same_ids:
        G.add_node("concept:c0\x01", kind="concept", label="twin", x=9.0, y=9.0, papers=4, year=1999)
        G.add_edge("concept:c0\x01", concepts[2], kind="cooccurs", count=5)
        G.add_edge(concepts[0], concepts[2], kind="cooccurs", count=1)  # the same pair as written
    return G


def _placed_graph(G: nx.Graph) -> nx.Graph:
    """*G* with each node a concept on the map (a position, a label, its papers)."""
    for i, (_, d) in enumerate(G.nodes(data=True)):
        d.update(kind="concept", label=f"c{i}", x=float(i), y=0.0, papers=i)
    return G


def _empty_map() -> nx.Graph:
    from kg.graph.layout import add_map

    G = nx.Graph()
    add_map(G)
    return G


_GRAPHS = {
    "fixture": fixture_graph,
    "fixture, tricky text": lambda: with_text(fixture_graph(), _TRICKY),
    "fixture, a venue of controls": lambda: with_text(fixture_graph(), "Venue\x01\x08\x1b[1m"),
    "made up, tricky text": lambda: _made_up_map(40, _TRICKY),
    "made up, ids xml_text joins": lambda: _made_up_map(12, same_ids=True),
    "empty map": _empty_map,
    "two concepts, no paper": lambda: _placed_graph(nx.Graph([("concept:a", "concept:b", {"kind": "cooccurs", "count": 3})])),
}


def _both(G: nx.Graph, monkeypatch, block: int) -> tuple[bytes, bytes]:
    """graph.gexf of *G* by `write_gexf` and by networkx's writer (`_networkx_gexf`), both with
    *block* nodes or edges a block and the same date."""
    monkeypatch.setattr(time, "strftime", lambda fmt, *a: "2031-02-03")
    monkeypatch.setattr(mapfiles, "_GEXF_BLOCK", block)
    new, old = io.BytesIO(), io.BytesIO()
    write_gexf(G, new)
    _networkx_gexf(G, old, block)
    return new.getvalue(), old.getvalue()


@pytest.mark.parametrize("block", [1, 2, 7, 5000])
@pytest.mark.parametrize("name", sorted(_GRAPHS))
def test_gexf_is_byte_for_byte_what_networkx_wrote(name, block, monkeypatch):
    new, old = _both(_GRAPHS[name](), monkeypatch, block)
    assert new == old
    assert b'lastmodifieddate="2031-02-03"' in new and new.endswith(b"</edges></graph></gexf>")


def test_gexf_past_a_block_is_byte_for_byte_what_networkx_wrote(monkeypatch):
    """More nodes and edges than `_GEXF_BLOCK`, at its own size: several blocks of each."""
    G = _made_up_map(mapfiles._GEXF_BLOCK * 9 // 10, "é & <")
    M = map_graph(G)
    assert M.number_of_nodes() > mapfiles._GEXF_BLOCK and M.number_of_edges() > 3 * mapfiles._GEXF_BLOCK
    new, old = _both(G, monkeypatch, mapfiles._GEXF_BLOCK)
    assert new == old


def test_gexf_text_checks_catch_a_difference(monkeypatch):
    """The comparison above sees one byte: a label that differs by its escaping differs here."""
    G = fixture_graph()
    new, _ = _both(G, monkeypatch, 5000)
    G.nodes["concept:fine-tuning"]["label"] = "fine-tuning\t"
    changed, old = _both(G, monkeypatch, 5000)
    assert changed == old and changed != new and b'label="fine-tuning&#09;"' in changed


@pytest.mark.parametrize("block", [3, 5000])
def test_gexf_reads_back_as_the_map_graph(block, monkeypatch):
    """networkx reads graph.gexf back as `map_graph`: the same nodes with the same attributes and
    viz, the same edges with the same kind and weight, whatever the labels hold."""
    monkeypatch.setattr(mapfiles, "_GEXF_BLOCK", block)
    G = _made_up_map(30, _TRICKY)
    f = io.BytesIO()
    write_gexf(G, f)
    H, M = nx.read_gexf(io.BytesIO(f.getvalue())), map_graph(G)
    assert list(H.nodes) == list(M.nodes) and len(M) == 30 + 7 + 2  # papers, concepts, venues
    for n, d in M.nodes(data=True):
        assert H.nodes[n] == d
    assert {frozenset(e) for e in H.edges} == {frozenset(e) for e in M.edges} and M.number_of_edges() > 120
    for u, v, d in M.edges(data=True):
        assert (H.edges[u, v]["kind"], H.edges[u, v]["weight"]) == (d["kind"], d["weight"])
    assert sorted(int(H.edges[e]["id"]) for e in H.edges) == list(range(M.number_of_edges()))
    assert H.nodes["paper:p000001"]["label"] == xml_text(_TRICKY) + "paper 1"
