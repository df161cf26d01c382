"""`kg serve` on a build: how soon it answers, how fast the explorer's data comes, how much memory it holds.

For each build folder, `kg serve` is started as a user starts it (``python -m kg serve --graph DIR``,
its own process) and measured from outside:

* first answer: seconds from the command's start to the first ``/`` answered;
* ``/api/map``: seconds and bytes of the map payload (the page's data);
* node details: ``/api/node`` for 100 nodes drawn at random (seed 1) among the concepts, papers
  and venues, median and largest milliseconds;
* search: ``/api/search`` for ten words of concept labels, median milliseconds;
* memory: the server process's peak resident memory (``VmHWM``) once all of the above was asked
  for, and with its Oxigraph worker's beside it.

The baseline, measured in the same run, is the explorer as `kg serve` made it before it read the
store (`kg.view.explorer.Explorer` over graph.json, in this process): seconds to read graph.json
and make it, and the memory that added. The targets (issue 46): first answer <= 3 s, the server
<= 1 GiB after the map and 100 node details, node details <= 50 ms (median) at 10,000 abstracts
and <= 150 ms at 200,000.

Run: ``.venv/bin/python -m benchmarks.serve DIR [DIR ...]`` (build folders made by ``kg build``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

from benchmarks.quality import machine

ROOT = Path(__file__).resolve().parent.parent
PAPERS_BIG = 100_000  # from this many papers on, node details are judged against the 200k target


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str, timeout: float = 60.0) -> tuple[float, bytes]:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=timeout) as r:  # noqa: S310 - a loopback URL of our own server
        body = r.read()
    return time.perf_counter() - start, body


def peak_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found += [int(c) for c in text]
    return found


def sample_nodes(build: Path, n: int = 100) -> list[str]:
    """*n* node ids drawn at random (seed 1) from the build's keyphrases.jsonl and stats (no graph.json read)."""
    papers, concepts = [], set()
    with (build / "keyphrases.jsonl").open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            papers.append(f"paper:{row['id']}")
            concepts.update(k["concept"] for k in row.get("keyphrases", []) if k.get("concept"))
    rng = random.Random(1)
    nodes = rng.sample(sorted(concepts), min(n // 2, len(concepts))) + rng.sample(sorted(papers), min(n // 2, len(papers)))
    return nodes


def serve_figures(build: Path) -> dict:
    port = free_port()
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "kg", "serve", "--graph", str(build), "--port", str(port)],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env=os.environ | {"HF_HUB_OFFLINE": "1"})
    base = f"http://127.0.0.1:{port}"
    try:
        while True:
            try:
                get(base + "/", timeout=5)
                break
            except OSError:
                if proc.poll() is not None:
                    raise SystemExit(f"kg serve stopped: {proc.stderr.read()[-2000:]}") from None
                if time.perf_counter() - start > 600:
                    raise SystemExit("kg serve did not answer within 600 s") from None
                time.sleep(0.05)
        first = time.perf_counter() - start
        map_s, payload = get(base + "/api/map")
        node_ms = []
        for n in sample_nodes(build):
            t, _ = get(base + "/api/node?id=" + urllib.parse.quote(n))
            node_ms.append(t * 1000)
        labels = json.loads(payload)["concepts"]["label"][:2000]  # (columns: the best-ranked concepts first)
        words = sorted({w for label in labels for w in str(label).split() if len(w) > 3})
        words = random.Random(1).sample(words, min(10, len(words))) or ["learning"]
        search_ms = [get(base + "/api/search?q=" + urllib.parse.quote(w))[0] * 1000 for w in words]
        front = peak_kib(proc.pid)
        worker = sum(peak_kib(c) for c in children(proc.pid))
    finally:
        proc.terminate()
        proc.wait(30)
    return {"first": first, "map_s": map_s, "map_mb": len(payload) / 1e6, "node_median": statistics.median(node_ms),
            "node_max": max(node_ms), "nodes": len(node_ms), "search_median": statistics.median(search_ms),
            "front_gib": front / 2**20, "worker_gib": worker / 2**20}


def baseline(build: Path) -> tuple[float, float]:
    """Seconds and GiB of memory the explorer from graph.json took (as `kg serve` made it before)."""
    from kg.graph.io import load_graph
    from kg.view.explorer import Explorer

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    Explorer(load_graph(build / "graph.json"))
    seconds = time.perf_counter() - start
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    return seconds, grown / 2**20


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.serve", description=__doc__.split("\n\n")[0])
    parser.add_argument("builds", type=Path, nargs="+", help="build folders (kg build --out DIR)")
    parser.add_argument("--no-baseline", action="store_true", help="skip reading graph.json (the old explorer)")
    args = parser.parse_args(argv)
    print(f"machine: {machine()}")
    verdicts = []
    for build in args.builds:
        stats = json.loads((build / "stats.json").read_text())
        n = stats["papers"]
        f = serve_figures(build)
        node_target = 150 if n >= PAPERS_BIG else 50
        print(f"{build} ({n:,} papers, {stats['concepts']:,} concepts)")
        print(f"  first answer            {f['first']:8.2f} s      target 3 s      {'met' if f['first'] <= 3 else 'MISSED'}")
        print(f"  /api/map                {f['map_s'] * 1000:8.0f} ms     {f['map_mb']:.1f} MB")
        print(f"  node details (median)   {f['node_median']:8.1f} ms     target {node_target} ms   "
              f"{'met' if f['node_median'] <= node_target else 'MISSED'}   (largest {f['node_max']:.0f} ms, {f['nodes']} nodes)")
        print(f"  search (median)         {f['search_median']:8.1f} ms")
        print(f"  server peak memory      {f['front_gib']:8.2f} GiB    target 1 GiB    {'met' if f['front_gib'] <= 1 else 'MISSED'}"
              f"   (+ its Oxigraph worker {f['worker_gib']:.2f} GiB)")
        verdicts += [f["first"] <= 3, f["node_median"] <= node_target, f["front_gib"] <= 1]
        if not args.no_baseline:
            seconds, gib = baseline(build)
            print(f"  baseline: the explorer from graph.json: {seconds:.1f} s and {gib:.2f} GiB before the first answer "
                  f"(x{seconds / max(f['first'], 1e-6):.1f} the first answer now)")
    print(f"targets: {sum(verdicts)} of {len(verdicts)} met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
