"""StoreDetails against Explorer on a build folder: every node compared (the fields that differ, with an example), and ms per node by kind (in-process pyoxigraph).

    PYTHONPATH=. python benchmarks/store_details.py BUILD_FOLDER
"""
import collections, statistics, sys, time
from kg.graph.io import load_graph
from kg.view.explorer import Explorer
from kg.serve.details import StoreDetails, local_runner
build = sys.argv[1]
G = load_graph(f"{build}/graph.json")
E = Explorer(G)
D = StoreDetails(local_runner(build))
bad = collections.Counter(); examples = {}
times = collections.defaultdict(list)
for n in E.concepts + E.papers + E.venues:
    t = time.perf_counter(); got = D.node(n); times[E.kind[n]].append((time.perf_counter() - t) * 1000)
    want = E.node(n)
    if got != want:
        if got is None or want is None:
            bad["none"] += 1; examples.setdefault("none", (n, got, want)); continue
        for k in set(got) | set(want):
            if got.get(k, "MISSING") != want.get(k, "MISSING"):
                bad[(E.kind[n], k)] += 1
                examples.setdefault((E.kind[n], k), (n, got.get(k, "MISSING"), want.get(k, "MISSING")))
print("nodes", len(E.concepts), len(E.papers), len(E.venues))
print("mismatches", dict(bad))
for k, (n, g, w) in examples.items():
    print("==", k, n); print("  got ", repr(g)[:600]); print("  want", repr(w)[:600])
for k, v in times.items():
    print(k, len(v), "median %.2f ms max %.2f ms" % (statistics.median(v), max(v)))
