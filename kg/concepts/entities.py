"""Concept types and typed relations, from the papers' entity mentions (`kg.extract.entities`).

A mention joins the concept its words name: first the concept one of its paper's keyphrases
with the same key joined (so an acronym resolves as the paper resolved it), else the one concept
whose key or alternative label has that key. A concept's type is voted by its mentions (the
votes are kept as evidence); a relation between two mentions of a sentence becomes a statement
between their concepts, supported by the papers that state it, each with its sentence and score.
Mentions typed Generic ("this method") and mentions that are only generic words name no concept.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from kg.concepts.acronyms import without_short_form
from kg.concepts.model import ConceptIndex
from kg.extract.entities.scierc import SYMMETRIC_RELATIONS
from kg.text.phrases import is_filler, normalize_phrase

__all__ = ["CONCEPT_TYPES", "SYMMETRIC", "ConceptTypes", "Evidence", "TypedRelation", "concept_type", "type_concepts"]

# The types a concept can have: SciERC's, Dataset split out of Material, and not Generic.
CONCEPT_TYPES = ("Task", "Method", "Dataset", "Metric", "Material", "OtherScientificTerm")
SYMMETRIC = SYMMETRIC_RELATIONS  # stated once, head before tail by concept id
_LEADING = frozenset({"the", "a", "an", "our", "this", "these", "those", "their", "its", "such", "each", "both", "any"})


@dataclass(frozen=True)
class Evidence:
    """One paper stating a relation: the sentence (character offsets into its abstract as given,
    end exclusive) and the model's score."""

    paper: str
    start: int
    end: int
    score: float


@dataclass(frozen=True)
class TypedRelation:
    """*head* *type* *tail* between two concepts (ids), with one `Evidence` per paper stating it."""

    head: str
    type: str
    tail: str
    evidence: tuple[Evidence, ...]

    @property
    def papers(self) -> int:
        return len(self.evidence)

    @property
    def score(self) -> float:
        return max(e.score for e in self.evidence)


@dataclass(frozen=True)
class ConceptTypes:
    """Each concept's votes (concept id -> type -> mentions) and the typed relations between concepts."""

    votes: Mapping[str, Mapping[str, int]]
    relations: tuple[TypedRelation, ...]

    def type_of(self, concept_id: str) -> str | None:
        votes = self.votes.get(concept_id)
        return concept_type(votes) if votes else None


def concept_type(votes: Mapping[str, int]) -> str | None:
    """The type most of a concept's mentions have: at least half of them, and more than any other;
    None when no type has that (a concept named as a method by one paper and a task by another)."""
    ranked = sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))
    if not ranked:
        return None
    (best, n), total = ranked[0], sum(votes.values())
    if 2 * n < total or (len(ranked) > 1 and ranked[1][1] == n):
        return None
    return best


def mention_key(text: str) -> str | None:
    """The concept key a mention's words give, without a leading determiner; None for generic words."""
    words = text.split()
    while words and words[0].lower() in _LEADING:
        words = words[1:]
    phrase = without_short_form(" ".join(words))  # "stochastic gradient descent (SGD)"
    if not phrase or is_filler(phrase):
        return None
    return normalize_phrase(phrase) or None


class _Resolver:
    """Which concept a mention of a paper names (`mention_key`): the paper's own keyphrase of that
    key, else the one concept with that key or alternative label."""

    def __init__(self, index: ConceptIndex):
        self.own: dict[tuple[str, str], str] = {}
        for (paper, phrase), concept in index.assignment.items():
            self.own.setdefault((paper, normalize_phrase(phrase)), concept)
        self.corpus: dict[str, str] = {c.key: c.id for c in index.concepts}
        by_label: dict[str, set[str]] = defaultdict(set)
        for c in index.concepts:
            for label in (c.label, *c.alt_labels):
                by_label[normalize_phrase(label)].add(c.id)
        for key, ids in by_label.items():
            if len(ids) == 1 and key not in self.corpus:  # an alias two concepts share names neither
                self.corpus[key] = next(iter(ids))

    def __call__(self, paper: str, text: str) -> str | None:
        key = mention_key(text)
        if key is None:
            return None
        return self.own.get((paper, key)) or self.corpus.get(key)


def type_concepts(index: ConceptIndex, entities: Iterable[tuple[str, object]], keep: Iterable[str] | None = None) -> ConceptTypes:
    """The votes and typed relations that *entities* (paper id, `kg.extract.entities.PaperEntities`)
    give the concepts of *index* (only those in *keep*, when given)."""
    resolve = _Resolver(index)
    kept = set(keep) if keep is not None else None
    votes: dict[str, Counter] = defaultdict(Counter)
    stated: dict[tuple[str, str, str], dict[str, Evidence]] = defaultdict(dict)
    for paper, found in entities:
        concepts = [resolve(paper, e.text) if e.type != "Generic" else None for e in found.entities]
        if kept is not None:
            concepts = [c if c in kept else None for c in concepts]
        for e, c in zip(found.entities, concepts):
            if c is not None:
                votes[c][e.type] += 1
        for r in found.relations:
            head, tail = concepts[r.head], concepts[r.tail]
            if head is None or tail is None or head == tail:
                continue
            if r.type in SYMMETRIC and tail < head:
                head, tail = tail, head
            start, end = _sentence(found.sentences, found.entities[r.head].start)
            best = stated[(head, r.type, tail)]
            if paper not in best or r.score > best[paper].score:
                best[paper] = Evidence(paper, start, end, r.score)
    relations = tuple(
        TypedRelation(h, t, o, tuple(sorted(ev.values(), key=lambda e: e.paper)))
        for (h, t, o), ev in sorted(stated.items())
    )
    return ConceptTypes({c: dict(sorted(v.items())) for c, v in sorted(votes.items())}, relations)


def _sentence(sentences: Sequence[tuple[int, int]], at: int) -> tuple[int, int]:
    for start, end in sentences:
        if start <= at < end:
            return start, end
    return at, at
