"""Acronym expansion: how often kg gives a paper's acronym the right long form, and how often a wrong one.

    python -m benchmarks.acronyms [--labels benchmarks/labels/acronyms-ml.tsv] [--grid]

Reads the shared ML abstracts (``$KG_BENCH_DATA`` or ``../shared/bench-data``), as kg reads them.

1. **Held-out definitions.** The papers are split in two halves by a hash of their id. Each paper of
   the second half that defines an acronym the first half defines too is a question: its definition
   is hidden (``long form (SF)`` becomes ``SF``) and the sense kg chooses for SF in it, from the
   first half's definitions (`kg.concepts.senses`), is compared with the long form it gave. The old
   rule (the corpus's majority long form wherever two thirds of its definitions agree) is measured
   on the same questions. ``--grid`` prints precision and recall over thresholds and margins.
2. **Hand labels** (when the file exists): what each sampled acronym means in its paper, labelled
   without looking at kg's answers (benchmarks/labels/README.md); kg's expansion of it, from every
   other paper's definitions and the paper's own, counted right, wrong or not expanded.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import sys
import time
import unicodedata
from collections import defaultdict
from difflib import SequenceMatcher
from pathlib import Path

from benchmarks.quality import ML_DIR, data_dir
from kg.concepts.acronyms import (
    defining_papers,
    local_definitions,
    resolve_acronyms,
    short_key,
)
from kg.concepts.merge import merge_concepts
from kg.concepts.senses import SENSE_MARGIN, SENSE_PRIOR, SENSE_THRESHOLD, sense_scores
from kg.text.acronyms import definition_pairs
from kg.text.phrases import normalize_phrase
from kg.text.sources import read_papers

LABELS = Path(__file__).parent / "labels" / "acronyms-ml.tsv"


def corpus(folder: Path) -> tuple[dict[str, str], dict[str, list[tuple[str, str]]]]:
    """Each paper's document text (title and cleaned abstract, as a build reads it) and the acronym
    definitions it makes."""
    report = read_papers(sorted((folder / ML_DIR).glob("*.jsonl")))
    texts = {p.source_id or p.id: p.document for p in report.papers}  # by the ids the files give
    return texts, {pid: definition_pairs(text) for pid, text in texts.items()}


def _half(pid: str) -> int:
    return hashlib.sha1(pid.encode()).digest()[0] & 1


def held_out(texts, defs):
    """The questions of part 1: (paper id, short key) -> the long-form key it defined, and the texts
    with those definitions hidden."""
    first = [pid for pid in texts if _half(pid) == 0]
    defined = defining_papers((pid, defs[pid]) for pid in first)
    questions: dict[tuple[str, str], str] = {}
    hidden = {pid: texts[pid] for pid in first}
    for pid in texts:
        if _half(pid) == 0:
            continue
        text = texts[pid]
        local = local_definitions(defs[pid])
        for short, long in defs[pid]:
            key = short_key(short)
            if key in defined and local.get(key) and f"{long} ({short})" in text:
                text = text.replace(f"{long} ({short})", short, 1)
                questions[(pid, key)] = local[key]
        hidden[pid] = text
    return questions, defined, hidden, first


_GENERIC_LAST = frozenset({"algorithm", "method", "model", "framework", "problem"})


def same_sense(a: str, b: str) -> bool:
    """Two long-form keys of one acronym that are one sense spelled two ways: the same after accents
    are folded, a last word of `_GENERIC_LAST` dropped and each word cut to 5 letters ("differentially
    private" / "differential privacy", "online newton step algorithm" / "online newton step",
    "frechet" / "fréchet inception distance"); or the same first word and 90 % of the letters in
    common ("locality sensitive hash ing" / "locality sensitive hashing"). Not: "recursive" /
    "recurrent neural network", "self supervised learning" / "supervised learning", "multimodal llm" /
    "multimodal large language model"."""
    a, b = _fold(a), _fold(b)
    if _stems(a) == _stems(b):
        return True
    if a.split()[0] != b.split()[0]:
        return False
    return SequenceMatcher(None, a.replace(" ", ""), b.replace(" ", "")).ratio() >= 0.9


def _fold(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)).replace("-", " ")


def _stems(text: str) -> list[str]:
    words = text.split()
    if len(words) > 1 and words[-1] in _GENERIC_LAST:
        words = words[:-1]
    return [w[:5] for w in words]


def tally(chosen: dict, truth: dict) -> tuple[int, int, int]:
    """(expanded, right, questions): right when the sense is the question's (`same_sense`)."""
    right = sum(same_sense(truth[use], long) for use, long in chosen.items())
    return len(chosen), right, len(truth)


def _row(name: str, expanded: int, right: int, total: int) -> str:
    precision = right / expanded if expanded else float("nan")
    return f"| {name} | {total:,} | {expanded:,} | {right:,} | {precision:.3f} | {right / total:.3f} |"


def part_one(texts, defs, grid: bool, prior: float | None = None) -> None:
    t = time.perf_counter()
    questions, defined, hidden, first = held_out(texts, defs)
    scores = sense_scores(questions, defined, hidden, prior=prior)
    seconds = time.perf_counter() - t
    majority = resolve_acronyms((pid, defs[pid]) for pid in first)
    old = {use: majority[use[1]] for use in questions if use[1] in majority}
    print(f"\nHeld-out definitions: {len(questions):,} questions in {len(texts) - len(first):,} papers, "
          f"long forms from {len(first):,} papers ({seconds:.1f} s to score)\n")
    print("| rule | questions | expanded | right | precision | recall |")
    print("|---|---|---|---|---|---|")
    print(_row("corpus majority (kg before)", *tally(old, questions)))
    for threshold, margin in [(SENSE_THRESHOLD, SENSE_MARGIN)] + (
            [(t, m) for t in (0.05, 0.08, 0.1, 0.12, 0.15, 0.2, 0.25, 0.3) for m in (0.0, 0.02, 0.04, 0.08)] if grid else []):
        chosen = {use: long for use, (long, best, second, written) in scores.items()
                  if written or (best >= threshold and second >= margin)}
        print(_row(f"senses, threshold {threshold}, margin {margin}", *tally(chosen, questions)))
    written = {use: long for use, (long, _, _, w) in scores.items() if w}
    print(_row("senses, written out only", *tally(written, questions)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.acronyms", description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--grid", action="store_true", help="precision and recall over thresholds and margins")
    parser.add_argument("--prior", type=float, default=None, help=f"the weight of a long form's papers (default {SENSE_PRIOR})")
    args = parser.parse_args(argv)
    t = time.perf_counter()
    texts, defs = corpus(data_dir())
    print(f"{len(texts):,} ML abstracts read in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    part_one(texts, defs, args.grid, args.prior)
    if args.labels.is_file():
        part_two(texts, defs, args.labels)
    return 0


def part_two(texts, defs, labels: Path) -> None:
    """kg's expansion of each labelled acronym: `merge_concepts` over every paper's definitions and
    text, the labelled papers each with the acronym as its one keyphrase."""
    rows = list(csv.DictReader(labels.open(encoding="utf-8"), delimiter="\t"))
    phrases = defaultdict(list)
    for row in rows:
        phrases[row["paper_id"]].append(row["short"])
    t = time.perf_counter()
    index = merge_concepts([(pid, phrases.get(pid, []), defs[pid]) for pid in texts], texts=texts)
    seconds = time.perf_counter() - t
    keys = {c.id: c.key for c in index.concepts}
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # labelled long forms, expanded, right, wrong
    wrong = []
    missing = [row for row in rows if (row["paper_id"], row["short"]) not in index.assignment]
    for row in rows:
        if row in missing:  # a paper kg reads as a duplicate of another (same text, another id)
            continue
        key = keys[index.assignment[(row["paper_id"], row["short"])]]
        expanded = key != normalize_phrase(row["short"].replace("-", " "))
        label = row["label"].strip()
        right = expanded and label not in ("-", "?") and same_sense(normalize_phrase(label), key)
        for stratum in ("defined here" if row["defines_here"] == "yes" else "not defined here", "all"):
            c = counts[stratum]
            c[0] += label not in ("-", "?")
            c[1] += expanded
            c[2] += right
            c[3] += expanded and not right
        if expanded and not right:
            wrong.append(f"{row['paper_id']}  {row['short']} -> {key!r}  (label {label!r})")
    print(f"\nHand labels ({labels.name}, {len(rows) - len(missing)} occurrences; {len(missing)} in papers kg reads as "
          f"duplicates of others; merge {seconds:.1f} s)\n")
    print("| occurrences | labelled long forms | expanded | right | wrong | precision | recall |")
    print("|---|---|---|---|---|---|---|")
    for stratum in ("not defined here", "defined here", "all"):
        n, expanded, right, bad = counts[stratum]
        precision = f"{right / expanded:.3f}" if expanded else "-"
        print(f"| {stratum} | {n} | {expanded} | {right} | {bad} | {precision} | {right / n:.3f} |")
    if wrong:
        print("\nWrong expansions:\n" + "\n".join(wrong))


if __name__ == "__main__":
    sys.exit(main())
