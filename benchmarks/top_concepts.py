"""kg's most-studied concepts beside the keywords authors chose most, on the same papers.

    python -m benchmarks.top_concepts OUT --corpus FILE [--n 40]

OUT is a build of FILE (JSONL rows with ``keywords``, as the shared ML abstracts give them). kg's
top concepts are those ``kg query top-concepts`` ranks (not generic; most papers first, ties by
label); the authors' are their keywords by the number of papers giving them. Both are matched
ignoring case, plurals, hyphens and British spelling (`kg.text.phrases.normalize_phrase`), a concept
by its key or any of its labels. Prints both lists side by side, the overlap, and the authors' top
keywords kg marks generic (a concept too general to be a paper's subject) with their specificity.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from kg.text.phrases import normalize_phrase


def author_keywords(corpus: Path) -> Counter:
    """Each normalized author keyword -> the papers of *corpus* that give it."""
    counts: Counter = Counter()
    with corpus.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            counts.update({normalize_phrase(k.replace("-", " ")) for k in row.get("keywords") or [] if k.strip()})
    counts.pop("", None)
    return counts


def concepts(out: Path) -> list[dict]:
    """The concept nodes of a build's graph.json."""
    graph = json.loads((out / "graph.json").read_text(encoding="utf-8"))
    return [n for n in graph["nodes"] if n.get("kind") == "concept"]


def keys_of(concept: dict) -> set[str]:
    return {concept["key"]} | {normalize_phrase(x.replace("-", " ")) for x in [concept["label"], *concept.get("alt_labels", [])]}


def compare(nodes: list[dict], authors: Counter, n: int) -> tuple[list[tuple], list[tuple], list[dict]]:
    """kg's top *n* (label, papers, matched), the authors' top *n* (keyword, papers, matched) and the
    generic concepts among the authors' top *n*."""
    top = sorted((c for c in nodes if not c.get("generic")), key=lambda c: (-c["papers"], c["label"].lower(), c["id"]))[:n]
    theirs = [k for k, _ in sorted(authors.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]
    wanted = set(theirs)
    ours = [(c["label"], c["papers"], bool(keys_of(c) & wanted)) for c in top]
    found = set().union(*(keys_of(c) for c in top)) if top else set()
    listed = [(k, authors[k], k in found) for k in theirs]
    generic = [c for c in nodes if c.get("generic") and keys_of(c) & wanted]
    return ours, listed, generic


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.top_concepts", description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="a kg build folder (graph.json)")
    parser.add_argument("--corpus", type=Path, required=True, help="the JSONL file it was built from, with keywords")
    parser.add_argument("--n", type=int, default=40)
    args = parser.parse_args(argv)
    ours, theirs, generic = compare(concepts(args.out), author_keywords(args.corpus), args.n)
    print(f"| # | kg concept (papers) | in authors' top {args.n} | author keyword (papers) | in kg's top {args.n} |")
    print("|---|---|---|---|---|")
    for i in range(args.n):
        a = f"{ours[i][0]} ({ours[i][1]}) | {'yes' if ours[i][2] else ''}" if i < len(ours) else " | "
        b = f"{theirs[i][0]} ({theirs[i][1]}) | {'yes' if theirs[i][2] else ''}" if i < len(theirs) else " | "
        print(f"| {i + 1} | {a} | {b} |")
    print(f"\nkg's top {args.n} among the authors' top {args.n}: {sum(m for *_, m in ours)}")
    if generic:
        print("Authors' top keywords kg marks generic: " + ", ".join(
            f"{c['label']} ({c.get('specificity')})" for c in sorted(generic, key=lambda c: c["label"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
