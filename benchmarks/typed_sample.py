"""Typed concepts and relations on a 10,000-abstract sample, drawn for labelling by hand (issue 45).

    python -m benchmarks.typed_sample corpus WORK [--size 10000] [--seed 45]   # a random sample of the ML abstracts
    kg build WORK/corpus --out WORK/out                                          # (about 20 min on 2 cores)
    python -m benchmarks.typed_sample draw WORK/out FILE.tsv [--seed 45] [--labels OLD.tsv]  # 100 typed concepts, 50 relations
    python -m benchmarks.typed_sample score FILE.tsv                             # after the `right` column is filled

`draw` picks at random 100 typed concepts among those with 3 or more papers and 50 concept statements with support 2
or more, each with up to two of its evidence sentences (a concept: the sentences of two of its mentions' papers
are not kept, so its papers' titles stand in); a person fills `right` with y or n. `score` counts them.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import sys
from pathlib import Path

from benchmarks.speed import data_dir

WORDS = {"USED-FOR": "used for", "EVALUATE-FOR": "evaluates", "FEATURE-OF": "feature of", "PART-OF": "part of",
         "HYPONYM-OF": "kind of", "COMPARE": "compared with", "CONJUNCTION": "with"}


def corpus(work: Path, size: int, seed: int) -> Path:
    """A random sample of *size* distinct ML abstracts (20 words or more) as JSON Lines."""
    rows, seen = [], set()
    for path in sorted((data_dir() / "ml-abstracts").glob("*.jsonl")):
        for line in path.open(encoding="utf-8"):
            row = json.loads(line)
            text = (row.get("abstract") or "").strip()
            if len(text.split()) >= 20 and text not in seen:
                seen.add(text)
                rows.append({k: row.get(k) for k in ("id", "title", "abstract", "venue", "year")})
    rows = random.Random(seed).sample(rows, size)
    out = work / "corpus" / "abstracts.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return out


def carried(rows: list[dict], labelled: Path | None) -> int:
    """Fill *rows*' ``right`` and ``note`` from an earlier labelled file where it judged the same claim
    (kind, item and claim alike: a concept's type, or a statement); how many were filled."""
    if labelled is None:
        return 0
    with labelled.open(encoding="utf-8") as f:
        known = {(r["kind"], r["item"], r["claim"]): r for r in csv.DictReader(f, delimiter="\t") if r["right"].strip()}
    filled = 0
    for row in rows:
        old = known.get((row["kind"], row["item"], row["claim"]))
        if old:
            row["right"], row["note"] = old["right"], old.get("note", "")
            filled += 1
    return filled


def draw(out: Path, tsv: Path, seed: int, labelled: Path | None = None) -> None:
    from kg.graph.io import load_graph

    G = load_graph(out / "graph.json")
    rng = random.Random(seed)
    concepts = sorted(n for n, d in G.nodes(data=True) if d.get("kind") == "concept" and d.get("entity_type") and d["papers"] >= 3)
    statements = sorted(((n, r) for n, d in G.nodes(data=True) for r in d.get("relations", ()) if r["papers"] >= 2),
                        key=lambda x: (x[0], x[1]["type"], x[1]["object"]))
    rows = []
    for n in rng.sample(concepts, min(100, len(concepts))):
        d = G.nodes[n]
        titles = [G.nodes[p].get("title") or G.nodes[p]["label"] for p in sorted(G.neighbors(n)) if G.nodes[p].get("kind") == "paper"][:2]
        rows.append({"kind": "concept", "item": d["label"], "claim": d["entity_type"], "support": d["papers"],
                     "evidence": json.dumps(d["type_votes"]) + " | " + " | ".join(titles), "right": "", "note": ""})
    for n, r in rng.sample(statements, min(50, len(statements))):
        sentences = [G.nodes[e["paper"]]["abstract"][e["start"]:e["end"]] for e in r["evidence"][:2]]
        rows.append({"kind": "relation", "item": f"{G.nodes[n]['label']} | {WORDS[r['type']]} | {G.nodes[r['object']]['label']}",
                     "claim": r["type"], "support": r["papers"], "evidence": " | ".join(sentences), "right": "", "note": ""})
    filled = carried(rows, labelled)
    with tsv.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), delimiter="\t")
        w.writeheader()
        w.writerows(rows)
    print(f"{tsv}: {sum(r['kind'] == 'concept' for r in rows)} concepts (of {len(concepts)}), "
          f"{sum(r['kind'] == 'relation' for r in rows)} relations (of {len(statements)}); {filled} labelled from {labelled}")


def score(tsv: Path) -> None:
    with tsv.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    print("| sample | labelled | right | target |\n|---|---:|---:|---|")
    for kind, target in (("concept", "80 of 100"), ("relation", "35 of 50")):
        marks = [r["right"].strip().lower() for r in rows if r["kind"] == kind]
        print(f"| {kind} | {sum(m in ('y', 'n') for m in marks)} | {sum(m == 'y' for m in marks)} | {target} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.typed_sample", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("corpus")
    c.add_argument("work", type=Path)
    c.add_argument("--size", type=int, default=10_000)
    c.add_argument("--seed", type=int, default=45)
    d = sub.add_parser("draw")
    d.add_argument("out", type=Path)
    d.add_argument("tsv", type=Path)
    d.add_argument("--seed", type=int, default=45)
    d.add_argument("--labels", type=Path, help="an earlier labelled file: its judgement of the same claims is carried over")
    s = sub.add_parser("score")
    s.add_argument("tsv", type=Path)
    args = parser.parse_args(argv)
    if args.command == "corpus":
        print(corpus(args.work, args.size, args.seed))
    elif args.command == "draw":
        draw(args.out, args.tsv, args.seed, args.labels)
    else:
        score(args.tsv)


if __name__ == "__main__":
    sys.exit(main())
