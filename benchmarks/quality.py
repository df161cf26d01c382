"""Keyphrase quality benchmark: kg against plain KeyBERT and YAKE on gold keyphrase sets.

    .venv/bin/python -m benchmarks.quality [--limit N] [--datasets inspec semeval2010 nus]
                                           [--extractors kg keybert yake] [--ml-sample 1000] [--no-ml]
                                           [--json FILE] [--predictions DIR]

1. Inspec test (500), SemEval-2010 test (99) and NUS test (211), each read as title + abstract
   (the ``abstract`` field, never ``fulltext``): P/R/F1@5/10/15, micro- and macro-averaged, with
   the protocol of `kg.evaluation.keyphrases` (stemmed, deduplicated predictions, absent gold counted), and
   docs/s of extraction alone.
2. ML conference abstracts with author keywords (OpenReview): a deterministic sample (the papers
   whose sha256(id) is smallest; ``--ml-sample 12981`` is all of them): micro F1@5/10/15 against the
   author keywords, and how many of them each extractor's top 12 (as many as a build keeps) recover.

The data is read from ``$KG_BENCH_DATA`` or else ``../shared/bench-data`` beside the repository;
nothing from it is copied into the repository.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import sys
import time
from pathlib import Path

from kg.evaluation.keyphrases import EXTRACTORS, GoldDoc, evaluate, format_table, read_gold, run_eval, stem_phrase
from kg.extract.keyphrases import Settings

DATASETS = {
    "inspec": "inspec/test.jsonl",
    "semeval2010": "semeval2010/test.jsonl",
    "nus": "nus/test.jsonl",
}
ML_DIR = "ml-abstracts"
KS = (5, 10, 15)
ML_TOP = Settings().top_n  # as many as a build keeps per paper


def data_dir() -> Path:
    env = os.environ.get("KG_BENCH_DATA")
    folder = Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "bench-data"
    if not folder.is_dir():
        raise SystemExit(
            f"benchmark data not found at {folder}: set KG_BENCH_DATA to the bench-data folder "
            "(with inspec/, semeval2010/, nus/ and ml-abstracts/)"
        )
    return folder


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        import torch

        gpu = "CUDA GPU" if torch.cuda.is_available() else "no GPU"
        threads = torch.get_num_threads()
    except ImportError:  # pragma: no cover
        gpu, threads = "no GPU", "?"
    return f"{os.cpu_count()} cores ({cpu}), torch threads {threads}, {gpu}, Python {platform.python_version()}"


def revision() -> str:
    """The commit the benchmark ran on, with a note when kg/ has uncommitted changes."""
    import subprocess

    root = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "kg"], cwd=root, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown (no git)"
    if head.returncode != 0:
        return "unknown (not a git checkout)"
    return head.stdout.strip() + (" with uncommitted changes in kg/" if dirty.stdout.strip() else "")


def sample_ml(folder: Path, n: int) -> tuple[list[GoldDoc], int]:
    """The *n* papers with author keywords whose sha256(id) is smallest, and how many have keywords."""
    docs: dict[str, GoldDoc] = {}
    for path in sorted((folder / ML_DIR).glob("*.jsonl")):
        for doc in read_gold(path, field="keywords"):
            if doc.keyphrases and doc.id not in docs:
                docs[doc.id] = doc
    ranked = sorted(docs.values(), key=lambda d: hashlib.sha256(d.id.encode()).hexdigest())
    return ranked[:n], len(docs)


_WORD = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*")


def present_in_text(doc: GoldDoc, phrase: str) -> bool:
    """Whether the stemmed phrase occurs, token for token, in the stemmed document (a ceiling)."""
    text = " " + stem_phrase(" ".join(_WORD.findall(doc.document.lower()))) + " "
    key = stem_phrase(" ".join(_WORD.findall(phrase.lower())))
    return bool(key) and f" {key} " in text


def ml_recovery(rows: list[dict], docs: list[GoldDoc]) -> str:
    gold = [d.keyphrases for d in docs]
    total = sum(len(g) for g in gold)
    present = sum(present_in_text(d, k) for d in docs for k in d.keyphrases)
    header = ["extractor", "papers", "docs/s", f"recovered (of {total})", "per paper", "recall overall %",
              "recall per paper %", "papers with 1+ %"]
    table = [header]
    for row in rows:
        stems = [{stem_phrase(p) for p in preds[:ML_TOP]} for preds in row["predictions"]]
        hits = [sum(1 for k in g if stem_phrase(k) in s) for g, s in zip(gold, stems)]
        scores = evaluate(row["predictions"], gold, ks=(ML_TOP,))
        table.append([
            row["extractor"], str(len(docs)), f"{row['docs_per_s']:.1f}", str(sum(hits)), f"{sum(hits) / len(docs):.2f}",
            f"{100 * scores['micro'][ML_TOP]['recall']:.2f}", f"{100 * scores['macro'][ML_TOP]['recall']:.2f}",
            f"{100 * sum(1 for h in hits if h) / len(docs):.1f}",
        ])
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))) for r in table]
    lines.insert(1, "  ".join("-" * w for w in widths))
    note = (f"author keywords found (stemmed, token for token) in title + abstract: {present} of {total} "
            f"({100 * present / total:.1f} %), the ceiling of any extractor")
    return "\n".join(lines) + "\n" + note + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.quality", description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="at most N documents per dataset (and in the ML sample)")
    parser.add_argument("--datasets", nargs="*", default=list(DATASETS), choices=list(DATASETS))
    parser.add_argument("--extractors", nargs="+", default=list(EXTRACTORS), choices=list(EXTRACTORS))
    parser.add_argument("--ml-sample", type=int, default=1000, help="papers with author keywords to sample (default 1000)")
    parser.add_argument("--no-ml", action="store_true", help="skip the author-keyword recovery")
    parser.add_argument("--json", type=Path, default=None, help="also write every score to this JSON file")
    parser.add_argument("--predictions", type=Path, default=None, help="write each extractor's ranked phrases here")
    parser.add_argument("--precision", choices=["int8", "fp32"], default=None,
                        help="kg's model precision (default: kg build's, int8); KeyBERT always runs the model as published")
    args = parser.parse_args(argv)

    folder = data_dir()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from kg.extract.embed import load_embedder
    from kg.extract.keyphrases import Settings, load_nlp

    settings = Settings() if args.precision is None else Settings(precision=args.precision)
    started = time.perf_counter()
    embedder, nlp = load_embedder(), load_nlp()  # the model as published, for KeyBERT
    kg_embedder = embedder if settings.precision == "fp32" else load_embedder(settings.precision)
    print(f"machine: {machine()}")
    print(f"kg revision: {revision()}, kg --precision {settings.precision}")
    print(f"data: {folder}")
    print(f"models loaded in {time.perf_counter() - started:.1f} s; docs/s below is extraction alone\n", flush=True)

    def extractors(top_n: int):
        made = {}
        for name in args.extractors:
            if name == "kg":
                made[name] = EXTRACTORS[name](top_n, embedder=kg_embedder, nlp=nlp, settings=settings)
            elif name == "keybert":
                made[name] = EXTRACTORS[name](top_n, embedder=embedder)
            else:
                made[name] = EXTRACTORS[name](top_n)
        return made

    def progress(row):
        print(f"  {row['extractor']}: {row['documents']} documents in {row['seconds']:.1f} s "
              f"({row['cpu_seconds']:.1f} s CPU; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)",
              file=sys.stderr, flush=True)

    report: dict = {"machine": machine(), "revision": revision(), "precision": settings.precision, "limit": args.limit, "datasets": {}}
    if args.predictions:
        args.predictions.mkdir(parents=True, exist_ok=True)
    for name in args.datasets:
        docs = [d for d in read_gold(folder / DATASETS[name]) if d.keyphrases]
        docs = docs[: args.limit] if args.limit else docs
        print(f"== {name} ({DATASETS[name]}, title + abstract): {len(docs)} documents, "
              f"{sum(len(d.keyphrases) for d in docs)} gold keyphrases", flush=True)
        rows = run_eval(docs, extractors(max(KS)), KS, on_done=progress)
        print(format_table(rows, KS, metrics=("f1",)), flush=True)
        report["datasets"][name] = _scores(rows)
        _save(args.predictions, name, docs, rows)

    if not args.no_ml:
        n = min(args.ml_sample, args.limit) if args.limit else args.ml_sample
        docs, available = sample_ml(folder, n)
        print(f"== ML abstracts: author keywords, {len(docs)} of {available} papers with author keywords "
              f"(smallest sha256(id)); micro F1@5/10/15, then recovery by the top {ML_TOP}", flush=True)
        rows = run_eval(docs, extractors(max(KS)), KS, on_done=progress)  # (the first ML_TOP of 15 are the top ML_TOP)
        print(format_table(rows, KS, metrics=("f1",)), flush=True)
        print(ml_recovery(rows, docs), flush=True)
        report["ml_abstracts"] = _scores(rows)
        _save(args.predictions, "ml-abstracts", docs, rows)

    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"total {time.perf_counter() - started:.0f} s")
    return 0


def _scores(rows: list[dict]) -> dict:
    def pct(scores):
        return {str(k): {m: round(100 * v, 2) for m, v in d.items()} for k, d in scores.items()}

    return {r["extractor"]: {"documents": r["documents"], "seconds": round(r["seconds"], 2),
                             "cpu_seconds": round(r["cpu_seconds"], 2),
                             "docs_per_s": round(r["docs_per_s"], 2), "micro": pct(r["micro"]), "macro": pct(r["macro"])}
            for r in rows}


def _save(folder: Path | None, name: str, docs: list[GoldDoc], rows: list[dict]) -> None:
    if folder is None:
        return
    with (folder / f"{name}.jsonl").open("w", encoding="utf-8") as f:
        for i, doc in enumerate(docs):
            f.write(json.dumps({"id": doc.id, **{r["extractor"]: r["predictions"][i] for r in rows}}) + "\n")


if __name__ == "__main__":
    sys.exit(main())
