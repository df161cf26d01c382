"""Labelled concept pairs: how well kg's merge tells variants of one concept from different ones.

``tests/data/concept_pairs.tsv`` holds pairs of labels marked same / different. For each pair,
`pair_merged` runs `kg.concepts.merge.merge_concepts` on a three-paper corpus (one paper with label a,
one with label b, one that makes the pair's acronym definitions) and says whether a and b joined
one concept. `score_pairs` gives precision and recall of "merged" against "same"; `sweep_threshold`
the curve over near-duplicate thresholds (the dev half of the pairs chose
`kg.concepts.NEAR_DUPLICATE_THRESHOLD`).
"""

from __future__ import annotations

import csv
import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kg.concepts.merge import merge_concepts
from kg.concepts.variants import NEAR_DUPLICATE_THRESHOLD
from kg.errors import InputError

__all__ = ["ConceptPair", "PairScores", "memoized", "pair_merged", "read_pairs", "score_pairs", "split_pairs", "sweep_threshold"]


@dataclass(frozen=True)
class ConceptPair:
    a: str
    b: str
    same: bool
    source: str
    note: str = ""
    defines: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class PairScores:
    """Merge decisions against the labels: true/false positives and negatives, and the pairs wrong."""

    tp: int
    fp: int
    fn: int
    tn: int
    false_merges: tuple[ConceptPair, ...] = ()
    missed: tuple[ConceptPair, ...] = ()

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


def read_pairs(path: str | Path) -> list[ConceptPair]:
    """The pairs of a TSV file (``#`` comment lines, then a header ``a b same source note defines``)."""
    from kg.text.files import split_lines

    path = Path(path)
    lines = [line for line in split_lines(path.read_text(encoding="utf-8")) if line and not line.startswith("#")]
    pairs = []
    for n, row in enumerate(csv.DictReader(lines, delimiter="\t"), start=2):
        try:
            defines = tuple(tuple(d.split("=", 1)) for d in (row.get("defines") or "").split(";") if d)
            if row["same"] not in ("0", "1") or any(len(d) != 2 for d in defines):
                raise ValueError(row)
            pairs.append(ConceptPair(row["a"], row["b"], row["same"] == "1", row["source"], row.get("note") or "", defines))
        except (KeyError, ValueError, TypeError) as e:
            raise InputError(f"{path}: row {n} is not a labelled pair (a, b, same 0/1, source, note, defines SF=long;...)") from e
    return pairs


def split_pairs(pairs: Iterable[ConceptPair]) -> tuple[list[ConceptPair], list[ConceptPair]]:
    """(dev, test): a fixed half of the pairs each, by a hash of the pair's labels."""
    dev, test = [], []
    for p in pairs:
        digest = hashlib.sha256(f"{p.a}\t{p.b}".encode()).digest()
        (dev if digest[0] % 2 == 0 else test).append(p)
    return dev, test


def memoized(embed: Callable[[list[str]], np.ndarray]) -> Callable[[list[str]], np.ndarray]:
    """*embed* with each text embedded once (pair evaluations embed the same labels many times)."""
    cache: dict[str, np.ndarray] = {}

    def embed_once(texts: list[str]) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if t not in cache]
        if new:
            cache.update(zip(new, np.asarray(embed(new), dtype=np.float32)))
        return np.vstack([cache[t] for t in texts])

    return embed_once


def pair_merged(pair: ConceptPair, *, embed=None, threshold: float = NEAR_DUPLICATE_THRESHOLD) -> bool:
    """Whether kg merges the pair's labels into one concept, in a corpus where another paper makes
    the pair's acronym definitions (an acronym joins its expansion only where the corpus defines it)."""
    index = merge_concepts([("a", [pair.a], ()), ("b", [pair.b], ()), ("defines", [], pair.defines)], embed=embed, threshold=threshold)
    return index.assignment[("a", pair.a)] == index.assignment[("b", pair.b)]


def score_pairs(pairs: Sequence[ConceptPair], *, embed=None, threshold: float = NEAR_DUPLICATE_THRESHOLD) -> PairScores:
    """Precision and recall of kg's merge on labelled *pairs*."""
    tp = fp = fn = tn = 0
    false_merges, missed = [], []
    for p in pairs:
        merged = pair_merged(p, embed=embed, threshold=threshold)
        if merged and p.same:
            tp += 1
        elif merged:
            fp += 1
            false_merges.append(p)
        elif p.same:
            fn += 1
            missed.append(p)
        else:
            tn += 1
    return PairScores(tp, fp, fn, tn, tuple(false_merges), tuple(missed))


def sweep_threshold(pairs: Sequence[ConceptPair], thresholds: Iterable[float], *, embed) -> list[tuple[float, PairScores]]:
    """Scores at each near-duplicate threshold (give a `memoized` embed)."""
    return [(t, score_pairs(pairs, embed=embed, threshold=t)) for t in thresholds]
