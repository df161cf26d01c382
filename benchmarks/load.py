"""Load check of ``kg serve`` (not a test): concurrent clients send the canned queries of ``queries/``.

    .venv/bin/python benchmarks/load.py --graph outputs [--clients 8] [--queries 2000] [--idle 100] [--stalled 4]

Starts ``python -m kg serve --graph DIR`` on a free port (a separate process, so the clients
and the server do not share an interpreter), or uses ``--url`` of a running one. The queries
of ``queries/`` go round-robin, each with bindings picked from the graph (its most connected
concept, paper and venue), written into the query text with kg's substitution (or sent to
``/api/query`` with ``--endpoint api``), as SPARQL POSTs asking for JSON results. Every answer
must be ``200`` and parse as SPARQL JSON results; the run fails (exit code 1) on any error.
Prints throughput and p50/p95 latencies, overall and per query. ``--idle N`` holds N silent
connections open during the run, ``--stalled N`` N clients that ask for a big answer and never
read it (hostile clients: the others' latencies should not change); ``--kg CHECKOUT`` starts the
kg serve of another checkout (to compare two versions in one session).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kg.serve.worker import free_port  # noqa: E402
from kg.sparql.catalogue import bound_query, canned_queries  # noqa: E402

PICK = """
PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
PREFIX schema: <https://schema.org/>
PREFIX dcterms: <http://purl.org/dc/terms/>
SELECT ?concept ?label ?paper ?id ?venue WHERE {
  { SELECT ?concept (COUNT(?p) AS ?n) WHERE { ?p dcterms:subject ?concept } GROUP BY ?concept ORDER BY DESC(?n) ?concept LIMIT 1 }
  ?concept skos:prefLabel ?label .
  { SELECT ?paper (COUNT(?c) AS ?k) WHERE { ?paper a schema:ScholarlyArticle ; dcterms:subject ?c } GROUP BY ?paper ORDER BY DESC(?k) ?paper LIMIT 1 }
  ?paper schema:identifier ?id .
  OPTIONAL { { SELECT ?venue WHERE { ?v a schema:CreativeWorkSeries ; schema:name ?venue } ORDER BY ?venue LIMIT 1 } }
}"""


@dataclass
class Job:
    name: str
    path: str
    body: bytes
    content_type: str


@dataclass
class Result:
    name: str
    seconds: float
    ok: bool
    rows: int = 0
    error: str = ""


@dataclass
class Stats:
    results: list[Result] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _post(conn: http.client.HTTPConnection, path: str, body: bytes, ctype: str) -> tuple[int, bytes]:
    conn.request("POST", path, body=body, headers={"Content-Type": ctype, "Accept": "application/sparql-results+json"})
    resp = conn.getresponse()
    return resp.status, resp.read()


def _bindings(host: str, port: int) -> dict[str, str]:
    conn = http.client.HTTPConnection(host, port, timeout=60)
    status, body = _post(conn, "/sparql", urllib.parse.urlencode({"query": PICK}).encode(), "application/x-www-form-urlencoded")
    conn.close()
    if status != 200:
        raise SystemExit(f"cannot pick bindings from the graph: {status} {body[:200]!r}")
    rows = json.loads(body)["results"]["bindings"]
    if not rows:
        raise SystemExit("the graph has no paper with a concept; nothing to load-test")
    row = {k: v["value"] for k, v in rows[0].items()}
    return {
        "label": row["label"], "concept": f"<{row['concept']}>", "paper": f"<{row['paper']}>", "id": row["id"],
        "venue": row.get("venue", ""), "text": max(row["label"].split(), key=len)[:6], "top": "5",
    }


def _jobs(values: dict[str, str], endpoint: str) -> list[Job]:
    jobs = []
    for q in canned_queries():
        names = [v["name"] for v in q["variables"]]
        # One value per query: the first variable it documents (label before concept, paper before id...),
        # except that top-concepts-per-venue gets both of its (optional) variables.
        chosen = names if q["name"] == "top-concepts-per-venue" else names[:1]
        bindings = {n: values[n] for n in chosen if values.get(n)}
        if endpoint == "api":
            body = json.dumps({"name": q["name"], "bindings": bindings}).encode()
            jobs.append(Job(q["name"], "/api/query", body, "application/json"))
        else:
            text = bound_query(q["name"], bindings)
            jobs.append(Job(q["name"], "/sparql", urllib.parse.urlencode({"query": text}).encode(), "application/x-www-form-urlencoded"))
    return jobs


def _client(host: str, port: int, jobs: list[Job], order: list[int], stats: Stats) -> None:
    conn = http.client.HTTPConnection(host, port, timeout=120)
    for i in order:
        job = jobs[i]
        start = time.perf_counter()
        try:
            status, body = _post(conn, job.path, job.body, job.content_type)
            elapsed = time.perf_counter() - start
            if status != 200:
                result = Result(job.name, elapsed, False, error=f"{status}: {body[:120].decode('utf-8', 'replace').strip()}")
            else:
                data = json.loads(body)
                rows = len(data["results"]["bindings"]) if "results" in data else 1
                result = Result(job.name, elapsed, True, rows)
        except (OSError, http.client.HTTPException, ValueError, KeyError) as e:
            conn.close()
            conn = http.client.HTTPConnection(host, port, timeout=120)
            result = Result(job.name, time.perf_counter() - start, False, error=f"{e.__class__.__name__}: {e}")
        with stats.lock:
            stats.results.append(result)
    conn.close()


STALLING = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f } LIMIT 40000"


def _hostile(stack: contextlib.ExitStack, host: str, port: int, idle: int, stalled: int) -> None:
    """*idle* silent connections and *stalled* clients that ask for a big answer and never read it."""
    for _ in range(idle):
        stack.enter_context(socket.create_connection((host, port)))
    body = urllib.parse.urlencode({"query": STALLING})
    for _ in range(stalled):
        s = stack.enter_context(socket.socket())
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect((host, port))
        s.sendall(f"GET /sparql?{body} HTTP/1.1\r\nHost: {host}\r\nAccept: application/sparql-results+json\r\n\r\n".encode())
    if stalled:
        time.sleep(3)  # their answers are computed and being (not) read by now


def _cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of the processes *pids* (Linux /proc), 0 for those that are gone."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            pass
    return total


def _pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(p / 100 * len(ordered) + 0.5) - 1))
    return ordered[k]


def _machine() -> str:
    model = ""
    try:
        model = next(l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines() if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{cores} cores ({model or platform.processor() or platform.machine()}), Python {platform.python_version()}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graph", default="outputs", help="build folder to serve (default: outputs)")
    ap.add_argument("--url", help="use this running kg serve (e.g. http://127.0.0.1:7878/) instead of starting one")
    ap.add_argument("--clients", type=int, default=8, help="concurrent clients (threads; default 8)")
    ap.add_argument("--queries", type=int, default=2000, help="queries in total (default 2000)")
    ap.add_argument("--timeout", type=float, default=10.0, help="the server's query timeout when it is started here")
    ap.add_argument("--endpoint", choices=("sparql", "api"), default="sparql",
                    help="sparql: bound query text to /sparql; api: name and bindings to /api/query")
    ap.add_argument("--idle", type=int, default=0, help="silent connections held open during the run")
    ap.add_argument("--stalled", type=int, default=0, help="clients that ask for a big answer and never read it")
    ap.add_argument("--kg", default=str(ROOT), help="the checkout whose kg serve is started (default: this one)")
    args = ap.parse_args(argv)

    server = None
    if args.url:
        parts = urllib.parse.urlsplit(args.url)
        host, port = parts.hostname or "127.0.0.1", parts.port or 80
    else:
        host, port = "127.0.0.1", free_port()
        server_log = tempfile.TemporaryFile("w+")
        server = subprocess.Popen([sys.executable, "-m", "kg", "serve", "--graph", str(Path(args.graph).resolve()),
                                   "--port", str(port), "--timeout", str(args.timeout)], cwd=args.kg,
                                  env=os.environ | {"PYTHONPATH": args.kg}, stdout=subprocess.DEVNULL, stderr=server_log)
    hostile = contextlib.ExitStack()
    try:
        deadline = time.monotonic() + 600
        while True:
            try:
                conn = http.client.HTTPConnection(host, port, timeout=5)
                conn.request("GET", "/api/status")
                status = json.loads(conn.getresponse().read())
                conn.close()
                break
            except (OSError, http.client.HTTPException, ValueError):
                if server is not None and server.poll() is not None:
                    server_log.seek(0)
                    raise SystemExit(f"kg serve exited with code {server.returncode}: {server_log.read().strip()}")
                if time.monotonic() > deadline:
                    raise SystemExit("kg serve did not start")
                time.sleep(0.2)

        jobs = _jobs(_bindings(host, port), args.endpoint)
        _hostile(hostile, host, port, args.idle, args.stalled)
        warm = Stats()
        _client(host, port, jobs, list(range(len(jobs))), warm)  # one of each, not counted
        order = [i % len(jobs) for i in range(args.queries)]
        per_client = [order[c::args.clients] for c in range(args.clients)]
        stats = Stats()
        threads = [threading.Thread(target=_client, args=(host, port, jobs, mine, stats)) for mine in per_client]
        pids = [server.pid, status["worker"]["pid"]] if server is not None and status["worker"]["pid"] else []
        load = os.getloadavg()[0]
        cpu = _cpu_seconds(pids)
        start = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - start
        cpu = _cpu_seconds(pids) - cpu
    finally:
        hostile.close()
        if server is not None:
            server.terminate()
            server.wait(30)

    results = stats.results
    errors = [r for r in results if not r.ok] + [r for r in warm.results if not r.ok]
    ms = [r.seconds * 1000 for r in results]
    print(f"kg serve load check: {args.graph if not args.url else args.url} "
          f"({status['triples']} triples), endpoint /{'api/query' if args.endpoint == 'api' else 'sparql'}")
    print(f"machine: {_machine()}; load average {load:.1f} when the run started")
    print(f"{len(results)} queries, {args.clients} clients, {len(jobs)} canned queries round-robin, "
          f"after one warm-up pass of each; {args.idle} idle connections, {args.stalled} stalled clients; "
          f"kg serve of {args.kg}")
    print()
    width = max(len(j.name) for j in jobs)
    print(f"{'query':<{width}}  {'n':>5}  {'errors':>6}  {'rows':>5}  {'p50 ms':>8}  {'p95 ms':>8}")
    for job in jobs:
        mine = [r for r in results if r.name == job.name]
        lat = [r.seconds * 1000 for r in mine]
        rows = max((r.rows for r in mine if r.ok), default=0)
        print(f"{job.name:<{width}}  {len(mine):>5}  {sum(not r.ok for r in mine):>6}  {rows:>5}  "
              f"{_pct(lat, 50):>8.1f}  {_pct(lat, 95):>8.1f}")
    print()
    print(f"{'all':<{width}}  {len(results):>5}  {len(errors):>6}  {'':>5}  {_pct(ms, 50):>8.1f}  {_pct(ms, 95):>8.1f}")
    print(f"throughput {len(results) / wall:.1f} queries/s over {wall:.2f} s; p99 {_pct(ms, 99):.1f} ms, "
          f"max {max(ms):.1f} ms; errors {len(errors)}")
    if pids:
        print(f"server CPU (kg front + oxigraph): {cpu:.1f} s, {1000 * cpu / max(1, len(results)):.1f} ms per query, "
              f"{cpu / wall:.2f} cores busy on average")
    for r in errors[:10]:
        print(f"  error in {r.name}: {r.error}")
    if server is not None:
        server_log.seek(0)
        said = [line.rstrip() for line in server_log if "stopped (SIGTERM)" not in line]
        if said:
            print("kg serve said:", *said, sep="\n  ")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
