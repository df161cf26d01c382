"""A request forwarded to the Oxigraph worker within its query deadline; its answer read whole and checked.

Runs in a thread of the front's pool, over `http.client` keep-alive connections (`kg.serve.worker.Pool`):
docs/design.md says why the deadline is kg's and why answers are spooled.
"""

from __future__ import annotations

import http.client
import io
import json
import socket
import tempfile
import time
from dataclasses import dataclass
from typing import Protocol

from kg.serve.worker import Pool, Unavailable, Worker

MAX_BUFFER = 8 * 1024 * 1024  # an answer is spooled in memory up to this size, then in a temporary file
_CHECKED_WHOLE = 64 * 1024 * 1024  # answers up to this size are parsed whole to check them; bigger ones by their end
_ANSWER_HEADERS = ("Content-Type", "Content-Location", "Vary")


class Backend(Protocol):
    """What a request is forwarded through (a `kg.serve.server.Server`): the worker, its connections,
    the query deadline in seconds, the memory cap as text, and the counts of answers and timeouts."""

    timeout: float
    pool: Pool
    worker: Worker
    max_memory_text: str
    answered: int
    timeouts: int


@dataclass(frozen=True)
class Refusal:
    """An error answered instead of the worker's answer: a status and a one-line message."""

    status: int
    message: str


class Answer:
    """A worker's answer, read whole: status, the headers passed on, and the body in a spool."""

    def __init__(self, status: int, headers: dict[str, str], spool) -> None:
        self.status, self.headers, self.spool = status, headers, spool
        self.size = spool.tell()

    def close(self) -> None:
        self.spool.close()

    def body(self) -> bytes:
        """The whole body, read from the spool (kg serve's table view parses it)."""
        return self._read()

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


def dispatch(server: Backend, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> Answer | Refusal:
    """The worker's whole, checked answer to one request, or the `Refusal` to send instead.

    The deadline starts now (the caller holds a slot of the worker). A query past it gets
    ``503`` and its worker is killed and restarted; a request that met a worker restarted
    under it (another query's runaway), or a stale keep-alive connection, is sent again,
    at most three times within the deadline (queries have no side effects). A request that
    saw the worker die on its own (a crash: this query may be its cause) gets ``502`` and is
    not sent again, so that one query cannot crash the worker over and over.
    """
    deadline = time.monotonic() + server.timeout
    for attempt in range(1, 4):
        try:
            generation, conn, reused = server.pool.get(deadline)
        except Unavailable as e:
            return Refusal(503, str(e))
        spool = tempfile.SpooledTemporaryFile(max_size=MAX_BUFFER)
        received = False
        try:
            resp = _send(conn, method, path, body, headers, deadline)
            received = True
            _read_into(spool, conn, resp, deadline)
        except (TimeoutError, socket.timeout):
            spool.close()
            conn.close()
            server.timeouts += 1
            server.worker.restart(generation, f"a query ran past the {server.timeout:g} s timeout")
            return Refusal(503, f"the query ran longer than the {server.timeout:g} s timeout and was stopped")
        except (OSError, http.client.HTTPException) as e:
            spool.close()
            conn.close()
            if server.worker.out_of_memory(generation):
                return Refusal(503, f"the SPARQL server ran out of its memory limit ({server.max_memory_text}) "
                                    f"while answering and was restarted; the query was stopped")
            if server.worker.crashed(generation):
                if not isinstance(e, ConnectionRefusedError):  # it reached the worker, perhaps crashed it: not resent
                    return Refusal(502, "the SPARQL server stopped while answering (it is being restarted); the query "
                                        "was not sent again: if it is deeply nested or very long, simplify it")
                server.worker.wait_replaced(generation, deadline)  # dead before this query reached it
            restarted = not server.worker.current(generation)
            if attempt < 3 and time.monotonic() < deadline and (restarted or (reused and not received)):
                continue  # the worker was restarted under it, or a stale keep-alive connection: send again
            return Refusal(502, f"the SPARQL server failed to answer ({e.__class__.__name__}: {e})")
        if resp.will_close:
            conn.close()
        else:
            server.pool.put(generation, conn)
        return _checked(server, resp, spool)
    raise AssertionError("unreachable")  # pragma: no cover - the loop returns on its last attempt


def _send(conn: http.client.HTTPConnection, method: str, path: str, body: bytes | None, headers: dict[str, str],
          deadline: float) -> http.client.HTTPResponse:
    conn.timeout = max(0.01, deadline - time.monotonic())
    conn.request(method, path, body=body, headers=headers)
    conn.sock.settimeout(max(0.01, deadline - time.monotonic()))
    return conn.getresponse()


def _read_into(spool, conn: http.client.HTTPConnection, resp: http.client.HTTPResponse, deadline: float) -> None:
    """The whole body of *resp* into *spool*, or `TimeoutError` once *deadline* passes."""
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        conn.sock.settimeout(remaining)
        data = resp.read1(1 << 16)
        if not data:
            return
        spool.write(data)


def _checked(server: Backend, resp: http.client.HTTPResponse, spool) -> Answer | Refusal:
    answer = Answer(resp.status, {k: resp.getheader(k) for k in _ANSWER_HEADERS if resp.getheader(k)}, spool)
    problem = answer.problem() if resp.status == 200 else None
    if problem:
        answer.close()
        return Refusal(502, f"the SPARQL server failed while writing its answer: {problem}")
    server.answered += 1
    return answer
