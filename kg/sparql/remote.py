"""External SPARQL stores: publish a built graph into one, and query any SPARQL endpoint.

Publishing (``kg build --store URL``, `publish`) replaces one named graph of a SPARQL 1.1
server, atomically:

1. the lines of ``graph.nt`` are sent in bounded batches (whole lines, at most
   *batch_triples* triples and a few MiB each) into a fresh temporary named graph
   ``<graph>#kg-upload-<random>``: by the Graph Store HTTP Protocol (``POST`` of N-Triples to
   ``STORE?graph=<tmp>``) or, when only an update endpoint is given, as SPARQL 1.1 Update
   ``INSERT DATA`` requests;
2. one SPARQL 1.1 Update request, ``MOVE GRAPH <tmp> TO GRAPH <graph>``, replaces the target
   with the temporary graph. A server runs one update request as one transaction (Oxigraph,
   Fuseki/TDB2, Virtuoso), so queries see the previous graph or the new one, never a mix.

If anything fails before the MOVE, the temporary graph is dropped (best effort) and
`OutputError` says how many triples and batches of how many were sent; the target graph was
not touched. If the MOVE request itself gets no answer (a timeout, a dropped connection),
the temporary graph is left alone: the server may still be applying the MOVE, which leaves
the target whole either way.

Querying (``kg query --endpoint URL``, `query_endpoint`) sends a query by the SPARQL 1.1
Protocol (``POST`` application/sparql-query), with ``--bind`` values written into the query
text by `kg.sparql.bindings.substitute` (each value checked to read back as the same term), and reads
the answer into the `kg.sparql.results.QueryResult` a local query gives.

HTTP goes through httpx. Basic authentication comes from the URL
(``http://user:password@host/...``) or the environment variable ``KG_STORE_AUTH``
(``user:password``); URLs are shown without their password in every message. Redirects are
not followed (a redirected ``POST`` would silently lose its body).
"""

from __future__ import annotations

import functools
import json
import os
import re
import secrets
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote, urlencode, urlsplit, urlunsplit

from kg.errors import InputError, OutputError, QueryError
from kg.sparql.bindings import bind_text, check_text
from kg.sparql.results import QueryResult, read_json_results

__all__ = [
    "AUTH_ENV", "DEFAULT_BATCH", "PublishReport", "StoreEndpoints", "default_graph_iri",
    "publish", "query_endpoint", "store_endpoints",
]

AUTH_ENV = "KG_STORE_AUTH"
DEFAULT_BATCH = 50_000  # triples per request
DEFAULT_TIMEOUT = 300.0  # seconds per upload request
DEFAULT_QUERY_TIMEOUT = 120.0
GSP_BATCH_BYTES = 32 * 1024 * 1024
# SPARQL Update bodies stay under 1 MB, a limit servers set (older Oxigraph releases refuse larger ones).
UPDATE_BATCH_BYTES = 1_000_000 - 4096
_MESSAGE_CHARS = 300
MAX_ANSWER_BYTES = 1 << 30  # an answer read into memory: a CONSTRUCT of a 10,000-paper graph is ~400 MB
_IRI = re.compile(r'[a-zA-Z][a-zA-Z0-9+.-]*:[^<>"{}|^`\\\x00-\x20]*')
_BNODE = re.compile(rb"^_:|\s_:\S+\s*\.\s*$")


def has_blank_node(lines: Iterable[bytes]) -> bool:
    """Whether any of the N-Triples *lines* has a blank node as its subject or object."""
    return any(_BNODE.search(line.rstrip()) for line in lines)


# --------------------------------------------------------------------------------------------
# Endpoints and HTTP


@dataclass(frozen=True)
class StoreEndpoints:
    """Where a graph is published: the Graph Store Protocol endpoint (None: batches go to the
    update endpoint as ``INSERT DATA``) and the SPARQL 1.1 Update endpoint."""

    graph_store: str | None
    update: str


@dataclass(frozen=True)
class PublishReport:
    """A finished upload: *triples* sent in *batches* requests into *graph* at *endpoint*."""

    triples: int
    batches: int
    graph: str
    endpoint: str
    seconds: float


def _check_url(url: str, option: str) -> str:
    try:
        parts = urlsplit(url)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname) and (parts.port or 0) >= 0
    except ValueError:  # a broken [IPv6] host, a port that is not a number
        ok = False
    if not ok:
        raise InputError(f"{option} {shown(url)!r}: give an http(s) URL, for example http://127.0.0.1:7878/store")
    return url


def _sibling(url: str, name: str) -> str:
    """*url* with its last path segment replaced by *name* (query and fragment dropped)."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme, parts.netloc, path.rpartition("/")[0] + "/" + name, "", ""))


def store_endpoints(store: str | None = None, update: str | None = None) -> StoreEndpoints:
    """The endpoints of ``--store`` / ``--store-update``.

    *store* is a Graph Store Protocol endpoint (Oxigraph ``http://host:7878/store``, Fuseki
    ``http://host:3030/DATASET/data``); a URL with no path is an Oxigraph server and means
    its ``/store``. *update* defaults to *store* with its last path segment replaced by
    ``update`` (Oxigraph ``/update``, Fuseki ``/DATASET/update``). With *update* alone the
    batches are sent as SPARQL Update ``INSERT DATA`` requests.
    """
    if store is None and update is None:
        raise InputError("give a Graph Store endpoint (--store URL) or an update endpoint (--store-update URL)")
    if store is not None:
        _check_url(store, "--store")
        parts = urlsplit(store)
        if parts.path in ("", "/"):
            store = urlunsplit((parts.scheme, parts.netloc, "/store", parts.query, ""))
    if update is None:
        update = _sibling(store, "update")
    return StoreEndpoints(store, _check_url(update, "--store-update"))


def default_graph_iri(base: str | None = None) -> str:
    """The named graph a build is published into: its base IRI + ``graph``
    (``https://example.org/kg/graph`` by default)."""
    from kg.rdf.vocabulary import DEFAULT_BASE

    return (base or DEFAULT_BASE) + "graph"


def _check_graph_iri(iri: str) -> str:
    if not _IRI.fullmatch(iri or "") or "#kg-upload-" in iri:
        raise InputError(f"--store-graph {iri!r}: give an absolute IRI, for example https://example.org/kg/graph")
    return iri


def shown(url: str) -> str:
    """*url* without the password of its userinfo, for messages."""
    try:
        parts = urlsplit(url)
    except ValueError:  # no URL at all: shown as given, up to any userinfo
        return url.rpartition("@")[2] if "@" in url else url
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, f"{parts.username}:***@{host}", parts.path, parts.query, parts.fragment))


def _credentials(url: str, auth: tuple[str, str] | None) -> tuple[str, tuple[str, str] | None]:
    """*url* without userinfo, and the basic-auth credentials of its userinfo, *auth* or ``$KG_STORE_AUTH``."""
    parts = urlsplit(url)
    if parts.username is not None:
        auth = (unquote(parts.username), unquote(parts.password or ""))
        url = urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, parts.query, parts.fragment))
    elif auth is None and os.environ.get(AUTH_ENV):
        user, _, password = os.environ[AUTH_ENV].partition(":")
        auth = (user, password)
    return url, auth


class _Failure(Exception):
    """An HTTP request that failed: *answered* is False when the server gave no HTTP answer."""

    def __init__(self, message: str, *, answered: bool, verb: str | None = None) -> None:
        super().__init__(message)
        self.answered = answered
        self.verb = verb or ("refused the query" if answered else "did not answer")  # in kg query's message


def _server_message(body: bytes, ctype: str) -> str:
    """The first useful line of an error answer, tags stripped, at most _MESSAGE_CHARS characters."""
    text = body.decode("utf-8", "replace")
    if "html" in ctype:
        text = re.sub(r"(?is)<(script|style|head)\b.*?</\1>|<[^>]+>", " ", text)
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    line = " ".join(" ".join(lines[:3]).split())
    return line if len(line) <= _MESSAGE_CHARS else line[: _MESSAGE_CHARS - 1] + "…"


@functools.cache
def _client():
    """One httpx client for the process (making one loads the CA certificates: ~0.2 s), which
    keeps connections to a store alive between batches. Redirects are not followed."""
    import httpx

    return httpx.Client(follow_redirects=False)


def _reason(e: Exception) -> str:
    """The operating system's words for a failed connection (``Connection refused``), else the error's."""
    cause: BaseException | None = e
    while cause is not None:
        if isinstance(cause, OSError) and cause.strerror:
            return cause.strerror
        cause = cause.__cause__ or cause.__context__
    return str(e) or e.__class__.__name__


def _post(url: str, body: bytes, headers: Mapping[str, str], *, auth, timeout: float) -> tuple[bytes, str]:
    """POST *body* to *url*: the answer's body and content type, or `_Failure`."""
    import httpx

    target, credentials = _credentials(url, auth)
    deadline = time.monotonic() + timeout
    try:
        with _client().stream("POST", target, content=body, headers=headers, timeout=timeout,
                              auth=httpx.BasicAuth(*credentials) if credentials else None) as response:
            ctype = response.headers.get("Content-Type", "")
            if response.status_code >= 300:
                detail = _server_message(_read_answer(response, deadline, 8192), ctype)
                where = f"; it redirects to {response.headers.get('Location')}" if response.is_redirect else ""
                raise _Failure(f"{response.status_code} {response.reason_phrase}{where}" + (f": {detail}" if detail else ""),
                               answered=True)
            return _read_answer(response, deadline), ctype
    except (httpx.TimeoutException, TimeoutError) as e:
        raise _Failure(f"no whole answer within {timeout:g} s", answered=False) from e
    except httpx.ConnectError as e:
        raise _Failure(f"cannot connect ({_reason(e)})", answered=False) from e
    except (httpx.HTTPError, httpx.InvalidURL, OSError, ValueError) as e:  # a dropped connection, a malformed answer
        raise _Failure(f"the connection failed ({_reason(e)})", answered=False) from e


def _read_answer(response, deadline: float, keep: int | None = None) -> bytes:
    """The body of the streamed *response*, piece by piece: whole within the request's deadline (a
    server that sends a byte now and then would reset a timeout per read for ever) and at most
    `MAX_ANSWER_BYTES`; with *keep*, only its first *keep* bytes (an error's message)."""
    pieces, size = [], 0
    for piece in response.iter_bytes():
        if time.monotonic() > deadline:
            raise TimeoutError
        size += len(piece)
        pieces.append(piece)
        if keep is not None and size >= keep:
            break
        if size > MAX_ANSWER_BYTES:
            raise _Failure(f"its answer is over {MAX_ANSWER_BYTES >> 20} MiB; ask for less (a LIMIT)", answered=True,
                           verb="answered with too much")
    return b"".join(pieces)[:keep] if keep is not None else b"".join(pieces)


# --------------------------------------------------------------------------------------------
# Publishing


def _triple_lines(nt: Path) -> Iterator[bytes]:
    """The statement lines of an N-Triples file, each ending in a newline."""
    with nt.open("rb") as f:
        for line in f:
            stripped = line.strip()
            if stripped and not stripped.startswith(b"#"):
                yield line if line.endswith(b"\n") else line + b"\n"


def _batches(lines: Iterable[bytes], max_triples: int, max_bytes: int) -> Iterator[list[bytes]]:
    """*lines* in batches of whole lines: at most *max_triples* lines and *max_bytes* bytes
    (a single longer line is a batch of its own)."""
    batch: list[bytes] = []
    size = 0
    for line in lines:
        if batch and (len(batch) >= max_triples or size + len(line) > max_bytes):
            yield batch
            batch, size = [], 0
        batch.append(line)
        size += len(line)
    if batch:
        yield batch


def _plan(nt: Path, max_triples: int, max_bytes: int) -> tuple[int, int, bool]:
    """Triples, batches, and whether any blank node occurs, of *nt* cut into batches."""
    triples = batches = 0
    bnodes = False
    for batch in _batches(_triple_lines(nt), max_triples, max_bytes):
        triples += len(batch)
        batches += 1
        bnodes = bnodes or has_blank_node(batch)
    return triples, batches, bnodes


def _update(endpoints: StoreEndpoints, text: str, *, auth, timeout: float) -> None:
    _post(endpoints.update, text.encode("utf-8"), {"Content-Type": "application/sparql-update; charset=utf-8"},
          auth=auth, timeout=timeout)


def _send_batch(endpoints: StoreEndpoints, graph: str, batch: list[bytes], *, auth, timeout: float) -> None:
    if endpoints.graph_store is not None:
        sep = "&" if urlsplit(endpoints.graph_store).query else "?"
        url = endpoints.graph_store + sep + urlencode({"graph": graph})
        _post(url, b"".join(batch), {"Content-Type": "application/n-triples"}, auth=auth, timeout=timeout)
    else:
        body = b"INSERT DATA { GRAPH <" + graph.encode("utf-8") + b"> {\n" + b"".join(batch) + b"} }\n"
        _post(endpoints.update, body, {"Content-Type": "application/sparql-update; charset=utf-8"}, auth=auth, timeout=timeout)


def publish(
    nt_path: str | os.PathLike,
    store: str | None,
    graph_iri: str,
    *,
    update: str | None = None,
    batch_triples: int = DEFAULT_BATCH,
    auth: tuple[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    progress: Callable[[int], None] | None = None,
) -> PublishReport:
    """Replace the named graph *graph_iri* of a SPARQL store with the N-Triples file *nt_path*.

    *store* and *update* are the endpoints, as `store_endpoints` reads them. The triples go in
    batches of at most *batch_triples* into a temporary named graph, which one ``MOVE``
    request then puts in place of *graph_iri* (see the module's documentation). *progress*
    is called with the number of triples of each batch sent. Raises `InputError` for a
    missing file or a bad URL or IRI, `OutputError` when the upload fails (saying what was
    sent and that *graph_iri* is unchanged).
    """
    endpoints = store_endpoints(store, update)
    graph = _check_graph_iri(graph_iri)
    if batch_triples < 1:
        raise InputError(f"batch size {batch_triples}: give at least 1 triple per batch")
    nt = Path(nt_path)
    if nt.is_dir():
        nt = nt / "graph.nt"
    if not nt.is_file():
        raise InputError(f"{nt}: no such N-Triples file; run `kg build` first")
    max_bytes = GSP_BATCH_BYTES if endpoints.graph_store is not None else UPDATE_BATCH_BYTES
    try:
        total, planned, bnodes = _plan(nt, batch_triples, max_bytes)
    except OSError as e:
        raise InputError(f"{nt}: cannot be read ({e.strerror or e})") from e
    if bnodes and planned > 1:
        raise InputError(f"{nt} has blank nodes, which cannot be split across batches ({total} triples need {planned}); "
                         "raise --store-batch above the triple count or load the file with the server's bulk loader")
    where = shown(endpoints.graph_store or endpoints.update)
    tmp = graph + ("-" if "#" in graph else "#") + "kg-upload-" + secrets.token_hex(8)
    started = time.monotonic()
    sent = batches = 0
    step = "upload"
    try:
        for batch in _batches(_triple_lines(nt), batch_triples, max_bytes):
            _send_batch(endpoints, tmp, batch, auth=auth, timeout=timeout)
            sent += len(batch)
            batches += 1
            if progress is not None:
                progress(len(batch))
        if sent != total:
            raise OSError(f"{nt} changed while it was being sent ({sent} triples now, {total} before)")
        step = "move"
        if total:
            _update(endpoints, f"MOVE GRAPH <{tmp}> TO GRAPH <{graph}>", auth=auth, timeout=timeout)
        else:
            _update(endpoints, f"DROP SILENT GRAPH <{graph}>", auth=auth, timeout=timeout)
    except KeyboardInterrupt:
        if step == "upload":  # a MOVE in flight is left to finish: the target stays whole either way
            _drop(endpoints, tmp, auth=auth, timeout=10.0)
        raise
    except (_Failure, OSError) as e:
        reason = str(e) if isinstance(e, _Failure) else f"{e.strerror or e}"
        if step == "move" and not (isinstance(e, _Failure) and e.answered):
            raise OutputError(
                f"{shown(endpoints.update)}: all {total} triples were sent in {planned} batches to the temporary graph "
                f"<{tmp}>, but the request replacing <{graph}> with it got no answer ({reason}); the server applies it "
                f"whole or not at all, so <{graph}> holds either the previous graph or the new one; the temporary graph "
                f"was left in place (once the server is idle: DROP SILENT GRAPH <{tmp}>)"
            ) from e
        if step == "move":
            where = shown(endpoints.update)
            done = (f"all {total} triples were sent in {planned} batches to the temporary graph <{tmp}>, "
                    f"but the server refused to put it in place of <{graph}>")
        else:
            done = (f"{sent} of {total} triples sent ({batches} of {planned} batches) to the temporary graph <{tmp}> "
                    f"before batch {batches + 1} failed")
        cleanup = _drop(endpoints, tmp, auth=auth, timeout=min(timeout, 60.0))
        raise OutputError(f"{where}: {reason}; {done}; <{graph}> is unchanged; {cleanup}") from e
    return PublishReport(sent, batches, graph, where, time.monotonic() - started)


def _drop(endpoints: StoreEndpoints, tmp: str, *, auth, timeout: float) -> str:
    """Drop the temporary graph, best effort: what became of it, for the error message."""
    try:
        _update(endpoints, f"DROP SILENT GRAPH <{tmp}>", auth=auth, timeout=timeout)
    except _Failure as e:
        return f"the temporary graph could not be dropped ({e}): drop it with DROP SILENT GRAPH <{tmp}>"
    return "the temporary graph was dropped"


# --------------------------------------------------------------------------------------------
# Querying


def _with_default_graphs(url: str, graphs: Sequence[str]) -> str:
    if not graphs:
        return url
    for g in graphs:
        if not _IRI.fullmatch(g):
            raise QueryError(f"--default-graph {g!r}: give an absolute IRI")
    parts = urlsplit(url)
    extra = "&".join("default-graph-uri=" + quote(g, safe="") for g in graphs)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, f"{parts.query}&{extra}" if parts.query else extra, ""))


def _rdf_result(body: bytes, ctype: str):
    import pyoxigraph as ox

    fmt = ox.RdfFormat.from_media_type(ctype)
    if fmt is None:
        return None
    triples = tuple((str(t.subject), str(t.predicate), str(t.object)) for t in ox.parse(body, format=fmt))
    return QueryResult(triples=triples, kind="construct")


def query_endpoint(
    url: str,
    query: str,
    *,
    bind: Mapping[str, object] | Iterable[str] = (),
    default_graph: str | Sequence[str] = (),
    auth: tuple[str, str] | None = None,
    timeout: float = DEFAULT_QUERY_TIMEOUT,
):
    """Run the SPARQL *query* text at the endpoint *url* (SPARQL 1.1 Protocol, POST); a `QueryResult`.

    *bind* as in `kg.sparql.bindings.bind_text`; *default_graph* names the graph(s) the query's default graph is
    (``default-graph-uri``), e.g. the named graph `publish` loaded. Raises `QueryError` with the
    server's message when the endpoint refuses the query or cannot be reached.
    """
    check_text(url, "--endpoint")
    _check_url(url, "--endpoint")
    text = bind_text(query, bind)
    graphs = [default_graph] if isinstance(default_graph, str) else list(default_graph)
    for g in graphs:
        check_text(g, "--default-graph")
    target = _with_default_graphs(url, graphs)
    headers = {
        "Content-Type": "application/sparql-query; charset=utf-8",
        "Accept": "application/sparql-results+json, application/n-triples;q=0.9, text/turtle;q=0.5",
    }
    try:
        body, ctype = _post(target, text.encode("utf-8"), headers, auth=auth, timeout=timeout)
    except _Failure as e:
        raise QueryError(f"{shown(url)} {e.verb}: {e}") from e
    media = ctype.split(";")[0].strip().lower()
    try:
        if media in ("application/sparql-results+json", "application/json"):
            return read_json_results(json.loads(body))
        result = _rdf_result(body, media)
    except (ValueError, SyntaxError, KeyError, TypeError, AttributeError, RecursionError) as e:
        raise QueryError(f"{shown(url)} answered with a malformed {media or 'untyped'} document ({e})") from e
    if result is None:
        raise QueryError(f"{shown(url)} answered with {media or 'no content type'}, not SPARQL JSON results or RDF; "
                         "is it a SPARQL query endpoint (Oxigraph /query, Fuseki /DATASET/query)?")
    return result
