"""What the map page draws and finds: one JSON payload made from the graph.

The same payload feeds ``graph.html`` (embedded in the page) and ``kg serve``'s explorer
(``/api/map``), so both draw the same map with the same script (``kg/view/static/``). It is
columnar (one list per field) to stay small: a 10,000-paper graph fits in a few MB.

What is on the map: the concepts the model placed (``x``/``y``, docs/model.md), in rank order,
at most `MAX_MAP_CONCEPTS` (``drawn``, with their places and clusters in ``placed``); the
`MAX_LINKS` strongest co-occurrence links between them (``related`` pairs first, then by papers
shared); the clusters; the papers at their own positions. Every concept, paper and venue is in
the payload, whether drawn or not, so the page finds and explains any of them. Texts are plain
strings: the page only ever shows them as text.

Concept types (docs/model.md ``entity_type``), when any concept has one: ``types`` names them (in
`CONCEPT_TYPES` order) and ``concepts.type`` gives each concept's index into it, -1 for none. A
graph without types gives neither key, so its payload is what it was before types.

The authors' keywords (docs/model.md ``keywords``), when any paper has some: ``papers.keywords``
gives each paper's list, in input order, null for a paper with none. A graph without keywords
gives no such key, so its payload (and graph.html) is what it was before keywords.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kg.concepts.entities import CONCEPT_TYPES

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["MAX_LINKS", "MAX_MAP_CONCEPTS", "MapSettings", "map_payload", "rank_key", "with_abstracts"]

MAX_MAP_CONCEPTS = 20_000
MAX_LINKS = 4000
# Abstracts travel whole while they add up to WHOLE_ABSTRACTS characters (a few thousand papers),
# otherwise cut to ABSTRACT_CHARS each (whole ones would take a 10,000-paper page past 20 MB).
WHOLE_ABSTRACTS = 3_000_000
ABSTRACT_CHARS = 300


@dataclass(frozen=True)
class MapSettings:
    """How a payload is made. *abstracts*: ``"auto"`` (whole while they fit `WHOLE_ABSTRACTS`,
    else cut), ``"whole"``, or ``"none"`` (the explorer, whose server gives them on request)."""

    abstracts: str = "auto"
    max_concepts: int = MAX_MAP_CONCEPTS
    max_links: int = MAX_LINKS


def rank_key(d: Mapping[str, Any], node: str) -> tuple:
    """The order in which concept labels claim room on the map: concepts that are not
    ``generic`` first (docs/model.md), then by papers, then by label and id."""
    return (bool(d.get("generic")), -_int(d.get("papers")), _text(d.get("label") or node).lower(), node)


def map_payload(G: nx.Graph, *, title: str = "kg", settings: MapSettings | None = None) -> dict[str, Any]:
    """The payload of the map page for *G* (docs/model.md), deterministic for a given graph."""
    settings = settings or MapSettings()
    nodes = dict(G.nodes(data=True))
    kinds: dict[str, list[str]] = {"concept": [], "paper": [], "venue": []}
    for n, d in nodes.items():
        if d.get("kind") in kinds:
            kinds[d["kind"]].append(n)
    concepts = sorted(kinds["concept"], key=lambda n: rank_key(nodes[n], n))
    papers = sorted(kinds["paper"], key=str)
    ci = {c: i for i, c in enumerate(concepts)}
    found = _paper_links(G, ci, set(kinds["venue"]))
    venues = sorted(kinds["venue"], key=lambda v: (-len(found.venue_papers.get(v, ())), _label(nodes, v).lower(), v))
    vi = {v: i for i, v in enumerate(venues)}
    drawn = [i for i, c in enumerate(concepts) if _position(nodes[c]) is not None][: max(0, settings.max_concepts)]
    clusters = _clusters(G.graph.get("clusters"), ci)
    known = {c["id"] for c in clusters}
    links, related = _cooccurrences(G, concepts, drawn, settings.max_links)
    payload = {
        "title": title,
        "base": _text(G.graph.get("base_iri") or ""),
        "concepts": _concept_columns(nodes, concepts, found),
        "placed": _placed_columns(nodes, concepts, drawn, known),
        "papers": _paper_columns(nodes, papers, found, ci, vi, known, settings.abstracts),
        "venues": {"id": venues, "label": [_label(nodes, v) for v in venues],
                   "papers": [len(found.venue_papers.get(v, ())) for v in venues]},
        "clusters": clusters,
        "drawn": drawn,
        "links": links,
        "related": related,
    }
    _add_types(payload, nodes, concepts)
    _add_keywords(payload, nodes, papers)
    return payload


def _add_types(payload: dict[str, Any], nodes, concepts: list[str]) -> None:
    """``types`` and ``concepts.type`` (the module docstring), when any concept has a type."""
    found = [_entity_type(nodes[c]) for c in concepts]
    present = {t for t in found if t is not None}
    if not present:
        return
    types = [t for t in CONCEPT_TYPES if t in present] + sorted(present - set(CONCEPT_TYPES))
    ti = {t: i for i, t in enumerate(types)}
    payload["types"] = types
    payload["concepts"]["type"] = [-1 if t is None else ti[t] for t in found]


def _add_keywords(payload: dict[str, Any], nodes, papers: list[str]) -> None:
    """``papers.keywords`` (the module docstring), when any paper has the authors' keywords."""
    found = [_keywords(nodes[p].get("keywords")) for p in papers]
    if any(found):
        payload["papers"]["keywords"] = found


def _keywords(value: Any) -> list[str] | None:
    """A paper's keywords as plain strings, in input order, or None when it has none."""
    out = [_text(k) for k in value if k] if isinstance(value, (list, tuple)) else []
    return out or None


def _entity_type(d: Mapping[str, Any]) -> str | None:
    t = d.get("entity_type")
    return t if isinstance(t, str) and t else None


@dataclass(frozen=True)
class _Links:
    subjects: dict[str, list[tuple[str, float, int]]]  # paper -> (concept, score, rank)
    concept_papers: dict[str, list[str]]
    venue_of: dict[str, str]
    venue_papers: dict[str, list[str]]


def _paper_links(G: nx.Graph, concepts: Mapping[str, int], venues: set[str]) -> _Links:
    """Each paper's concepts (by rank) and venue, each concept's and venue's papers, read from the
    papers' own adjacency (a dozen links each; the co-occurrence links are many more)."""
    subjects: dict[str, list[tuple[str, float, int]]] = {}
    concept_papers: dict[str, list[str]] = {}
    venue_of: dict[str, str] = {}
    venue_papers: dict[str, list[str]] = {}
    nodes = G.nodes
    for p, neighbours in G.adjacency():
        if nodes[p].get("kind") != "paper":
            continue
        for v, d in neighbours.items():
            kind = d.get("kind")
            if kind == "subject" and v in concepts:
                subjects.setdefault(p, []).append((v, _score(d.get("score")), _int(d.get("rank"))))
                concept_papers.setdefault(v, []).append(p)
            elif kind == "venue" and v in venues:
                venue_of[p] = v
                venue_papers.setdefault(v, []).append(p)
    for found in subjects.values():
        found.sort(key=lambda e: (e[2], concepts[e[0]]))
    for found in (*concept_papers.values(), *venue_papers.values()):
        found.sort()
    return _Links(subjects, concept_papers, venue_of, venue_papers)


def _concept_columns(nodes, concepts: list[str], links: _Links) -> dict:
    """Every concept: what the page finds, ranks and explains it by."""
    ci = {c: i for i, c in enumerate(concepts)}
    out: dict[str, list] = {k: [] for k in ("id", "label", "alt", "papers", "generic", "broader")}
    for c in concepts:
        d = nodes[c]
        label = _label(nodes, c)
        out["id"].append(c)
        out["label"].append(label)
        out["alt"].append([_text(a) for a in d.get("alt_labels") or [] if _text(a) != label])
        out["papers"].append(_int(d["papers"]) if isinstance(d.get("papers"), int) else len(links.concept_papers.get(c, ())))
        out["generic"].append(1 if d.get("generic") else 0)
        out["broader"].append([ci[b] for b in d.get("broader") or [] if b in ci])
    return out


def _placed_columns(nodes, concepts: list[str], drawn: list[int], clusters: set[int]) -> dict:
    """The drawn concepts' places and clusters, in the order of ``drawn``."""
    out: dict[str, list] = {"x": [], "y": [], "cluster": []}
    for i in drawn:
        d = nodes[concepts[i]]
        x, y = _position(d)
        cluster = d.get("cluster")
        out["x"].append(x)
        out["y"].append(y)
        out["cluster"].append(cluster if isinstance(cluster, int) and cluster in clusters else 0)
    return out


def _paper_columns(nodes, papers: list[str], links: _Links, ci: Mapping[str, int], vi: Mapping[str, int],
                   clusters: set[int], abstracts: str) -> dict:
    given = _abstracts(nodes, papers, abstracts)
    out: dict[str, Any] = {k: [] for k in ("id", "label", "title", "venue", "year", "x", "y", "cluster",
                                           "concepts", "abstract", "urls", "authors", "doi", "arxiv", "journal", "source")}
    for p, abstract in zip(papers, given["abstract"]):
        d = nodes[p]
        label = _label(nodes, p)
        title = _text(d.get("title") or "")
        position = _position(d)
        cluster = d.get("cluster")
        year = d.get("year")
        out["id"].append(p)
        out["label"].append(label)
        out["title"].append(title if title and title != label else None)
        out["venue"].append(vi[links.venue_of[p]] if p in links.venue_of else -1)
        out["year"].append(year if isinstance(year, int) and not isinstance(year, bool) else None)
        out["x"].append(position[0] if position else None)
        out["y"].append(position[1] if position else None)
        out["cluster"].append(cluster if isinstance(cluster, int) and cluster in clusters else 0)
        out["concepts"].append([x for c, score, _ in links.subjects.get(p, []) for x in (ci[c], round(score, 3))])
        out["abstract"].append(abstract)
        out["urls"].append([_text(u) for u in d.get("urls") or []])
        out["authors"].append(_authors(d.get("authors")))
        out["doi"].append(_text(d["doi"]) if d.get("doi") else None)
        out["arxiv"].append(_text(d["arxiv"]) if d.get("arxiv") else None)
        out["journal"].append(_text(d["journal_ref"]) if d.get("journal_ref") else None)
        out["source"].append(_text(d["source_id"]) if d.get("source_id") else None)
    out["cut"], out["served"] = given["cut"], given["served"]
    return out


def _abstracts(nodes, papers: list[str], abstracts: str) -> dict[str, Any]:
    """The papers' columns that *abstracts* (`MapSettings`) decides: ``abstract`` (each paper's, or
    None when the server gives them), ``cut`` (the length they were cut to, or 0) and ``served``."""
    if abstracts == "none":
        return {"abstract": [None] * len(papers), "cut": 0, "served": True}
    texts = [" ".join(_text(nodes[p].get("abstract") or "").split()) for p in papers]
    cut = abstracts == "auto" and sum(map(len, texts)) > WHOLE_ABSTRACTS
    return {"abstract": [_shorten(t, ABSTRACT_CHARS) for t in texts] if cut else texts,
            "cut": ABSTRACT_CHARS if cut else 0, "served": False}


def with_abstracts(payload: dict[str, Any], G: nx.Graph, abstracts: str, *, title: str | None = None) -> dict[str, Any]:
    """*payload* (`map_payload` of *G*, any ``abstracts``) as `map_payload` makes it with *abstracts* (and
    *title*): only the papers' abstracts differ, so a build makes the payload once for the explorer's file
    (``"none"``) and graph.html (``"auto"``) instead of twice. The same keys in the same order."""
    papers = payload["papers"]
    changed = _abstracts(G.nodes, papers["id"], abstracts)
    return {**payload, **({} if title is None else {"title": title}), "papers": {**papers, **changed}}


def _cooccurrences(G: nx.Graph, concepts: list[str], drawn: list[int], budget: int) -> tuple[list[int], list[list[int]]]:
    """The co-occurrence links drawn between drawn concepts, flattened ``[a, b, papers, related, ...]``
    (concept indexes, a < b): ``related`` pairs first, then by papers shared and association; and
    each concept's related concepts (``skos:related``), by association then papers shared. Only
    the adjacency of drawn concepts and of those with 2+ papers is read (a related pair shares 2+)."""
    on_map = {concepts[i]: i for i in drawn}
    ci = {c: i for i, c in enumerate(concepts)}
    links, related = [], [[] for _ in concepts]
    nodes, adj = G.nodes, dict(G.adjacency())  # plain dicts: networkx's views cost a call per item
    for i, c in enumerate(concepts):
        drawn_here = c in on_map
        if not drawn_here and _int(nodes[c].get("papers")) < 2:
            continue
        mine = []
        for m, d in adj[c].items():
            j = on_map.get(m) if drawn_here else None
            if j is not None and i < j and d.get("kind") == "cooccurs":
                links.append((not d.get("related"), -_int(d.get("count")), -_score(d.get("association")), i, j))
            if d.get("related") and d.get("kind") == "cooccurs" and m in ci:
                mine.append((-_score(d.get("association")), -_int(d.get("count")), ci[m]))
        if mine:
            related[i] = [j for *_, j in sorted(mine)]
    links.sort()
    flat = [x for rel, count, _, i, j in links[: max(0, budget)] for x in (i, j, -count, 0 if rel else 1)]
    return flat, related


def _clusters(raw: Any, ci: Mapping[str, int]) -> list[dict[str, Any]]:
    """The clusters of ``G.graph["clusters"]`` (docs/model.md) that the page can show."""
    out = []
    for c in raw if isinstance(raw, list) else []:
        if not isinstance(c, Mapping) or not isinstance(c.get("id"), int) or isinstance(c.get("id"), bool):
            continue
        position = _position(c)
        out.append({"id": c["id"], "label": _text(c.get("label") or f"cluster {c['id']}"),
                    "concepts": _int(c.get("concepts")), "papers": _int(c.get("papers")),
                    "top": [ci[t] for t in c.get("top") or [] if t in ci],
                    "x": position[0] if position else None, "y": position[1] if position else None})
    return sorted(out, key=lambda c: c["id"])


def _position(d: Mapping[str, Any]) -> tuple[float, float] | None:
    x, y = d.get("x"), d.get("y")
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in (x, y)):
        return float(x), float(y)
    return None


def _label(nodes, n: str) -> str:
    d = nodes[n]
    return _text(d.get("label") or d.get("title") or n)


def _authors(value: Any) -> list[list[str | None]] | None:
    """A paper's authors as ``[name, ORCID iD or None]`` pairs, in byline order (docs/model.md:
    ``{"name", "orcid"}`` each; a plain name from a graph of before), or None when it names none."""
    out = []
    for a in value if isinstance(value, list) else []:
        if isinstance(a, Mapping):
            name, orcid = a.get("name"), a.get("orcid")
            if name:
                out.append([_text(name), _text(orcid) if orcid else None])
        elif a:
            out.append([_text(a), None])
    return out or None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _score(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else 0.0


def _shorten(text: str, limit: int) -> str:
    """*text* cut at a word boundary to at most *limit* characters plus an ellipsis."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip() + "\u2026"
