"""The explorer of ``kg serve``: the map page of graph.html, served, with its data from the server.

`Explorer` is the explorer of a networkx graph (docs/model.md), and the reference of what the
server answers; `kg build` writes from it the two files the server reads instead of graph.json
(`EXPLORER_FILE`, `SEARCH_FILE`; `kg.serve.explorer` puts them together with the node details of
the store, `kg.serve.details`):

* ``/`` is `page`: kg/view/templates/map.html with the same scripts as graph.html, and
  ``{"source": "server"}`` where graph.html carries its payload; the page then asks for
* ``/api/map``: `map_json`, the payload of `kg.view.mapdata` without the abstracts (the map,
  every concept, paper and venue, for the page to draw, filter and search; `MapFile` streams it
  from `EXPLORER_FILE`), and
* ``/api/node?id=``: `node`, everything about one node, whole abstract included (a concept's
  type, its votes and its typed relations both ways, each with its best evidence sentences);
* ``/api/search?q=``: `search`, nodes by any label, alias, title or id (for clients of the API;
  the page searches the payload it has, as graph.html does; `SearchFile` answers the same from
  `SEARCH_FILE`).

The page also lists the canned queries (``/queries``) and runs them on the live endpoint
(``/api/query``). It loads nothing from elsewhere, and text from the graph reaches it only as
JSON, shown with ``textContent`` or drawn on the canvas.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import networkx as nx

from kg.concepts.entities import SYMMETRIC
from kg.errors import KGError
from kg.text.chars import utf8
from kg.view.mapdata import MapSettings

__all__ = ["EXPLORER_FILE", "EXPLORER_FORMAT", "MAX_EVIDENCE", "MAX_LISTED", "MAX_RELATED", "RELATION_GROUPS", "SEARCH_FILE",
           "Explorer", "MapFile", "SearchFile", "StaleExplorerFile", "ranked_matches", "write_search_db"]

# The explorer's build outputs (docs/model.md), which `kg serve` reads instead of graph.json:
EXPLORER_FILE = "explorer.json"  # the map payload, as /api/map answers it, behind a format marker
SEARCH_FILE = "explorer-search.sqlite"  # what /api/search queries: each node's label, aliases, titles, ids, indexed
EXPLORER_FORMAT = 2  # the two files' format: bump it when either, or the payload, is written differently
_MARKER = "kg_explorer"  # explorer.json's first key (its value EXPLORER_FORMAT); the search file's meta row's
_BUILT_TITLE = "kg"  # the title explorer.json is written with: the server puts its own in its place
_CHUNK = 1 << 20  # bytes of explorer.json sent at a time

MAX_LISTED = 200  # papers listed for one concept or venue
MAX_RELATED = 10  # concepts listed for one group of typed relations (the canned queries list them all)
MAX_EVIDENCE = 3  # evidence sentences given for one typed relation
_KIND_ORDER = {"concept": 0, "paper": 1, "venue": 2}
# The groups of a concept's typed relations, in the panel's order: (key, words, relation type,
# whether the concept is the relation's head). "A USED-FOR B": A is used for B, B uses A;
# "A EVALUATE-FOR B": A (a dataset or metric) evaluates B, B is evaluated on A.
RELATION_GROUPS = (
    ("used_for", "used for", "USED-FOR", True), ("uses", "uses", "USED-FOR", False),
    ("evaluated_on", "evaluated on", "EVALUATE-FOR", False), ("evaluates", "evaluates", "EVALUATE-FOR", True),
    ("compared_with", "compared with", "COMPARE", True),
    ("part_of", "part of", "PART-OF", True), ("parts", "parts", "PART-OF", False),
    ("feature_of", "feature of", "FEATURE-OF", True), ("features", "features", "FEATURE-OF", False),
    ("kind_of", "kind of", "HYPONYM-OF", True), ("kinds", "kinds", "HYPONYM-OF", False),
    ("with", "with", "CONJUNCTION", True),
)
_GROUP = {(t, head): key for key, _, t, head in RELATION_GROUPS}


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
        adj = dict(G.adjacency())  # plain dicts: networkx's views cost a call per item
        for p in self.papers:
            for v, d in adj[p].items():
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
        self._typed = self._typed_index()
        self._index = self._search_index()
        self.summary = {"papers": len(self.papers), "concepts": len(self.concepts), "venues": len(self.venues)}
        self._map: bytes | None = None

    def _label(self, n: str) -> str:
        return _label_of(n, self.G.nodes[n])

    def _links(self, n: str) -> int:
        kind = self.kind.get(n)
        if kind == "concept":
            return len(self._subjects.get(n, ()))
        if kind == "paper":
            return len(self._paper_concepts.get(n, ()))
        return len(self._venue_papers.get(n, ()))

    def _typed_index(self) -> dict[str, list[tuple[str, str, dict]]]:
        """Concept -> (group key, other concept, relation) for every typed relation it is the head
        or the tail of (docs/model.md ``relations``): built once, so the reverse ones (from other
        concepts' relations) need no scan per request."""
        out: dict[str, list[tuple[str, str, dict]]] = defaultdict(list)
        for c in self.concepts:
            for r in self.G.nodes[c].get("relations") or []:
                kind, other = r.get("type"), r.get("object")
                if (kind, True) not in _GROUP or self.kind.get(other) != "concept":
                    continue
                out[c].append((_GROUP[kind, True], other, r))
                out[other].append((_GROUP[kind, kind in SYMMETRIC], c, r))  # a symmetric one reads the same both ways
        return out

    def _search_index(self) -> list[tuple[str, str, str, int, list[tuple[str, str]]]]:
        """(node, kind, label, links, [(field, text)]) for every node: its label, aliases, ids and a
        paper's title, source id and authors' keywords, each text once (up to case and spacing)."""
        out = []
        attrs = dict(self.G.nodes(data=True))  # looked up directly: G.nodes[n] is a Python call
        for n in self.concepts + self.papers + self.venues:
            d, kind = attrs[n], self.kind[n]
            label = _label_of(n, d)
            keys = [("label", label)]
            if kind == "concept":
                keys += [("altLabel", str(a)) for a in d.get("alt_labels") or []]
            elif kind == "paper":
                if d.get("title"):
                    keys.append(("title", str(d["title"])))
                if d.get("source_id"):
                    keys.append(("source id", str(d["source_id"])))
                keys += [("keywords", str(k)) for k in d.get("keywords") or ()]
            keys += [("id", n), ("id", n.partition(":")[2])]
            out.append((n, kind, label, self._links(n), _distinct(keys)))
        return out

    # ------------------------------------------------------------------ the page and its data
    def page(self) -> bytes:
        """The explorer page (UTF-8): the map page, told to ask this server for its data."""
        from kg.view.page import server_page

        return server_page(self.title)

    def map_json(self) -> bytes:
        """What ``/api/map`` answers (UTF-8 JSON): the map payload, abstracts left to `node`."""
        from kg.view.mapdata import map_payload

        if self._map is None:
            self._map = _json_bytes(map_payload(self.G, title=self.title, settings=self.settings))
        return self._map

    def explorer_file(self, payload: dict[str, Any] | None = None) -> bytes:
        """`EXPLORER_FILE`, a build output: the map payload (*payload* when given: `map_payload` of this
        graph with this explorer's settings, any title) with the title ``kg``, behind
        ``"kg_explorer": EXPLORER_FORMAT``; `MapFile` streams it as `map_json` with the server's title."""
        from kg.view.mapdata import map_payload

        if payload is None:
            payload = map_payload(self.G, title=_BUILT_TITLE, settings=self.settings)
        return _json_bytes({_MARKER: EXPLORER_FORMAT, **payload, "title": _BUILT_TITLE})

    def write_search_file(self, f, *, folder: str | Path | None = None) -> None:
        """`SEARCH_FILE`, a build output, to the binary file *f*: the SQLite database of `SearchFile`
        (`write_search_db`), made in a temporary file in *folder* (the system's when None), then copied."""
        import os
        import tempfile

        fd, tmp = tempfile.mkstemp(prefix=f".{SEARCH_FILE}.", suffix=".tmp", dir=folder)
        os.close(fd)
        try:
            write_search_db(Path(tmp), self._index)
            with open(tmp, "rb") as db:
                while chunk := db.read(_CHUNK):
                    f.write(chunk)
        finally:
            Path(tmp).unlink(missing_ok=True)

    # ------------------------------------------------------------------ search and details
    def search(self, q: str, *, limit: int = 20) -> list[dict[str, Any]]:
        """Nodes with a label, alias, id or (a paper) an authors' keyword containing *q* (case-insensitive), best matches first."""
        return ranked_matches(q, self._index, limit=limit)

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
            } | self._types(n)
        elif kind == "paper":
            out |= {
                "title": d.get("title"), "abstract": str(d.get("abstract") or ""), "venue": d.get("venue"),
                "year": d.get("year"), "urls": list(d.get("urls") or []), "sources": list(d.get("sources") or []),
                "authors": list(d.get("authors") or []), "doi": d.get("doi"), "keywords": list(d.get("keywords") or []),
                "concepts": [{"id": c, "label": self._label(c), "score": _score(e), "rank": e.get("rank"),
                              "phrase": e.get("phrase")} for c, e in self._paper_concepts.get(n, [])],
            }
        else:
            found = self._venue_papers.get(n, [])
            out |= {"papers": len(found), "paper_list": [self._paper_row(p) for p in found[:MAX_LISTED]],
                    "more": max(0, len(found) - MAX_LISTED)}
        return out


    def _types(self, n: str) -> dict[str, Any]:
        """A concept's type, its votes (most first) and its typed relations, grouped as
        `RELATION_GROUPS` says (only the groups it has); nothing for a concept of no type."""
        votes = self.G.nodes[n].get("type_votes") or {}
        found = self._typed.get(n, [])
        if not votes and not found:
            return {}
        groups = []
        for key, words, _, _ in RELATION_GROUPS:
            mine = sorted(((o, r) for k, o, r in found if k == key),
                          key=lambda e: (-(e[1].get("papers") or 0), -_score(e[1]), self._label(e[0]).lower(), e[0]))
            if mine:
                groups.append({"key": key, "label": words, "more": max(0, len(mine) - MAX_RELATED),
                               "items": [self._related_row(o, r) for o, r in mine[:MAX_RELATED]]})
        return {"entity_type": self.G.nodes[n].get("entity_type"),
                "type_votes": dict(sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))), "relations": groups}

    def _related_row(self, other: str, r: dict) -> dict[str, Any]:
        """One typed relation as the panel lists it: the other concept, its support, its best evidence."""
        evidence = sorted(r.get("evidence") or [], key=lambda e: (-_score(e), str(e.get("paper"))))
        return {"id": other, "label": self._label(other), "entity_type": self.G.nodes[other].get("entity_type"),
                "papers": r.get("papers") or len(evidence), "score": _score(r),
                "evidence": [self._evidence_row(e) for e in evidence[:MAX_EVIDENCE]]}

    def _evidence_row(self, e: dict) -> dict[str, Any]:
        """A paper stating a relation, with its sentence: the slice of its abstract, spaces squashed."""
        p = e.get("paper")
        known = self.kind.get(p) == "paper"
        abstract = str(self.G.nodes[p].get("abstract") or "") if known else ""
        start, end = e.get("start"), e.get("end")
        ok = isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(abstract)
        return {"paper": p if known else None, "label": self._label(p) if known else str(p), "score": _score(e),
                "year": self.G.nodes[p].get("year") if known else None,
                "sentence": " ".join(abstract[start:end].split()) if ok else None}


def _search_key(text: str) -> str:
    return " ".join(text.split()).lower()


def _label_of(n: str, d: dict) -> str:
    """The label of node *n* whose attributes are *d*: its label, else its title, else its id."""
    return str(d.get("label") or d.get("title") or n)


def _distinct(keys: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The (field, text) pairs of *keys* with a text not empty nor already given (up to case and spacing)."""
    seen, pairs = set(), []
    for field, text in keys:
        key = _search_key(text)
        if key and key not in seen:
            seen.add(key)
            pairs.append((field, text))
    return pairs


def ranked_matches(q: str, entries, *, limit: int = 20) -> list[dict[str, Any]]:
    """`Explorer.search` over *entries* ((node, kind, label, links, [(field, text)]), as
    `Explorer._search_index` gives them): the nodes with a text containing *q*, a whole text
    first, then one it starts, then a word it starts, then the rest; then concepts, papers,
    venues; then most links, label, id."""
    q = _search_key(q or "")
    if not q:
        return []
    best: dict[str, tuple[int, str, str]] = {}
    about: dict[str, tuple[str, str, int]] = {}
    for n, kind, label, links, pairs in entries:
        for field, text in pairs:
            key = _search_key(text)
            if q not in key:
                continue
            rank = 0 if key == q else 1 if key.startswith(q) else 2 if f" {q}" in f" {key}" else 3
            if n not in best or rank < best[n][0]:
                best[n], about[n] = (rank, field, text), (kind, label, links)
    order = sorted(best, key=lambda n: (best[n][0], _KIND_ORDER[about[n][0]], -about[n][2], about[n][1].lower(), n))
    return [{"id": n, "kind": about[n][0], "label": about[n][1], "field": best[n][1], "matched": best[n][2],
             "links": about[n][2]} for n in order[:limit]]


class StaleExplorerFile(KGError):
    """An explorer file of a build (`EXPLORER_FILE`, `SEARCH_FILE`) that is missing, unreadable or
    of another format: the build is older than this kg, or incomplete."""


def _stale(path: Path, why: str) -> StaleExplorerFile:
    return StaleExplorerFile(f"{path}: {why}; rebuild with `kg build --out {path.parent}`")


def _head(path: Path, size: int) -> bytes:
    try:
        with path.open("rb") as f:
            return f.read(size)
    except FileNotFoundError:
        raise _stale(path, "no such file (a build of an older kg)") from None
    except OSError as e:
        raise _stale(path, f"cannot be read ({e.strerror or e})") from None


def _check_format(path: Path, found: bytes | None) -> None:
    if found is None:
        raise _stale(path, "not an explorer file of kg")
    if int(found) != EXPLORER_FORMAT:
        raise _stale(path, f"written by another version of kg (explorer format {int(found)}, this kg reads {EXPLORER_FORMAT})")


class MapFile:
    """`EXPLORER_FILE` of a build, sent as ``/api/map`` answers: ``{"title":`` and the server's title
    in place of its marker and built title, then the rest of its bytes as they are. Only its head is
    read here (a constant time, whatever the build's size); `StaleExplorerFile` if it is not this
    kg's."""

    def __init__(self, path: str | Path, *, title: str = "kg") -> None:
        self.path = Path(path)
        head = _head(self.path, 4096)
        found = re.match(rb'\{"kg_explorer":(\d+),"title":("(?:[^"\\]|\\.)*"),', head)
        _check_format(self.path, found and found[1])
        self.offset = found.end(2)  # the payload after its title: `,"base":...}`
        self.prefix = b'{"title":' + _json_bytes(title)
        self.size = len(self.prefix) + self.path.stat().st_size - self.offset

    def chunks(self) -> Iterator[bytes]:
        """The answer, a MiB at a time."""
        yield self.prefix
        with self.path.open("rb") as f:
            f.seek(self.offset)
            while chunk := f.read(_CHUNK):
                yield chunk


class SearchFile:
    """`SEARCH_FILE` of a build, an SQLite database (`write_search_db`) queried at each search
    without reading it whole (only its format is read at start): `search` answers what
    `Explorer.search` answers on the build's graph.

    Its nodes are numbered in the ranking's order of kind, links, label and id, and its texts in
    their nodes' order, so that the answer is, rank by rank (0 to 3), the texts of that rank in
    their order, a node taken at its first text: each rank's texts are read as a stream that stops
    once `limit` nodes are found. The texts of rank 0 and 1 (whole, or starting with *q*) are found
    in the B-tree of their keys (read in order when they are many); those of rank 2 and 3 by the
    trigram index (`_grams` of " q" and of q, its candidates checked with instr), or, for a *q* too
    short for it (1 character; 2 for rank 3), by reading the texts in order until enough are found."""

    def __init__(self, path: str | Path) -> None:
        import threading

        self.path = Path(path)
        _head(self.path, 16)  # missing or unreadable: said as for the other files
        try:
            self._db = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro&immutable=1", uri=True, check_same_thread=False)
            found = self._db.execute("SELECT value FROM meta WHERE key = ?", (_MARKER,)).fetchone()
        except sqlite3.Error as e:
            raise _stale(self.path, f"not an explorer file of kg ({e})") from None
        _check_format(self.path, str(found[0]).encode() if found and isinstance(found[0], int) else None)
        self._lock = threading.Lock()

    def _streams(self, q: str) -> Iterator[tuple[str, dict]]:
        """The queries of the texts of rank 0, 1, 2 and 3, each in the texts' order."""
        p = {"q": q, "end": q + _LAST, "grams": _grams(q) if len(q) >= 3 else None, "word": _grams(" " + q) if len(q) >= 2 else None}
        yield "SELECT t.node, t.field, t.text FROM texts AS t WHERE t.key = :q ORDER BY t.id", p
        many = self._db.execute("SELECT count(*) FROM (SELECT 1 FROM texts WHERE key > :q AND key < :end LIMIT 4096)", p).fetchone()[0]
        yield ("SELECT t.node, t.field, t.text FROM texts AS t " + ("NOT INDEXED" if many >= 4096 else "INDEXED BY texts_key")
               + " WHERE t.key > :q AND t.key < :end ORDER BY t.id"), p
        word = "instr(' ' || t.key, ' ' || :q) AND substr(t.key, 1, length(:q)) != :q"
        yield _in_order(word, "word" if p["word"] else None), p
        yield _in_order("instr(t.key, :q) AND NOT instr(' ' || t.key, ' ' || :q)", "grams" if p["grams"] else None), p

    def search(self, q: str, *, limit: int = 20) -> list[dict[str, Any]]:
        """What `Explorer.search` answers on the graph the file was written from."""
        q = _storable(_search_key(q or ""))
        if not q or limit <= 0:
            return []
        try:
            return self._search(q, limit)
        except sqlite3.DatabaseError as e:  # a file damaged since the start (its head was read then)
            raise _stale(self.path, f"cannot be searched ({e})") from None

    def _search(self, q: str, limit: int) -> list[dict[str, Any]]:
        found: dict[int, tuple[str, str]] = {}
        with self._lock:
            for sql, params in self._streams(q):
                cursor = self._db.execute(sql, params)
                for node, field, text in cursor:
                    if len(found) >= limit:
                        break
                    found.setdefault(node, (field, text))
                cursor.close()
                if len(found) >= limit:
                    break
            rows = [self._db.execute("SELECT node, kind, label, links FROM nodes WHERE id = ?", (i,)).fetchone() for i in found]
        return [{"id": n, "kind": _KINDS[kind], "label": label, "field": field, "matched": text, "links": links}
                for (n, kind, label, links), (field, text) in zip(rows, found.values())]


def _in_order(condition: str, grams: str | None) -> str:
    """The texts meeting *condition*, in order: the candidates of the trigram query *grams* (a
    parameter's name), or every text."""
    if grams is None:
        return f"SELECT t.node, t.field, t.text FROM texts AS t NOT INDEXED WHERE {condition} ORDER BY t.id"
    return (f"SELECT t.node, t.field, t.text FROM grams CROSS JOIN texts AS t ON t.id = grams.rowid"
            f" WHERE grams MATCH :{grams} AND {condition} ORDER BY grams.rowid")


_KINDS = tuple(_KIND_ORDER)  # the kinds as the search file numbers them
_LAST = "\U0010ffff"  # after q, the end of the range of the keys that start with q (UTF-8 order is code point order)
_SEARCH_SCHEMA = "\n".join((  # one statement a line
    "PRAGMA page_size = 4096;",
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID;",
    "CREATE TABLE nodes (id INTEGER PRIMARY KEY, node TEXT NOT NULL, kind INTEGER NOT NULL, label TEXT NOT NULL,"
    " links INTEGER NOT NULL);",
    "CREATE TABLE texts (id INTEGER PRIMARY KEY, node INTEGER NOT NULL, pos INTEGER NOT NULL, field TEXT NOT NULL,"
    " text TEXT NOT NULL, key TEXT NOT NULL);",
    "CREATE VIRTUAL TABLE grams USING fts5 (key, content='', columnsize=0, detail=none,"
    " tokenize='trigram case_sensitive 1');",
))


def _grams(q: str) -> str:
    """The FTS5 query of the texts that may hold *q* (3 characters or more): every trigram at 0, 3, 6...
    and the last one (its index keeps no positions, so that the texts found are checked with instr)."""
    starts = sorted({*range(0, len(q) - 2, 3), len(q) - 3})
    if len(starts) > _MAX_GRAMS:  # a long query: some of them, spread over it, first and last kept (instr checks all)
        step = (len(starts) - 1) / (_MAX_GRAMS - 1)
        starts = sorted({starts[round(i * step)] for i in range(_MAX_GRAMS)})
    return " AND ".join('"' + q[i:i + 3].replace('"', '""') + '"' for i in starts)


# The trigrams a query asks the index for, at most: enough to make the candidates few, and a query of 200,000
# characters (a request line holds 256 KiB) costs what one of 50 does (3.7 s with every trigram, at 10,000 abstracts).
_MAX_GRAMS = 16


def _storable(text: str) -> str:
    """*text* with each lone surrogate as U+FFFD, as SQLite (UTF-8) keeps it, and each NUL as U+FFFD too: FTS5
    reads its query as a C string, so a query, or a text, with NUL in it would be cut there. An ASCII text
    without NUL (most of them; ``isascii`` costs no scan) is returned as it is, not encoded and decoded."""
    if text.isascii() and "\x00" not in text:
        return text
    return utf8(text).decode("utf-8").replace("\x00", "\ufffd")


def write_search_db(path: Path, entries) -> None:
    """The SQLite database of `SearchFile` at *path* (a new file), from *entries* as
    `Explorer._search_index` gives them: the same bytes for the same entries (rows written in a fixed
    order, no time or random in them, vacuumed)."""
    order = sorted(entries, key=lambda e: (_KIND_ORDER[e[1]], -e[3], _storable(e[2]).lower(), _storable(e[0])))
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode = OFF")
        db.execute("PRAGMA synchronous = OFF")
        db.execute(f"PRAGMA cache_size = -{_CACHE_KIB}")
        db.executescript(_SEARCH_SCHEMA)
        db.execute("BEGIN")
        db.execute("INSERT INTO meta VALUES (?, ?)", (_MARKER, EXPLORER_FORMAT))
        db.executemany("INSERT INTO nodes VALUES (?, ?, ?, ?, ?)", (
            (i, _storable(n), _KIND_ORDER[kind], _storable(label), links) for i, (n, kind, label, links, _) in enumerate(order)))
        db.executemany("INSERT INTO texts VALUES (NULL, ?, ?, ?, ?, ?)", _text_rows(order))
        db.execute("INSERT INTO grams (rowid, key) SELECT id, key FROM texts")
        db.execute("INSERT INTO grams (grams) VALUES ('optimize')")
        db.execute("CREATE INDEX texts_key ON texts (key)")
        db.execute("COMMIT")
        db.execute("VACUUM")
    finally:
        db.close()


# The page cache of the database being written, in KiB (SQLite's default is 2,000): at 10,000 abstracts the
# file is 44 MB, and with the default cache its pages went back and forth through the file while the texts,
# their trigrams and the key index were written. It changes no byte of the file.
_CACHE_KIB = 64 * 1024


def _text_rows(order) -> Iterator[tuple[int, int, str, str, str]]:
    """The rows of the texts table, (node, pos, field, text, key), from the entries in *order*: the key
    made from the storable text (the same as the storable key: NUL, U+FFFD and lone surrogates are
    neither spaces nor changed by ``lower``), so that each text is made storable once."""
    for i, (*_, pairs) in enumerate(order):
        for pos, (field, text) in enumerate(pairs):
            text = _storable(text)
            yield i, pos, field, text, _search_key(text)


def _json_bytes(value: Any) -> bytes:
    """*value* as compact UTF-8 JSON, a lone surrogate as U+FFFD (as the payload was always sent)."""
    return utf8(json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False))


def _score(d: dict) -> float:
    s = d.get("score")
    return float(s) if isinstance(s, (int, float)) and math.isfinite(s) else 0.0
