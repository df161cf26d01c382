"""The figures behind docs/scaling.md: what one worker costs per 1,000 abstracts, and how the
single-process stages after extraction grow with the corpus.

Two parts, each printing a table and (with ``--json``) writing its figures:

* **extraction per worker**: the real packaged model and spaCy pipeline on *N* real ML
  abstracts in one process with one torch thread (what one Dask worker of
  ``--executor dask-local`` runs), as CPU seconds and wall seconds per 1,000 abstracts, the
  texts embedded, and the process' peak memory;
* **stages after extraction**: ``kg build`` of 1,000 / 5,000 / 10,000 ML abstracts with the
  extraction taken from the cache (a first build fills it, with the tests' hashing embedder so
  that no model time is spent), so the time measured is reading, merging, the graph, RDF in
  three formats, HTML, stats and the Oxigraph store: the part that runs in one process whatever
  the executor. Each in its own process under ``/usr/bin/time -v`` for peak memory, plus the
  triples, the size of every output and of the store.

Run: ``.venv/bin/python -m benchmarks.scaling [--sizes 1000 5000 10000] [--sample 500] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.quality import machine
from benchmarks.speed import ml_abstracts, write_jsonl

ROOT = Path(__file__).resolve().parent.parent

_BUILD = """
import sys, time, json
sys.path[:0] = [{root!r}, {tests!r}]
from conftest import HashEmbedder
import kg
t = time.perf_counter()
r = kg.build([{corpus!r}], {out!r}, embedder=HashEmbedder(), store=True)
print(json.dumps({{"seconds": time.perf_counter() - t, "extraction": r.extraction if hasattr(r, "extraction") else None,
                  "papers": r.stats["papers"], "concepts": r.stats["concepts"]}}))
"""


def extraction_per_worker(sample: int, precision: str = "fp32") -> dict:
    """The real extractor in this process, one torch thread: cost per 1,000 abstracts."""
    import torch

    torch.set_num_threads(1)
    from kg.extract.embed import load_embedder
    from kg.extract.keyphrases import Settings, extract_keyphrases, load_nlp

    embedder, nlp = load_embedder(precision), load_nlp()
    settings = Settings(precision=precision)
    rows = ml_abstracts(sample, skip=30_000)
    items = [(str(i), (r.get("title") or "") + ". " + r["abstract"]) for i, r in enumerate(rows)]
    extract_keyphrases(items[:16], embedder, nlp=nlp, settings=settings)  # warm up
    wall, cpu = time.perf_counter(), time.process_time()
    extract_keyphrases(items, embedder, nlp=nlp, settings=settings)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB -> MiB
    return {"precision": precision, "abstracts": len(items), "cpu_s_per_1000": cpu / len(items) * 1000, "wall_s_per_1000": wall / len(items) * 1000,
            "peak_mib": peak, "load_average": os.getloadavg()[0]}


def _timed(code: str) -> tuple[dict, float]:
    proc = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-2000:])
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1]), int(peak.group(1)) / 1024 if peak else float("nan")


def _du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0


def stages_after_extraction(sizes: list[int], work: Path) -> list[dict]:
    rows = []
    for n in sizes:
        corpus = write_jsonl(ml_abstracts(n), work / f"corpus-{n}" / "abstracts.jsonl").parent
        out = work / f"out-{n}"
        code = _BUILD.format(root=str(ROOT), tests=str(ROOT / "tests"), corpus=str(corpus), out=str(out))
        if not (out / ".cache").exists():
            _timed(code)  # fills the extraction cache
        for name in ("graph.nt", "stats.json"):  # force the full rebuild (not the unchanged shortcut)
            (out / name).unlink(missing_ok=True)
        result, peak = _timed(code)
        nt = out / "graph.nt"
        with nt.open("rb") as f:
            triples = sum(1 for _ in f)
        row = {"abstracts": n, "seconds": result["seconds"], "peak_mib": peak, "concepts": result["concepts"], "triples": triples,
               "store_mib": _du(out / "store") / 2**20, "load_average": os.getloadavg()[0]}
        row |= {f"{name}_mib": (out / name).stat().st_size / 2**20 for name in ("graph.nt", "graph.ttl", "graph.jsonld", "graph.html", "graph.json")}
        rows.append(row)
        print(f"  {n:>6} abstracts: {row['seconds']:7.1f} s, peak {peak:7.0f} MiB, {triples:>9,} triples, "
              f"{row['concepts']:>7,} concepts, store {row['store_mib']:6.0f} MiB, graph.nt {row['graph.nt_mib']:6.0f} MiB "
              f"(load {row['load_average']:.1f})", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scaling", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="*", type=int, default=[1000, 5000, 10000])
    parser.add_argument("--sample", type=int, default=500, help="abstracts for the per-worker extraction figure")
    parser.add_argument("--work", type=Path, default=Path("/tmp/kg-bench-scaling"))
    parser.add_argument("--skip-extraction", action="store_true")
    parser.add_argument("--precision", nargs="+", default=["fp32", "int8"], choices=["fp32", "int8"])
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    report: dict = {"machine": machine()}
    print(f"machine: {report['machine']}")
    if not args.skip_extraction:
        print("== extraction per worker (real model, 1 torch thread)", flush=True)
        report["extraction_per_worker"] = []
        for precision in args.precision:
            e = extraction_per_worker(args.sample, precision)
            print(f"  {precision}: {e['abstracts']} abstracts: {e['cpu_s_per_1000']:.0f} CPU s and {e['wall_s_per_1000']:.0f} wall s "
                  f"per 1,000, peak {e['peak_mib']:.0f} MiB (load {e['load_average']:.1f})", flush=True)
            report["extraction_per_worker"].append(e)
    print("== stages after extraction (one process), by corpus size", flush=True)
    report["stages_after_extraction"] = stages_after_extraction(args.sizes, args.work)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
