"""The HTTP front of ``kg serve``: routes, the Host guard, query deadlines, spooled answers.

The explorer page and its data, the canned queries and the SPARQL 1.1 Protocol, forwarded to
the Oxigraph worker (`kg.serve.worker`); docs/design.md says why the deadline is kg's.
"""

from __future__ import annotations

import atexit
import contextlib
import http.client
import io
import json
import os
import re
import socket
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Collection, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

from kg.errors import InputError, KGError
from kg.serve.worker import (
    _Pool,
    _Unavailable,
    _Worker,
    default_max_memory,
    format_size,
)
from kg.sparql.bindings import check_federation
from kg.sparql.catalogue import bound_query, canned_queries
from kg.sparql.store import Log, _FolderLock, _quiet, oxigraph_binary, prepare_store

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7878
DEFAULT_TIMEOUT = 10.0
_MAX_BUFFER = 8 * 1024 * 1024  # an answer is spooled in memory up to this size, then in a temporary file
_WRITE_TIMEOUT = 30.0  # seconds a client may take to read each 64 KiB of an answer
_MAX_REQUEST = 16 * 1024 * 1024
_LOOPBACK = {"127.0.0.1", "::1", "localhost"}


# --------------------------------------------------------------------------------------------
# The front


_JSON_REQUEST = 'the body must be a JSON object: {"name": "QUERY", "bindings": {"VARIABLE": "value", ...}}'


def _json_request(body: bytes) -> tuple[str, dict[str, str]]:
    """The query name and bindings of a JSON ``/api/query`` body; `ValueError` with the reason."""
    try:
        data = json.loads(body or b"{}")
    except (ValueError, RecursionError) as e:
        raise ValueError(f"{_JSON_REQUEST}; it is not JSON ({e.__class__.__name__})") from e
    if not isinstance(data, dict):
        raise ValueError(_JSON_REQUEST)
    name, bindings = data.get("name", ""), data.get("bindings") or {}
    if not isinstance(name, str):
        raise ValueError(f'"name" must be a string (a query of /queries), not {json.dumps(name)[:80]}')
    if not isinstance(bindings, dict):
        raise ValueError('"bindings" must be an object of variable names and values')
    out = {}
    for k, v in bindings.items():
        if isinstance(v, bool) or not isinstance(v, (str, int, float)):
            raise ValueError(f'binding {k!r} must be a string or a number, not {json.dumps(v)[:80]}')
        if str(v) != "":
            out[k] = str(v)
    return name, out


class _Front(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address, handler, app: Server) -> None:
        self.app = app
        self.connections: set[socket.socket] = set()
        self._conn_lock = threading.Lock()
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, handler)

    def server_bind(self) -> None:  # without HTTPServer's reverse DNS lookup of the address
        import socketserver

        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = str(self.server_address[0]), self.server_address[1]

    def process_request(self, request, client_address):
        with self._conn_lock:
            self.connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request):
        with self._conn_lock:
            self.connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        with self._conn_lock:
            for conn in list(self.connections):
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request, client_address):  # a client that went away is not an error
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError, socket.timeout)):
            return
        super().handle_error(request, client_address)


_CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data: blob:; "
        "connect-src 'self'; font-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kg-serve"
    timeout = 120  # idle keep-alive connections are closed after this
    server: _Front

    def version_string(self) -> str:
        return self.server_version

    # -- plumbing
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        self.server.app.access_log(f"{self.address_string()} {format % args}")

    def _send(self, status: int, body: bytes, ctype: str, headers: Mapping[str, str] = {}) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", "no-store")
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _text(self, status: int, message: str) -> None:
        self._send(status, (message.rstrip("\n") + "\n").encode("utf-8"), "text/plain; charset=utf-8")

    def _json(self, data, status: int = 200) -> None:
        self._send(status, json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8"),
                   "application/json; charset=utf-8")

    def _body(self) -> bytes | None:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            self.close_connection = True
            self._text(411, "send the request body with a Content-Length")
            return None
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0 or length > _MAX_REQUEST:
            self.close_connection = True
            self._text(413, f"the request body must be at most {_MAX_REQUEST} bytes")
            return None
        return self.rfile.read(length) if length else b""

    def _host_ok(self) -> bool:
        """When bound to loopback, only local host names (a guard against DNS rebinding)."""
        if not self.server.app.loopback:
            return True
        host = (self.headers.get("Host") or "").strip().lower()
        if not host:  # HTTP/1.0 without Host: not a browser, so not a rebinding attack
            return True
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        return name.strip("[]") in _LOOPBACK

    # -- methods
    def do_GET(self) -> None:
        self._route("GET")

    def do_HEAD(self) -> None:
        self._route("HEAD")

    def do_POST(self) -> None:
        self._route("POST")

    def _route(self, method: str) -> None:
        app = self.server.app
        if len(self.headers.get_all("Host") or ()) > 1:
            self.close_connection = True
            return self._text(400, "a request must have one Host header, not several")
        if not self._host_ok():
            self.close_connection = True
            return self._text(421, "this server answers only to 127.0.0.1, localhost or [::1]")
        url = urlsplit(self.path)
        path = url.path
        try:
            if path in ("/sparql", "/query", "/update"):
                return self._sparql(method, path, url.query)
            if method == "POST" and path != "/api/query":
                self._body()
                return self._send(405, f"{path} takes GET\n".encode(), "text/plain; charset=utf-8", {"Allow": "GET, HEAD"})
            if path in ("/", "/index.html"):
                return self._send(200, app.explorer_page(), "text/html; charset=utf-8", {"Content-Security-Policy": _CSP})
            if path == "/queries":
                return self._json(canned_queries())
            if path == "/api/status":
                return self._json(app.status())
            if path == "/api/query":
                return self._named_query(method, url.query)
            if path.startswith("/api/"):
                return self._explorer_api(path, parse_qs(url.query))
            if path == "/favicon.ico":
                return self._send(204, b"", "image/x-icon")
            self._text(404, f"no such page: {path}; see / (explorer), /sparql (SPARQL endpoint), /queries")
        except KGError as e:
            self._text(400, str(e))

    def _explorer_api(self, path: str, params: dict[str, list[str]]) -> None:
        explorer = self.server.app.explorer
        first = lambda k, d="": (params.get(k) or [d])[0]
        if path == "/api/search":
            try:
                limit = max(1, min(int(first("limit", "20")), 100))
            except ValueError:
                return self._text(400, "limit must be a whole number")
            return self._json(explorer.search(first("q"), limit=limit))
        if path == "/api/graph":
            try:
                min_papers = max(1, int(first("min_papers", "1") or 1))
            except ValueError:
                return self._text(400, "min_papers must be a whole number")
            return self._json(explorer.graph_data(venue=first("venue") or None, min_papers=min_papers))
        if path in ("/api/node", "/api/neighborhood"):
            node = first("id")
            data = explorer.node(node) if path == "/api/node" else explorer.neighborhood(node)
            if data is None:
                return self._text(404, f"no node {node!r} in the graph")
            return self._json(data)
        self._text(404, f"no such page: {path}")

    def _named_query(self, method: str, qs: str) -> None:
        params = parse_qs(qs, keep_blank_values=True)
        name = (params.get("name") or [""])[0]
        bindings: list[str] | dict = params.get("bind", [])
        if method == "POST":
            body = self._body()
            if body is None:
                return
            ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            if ctype == "application/json":
                try:
                    name, bindings = _json_request(body)
                except ValueError as e:
                    return self._text(400, str(e))
            else:
                form = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
                name = (form.get("name") or [name])[0]
                bindings = list(bindings) + form.get("bind", [])
        query = bound_query(name, bindings)
        check_federation(query, self.server.app.allowed_services)
        accept = self.headers.get("Accept") or "application/sparql-results+json"
        if "html" in accept:
            accept = "application/sparql-results+json"
        self._forward("POST", "/query", urlencode({"query": query}).encode("utf-8"),
                      {"Content-Type": "application/x-www-form-urlencoded", "Accept": accept})

    def _sparql(self, method: str, path: str, qs: str) -> None:
        if method == "HEAD":
            method = "GET"
        body = b""
        ctype_full = self.headers.get("Content-Type") or ""
        ctype = ctype_full.split(";")[0].strip().lower()
        target = "/update" if path == "/update" else "/query"
        if method == "POST":
            read = self._body()
            if read is None:
                return
            body = read
            if ctype == "application/sparql-update":
                target = "/update"
            elif ctype == "application/x-www-form-urlencoded":
                form = parse_qs(body.decode("utf-8", "replace"))
                if "update" in form and "query" not in form:
                    target = "/update"
        elif "update" in parse_qs(qs) and "query" not in parse_qs(qs):
            target = "/update"
        texts = [v for k, vs in parse_qs(qs).items() if k in ("query", "update") for v in vs]
        if method == "POST":
            if ctype in ("application/sparql-query", "application/sparql-update"):
                texts.append(body.decode("utf-8", "replace"))
            elif ctype == "application/x-www-form-urlencoded":
                form = parse_qs(body.decode("utf-8", "replace"))
                texts += [v for k, vs in form.items() if k in ("query", "update") for v in vs]
        for text in texts:
            check_federation(text, self.server.app.allowed_services)
        headers = {"Accept": self.headers.get("Accept") or "*/*"}
        if method == "POST":
            headers["Content-Type"] = ctype_full
        self._forward(method, target + (f"?{qs}" if qs else ""), body if method == "POST" else None, headers)

    def _forward(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> None:
        """Send a request to the worker and its answer to the client, within the query deadline.

        At most `Server.concurrency` requests run in the worker at once (others wait their
        turn, up to `Server.queue_wait` seconds): a query's clock starts when it is sent, so
        its timeout measures its own run, not the queue in front of it. The answer is read
        whole into a spool (memory, then a temporary file) and checked before the slot is
        given back and the answer sent, so a client that reads slowly, or not at all, holds
        only its spool and its own thread, never a slot of the worker.
        """
        app = self.server.app
        if not app.slots.acquire(timeout=app.queue_wait):
            return self._text(503, f"the server is busy: {app.concurrency} queries are running and others are "
                                   f"waiting; try again")
        try:
            answer = self._dispatch(app, method, path, body, headers)
        finally:
            app.slots.release()
        if answer is not None:
            with answer:
                self._send_answer(answer)

    def _dispatch(self, app: Server, method: str, path: str, body: bytes | None,
                  headers: dict[str, str]) -> _Answer | None:
        """The worker's whole answer, or None when an error was sent instead."""
        start = time.monotonic()
        deadline = start + app.timeout
        attempt = 0
        while True:
            attempt += 1
            try:
                generation, conn, reused = app.pool.get(deadline)
            except _Unavailable as e:
                return self._text(503, str(e))
            received = False
            spool = tempfile.SpooledTemporaryFile(max_size=_MAX_BUFFER)
            try:
                conn.timeout = max(0.01, deadline - time.monotonic())
                conn.request(method, path, body=body, headers=headers)
                conn.sock.settimeout(max(0.01, deadline - time.monotonic()))
                resp = conn.getresponse()
                received = True
                while True:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise TimeoutError
                    conn.sock.settimeout(remaining)
                    data = resp.read1(1 << 16)
                    if not data:
                        break
                    spool.write(data)
                if resp.will_close:
                    conn.close()
                else:
                    app.pool.put(generation, conn)
                answer = _Answer(resp.status, {k: resp.getheader(k) for k in _ANSWER_HEADERS if resp.getheader(k)}, spool)
                problem = answer.problem() if resp.status == 200 else None
                if problem:
                    answer.close()
                    return self._text(502, f"the SPARQL server failed while writing its answer: {problem}")
                app.answered += 1
                return answer
            except (TimeoutError, socket.timeout):
                spool.close()
                conn.close()
                app.timeouts += 1
                app.worker.restart(generation, f"a query ran past the {app.timeout:g} s timeout")
                return self._text(503, f"the query ran longer than the {app.timeout:g} s timeout and was stopped")
            except (OSError, http.client.HTTPException) as e:
                spool.close()
                conn.close()
                if app.worker.out_of_memory(generation):
                    return self._text(503, f"the SPARQL server ran out of its memory limit ({app.max_memory_text}) "
                                           f"while answering and was restarted; the query was stopped")
                restarted = not app.worker.current(generation)
                if attempt < 3 and time.monotonic() < deadline and (restarted or (reused and not received)):
                    continue  # the worker was restarted under it, or a stale keep-alive connection: send again
                return self._text(502, f"the SPARQL server failed to answer ({e.__class__.__name__}: {e})")

    def _send_answer(self, answer: _Answer) -> None:
        """Send *answer*, a chunk at a time, each within `_WRITE_TIMEOUT`: a client that stops
        reading is dropped, and its spool freed, instead of being waited for."""
        self.send_response(answer.status)
        for name, value in answer.headers.items():
            self.send_header(name, value)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Length", str(answer.size))
        self.end_headers()
        if self.command == "HEAD":
            return
        self.connection.settimeout(_WRITE_TIMEOUT)
        try:
            answer.spool.seek(0)
            while chunk := answer.spool.read(1 << 16):
                self.wfile.write(chunk)
        except (TimeoutError, socket.timeout):
            self.close_connection = True
        finally:
            self.connection.settimeout(self.timeout)


_ANSWER_HEADERS = ("Content-Type", "Content-Location", "Vary")


_CHECKED_WHOLE = 64 * 1024 * 1024  # answers up to this size are parsed whole to check them; bigger ones by their end


class _Answer:
    """A worker's answer, read whole: status, the headers passed on, and the body in a spool."""

    def __init__(self, status: int, headers: dict[str, str], spool) -> None:
        self.status, self.headers, self.spool = status, headers, spool
        self.size = spool.tell()

    def __enter__(self) -> _Answer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.spool.close()

    def _read(self, start: int = 0) -> bytes:
        self.spool.seek(start)
        return self.spool.read()

    def problem(self) -> str | None:
        """Why a ``200`` body is not a complete document, or None. Oxigraph evaluates lazily: an
        error met after the first rows (a failing SERVICE, say) is written as text into the
        results it has begun, with ``200 OK``; that must reach the client as an error."""
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        tail = self._read(max(0, self.size - 4096)).rstrip()
        whole = self.size <= _CHECKED_WHOLE
        if ctype in ("application/sparql-results+json", "application/json", "application/ld+json"):
            if whole:
                try:
                    json.loads(self._read())
                    return None
                except (ValueError, RecursionError):
                    pass
            elif tail.endswith((b"}", b"]")):
                return None
        elif ctype in ("application/sparql-results+xml", "application/rdf+xml", "application/xml"):
            if tail.endswith((b"</sparql>", b"</rdf:RDF>", b"/>")):
                return None
        elif ctype in ("text/csv", "text/tab-separated-values"):
            if not whole or _complete_table(self._read(), "\t" if "tab" in ctype else ","):
                return None
        elif ctype in ("application/n-triples", "application/n-quads", "text/turtle", "application/trig"):
            if not tail or tail.endswith(b"."):
                return None
        else:
            return None
        last = tail.rsplit(b"\n", 1)[-1].decode("utf-8", "replace").strip()
        return last[-300:] or "an incomplete answer"


def _complete_table(body: bytes, delimiter: str) -> bool:
    """Whether the last record of a SPARQL CSV/TSV result has as many fields as its header."""
    import csv

    rows = list(csv.reader(io.StringIO(body.decode("utf-8", "replace"), newline=""), delimiter=delimiter,
                           quoting=csv.QUOTE_MINIMAL if delimiter == "," else csv.QUOTE_NONE))
    rows = [r for r in rows if r]
    return len(rows) < 2 or len(rows[-1]) == len(rows[0])


# --------------------------------------------------------------------------------------------
# The server


_LIVE: weakref.WeakSet[Server] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    for server in list(_LIVE):
        with contextlib.suppress(Exception):
            server.stop()


class Server:
    """A running ``kg serve``: the front, the Oxigraph worker and the folder lock. Stop it with
    `stop` (or use it as a context manager)."""

    def __init__(self, graph_dir: Path, host: str, port: int, timeout: float, *, log: Log = _quiet,
                 access_log: Log = _quiet, concurrency: int | None = None, max_memory: int | None = None,
                 allow_service: Collection[str] = ()) -> None:
        from kg.graph.io import load_graph
        from kg.view.explorer import Explorer

        if timeout <= 0:
            raise KGError(f"--timeout must be positive, not {timeout}")
        self.graph_dir, self.host, self.timeout = Path(graph_dir), host, float(timeout)
        self.log, self.access_log = log, access_log
        self.loopback = host in _LOOPBACK or host.startswith("127.")
        self.max_memory = default_max_memory() if max_memory is None else int(max_memory)
        self.max_memory_text = format_size(self.max_memory)
        self.allowed_services = frozenset(_check_endpoint(e) for e in allow_service)
        self.answered = self.timeouts = 0
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 2)
        self.concurrency = max(1, concurrency or max(2, cores))  # queries running in the worker at once
        self.slots = threading.BoundedSemaphore(self.concurrency)
        self.queue_wait = max(60.0, 6 * self.timeout)
        self._stopped = False
        self._lock: _FolderLock | None = None
        self.worker: _Worker | None = None
        self._front: _Front | None = None
        self._serving = False
        if self.graph_dir.is_file() and (self.graph_dir.parent / "graph.nt").is_file():  # an output file of a build: its folder
            self.graph_dir = self.graph_dir.parent
        elif self.graph_dir.exists() and not self.graph_dir.is_dir():
            raise InputError(f"{self.graph_dir}: a file, not the output folder of a build; pass --graph FOLDER (the --out of kg build)")
        elif not self.graph_dir.is_dir():
            raise InputError(f"{self.graph_dir}: no such folder; run `kg build --out {self.graph_dir}` first, or pass --graph")
        graph_json = self.graph_dir / "graph.json"
        try:
            try:  # first, so that a busy port fails at once; connections wait in the backlog until it serves
                self._front = _Front((host, port), _Handler, self)
            except OSError as e:
                raise KGError(f"cannot listen on {host}:{port} ({e.strerror or e}); pick another --port or --host") from e
            self._lock = _FolderLock(self.graph_dir)
            exe = oxigraph_binary()
            self.store = prepare_store(self.graph_dir, oxigraph=exe, log=log, _lock=self._lock)
            self.explorer = Explorer(load_graph(graph_json), title=f"kg: {self.graph_dir.resolve().name}")
            self.worker = _Worker(exe, self.store.location, log=log, max_memory=self.max_memory)
            self.pool = _Pool(self.worker)
            self.worker.start()
            _LIVE.add(self)
            self._thread = threading.Thread(target=self._front.serve_forever, kwargs={"poll_interval": 0.2},
                                            name="kg-serve-front", daemon=True)
            self._thread.start()
            self._serving = True
        except BaseException:
            self.stop()
            raise

    @property
    def port(self) -> int:
        return self._front.server_address[1]

    @property
    def url(self) -> str:
        host = self.host if ":" not in self.host else f"[{self.host}]"
        return f"http://{host}:{self.port}/"

    @property
    def sparql_url(self) -> str:
        return self.url + "sparql"

    def explorer_page(self) -> bytes:
        return self.explorer.page()

    def status(self) -> dict:
        return {"graph": str(self.graph_dir), "triples": self.store.triples, "timeout": self.timeout,
                "concurrency": self.concurrency, "max_memory": self.max_memory,
                "allowed_services": sorted(self.allowed_services),
                "worker": {"pid": self.worker.pid, "generation": self.worker.generation, "restarts": self.worker.restarts},
                "answered": self.answered, "timeouts": self.timeouts}

    def stop(self) -> None:
        """Stop answering, stop the worker, release the folder. Safe to call twice."""
        if self._stopped:
            return
        self._stopped = True
        if self._front is not None:
            if self._serving:
                self._front.shutdown()
            self._front.server_close()
            self._front.close_connections()
        if self.worker is not None:
            self.worker.stop()
            self.pool.close()
        if self._lock is not None:
            self._lock.close()
        _LIVE.discard(self)

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def start_server(graph_dir: str | os.PathLike = "outputs", host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
                 timeout: float = DEFAULT_TIMEOUT, *, log: Log = _quiet, access_log: Log = _quiet,
                 concurrency: int | None = None, max_memory: int | None = None,
                 allow_service: Collection[str] = ()) -> Server:
    """Serve the build in *graph_dir* (explorer at ``/``, SPARQL at ``/sparql``) until `Server.stop`.

    Loads or reuses the Oxigraph store, starts ``oxigraph serve-read-only`` on a loopback port and
    kg's front on *host*:*port* (``port=0``: any free port, see `Server.url`), in background
    threads. Queries are stopped after *timeout* seconds; at most *concurrency* run at once
    (default: the number of CPU cores, at least 2), the others wait their turn. The worker's
    heap is capped at *max_memory* bytes (default `default_max_memory`; 0: no cap). ``SERVICE``
    clauses are refused unless their endpoint is one of *allow_service*.
    """
    return Server(Path(graph_dir), host, port, timeout, log=log, access_log=access_log, concurrency=concurrency,
                  max_memory=max_memory, allow_service=allow_service)


def _check_endpoint(iri: str) -> str:
    try:
        parts = urlsplit(iri)
    except ValueError:
        parts = urlsplit("")
    if parts.scheme not in ("http", "https") or not parts.netloc or re.search(r'[<>"{}|^`\\\x00-\x20]', iri):
        raise InputError(f"--allow-service {iri!r}: give the endpoint's full http(s) IRI")
    return iri
