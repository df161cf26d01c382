"""The interactive HTML view of the graph: one self-contained page, no network needed.

pyvis builds the network data (nodes, edges, options); the page around it is kg's own
small template that inlines the vis-network 9.1.2 JavaScript and CSS bundled with pyvis,
so the browser fetches nothing (pyvis's own template points at cdnjs and jsdelivr even
with ``cdn_resources="in_line"``).

What is drawn:

* ``paper`` nodes: blue squares; ``concept`` nodes: orange dots; ``venue`` nodes: green
  diamonds. Every node is sized by its degree in the drawn graph.
* ``subject`` edges (paper - concept), width by score; ``venue`` edges (paper - venue),
  dashed; ``broader`` links (a concept's ``broader`` attribute), dotted arrows. ``cooccurs`` edges (concept - concept) are left out: they repeat what the shared
  papers already show and would clutter the picture. Nodes of any other kind are left out.

Hover texts are plain text end to end: Python puts them in the JSON data unescaped, the
JSON is embedded with ``<``, ``>`` and ``&`` written as ``\\u003c``-style escapes (so no
``</script>`` can end the data block) and the page's script turns each text into DOM
nodes with ``textContent`` (vis-network 9.1.2 itself shows a string title with
``innerText``, but the page does not rely on that). No text from the graph is ever
parsed as HTML.

Layout: forceAtlas2Based physics with ``randomSeed`` 42, at most 200 stabilization
iterations (fewer for graphs over 1000 nodes, so big pages settle in seconds), then
physics is switched off and the picture stays still.

When the layout has settled the page sets ``window.kgReady = true`` and
``window.kgStats = {nodes, edges}`` (the drawn counts); tests wait for these.
"""

from __future__ import annotations

import html
import json
import math
from functools import lru_cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["render_html"]

_STYLE: dict[str, dict[str, str]] = {
    "paper": {"shape": "square", "color": "#4e79a7", "border": "#2f4b69"},
    "concept": {"shape": "dot", "color": "#f28e2b", "border": "#a85b12"},
    "venue": {"shape": "diamond", "color": "#59a14f", "border": "#356b2f"},
}
_KIND_ORDER = {"paper": 0, "concept": 1, "venue": 2}
_EDGE_TARGET = {"subject": "concept", "venue": "venue"}  # drawn edge kind -> the paper's other end
_SUBJECT_COLOR = "#9aa5b1"
_ABSTRACT_CHARS = 300
_LABEL_CHARS = 40
# Above this many nodes vis-network's Kamada-Kawai start layout is too slow; physics alone does it.
_IMPROVED_LAYOUT_MAX_NODES = 200
# Physics iterations before the layout is frozen: 200, fewer above 1000 nodes (the work per
# iteration grows with the nodes), never under 50. ~0.1 s an iteration at 4500 nodes.
_ITERATIONS, _ITERATION_BUDGET, _MIN_ITERATIONS = 200, 200_000, 50


def render_html(G: nx.Graph, *, title: str = "kg") -> str:
    """The full HTML page (a str; write it as UTF-8) showing `G` as an interactive network.

    `G` follows docs/model.md. The same graph and title always give the same text.
    """
    from pyvis.edge import Edge
    from pyvis.network import Network

    kinds = {n: d.get("kind") for n, d in G.nodes(data=True)}
    drawn = sorted((n for n, k in kinds.items() if k in _STYLE), key=lambda n: (_KIND_ORDER[kinds[n]], str(n)))
    edges = _drawn_edges(G, kinds)
    degree = dict.fromkeys(drawn, 0)
    for u, v, _ in edges:
        degree[u] += 1
        degree[v] += 1

    net = Network(directed=False)
    for n in drawn:
        net.add_node(str(n), **_node_options(G, n, kinds[n], degree[n]))
    # Edges are appended as pyvis Edge objects: Network.add_edge scans every edge already
    # added (quadratic), and networkx already guarantees each edge is unique.
    for i, (u, v, d) in enumerate(edges):
        net.edges.append(Edge(str(u), str(v), **_edge_options(G, u, v, d), id=f"e{i}").options)
    net.options = _options(len(drawn))

    nodes_data, edges_data, _heading, _height, _width, options_json = net.get_network_data()
    data = {"nodes": nodes_data, "edges": edges_data, "options": json.loads(options_json)}
    counts = {k: sum(1 for n in drawn if kinds[n] == k) for k in _STYLE}
    return _page(title, _json_for_script(data), counts)


def _drawn_edges(G: nx.Graph, kinds: dict[Any, Any]) -> list[tuple[Any, Any, dict[str, Any]]]:
    """`subject` and `venue` edges, each oriented paper first, and `broader` links between
    concepts (narrower first), in a fixed order."""
    out = []
    for u, v, d in G.edges(data=True):
        if d.get("kind") not in _EDGE_TARGET:
            continue
        if kinds.get(u) != "paper":
            u, v = v, u
        if kinds.get(u) == "paper" and kinds.get(v) == _EDGE_TARGET[d["kind"]]:
            out.append((u, v, d))
    for n, k in kinds.items():  # the concept hierarchy: narrower -> broader
        if k == "concept":
            for b in G.nodes[n].get("broader") or []:
                if kinds.get(b) == "concept":
                    out.append((n, b, {"kind": "broader"}))
    out.sort(key=lambda e: (str(e[0]), str(e[1])))
    return out


def _node_options(G: nx.Graph, n: Any, kind: str, degree: int) -> dict[str, Any]:
    """pyvis keyword options of one node: label, look, size and plain-text hover."""
    d = G.nodes[n]
    style = _STYLE[kind]
    label = str(d.get("label") or d.get("title") or n)
    if kind == "paper":
        tip = _paper_tip(G, n, label)
    elif kind == "concept":
        tip = _concept_tip(G, n, label)
    else:
        papers = sum(1 for m in G.neighbors(n) if G.nodes[m].get("kind") == "paper")
        tip = [label, _count(papers, "paper")]
    return {
        "label": _shorten(label, _LABEL_CHARS),
        "shape": style["shape"],
        "color": {"background": style["color"], "border": style["border"],
                  "highlight": {"background": style["color"], "border": "#222222"},
                  "hover": {"background": style["color"], "border": "#222222"}},
        "size": round(min(8 + 4 * math.sqrt(degree), 48), 2),
        "font": {"size": 14 if kind == "concept" else 12, "color": "#222222"},
        "title": "\n".join(tip),
    }


def _paper_tip(G: nx.Graph, n: Any, label: str) -> list[str]:
    d = G.nodes[n]
    lines = [label]
    full_title = d.get("title")
    if full_title and full_title != label:
        lines.append(str(full_title))
    where = " ".join(str(x) for x in (d.get("venue"), d.get("year")) if x not in (None, ""))
    if where:
        lines.append(where)
    abstract = " ".join(str(d.get("abstract") or "").split())
    if abstract:
        lines.append(_shorten(abstract, _ABSTRACT_CHARS))
    concepts = sum(1 for m in G.neighbors(n) if G.nodes[m].get("kind") == "concept")
    lines.append(_count(concepts, "concept"))
    return lines


def _concept_tip(G: nx.Graph, n: Any, label: str) -> list[str]:
    d = G.nodes[n]
    lines = [label]
    alt = [str(a) for a in d.get("alt_labels") or [] if a != label]
    if alt:
        lines.append("also: " + ", ".join(alt))
    papers = d.get("papers")
    if not isinstance(papers, int):
        papers = sum(1 for m in G.neighbors(n) if G.nodes[m].get("kind") == "paper")
    lines.append(_count(papers, "paper"))
    return lines


def _edge_options(G: nx.Graph, paper: Any, other: Any, d: dict[str, Any]) -> dict[str, Any]:
    """pyvis keyword options of one drawn edge."""
    a = str(G.nodes[paper].get("label") or paper)
    b = str(G.nodes[other].get("label") or other)
    if d.get("kind") == "broader":
        return {"color": {"color": _STYLE["concept"]["color"], "opacity": 0.7}, "dashes": [2, 4],
                "width": 1.5, "arrows": "to", "title": f"{a}\nnarrower than {b}"}
    if d.get("kind") == "venue":
        year = d.get("year")
        tip = f"{a}\npublished at {b}" + (f" ({year})" if year is not None else "")
        return {"color": {"color": _STYLE["venue"]["color"], "opacity": 0.6}, "dashes": True,
                "width": 1, "title": tip}
    score = d.get("score")
    score = float(score) if isinstance(score, (int, float)) else 0.0
    lines = [f"{a} \u2013 {b}"]
    if d.get("phrase"):
        lines.append(f"phrase: {d['phrase']}")
    lines.append(f"score {score:.4f}" + (f", rank {d['rank']}" if d.get("rank") is not None else ""))
    return {"color": {"color": _SUBJECT_COLOR, "opacity": 0.8},
            "width": round(0.5 + 2.5 * max(0.0, min(score, 1.0)), 2), "title": "\n".join(lines)}


def _options(n_nodes: int) -> dict[str, Any]:
    """vis-network options: a seeded layout and a short, bounded physics run."""
    return {
        "autoResize": True,
        "layout": {"randomSeed": 42, "improvedLayout": n_nodes <= _IMPROVED_LAYOUT_MAX_NODES},
        "physics": {
            "enabled": True,
            "solver": "forceAtlas2Based",
            "forceAtlas2Based": {"gravitationalConstant": -60, "centralGravity": 0.01,
                                 "springLength": 90, "springConstant": 0.08,
                                 "damping": 0.5, "avoidOverlap": 0.2},
            "stabilization": {"enabled": True, "iterations": _iterations(n_nodes),
                              "updateInterval": 50, "fit": True},
            "minVelocity": 1,
            "maxVelocity": 50,
        },
        "interaction": {"hover": True, "tooltipDelay": 120, "hideEdgesOnDrag": n_nodes > 500},
        "nodes": {"borderWidth": 1},
        "edges": {"smooth": False},
    }


def _iterations(n_nodes: int) -> int:
    """The physics iterations for a graph of `n_nodes`: bounded work, so big pages settle."""
    return max(_MIN_ITERATIONS, min(_ITERATIONS, _ITERATION_BUDGET // max(n_nodes, 1)))


def _shorten(text: str, limit: int) -> str:
    """`text` cut at a word boundary to at most `limit` characters plus an ellipsis."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip() + "\u2026"


def _count(k: int, noun: str) -> str:
    return f"{k} {noun}" + ("" if k == 1 else "s")


def _json_for_script(data: Any) -> str:
    """`data` as JSON that is safe inside a <script> element: no <, > or & appears in it."""
    text = json.dumps(data, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


@lru_cache(maxsize=1)
def _vis_assets() -> tuple[str, str]:
    """pyvis's bundled vis-network 9.1.2 (JavaScript, CSS), made safe to inline."""
    lib = files("pyvis") / "lib" / "vis-9.1.2"
    js = (lib / "vis-network.min.js").read_text(encoding="utf-8")
    css = (lib / "vis-network.css").read_text(encoding="utf-8")
    # The source map is not shipped; dropping its comment spares DevTools a failed fetch.
    js = js.replace("//# sourceMappingURL=vis-network.min.js.map", "")
    # Neither holds these today; the replacements keep an update from ending its element early.
    return js.replace("</script", "<\\/script"), css.replace("</style", "<\\/style")


def _text(s: str) -> str:
    """`s` escaped for HTML text and attributes, non-ASCII as character references."""
    return html.escape(s).encode("ascii", "xmlcharrefreplace").decode("ascii")


_SCRIPT = """(function () {
  "use strict";
  var raw = JSON.parse(document.getElementById("kg-data").textContent);
  function tip(text) {
    var box = document.createElement("div");
    box.className = "kg-tip";
    text.split("\\n").forEach(function (line, i) {
      var el = document.createElement(i === 0 ? "strong" : "div");
      el.textContent = line;
      box.appendChild(el);
    });
    return box;
  }
  function withTips(items) {
    return items.map(function (item) {
      var copy = Object.assign({}, item);
      if (typeof copy.title === "string") copy.title = tip(copy.title);
      return copy;
    });
  }
  var nodes = new vis.DataSet(withTips(raw.nodes));
  var edges = new vis.DataSet(withTips(raw.edges));
  var network = new vis.Network(document.getElementById("kg-graph"),
                                {nodes: nodes, edges: edges}, raw.options);
  window.kgNetwork = network;
  function ready() {
    if (window.kgReady) return;
    network.setOptions({physics: {enabled: false}});
    window.kgStats = {nodes: nodes.length, edges: edges.length};
    window.kgReady = true;
    document.body.setAttribute("data-kg-ready", "true");
  }
  network.once("stabilizationIterationsDone", ready);
  network.once("stabilized", ready);
  if (nodes.length === 0) ready();
})();"""

_CSS = """html, body { margin: 0; height: 100%; font-family: system-ui, sans-serif; }
#kg-graph { position: absolute; inset: 0; background: #ffffff; }
#kg-legend { position: absolute; top: 12px; left: 12px; z-index: 10; max-width: 20em;
  background: rgba(255, 255, 255, 0.92); border: 1px solid #c8ccd0; border-radius: 6px;
  padding: 8px 12px; font-size: 13px; color: #222222; }
#kg-legend h1 { font-size: 15px; margin: 0 0 6px; }
#kg-legend ul { list-style: none; margin: 0; padding: 0; }
#kg-legend li { display: flex; align-items: center; gap: 8px; margin: 3px 0; }
#kg-legend p { margin: 6px 0 0; color: #555555; }
.kg-sw { display: inline-block; width: 12px; height: 12px; flex: none; border: 1px solid; }
.kg-sw-concept { border-radius: 50%; }
.kg-sw-venue { transform: rotate(45deg) scale(0.85); }
.kg-line { display: inline-block; width: 22px; flex: none; border-top: 2px solid """ + _SUBJECT_COLOR + """; }
.kg-line.kg-dash { border-top: 2px dashed """ + _STYLE["venue"]["color"] + """; }
.kg-line.kg-dot { border-top: 2px dotted """ + _STYLE["concept"]["color"] + """; }
.kg-tip { white-space: normal; max-width: 28em; font-family: system-ui, sans-serif; font-size: 13px; }
.kg-tip strong { display: block; margin-bottom: 2px; }
""" + "".join(
    f".kg-sw-{k} {{ background: {s['color']}; border-color: {s['border']}; }}\n" for k, s in _STYLE.items()
)


def _page(title: str, data_json: str, counts: dict[str, int]) -> str:
    js, vis_css = _vis_assets()
    items = "".join(
        f'<li><span class="kg-sw kg-sw-{k}"></span>{k}s ({counts[k]})</li>\n' for k in _STYLE
    )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_text(title)}</title>
<style>
{vis_css}
</style>
<style>
{_CSS}</style>
</head>
<body>
<div id="kg-graph"></div>
<div id="kg-legend" role="note" aria-label="Legend">
<h1>{_text(title)}</h1>
<ul>
{items}<li><span class="kg-line"></span>paper &ndash; concept (thicker: closer match)</li>
<li><span class="kg-line kg-dash"></span>paper &ndash; venue</li>
<li><span class="kg-line kg-dot"></span>concept &rarr; broader concept</li>
</ul>
<p>Size: number of links. Hover a node or a link for details; drag to pan, scroll to zoom.</p>
</div>
<script type="application/json" id="kg-data">{data_json}</script>
<script>
{js}
</script>
<script>
{_SCRIPT}
</script>
</body>
</html>
"""
