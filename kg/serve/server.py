"""A running ``kg serve``: the app (`kg.serve.app`) on uvicorn in a thread of its own, the supervised
Oxigraph worker (`kg.serve.worker`), and the lock on the build folder.

uvicorn gives HTTP/1.1 parsing (h11), keep-alive, flow control and bounded header sizes; kg adds
to its connection two limits uvicorn has no setting for (`_Connection`): a connection that sends
nothing for `IDLE_TIMEOUT` seconds while a request is due is closed, and an app may abort its
connection (a client that stopped reading its answer).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import http
import logging
import os
import re
import socket
import threading
import time
import weakref
from collections.abc import Collection
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from kg.common.locks import FolderLock
from kg.common.logs import Log, quiet
from kg.errors import InputError, KGError
from kg.serve.app import LOOPBACK, create_app
from kg.serve.defaults import DEFAULT_HOST, DEFAULT_PORT, DEFAULT_TIMEOUT
from kg.serve.worker import Pool, Worker, default_max_memory, format_size
from kg.sparql.store import oxigraph_binary, prepare_store

IDLE_TIMEOUT = 120  # seconds a connection may stay silent while its next request is due
MAX_HEADERS = 256 * 1024  # bytes of a request's line and headers (a SPARQL query in a GET URL fits)
_START = 30.0  # seconds uvicorn may take to start listening
_DRAIN_BYTES = 16 * 1024 * 1024  # bytes of a refused request read and dropped before its connection is closed
_DRAIN_SECONDS = 5.0  # seconds a refused request's connection stays open to drop the rest of it


class _Connection(H11Protocol):
    """uvicorn's HTTP/1.1 connection, with an idle timeout from the start (uvicorn's keep-alive
    timer runs only after a first answer) and ``scope["extensions"]["kg.abort"]`` for the app."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        app = self.app

        async def with_abort(scope, receive, send):
            scope.setdefault("extensions", {})["kg.abort"] = self.transport.abort
            await app(scope, receive, send)

        self.app = with_abort

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._drained: int | None = None  # bytes read and dropped since a refusal, or None
        self._idle()

    def data_received(self, data: bytes) -> None:
        if self._drained is not None:  # refused: what the client still sends is read and dropped
            self._drained += len(data)
            if self._drained > _DRAIN_BYTES:
                self.transport.close()
            return
        super().data_received(data)
        if self.cycle is None or self.cycle.response_complete:  # still reading a request's head
            self._idle()

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a request h11 cannot read: ``414`` (a request line, a long query in a
        URL) or ``431`` (headers) past `MAX_HEADERS`, where h11 stops reading, each saying what
        to do; ``400`` otherwise. Then the connection is closed cleanly: its writing side at once,
        and what the client still sends is read and dropped (up to `_DRAIN_BYTES` bytes or
        `_DRAIN_SECONDS`), since closing with unread data sends a reset, which loses the answer."""
        head = self.conn.trailing_data[0]
        status, message = 400, msg
        if len(head) > MAX_HEADERS and b"\n" not in head[:MAX_HEADERS]:
            status, message = 414, (f"the request line is longer than {MAX_HEADERS} bytes: send a long SPARQL query "
                                     f"with POST (Content-Type: application/sparql-query) instead of in the URL")
        elif len(head) > MAX_HEADERS:
            status, message = 431, f"the request's line and headers are longer than {MAX_HEADERS} bytes"
        headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close")]
        for event in (h11.Response(status_code=status, headers=headers, reason=http.HTTPStatus(status).phrase),
                      h11.Data(data=message.encode("utf-8") + b"\n"), h11.EndOfMessage()):
            self.transport.write(self.conn.send(event))
        self._drained = 0
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(_DRAIN_SECONDS, self.transport.close)

    def _idle(self) -> None:
        if self.timeout_keep_alive_task is None and not self.transport.is_closing():
            self.timeout_keep_alive_task = self.loop.call_later(self.timeout_keep_alive, self.timeout_keep_alive_handler)


class _LogHandler(logging.Handler):
    """uvicorn's messages: an app's failure (a bug) to *log*, the rest (a malformed request) to *access*."""

    def __init__(self, log: Log, access: Log) -> None:
        super().__init__()
        self.log, self.access = log, access

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            self.log(self.format(record))  # with its traceback
        else:
            self.access(record.getMessage())


_LIVE: weakref.WeakSet[Server] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    for server in list(_LIVE):
        with contextlib.suppress(Exception):
            server.stop()


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as e:
        sock.close()
        raise KGError(f"cannot listen on {host}:{port} ({e.strerror or e}); pick another --port or --host") from e
    return sock


class Server:
    """A running ``kg serve``: the front, the Oxigraph worker and the folder lock. Stop it with
    `stop` (or use it as a context manager)."""

    def __init__(self, graph_dir: Path, host: str, port: int, timeout: float, *, log: Log = quiet,
                 access_log: Log = quiet, concurrency: int | None = None, max_memory: int | None = None,
                 allow_service: Collection[str] = ()) -> None:
        if not 0 < timeout < float("inf"):  # NaN too
            raise KGError(f"--timeout must be positive, not {timeout}")
        self.graph_dir, self.host, self.timeout = _build_folder(Path(graph_dir)), host, float(timeout)
        self.log, self.access_log = log, access_log
        self.loopback = host in LOOPBACK or host.startswith("127.")
        self.max_memory = default_max_memory() if max_memory is None else int(max_memory)
        self.max_memory_text = format_size(self.max_memory)
        self.allowed_services = frozenset(_check_endpoint(e) for e in allow_service)
        self.answered = self.timeouts = 0
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 2)
        self.concurrency = max(1, concurrency or max(2, cores))  # queries running in the worker at once
        self.queue_wait = max(60.0, 6 * self.timeout)
        self.forwarders = ThreadPoolExecutor(self.concurrency, thread_name_prefix="kg-serve-forward")
        self._stopped = False
        self._lock: FolderLock | None = None
        self.worker: Worker | None = None
        self._uvicorn = None
        self._thread: threading.Thread | None = None
        self._socket = _listen(host, port)  # first, so that a busy port fails at once; connections wait in the backlog
        self._port = self._socket.getsockname()[1]
        try:
            self._start_worker()
            self._start_front()
        except BaseException:
            self.stop()
            raise

    def _start_worker(self) -> None:
        from kg.serve.explorer import StoredExplorer

        self._lock = FolderLock(self.graph_dir)
        exe = oxigraph_binary()
        self.store = prepare_store(self.graph_dir, oxigraph=exe, log=self.log, _lock=self._lock)
        self.explorer = StoredExplorer(self.graph_dir, self.store.location, title=f"kg: {self.graph_dir.resolve().name}",
                                       log=self.log)
        self.worker = Worker(exe, self.store.location, log=self.log, max_memory=self.max_memory)
        self.pool = Pool(self.worker)
        self.worker.start()
        _LIVE.add(self)

    def _start_front(self) -> None:
        import uvicorn

        config = uvicorn.Config(
            create_app(self), http=_Connection, ws="none", lifespan="off", log_config=None, access_log=False,
            proxy_headers=False, server_header=False, headers=[("Server", "kg-serve")], backlog=128,
            timeout_keep_alive=IDLE_TIMEOUT, h11_max_incomplete_event_size=MAX_HEADERS, timeout_graceful_shutdown=2,
        )
        logger = logging.getLogger("uvicorn.error")
        logger.handlers[:] = [_LogHandler(self.log, self.access_log)]
        logger.propagate = False
        self._uvicorn = uvicorn.Server(config)
        started = threading.Event()

        def run() -> None:
            async def serve() -> None:
                self.slots = asyncio.Semaphore(self.concurrency)
                started.set()
                await self._uvicorn.serve(sockets=[self._socket])
            asyncio.run(serve())

        self._thread = threading.Thread(target=run, name="kg-serve-front", daemon=True)
        self._thread.start()
        started.wait(_START)
        deadline = time.monotonic() + _START
        while not self._uvicorn.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise KGError(f"the HTTP front did not start on {self.host}:{self.port}")
            time.sleep(0.01)

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        host = self.host if ":" not in self.host else f"[{self.host}]"
        return f"http://{host}:{self.port}/"

    @property
    def sparql_url(self) -> str:
        return self.url + "sparql"

    def status(self) -> dict:
        return {"graph": str(self.graph_dir), "triples": self.store.triples, "timeout": self.timeout,
                "concurrency": self.concurrency, "max_memory": self.max_memory,
                "allowed_services": sorted(self.allowed_services),
                "worker": {"pid": self.worker.pid, "generation": self.worker.generation, "restarts": self.worker.restarts},
                "answered": self.answered, "timeouts": self.timeouts}

    def connections(self) -> int:
        """Open client connections (what the tests of hostile clients count)."""
        return len(self._uvicorn.server_state.connections) if self._uvicorn is not None else 0

    def failure(self) -> str | None:
        """Why the server stopped serving for good (the worker failed too often, or the HTTP front
        ended), or None while it serves."""
        if self._thread is not None and not self._thread.is_alive() and not self._stopped:
            return "the HTTP front stopped"
        failed = self.worker.failure() if self.worker is not None else None
        return f"the SPARQL server failed: {failed}" if failed else None

    def stop(self) -> None:
        """Stop answering, stop the worker, release the folder. Safe to call twice."""
        if self._stopped:
            return
        self._stopped = True
        if self._thread is not None:
            self._uvicorn.should_exit = True
            self._thread.join(10)
        self._socket.close()
        if self.worker is not None:
            self.worker.stop()
            self.pool.close()
        self.forwarders.shutdown(wait=False, cancel_futures=True)
        if self._lock is not None:
            self._lock.close()
        _LIVE.discard(self)

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def _build_folder(graph_dir: Path) -> Path:
    """The build folder *graph_dir* names (an output file of a build names its folder), or `InputError`."""
    if graph_dir.is_file() and (graph_dir.parent / "graph.nt").is_file():
        return graph_dir.parent
    if graph_dir.exists() and not graph_dir.is_dir():
        raise InputError(f"{graph_dir}: a file, not the output folder of a build; pass --graph FOLDER (the --out of kg build)")
    if not graph_dir.is_dir():
        raise InputError(f"{graph_dir}: no such folder; run `kg build --out {graph_dir}` first, or pass --graph")
    return graph_dir


def start_server(graph_dir: str | os.PathLike = "outputs", host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
                 timeout: float = DEFAULT_TIMEOUT, *, log: Log = quiet, access_log: Log = quiet,
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
