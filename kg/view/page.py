"""The interactive HTML view of the graph: one self-contained page, no network needed.

pyvis builds the network data (nodes, edges, options); the page around it is kg's own
small template that inlines the vis-network 9.1.2 JavaScript and CSS bundled with pyvis,
so the browser fetches nothing (pyvis's own template points at cdnjs and jsdelivr even
with ``cdn_resources="in_line"``).

What is drawn: the whole graph when it has up to `MAX_DRAWN` papers, concepts and venues.
A bigger graph is drawn bounded, as `kg serve`'s explorer draws it (`bounded_selection`, shared
with kg.view.explorer): the `MAX_CONCEPTS` concepts with the most papers, up to `MAX_PAPERS` of their
papers and their venues. The page then also carries a compact index of every node (labels,
alternative labels, titles, links with scores, abstracts cut to 300 characters: whole ones
would take a 10,000-paper page past 20 MB) and a search box that finds any node and draws it
with its neighbours (a concept's 60 best papers, a paper's concepts and venue), made in the
browser with the same look.

* ``paper`` nodes: blue squares; ``concept`` nodes: orange dots; ``venue`` nodes: green
  diamonds. Every node is sized by its degree in the drawn graph.
* ``subject`` edges (paper - concept), width by score; ``venue`` edges (paper - venue),
  dashed; ``broader`` links (a concept's ``broader`` attribute), dotted arrows. ``cooccurs`` edges (concept - concept) are left out: they repeat what the shared
  papers already show and would clutter the picture; those that make two concepts ``related`` (skos:related) are
  drawn, long-dashed, with their evidence on hover. Nodes of any other kind are left out.

Hover texts are plain text end to end: Python puts them in the JSON data unescaped, the
JSON is embedded with ``<``, ``>`` and ``&`` written as ``\\u003c``-style escapes (so no
``</script>`` can end the data block) and the page's script turns each text into DOM
nodes with ``textContent`` (vis-network 9.1.2 itself shows a string title with
``innerText``, but the page does not rely on that). No text from the graph is ever
parsed as HTML.

Layout: forceAtlas2Based physics with ``randomSeed`` 42, at most 200 stabilization
iterations (fewer for graphs over 500 nodes, so big pages settle in seconds), then
physics is switched off and the picture stays still.

When the layout has settled the page sets ``window.kgReady = true`` and
``window.kgStats = {nodes, edges}`` (the drawn counts); tests wait for these.
"""

from __future__ import annotations

import heapq
import html
import json
import math
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from functools import lru_cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["render_html", "bounded_selection", "MAX_DRAWN", "MAX_CONCEPTS", "MAX_PAPERS"]

_STYLE: dict[str, dict[str, str]] = {
    "paper": {"shape": "square", "color": "#4e79a7", "border": "#2f4b69"},
    "concept": {"shape": "dot", "color": "#f28e2b", "border": "#a85b12"},
    "venue": {"shape": "diamond", "color": "#59a14f", "border": "#356b2f"},
}
_KIND_ORDER = {"paper": 0, "concept": 1, "venue": 2}
_EDGE_TARGET = {"subject": "concept", "venue": "venue"}
_RELATED_COLOR = "#8e44ad"  # drawn edge kind -> the paper's other end
_SUBJECT_COLOR = "#9aa5b1"
_ABSTRACT_CHARS = 300
# Above MAX_DRAWN drawable nodes the page draws a bounded part (MAX_CONCEPTS concepts with the
# most papers and up to MAX_PAPERS of their papers, see `bounded_selection`) and the search finds
# the rest, so the page of 10,000 papers stays small (under 20 MB) and settles in seconds.
MAX_DRAWN = 1500
MAX_CONCEPTS = 400
MAX_PAPERS = 800
_LABEL_CHARS = 40
# Above this many nodes vis-network's Kamada-Kawai start layout is too slow; physics alone does it.
_IMPROVED_LAYOUT_MAX_NODES = 200
# Physics iterations before the layout is frozen: 200, fewer above 500 nodes (the work per
# iteration grows with the nodes), never under 50. ~0.1 s an iteration at 4500 nodes, so the
# budget is about 2 s of layout in headless Chromium (a 1,200-node page settles in ~2-4 s).
_ITERATIONS, _ITERATION_BUDGET, _MIN_ITERATIONS = 200, 100_000, 50


def render_html(G: nx.Graph, *, title: str = "kg") -> str:
    """The full HTML page (a str; write it as UTF-8) showing `G` as an interactive network.

    `G` follows docs/model.md. The same graph and title always give the same text.
    """
    from pyvis.edge import Edge
    from pyvis.network import Network

    kinds = {n: d.get("kind") for n, d in G.nodes(data=True)}
    drawable = [n for n, k in kinds.items() if k in _STYLE]
    index = None
    if len(drawable) <= MAX_DRAWN:
        drawn = sorted(drawable, key=lambda n: (_KIND_ORDER[kinds[n]], str(n)))
        edges = _drawn_edges(G, kinds)
    else:  # a big graph: the most connected part is drawn, the rest is found with the search
        drawn = _bounded(G, kinds)
        edges = _drawn_edges(G, {n: kinds[n] for n in drawn})
        index = _json_for_script(_search_data(G, kinds))
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
    if index:
        found = Counter(map(kinds.__getitem__, drawable))
        totals = {k: found[k] for k in _STYLE}
    else:
        totals = None
    return _page(title, _json_for_script(data), counts, totals=totals, index_json=index)


def _bounded(G: nx.Graph, kinds: dict[Any, Any]) -> list[Any]:
    """The nodes the page of a big graph draws: `bounded_selection` with `MAX_CONCEPTS` and
    `MAX_PAPERS`, and the venues of the drawn papers, in drawing order."""
    subjects: dict[Any, list[tuple[Any, float]]] = {}
    venue_of = {}
    adj = dict(G.adjacency())  # plain dicts: networkx's views cost a call per item
    for u, k in kinds.items():  # each paper's edges
        if k != "paper":
            continue
        for v, d in adj[u].items():
            if d.get("kind") == "subject" and kinds.get(v) == "concept":
                subjects.setdefault(v, []).append((u, _score(d)))
            elif d.get("kind") == "venue" and kinds.get(v) == "venue":
                venue_of[u] = v
    for found in subjects.values():
        if len(found) > 1:
            found.sort(key=lambda e: (-e[1], str(e[0])))
    concepts = sorted(n for n, k in kinds.items() if k == "concept")
    nodes = G.nodes
    ranked, papers = bounded_selection(concepts, subjects, lambda n: str(nodes[n].get("label") or n),
                                       max_concepts=MAX_CONCEPTS, max_papers=MAX_PAPERS)
    venues = {venue_of[p] for p in papers if p in venue_of}
    return sorted([*ranked, *papers, *venues], key=lambda n: (_KIND_ORDER[kinds[n]], str(n)))


def _score(d: dict[str, Any]) -> float:
    s = d.get("score")
    return float(s) if isinstance(s, (int, float)) and math.isfinite(s) else 0.0


def _search_data(G: nx.Graph, kinds: dict[Any, Any]) -> dict[str, Any]:
    """Every paper, concept and venue in compact rows, for the page's search to find and draw:

    * ``concepts``: ``[id, label, [other labels], papers, [broader concept indexes]]``
    * ``papers``: ``[id, label, title, venue index or -1, year, abstract (cut to the tip's
      length), [concept index, score, ...] by rank]``
    * ``venues``: ``[id, label]``; and the look of each kind, so drawn and found nodes match.
    """
    nodes = dict(G.nodes(data=True))  # plain dicts: networkx's views cost a call per item
    adj = dict(G.adjacency())

    def label(n: Any) -> str:
        d = nodes[n]
        return str(d.get("label") or d.get("title") or n)

    concepts = sorted((n for n, k in kinds.items() if k == "concept"), key=str)
    papers = sorted((n for n, k in kinds.items() if k == "paper"), key=str)
    venues = sorted((n for n, k in kinds.items() if k == "venue"), key=str)
    ci = {c: i for i, c in enumerate(concepts)}
    vi = {v: i for i, v in enumerate(venues)}
    concept_rows = []
    for c in concepts:
        d = nodes[c]
        papers_count = d.get("papers")
        if not isinstance(papers_count, int):
            papers_count = sum(1 for m in adj[c] if kinds.get(m) == "paper")
        own = str(d.get("label") or d.get("title") or c)
        alt, broader = d.get("alt_labels"), d.get("broader")
        concept_rows.append([str(c), own, [str(a) for a in alt if a != own] if alt else [], papers_count,
                             [ci[b] for b in broader if b in ci] if broader else []])
    paper_rows = []
    for p in papers:
        d = nodes[p]
        links, venue = [], -1
        for m, e in adj[p].items():
            if e.get("kind") == "subject" and m in ci:
                links.append((e.get("rank") or 0, ci[m], round(_score(e), 4)))
            elif e.get("kind") == "venue" and m in vi:
                venue = vi[m]
        abstract = _shorten(" ".join(str(d.get("abstract") or "").split()), _ABSTRACT_CHARS)
        paper_rows.append([str(p), label(p), str(d.get("title") or ""), venue, d.get("year"), abstract,
                           [x for _, c, score in sorted(links) for x in (c, score)]])
    return {
        "concepts": concept_rows, "papers": paper_rows, "venues": [[str(v), label(v)] for v in venues],
        "style": _STYLE, "subjectColor": _SUBJECT_COLOR, "labelChars": _LABEL_CHARS,
    }


def bounded_selection(concepts: Sequence[str], subjects: Mapping[str, Sequence[tuple[str, float]]],
                      label: Callable[[str], str], *, max_concepts: int, max_papers: int, min_papers: int = 1,
                      allowed: Collection[str] | None = None) -> tuple[list[str], list[str]]:
    """The concepts and papers a bounded drawing shows (the page of `kg build` above its node
    budget, and the explorer of `kg serve`): the *max_concepts* concepts with the most papers
    (at least *min_papers*), and up to *max_papers* of their papers: first the best-scored
    paper of each drawn concept, then the papers linked to the most drawn concepts.

    *subjects* maps a concept to its (paper, score) pairs, best first; only papers in
    *allowed* count (all when None).
    """
    def mine(c: str) -> list[tuple[str, float]]:
        found = subjects.get(c, ())
        return list(found) if allowed is None else [(p, s) for p, s in found if p in allowed]

    counts = {c: len(subjects.get(c, ())) for c in concepts} if allowed is None else {c: len(mine(c)) for c in concepts}
    eligible = [c for c, k in counts.items() if k >= max(1, min_papers)]
    if 0 < max_concepts < len(eligible):  # none with fewer papers than the last drawn one can be drawn
        least = heapq.nlargest(max_concepts, [counts[c] for c in eligible])[-1]
        eligible = [c for c in eligible if counts[c] >= least]
    ranked = sorted(eligible, key=lambda c: (-counts[c], label(c).lower(), c))[:max_concepts]
    chosen: list[str] = []
    taken: set[str] = set()
    for c in ranked:  # every drawn concept gets one paper, its best-scored one
        if len(chosen) >= max_papers:
            break
        papers = [p for p, _ in mine(c)]
        if papers and not taken.intersection(papers):
            chosen.append(papers[0])
            taken.add(papers[0])
    links: dict[str, tuple[int, float]] = {}
    for c in ranked:
        for p, score in mine(c):
            if p not in taken:
                k, s = links.get(p, (0, 0.0))
                links[p] = (k + 1, s + score)
    for p in sorted(links, key=lambda p: (-links[p][0], -links[p][1], p)):
        if len(chosen) >= max_papers:
            break
        chosen.append(p)
    return ranked, chosen


def _drawn_edges(G: nx.Graph, kinds: dict[Any, Any]) -> list[tuple[Any, Any, dict[str, Any]]]:
    """The edges of *G* between nodes of *kinds* that are drawn: `subject` and `venue` edges,
    each oriented paper first, `cooccurs` edges that make two concepts related (the two in
    order), and `broader` links between concepts (narrower first), in a fixed order."""
    adj = dict(G.adjacency())  # plain dicts: networkx's views cost a call per item
    out = []
    for n, k in kinds.items():  # each edge from one end: a paper, or the first of two concepts
        nbrs = adj[n]
        if k == "paper":
            for m, d in nbrs.items():
                if d.get("kind") in _EDGE_TARGET and kinds.get(m) == _EDGE_TARGET[d["kind"]]:
                    out.append((n, m, d))
        elif k == "concept":
            for m, d in nbrs.items():
                if d.get("related") and d.get("kind") == "cooccurs" and kinds.get(m) == "concept" and str(n) <= str(m):
                    out.append((n, m, {"kind": "related", "count": d.get("count"), "association": d.get("association")}))
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
    if d.get("kind") == "related":
        return {"color": {"color": _RELATED_COLOR, "opacity": 0.7}, "dashes": [8, 4], "width": 1.5,
                "title": f"{a}\nrelated to {b}\n{d.get('count')} papers share both (association {d.get('association')})"}
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
  window.kgTip = tip;
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
.kg-line.kg-rel { border-top: 2px dashed """ + _RELATED_COLOR + """; }
.kg-tip { white-space: normal; max-width: 28em; font-family: system-ui, sans-serif; font-size: 13px; }
.kg-tip strong { display: block; margin-bottom: 2px; }
#kg-legend:has(#kg-search) { max-width: 26em; max-height: calc(100vh - 40px); overflow-y: auto; }
#kg-search-form { display: flex; gap: 6px; margin-top: 8px; }
#kg-search { flex: 1; min-width: 0; padding: 3px 6px; font: inherit; }
#kg-search-results { margin: 4px 0; }
#kg-search-results li { display: block; }
#kg-details h2 { font-size: 14px; margin: 8px 0 4px; }
#kg-details ol { margin: 4px 0; padding-left: 1.6em; }
.kg-link { background: none; border: none; padding: 0; color: #1f5fa8; cursor: pointer; text-align: left; font: inherit; }
.kg-link:hover, .kg-link:focus { text-decoration: underline; }
.kg-kind { display: inline-block; font-size: 11px; color: #ffffff; border-radius: 3px; padding: 0 4px; margin-right: 4px; }
.kg-kind-concept { background: #a85b12; } .kg-kind-paper { background: #2f4b69; } .kg-kind-venue { background: #356b2f; }
.kg-muted { color: #5f6b76; }
.kg-abstract { white-space: pre-wrap; line-height: 1.4; }
""" + "".join(
    f".kg-sw-{k} {{ background: {s['color']}; border-color: {s['border']}; }}\n" for k, s in _STYLE.items()
)


_SEARCH_HTML = """<p id="kg-bounded">The most connected concepts and their papers are drawn; find any other concept,
paper or venue here and it is drawn with its neighbours. Abstracts are shown cut to 300 characters (the whole text is in
graph.ttl and graph.json).</p>
<form id="kg-search-form" role="search"><input id="kg-search" type="search" autocomplete="off"
placeholder="Find a concept, paper or venue" aria-label="Find a concept, paper or venue"><button type="submit">Find</button></form>
<ul id="kg-search-results" aria-label="Search results"></ul>
<div id="kg-details" aria-live="polite"></div>
"""

_SEARCH_SCRIPT = """(function () {
  "use strict";
  var network = window.kgNetwork;
  var ix = JSON.parse(document.getElementById("kg-index").textContent);
  var nodes = network.body.data.nodes, edges = network.body.data.edges;
  var C = ix.concepts, P = ix.papers, V = ix.venues, KIND = {concept: 0, paper: 1, venue: 2};
  var rows = {concept: C, paper: P, venue: V};
  var at = null, papersOf, papersAt, keys;
  function prepare() {
    if (at) return;
    at = {}; papersOf = C.map(function () { return []; }); papersAt = V.map(function () { return []; }); keys = [];
    function key(text, kind, i) { keys.push([String(text).toLowerCase().split(/\\s+/).join(" "), kind, i, String(text)]); }
    C.forEach(function (c, i) { at[c[0]] = ["concept", i]; key(c[1], "concept", i); c[2].forEach(function (a) { key(a, "concept", i); }); key(c[0], "concept", i); });
    P.forEach(function (p, i) {
      at[p[0]] = ["paper", i]; key(p[1], "paper", i); if (p[2]) key(p[2], "paper", i); key(p[0], "paper", i);
      for (var k = 0; k < p[6].length; k += 2) papersOf[p[6][k]].push([i, p[6][k + 1]]);
      if (p[3] >= 0) papersAt[p[3]].push(i);
    });
    V.forEach(function (v, i) { at[v[0]] = ["venue", i]; key(v[1], "venue", i); key(v[0], "venue", i); });
    papersOf.forEach(function (l) { l.sort(function (a, b) { return b[1] - a[1] || a[0] - b[0]; }); });
  }
  function links(kind, i) { return kind === "concept" ? C[i][3] : kind === "paper" ? P[i][6].length / 2 : papersAt[i].length; }
  function plural(k, noun) { return k + " " + noun + (k === 1 ? "" : "s"); }
  function shorten(text, n) {
    if (text.length <= n) return text;
    var cut = text.slice(0, n), space = cut.lastIndexOf(" ");
    if (space > n / 2) cut = cut.slice(0, space);
    return cut.replace(/\\s+$/, "") + "\\u2026";
  }
  function tipText(kind, i) {
    var r = rows[kind][i], lines = [r[1]];
    if (kind === "concept") {
      if (r[2].length) lines.push("also: " + r[2].join(", "));
      lines.push(plural(r[3], "paper"));
    } else if (kind === "paper") {
      if (r[2] && r[2] !== r[1]) lines.push(r[2]);
      var where = [r[3] >= 0 ? V[r[3]][1] : null, r[4]].filter(function (x) { return x !== null && x !== ""; }).join(" ");
      if (where) lines.push(where);
      if (r[5]) lines.push(r[5]);
      lines.push(plural(r[6].length / 2, "concept"));
    } else {
      lines.push(plural(papersAt[i].length, "paper"));
    }
    return lines.join("\\n");
  }
  function nodeData(kind, i) {
    var st = ix.style[kind], r = rows[kind][i];
    return {id: r[0], label: shorten(r[1], ix.labelChars), shape: st.shape, title: window.kgTip(tipText(kind, i)),
            color: {background: st.color, border: st.border, highlight: {background: st.color, border: "#222222"},
                    hover: {background: st.color, border: "#222222"}},
            size: Math.round(Math.min(8 + 4 * Math.sqrt(links(kind, i)), 48) * 100) / 100,
            font: {size: kind === "concept" ? 14 : 12, color: "#222222"}};
  }
  function edgeData(p, c, score) {
    var s = Math.max(0, Math.min(score, 1));
    return {id: P[p][0] + "|" + C[c][0], from: P[p][0], to: C[c][0], width: Math.round((0.5 + 2.5 * s) * 100) / 100,
            color: {color: ix.subjectColor, opacity: 0.8},
            title: window.kgTip(P[p][1] + " \\u2013 " + C[c][1] + "\\nscore " + score.toFixed(4))};
  }
  function neighbourhood(kind, i) {
    var ns = [[kind, i]], es = [];
    if (kind === "concept") {
      papersOf[i].slice(0, 60).forEach(function (ps) { ns.push(["paper", ps[0]]); es.push(edgeData(ps[0], i, ps[1])); });
      C[i][4].forEach(function (b) {
        ns.push(["concept", b]);
        es.push({id: C[i][0] + ">" + C[b][0], from: C[i][0], to: C[b][0], arrows: "to", dashes: [2, 4], width: 1.5,
                 color: {color: ix.style.concept.color, opacity: 0.7}, title: window.kgTip(C[i][1] + "\\nnarrower than " + C[b][1])});
      });
    } else if (kind === "paper") {
      var l = P[i][6];
      for (var k = 0; k < l.length; k += 2) { ns.push(["concept", l[k]]); es.push(edgeData(i, l[k], l[k + 1])); }
      if (P[i][3] >= 0) {
        ns.push(["venue", P[i][3]]);
        es.push({id: P[i][0] + "@" + V[P[i][3]][0], from: P[i][0], to: V[P[i][3]][0], dashes: true, width: 1,
                 color: {color: ix.style.venue.color, opacity: 0.6}, title: window.kgTip(P[i][1] + "\\npublished at " + V[P[i][3]][1])});
      }
    } else {
      papersAt[i].slice(0, 60).forEach(function (p) {
        ns.push(["paper", p]);
        es.push({id: P[p][0] + "@" + V[i][0], from: P[p][0], to: V[i][0], dashes: true, width: 1,
                 color: {color: ix.style.venue.color, opacity: 0.6}, title: window.kgTip(P[p][1] + "\\npublished at " + V[i][1])});
      });
    }
    return {nodes: ns, edges: es};
  }
  function draw(kind, i) {
    var nb = neighbourhood(kind, i), id = rows[kind][i][0];
    var anchor = nodes.get(id) ? network.getPositions([id])[id] : null;
    if (!anchor) {
      var drawn = nb.nodes.map(function (n) { return rows[n[0]][n[1]][0]; }).filter(function (x) { return nodes.get(x); });
      if (drawn.length) {
        var pos = network.getPositions(drawn);
        anchor = {x: 0, y: 0};
        drawn.forEach(function (x) { anchor.x += pos[x].x / drawn.length; anchor.y += pos[x].y / drawn.length; });
      } else {
        anchor = network.getViewPosition();
      }
    }
    var fresh = nb.nodes.filter(function (n, k) { return !nodes.get(rows[n[0]][n[1]][0]); });
    var seen = {}, add = [];
    fresh.forEach(function (n) {
      var d = nodeData(n[0], n[1]);
      if (seen[d.id]) return;
      seen[d.id] = true;
      add.push(d);
    });
    var around = add.filter(function (d) { return d.id !== id; }), radius = 140 + 5 * around.length;
    add.forEach(function (d) { if (d.id === id) { d.x = anchor.x; d.y = anchor.y; } });
    around.forEach(function (d, k) {
      var a = 2 * Math.PI * k / around.length;
      d.x = anchor.x + radius * Math.cos(a);
      d.y = anchor.y + radius * Math.sin(a);
    });
    nodes.add(add);
    var have = {};
    edges.get().forEach(function (e) { have[e.from + "|" + e.to] = have[e.to + "|" + e.from] = true; });
    edges.add(nb.edges.filter(function (e) { return !have[e.from + "|" + e.to]; }));
  }
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function button(kind, i) {
    var b = el("button", rows[kind][i][1], "kg-link");
    b.type = "button";
    b.setAttribute("data-id", rows[kind][i][0]);
    b.addEventListener("click", function () { focus(rows[kind][i][0]); });
    return b;
  }
  function details(kind, i) {
    var box = document.getElementById("kg-details"), r = rows[kind][i], parts = [el("h2", r[1])], list = el("ol");
    if (kind === "concept") {
      if (r[2].length) parts.push(el("p", "also: " + r[2].join(", "), "kg-muted"));
      parts.push(el("p", plural(r[3], "paper"), "kg-muted"));
      papersOf[i].slice(0, 50).forEach(function (ps) { var li = el("li"); li.appendChild(button("paper", ps[0])); list.appendChild(li); });
    } else if (kind === "paper") {
      parts.push(el("p", tipText(kind, i).split("\\n").slice(1, -1).join("\\n"), "kg-abstract"));
      for (var k = 0; k < r[6].length; k += 2) { var li = el("li"); li.appendChild(button("concept", r[6][k])); list.appendChild(li); }
    } else {
      papersAt[i].slice(0, 50).forEach(function (p) { var li = el("li"); li.appendChild(button("paper", p)); list.appendChild(li); });
    }
    parts.push(list);
    box.replaceChildren.apply(box, parts);
    box.setAttribute("data-node", r[0]);
  }
  function focus(id) {
    prepare();
    var found = at[id];
    if (!found) return;
    draw(found[0], found[1]);
    network.selectNodes([id]);
    network.focus(id, {scale: Math.max(1.0, network.getScale()), animation: {duration: 300, easingFunction: "easeInOutQuad"}});
    document.body.setAttribute("data-kg-focused", id);
    details(found[0], found[1]);
  }
  function search(q, limit) {
    prepare();
    q = String(q || "").toLowerCase().split(/\\s+/).filter(Boolean).join(" ");
    if (!q) return [];
    var best = {};
    keys.forEach(function (k) {
      var pos = k[0].indexOf(q);
      if (pos < 0) return;
      var rank = k[0] === q ? 0 : pos === 0 ? 1 : (" " + k[0]).indexOf(" " + q) >= 0 ? 2 : 3, id = k[1] + k[2];
      if (!best[id] || rank < best[id][0]) best[id] = [rank, k[1], k[2], k[3]];
    });
    return Object.keys(best).map(function (x) { return best[x]; }).sort(function (a, b) {
      return a[0] - b[0] || KIND[a[1]] - KIND[b[1]] || links(b[1], b[2]) - links(a[1], a[2]) ||
        (rows[a[1]][a[2]][1].toLowerCase() < rows[b[1]][b[2]][1].toLowerCase() ? -1 : 1);
    }).slice(0, limit || 20).map(function (b) { return {id: rows[b[1]][b[2]][0], kind: b[1], label: rows[b[1]][b[2]][1], matched: b[3]}; });
  }
  function show(found) {
    var list = document.getElementById("kg-search-results");
    list.replaceChildren();
    found.forEach(function (r) {
      var li = el("li"), f = at[r.id];
      li.appendChild(el("span", r.kind, "kg-kind kg-kind-" + r.kind));
      li.appendChild(button(f[0], f[1]));
      if (r.matched !== r.label) li.appendChild(el("span", " (" + r.matched + ")", "kg-muted"));
      list.appendChild(li);
    });
    if (!found.length) list.appendChild(el("li", "Nothing found.", "kg-muted"));
  }
  var timer = null;
  document.getElementById("kg-search").addEventListener("input", function () {
    var q = this.value;
    clearTimeout(timer);
    timer = setTimeout(function () { if (q.trim()) show(search(q)); else document.getElementById("kg-search-results").replaceChildren(); }, 150);
  });
  document.getElementById("kg-search-form").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var found = search(document.getElementById("kg-search").value);
    show(found);
    if (found.length) focus(found[0].id);
  });
  network.on("click", function (params) {
    if (!params.nodes.length) return;
    prepare();
    var f = at[params.nodes[0]];
    if (f) details(f[0], f[1]);
  });
  window.kgSearch = {search: search, focus: focus};
})();"""


def _page(title: str, data_json: str, counts: dict[str, int], *, totals: dict[str, int] | None = None,
          index_json: str | None = None) -> str:
    """The page around the network data; with *index_json* (a bounded drawing of a bigger
    graph, *totals* nodes of each kind) also the search that finds and draws the rest."""
    js, vis_css = _vis_assets()
    items = "".join(
        f'<li><span class="kg-sw kg-sw-{k}"></span>{k}s ({counts[k]}'
        + (f" of {totals[k]}" if totals and totals[k] != counts[k] else "") + ")</li>\n" for k in _STYLE
    )
    search, search_scripts = "", ""
    if index_json is not None:
        search = _SEARCH_HTML
        search_scripts = (f'<script type="application/json" id="kg-index">{index_json}</script>\n'
                          f"<script>\n{_SEARCH_SCRIPT}\n</script>\n")
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
<li><span class="kg-line kg-rel"></span>concept &ndash; related concept (papers share both)</li>
</ul>
<p>Size: number of links. Hover a node or a link for details; drag to pan, scroll to zoom.</p>
{search}</div>
<script type="application/json" id="kg-data">{data_json}</script>
<script>
{js}
</script>
<script>
{_SCRIPT}
</script>
{search_scripts}</body>
</html>
"""
