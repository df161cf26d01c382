"""Time `kg.graph.build.build_graph` and `kg.graph.stats.graph_stats` on a built graph.

The inputs of build_graph (papers, keyphrases, the concept index, the labels) are taken back
from a build's ``graph.json`` and ``keyphrases.jsonl``, so no model runs: what is timed is the
graph stage alone, the median of --runs runs, each run timing this checkout's two functions and
then (with ``--baseline DIR``) those of another checkout's ``kg/graph/build.py`` and ``stats.py``.

Run: ``.venv/bin/python -m benchmarks.graph OUT [--baseline DIR]`` (OUT: a ``kg build`` output
folder, such as the 10,000-paper build of ``benchmarks.speed``).
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from pathlib import Path


def inputs(out: Path):
    """(papers, keyphrases, index, labels) that give back the graph in *out*."""
    from kg.concepts.model import Concept, ConceptIndex
    from kg.extract.keyphrases import Keyphrase, PaperKeyphrases
    from kg.graph.io import load_graph
    from kg.text.records import Author, Source
    from kg.text.sources import Paper

    G = load_graph(out / "graph.json")
    papers, keyphrases, labels, assignment = [], [], {}, {}
    linked: dict[str, list[str]] = {}
    with open(out / "keyphrases.jsonl", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            d = G.nodes[f"paper:{r['id']}"]
            papers.append(Paper(
                r["id"], d["abstract"], d["text"], title=d.get("title"), venue=d.get("venue"), year=d.get("year"),
                source_id=d.get("source_id"), urls=tuple(d.get("urls", ())),
                sources=tuple(Source(**s) for s in r["sources"]), doi=d.get("doi"), arxiv=d.get("arxiv"),
                authors=tuple(Author(**a) for a in d.get("authors", ())), journal_ref=d.get("journal_ref")))
            labels[r["id"]] = d["label"]
            keyphrases.append(PaperKeyphrases(r["id"], tuple(Keyphrase(k["phrase"], k["score"], k["rank"]) for k in r["keyphrases"])))
            for k in r["keyphrases"]:
                if k["concept"]:
                    concept = k["concept"].removeprefix("concept:")
                    assignment[(r["id"], k["phrase"])] = concept
                    linked.setdefault(concept, []).append(r["id"])
    concepts = []
    for node, d in G.nodes(data=True):
        if d["kind"] == "concept":
            cid = node.removeprefix("concept:")
            concepts.append(Concept(cid, d["key"], d["label"], tuple(d["alt_labels"]), tuple(dict.fromkeys(linked.get(cid, ()))),
                                    tuple(b.removeprefix("concept:") for b in d["broader"]),
                                    specificity=d.get("specificity"), generic=d.get("generic", False)))
    return papers, keyphrases, ConceptIndex(tuple(concepts), assignment), labels


def _module(path: Path, name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    import kg.graph.build
    import kg.graph.stats

    parser = argparse.ArgumentParser(prog="python -m benchmarks.graph", description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="a kg build output folder (graph.json, keyphrases.jsonl)")
    parser.add_argument("--baseline", type=Path, help="another kg checkout, timed alongside")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    papers, keyphrases, index, labels = inputs(args.out)
    kgs = {"this checkout": (kg.graph.build.build_graph, kg.graph.stats.graph_stats)}
    if args.baseline:
        kgs[f"baseline ({args.baseline})"] = (_module(args.baseline / "kg/graph/build.py", "baseline_build").build_graph,
                                              _module(args.baseline / "kg/graph/stats.py", "baseline_stats").graph_stats)
    gc.disable()  # as kg build runs
    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in kgs}
    for _ in range(args.runs):
        for name, (build_graph, graph_stats) in kgs.items():
            t0 = time.perf_counter()
            G = build_graph(papers, keyphrases, index, labels)
            t1 = time.perf_counter()
            figures = graph_stats(G)
            times[name][0].append(t1 - t0)
            times[name][1].append(time.perf_counter() - t1)
            del G
            gc.collect()
    print("| kg | papers | nodes / edges | build_graph s | graph_stats s |\n|---|---:|---:|---:|---:|")
    for name, (build, stats) in times.items():
        print(f"| {name} | {len(papers):,} | {figures['papers'] + figures['concepts'] + figures['venues']:,} / {figures['edges']:,}"
              f" | {statistics.median(build):.2f} | {statistics.median(stats):.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
