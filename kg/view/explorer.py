"""The explorer of ``kg serve``: the map page of graph.html, served, with its data from the server.

* ``/`` is `page`: kg/view/templates/map.html with the same scripts as graph.html, and
  ``{"source": "server"}`` where graph.html carries its payload; the page then asks for
* ``/api/map``: `map_json`, the payload of `kg.view.mapdata` without the abstracts (the map,
  every concept, paper and venue, for the page to draw, filter and search), and
* ``/api/node?id=``: `node`, everything about one node, whole abstract included;
* ``/api/search?q=``: `search`, nodes by any label, alias, title or id (for clients of the API;
  the page searches the payload it has, as graph.html does).

The page also lists the canned queries (``/queries``) and runs them on the live endpoint
(``/api/query``). It loads nothing from elsewhere, and text from the graph reaches it only as
JSON, shown with ``textContent`` or drawn on the canvas.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from typing import Any

import networkx as nx

from kg.text.chars import utf8
from kg.view.mapdata import MapSettings

__all__ = ["MAX_LISTED", "Explorer"]

MAX_LISTED = 200  # papers listed for one concept or venue
_KIND_ORDER = {"concept": 0, "paper": 1, "venue": 2}


class Explorer:
    """The explorer of one graph (docs/model.md): its page, its map payload, its search and node details."""

    def __init__(self, G: nx.Graph, *, title: str = "kg", settings: MapSettings | None = None) -> None:
        self.G, self.title = G, title
        self.settings = settings or MapSettings(abstracts="none")
        self.kind = {n: d.get("kind") for n, d in G.nodes(data=True)}
        self.papers = sorted(n for n, k in self.kind.items() if k == "paper")
        self.concepts = sorted(n for n, k in self.kind.items() if k == "concept")
        self.venues = sorted(n for n, k in self.kind.items() if k == "venue")
        self._subjects: dict[str, list[tuple[str, float]]] = defaultdict(list)  # concept -> (paper, score), best first
        self._paper_concepts: dict[str, list[tuple[str, dict]]] = defaultdict(list)  # paper -> (concept, edge), by rank
        self._venue_papers: dict[str, list[str]] = defaultdict(list)
        for p in self.papers:
            for v, d in G.adj[p].items():
                if d.get("kind") == "subject" and self.kind.get(v) == "concept":
                    self._subjects[v].append((p, _score(d)))
                    self._paper_concepts[p].append((v, d))
                elif d.get("kind") == "venue" and self.kind.get(v) == "venue":
                    self._venue_papers[v].append(p)
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
        self._map: bytes | None = None

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
            keys = [("label", self._label(n))]
            if self.kind[n] == "concept":
                keys += [("altLabel", str(a)) for a in d.get("alt_labels") or []]
            elif self.kind[n] == "paper":
                if d.get("title"):
                    keys.append(("title", str(d["title"])))
                if d.get("source_id"):
                    keys.append(("source id", str(d["source_id"])))
            keys += [("id", n), ("id", n.partition(":")[2])]
            seen = set()
            for field, text in keys:
                key = " ".join(text.split()).lower()
                if key and key not in seen:
                    seen.add(key)
                    out.append((key, n, field, text))
        return out

    # ------------------------------------------------------------------ the page and its data
    def page(self) -> bytes:
        """The explorer page (UTF-8): the map page, told to ask this server for its data."""
        from kg.view.page import render_page

        if self._page is None:
            self._page = render_page({"source": "server"}, title=self.title).encode("utf-8")
        return self._page

    def map_json(self) -> bytes:
        """What ``/api/map`` answers (UTF-8 JSON): the map payload, abstracts left to `node`."""
        from kg.view.mapdata import map_payload

        if self._map is None:
            payload = map_payload(self.G, title=self.title, settings=self.settings)
            self._map = utf8(json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False))  # a lone surrogate as U+FFFD
        return self._map

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
            out |= {
                "alt_labels": [a for a in d.get("alt_labels") or [] if a != out["label"]],
                "papers": len(found),
                "broader": [{"id": b, "label": self._label(b)} for b in d.get("broader") or [] if b in self.kind],
                "narrower": [{"id": c, "label": self._label(c)} for c in sorted(self._narrower.get(n, []))],
                "paper_list": [self._paper_row(p, score=s, rank=self.G.edges[n, p].get("rank"),
                                               phrase=self.G.edges[n, p].get("phrase")) for p, s in found[:MAX_LISTED]],
                "more": max(0, len(found) - MAX_LISTED),
                "cluster": d.get("cluster"),
            }
        elif kind == "paper":
            out |= {
                "title": d.get("title"), "abstract": str(d.get("abstract") or ""), "venue": d.get("venue"),
                "year": d.get("year"), "urls": list(d.get("urls") or []), "sources": list(d.get("sources") or []),
                "authors": list(d.get("authors") or []), "doi": d.get("doi"),
                "concepts": [{"id": c, "label": self._label(c), "score": _score(e), "rank": e.get("rank"),
                              "phrase": e.get("phrase")} for c, e in self._paper_concepts.get(n, [])],
            }
        else:
            found = self._venue_papers.get(n, [])
            out |= {"papers": len(found), "paper_list": [self._paper_row(p) for p in found[:MAX_LISTED]],
                    "more": max(0, len(found) - MAX_LISTED)}
        return out


def _score(d: dict) -> float:
    s = d.get("score")
    return float(s) if isinstance(s, (int, float)) and math.isfinite(s) else 0.0
