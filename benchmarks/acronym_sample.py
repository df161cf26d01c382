"""Acronym occurrences in the ML abstracts, drawn for labelling by hand (issue 49).

    python -m benchmarks.acronym_sample [--data DIR] [--out FILE] [--seed 49] [--force]

The frame: every (paper P, acronym S) where S is a token of P's title + abstract (`is_acronym`, surrounding
punctuation stripped) and some *other* paper of the corpus defines a short form with S's loose key (lower case,
a final ``s`` dropped: GPs, GPS and gp share one), taken once per (P, key) at its first occurrence. Two strata
are drawn from it: 200 occurrences P does not define itself and 100 it does, at most two per loose key. Each
row lists the long forms the rest of the corpus defines for the key (the candidates an expansion could pick);
a person fills ``label`` with the long form S stands for in P, ``-`` (a name, not expanded) or ``?``.
The labels are the ground truth for kg's acronym expansion: they are made without looking at kg's answers.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from benchmarks.quality import data_dir
from kg.text.acronyms import definition_pairs, is_acronym

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "benchmarks" / "labels" / "acronyms-ml.tsv"
COLUMNS = ["paper_id", "short", "offset", "defines_here", "context", "candidates", "label", "note"]
STRATA = (("no", 200), ("yes", 100))  # P does not define S itself / P defines it
PER_KEY = 2  # at most this many occurrences of one loose key in the whole sample
CONTEXT = 150  # characters of text on each side of the occurrence
MAX_CANDIDATES = 8
_TOKEN = re.compile(r"\S+")
_PUNCT = "()[]{},.;:'\""


@dataclass(frozen=True)
class Occurrence:
    paper_id: str
    short: str
    offset: int
    key: str
    defines_here: bool


def loose_key(short: str) -> str:
    """Lower case, a final s dropped when longer than two: the collisions (GPs / GPS / gp) a merge can make."""
    key = short.lower()
    return key[:-1] if len(key) > 2 and key.endswith("s") else key


def read_papers(folder: Path) -> dict[str, str]:
    """Paper id -> title + ". " + abstract, over every JSON Lines file of *folder* in name order
    (the first row of an id wins, so the draw does not depend on duplicates)."""
    papers: dict[str, str] = {}
    for path in sorted(folder.glob("*.jsonl")):
        with path.open(encoding="utf-8") as f:
            for line in f:
                row = json.loads(line)
                pid = str(row.get("id") or "")
                if pid and pid not in papers:
                    papers[pid] = f"{(row.get('title') or '').strip()}. {(row.get('abstract') or '').strip()}"
    return papers


def defined_long_forms(papers: dict[str, str]) -> dict[str, dict[str, set[str]]]:
    """Loose key -> long form (lower case) -> the papers that define it: who defines what, corpus-wide."""
    index: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for pid, text in papers.items():
        for short, long in definition_pairs(text):
            index[loose_key(short)][long.lower()].add(pid)
    return index


def definers(forms: dict[str, set[str]]) -> set[str]:
    """Every paper that defines some long form of one key."""
    return set().union(*forms.values()) if forms else set()


def occurrences(pid: str, text: str, index: dict[str, dict[str, set[str]]]) -> list[Occurrence]:
    """The frame's occurrences in one paper: the first acronym token of each loose key another paper defines."""
    found: dict[str, Occurrence] = {}
    for match in _TOKEN.finditer(text):
        raw = match.group()
        token = raw.strip(_PUNCT)
        if not token or not is_acronym(token):
            continue
        key = loose_key(token)
        if key in found or key not in index:
            continue
        who = definers(index[key])
        if who - {pid}:
            offset = match.start() + raw.index(token)
            found[key] = Occurrence(pid, token, offset, key, pid in who)
    return list(found.values())


def frame(papers: dict[str, str], index: dict[str, dict[str, set[str]]]) -> list[Occurrence]:
    """Every occurrence of the frame, in paper id order (a sorted input keeps the seeded draw reproducible)."""
    return [occ for pid in sorted(papers) for occ in occurrences(pid, papers[pid], index)]


def draw(pool: list[Occurrence], size: int, rng: random.Random, used: dict[str, int]) -> list[Occurrence]:
    """*size* occurrences of *pool* at random, at most PER_KEY per loose key counting *used* (updated):
    a first pass takes one per key not seen yet, later passes fill up, so the sample is varied."""
    order = pool[:]
    rng.shuffle(order)
    picked: list[Occurrence] = []
    taken: set[Occurrence] = set()
    for cap in range(1, PER_KEY + 1):
        for occ in order:
            if len(picked) == size:
                return picked
            if used[occ.key] < cap and occ not in taken:
                used[occ.key] += 1
                taken.add(occ)
                picked.append(occ)
    return picked


def candidates(occ: Occurrence, index: dict[str, dict[str, set[str]]]) -> str:
    """The long forms the rest of the corpus defines for the occurrence's key, with how many papers define
    each, most frequent first: ``long form (n) | ...``."""
    counts = {long: len(pids - {occ.paper_id}) for long, pids in index[occ.key].items()}
    ranked = sorted(((n, long) for long, n in counts.items() if n), key=lambda x: (-x[0], x[1]))
    return " | ".join(f"{long} ({n})" for n, long in ranked[:MAX_CANDIDATES])


def context(text: str, occ: Occurrence) -> str:
    """About 300 characters of the paper's text around the occurrence, on one line."""
    start = max(0, occ.offset - CONTEXT)
    end = occ.offset + len(occ.short) + CONTEXT
    return " ".join(text[start:end].split())


def sample(papers: dict[str, str], seed: int) -> list[dict[str, str]]:
    """The labelling sheet: both strata drawn with one seeded generator, each sorted by paper id."""
    index = defined_long_forms(papers)
    occs = frame(papers, index)
    rng = random.Random(seed)
    used: dict[str, int] = defaultdict(int)
    rows = []
    for flag, size in STRATA:
        pool = [o for o in occs if ("yes" if o.defines_here else "no") == flag]
        for occ in sorted(draw(pool, size, rng, used), key=lambda o: (o.paper_id, o.offset)):
            rows.append({"paper_id": occ.paper_id, "short": occ.short, "offset": str(occ.offset),
                         "defines_here": flag, "context": context(papers[occ.paper_id], occ),
                         "candidates": candidates(occ, index), "label": "", "note": ""})
    return rows


def write(rows: list[dict[str, str]], out: Path) -> None:
    """The sheet as TSV."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, delimiter="\t", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, help="the bench-data folder (default $KG_BENCH_DATA or ../shared/bench-data)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"the TSV to write (default {DEFAULT_OUT.relative_to(ROOT)})")
    parser.add_argument("--seed", type=int, default=49)
    parser.add_argument("--force", action="store_true", help="overwrite an existing (perhaps labelled) file")
    args = parser.parse_args(argv)
    if args.out.exists() and not args.force:
        print(f"{args.out} exists (it may hold labels): pass --force to overwrite it")
        return 1
    papers = read_papers((args.data or data_dir()) / "ml-abstracts")
    rows = sample(papers, args.seed)
    write(rows, args.out)
    counts = {flag: sum(r["defines_here"] == flag for r in rows) for flag, _ in STRATA}
    print(f"{len(papers)} papers; wrote {len(rows)} occurrences to {args.out} "
          f"({counts['no']} not defined in their paper, {counts['yes']} defined there)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
