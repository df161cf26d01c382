"""The routes of ``kg serve``, a Starlette app: the explorer and its data, the canned queries, and the
SPARQL 1.1 Protocol forwarded to the Oxigraph worker within its deadline (`kg.serve.forward`).

A route is a function of the request (``async def`` when it forwards to the worker; a plain
``def``, which Starlette runs in a thread, when it calls the explorer) listed in `ROUTES`.
`_guard` checks every request's Host before any route and adds the headers every answer carries.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from urllib.parse import parse_qs, urlencode

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from kg.errors import KGError, QueryError
from kg.serve.forward import Answer, Refusal, dispatch
from kg.sparql import catalogue
from kg.sparql.bindings import bind_text, check_federation
from kg.sparql.catalogue import bound_query, canned_queries, tie_notes, tie_probe
from kg.sparql.limits import check_query
from kg.sparql.results import read_json_results, table_layout
from kg.view.explorer import StaleExplorerFile

MAX_REQUEST = 16 * 1024 * 1024  # bytes of a request body
WRITE_TIMEOUT = 30.0  # seconds a client may take to read each 64 KiB of an answer
LOOPBACK = {"127.0.0.1", "::1", "localhost"}
_CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data: blob:; "
        "connect-src 'self'; font-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
_CLOSE = {"Connection": "close"}


# --------------------------------------------------------------------------------------------
# Answers


def text(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return Response((message.rstrip("\n") + "\n").encode("utf-8"), status, headers, "text/plain; charset=utf-8")


def as_json(data, status: int = 200) -> Response:
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return Response(body, status, media_type="application/json; charset=utf-8")


class _Spooled:
    """The worker's answer sent from its spool, a chunk at a time, each within `WRITE_TIMEOUT`:
    a client that stops reading is dropped (its connection aborted) and its spool freed, instead
    of being waited for. What it may hold meanwhile is bounded by the server's write buffer."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer

    async def __call__(self, scope, receive, send) -> None:
        answer = self.answer

        async def within(message) -> None:
            async with asyncio.timeout(WRITE_TIMEOUT):
                await send(message)

        try:
            headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in answer.headers.items()]
            headers.append((b"content-length", str(answer.size).encode()))
            await within({"type": "http.response.start", "status": answer.status, "headers": headers})
            answer.spool.seek(0)
            chunk = b"" if scope["method"] == "HEAD" else answer.spool.read(1 << 16)
            more = True
            while more:
                nxt = answer.spool.read(1 << 16) if chunk else b""
                more = bool(nxt)
                await within({"type": "http.response.body", "body": chunk, "more_body": more})
                chunk = nxt
        except TimeoutError:
            abort = scope.get("extensions", {}).get("kg.abort")
            if abort is not None:
                abort()
                await asyncio.sleep(0)  # the server sees the connection lost before this returns
        finally:
            answer.close()


# --------------------------------------------------------------------------------------------
# Requests


async def read_body(request: Request) -> bytes | Response:
    """The request's body, at most `MAX_REQUEST` bytes (``Content-Length`` or chunked), or the
    ``413`` to answer (and the connection closed: the rest of the body is not read)."""
    too_big = text(413, f"the request body must be at most {MAX_REQUEST} bytes", _CLOSE)
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            if not 0 <= int(declared) <= MAX_REQUEST:
                return too_big
        except ValueError:
            return too_big
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_REQUEST:
            return too_big
    return bytes(body)


_JSON_REQUEST = 'the body must be a JSON object: {"name": "QUERY", "bindings": {"VARIABLE": "value", ...}, "view": "table"}'
VIEWS = ("", "table")  # what /api/query answers beside the SPARQL JSON results: nothing, or the table for people


def json_request(body: bytes) -> tuple[str, dict[str, str], str]:
    """The query name, bindings and view (`VIEWS`, "" for none) of a JSON ``/api/query`` body;
    `ValueError` with the reason."""
    try:
        data = json.loads(body or b"{}")
    except (ValueError, RecursionError) as e:
        raise ValueError(f"{_JSON_REQUEST}; it is not JSON ({e.__class__.__name__})") from e
    if not isinstance(data, dict):
        raise ValueError(_JSON_REQUEST)
    name, bindings, view = data.get("name", ""), data.get("bindings") or {}, data.get("view") or ""
    if view not in VIEWS:
        raise ValueError(f'"view" must be "table" (or left out), not {json.dumps(view)[:80]}')
    if not isinstance(name, str):
        raise ValueError(f'"name" must be a string (a query of /queries), not {json.dumps(name)[:80]}')
    if not isinstance(bindings, dict):
        raise ValueError('"bindings" must be an object of variable names and values')
    _unicode(name, '"name"')
    out = {}
    for k, v in bindings.items():
        _unicode(k, "a binding's name")
        if isinstance(v, bool) or not isinstance(v, (str, int, float)):
            raise ValueError(f'binding {k!r} must be a string or a number, not {json.dumps(v)[:80]}')
        if isinstance(v, str):
            _unicode(v, f"binding {k!r}")
        if str(v) != "":
            out[k] = str(v)
    return name, out, view


def _unicode(value: str, what: str) -> None:
    """`ValueError` when *value* holds a lone surrogate (JSON's ``"\\ud800"`` is valid JSON but
    no character): it cannot become UTF-8, so no query can hold it."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(f"{what} holds {value[e.start]!a} at character {e.start}, a lone surrogate, "
                         f"which is not a character; send text") from None


def _form(body: bytes | str, what: str = "the form", **options) -> dict[str, list[str]]:
    """A form (a body, or a URL's query string) as its fields; `QueryError` when it is not UTF-8
    (what the worker would be sent is what was checked, not a repaired copy of it)."""
    try:
        text = body.decode("utf-8") if isinstance(body, bytes) else body
        return parse_qs(text, errors="strict", **options)
    except UnicodeDecodeError as e:
        raise QueryError(f"{what} is not UTF-8 ({e.reason} at byte {e.start}); percent-encode UTF-8") from None


def _utf8(body: bytes, what: str) -> str:
    """A body as text; `QueryError` when it is not UTF-8."""
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as e:
        raise QueryError(f"{what} is not UTF-8 ({e.reason} at byte {e.start}); send UTF-8") from None


def _media_type(request: Request) -> str:
    return (request.headers.get("content-type") or "").split(";")[0].strip().lower()


# --------------------------------------------------------------------------------------------
# The SPARQL endpoint and the canned queries


async def forward(request: Request, method: str, path: str, body: bytes | None, headers: dict[str, str]):
    """Send a request to the worker and its answer to the client, within the query deadline
    (`worker_answer`)."""
    outcome = await worker_answer(request, method, path, body, headers)
    if isinstance(outcome, Refusal):
        return text(outcome.status, outcome.message)
    return _Spooled(outcome)


async def worker_answer(request: Request, method: str, path: str, body: bytes | None,
                        headers: dict[str, str]) -> Answer | Refusal:
    """The worker's whole, checked answer to a request, or the `Refusal` to answer instead.

    At most `Server.concurrency` requests run in the worker at once (others wait their turn,
    up to `Server.queue_wait` seconds): a query's clock starts when it is sent, so its timeout
    measures its own run, not the queue. The answer is read whole into a spool and checked in
    a thread of the server's pool before the slot is given back, so a client that reads slowly,
    or not at all, holds only its spool, never a slot of the worker.
    """
    server = request.app.state.kg
    try:
        async with asyncio.timeout(server.queue_wait):
            await server.slots.acquire()
    except TimeoutError:
        return Refusal(503, f"the server is busy: {server.concurrency} queries are running and others are waiting; try again")
    try:
        loop = asyncio.get_running_loop()
        outcome = await loop.run_in_executor(server.forwarders, dispatch, server, method, path, body, headers)
    finally:
        server.slots.release()
    return outcome


def _update_target(method: str, ctype: str, body: bytes, query: dict[str, list[str]]) -> bool:
    """Whether a SPARQL Protocol request is an update (which the read-only worker refuses with 403)."""
    if method == "POST" and ctype == "application/sparql-update":
        return True
    form = _form(body) if method == "POST" and ctype == "application/x-www-form-urlencoded" else query
    return "update" in form and "query" not in form


def _texts(method: str, ctype: str, body: bytes, query: dict[str, list[str]]) -> list[str]:
    """Every query or update text of a request (its URL, its form, its body), to check (`check_texts`)."""
    texts = [v for k, vs in query.items() if k in ("query", "update") for v in vs]
    if method == "POST" and ctype in ("application/sparql-query", "application/sparql-update"):
        texts.append(_utf8(body, "the request body"))
    elif method == "POST" and ctype == "application/x-www-form-urlencoded":
        texts += [v for k, vs in _form(body).items() if k in ("query", "update") for v in vs]
    return texts


def check_texts(texts: list[str], allowed_services) -> None:
    """Refuse (`QueryError`, answered 400) a query text an engine must not see: one past the bounds of
    `check_query` (it would crash the worker), or one that calls a SERVICE not allowed. Runs in a
    thread: a 1 MiB text takes a moment to scan, and the event loop serves the other clients meanwhile."""
    for t in texts:
        check_query(t)
        check_federation(t, allowed_services)


async def sparql(request: Request):
    """``/sparql``, ``/query``, ``/update``: the SPARQL 1.1 Protocol, forwarded to the worker."""
    method = "GET" if request.method == "HEAD" else request.method
    body = b""
    if method == "POST":
        body = await read_body(request)
        if isinstance(body, Response):
            return body
    ctype, qs = _media_type(request), request.url.query  # ASCII: h11 refuses any other byte in a URL
    query = _form(request.scope["query_string"], "the URL's query string")
    update = request.url.path == "/update" or _update_target(method, ctype, body, query)
    await run_in_threadpool(check_texts, _texts(method, ctype, body, query), request.app.state.kg.allowed_services)
    headers = {"Accept": request.headers.get("accept") or "*/*"}
    target = "/update" if update else "/query"
    if method == "GET":  # sent as a form: Oxigraph refuses a request head over 8 KB, a long query in a URL
        method, body, headers["Content-Type"] = "POST", request.scope["query_string"], "application/x-www-form-urlencoded"
    else:
        headers["Content-Type"] = request.headers.get("content-type") or ""
        target += f"?{qs}" if qs else ""
    return await forward(request, method, target, body, headers)


async def named_query(request: Request):
    """``/api/query``: a canned query by name, with bindings (values become terms, never query text);
    with ``view=table``, its SPARQL JSON results and beside them the table `kg query` prints (`table_answer`)."""
    params = _form(request.scope["query_string"], "the URL's query string", keep_blank_values=True)
    name = (params.get("name") or [""])[0]
    view = (params.get("view") or [""])[0]
    bindings: list[str] | dict = params.get("bind", [])
    if request.method == "POST":
        body = await read_body(request)
        if isinstance(body, Response):
            return body
        if _media_type(request) == "application/json":
            try:
                name, bindings, view = json_request(body)
            except ValueError as e:
                return text(400, str(e))
        else:
            form = _form(body, keep_blank_values=True)
            name = (form.get("name") or [name])[0]
            view = (form.get("view") or [view])[0]
            bindings = list(bindings) + form.get("bind", [])
    if view not in VIEWS:
        return text(400, f"view must be table (or left out), not {view[:80]!r}")
    query = bound_query(name, bindings)
    await run_in_threadpool(check_texts, [query], request.app.state.kg.allowed_services)
    if view == "table":
        return await table_answer(request, name, bindings, query)
    accept = request.headers.get("accept") or "application/sparql-results+json"
    if "html" in accept:
        accept = "application/sparql-results+json"
    return await forward(request, "POST", "/query", urlencode({"query": query}).encode("utf-8"),
                         {"Content-Type": "application/x-www-form-urlencoded", "Accept": accept})


async def _select(request: Request, query: str) -> dict | Response:
    """The worker's SPARQL JSON results to *query*, parsed, or the answer to send instead (its error)."""
    outcome = await worker_answer(request, "POST", "/query", urlencode({"query": query}).encode("utf-8"),
                                  {"Content-Type": "application/x-www-form-urlencoded",
                                   "Accept": "application/sparql-results+json"})
    if isinstance(outcome, Refusal):
        return text(outcome.status, outcome.message)
    if outcome.status != 200:
        return _Spooled(outcome)
    try:
        return await run_in_threadpool(lambda: json.loads(outcome.body()))
    finally:
        outcome.close()


async def table_answer(request: Request, name: str, bindings: list[str] | dict, query: str) -> Response:
    """``/api/query?view=table``: the SPARQL JSON results of canned query *name* (its text *query*),
    with ``table`` (`kg.sparql.results.Table.as_json`: what `kg query` prints, one rule for both)
    and ``ties`` (its notes of a ranked cut that falls inside a tie, asked as `kg query` asks them)."""
    data = await _select(request, query)
    if isinstance(data, Response):
        return data
    canned, checked, result = await run_in_threadpool(answered, name, bindings, data)
    ties: tuple[str, ...] = ()
    probe = tie_probe(canned, checked, result)
    if probe is not None:
        probe_data = await _select(request, bind_text(*probe, name=name))
        if isinstance(probe_data, Response):
            return probe_data
        ties = tie_notes(canned, checked, result, await run_in_threadpool(read_json_results, probe_data))
    table = await run_in_threadpool(lambda: table_layout(result, full_iris="each links to its node; its title is the IRI"))
    return as_json({**data, "table": table.as_json(), "ties": list(ties)})


def answered(name: str, bindings: list[str] | dict, data: dict):
    """The canned query *name*, its checked *bindings* and the `QueryResult` of its answer *data*
    (SPARQL JSON results), told its bound values and, when its page is full, the next page's offset."""
    pairs = [f"{k}={v}" for k, v in bindings.items()] if isinstance(bindings, dict) else list(bindings)
    canned = catalogue.named_query(name)
    checked = catalogue.check_bindings(canned, pairs)
    result = replace(read_json_results(data), bound=catalogue.bound_values(checked))
    result = catalogue.with_next_page(result, catalogue.split_page(canned, checked)[0])
    return canned, checked, result


def queries(request: Request) -> Response:
    return as_json(canned_queries())


def status(request: Request) -> Response:
    return as_json(request.app.state.kg.status())


# --------------------------------------------------------------------------------------------
# The explorer: each route a thin call into kg.view.explorer


def _explorer(request: Request):
    return request.app.state.kg.explorer


def _whole(request: Request, name: str, default: int) -> int:
    try:
        return int(request.query_params.get(name) or default)
    except ValueError:
        raise KGError(f"{name} must be a whole number") from None


def explorer_page(request: Request) -> Response:
    return Response(_explorer(request).page(), media_type="text/html; charset=utf-8",
                    headers={"Content-Security-Policy": _CSP})


def api_map(request: Request) -> Response:
    """The build's explorer.json, streamed as it is (`kg.view.explorer.MapFile`); 409 when the build has none this kg reads."""
    try:
        found = _explorer(request).map_file()
    except StaleExplorerFile as e:
        return text(409, str(e))
    return StreamingResponse(found.chunks(), media_type="application/json; charset=utf-8",
                             headers={"Content-Length": str(found.size)})


def api_search(request: Request) -> Response:
    limit = max(1, min(_whole(request, "limit", 20), 100))
    try:
        return as_json(_explorer(request).search(request.query_params.get("q", ""), limit=limit))
    except StaleExplorerFile as e:
        return text(409, str(e))


def api_node(request: Request) -> Response:
    node = request.query_params.get("id", "")
    found = _explorer(request).node(node)
    return text(404, f"no node {node!r} in the graph") if found is None else as_json(found)


def favicon(request: Request) -> Response:
    return Response(b"", 204, media_type="image/x-icon")


ROUTES = [
    Route("/", explorer_page),
    Route("/index.html", explorer_page),
    Route("/api/map", api_map),
    Route("/api/search", api_search),
    Route("/api/node", api_node),
    Route("/queries", queries),
    Route("/api/status", status),
    Route("/api/query", named_query, methods=["GET", "POST"]),
    Route("/sparql", sparql, methods=["GET", "POST"]),
    Route("/query", sparql, methods=["GET", "POST"]),
    Route("/update", sparql, methods=["GET", "POST"]),
    Route("/favicon.ico", favicon),
]


# --------------------------------------------------------------------------------------------
# The app


def _refused(request: Request, exc: KGError) -> Response:
    return text(400, str(exc))


def _http_error(request: Request, exc: HTTPException) -> Response:
    path = request.url.path
    if exc.status_code == 404:
        return text(404, f"no such page: {path}; see / (explorer), /sparql (SPARQL endpoint), /queries")
    if exc.status_code == 405:  # the body, if any, is not read: close rather than drain it
        return text(405, f"{path} takes {exc.headers.get('Allow', 'GET')}", {**(exc.headers or {}), **_CLOSE})
    return text(exc.status_code, exc.detail, exc.headers)


def _guard(app, server):
    """ASGI middleware: bound to loopback, only a local Host (a guard against DNS rebinding; h11
    refuses a request with several); the headers every answer carries; a line per request for
    the access log."""

    async def guarded(scope, receive, send):
        if scope["type"] != "http":
            return await app(scope, receive, send)
        hosts = [v.decode("latin-1") for k, v in scope["headers"] if k == b"host"]  # one at most: h11 refuses more
        refusal = None
        if server.loopback and hosts and not _local(hosts[0]):
            refusal = text(421, "this server answers only to 127.0.0.1, localhost or [::1]", _CLOSE)

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"x-content-type-options", b"nosniff"),
                                      (b"cache-control", b"no-store")]
                client = scope.get("client") or ("-", 0)
                query = scope.get("query_string") or b""
                target = scope["path"] + ("?" + query.decode("latin-1") if query else "")
                server.access_log(f'{client[0]} "{scope["method"]} {target} HTTP/{scope["http_version"]}" {message["status"]}')
            await send(message)

        await (refusal or app)(scope, receive, send_with_headers)

    return guarded


def _local(host: str) -> bool:
    host = host.strip().lower()
    if not host:  # HTTP/1.0 without Host: not a browser, so not a rebinding attack
        return True
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    return name.strip("[]") in LOOPBACK


def create_app(server) -> object:
    """The ASGI app of *server* (a `kg.serve.server.Server`): its routes behind `_guard`."""
    app = Starlette(routes=ROUTES, exception_handlers={KGError: _refused, HTTPException: _http_error})
    app.state.kg = server
    return _guard(app, server)
