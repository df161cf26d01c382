"""kg serve: the store, the SPARQL endpoint (SPARQLWrapper as the client), the query timeout,
named queries with bound values, clean shutdown, and the explorer in Debian's headless Chromium."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import networkx as nx
import pyoxigraph as ox
import pytest
from fixture_graph import P1, P2, fixture_graph

import kg.serve.forward
from kg.errors import InputError, OutputError, QueryError
from kg.graph.io import graph_to_json, load_graph
from kg.pipeline.outputs import emit_explorer
from kg.rdf.statements import to_rdf
from kg.rdf.write import serialize
from kg.serve.server import start_server
from kg.serve.worker import free_port
from kg.sparql.bindings import parse_binding, substitute
from kg.sparql.catalogue import bound_query, canned_queries, list_queries
from kg.sparql.store import prepare_store
from kg.view.explorer import Explorer
from kg.view.mapdata import MAX_LINKS, MapSettings

MAX_DRAWN = 5000  # concepts the big graph's map draws (kg's own bound is higher: kg.view.mapdata)

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
EXPENSIVE = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"
HOSTILE = ['x" } ; DROP ALL #', "a\\u0022b\nc'\\", '"""', "<http://e.org/x>) } #", "中文 \U0001F600"]


def _write_build(G: nx.Graph, out: Path) -> Path:
    """The files `kg serve` reads from a build folder (graph.nt, stats.json's counts, the explorer's
    files), and graph.json, which it does not read."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "graph.nt").write_text(serialize(to_rdf(G), "nt"), encoding="utf-8")
    (out / "graph.json").write_text(graph_to_json(G), encoding="utf-8")
    kinds = [k for _, k in G.nodes(data="kind")]
    (out / "stats.json").write_text(json.dumps({k: kinds.count(k[:-1]) for k in ("papers", "concepts", "venues")}))
    emit_explorer(G, lambda name: (out / name).open("wb"))
    return out


@pytest.fixture(scope="module")
def small_build(tmp_path_factory) -> Path:
    return _write_build(fixture_graph(), tmp_path_factory.mktemp("serve-small"))


@pytest.fixture(scope="module")
def served(small_build):
    with start_server(small_build, port=0, timeout=1.0) as server:
        yield server


def test_the_server_starts_and_answers_without_graph_json(tmp_path):
    """kg serve reads no graph.json: with it gone, the page, the map, a node and a search are
    answered as the Explorer of the graph answers them."""
    G = fixture_graph()
    build = _write_build(G, tmp_path / "out")
    (build / "graph.json").unlink()
    E = Explorer(G, title="kg: out")
    with start_server(build, port=0, timeout=1.0) as server:
        assert _get(server.url)[2] == E.page()
        status, headers, body = _get(server.url + "api/map")
        assert status == 200 and body == E.map_json() and int(headers["Content-Length"]) == len(body)
        for q in ("llm", "LANGUAGE", "p3", "concept:", "a", "zzz"):
            assert json.loads(_get(server.url + f"api/search?q={q}&limit=100")[2]) == E.search(q, limit=100), q
        assert json.loads(_get(server.url + "api/node?id=concept:large-language-model")[2]) == \
            json.loads(json.dumps(E.node("concept:large-language-model")))
        assert server.explorer.summary == E.summary


@pytest.mark.parametrize("damage", ["missing", "other format", "not kg's", "old jsonl"])
def test_explorer_files_missing_or_of_another_kg_are_409_and_said_once(tmp_path, damage):
    """An explorer file missing (a build of an older kg), of another format or not kg's (the search
    file: not an SQLite database, or one without kg's marker): the server starts, says so in its log,
    and the routes that need it answer 409 with the same message, not 500."""
    import sqlite3

    build = _write_build(fixture_graph(), tmp_path / "out")
    for name in ("explorer.json", "explorer-search.sqlite"):
        path = build / name
        if damage == "missing":
            path.unlink()
        elif damage == "other format" and name == "explorer.json":
            path.write_bytes(path.read_bytes().replace(b'{"kg_explorer":2', b'{"kg_explorer":999', 1))
        elif damage == "other format":
            with contextlib.closing(sqlite3.connect(path)) as db, db:
                db.execute("UPDATE meta SET value = 999")
        elif damage == "old jsonl":  # what kg wrote before the database
            path.write_bytes(b'{"kg_explorer":1}\n["concept:llm","concept","LLM",1,[["label","LLM"]]]\n')
        elif name == "explorer.json":
            path.write_bytes(b"[]")
        else:
            with contextlib.closing(sqlite3.connect(path)) as db, db:
                db.execute("DROP TABLE meta")
    lines: list[str] = []
    with start_server(build, port=0, timeout=1.0, log=lines.append) as server:
        said = [line for line in lines if "the explorer cannot" in line]
        assert len(said) == 1 and all("rebuild with `kg build" in line for line in said), lines
        for route in ("api/map", "api/search?q=llm"):
            status, _, body = _get(server.url + route)
            assert status == 409 and "rebuild with `kg build" in body.decode(), (route, body)
        assert _get(server.url)[0] == 200
        assert _get(server.url + "api/node?id=concept:large-language-model")[0] == 200
        assert _get(server.url + "api/node?id=concept:nothing-such")[0] == 404


def test_a_search_file_damaged_after_the_start_is_409(tmp_path):
    """The search file cut short while the server runs (it read only its head at the start): a
    search answers 409, saying so, not 500."""
    from kg.view.explorer import SearchFile, StaleExplorerFile

    build = _write_build(fixture_graph(), tmp_path / "out")
    path = build / "explorer-search.sqlite"
    searcher = SearchFile(path)
    path.write_bytes(path.read_bytes()[:4096 * 3] + b"\xff" * 4096)
    with pytest.raises(StaleExplorerFile, match="cannot be searched .*rebuild with `kg build"):
        for q in ("llm", "a", "language model", "p3"):
            searcher.search(q, limit=100)


def test_the_search_file_is_the_same_bytes_for_the_same_graph(tmp_path):
    """explorer-search.sqlite, recorded in the manifest by its SHA-256, is the same bytes each time
    it is written from the same graph (here from two Explorers, one in the system's temporary folder)."""
    import io

    from kg.view.explorer import SearchFile

    written = []
    for folder in (tmp_path, None):
        f = io.BytesIO()
        Explorer(fixture_graph()).write_search_file(f, folder=folder)
        written.append(f.getvalue())
    assert written[0] == written[1] and written[0].startswith(b"SQLite format 3\0")
    assert list(tmp_path.iterdir()) == []  # its temporary file removed
    (tmp_path / "s.sqlite").write_bytes(written[0])
    assert SearchFile(tmp_path / "s.sqlite").search("llm", limit=100) == Explorer(fixture_graph()).search("llm", limit=100)


def test_a_hostile_search_is_answered_at_once_and_as_the_explorer_answers(tmp_path):
    """A query of 200,000 characters (a request line holds 256 KiB) asks the index for a few of its
    trigrams, not 67,000 (3.7 s at 10,000 abstracts before); one with NUL, which FTS5 would cut short,
    is searched as U+FFFD, and a label that holds NUL is found by it."""
    import io
    import random
    import string
    import time

    from kg.view.explorer import SearchFile

    G = fixture_graph()
    c = next(n for n, d in G.nodes(data=True) if d["kind"] == "concept")
    G.nodes[c]["label"] = "nul\x00label"
    f = io.BytesIO()
    Explorer(G).write_search_file(f, folder=tmp_path)
    (tmp_path / "s.sqlite").write_bytes(f.getvalue())
    searcher = SearchFile(tmp_path / "s.sqlite")
    long = "".join(random.Random(1).choice(string.ascii_lowercase + " ") for _ in range(200_000))
    ids = lambda found: [r["id"] for r in found]  # noqa: E731 - (the file shows a label's NUL as U+FFFD)
    for q in (long, "llm" * 50_000, '"quoted" AND OR NEAR(', "\x00", "a\x00b", "nul\x00lab"):
        start = time.perf_counter()
        assert ids(searcher.search(q)) == ids(Explorer(G).search(q)), q[:40]
        assert time.perf_counter() - start < 1, q[:40]
    assert ids(searcher.search("nul\x00lab")) == [c]


def _get(url: str, headers: dict | None = None, data: bytes | None = None):
    req = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers, r.read()  # case-insensitive, as HTTP header names are
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def _sparql(server, query: str, fmt, method=None):
    from SPARQLWrapper import POST, SPARQLWrapper

    client = SPARQLWrapper(server.sparql_url)
    client.setQuery(query)
    client.setReturnFormat(fmt)
    client.setMethod(method or POST)
    client.setTimeout(30)
    return client.query().convert()


def _rows(result):
    if isinstance(result, ox.QueryBoolean):
        return bool(result)
    variables = [v.value for v in result.variables]
    return variables, sorted(tuple(str(s[v]) if s[v] is not None else "" for v in variables) for s in result)


# ---------------------------------------------------------------------------- the SPARQL endpoint


def test_select_json_get_and_csv_post(served):
    from SPARQLWrapper import CSV, GET, JSON

    q = "PREFIX skos: <http://www.w3.org/2004/02/skos/core#> SELECT ?c ?l WHERE { ?c a skos:Concept ; skos:prefLabel ?l } ORDER BY ?l"
    as_json = _sparql(served, q, JSON, GET)
    labels = [b["l"]["value"] for b in as_json["results"]["bindings"]]
    assert as_json["head"]["vars"] == ["c", "l"]
    assert labels == sorted(d["label"] for _, d in fixture_graph().nodes(data=True) if d["kind"] == "concept")
    as_csv = _sparql(served, q, CSV).decode("utf-8").splitlines()
    assert as_csv[0] == "c,l" and [line.split(",")[-1] for line in as_csv[1:]] == labels
    status, headers, body = _get(served.sparql_url + "?" + urllib.parse.urlencode({"query": q}),
                                 {"Accept": "text/tab-separated-values"})
    assert status == 200 and headers["Content-Type"].startswith("text/tab-separated-values")
    assert body.decode().splitlines()[0] == "?c\t?l"
    status, headers, body = _get(served.sparql_url + "?" + urllib.parse.urlencode({"query": q}),
                                 {"Accept": "application/sparql-results+xml"})
    assert status == 200 and b"<sparql" in body


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # ConjunctiveGraph, inside SPARQLWrapper and rdflib
def test_ask_construct_describe(served, small_build):
    import rdflib
    from SPARQLWrapper import JSON, JSONLD, TURTLE

    assert _sparql(served, "ASK { ?s a <http://www.w3.org/2004/02/skos/core#Concept> }", JSON)["boolean"] is True
    assert _sparql(served, "ASK { ?s a <http://e.org/Nothing> }", JSON)["boolean"] is False
    everything = "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }"
    expected = len((small_build / "graph.nt").read_text().splitlines())
    turtle = _sparql(served, everything, TURTLE)
    assert len(rdflib.Graph().parse(data=turtle, format="turtle")) == expected
    jsonld = _sparql(served, everything, JSONLD)
    assert len(jsonld) == expected  # SPARQLWrapper parsed it into an rdflib Graph
    status, headers, body = _get(served.sparql_url + "?" + urllib.parse.urlencode(
        {"query": "DESCRIBE <https://example.org/kg/concept/federated-learning>"}), {"Accept": "application/n-triples"})
    assert status == 200 and headers["Content-Type"] == "application/n-triples"
    assert '"federated learning"@en' in body.decode()


def test_malformed_query_is_400_with_the_parser_message(served):
    from SPARQLWrapper import JSON
    from SPARQLWrapper.SPARQLExceptions import QueryBadFormed

    with pytest.raises(QueryBadFormed) as caught:
        _sparql(served, "SELECT ?x WHERE { ?x ?y }", JSON)
    assert "error at 1:" in str(caught.value)


def test_updates_are_refused(served):
    from SPARQLWrapper import JSON

    before = _sparql(served, "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", JSON)["results"]["bindings"][0]["n"]["value"]
    with pytest.raises(urllib.error.HTTPError) as caught:
        _sparql(served, "INSERT DATA { <http://e.org/a> <http://e.org/b> <http://e.org/c> }", JSON)
    assert caught.value.code == 403
    status, _, body = _get(served.sparql_url, {"Content-Type": "application/sparql-update"},
                           b"DELETE WHERE { ?s ?p ?o }")
    assert status == 403 and b"read-only" in body
    after = _sparql(served, "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", JSON)["results"]["bindings"][0]["n"]["value"]
    assert after == before


def test_a_query_past_the_timeout_is_stopped_and_the_next_is_answered(served):
    from SPARQLWrapper import JSON

    restarts = served.worker.restarts
    with pytest.raises(urllib.error.HTTPError) as caught:
        _sparql(served, EXPENSIVE, JSON)
    assert caught.value.code == 503 and b"ran longer than the 1 s timeout" in caught.value.read()
    assert served.worker.restarts == restarts + 1  # the runaway worker was killed
    assert _sparql(served, "ASK { ?s ?p ?o }", JSON)["boolean"] is True


def test_queries_in_flight_survive_another_query_timing_out(served):
    """Queries running in the worker killed for a runaway are sent again to the new worker."""
    results: list[int] = []

    def client() -> None:
        for _ in range(15):
            status, _, _ = _get(served.sparql_url + "?" + urllib.parse.urlencode(
                {"query": "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o . ?s ?q ?r }"}))
            results.append(status)

    threads = [threading.Thread(target=client) for _ in range(3)]
    for t in threads:
        t.start()
    status, _, _ = _get(served.sparql_url + "?" + urllib.parse.urlencode({"query": EXPENSIVE}))
    for t in threads:
        t.join()
    assert status == 503
    assert results == [200] * 45


def test_big_answers_are_spooled_to_disk_and_sent_whole(served, monkeypatch):
    monkeypatch.setattr(kg.serve.forward, "MAX_BUFFER", 4096)
    status, headers, body = _get(served.sparql_url + "?" + urllib.parse.urlencode(
        {"query": "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }"}), {"Accept": "application/n-triples"})
    assert status == 200 and int(headers["Content-Length"]) == len(body) > 4096
    assert body.decode().count(" .\n") == served.store.triples


def test_only_local_host_names_when_bound_to_loopback(served):
    status, _, _ = _get(served.url, {"Host": "attacker.example:80"})
    assert status == 421
    assert _get(served.url, {"Host": f"localhost:{served.port}"})[0] == 200


# ---------------------------------------------------------------------------- named queries and bindings


def test_substitution_matches_pyoxigraph_on_every_canned_query():
    """The query text `substitute` writes answers exactly what pyoxigraph's substitutions answer."""
    store = ox.Store()
    store.load(serialize(to_rdf(fixture_graph()), "nt"), format=ox.RdfFormat.N_TRIPLES)
    checked = 0
    for q in canned_queries():
        page = {"limit", "offset"} if q["paged"] else set()  # written into the text by the catalogue, not bound
        names = {v["name"] for v in q["variables"]} - page
        values = [e for e in q["examples"] if not page & set(e)] + [{n: h} for n in sorted(names) for h in HOSTILE]
        for example in values:
            terms = dict(parse_binding(f"{k}={v}") for k, v in example.items())
            want = _rows(store.query(q["text"], substitutions={ox.Variable(k): t for k, t in terms.items()}))
            assert _rows(store.query(substitute(q["text"], terms))) == want, (q["name"], example)
            checked += 1
    assert checked > 40


def test_substitution_refuses_what_cannot_be_bound():
    lit = ox.Literal("x")
    with pytest.raises(QueryError, match="AS"):
        substitute("SELECT ?y WHERE { BIND(1 AS ?y) }", {"y": lit})
    with pytest.raises(QueryError, match="VALUES"):
        substitute("SELECT ?y WHERE { VALUES ?y { 1 } }", {"y": lit})
    with pytest.raises(QueryError):
        substitute("SELECT ?y WHERE { ?y ?p ?o }", {"y": ox.BlankNode()})
    text = substitute("SELECT ?y (COUNT(*) AS ?n) WHERE { ?s ?p ?y } GROUP BY ?y ORDER BY ?y", {"y": lit})
    assert text == 'SELECT ("x" AS ?y) (COUNT(*) AS ?n) WHERE { ?s ?p "x" } GROUP BY ("x") ORDER BY ("x")'
    with pytest.raises(QueryError, match=r"takes no \?nope"):
        bound_query("top-concepts", ["nope=1"])
    with pytest.raises(QueryError, match="no query named"):
        bound_query("../queries/top-concepts", [])


def test_named_queries_over_http(served):
    status, _, body = _get(served.url + "queries")
    listed = json.loads(body)
    assert status == 200 and {q["name"]: q["summary"] for q in listed} == list_queries()
    papers = next(q for q in listed if q["name"] == "papers-of-concept")
    assert {v["name"] for v in papers["variables"]} == {"label", "concept", "limit", "offset"} and papers["paged"]
    status, _, body = _get(served.url + "api/query", {"Content-Type": "application/json"},
                           json.dumps({"name": "papers-of-concept", "bindings": {"label": "LLM"}}).encode())
    rows = json.loads(body)["results"]["bindings"]
    assert status == 200 and {r["label"]["value"] for r in rows} == {"LLM"} and len(rows) == 3
    for hostile in HOSTILE:
        status, _, body = _get(served.url + "api/query?" + urllib.parse.urlencode({"name": "search", "bind": f"text={hostile}"}))
        assert status == 200 and json.loads(body)["results"]["bindings"] == []
    status, _, body = _get(served.url + "api/query?" + urllib.parse.urlencode(
        {"name": "papers-of-concept", "bind": "label=SGD"}), {"Accept": "text/csv"})
    assert status == 200 and body.decode().splitlines()[0].startswith("concept,conceptLabel,paper")
    assert _get(served.url + "api/query?name=top-concepts&bind=nope%3D1")[0] == 400
    status, _, body = _get(served.url + "api/query?name=papers-of-concept")  # its declared parameters, as kg query reads them
    assert status == 400 and b"needs one of ?label or ?concept" in body
    status, _, body = _get(served.url + "api/query?name=rising-concepts&bind=min%3Dmany")
    assert status == 400 and b"is a whole number" in body
    # A page: limit and offset as numbers in a JSON body, or as --bind-style text
    status, _, body = _get(served.url + "api/query", {"Content-Type": "application/json"},
                           json.dumps({"name": "papers-of-concept", "bindings": {"label": "optimization", "limit": 2, "offset": 1}}).encode())
    paged = [r["paper"]["value"].rpartition("/")[2] for r in json.loads(body)["results"]["bindings"]]
    status2, _, body = _get(served.url + "api/query?" + urllib.parse.urlencode(
        [("name", "papers-of-concept"), ("bind", "label=optimization"), ("bind", "limit=0")]))
    every = [r["paper"]["value"].rpartition("/")[2] for r in json.loads(body)["results"]["bindings"]]
    assert status == status2 == 200 and len(every) == 5 and paged == every[1:3]
    assert _get(served.url + "api/query?name=papers-of-concept&bind=label%3Dx&bind=limit%3D-1")[0] == 400


def _table(served, body: dict):
    status, _, answer = _get(served.url + "api/query", {"Content-Type": "application/json"},
                                   json.dumps({**body, "view": "table"}).encode())
    assert status == 200, answer
    return json.loads(answer)


def test_api_query_view_table_is_the_table_kg_query_prints(served, small_build):
    """view=table: the SPARQL JSON results whole, and beside them the table kg query prints (one rule:
    `table_view` of the same answer), each cell with the IRI it stands for."""
    import kg
    from kg.sparql.results import table_view

    answer = _table(served, {"name": "papers-of-concept", "bindings": {"label": "LLM"}})
    raw = answer["results"]["bindings"]
    assert answer["head"]["vars"][0] == "concept" and raw[0]["concept"]["value"].startswith("https://")
    local = kg.query("papers-of-concept", graph=small_build / "graph.nt", bind=["label=LLM"])
    notes, columns, cells = table_view(local)
    table = answer["table"]
    assert table["columns"] == columns == ["name", "venue", "year", "direct", "score", "rank"]
    assert sorted(table["rows"]) == sorted(cells) and table["notes"][0] == notes[0] == "bound: label = LLM"
    papers = {r["paper"]["value"]: r["name"]["value"] for r in raw}
    assert {row[0]: iris[0] for row, iris in zip(table["rows"], table["iris"])} == {v: k for k, v in papers.items()}
    assert all(i is None for iris in table["iris"] for i in iris[1:]) and answer["ties"] == []
    # without it, the SPARQL JSON results alone, as before
    plain = json.loads(_get(served.url + "api/query", {"Content-Type": "application/json"},
                            json.dumps({"name": "papers-of-concept", "bindings": {"label": "LLM"}}).encode())[2])
    assert set(plain) == {"head", "results"}
    assert _get(served.url + "api/query?name=top-concepts&view=table")[0] == 200
    status, _, body = _get(served.url + "api/query?name=top-concepts&view=csv")
    assert status == 400 and b"view must be table" in body


def test_api_query_view_table_says_a_ranked_cut_inside_a_tie(served, small_build):
    """LLM shares two papers with fine-tuning and with zeroth-order optimization: a cut at top 1
    falls inside that tie, and the answer says so as kg query does; at top 2 it does not."""
    import kg

    answer = _table(served, {"name": "cooccurring-concepts", "bindings": {"label": "LLM", "top": 1}})
    local = kg.query("cooccurring-concepts", graph=small_build / "graph.nt", bind=["label=LLM", "top=1"])
    assert answer["ties"] == list(local.ties) and len(answer["ties"]) == 1
    assert answer["ties"][0].startswith("the cut at top = 1 falls inside a tie: the one row shown has papers = 2")
    assert answer["table"]["columns"][:2] == ["conceptLabel", "otherLabel"]
    assert _table(served, {"name": "cooccurring-concepts", "bindings": {"label": "LLM", "top": 2}})["ties"] == []


def test_explorer_api(served):
    from kg.view.page import render_page

    status, headers, page = _get(served.url)
    assert status == 200 and "default-src 'none'" in headers["Content-Security-Policy"]
    assert b"<script src" not in page and b"<link" not in page  # everything inline
    # The same page as graph.html, told to ask the server for its data.
    assert page.decode("utf-8") == render_page({"source": "server"}, title=served.explorer.title)
    found = json.loads(_get(served.url + "api/search?q=llm")[2])
    assert found[0]["id"] == "concept:large-language-model"
    assert json.loads(_get(served.url + "api/search?q=p30000000000000")[2])[0]["id"].startswith("paper:p3")
    node = json.loads(_get(served.url + "api/node?id=concept:large-language-model")[2])
    assert node["papers"] == 3 and [p["id"] for p in node["paper_list"]][0].startswith("paper:")
    paper = json.loads(_get(served.url + "api/node?id=" + node["paper_list"][0]["id"])[2])
    assert paper["abstract"] == fixture_graph().nodes[paper["id"]]["abstract"]
    assert _get(served.url + "api/node?id=nothing")[0] == 404
    status, headers, body = _get(served.url + "api/map")
    data = json.loads(body)
    G = fixture_graph()
    assert status == 200 and headers["Content-Type"].startswith("application/json")
    assert sorted(data["concepts"]["id"]) == sorted(n for n, k in G.nodes(data="kind") if k == "concept")
    assert sorted(data["papers"]["id"]) == sorted(n for n, k in G.nodes(data="kind") if k == "paper")
    assert data["papers"]["abstract"] == [None] * len(data["papers"]["id"]) and data["papers"]["served"]
    assert _get(served.url + "api/graph")[0] == 404


def test_the_explorer_gives_a_papers_keywords_in_its_details_and_its_map():
    """A paper's details list its authors' keywords in input order (none: an empty list); the map
    the page draws from (and whose panel shows them) carries them only when a paper has some; /api/search finds them."""
    p1, p2 = "paper:" + P1, "paper:" + P2
    E = Explorer(fixture_graph(keywords={P1: ("zeroth-order optimization", "LLMs")}))
    assert E.node(p1)["keywords"] == ["zeroth-order optimization", "LLMs"]
    assert E.node(p2)["keywords"] == []
    P = json.loads(E.map_json())["papers"]
    assert P["keywords"][P["id"].index(p1)] == ["zeroth-order optimization", "LLMs"]
    assert P["keywords"][P["id"].index(p2)] is None
    plain = Explorer(fixture_graph())
    assert plain.node(p1)["keywords"] == [] and "keywords" not in json.loads(plain.map_json())["papers"]
    # /api/search finds the paper by one: the field that matched says so
    found = E.search("ZEROTH-ORDER OPTIMIZATION")
    assert {"id": p1, "field": "keywords", "matched": "zeroth-order optimization"}.items() <= next(f for f in found if f["id"] == p1).items()
    assert not any(f["id"] == p1 and f["field"] == "keywords" for f in plain.search("zeroth-order optimization"))


# ---------------------------------------------------------------------------- the store


def test_store_is_loaded_once_and_reloaded_when_the_graph_changes(tmp_path):
    build = _write_build(fixture_graph(), tmp_path / "out")
    first = prepare_store(build)
    assert first.reloaded and first.triples == len((build / "graph.nt").read_text().splitlines())
    assert not prepare_store(build).reloaded
    lines = (build / "graph.nt").read_text().splitlines()
    (build / "graph.nt").write_text("\n".join(lines[1:]) + "\n")
    again = prepare_store(build)
    assert again.reloaded and again.triples == first.triples - 1
    assert sorted(p.name for p in build.iterdir()) == ["explorer-search.sqlite", "explorer.json", "graph.json", "graph.nt",
                                                        "stats.json", "store"]


@pytest.mark.parametrize("loader", ["in-process", "oxigraph program"])
def test_both_store_loaders_load_every_triple_and_leave_a_readable_store(tmp_path, loader):
    """pyoxigraph's bulk loader (when it is the program's Oxigraph) and the ``oxigraph`` program
    (otherwise) both load, then compact (optimize), the store; it answers queries afterwards."""
    import pyoxigraph as ox

    from kg.sparql import loading as serve

    build = _write_build(fixture_graph(), tmp_path / "out")
    nt = build / "graph.nt"
    folder = tmp_path / "new-store"
    folder.mkdir()
    if loader == "in-process":
        triples = serve.load_in_process(folder, nt=nt)
    else:
        from kg.sparql.store import oxigraph_binary

        triples = serve.load_with_program(oxigraph_binary(), nt, folder)
    assert triples == len(nt.read_text().splitlines()) > 100
    store = ox.Store.read_only(str(folder / "data"))
    assert len(store) == triples
    assert len(list(store.query("SELECT ?c WHERE { ?c a <http://www.w3.org/2004/02/skos/core#Concept> }"))) >= 5


def test_the_store_loaded_in_pieces_holds_what_a_whole_load_holds(tmp_path, monkeypatch):
    """graph.nt is bulk-loaded in pieces (the loader's memory follows the piece): with pieces of
    a few lines, the store holds exactly the triples of one load of the whole file."""
    from kg.sparql import loading as serve

    build = _write_build(fixture_graph(), tmp_path / "out")
    nt = build / "graph.nt"
    whole = ox.Store()
    whole.bulk_load(path=str(nt), format=ox.RdfFormat.N_TRIPLES)
    monkeypatch.setattr(serve, "_PIECE_BYTES", 2_000)
    folder = tmp_path / "pieces"
    folder.mkdir()
    triples = serve.load_in_process(folder, nt=nt)
    assert nt.stat().st_size > 20 * 2_000  # so the file was loaded in many pieces
    store = ox.Store.read_only(str(folder / "data"))
    assert triples == len(whole) == len(store)
    assert sorted(map(str, store)) == sorted(map(str, whole))


def test_a_graph_nt_with_blank_nodes_is_loaded_whole_so_they_stay_one_node(tmp_path, monkeypatch):
    """Each bulk load gives a file's blank nodes new names: a file that has them (kg writes none,
    but a graph.nt may come from elsewhere) is loaded whole, so that ``_:b`` on two lines far
    apart stays one node."""
    from kg.sparql import loading as serve

    lines = ["_:b <http://example.org/p> <http://example.org/first> ."]
    lines += [f"<http://example.org/s{i}> <http://example.org/p> \"{'x' * 80} {i}\" ." for i in range(200)]
    lines += ["<http://example.org/last> <http://example.org/q> _:b ."]
    nt = tmp_path / "graph.nt"
    nt.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(serve, "_PIECE_BYTES", 1_000)
    folder = tmp_path / "store"
    folder.mkdir()
    assert serve.load_in_process(folder, nt=nt) == 202
    store = ox.Store.read_only(str(folder / "data"))
    rows = list(store.query("SELECT ?b WHERE { ?b <http://example.org/p> <http://example.org/first> . "
                            "<http://example.org/last> <http://example.org/q> ?b }"))
    assert len(rows) == 1


def test_a_served_store_is_not_reloaded_under_its_server(small_build, tmp_path):
    build = tmp_path / "busy"
    shutil.copytree(small_build, build, ignore=shutil.ignore_patterns("store"))
    with start_server(build, port=0) as server:
        assert server.store.reloaded
        os.utime(build / "graph.nt", ns=(time.time_ns(), time.time_ns() + 10**9))
        with pytest.raises(OutputError, match="another `kg serve`"):
            prepare_store(build)


def test_a_build_into_a_served_folder_refuses_at_once_and_a_server_waits_for_a_build(small_build, tmp_path, hash_embedder, nlp):
    """The folder lock: a build into a folder kg serve serves stops before any work (it would
    replace the files the server reads); a server started while a build holds the folder waits
    for it, then serves."""
    import kg
    from kg.common.locks import FolderLock

    build = tmp_path / "busy"
    shutil.copytree(small_build, build)
    before = (build / "graph.nt").read_bytes()
    abstracts = tmp_path / "a.txt"
    abstracts.write_text("ICML 2026\n\nGraph neural networks pass messages along edges.\n")
    with start_server(build, port=0):
        with pytest.raises(OutputError, match="kg serve is serving it; stop the server first"):
            kg.build([abstracts], build, embedder=hash_embedder, nlp=nlp)
    assert (build / "graph.nt").read_bytes() == before
    lock = FolderLock(build)
    assert lock.try_exclusive()  # as a build holds it
    said: list[str] = []
    threading.Timer(1.0, lock.close).start()
    with start_server(build, port=0, log=said.append) as server:
        assert server.store.triples > 0
    assert any("waiting for the kg build writing into" in line for line in said), said


# ---------------------------------------------------------------------------- clean shutdown


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")  # a zombie is dead
    except (FileNotFoundError, IndexError, ProcessLookupError):
        return True


def _start_subprocess(build: Path, port: int) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, "-m", "kg", "serve", "--graph", str(build), "--port", str(port), "--timeout", "5"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")), daemon=True)
    reader.start()
    deadline = time.monotonic() + 30
    while not any("Ctrl-C" in line for line in lines):
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "kg serve did not start"
        time.sleep(0.05)
    status = json.loads(_get(f"http://127.0.0.1:{port}/api/status")[2])
    return proc, status["worker"]["pid"]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_signals_stop_everything(small_build, tmp_path, sig):
    build = tmp_path / "out"
    shutil.copytree(small_build, build, ignore=shutil.ignore_patterns("store"))
    port = free_port()
    proc, worker = _start_subprocess(build, port)
    assert not _gone(worker)
    assert _get(f"http://127.0.0.1:{port}/sparql?query=ASK%7B%7D")[0] == 200
    proc.send_signal(sig)
    assert proc.wait(10) == 0
    assert "stopped" in proc.stderr.read()
    assert _gone(worker)
    with pytest.raises(ProcessLookupError):
        os.killpg(worker, 0)  # nothing left in the worker's process group
    with socket.socket() as s:  # the port is free again: nothing listens on it
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        s.listen()
    fd = os.open(build, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # and the folder lock released
    finally:
        os.close(fd)


def test_the_worker_dies_with_kg_even_when_kg_is_killed(small_build, tmp_path):
    build = tmp_path / "out"
    shutil.copytree(small_build, build, ignore=shutil.ignore_patterns("store"))
    proc, worker = _start_subprocess(build, free_port())
    proc.kill()
    proc.wait(10)
    deadline = time.monotonic() + 5
    while not _gone(worker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(worker)


# ---------------------------------------------------------------------------- a 10,000-paper graph


def _big_graph(n_papers: int = 10_000, n_concepts: int = 25_000, per_paper: int = 10, seed: int = 7) -> nx.Graph:
    """A synthetic graph shaped like kg's (docs/model.md): Zipf-distributed concepts, 4 venues."""
    rnd = random.Random(seed)
    G = nx.Graph(base_iri="https://example.org/kg/")
    venues = ["ICML", "ICLR", "NeurIPS", "ACL"]
    for v in venues:
        G.add_node(f"venue:{v.lower()}", kind="venue", label=v)
    cum, acc = [], 0.0
    for i in range(n_concepts):
        acc += 1 / (i + 1)
        cum.append(acc)
    counts = [0] * n_concepts
    links = []
    for i in range(n_papers):
        pid, venue = f"paper:p{i:015x}", venues[i % 4]
        G.add_node(pid, kind="paper", label=f"Paper {i}", title=None, abstract=f"Abstract {i}.", text="",
                   venue=venue, year=2020 + i % 6, urls=[], sources=[], source_id=None)
        G.add_edge(pid, f"venue:{venue.lower()}", kind="venue", year=2020 + i % 6)
        for rank, c in enumerate(sorted(set(rnd.choices(range(n_concepts), cum_weights=cum, k=per_paper))), 1):
            links.append((pid, c, rank))
            counts[c] += 1
    for c, k in enumerate(counts):
        if k:
            G.add_node(f"concept:c{c}", kind="concept", label=f"concept {c}", alt_labels=[f"C{c}"], papers=k, broader=[])
    for pid, c, rank in links:
        G.add_edge(pid, f"concept:c{c}", kind="subject", score=round(rnd.random(), 4), rank=rank, phrase=f"concept {c}")
    return G


@pytest.fixture(scope="module")
def big_explorer() -> Explorer:
    G = _big_graph()
    for i, c in enumerate(sorted(n for n, k in G.nodes(data="kind") if k == "concept")):  # positions of a test: a grid
        G.nodes[c].update(x=float(i % 160), y=float(i // 160), cluster=1 + i % 5)
    G.graph["clusters"] = [{"id": k, "label": f"cluster {k}", "concepts": 0, "papers": 0, "top": [], "x": 80.0, "y": 70.0}
                           for k in range(1, 6)]
    return Explorer(G, settings=MapSettings(abstracts="none", max_concepts=MAX_DRAWN))


def test_the_map_of_a_big_graph_is_bounded(big_explorer):
    data = json.loads(big_explorer.map_json())
    concepts = data["concepts"]
    assert len(concepts["id"]) == big_explorer.summary["concepts"] > MAX_DRAWN
    assert len(data["drawn"]) == MAX_DRAWN and len(data["links"]) <= 4 * MAX_LINKS
    # The drawn ones are the first by rank; the rest is found by search.
    papers = concepts["papers"]
    assert min(papers[i] for i in data["drawn"]) >= max(papers[len(data["drawn"]):])
    hidden = concepts["id"][-1]
    assert concepts["id"].index(hidden) not in data["drawn"]
    assert big_explorer.search(big_explorer.G.nodes[hidden]["label"])[0]["id"] == hidden
    assert len(big_explorer.page()) < 1_500_000  # the page: its data comes from /api/map


@contextlib.contextmanager
def _chromium_page():
    """A 1400 x 900 page of Debian's Chromium (closed after) and the errors its scripts raise."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            yield page, errors
        finally:
            browser.close()


@pytest.mark.browser
def test_the_explorer_page_draws_a_big_graph_from_its_server(big_explorer, tmp_path):
    """The explorer's page with /api/map answered by the Explorer (no Oxigraph): a bounded map, labels."""

    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed")
    base = "http://127.0.0.1:9/"

    def answer(route) -> None:
        url = route.request.url
        if url == base:
            route.fulfill(body=big_explorer.page(), content_type="text/html; charset=utf-8")
        elif url == base + "api/map":
            route.fulfill(body=big_explorer.map_json(), content_type="application/json")
        elif url == base + "queries":
            route.fulfill(body=b"[]", content_type="application/json")
        else:
            route.abort()

    with _chromium_page() as (page, errors):
        page.route("**/*", answer)
        page.goto(base)
        page.wait_for_function("window.kgReady === true", timeout=60_000)
        stats = page.evaluate("window.kgStats")
        labels = page.evaluate("kgMap.state().labels")
    assert stats["concepts"] == MAX_DRAWN and stats["links"] <= MAX_LINKS
    assert len(labels) > 20 and not errors


# ---------------------------------------------------------------------------- the explorer in Chromium


def _wait(page, expression: str, timeout: float = 30) -> None:
    """Poll *expression* until true (Playwright's wait_for_function evaluates strings with eval,
    which the page's Content-Security-Policy forbids)."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(f"() => Boolean({expression})"):
        assert time.monotonic() < deadline, f"timed out waiting for {expression}"
        time.sleep(0.05)


@pytest.mark.model
@pytest.mark.browser
def test_explorer_in_chromium(seeds_build, tmp_path):
    from map_layout import with_map

    import kg
    from kg.sparql.results import table_view

    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed")
    out, G = seeds_build.out, seeds_build.graph
    if not any("x" in d for _, d in G.nodes(data=True)):  # a build without map positions: give it a test's
        out = Path(shutil.copytree(seeds_build.out, tmp_path / "build"))
        G = with_map(load_graph(out / "graph.json"))
        (out / "graph.json").write_text(graph_to_json(G), encoding="utf-8")
    concept = "concept:large-language-model"
    papers = sorted(n for n in G[concept] if G.nodes[n]["kind"] == "paper")
    expected = kg.query("papers-of-concept", graph=out / "graph.ttl", bind=["label=large language model"])
    expected_rows, expected_columns = expected.rows, table_view(expected)[1]  # the table kg query prints
    requests: list[str] = []
    with start_server(out, port=0) as server, _chromium_page() as (page, errors):
        page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(server.url) else route.abort())
        page.on("request", lambda r: requests.append(r.url))
        page.goto(server.url)
        _wait(page, "document.body.getAttribute('data-kg-view') === 'ready'")
        page.wait_for_selector("body[data-kg-queries=loaded]")
        assert page.evaluate("kgMap.state().labels.length") >= 10

        # search: found, selected, zoomed to, its papers listed
        page.fill("#kg-search", "large language model")
        page.press("#kg-search", "Enter")
        page.wait_for_selector(f'#kg-details[data-node="{concept}"]')
        assert page.evaluate("kgMap.state().selected") == concept
        position = f"kgApp.view.positionOf('concept', kgApp.M.index['{concept}'][1])"
        _wait(page, f"Math.hypot({position}.x - kgNetwork.getViewPosition().x, {position}.y - kgNetwork.getViewPosition().y) < 5")
        listed = page.eval_on_selector_all("#kg-paper-list button", "bs => bs.map(b => b.dataset.id)")
        assert sorted(listed) == papers

        # a paper: its whole abstract as text (from /api/node), its venue and concepts
        page.click(f'#kg-paper-list button[data-id="{listed[0]}"]')
        page.wait_for_selector(f'#kg-details[data-node="{listed[0]}"]')
        _wait(page, f"document.getElementById('kg-abstract').textContent === {json.dumps(G.nodes[listed[0]]['abstract'])}")
        assert page.eval_on_selector("#kg-abstract", "e => e.children.length") == 0
        assert concept in page.eval_on_selector_all("#kg-concept-list button", "bs => bs.map(b => b.dataset.id)")
        assert G.nodes[listed[0]]["venue"] in page.text_content("#kg-details")
        page.screenshot(path=str(tmp_path / "explorer.png"))

        # a canned query on the live endpoint, its rows in a table
        page.select_option("#kg-query-name", "papers-of-concept")
        page.fill('#kg-query-inputs input[data-var="label"]', "large language model")
        page.click("#kg-query-run")
        page.wait_for_selector("#kg-query-status[data-state=done]")
        assert page.locator("#kg-query-table tbody tr").count() == len(expected_rows)
        assert page.eval_on_selector_all("#kg-query-table thead th", "ths => ths.map(t => t.textContent)") == expected_columns
        # ... in a pane under the map, as wide as it, each cell one line: the columns read across
        pane, shown = page.locator("#kg-query-pane").bounding_box(), page.locator("#kg-map").bounding_box()
        assert abs(pane["width"] - shown["width"]) < 2 and pane["y"] >= shown["y"] + shown["height"] - 1, (pane, shown)
        heights = page.eval_on_selector_all("#kg-query-table tbody tr", "trs => trs.map(t => t.getBoundingClientRect().height)")
        assert max(heights) < 30, heights  # no cell wraps onto a second line
        page.screenshot(path=str(tmp_path / "explorer-query.png"))
        page.click("#kg-query-close")
        assert page.locator("#kg-query-pane").is_hidden()

        # filters: one venue
        icml = page.evaluate("kgApp.M.V.label.indexOf('ICML')")
        page.select_option("#kg-venue", str(icml))
        page.click("#kg-apply")
        drawn = page.evaluate("kgApp.view.papers.map(i => kgApp.M.P.id[i])")
        assert drawn and all(G.nodes[n]["venue"] == "ICML" for n in drawn)
        page.screenshot(path=str(tmp_path / "explorer-icml.png"))
    assert not errors
    assert requests and all(url.startswith(server.url) for url in requests), requests


@pytest.mark.browser
def test_the_query_pane_reads_like_kg_query(served, tmp_path):
    """The explorer's answer to a canned query on the small graph: labels first (a link to its node,
    the IRI its title), the bound values said once above the table, and the tie note under it."""

    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed")
    with _chromium_page() as (page, errors):
        page.goto(served.url)
        page.wait_for_selector("body[data-kg-queries=loaded]")
        page.select_option("#kg-query-name", "cooccurring-concepts")
        page.fill('#kg-query-inputs input[data-var="label"]', "LLM")
        page.fill('#kg-query-inputs input[data-var="top"]', "1")
        page.click("#kg-query-run")
        page.wait_for_selector("#kg-query-status[data-state=done]")
        page.wait_for_selector("#kg-query-ties p")
        first = page.eval_on_selector_all("#kg-query-table tbody tr td:first-child", "tds => tds.map(t => t.textContent)")
        link = page.eval_on_selector("#kg-query-table tbody td:first-child", "td => [td.title, td.querySelector('button').dataset.id]")
        headers = page.eval_on_selector_all("#kg-query-table thead th", "ths => ths.map(t => t.textContent)")
        above, under = page.text_content("#kg-query-notes"), page.text_content("#kg-query-ties")
        page.screenshot(path=str(tmp_path / "query-pane.png"))
    assert first == ["large language model"] and not any(c.startswith("https://") for c in first)
    assert headers[0] == "conceptLabel" and "label" not in headers and "top" not in headers
    assert link == ["https://example.org/kg/concept/large-language-model", "concept:large-language-model"]
    assert "bound: label = LLM, top = 1" in above
    assert under.startswith("the cut at top = 1 falls inside a tie") and not errors


def test_serve_given_an_output_file_serves_its_build_folder(small_build, tmp_path):
    with start_server(small_build / "graph.nt", port=0, timeout=1.0) as server:
        assert server.graph_dir == small_build
        assert json.loads(_get(server.url + "api/status")[2])["graph"] == str(small_build)
    stray = tmp_path / "notes.txt"
    stray.write_text("not a build")
    with pytest.raises(InputError, match="a file, not the output folder of a build"):
        start_server(stray, port=0, timeout=1.0)


# ---------------------------------------------------------------------------- hostile clients


class _Listener:
    """A TCP listener on loopback that counts the connections made to it (and answers none)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


def test_service_endpoints_are_found_however_the_query_is_written():
    from kg.sparql.bindings import service_endpoints

    assert service_endpoints("SELECT * { SERVICE <http://a/> { ?s ?p ?o } }") == ["http://a/"]
    assert service_endpoints("select * { service   silent\n<http://a/>{} }") == ["http://a/"]
    assert service_endpoints("SELECT * { SERVICE ?endpoint {} }") == [None]
    assert service_endpoints("PREFIX e: <http://a/> SELECT * { SERVICE e:x {} }") == [None]
    assert service_endpoints(r"SELECT * { \u0053ERVICE <http://a/> {} }") == ["http://a/"]
    assert service_endpoints("SELECT * { #SERVICE <http://a/>\n ?s <http://e/SERVICE> 'SERVICE <http://a/>' }") == []
    assert service_endpoints('SELECT * { ?s e:SERVICE ?o . ?SERVICE ?p """SERVICE <http://a/> {}""" }') == []


@pytest.mark.parametrize("how", ["get", "form", "body", "api"])
def test_federated_queries_are_refused_and_send_nothing(served, how):
    listener = _Listener()
    try:
        query = f"SELECT * WHERE {{ SERVICE <http://127.0.0.1:{listener.port}/sparql> {{ ?s ?p ?o }} }}"
        if how == "get":
            status, _, body = _get(served.sparql_url + "?" + urllib.parse.urlencode({"query": query}))
        elif how == "form":
            status, _, body = _get(served.sparql_url, {"Content-Type": "application/x-www-form-urlencoded"},
                                   urllib.parse.urlencode({"query": query}).encode())
        elif how == "body":
            status, _, body = _get(served.url + "query", {"Content-Type": "application/sparql-query"}, query.encode())
        else:  # a canned query cannot take a SERVICE through a binding: values are terms
            status, _, body = _get(served.url + "api/query?" + urllib.parse.urlencode(
                {"name": "search", "bind": f"text=}} SERVICE <http://127.0.0.1:{listener.port}/> {{"}))
            assert status == 200 and json.loads(body)["results"]["bindings"] == []
            return
        assert status == 400 and b"federated queries (SERVICE) are disabled" in body
        time.sleep(0.3)
        assert listener.connections == 0
    finally:
        listener.close()


def test_an_allowed_service_that_fails_is_an_error_not_a_200(small_build):
    closed = free_port()
    endpoint = f"http://127.0.0.1:{closed}/sparql"
    with start_server(small_build, port=0, timeout=5.0, allow_service=[endpoint]) as server:
        query = f"SELECT * WHERE {{ ?a ?b ?c SERVICE <{endpoint}> {{ ?s ?p ?o }} }}"
        for accept in ("application/sparql-results+json", "application/sparql-results+xml", "text/csv"):
            status, _, body = _get(server.sparql_url + "?" + urllib.parse.urlencode({"query": query}), {"Accept": accept})
            assert status == 502 and b"failed while writing its answer" in body, (accept, status, body[:200])
        other = "http://127.0.0.1:1/elsewhere"
        status, _, body = _get(server.sparql_url + "?" + urllib.parse.urlencode(
            {"query": f"SELECT * WHERE {{ SERVICE <{other}> {{ ?s ?p ?o }} }}"}))
        assert status == 400 and f"SERVICE <{other}> is not allowed".encode() in body
        assert _get(server.sparql_url + "?" + urllib.parse.urlencode({"query": "ASK { ?s ?p ?o }"}))[0] == 200


def test_allow_service_takes_only_full_http_iris(small_build):
    for bad in ("ftp://x/", "relative", "http://[::1/", "http://a b/"):
        with pytest.raises(InputError, match="--allow-service"):
            start_server(small_build, port=0, allow_service=[bad])


def _raw(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(request)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_a_request_with_two_host_headers_is_refused(served):
    answer = _raw(served.port, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 400") and b"Invalid HTTP request" in answer  # h11 refuses it
    answer = _raw(served.port, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 200")


@pytest.mark.parametrize("body, message", [
    ({"name": 5}, b'"name" must be a string'),
    ({"name": ["top-concepts"]}, b'"name" must be a string'),
    ({"name": "search", "bindings": ["text=x"]}, b'"bindings" must be an object'),
    ({"name": "search", "bindings": {"text": {"a": 1}}}, b"binding 'text' must be a string or a number"),
    ({"name": "search", "view": 5}, b'"view" must be "table"'),
    ([1, 2], b"the body must be a JSON object"),
    ("[" * 100_000, b"it is not JSON"),
])
def test_api_query_answers_400_to_a_body_of_the_wrong_shape(served, body, message):
    data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    status, _, answer = _get(served.url + "api/query", {"Content-Type": "application/json"}, data)
    assert status == 400 and message in answer, answer


def test_clients_that_do_not_read_their_answers_do_not_stall_the_others(small_build):
    """Four clients ask for an 18 MB answer and never read it: other queries are still answered,
    well within the queue wait (60 s) the stalled ones would otherwise cause."""
    big = urllib.parse.urlencode({"query": "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f } LIMIT 40000"})
    ask = urllib.parse.urlencode({"query": "ASK { ?s ?p ?o }"})
    with start_server(small_build, port=0, timeout=10.0) as served, contextlib.ExitStack() as stalled:
        for _ in range(4):
            s = stalled.enter_context(socket.create_connection(("127.0.0.1", served.port)))
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.sendall(f"GET /sparql?{big} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      "Accept: application/sparql-results+json\r\n\r\n".encode())
        time.sleep(1.5)  # their answers are computed by now
        for _ in range(5):
            req = urllib.request.Request(f"{served.sparql_url}?{ask}", headers={"Accept": "application/sparql-results+json"})
            with urllib.request.urlopen(req, timeout=15) as r:
                assert json.loads(r.read())["boolean"] is True


def test_a_query_past_the_memory_cap_is_stopped_with_503(small_build):
    with start_server(small_build, port=0, timeout=60.0, max_memory=400 << 20) as server:
        restarts = server.worker.restarts
        query = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i } ORDER BY ?c ?f ?i"
        status, _, body = _get(server.sparql_url + "?" + urllib.parse.urlencode({"query": query}))
        assert status == 503 and b"memory limit (400 MiB)" in body, body
        deadline = time.monotonic() + 10
        while server.worker.generation == 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        status, _, body = _get(server.sparql_url + "?" + urllib.parse.urlencode({"query": "ASK { ?s ?p ?o }"}),
                               {"Accept": "application/sparql-results+json"})
        assert status == 200 and json.loads(body)["boolean"] is True
        assert server.worker.restarts == restarts  # a death, not a restart kg asked for


def test_max_memory_sizes():
    from kg.serve.worker import parse_size

    assert parse_size("4G") == 4 << 30 and parse_size("512m") == 512 << 20 and parse_size("1.5GiB") == 3 << 29
    assert parse_size("0") == 0 and parse_size("1000") == 1000
    for bad in ("", "lots", "4X", "-1G", "9" * 400 + "G", "99999999T"):
        with pytest.raises(InputError, match="--max-memory"):
            parse_size(bad)


@pytest.mark.parametrize("args, said", [(["--timeout", "nan"], "error: --timeout must be positive, not nan\n"),
                                        (["--max-memory", "9" * 400 + "G"], "error: --max-memory '999")])
def test_serve_option_values_that_are_no_values_are_one_line(run_cli, small_build, args, said):
    result = run_cli("serve", "--graph", str(small_build), "--port", "0", *args)
    assert result.code in (1, 2) and result.err.startswith(said) and result.err.count("\n") == 1, result.err


def test_a_concept_related_to_its_own_broader_concept_keeps_both_links():
    """Two kinds of link between the same two concepts (skos:broader and skos:related) are ordinary:
    the map's data keeps each (the page lists both in the concept's details)."""
    G = fixture_graph()
    narrow, broad = "concept:zeroth-order-optimization", "concept:optimization"
    assert broad in G.nodes[narrow]["broader"] and G.nodes[narrow]["papers"] >= 2 and G.nodes[broad]["papers"] >= 2
    G.add_edge(narrow, broad, kind="cooccurs", count=2, association=0.5, related=True)
    data = json.loads(Explorer(G).map_json())
    ids = data["concepts"]["id"]
    n, b = ids.index(narrow), ids.index(broad)
    assert b in data["concepts"]["broader"][n] and b in data["related"][n] and n in data["related"][b]


def test_a_client_that_stops_reading_is_dropped_after_the_write_timeout(small_build, monkeypatch):
    """Its connection is aborted once a chunk of its answer waits past the write timeout; others
    are answered meanwhile, and the server keeps no connection of it."""
    import kg.serve.app

    monkeypatch.setattr(kg.serve.app, "WRITE_TIMEOUT", 0.5)
    big = urllib.parse.urlencode({"query": "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f } LIMIT 40000"})
    with start_server(small_build, port=0, timeout=10.0) as served:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(("127.0.0.1", served.port))
        s.sendall(f"GET /sparql?{big} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/sparql-results+json\r\n\r\n".encode())
        deadline = time.monotonic() + 30
        while not served.connections() and time.monotonic() < deadline:  # (the server may not have accepted it yet)
            time.sleep(0.01)
        assert served.connections() == 1
        while served.connections() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert served.connections() == 0  # dropped, while the client still holds its end
        received = b""
        s.settimeout(10)  # the server's end is closed: what the kernels hold arrives, then the end
        with contextlib.suppress(ConnectionResetError):
            while chunk := s.recv(1 << 20):
                received += chunk
        s.close()
        whole = _get(served.sparql_url + "?" + big, {"Accept": "application/sparql-results+json"})[2]
        assert received.startswith(b"HTTP/1.1 200") and len(received) < len(whole) / 2  # cut short
        assert _get(served.sparql_url + "?query=ASK%7B%7D")[0] == 200


def test_a_connection_that_sends_nothing_is_closed_after_the_idle_timeout(small_build, monkeypatch):
    import kg.serve.server

    monkeypatch.setattr(kg.serve.server, "IDLE_TIMEOUT", 1)
    with start_server(small_build, port=0) as served:
        with socket.create_connection(("127.0.0.1", served.port), timeout=10) as silent, \
                socket.create_connection(("127.0.0.1", served.port), timeout=10) as partial:
            partial.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # a head never finished
            assert silent.recv(100) == b"" and partial.recv(100) == b""  # closed by the server


def test_a_hundred_idle_connections_do_not_stop_the_others(served):
    with contextlib.ExitStack() as idle:
        for _ in range(100):
            idle.enter_context(socket.create_connection(("127.0.0.1", served.port)))
        assert _get(served.sparql_url + "?query=ASK%7B%7D")[0] == 200
        assert _get(served.url + "api/search?q=llm")[0] == 200


def test_request_bodies_are_bounded_whether_sized_or_chunked(served, monkeypatch):
    import kg.serve.app

    monkeypatch.setattr(kg.serve.app, "MAX_REQUEST", 1000)
    query = urllib.parse.urlencode({"query": "ASK { ?s ?p ?o }"}).encode()
    form = b"POST /sparql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
    assert _raw(served.port, form + b"Content-Length: 5000\r\n\r\n").startswith(b"HTTP/1.1 413")  # refused unread
    chunked = form + b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    answer = _raw(served.port, chunked + b"%x\r\n%s\r\n0\r\n\r\n" % (len(query), query))
    assert answer.startswith(b"HTTP/1.1 200") and b'"boolean":true' in answer
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as s:
        s.sendall(chunked)
        with contextlib.suppress(OSError):  # the server may close before every chunk is sent
            for _ in range(3):
                s.sendall(b"200\r\n" + b"x" * 512 + b"\r\n")
        assert s.recv(100).startswith(b"HTTP/1.1 413")
    assert _get(served.url + "api/status", data=b"x" * 2000)[0] == 405  # a route that takes GET


def test_big_request_heads_are_refused(served):
    """Refused past 256 KiB (h11 checks a head it has not yet parsed whole) with 431, and the
    connection closed cleanly: the rest is read and dropped, so the client gets the answer, not a reset."""
    answer = _raw(served.port, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 2_000_000 + b"\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 431"), answer[:200]
    long_get = served.sparql_url + "?" + urllib.parse.urlencode({"query": "ASK { ?s ?p ?o }" + " " * 30_000})
    assert _get(long_get)[0] == 200  # a long query in a GET URL (past h11's default 16 KiB) is not a big head


def test_a_front_that_stopped_is_a_failure(small_build):
    with start_server(small_build, port=0) as server:
        assert server.failure() is None
        server._uvicorn.should_exit = True  # as if its event loop had ended
        server._thread.join(10)
        assert server.failure() == "the HTTP front stopped"


# ---------------------------------------------------------------------------- hostile queries (issue 43)


DEEP_PARENS = "SELECT * WHERE { FILTER(" + "(" * 8000 + "1" + ")" * 8000 + ") }"  # 16 KB
DEEP_OPTIONALS = "SELECT * WHERE { " + "OPTIONAL { " * 5000 + "}" * 5000 + " }"


def test_a_query_in_a_url_of_a_megabyte_is_414_not_a_reset(served):
    """Issue 43: a 1 MB query in a GET URL got a connection reset; it is refused with 414 and a
    line saying to POST it, and the connection is closed cleanly (the rest of the URL is dropped)."""
    query = urllib.parse.quote("ASK { ?s ?p ?o }" + " " * 1_000_000)
    answer = _raw(served.port, b"GET /sparql?query=" + query.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 414"), answer[:200]
    assert b"with POST" in answer and answer.count(b"\n") <= 8
    assert _get(served.sparql_url + "?query=" + urllib.parse.quote("ASK { ?s ?p ?o }"))[0] == 200


@pytest.mark.parametrize("query", [DEEP_PARENS, DEEP_OPTIONALS], ids=["8000-parentheses", "5000-optionals"])
def test_deeply_nested_queries_are_400_and_the_worker_never_sees_them(served, query):
    """Issue 43: 8,000 nested parentheses or 5,000 nested OPTIONALs crashed the worker (a stack
    overflow), and the front sent them again. Each form of the protocol is refused with 400 before
    the worker sees it; the worker is the same one after, and answers at once."""
    generation = served.worker.generation
    encoded = urllib.parse.urlencode({"query": query})
    for status, _, body in [
        _get(served.sparql_url + "?" + encoded),
        _get(served.url + "query", {"Content-Type": "application/x-www-form-urlencoded"}, encoded.encode()),
        _get(served.sparql_url, {"Content-Type": "application/sparql-query"}, query.encode()),
        _get(served.url + "update?" + urllib.parse.urlencode({"update": query})),
    ]:
        assert status == 400 and b"the limit" in body and body.count(b"\n") == 1, (status, body[:300])
    start = time.monotonic()
    status, _, body = _get(served.sparql_url + "?" + urllib.parse.urlencode({"query": "ASK { ?s ?p ?o }"}))
    assert status == 200 and time.monotonic() - start < 1.0
    assert served.worker.generation == generation  # never crashed, never restarted


def test_a_query_that_crashes_the_worker_is_not_sent_again_and_the_server_stays_up(small_build, monkeypatch):
    """A query that gets past kg's bounds and crashes Oxigraph anyway (here: the bounds switched
    off) answers 502 once and is not resent; six in a row (past the old "5 times within a minute")
    do not stop the server, which answers a normal query after each."""
    import kg.serve.app

    monkeypatch.setattr(kg.serve.app, "check_query", lambda text: None)
    monkeypatch.setattr(kg.serve.worker, "_CRASH_PAUSE", 0.5)
    with start_server(small_build, port=0, timeout=10.0) as server:
        for n in range(1, 7):
            status, _, body = _get(server.sparql_url + "?" + urllib.parse.urlencode({"query": DEEP_PARENS}))
            assert status == 502 and b"not sent again" in body, (status, body[:300])
            status, _, _ = _get(server.sparql_url + "?" + urllib.parse.urlencode({"query": "ASK { ?s ?p ?o }"}))
            assert status == 200  # on the restarted worker
            assert server.worker.crashes == n  # once per request: not retried
            assert server.failure() is None


@pytest.mark.parametrize("how", ["json", "json-name", "form", "url", "body"])
def test_text_that_is_not_unicode_is_400_not_500(served, how):
    """Issue 43: a lone surrogate in a JSON binding (valid JSON) answered 500 with a traceback.
    Every text the server decodes (JSON, forms, URL query strings, bodies) is checked."""
    if how == "json":
        status, _, body = _get(served.url + "api/query", {"Content-Type": "application/json"},
                               b'{"name": "search", "bindings": {"label": "\\ud800"}}')
    elif how == "json-name":
        status, _, body = _get(served.url + "api/query", {"Content-Type": "application/json"}, b'{"name": "\\udcff"}')
    elif how == "form":
        status, _, body = _get(served.url + "api/query", {"Content-Type": "application/x-www-form-urlencoded"},
                               b"name=search&bind=text%3D%FF")
    elif how == "url":
        status, _, body = _get(served.sparql_url + "?query=ASK%20%7B%7D%FF")
    else:
        status, _, body = _get(served.sparql_url, {"Content-Type": "application/sparql-query"}, b"ASK {} #\xff")
    assert status == 400 and body.count(b"\n") == 1, (status, body)
    assert b"surrogate" in body or b"not UTF-8" in body, body



def test_the_seeds_build_writes_what_the_explorer_answered_from_graph_json(seeds_build):
    """explorer.json, sent by kg serve, is byte for byte the /api/map the Explorer made from graph.json
    (same title); explorer-search.sqlite answers each search as the Explorer did; stats.json's counts
    are the Explorer's."""
    from kg.serve.explorer import StoredExplorer

    out = seeds_build.out
    E = Explorer(load_graph(out / "graph.json"), title="kg: seeds")
    served = StoredExplorer(out, out / "store" / "data", title="kg: seeds")
    assert b"".join(served.map_file().chunks()) == E.map_json()
    assert served.map_file().size == len(E.map_json())
    assert served.summary == E.summary
    words = {w for _, _, label, *_ in E._index for w in label.lower().split()[:1]}
    for q in ["learning", "LLM", "graph neural", "p", "paper:", "2", "a b", "zzz-none"] + sorted(words)[:40]:
        assert served.search(q, limit=100) == E.search(q, limit=100), q
