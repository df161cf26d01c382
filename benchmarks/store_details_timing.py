"""StoreDetails.node timed in-process (pyoxigraph) and over HTTP (kg serve's Oxigraph worker): median / max ms per kind on ~100 nodes of each.

    PYTHONPATH=. python benchmarks/store_details_timing.py BUILD_FOLDER
"""
import random, statistics, sys, time
from pathlib import Path
from kg.graph.io import load_graph
from kg.serve.details import StoreDetails, http_runner, local_runner
from kg.serve.worker import Worker
from kg.sparql.store import oxigraph_binary
build = Path(sys.argv[1])
G = load_graph(build / "graph.json")
kinds = {}
for n, d in G.nodes(data=True):
    kinds.setdefault(d["kind"], []).append(n)
rng = random.Random(1)
sample = {k: (rng.sample(sorted(v), 100) if len(v) > 100 else sorted(v) * (100 // len(v))) for k, v in kinds.items()}
sample["concept"][:5] = sorted(kinds["concept"], key=lambda n: -G.nodes[n]["papers"])[:5]  # the biggest too
worker = Worker(oxigraph_binary(), build / "store" / "data")
worker.start()
try:
    _, port = worker.acquire(time.monotonic() + 60)
    runners = {"pyoxigraph": StoreDetails(local_runner(build)), "http": StoreDetails(http_runner(f"http://127.0.0.1:{port}/query"))}
    for name, D in runners.items():
        for n in sample["concept"][:10]:
            D.node(n)  # warm
    for kind, nodes in sample.items():
        for name, D in runners.items():
            ts = []
            for n in nodes:
                t = time.perf_counter(); r = D.node(n); ts.append((time.perf_counter() - t) * 1000)
                assert r is not None
            print(f"{kind:8s} {name:10s} n={len(ts)} median {statistics.median(ts):6.2f} ms  max {max(ts):6.2f} ms")
    same = all(runners["http"].node(n) == runners["pyoxigraph"].node(n) for ns in sample.values() for n in ns)
    print("http == pyoxigraph on the sample:", same)
finally:
    worker.stop()
