"""The explorer's node details (``/api/node?id=``) read from a build's Oxigraph store, not from graph.json.

`StoreDetails.node` gives what `kg.view.explorer.Explorer.node` gives for the same node, in a
few SPARQL queries per request over the RDF that `kg.rdf.statements` writes (docs/model.md):

* a concept: one query (its labels, broader and narrower concepts, cluster, classes, type votes,
  paper count, its typed relations both ways, and its first `MAX_LISTED` papers, best score first
  then id, ``ORDER BY``/``LIMIT`` over the links of its `kgv:LinkBlock`s that start by place
  `MAX_LISTED`, where its own links come first in score order, so that a concept of 20,000 papers
  reads ~300 links, not 20,000; read them all again only when the last one listed ties with the
  last one read), then, if it has typed relations, one query for the best `MAX_EVIDENCE` evidence of
  each relation listed (a ``LIMIT`` subquery per relation);
* a paper: one query (its literals, venue, authors by position, DOI, and its concepts);
* a venue: one query (its name, paper count, and its first `MAX_LISTED` papers, latest year
  first, then `kgv:labelOrder`, which is lowercase label then id: linear in its papers, as the
  store has no (venue, year) -> paper order).

A node id ``<kind>:<local>`` is the IRI ``<base><kind>/<local>`` (`kg.rdf.statements`); an id
that is no IRI, or names nothing of its kind in the store, gives None.

The order of a paper's ``urls``, ``sources`` and ``keywords`` and of a concept's ``broader``
concepts is the graph's: the one their ``kgv:urlOrder`` (``sourceOrder``, ``keywordOrder``,
``broaderOrder``) literal gives, or, without one (the graph's order is the sorted one), sorted
(`kg.rdf.vocabulary.in_order`).

What the RDF does not keep, and so the store cannot give as the graph does (docs/model.md): an
author's own ORCID iD (the person's is given: a person with an iD includes the authors without one
so named) and the spacing of an author's name (squashed); a URL is given as its IRI (`kg.rdf.vocabulary.link_iri` percent-encodes what IRIs forbid); an
evidence sentence that is blank is not stated (None here, "" in the explorer); a paper's ``venue`` is
its venue's name, the first spelling of that venue's slug (the graph keeps each paper's own spelling).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from kg.concepts.entities import SYMMETRIC
from kg.rdf.vocabulary import CONCEPT_CLASSES, DEFAULT_BASE, RELATION_PREDICATES, in_order, prefixes
from kg.view.explorer import MAX_EVIDENCE, MAX_LISTED, MAX_RELATED, RELATION_GROUPS

__all__ = ["StoreDetails", "http_runner", "local_runner"]

Rows = list[dict[str, str]]  # each row: variable -> the term's value (an IRI's or a literal's lexical form)
Runner = Callable[[str], Rows]

_KINDS = ("concept", "paper", "venue")
_GROUP = {(t, head): (key, words) for key, words, t, head in RELATION_GROUPS}
_TYPE_OF = {name: t for t, name in RELATION_PREDICATES.items()}  # kgv predicate name -> relation type
_DOI = "https://doi.org/"


def local_runner(store) -> Runner:
    """Queries run in this process on a `pyoxigraph.Store` (or the store folder of a build,
    ``<build>/store/data``, or the build folder itself, opened read-only)."""
    import pyoxigraph as ox

    if not isinstance(store, ox.Store):
        path = Path(store)
        if (path / "store" / "data").is_dir():
            path = path / "store" / "data"
        store = ox.Store.read_only(str(path))

    def run(query: str) -> Rows:
        result = store.query(query)
        names = [v.value for v in result.variables]
        return [{name: term.value for name, term in zip(names, solution) if term is not None} for solution in result]
    return run


def http_runner(url: str, *, timeout: float = 30.0) -> Runner:
    """Queries sent to a SPARQL endpoint (``http://127.0.0.1:PORT/query``, the `kg serve` worker), one
    keep-alive connection per thread."""
    import http.client
    import threading
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    local = threading.local()

    def run(query: str) -> Rows:
        for attempt in (1, 2):
            conn = getattr(local, "conn", None)
            if conn is None:
                conn = local.conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
            try:
                conn.request("POST", parts.path or "/query", body=query.encode("utf-8"),
                             headers={"Content-Type": "application/sparql-query", "Accept": "application/sparql-results+json"})
                resp = conn.getresponse()
                body = resp.read()
            except (OSError, http.client.HTTPException):
                conn.close()
                local.conn = None
                if attempt == 2:
                    raise
                continue
            if resp.status != 200:
                raise RuntimeError(f"SPARQL endpoint answered {resp.status}: {body[:300]!r}")
            return [{k: v["value"] for k, v in b.items()} for b in json.loads(body)["results"]["bindings"]]
        raise AssertionError("unreachable")
    return run


class StoreDetails:
    """The node details of the explorer, read from an Oxigraph store by *run* (`local_runner`,
    `http_runner`) under the graph's *base* IRI (by default the store's: its concept scheme's)."""

    def __init__(self, run: Runner, *, base: str | None = None) -> None:
        self.run = run
        ns = prefixes(base or DEFAULT_BASE)
        self.prologue = "".join(f"PREFIX {k}: <{v}>\n" for k, v in ns.items() if k != "kg")
        if base is None:
            found = run(self.prologue + "SELECT ?s WHERE { ?s a skos:ConceptScheme } LIMIT 1")
            base = found[0]["s"].removesuffix("concepts") if found else DEFAULT_BASE
        self.base, self.kgv = base, ns["kgv"]
        self.listed = MAX_LISTED  # (a test lists fewer, to page through small graphs' link blocks)
        self._classes = {ns["kgv"] + name: name for name in CONCEPT_CLASSES}

    # ------------------------------------------------------------------ ids and IRIs
    def _iri(self, n: str) -> str | None:
        """``<IRI>`` of node id *n*, or None if *n* is no node id of a kind the explorer shows, or no IRI."""
        import pyoxigraph as ox

        if not isinstance(n, str):
            return None
        kind, sep, local = n.partition(":")
        if not sep or kind not in _KINDS or not local:
            return None
        try:
            return str(ox.NamedNode(f"{self.base}{kind}/{local}"))
        except (ValueError, TypeError):
            return None

    def _id(self, iri: str) -> str:
        """The node id of a node's IRI."""
        kind, _, local = iri.removeprefix(self.base).partition("/")
        return f"{kind}:{local}"

    def _q(self, body: str) -> Rows:
        return self.run(self.prologue + body)

    # ------------------------------------------------------------------ details
    def node(self, n: str) -> dict[str, Any] | None:
        """What ``/api/node`` answers: everything the panel shows about *n* (`Explorer.node`), or None."""
        iri = self._iri(n)
        if iri is None:
            return None
        kind = n.partition(":")[0]
        return {"concept": self._concept, "paper": self._paper, "venue": self._venue}[kind](n, iri)

    _ROW = """OPTIONAL {{ {p} schema:name ?name }} OPTIONAL {{ {p} schema:headline ?title }}
        OPTIONAL {{ {p} schema:isPartOf ?v . ?v schema:name ?venue }} OPTIONAL {{ {p} schema:datePublished ?date }}"""

    def _paper_row(self, r: dict[str, str], **extra) -> dict[str, Any]:
        p = self._id(r["p"])
        return {"id": p, "label": _label(r.get("name"), r.get("title"), p), "venue": r.get("venue"), "year": _year(r.get("date")),
                **extra}

    def _concept(self, n: str, c: str) -> dict[str, Any] | None:
        rows = self.run(self._concept_query(c, self._listed_links(c)))
        if not rows:
            return None
        read = next((r for r in rows if "read" in r), None)
        count = next((int(r["papers"]) for r in rows if "papers" in r), 0)
        if read is not None and int(read["read"]) < count:
            # Not all of its papers were read: the list is theirs unless the last one listed ties with the last
            # one read (a paper of that score further on may come first by id): then read them all.
            listed = sorted((_float(r["score"]) for r in rows if "p" in r), reverse=True)
            if len(listed) < self.listed or listed[-1] <= _float(read.get("floor")):
                rows = self.run(self._concept_query(c, self._all_links(c)))
        label, alts, broader, broader_order, narrower, cluster, classes, votes = None, [], {}, None, {}, None, set(), {}
        papers, relations = [], {}
        for r in rows:
            if "label" in r:
                label = r["label"]
            elif "alt" in r:
                alts.append(r["alt"])
            elif "broader" in r:
                broader[r["broader"]] = r["broaderLabel"]
            elif "broaderOrder" in r:
                broader_order = r["broaderOrder"]
            elif "narrower" in r:
                narrower[self._id(r["narrower"])] = r["narrowerLabel"]
            elif "cluster" in r:
                cluster = int(r["cluster"].rpartition("/")[2])
            elif "class" in r:
                classes.add(r["class"])
            elif "vote" in r:
                votes[self._classes.get(r["voteType"], r["voteType"].removeprefix(self.kgv))] = int(r["votes"])
            elif "p" in r:
                papers.append(r)
            elif "st" in r:
                found = relations.setdefault((r["st"], r["head"]), r | {"otherClasses": set()})
                if "otherClass" in r:
                    found["otherClasses"].add(r["otherClass"])
        if label is None:
            return None
        papers.sort(key=lambda r: (-_float(r["score"]), r["p"]))
        papers = papers[:self.listed]
        out: dict[str, Any] = {"id": n, "kind": "concept", "label": label, "alt_labels": [a for a in sorted(alts) if a != label],
                               "papers": count, "broader": [{"id": self._id(b), "label": broader[b]} for b in in_order(broader, broader_order)],
                               "narrower": [{"id": c, "label": narrower[c]} for c in sorted(narrower)],
                               "paper_list": [self._paper_row(r, score=_float(r["score"]), rank=int(r["rank"]), phrase=r["phrase"])
                                              for r in papers],
                               "more": max(0, count - self.listed), "cluster": cluster}
        if votes or relations:
            entity_type = next((self._classes[t] for t in sorted(classes) if t in self._classes), None)
            out |= {"entity_type": entity_type, "type_votes": dict(sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))),
                    "relations": self._relations(relations.values())}
        return out

    def _listed_links(self, c: str) -> str:
        """The pattern of the links of *c* that its first `listed` papers are among, when its first ones are in score
        order (docs/model.md, link lists): its own links come first, best score first, in its `kgv:link`s (100 or
        fewer, its own and those below it) or in its `kgv:LinkBlock`s that start at place `listed` or before."""
        return f"""{{ {c} kgv:link ?a }} UNION {{ ?b kgv:blockOf {c} ; kgv:firstPlace ?first ; kgv:link ?a FILTER(?first <= {self.listed}) }}
                   ?a kgv:concept {c}"""

    @staticmethod
    def _all_links(c: str) -> str:
        return f"?a kgv:concept {c} ; a kgv:KeyphraseAssignment"

    def _concept_query(self, c: str, links: str) -> str:
        rdf = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
        return self.prologue + f"""SELECT * WHERE {{
          {c} a skos:Concept .
          {{ {c} skos:prefLabel ?label }}
          UNION {{ {c} skos:altLabel ?alt }}
          UNION {{ {c} skos:broader ?broader . ?broader a skos:Concept ; skos:prefLabel ?broaderLabel }}
          UNION {{ {c} kgv:broaderOrder ?broaderOrder }}
          UNION {{ ?narrower skos:broader {c} ; a skos:Concept ; skos:prefLabel ?narrowerLabel }}
          UNION {{ ?cluster a skos:Collection ; skos:member {c} }}
          UNION {{ {c} a ?class }}
          UNION {{ {c} kgv:typeVote ?vote . ?vote kgv:entityType ?voteType ; kgv:mentionCount ?votes }}
          UNION {{ SELECT (COUNT(?linked) AS ?papers) WHERE {{ ?linked dcterms:subject {c} }} }}
          UNION {{ {{ SELECT ?p ?score ?rank ?phrase WHERE {{
                       {links} . ?a kgv:paper ?p ; kgv:score ?score ; kgv:rank ?rank ; kgv:phrase ?phrase }}
                     ORDER BY DESC(?score) ?p LIMIT {self.listed} }}
                   {self._ROW.format(p="?p")} }}
          UNION {{ SELECT (COUNT(?a) AS ?read) (MIN(?readScore) AS ?floor) WHERE {{ {links} ; kgv:score ?readScore }} }}
          UNION {{ {{ ?st <{rdf}subject> {c} ; <{rdf}object> ?other BIND(true AS ?head) }}
                   UNION {{ ?st <{rdf}object> {c} ; <{rdf}subject> ?other BIND(false AS ?head) }}
                   ?st a kgv:TypedRelation ; <{rdf}predicate> ?predicate ; kgv:support ?support ; kgv:score ?stScore .
                   ?other a skos:Concept ; skos:prefLabel ?otherLabel .
                   OPTIONAL {{ ?other a ?otherClass FILTER(?otherClass != skos:Concept) }} }}
        }}"""

    def _relations(self, found) -> list[dict[str, Any]]:
        """A concept's typed relations, grouped and ordered as `Explorer._types` does, with each listed one's evidence."""
        groups: dict[str, list[dict]] = {}
        for r in found:
            kind = _TYPE_OF.get(r["predicate"].removeprefix(self.kgv))
            head = r["head"] == "true"
            if kind is None:
                continue
            key, _ = _GROUP[kind, head or kind in SYMMETRIC]
            groups.setdefault(key, []).append(r)
        listed = []
        for key, words, _, _ in RELATION_GROUPS:
            mine = groups.get(key)
            if mine:
                mine.sort(key=lambda r: (-int(r["support"]), -_float(r["stScore"]), r["otherLabel"].lower(), self._id(r["other"])))
                listed.append((key, words, len(mine), mine[:MAX_RELATED]))
        evidence = self._evidence({r["st"] for *_, mine in listed for r in mine})
        out = []
        for key, words, total, mine in listed:
            items = []
            for r in mine:
                rows = evidence.get(r["st"], [])
                papers = int(r["support"]) or self._evidence_count(r["st"])
                other_type = next((self._classes[t] for t in sorted(r["otherClasses"]) if t in self._classes), None)
                items.append({"id": self._id(r["other"]), "label": r["otherLabel"], "entity_type": other_type, "papers": papers,
                              "score": _float(r["stScore"]), "evidence": rows})
            out.append({"key": key, "label": words, "more": max(0, total - MAX_RELATED), "items": items})
        return out

    def _evidence(self, statements: set[str]) -> dict[str, list[dict[str, Any]]]:
        """The best `MAX_EVIDENCE` evidence of each statement (best score first, then paper id), as `Explorer._evidence_row`."""
        if not statements:
            return {}
        parts = [f"""{{ SELECT ?st ?e ?p ?score WHERE {{ <{st}> kgv:evidence ?e . ?e kgv:paper ?p ; kgv:score ?score BIND(<{st}> AS ?st) }}
                     ORDER BY DESC(?score) ?p LIMIT {MAX_EVIDENCE} }}""" for st in sorted(statements)]
        rows = self._q(f"""SELECT * WHERE {{
          {{ {" UNION ".join(parts)} }}
          OPTIONAL {{ ?e kgv:sentence ?sentence }}
          OPTIONAL {{ ?p a schema:ScholarlyArticle BIND(true AS ?known) }}
          {self._ROW.format(p="?p")}
        }}""")
        out: dict[str, list] = {}
        for r in sorted(rows, key=lambda r: (-_float(r["score"]), r["p"])):
            p, known = self._id(r["p"]), "known" in r
            sentence = r.get("sentence")
            out.setdefault(r["st"], []).append({
                "paper": p if known else None, "label": _label(r.get("name"), r.get("title"), p) if known else p,
                "score": _float(r["score"]), "year": _year(r.get("date")) if known else None,
                "sentence": " ".join(sentence.split()) if sentence is not None else None})
        return out

    def _evidence_count(self, st: str) -> int:
        rows = self._q(f"SELECT (COUNT(?e) AS ?n) WHERE {{ <{st}> kgv:evidence ?e }}")
        return int(rows[0]["n"]) if rows else 0

    def _paper(self, n: str, p: str) -> dict[str, Any] | None:
        rows = self._q(f"""SELECT * WHERE {{
          {p} a schema:ScholarlyArticle .
          {{ {p} schema:name ?name }} UNION {{ {p} schema:headline ?title }} UNION {{ {p} schema:abstract ?abstract }}
          UNION {{ {p} schema:datePublished ?date }} UNION {{ {p} schema:isPartOf ?v . ?v schema:name ?venue }}
          UNION {{ {p} schema:url ?url }} UNION {{ {p} kgv:source ?source }} UNION {{ {p} schema:sameAs ?same }}
          UNION {{ {p} schema:keywords ?keyword }}
          UNION {{ {p} kgv:keywordOrder ?keywordOrder }} UNION {{ {p} kgv:urlOrder ?urlOrder }}
          UNION {{ {p} kgv:sourceOrder ?sourceOrder }}
          UNION {{ ?au kgv:work {p} ; a kgv:Authorship ; kgv:position ?position ; schema:name ?author ; kgv:person ?person
                   OPTIONAL {{ ?person schema:identifier ?orcid }} }}
          UNION {{ ?a kgv:paper {p} ; a kgv:KeyphraseAssignment ; kgv:concept ?c ; kgv:score ?score ; kgv:rank ?rank ;
                      kgv:phrase ?phrase . ?c a skos:Concept ; skos:prefLabel ?cLabel . {p} dcterms:subject ?c }}
        }}""")
        if not rows:
            return None
        one: dict[str, str] = {}
        urls, sources, keywords, authors, concepts, doi = [], [], [], {}, [], None
        for r in rows:
            if "url" in r:
                urls.append(r["url"])
            elif "source" in r:
                sources.append(r["source"])
            elif "keyword" in r:
                keywords.append(r["keyword"])
            elif "same" in r:
                if r["same"].startswith(_DOI):
                    doi = unquote(r["same"].removeprefix(_DOI))
            elif "author" in r:
                authors[int(r["position"])] = {"name": r["author"], "orcid": r.get("orcid")}
            elif "c" in r:
                concepts.append(r)
            else:
                one |= r
        concepts.sort(key=lambda r: (int(r["rank"]), self._id(r["c"])))
        return {"id": n, "kind": "paper", "label": _label(one.get("name"), one.get("title"), n),
                "title": one.get("title"), "abstract": one.get("abstract", ""), "venue": one.get("venue"),
                "year": _year(one.get("date")), "urls": in_order(urls, one.get("urlOrder")),
                "sources": in_order(sources, one.get("sourceOrder")),
                "authors": [authors[k] for k in sorted(authors)], "doi": doi, "keywords": in_order(keywords, one.get("keywordOrder")),
                "concepts": [{"id": self._id(r["c"]), "label": r["cLabel"], "score": _float(r["score"]), "rank": int(r["rank"]),
                              "phrase": r["phrase"]} for r in concepts]}

    def _venue(self, n: str, v: str) -> dict[str, Any] | None:
        rows = self._q(f"""SELECT * WHERE {{
          {v} a schema:CreativeWorkSeries .
          {{ {v} schema:name ?label }}
          UNION {{ SELECT (COUNT(?q) AS ?papers) WHERE {{ ?q schema:isPartOf {v} }} }}
          UNION {{ {{ SELECT ?p ?date ?order WHERE {{
                       ?p schema:isPartOf {v} ; kgv:labelOrder ?order . OPTIONAL {{ ?p schema:datePublished ?date }} }}
                     ORDER BY DESC(?date) ?order LIMIT {self.listed} }}
                   {self._ROW.format(p="?p")} }}
        }}""")
        if not rows:
            return None
        label, count, papers = n, 0, []
        for r in rows:
            if "label" in r:
                label = r["label"]
            elif "papers" in r:
                count = int(r["papers"])
            elif "p" in r:
                papers.append(r)
        papers.sort(key=lambda r: (-(_year(r.get("date")) or 0), int(r["order"])))
        return {"id": n, "kind": "venue", "label": label or n, "papers": count,
                "paper_list": [self._paper_row(r) for r in papers], "more": max(0, count - self.listed)}


def _label(name: str | None, title: str | None, n: str) -> str:
    return name or title or n


def _year(date: str | None) -> int | None:
    try:
        return int(date) if date is not None else None
    except ValueError:
        return None


def _float(value: str | None) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return 0.0
    return x if math.isfinite(x) else 0.0
