"""The explorer page of ``kg serve``: the view of ``kg build`` (kg.view.page: pyvis network data,
vis-network inlined, plain-text tips), drawn bounded, with a panel around it.

* What is drawn at first is bounded, so the page stays quick on big graphs: the
  `MAX_CONCEPTS` concepts with the most papers, and up to `MAX_PAPERS` of their papers
  (first the best-scored paper of each drawn concept, then the papers linked to the most
  drawn concepts), with their venues. Everything else is reachable through the search,
  which draws what it finds next to what is already there.
* Search: by any label of a concept (preferred or alternative) or a paper (label, title), a
  paper id (``p…``), a node id (``concept:…``) or a venue name; the result is selected and
  the view zooms to it.
* Filters: a venue and a minimum number of papers per concept (counted within the venue);
  the server picks the bounded drawing again under them.
* Details: clicking a concept lists its papers; clicking a paper shows its abstract (as
  text), venue and concepts.
* Queries: the canned queries of ``queries/`` with their header comment and an input per
  variable, run on the live SPARQL endpoint (``/api/query``: values are bound, never pasted),
  the result as a table.

The page loads nothing from elsewhere: every script and style is inline and all data comes
from the same server (``/api/…``, ``/queries``). Text from the graph only ever reaches the
page through ``textContent``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import networkx as nx

from kg.view import page as view

__all__ = ["Explorer", "MAX_CONCEPTS", "MAX_PAPERS"]

MAX_CONCEPTS = 300
MAX_PAPERS = 450
MAX_LISTED = 200  # papers listed for one concept or venue
MAX_NEIGHBOURS = 60  # papers drawn around a concept or venue found by search
_KIND_ORDER = {"concept": 0, "paper": 1, "venue": 2}


class Explorer:
    """The explorer of one graph (docs/model.md): its page, its search and the data the page asks for."""

    def __init__(self, G: nx.Graph, *, title: str = "kg") -> None:
        self.G, self.title = G, title
        self.kind = {n: d.get("kind") for n, d in G.nodes(data=True)}
        self.papers = sorted(n for n, k in self.kind.items() if k == "paper")
        self.concepts = sorted(n for n, k in self.kind.items() if k == "concept")
        self.venues = sorted(n for n, k in self.kind.items() if k == "venue")
        self._venue_of: dict[str, str] = {}
        self._subjects: dict[str, list[tuple[str, float]]] = defaultdict(list)  # concept -> (paper, score), best first
        self._paper_concepts: dict[str, list[tuple[str, dict]]] = defaultdict(list)  # paper -> (concept, edge), by rank
        self._venue_papers: dict[str, list[str]] = defaultdict(list)
        for u, v, d in G.edges(data=True):
            if self.kind.get(u) != "paper":
                u, v = v, u
            if self.kind.get(u) != "paper":
                continue
            if d.get("kind") == "subject" and self.kind.get(v) == "concept":
                self._subjects[v].append((u, _score(d)))
                self._paper_concepts[u].append((v, d))
            elif d.get("kind") == "venue" and self.kind.get(v) == "venue":
                self._venue_of[u] = v
                self._venue_papers[v].append(u)
        for found in self._subjects.values():
            found.sort(key=lambda e: (-e[1], e[0]))
        for found in self._paper_concepts.values():
            found.sort(key=lambda e: (e[1].get("rank") or 0, e[0]))
        for found in self._venue_papers.values():
            found.sort(key=lambda p: (-(G.nodes[p].get("year") or 0), self._label(p).lower(), p))
        self._narrower: dict[str, list[str]] = defaultdict(list)
        for c in self.concepts:
            for b in G.nodes[c].get("broader") or []:
                self._narrower[b].append(c)
        self._index = self._search_index()
        self.summary = {"papers": len(self.papers), "concepts": len(self.concepts), "venues": len(self.venues)}
        self._page: bytes | None = None

    # ------------------------------------------------------------------ helpers
    def _label(self, n: str) -> str:
        d = self.G.nodes[n]
        return str(d.get("label") or d.get("title") or n)

    def _links(self, n: str) -> int:
        kind = self.kind.get(n)
        if kind == "concept":
            return len(self._subjects.get(n, ()))
        if kind == "paper":
            return len(self._paper_concepts.get(n, ()))
        return len(self._venue_papers.get(n, ()))

    def _search_index(self) -> list[tuple[str, str, str, str]]:
        """(lower-case key, node, field, text) for every label, alias and id."""
        out = []
        for n in self.concepts + self.papers + self.venues:
            d = self.G.nodes[n]
            local = n.partition(":")[2]
            keys = [("label", self._label(n))]
            if self.kind[n] == "concept":
                keys += [("altLabel", a) for a in d.get("alt_labels") or []]
            elif self.kind[n] == "paper":
                if d.get("title"):
                    keys.append(("title", str(d["title"])))
                if d.get("source_id"):
                    keys.append(("source id", str(d["source_id"])))
            keys += [("id", n), ("id", local)]
            seen = set()
            for field, text in keys:
                key = " ".join(text.split()).lower()
                if key and key not in seen:
                    seen.add(key)
                    out.append((key, n, field, text))
        return out

    def venue_node(self, venue: str | None) -> str | None:
        """The venue node named *venue* (its label or node id), None for no venue."""
        if not venue:
            return None
        for v in self.venues:
            if venue in (v, self._label(v)):
                return v
        from kg.errors import InputError

        raise InputError(f"no venue {venue!r}; venues: {', '.join(self._label(v) for v in self.venues) or 'none'}")

    # ------------------------------------------------------------------ the bounded drawing
    def select(self, *, venue: str | None = None, min_papers: int = 1,
               max_concepts: int | None = None, max_papers: int | None = None) -> list[str]:
        """The nodes drawn under the filters: top concepts, some of their papers, their venues."""
        max_concepts = MAX_CONCEPTS if max_concepts is None else max_concepts
        max_papers = MAX_PAPERS if max_papers is None else max_papers
        v = self.venue_node(venue)
        allowed = None if v is None else set(self._venue_papers.get(v, ()))
        ranked, chosen = view.bounded_selection(self.concepts, self._subjects, self._label, max_concepts=max_concepts,
                                                max_papers=max_papers, min_papers=min_papers, allowed=allowed)
        venues = {self._venue_of[p] for p in chosen if p in self._venue_of}
        if v is not None:
            venues.add(v)
        nodes = ranked + chosen + sorted(venues)
        return sorted(nodes, key=lambda n: (_KIND_ORDER.get(self.kind[n], 3), n))

    def network(self, nodes: list[str], *, degrees: dict[str, int] | None = None) -> dict[str, Any]:
        """vis-network data of *nodes* and the drawn edges between them, made by pyvis as `kg.view.page` makes it."""
        from pyvis.edge import Edge
        from pyvis.network import Network

        # The edges kg.view.page draws (paper-concept, paper-venue, and whatever else it draws), among *nodes*.
        edges = view._drawn_edges(self.G.subgraph(nodes), {n: self.kind[n] for n in nodes})
        degree = dict.fromkeys(nodes, 0)
        for u, v, _ in edges:
            degree[u] += 1
            degree[v] += 1
        if degrees:
            degree.update({n: k for n, k in degrees.items() if n in degree})
        net = Network(directed=False)
        for n in nodes:
            net.add_node(n, **view._node_options(self.G, n, self.kind[n], degree[n]))
        for u, v, d in edges:
            net.edges.append(Edge(u, v, **view._edge_options(self.G, u, v, d), id=f"{u}|{v}|{d['kind']}").options)
        nodes_data, edges_data, *_ = net.get_network_data()
        return {"nodes": nodes_data, "edges": edges_data}

    def _drawn(self, nodes: list[str]) -> dict[str, int]:
        return {k + "s": sum(1 for n in nodes if self.kind[n] == k) for k in ("concept", "paper", "venue")}

    def graph_data(self, *, venue: str | None = None, min_papers: int = 1) -> dict[str, Any]:
        """What ``/api/graph`` answers: the bounded drawing under the filters."""
        nodes = self.select(venue=venue, min_papers=min_papers)
        data = self.network(nodes)
        data["drawn"] = self._drawn(nodes)
        data["iterations"] = view._iterations(len(nodes))
        return data

    def neighborhood(self, n: str) -> dict[str, Any] | None:
        """*n* and its neighbours (a concept's or venue's best papers, bounded), to draw around it."""
        kind = self.kind.get(n)
        if kind is None or kind not in _KIND_ORDER:
            return None
        if kind == "concept":
            around = [p for p, _ in self._subjects.get(n, ())[:MAX_NEIGHBOURS]]
            around += [b for b in self.G.nodes[n].get("broader") or [] if b in self.kind]
        elif kind == "paper":
            around = [c for c, _ in self._paper_concepts.get(n, ())]
            if n in self._venue_of:
                around.append(self._venue_of[n])
        else:
            around = self._venue_papers.get(n, [])[:MAX_NEIGHBOURS]
        nodes = [n] + [m for m in dict.fromkeys(around) if m != n]
        data = self.network(nodes, degrees={m: self._links(m) for m in nodes})
        data["center"] = n
        return data

    # ------------------------------------------------------------------ search and details
    def search(self, q: str, *, limit: int = 20) -> list[dict[str, Any]]:
        """Nodes with a label, alias or id containing *q* (case-insensitive), best matches first."""
        q = " ".join((q or "").split()).lower()
        if not q:
            return []
        best: dict[str, tuple[int, str, str]] = {}
        for key, n, field, text in self._index:
            if q not in key:
                continue
            rank = 0 if key == q else 1 if key.startswith(q) else 2 if f" {q}" in f" {key}" else 3
            if n not in best or rank < best[n][0]:
                best[n] = (rank, field, text)
        order = sorted(best, key=lambda n: (best[n][0], _KIND_ORDER[self.kind[n]], -self._links(n), self._label(n).lower(), n))
        return [{"id": n, "kind": self.kind[n], "label": self._label(n), "field": best[n][1], "matched": best[n][2],
                 "links": self._links(n)} for n in order[:limit]]

    def _paper_row(self, p: str, **extra) -> dict[str, Any]:
        d = self.G.nodes[p]
        return {"id": p, "label": self._label(p), "venue": d.get("venue"), "year": d.get("year"), **extra}

    def node(self, n: str) -> dict[str, Any] | None:
        """What ``/api/node`` answers: everything the panel shows about *n*."""
        kind = self.kind.get(n)
        if kind not in _KIND_ORDER:
            return None
        d = self.G.nodes[n]
        out: dict[str, Any] = {"id": n, "kind": kind, "label": self._label(n)}
        if kind == "concept":
            found = self._subjects.get(n, [])
            edges = {p: self.G.edges[n, p] for p, _ in found[:MAX_LISTED]}
            out |= {
                "alt_labels": [a for a in d.get("alt_labels") or [] if a != out["label"]],
                "papers": len(found),
                "broader": [{"id": b, "label": self._label(b)} for b in d.get("broader") or [] if b in self.kind],
                "narrower": [{"id": c, "label": self._label(c)} for c in sorted(self._narrower.get(n, []))],
                "paper_list": [self._paper_row(p, score=s, rank=edges[p].get("rank"), phrase=edges[p].get("phrase"))
                               for p, s in found[:MAX_LISTED]],
                "more": max(0, len(found) - MAX_LISTED),
            }
        elif kind == "paper":
            out |= {
                "title": d.get("title"), "abstract": str(d.get("abstract") or ""), "venue": d.get("venue"),
                "year": d.get("year"), "urls": list(d.get("urls") or []), "sources": list(d.get("sources") or []),
                "concepts": [{"id": c, "label": self._label(c), "score": _score(e), "rank": e.get("rank"),
                              "phrase": e.get("phrase")} for c, e in self._paper_concepts.get(n, [])],
            }
        else:
            found = self._venue_papers.get(n, [])
            out |= {"papers": len(found), "paper_list": [self._paper_row(p) for p in found[:MAX_LISTED]],
                    "more": max(0, len(found) - MAX_LISTED)}
        return out

    # ------------------------------------------------------------------ the page
    def page(self) -> bytes:
        """The explorer page (UTF-8), with the default drawing."""
        if self._page is None:
            nodes = self.select()
            data = self.network(nodes)
            data["options"] = view._options(len(nodes))
            counts = {k: sum(1 for n in nodes if self.kind[n] == k) for k in ("paper", "concept", "venue")}
            page = view._page(self.title, view._json_for_script(data), counts)
            boot = {
                "summary": self.summary,
                "drawn": self._drawn(nodes),
                "limits": {"concepts": MAX_CONCEPTS, "papers": MAX_PAPERS},
                "venues": [{"id": v, "label": self._label(v), "papers": len(self._venue_papers.get(v, ()))} for v in self.venues],
                "base": str(self.G.graph.get("base_iri") or ""),
            }
            panel = _PANEL + f'<script type="application/json" id="kg-explorer-data">{view._json_for_script(boot)}</script>\n' \
                + f"<script>\n{_SCRIPT}\n</script>\n"
            head, sep, tail = page.rpartition("</head>")
            page = head + f"<style>\n{_CSS}</style>\n" + sep + tail
            body, sep, tail = page.rpartition("</body>")
            self._page = (body + panel + sep + tail).encode("utf-8")
        return self._page


def _score(d: dict) -> float:
    s = d.get("score")
    return float(s) if isinstance(s, (int, float)) and math.isfinite(s) else 0.0


_CSS = """#kg-graph { right: 400px; }
body.kg-wide #kg-graph { right: 55vw; }
#kg-explorer { position: absolute; top: 0; right: 0; bottom: 0; width: 400px; box-sizing: border-box;
  overflow-y: auto; padding: 8px 14px 24px; background: #f7f8fa; border-left: 1px solid #c8ccd0;
  font-size: 13px; color: #222222; }
body.kg-wide #kg-explorer { width: 55vw; }
#kg-explorer h2 { font-size: 15px; margin: 14px 0 6px; }
#kg-explorer h3 { font-size: 13px; margin: 10px 0 4px; }
#kg-explorer section { border-top: 1px solid #dde1e5; padding-top: 4px; margin-top: 8px; }
#kg-explorer input, #kg-explorer select, #kg-explorer button { font: inherit; }
#kg-explorer label { display: block; margin: 4px 0; }
#kg-explorer label > span { display: inline-block; min-width: 7em; color: #444444; }
#kg-search-form { display: flex; gap: 6px; }
#kg-search { flex: 1; min-width: 0; padding: 4px 6px; }
#kg-search-results, #kg-explorer ol, #kg-explorer ul { margin: 4px 0; padding-left: 1.4em; }
#kg-search-results { list-style: none; padding-left: 0; }
#kg-search-results li { margin: 2px 0; }
.kg-link { background: none; border: none; padding: 0; color: #1f5fa8; cursor: pointer; text-align: left; }
.kg-link:hover, .kg-link:focus { text-decoration: underline; }
.kg-kind { display: inline-block; font-size: 11px; color: #ffffff; border-radius: 3px; padding: 0 4px; margin-right: 4px; }
.kg-kind-concept { background: #a85b12; } .kg-kind-paper { background: #2f4b69; } .kg-kind-venue { background: #356b2f; }
.kg-muted { color: #5f6b76; }
.kg-error { color: #a11d1d; white-space: pre-wrap; }
.kg-abstract { white-space: pre-wrap; line-height: 1.4; }
#kg-query-doc { white-space: pre-wrap; font-size: 12px; background: #eef0f3; padding: 6px; max-height: 12em; overflow: auto; }
#kg-query-result { overflow-x: auto; }
#kg-query-table { border-collapse: collapse; font-size: 12px; }
#kg-query-table th, #kg-query-table td { border: 1px solid #d0d5da; padding: 2px 5px; vertical-align: top; text-align: left; }
#kg-query-table th { background: #e8ebef; position: sticky; top: 0; }
#kg-query-inputs input { width: 14em; }
"""

_PANEL = """<div id="kg-explorer" role="complementary" aria-label="Explorer">
<form id="kg-search-form" role="search">
<input id="kg-search" type="search" placeholder="Find a concept or paper: label, alias or id" autocomplete="off" aria-label="Find a concept or paper">
<button type="submit">Find</button>
<button type="button" id="kg-wide" title="Wider panel" aria-label="Wider panel">&#x21D4;</button>
</form>
<ul id="kg-search-results" aria-label="Search results"></ul>
<section id="kg-filters" aria-label="Filters">
<h2>Filters</h2>
<label><span>Venue</span><select id="kg-venue"><option value="">all venues</option></select></label>
<label><span>Concepts with at least</span><input id="kg-min-papers" type="number" min="1" step="1" value="1" style="width:5em"> papers</label>
<button type="button" id="kg-apply">Apply</button>
<p id="kg-drawn" class="kg-muted"></p>
</section>
<section id="kg-details" aria-live="polite"><p class="kg-muted">Click a concept or a paper, or find one.</p></section>
<section id="kg-queries" aria-label="Queries">
<h2>Queries</h2>
<label><span>Query</span><select id="kg-query-name" aria-label="Query"></select></label>
<p id="kg-query-summary"></p>
<details><summary>About this query</summary><pre id="kg-query-doc"></pre></details>
<div id="kg-query-inputs"></div>
<button type="button" id="kg-query-run">Run</button>
<span id="kg-query-status" class="kg-muted" role="status"></span>
<div id="kg-query-result"></div>
</section>
</div>
"""

_SCRIPT = """(function () {
  "use strict";
  const boot = JSON.parse(document.getElementById("kg-explorer-data").textContent);
  const $ = (id) => document.getElementById(id);
  const network = window.kgNetwork;
  let nodes = network.body.data.nodes;
  let edges = network.body.data.edges;
  window.kgExplorer = {focus: focusNode, applyFilters: applyFilters, runQuery: runQuery};

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function tip(text) {
    const box = el("div", null, "kg-tip");
    text.split("\\n").forEach(function (line, i) { box.appendChild(el(i === 0 ? "strong" : "div", line)); });
    return box;
  }
  function withTips(items) {
    return items.map(function (item) {
      const copy = Object.assign({}, item);
      if (typeof copy.title === "string") copy.title = tip(copy.title);
      return copy;
    });
  }
  async function getJSON(url, options) {
    const r = await fetch(url, options);
    const body = await r.text();
    if (!r.ok) throw new Error(body.trim() || (r.status + " " + r.statusText));
    return JSON.parse(body);
  }
  function plural(k, noun) { return k + " " + noun + (k === 1 ? "" : "s"); }
  function showDrawn(d) {
    const s = boot.summary;
    $("kg-drawn").textContent = "Drawn: " + d.concepts + " of " + plural(s.concepts, "concept") + ", " +
      d.papers + " of " + plural(s.papers, "paper") + ", " + d.venues + " of " + plural(s.venues, "venue") +
      ". Find the others with the search.";
    [["paper", d.papers], ["concept", d.concepts], ["venue", d.venues]].forEach(function (kn) {
      const swatch = document.querySelector("#kg-legend .kg-sw-" + kn[0]);  /* the legend of kg.view.page */
      if (swatch && swatch.parentNode.lastChild !== swatch) swatch.parentNode.lastChild.textContent = kn[0] + "s (" + kn[1] + ")";
    });
  }
  function setView(state) { document.body.setAttribute("data-kg-view", state); }
  function kindBadge(kind) { return el("span", kind, "kg-kind kg-kind-" + kind); }
  function nodeButton(id, label) {
    const b = el("button", label, "kg-link");
    b.type = "button";
    b.setAttribute("data-id", id);
    b.addEventListener("click", function () { focusNode(id); });
    return b;
  }

  /* ---------------------------------------------------------------- search */
  let searchSeq = 0, searchTimer = null;
  async function runSearch(q) {
    const seq = ++searchSeq;
    const list = $("kg-search-results");
    if (!q.trim()) { list.replaceChildren(); return []; }
    let found;
    try { found = await getJSON("/api/search?q=" + encodeURIComponent(q)); }
    catch (e) { list.replaceChildren(el("li", e.message, "kg-error")); return []; }
    if (seq !== searchSeq) return found;
    list.replaceChildren();
    found.forEach(function (r) {
      const li = el("li");
      li.appendChild(kindBadge(r.kind));
      li.appendChild(nodeButton(r.id, r.label));
      if (r.matched !== r.label) li.appendChild(el("span", " (" + r.field + ": " + r.matched + ")", "kg-muted"));
      list.appendChild(li);
    });
    if (!found.length) list.appendChild(el("li", "Nothing found.", "kg-muted"));
    return found;
  }
  $("kg-search").addEventListener("input", function () {
    clearTimeout(searchTimer);
    const q = this.value;
    searchTimer = setTimeout(function () { runSearch(q); }, 150);
  });
  $("kg-search-form").addEventListener("submit", async function (ev) {
    ev.preventDefault();
    clearTimeout(searchTimer);
    const found = await runSearch($("kg-search").value);
    if (found.length) await focusNode(found[0].id);
  });
  $("kg-wide").addEventListener("click", function () {
    document.body.classList.toggle("kg-wide");
    setTimeout(function () { network.redraw(); }, 50);
  });

  /* ---------------------------------------------------------------- focus */
  function addNeighborhood(nb) {
    const have = new Set(nodes.getIds());
    let anchor;
    if (have.has(nb.center)) {
      anchor = network.getPositions([nb.center])[nb.center];
    } else {
      const drawn = nb.nodes.filter(function (n) { return have.has(n.id); }).map(function (n) { return n.id; });
      if (drawn.length) {
        const pos = network.getPositions(drawn);
        anchor = {x: 0, y: 0};
        drawn.forEach(function (id) { anchor.x += pos[id].x / drawn.length; anchor.y += pos[id].y / drawn.length; });
      } else {
        anchor = network.getViewPosition();
      }
    }
    const fresh = nb.nodes.filter(function (n) { return !have.has(n.id); });
    const around = fresh.filter(function (n) { return n.id !== nb.center; });
    const radius = 140 + 5 * around.length;
    fresh.forEach(function (n) {
      if (n.id === nb.center) { n.x = anchor.x; n.y = anchor.y; }
    });
    around.forEach(function (n, i) {
      const a = 2 * Math.PI * i / around.length;
      n.x = anchor.x + radius * Math.cos(a);
      n.y = anchor.y + radius * Math.sin(a);
    });
    nodes.add(withTips(fresh));
    const haveEdges = new Set(edges.getIds());
    edges.add(withTips(nb.edges.filter(function (e) { return !haveEdges.has(e.id); })));
  }
  async function focusNode(id) {
    try {
      if (!nodes.get(id)) addNeighborhood(await getJSON("/api/neighborhood?id=" + encodeURIComponent(id)));
    } catch (e) {
      $("kg-details").replaceChildren(el("p", e.message, "kg-error"));
      return;
    }
    network.selectNodes([id]);
    network.focus(id, {scale: Math.max(1.0, network.getScale()), animation: {duration: 300, easingFunction: "easeInOutQuad"}});
    document.body.setAttribute("data-kg-focused", id);
    await showDetails(id);
  }
  network.on("click", function (params) {
    if (params.nodes.length) {
      document.body.setAttribute("data-kg-focused", params.nodes[0]);
      showDetails(params.nodes[0]);
    }
  });

  /* ---------------------------------------------------------------- details */
  function list(items, id, render) {
    const ol = el("ol");
    if (id) ol.id = id;
    items.forEach(function (item) { const li = el("li"); render(item, li); ol.appendChild(li); });
    return ol;
  }
  function where(p) { return [p.venue, p.year].filter(function (x) { return x !== null && x !== undefined && x !== ""; }).join(" "); }
  async function showDetails(id) {
    const box = $("kg-details");
    let d;
    try { d = await getJSON("/api/node?id=" + encodeURIComponent(id)); }
    catch (e) { box.replaceChildren(el("p", e.message, "kg-error")); return; }
    const parts = [];
    const h = el("h2");
    h.appendChild(kindBadge(d.kind));
    h.appendChild(document.createTextNode(d.label));
    parts.push(h);
    if (d.kind === "concept") {
      if (d.alt_labels.length) parts.push(el("p", "also: " + d.alt_labels.join(", "), "kg-muted"));
      if (d.broader.length) {
        parts.push(el("h3", "Broader"));
        parts.push(list(d.broader, null, function (c, li) { li.appendChild(nodeButton(c.id, c.label)); }));
      }
      if (d.narrower.length) {
        parts.push(el("h3", "Narrower"));
        parts.push(list(d.narrower, null, function (c, li) { li.appendChild(nodeButton(c.id, c.label)); }));
      }
      parts.push(el("h3", "Papers (" + d.papers + ")"));
      parts.push(list(d.paper_list, "kg-paper-list", function (p, li) {
        li.appendChild(nodeButton(p.id, p.label));
        li.appendChild(el("span", " " + [where(p), "score " + p.score.toFixed(3)].filter(Boolean).join(" \\u00b7 "), "kg-muted"));
      }));
      if (d.more) parts.push(el("p", "and " + d.more + " more", "kg-muted"));
    } else if (d.kind === "paper") {
      if (d.title && d.title !== d.label) parts.push(el("p", d.title));
      parts.push(el("p", where(d) || "no venue", "kg-muted"));
      parts.push(el("h3", "Abstract"));
      const abstract = el("p", d.abstract, "kg-abstract");
      abstract.id = "kg-abstract";
      parts.push(abstract);
      parts.push(el("h3", "Concepts (" + d.concepts.length + ")"));
      parts.push(list(d.concepts, "kg-concept-list", function (c, li) {
        li.appendChild(nodeButton(c.id, c.label));
        li.appendChild(el("span", " \\u201c" + c.phrase + "\\u201d \\u00b7 score " + c.score.toFixed(3), "kg-muted"));
      }));
      if (d.urls.length) {
        parts.push(el("h3", "Links in the abstract"));
        parts.push(list(d.urls, null, function (u, li) { li.textContent = u; }));
      }
      parts.push(el("p", d.id.replace(/^paper:/, "id ") + (d.sources.length ? " \\u00b7 " + d.sources.join(", ") : ""), "kg-muted"));
    } else {
      parts.push(el("h3", "Papers (" + d.papers + ")"));
      parts.push(list(d.paper_list, "kg-paper-list", function (p, li) {
        li.appendChild(nodeButton(p.id, p.label));
        li.appendChild(el("span", " " + where(p), "kg-muted"));
      }));
      if (d.more) parts.push(el("p", "and " + d.more + " more", "kg-muted"));
    }
    box.replaceChildren.apply(box, parts);
    box.setAttribute("data-node", id);
  }

  /* ---------------------------------------------------------------- filters */
  boot.venues.forEach(function (v) {
    const o = el("option", v.label + " (" + plural(v.papers, "paper") + ")");
    o.value = v.id;
    $("kg-venue").appendChild(o);
  });
  showDrawn(boot.drawn);
  async function applyFilters() {
    const venue = $("kg-venue").value;
    const min = $("kg-min-papers").value || "1";
    setView("busy");
    let d;
    try {
      d = await getJSON("/api/graph?venue=" + encodeURIComponent(venue) + "&min_papers=" + encodeURIComponent(min));
    } catch (e) {
      $("kg-drawn").textContent = e.message;
      setView("ready");
      return;
    }
    nodes = new vis.DataSet(withTips(d.nodes));
    edges = new vis.DataSet(withTips(d.edges));
    showDrawn(d.drawn);
    if (!d.nodes.length) {
      network.setOptions({physics: {enabled: false}});
      network.setData({nodes: nodes, edges: edges});
      setView("ready");
      return;
    }
    network.setOptions({physics: {enabled: true, stabilization: {enabled: true, iterations: d.iterations, fit: true}}});
    network.once("stabilizationIterationsDone", function () {
      network.setOptions({physics: {enabled: false}});
      setView("ready");
    });
    network.setData({nodes: nodes, edges: edges});
  }
  $("kg-apply").addEventListener("click", applyFilters);

  /* ---------------------------------------------------------------- queries */
  let queries = [];
  function showQuery() {
    const q = queries.find(function (x) { return x.name === $("kg-query-name").value; });
    if (!q) return;
    $("kg-query-summary").textContent = q.summary;
    $("kg-query-doc").textContent = q.description;
    const box = $("kg-query-inputs");
    box.replaceChildren();
    const example = q.examples[0] || {};
    q.variables.forEach(function (v) {
      const label = el("label");
      label.appendChild(el("span", "?" + v.name));
      const input = el("input");
      input.type = "text";
      input.setAttribute("data-var", v.name);
      input.placeholder = example[v.name] || "";
      input.title = v.description;
      input.setAttribute("aria-label", "?" + v.name + ": " + v.description);
      input.addEventListener("keydown", function (ev) { if (ev.key === "Enter") runQuery(); });
      label.appendChild(input);
      box.appendChild(label);
    });
    $("kg-query-result").replaceChildren();
    $("kg-query-status").textContent = q.variables.length ? "Empty fields stay unbound; values are bound, never pasted." : "";
  }
  function nodeOf(iri) {
    if (!boot.base || iri.indexOf(boot.base) !== 0) return null;
    const rest = iri.slice(boot.base.length);
    const slash = rest.indexOf("/");
    if (slash < 0) return null;
    const kind = rest.slice(0, slash);
    return (kind === "concept" || kind === "paper" || kind === "venue") ? kind + ":" + rest.slice(slash + 1) : null;
  }
  function renderResult(res, ms) {
    const box = $("kg-query-result");
    const status = $("kg-query-status");
    if (Object.prototype.hasOwnProperty.call(res, "boolean")) {
      box.replaceChildren(el("p", String(res.boolean)));
      status.textContent = "in " + Math.round(ms) + " ms";
      status.setAttribute("data-state", "done");
      return;
    }
    const vars = res.head.vars;
    const rows = res.results.bindings;
    const table = el("table");
    table.id = "kg-query-table";
    const head = el("tr");
    vars.forEach(function (v) { head.appendChild(el("th", v)); });
    const thead = el("thead");
    thead.appendChild(head);
    table.appendChild(thead);
    const tbody = el("tbody");
    rows.slice(0, 1000).forEach(function (b) {
      const tr = el("tr");
      vars.forEach(function (v) {
        const t = b[v];
        const td = el("td");
        if (t) {
          const node = t.type === "uri" ? nodeOf(t.value) : null;
          if (node) td.appendChild(nodeButton(node, t.value)); else td.textContent = t.value;
        }
        tr.appendChild(td);
      });
      tbody.appendChild(tr);
    });
    table.appendChild(tbody);
    box.replaceChildren(table);
    status.textContent = plural(rows.length, "row") + " in " + Math.round(ms) + " ms" + (rows.length > 1000 ? " (the first 1000 shown)" : "");
    status.setAttribute("data-state", "done");
  }
  async function runQuery() {
    const name = $("kg-query-name").value;
    const bindings = {};
    document.querySelectorAll("#kg-query-inputs input").forEach(function (i) {
      if (i.value.trim() !== "") bindings[i.getAttribute("data-var")] = i.value;
    });
    const status = $("kg-query-status");
    status.textContent = "running\\u2026";
    status.setAttribute("data-state", "running");
    const t0 = performance.now();
    try {
      const res = await getJSON("/api/query", {method: "POST",
        headers: {"Content-Type": "application/json", "Accept": "application/sparql-results+json"},
        body: JSON.stringify({name: name, bindings: bindings})});
      renderResult(res, performance.now() - t0);
    } catch (e) {
      $("kg-query-result").replaceChildren(el("p", e.message, "kg-error"));
      status.textContent = "failed";
      status.setAttribute("data-state", "error");
    }
  }
  $("kg-query-name").addEventListener("change", showQuery);
  $("kg-query-run").addEventListener("click", runQuery);
  getJSON("/queries").then(function (found) {
    queries = found;
    const select = $("kg-query-name");
    found.forEach(function (q) {
      const o = el("option", q.name);
      o.value = q.name;
      o.title = q.summary;
      select.appendChild(o);
    });
    showQuery();
    document.body.setAttribute("data-kg-queries", "loaded");
  }).catch(function (e) {
    $("kg-query-status").textContent = e.message;
    document.body.setAttribute("data-kg-queries", "failed");
  });
  setView(window.kgReady ? "ready" : "busy");
  if (!window.kgReady) {
    network.once("stabilizationIterationsDone", function () { setView("ready"); });
    network.once("stabilized", function () { setView("ready"); });
  }
})();"""
