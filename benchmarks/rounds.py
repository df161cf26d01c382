"""Where the rounds after extraction are faster: the concept merge and specificity in the build process
(`LocalRounds`, one partition, a forked copy beside it, as `kg build` runs them here) against the same rounds
on the workers of a `dask-local` cluster (`kg.scale.rounds.DaskRounds`, the build's partitions of 256 papers).

The corpus is `benchmarks.scaling.synthetic_rows` (real ML abstracts, recombined beyond 43,596), its keyphrases
those a first build with the tests' hashing embedder gives (kept in ``--work``; the merge reads each paper's
phrases in rank order and the acronym definitions of its text). Each stage runs ``--repeat`` times each way,
interleaved, the best kept; the outputs of both ways must be equal (they are checked). Prints a table with the
ratio of the workers' time to the build process's.

Run: ``.venv/bin/python -m benchmarks.rounds [--size 10000] [--workers 2] [--repeat 2] [--work DIR] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from benchmarks.quality import machine

ROOT = Path(__file__).resolve().parent.parent


def corpus(size: int, work: Path):
    """The papers of a synthetic corpus of *size* abstracts, their merge input (paper id, phrases, definitions),
    their texts and keywords; the first call builds it into *work* (a few minutes at 10,000)."""
    sys.path[:0] = [str(ROOT / "tests")]
    from support import HashEmbedder

    import kg
    from benchmarks.scaling import synthetic_rows
    from kg.text.acronyms import definition_pairs
    from kg.text.sources import read_papers

    work.mkdir(parents=True, exist_ok=True)
    source, out = work / f"rounds-{size}.jsonl", work / f"rounds-{size}"
    if not source.exists():
        source.write_text("".join(json.dumps(r) + "\n" for r in synthetic_rows(size)))
    if not (out / "keyphrases.jsonl").exists():
        kg.build([source], out, embedder=HashEmbedder(), executor="local", store=False, entities=False)
    papers = read_papers([source]).papers
    phrases = {}
    with open(out / "keyphrases.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            phrases[row["id"]] = [k["phrase"] for k in sorted(row["keyphrases"], key=lambda k: k["rank"])]
    extractions = [(p.id, phrases.get(p.id, []), tuple(definition_pairs(p.document))) for p in papers]
    return extractions, {p.id: p.document for p in papers}, {p.id: p.keywords for p in papers if p.keywords}


def measure(size: int, workers: int, repeat: int, work: Path) -> dict:
    from kg.common.rounds import LocalRounds
    from kg.concepts.merge import merge_concepts
    from kg.concepts.specificity import score_specificity
    from kg.pipeline.fork import Forked
    from kg.scale.executor import DEFAULT_PARTITION_SIZE, open_executor
    from kg.scale.rounds import rounds_on

    extractions, texts, keywords = corpus(size, work)
    times: dict[tuple[str, str], list[float]] = {}

    def timed(stage, where, fn):
        start = time.perf_counter()
        value = fn()
        times.setdefault((stage, where), []).append(time.perf_counter() - start)
        return value

    with open_executor(f"dask-local:{workers}") as executor:
        there = rounds_on(executor)
        for _ in range(repeat):
            index = timed("merge", "here", lambda: merge_concepts(
                extractions, texts=texts, rounds=LocalRounds(), beside=lambda fn: Forked(fn, doing="named instances")))
            elsewhere = timed("merge", "workers", lambda: merge_concepts(
                extractions, texts=texts, partition_size=DEFAULT_PARTITION_SIZE, rounds=there))
            assert elsewhere == index, "the merge on the workers differs"
            scored = timed("specificity", "here", lambda: score_specificity(
                index, texts, keywords, rounds=LocalRounds(), beside=lambda fn: Forked(fn, doing="cohesion")))
            elsewhere = timed("specificity", "workers", lambda: score_specificity(
                index, texts, keywords, partition_size=DEFAULT_PARTITION_SIZE, rounds=there))
            assert elsewhere == scored, "specificity on the workers differs"
    best = {f"{stage} {where}": min(seconds) for (stage, where), seconds in times.items()}
    return {"size": size, "workers": workers, "repeat": repeat, "concepts": len(index.concepts), "best_s": best,
            "all_s": {f"{stage} {where}": seconds for (stage, where), seconds in times.items()}, "machine": machine()}


def print_table(report: dict) -> None:
    best = report["best_s"]
    print(f"{report['size']:,} synthetic abstracts, {report['concepts']:,} concepts; dask-local:{report['workers']}, "
          f"best of {report['repeat']}")
    print(f"{'stage':<12} {'here, s':>9} {'workers, s':>11} {'ratio':>7}")
    for stage in ("merge", "specificity"):
        here, there = best[f"{stage} here"], best[f"{stage} workers"]
        print(f"{stage:<12} {here:>9.2f} {there:>11.2f} {there / here:>7.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--work", type=Path, default=Path("/tmp/kg-bench"))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    report = measure(args.size, args.workers, args.repeat, args.work)
    print_table(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
