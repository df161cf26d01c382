"""Publishing to and querying an external SPARQL store: a real `oxigraph serve` on loopback."""

from __future__ import annotations

import functools
import http.client
import json
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from fixture_graph import fixture_graph

GRAPH = "https://example.org/kg/graph"


@pytest.fixture(scope="module")
def oxigraph(tmp_path_factory):
    """``oxigraph serve`` (read-write) over a fresh on-disk store: its base URL."""
    from kg.serve.worker import free_port
    from kg.sparql.store import oxigraph_binary

    location = tmp_path_factory.mktemp("oxigraph-store")
    port = free_port()
    proc = subprocess.Popen([oxigraph_binary(), "serve", "--location", str(location), "--bind", f"127.0.0.1:{port}"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(url + "/query?query=ASK%7B%7D", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"oxigraph serve did not start: {proc.stderr.read().decode(errors='replace')}")
        time.sleep(0.05)
    yield url
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    proc.stderr.close()


def sparql(url: str, query: str) -> dict:
    request = urllib.request.Request(url + "/query", data=query.encode(), method="POST",
                                     headers={"Content-Type": "application/sparql-query", "Accept": "application/sparql-results+json"})
    with urllib.request.urlopen(request, timeout=30) as r:
        return json.load(r)


def count(url: str, graph: str = GRAPH) -> int:
    data = sparql(url, f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{graph}> {{ ?s ?p ?o }} }}")
    return int(data["results"]["bindings"][0]["n"]["value"])


def graph_names(url: str) -> set[str]:
    data = sparql(url, "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }")
    return {b["g"]["value"] for b in data["results"]["bindings"]}


@pytest.fixture(scope="module")
def nt(tmp_path_factory):
    """The fixture graph as a build writes it: graph.nt (and graph.ttl, for local queries)."""
    from kg.rdf.statements import to_rdf
    from kg.rdf.write import serialize

    folder = tmp_path_factory.mktemp("fixture-build")
    rdf = to_rdf(fixture_graph())
    (folder / "graph.nt").write_text(serialize(rdf, "nt"), encoding="utf-8")
    (folder / "graph.ttl").write_text(serialize(rdf, "turtle"), encoding="utf-8")
    return folder / "graph.nt"


def triples_in(path) -> int:
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


@pytest.fixture
def small_nt(tmp_path):
    path = tmp_path / "small.nt"
    path.write_text('<http://x/a> <http://x/name> "A"@en .\n<http://x/b> <http://x/name> "B" .\n'
                    '<http://x/c> <http://x/n> "3"^^<http://www.w3.org/2001/XMLSchema#integer> .\n', encoding="utf-8")
    return path


def test_publish_then_query_the_endpoint_as_a_local_graph(oxigraph, nt, project, run_cli):
    import kg

    report = kg.publish(nt, oxigraph + "/store", graph_iri=GRAPH)
    assert (report.triples, report.batches, report.graph) == (triples_in(nt), 1, GRAPH)
    assert count(oxigraph) == triples_in(nt) and graph_names(oxigraph) == {GRAPH}  # the temporary graph is gone
    for args in (["top-concepts"], ["papers-of-concept", "--bind", "label=SGD"],
                 ["concepts-of-paper", "--bind", "paper=<https://example.org/kg/paper/p1>"]):
        for fmt in ("table", "json"):
            local = run_cli("query", *args, "--graph", str(nt.with_suffix(".ttl")), "--format", fmt)
            remote = run_cli("query", *args, "--endpoint", oxigraph + "/query", "--default-graph", GRAPH, "--format", fmt)
            assert remote.code == local.code == 0, remote.err
            assert remote.out == local.out
    assert "stochastic gradient descent" in run_cli("query", "top-concepts", "--endpoint", oxigraph + "/query",
                                                    "--default-graph", GRAPH).out


def test_republish_replaces_the_graph_and_batches_do_not_change_it(oxigraph, nt, small_nt):
    import kg

    kg.publish(nt, oxigraph + "/store", graph_iri=GRAPH)
    report = kg.publish(small_nt, oxigraph, graph_iri=GRAPH)  # the server's base URL means its /store
    assert report.triples == count(oxigraph) == 3  # replaced, not added to
    whole = sparql(oxigraph, f"SELECT ?s ?p ?o WHERE {{ GRAPH <{GRAPH}> {{ ?s ?p ?o }} }} ORDER BY ?s ?p ?o")
    other = "https://example.org/kg/other-graph"
    for store, update, size in ((oxigraph + "/store", None, 7), (None, oxigraph + "/update", 11)):  # GSP and INSERT DATA
        kg.publish(nt, store, update=update, graph_iri=other, batch_triples=size)
        kg.publish(nt, store, update=update, graph_iri=GRAPH, batch_triples=size)
        report = kg.publish(small_nt, store, update=update, graph_iri=GRAPH, batch_triples=2)
        assert (report.triples, report.batches) == (3, 2)
        assert sparql(oxigraph, f"SELECT ?s ?p ?o WHERE {{ GRAPH <{GRAPH}> {{ ?s ?p ?o }} }} ORDER BY ?s ?p ?o") == whole
        report = kg.publish(nt, store, update=update, graph_iri=GRAPH, batch_triples=size)
        assert report.batches == -(-triples_in(nt) // size) > 3
        assert count(oxigraph) == count(oxigraph, other) == triples_in(nt)
    assert graph_names(oxigraph) == {GRAPH, other}
    sparql_update(oxigraph, f"DROP GRAPH <{other}>")


def sparql_update(url: str, update: str) -> None:
    request = urllib.request.Request(url + "/update", data=update.encode(), method="POST",
                                     headers={"Content-Type": "application/sparql-update"})
    urllib.request.urlopen(request, timeout=30).close()


class _Proxy(BaseHTTPRequestHandler):
    """Forwards to the Oxigraph server, except the requests `fail` picks, which get a 500."""

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.seen.append((self.path, body))
        self.server.auth.append(self.headers.get("Authorization"))
        if self.server.fail(self.path, body, self.server.seen):
            message = b"Storage error: no space left on device\n(more detail on a second line)"
            self.send_response(500)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(message)))
            self.end_headers()
            self.wfile.write(message)
            return
        target = urllib.parse.urlsplit(self.server.target)
        conn = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
        conn.request("POST", self.path, body, {k: self.headers[k] for k in ("Content-Type", "Accept") if k in self.headers})
        answer = conn.getresponse()
        data = answer.read()
        conn.close()
        self.send_response(answer.status)
        if answer.getheader("Content-Type"):
            self.send_header("Content-Type", answer.getheader("Content-Type"))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def proxy(oxigraph):
    """A front to the Oxigraph server that fails the requests ``proxy.fail(path, body, seen)`` picks."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Proxy)
    server.target, server.seen, server.auth, server.fail = oxigraph, [], [], lambda path, body, seen: False
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join()


def _stores(path: str) -> bool:
    return path.startswith("/store")


def test_a_failed_upload_leaves_the_previous_graph_intact(oxigraph, nt, small_nt, proxy):
    import kg
    from kg.errors import OutputError

    kg.publish(small_nt, oxigraph + "/store", graph_iri=GRAPH)
    before = sparql(oxigraph, f"SELECT ?s ?p ?o WHERE {{ GRAPH <{GRAPH}> {{ ?s ?p ?o }} }} ORDER BY ?s ?p ?o")
    base = f"http://127.0.0.1:{proxy.server_address[1]}"
    total = triples_in(nt)
    proxy.fail = lambda path, body, seen: _stores(path) and sum(_stores(p) for p, _ in seen) == 3  # the 3rd batch
    with pytest.raises(OutputError) as failed:
        kg.publish(nt, base + "/store", graph_iri=GRAPH, batch_triples=10)
    message = str(failed.value)
    assert f"20 of {total} triples sent (2 of {-(-total // 10)} batches)" in message
    assert "500 Internal Server Error: Storage error: no space left on device (more detail on a second line)" in message
    assert f"<{GRAPH}> is unchanged" in message and "the temporary graph was dropped" in message
    assert "\n" not in message
    assert sparql(oxigraph, f"SELECT ?s ?p ?o WHERE {{ GRAPH <{GRAPH}> {{ ?s ?p ?o }} }} ORDER BY ?s ?p ?o") == before
    assert graph_names(oxigraph) == {GRAPH}

    proxy.seen.clear()
    proxy.fail = lambda path, body, seen: b"MOVE" in body  # every batch arrives; the replacement is refused
    with pytest.raises(OutputError) as refused:
        kg.publish(nt, base + "/store", graph_iri=GRAPH, batch_triples=1000)
    assert f"all {total} triples were sent in 1 batches" in str(refused.value) and "is unchanged" in str(refused.value)
    assert sparql(oxigraph, f"SELECT ?s ?p ?o WHERE {{ GRAPH <{GRAPH}> {{ ?s ?p ?o }} }} ORDER BY ?s ?p ?o") == before
    assert graph_names(oxigraph) == {GRAPH}


def test_basic_auth_from_the_url_or_the_environment(oxigraph, small_nt, proxy, monkeypatch):
    import kg

    port = proxy.server_address[1]
    kg.publish(small_nt, f"http://me:s%40cret@127.0.0.1:{port}/store", graph_iri=GRAPH)
    assert set(proxy.auth) == {"Basic bWU6c0BjcmV0"}  # me:s@cret
    proxy.auth.clear()
    monkeypatch.setenv("KG_STORE_AUTH", "you:pw")
    kg.query("top-concepts", endpoint=f"http://127.0.0.1:{port}/query")
    assert proxy.auth == ["Basic eW91OnB3"]


def test_build_store_through_the_command_line(oxigraph, proxy, tmp_path, project, run_cli, monkeypatch, hash_embedder, nlp):
    import kg.pipeline

    monkeypatch.setattr(kg.pipeline, "build", functools.partial(kg.pipeline.build, embedder=hash_embedder, nlp=nlp))
    src = tmp_path / "a.txt"
    src.write_text("ICML 2026\n\nGraph neural networks pass messages.\n\nGraph neural networks for molecules.\n")
    out = tmp_path / "out"
    graph = "https://example.org/mine/graph"
    bad = run_cli("build", str(src), "--out", str(out), "--store", "localhost:7878/store")
    assert bad.code == 2 and "--store 'localhost:7878/store': give an http(s) URL" in bad.err and not out.exists()
    built = run_cli("build", str(src), "--out", str(out), "--base", "https://example.org/mine/", "--store", oxigraph + "/store")
    assert built.code == 0, built.err
    assert f"loaded {triples_in(out / 'graph.nt')} triples into <{graph}> at {oxigraph}/store (1 request," in built.out
    local = run_cli("query", "top-concepts", "--graph", str(out / "graph.ttl"), "--format", "csv")
    remote = run_cli("query", "top-concepts", "--endpoint", oxigraph + "/query", "--default-graph", graph, "--format", "csv")
    assert remote.code == 0 and remote.out == local.out and "graph neural network" in remote.out

    proxy.fail = lambda path, body, seen: True
    base = f"http://127.0.0.1:{proxy.server_address[1]}"
    failed = run_cli("build", str(src), "--out", str(out), "--store", base + "/store", "--store-graph", graph, "-q")
    assert failed.code == 5 and failed.out == "" and len(failed.err.splitlines()) == 1
    assert failed.err.startswith(f"error: the build is written to {out}/, but loading it into the store failed: {base}/store: 500 ")
    assert count(oxigraph, graph) == triples_in(out / "graph.nt")
    sparql_update(oxigraph, f"DROP GRAPH <{graph}>")


def test_endpoint_errors_are_one_line(oxigraph, project, run_cli, tmp_path):
    from kg.serve.worker import free_port

    dead = f"http://127.0.0.1:{free_port()}/query"
    refused = run_cli("query", "top-concepts", "--endpoint", dead)
    assert refused.code == 4 and refused.err.startswith(f"error: {dead} did not answer: cannot connect (") and refused.err.count("\n") == 1
    bad = tmp_path / "bad.rq"
    bad.write_text("SELECT ?x WHERE { ?x ")
    parse = run_cli("query", str(bad), "--endpoint", oxigraph + "/query")
    assert parse.code == 4 and parse.err.startswith(f"error: {oxigraph}/query refused the query: 400 Bad Request: error at 1:")
    assert parse.err.count("\n") == 1 and len(parse.err) < 400
    wrong = run_cli("query", "top-concepts", "--endpoint", oxigraph + "/store")  # not a query endpoint
    assert wrong.code == 4 and wrong.err.startswith(f"error: {oxigraph}/store "), wrong.err
    unknown = run_cli("query", "top-concepts", "--endpoint", oxigraph + "/query", "--bind", "nosuch=x")
    assert unknown.code == 4 and "takes no ?nosuch" in unknown.err and unknown.err.count("\n") == 1
    both = run_cli("query", "top-concepts", "--endpoint", oxigraph + "/query", "--graph", "outputs/graph.ttl")
    assert both.code == 2 and "give --graph or --endpoint, not both" in both.err
    not_http = run_cli("query", "top-concepts", "--endpoint", "ftp://example.org/")
    assert not_http.code == 2 and "give an http(s) URL" in not_http.err
    ask = tmp_path / "ask.rq"
    ask.write_text("ASK { ?s ?p ?o }")
    assert run_cli("query", str(ask), "--endpoint", oxigraph + "/query", "--default-graph", "urn:x:empty").out == "false\n"


def test_publish_errors_before_anything_is_sent(tmp_path, small_nt):
    import kg
    from kg.errors import InputError, OutputError
    from kg.serve.worker import free_port
    from kg.sparql.remote import shown, store_endpoints

    assert store_endpoints("http://h:3030/ds/data").update == "http://h:3030/ds/update"  # Fuseki
    assert store_endpoints("http://h:7878").graph_store == "http://h:7878/store"  # an Oxigraph server
    assert store_endpoints("http://h:7878/store").update == "http://h:7878/update"
    assert shown("http://me:secret@h/store") == "http://me:***@h/store"
    dead = f"http://me:secret@127.0.0.1:{free_port()}/store"
    with pytest.raises(OutputError) as refused:
        kg.publish(small_nt, dead, graph_iri=GRAPH)
    assert "0 of 3 triples sent (0 of 1 batches)" in str(refused.value) and "cannot connect" in str(refused.value)
    assert "secret" not in str(refused.value) and "could not be dropped" in str(refused.value)
    bnodes = tmp_path / "b.nt"
    bnodes.write_text('_:a <http://x/p> "1" .\n<http://x/s> <http://x/p> _:a .\n<http://x/s> <http://x/q> "_:a ." .\n')
    with pytest.raises(InputError, match="blank nodes"):
        kg.publish(bnodes, dead, graph_iri=GRAPH, batch_triples=2)
    with pytest.raises(InputError, match="give an absolute IRI"):
        kg.publish(small_nt, dead, graph_iri="not an iri")
    with pytest.raises(InputError, match="no such N-Triples file"):
        kg.publish(tmp_path / "none.nt", dead, graph_iri=GRAPH)


class _Hostile(BaseHTTPRequestHandler):
    """An endpoint that answers 200 and then: a byte now and then for ever ("trickle"), bytes
    without end ("flood"), or JSON nested 100,000 deep ("deep")."""

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        how = self.path.strip("/")
        self.send_response(200)
        self.send_header("Content-Type", "application/sparql-results+json")
        self.end_headers()
        try:
            if how == "deep":
                self.wfile.write(b"[" * 100_000 + b"]" * 100_000)
                return
            while not self.server.stopping:
                self.wfile.write(b" " if how == "trickle" else b" " * (1 << 16))
                self.wfile.flush()
                if how == "trickle":
                    time.sleep(0.2)
        except OSError:
            pass


@pytest.fixture
def hostile():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    server.stopping = False
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.stopping = True
    server.shutdown()
    server.server_close()


def test_an_endpoint_that_trickles_floods_or_nests_its_answer_is_one_query_error(hostile, monkeypatch):
    """The timeout is the whole answer's, the answer is bounded, and a document nested too deep
    is a malformed one: kg query never hangs, never fills the memory, never shows a traceback."""
    import kg.sparql.remote
    from kg.errors import QueryError
    from kg.sparql.remote import query_endpoint

    with pytest.raises(QueryError, match=r"did not answer: no whole answer within 1\.5 s$"):
        query_endpoint(hostile + "/trickle", "ASK {}", timeout=1.5)
    monkeypatch.setattr(kg.sparql.remote, "MAX_ANSWER_BYTES", 1 << 20)
    with pytest.raises(QueryError, match=r"answered with too much: its answer is over 1 MiB; ask for less \(a LIMIT\)$"):
        query_endpoint(hostile + "/flood", "ASK {}", timeout=30)
    with pytest.raises(QueryError, match=r"answered with a malformed application/sparql-results\+json document"):
        query_endpoint(hostile + "/deep", "ASK {}", timeout=30)


@pytest.mark.parametrize("url", ["http://[::1/query", "http://h:port/query", "http://[::1"])
def test_an_endpoint_or_store_url_that_is_no_url_is_one_line(run_cli, tmp_path, url):
    query = run_cli("query", "top-concepts", "--endpoint", url)
    assert query.code == 2 and query.err == f"error: --endpoint {url!r}: give an http(s) URL, for example http://127.0.0.1:7878/store\n"
    build = run_cli("build", str(tmp_path / "missing"), "--out", str(tmp_path / "out"), "--store", url)
    assert build.code == 2 and build.err.count("\n") == 1 and "--store" in build.err and "give an http(s) URL" in build.err
