"""The map's cost and quality: kg's clusters and layout (``kg.graph.layout.add_map``) against the
alternatives measured before choosing them, on real builds.

For each build's ``graph.json`` (1,000, 10,000 and, when there, 40,000 ML abstracts), each method
runs in a process of its own on the map's concepts (those two or more papers share) and reports
its CPU seconds and its peak memory above the loaded graph (Linux's VmHWM, reset first):

* **kg**: `add_map` whole: the concept map, Leiden clusters, the two-level layout, papers and
  venues placed;
* layouts of all the map's concepts at once, coloured by kg's clusters: python-igraph's
  Fruchterman-Reingold (grid) and DrL, networkx's ``forceatlas2_layout`` (dense N x N arrays: run
  only up to `FA2_MAX_NODES` concepts);
* clusterings: python-igraph's Louvain, networkx's ``louvain_communities``, and leidenalg when it
  is installed (not a dependency of kg).

Quality: *coherence*, the share of concepts nearer their own cluster's centre than any other
cluster's (how much a layout shows the clusters as regions), and *modularity* for clusterings.

Run: ``.venv/bin/python -m benchmarks.layout --graphs BUILD_OR_GRAPH_JSON ... [--json FILE]``
(by default the builds ``../bench/out-1k``, ``out-10k`` and ``out-40k`` beside the repository,
those that exist).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FA2_MAX_NODES = 4000  # networkx's forceatlas2_layout holds N x N x 2 floats (10,370 concepts: 1.7 GB)
METHODS = ("kg", "igraph-fr", "igraph-drl", "networkx-fa2", "igraph-louvain", "networkx-louvain", "leidenalg")

_RUN = r"""
import json, random, sys, time
sys.path.insert(0, {root!r})
import numpy as np
from kg.graph.io import load_graph
from kg.graph.cooccurrence import concept_map, seeded_igraph
from kg.graph.clusters import find_communities

def reset_peak():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")

def peak_mib():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024

def rss_mib():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

def coherence(xy, membership):
    xy, membership = np.asarray(xy, float), np.asarray(membership)
    centres = np.array([xy[membership == k].mean(axis=0) for k in range(membership.max() + 1)])
    nearest = np.concatenate([((xy[i:i + 4096, None] - centres[None]) ** 2).sum(-1).argmin(1) for i in range(0, len(xy), 4096)])
    return float((nearest == membership).mean())

method = {method!r}
G = load_graph({graph!r})
out = {{"method": method}}
if method != "kg":
    cmap = concept_map(G)
    clusters = list(find_communities(cmap).membership)
    g = cmap.igraph()
    w = cmap.weights.tolist()
before = rss_mib()
reset_peak()
t = time.process_time()
if method == "kg":
    from kg.graph.layout import add_map
    add_map(G)
    cmap = concept_map(G)
    xy = [(G.nodes[n]["x"], G.nodes[n]["y"]) for n in cmap.nodes]
    membership = [G.nodes[n].get("cluster", len(G.graph["clusters"]) + 1) - 1 for n in cmap.nodes]  # no cluster: one group
    cpu = time.process_time() - t
    g = cmap.igraph()
    out.update(coherence=coherence(xy, membership), clusters=len(G.graph["clusters"]),
               modularity=g.modularity(membership, weights=cmap.weights.tolist()))
elif method in ("igraph-fr", "igraph-drl"):
    with seeded_igraph():
        layout = g.layout_fruchterman_reingold(weights=w, grid="grid") if method == "igraph-fr" else g.layout_drl(weights=w)
    cpu = time.process_time() - t
    out.update(coherence=coherence(layout.coords, clusters))
elif method == "networkx-fa2":
    import networkx as nx
    H = nx.Graph()
    H.add_nodes_from(range(len(cmap.nodes)))
    H.add_weighted_edges_from((i, j, x) for (i, j), x in zip(cmap.links.tolist(), w))
    pos = nx.forceatlas2_layout(H, weight="weight", seed=20)
    cpu = time.process_time() - t
    out.update(coherence=coherence([pos[i] for i in range(len(cmap.nodes))], clusters))
else:
    if method == "igraph-louvain":
        with seeded_igraph():
            membership = g.community_multilevel(weights=w).membership
    elif method == "networkx-louvain":
        import networkx as nx
        H = nx.Graph()
        H.add_nodes_from(range(len(cmap.nodes)))
        H.add_weighted_edges_from((i, j, x) for (i, j), x in zip(cmap.links.tolist(), w))
        membership = [0] * len(cmap.nodes)
        for k, part in enumerate(nx.community.louvain_communities(H, weight="weight", seed=20)):
            for i in part:
                membership[i] = k
    else:
        import leidenalg
        membership = leidenalg.find_partition(g, leidenalg.RBConfigurationVertexPartition, weights=w, seed=20).membership
    cpu = time.process_time() - t
    out.update(clusters=len(set(membership)), modularity=g.modularity(membership, weights=w))
out.update(cpu=cpu, peak_mib=max(peak_mib() - before, 0.0), concepts=len(cmap.nodes), links=len(cmap.links),
           papers=sum(1 for _, d in G.nodes(data=True) if d["kind"] == "paper"))
print(json.dumps(out))
"""


def measure(graph: Path, method: str) -> dict:
    """*method* on the map of *graph*, in a fresh process: its figures, or why it was not run."""
    if method == "leidenalg":
        try:
            import leidenalg  # noqa: F401
        except ImportError:
            return {"method": method, "skipped": "leidenalg is not installed"}
    code = _RUN.format(root=str(ROOT), graph=str(graph), method=method)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        return {"method": method, "skipped": f"failed: {done.stderr.strip().splitlines()[-1:]}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def graph_json(path: Path) -> Path:
    return path / "graph.json" if path.is_dir() else path


def map_size(graph: Path) -> int:
    """The number of concepts on the map of *graph* (without laying it out)."""
    code = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); from kg.graph.io import load_graph; "
            f"from kg.graph.cooccurrence import concept_map; print(len(concept_map(load_graph({str(graph)!r})).nodes))")
    return int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


def row(result: dict) -> str:
    if "skipped" in result:
        return f"| {result['method']} | | | | | skipped: {result['skipped']} |"
    quality = []
    if "coherence" in result:
        quality.append(f"coherence {result['coherence']:.0%}")
    if "modularity" in result:
        quality.append(f"modularity {result['modularity']:.3f}, {result['clusters']} clusters")
    return (f"| {result['method']} | {result['papers']:,} | {result['concepts']:,} / {result['links']:,} | "
            f"{result['cpu']:.1f} | {result['peak_mib']:.0f} | {'; '.join(quality)} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.layout", description=__doc__.split("\n\n")[0])
    default = [ROOT.parent / "bench" / f"out-{size}" for size in ("1k", "10k", "40k")]
    parser.add_argument("--graphs", nargs="+", type=Path, default=[p for p in default if (p / "graph.json").is_file()],
                        help="builds (folders) or graph.json files to measure on")
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    if not args.graphs:
        parser.error("no build found; name one or more with --graphs")
    from benchmarks.quality import machine, revision

    print(f"# layout and clusters: {machine()}; {revision()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print("| method | papers | concepts / links on the map | CPU s | peak MiB | quality |")
    print("|---|---:|---:|---:|---:|---|")
    results = []
    for path in args.graphs:
        graph = graph_json(path)
        size = None
        for method in args.methods:
            if method == "networkx-fa2":
                size = size if size is not None else map_size(graph)
                if size > FA2_MAX_NODES:
                    result = {"method": method, "skipped": f"{size:,} concepts: N x N arrays of {size ** 2 * 16 / 2**30:.1f} GiB"}
                    print(row(result), flush=True)
                    results.append(result | {"graph": str(graph)})
                    continue
            result = measure(graph, method)
            print(row(result), flush=True)
            results.append(result | {"graph": str(graph)})
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
