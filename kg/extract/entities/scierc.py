"""SciERC (DyGIE++ format): reading the abstracts and scoring predictions by SciERC's protocol.

Offsets are inclusive word offsets over the whole abstract, as in the data. An entity is right
when its span and type are; a relation when both spans, the direction and the relation type are
(SciERC's and PURE's "Rel" figure); the strict figure also wants both entity types right.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from kg.errors import InputError

__all__ = [
    "ENTITY_TYPES", "RELATION_TYPES", "SYMMETRIC_RELATIONS", "Document", "Prediction", "Scores", "read_scierc", "data_dir",
    "word_text", "evaluate", "sentence_bounds",
]

ENTITY_TYPES = ("Task", "Method", "Metric", "Material", "OtherScientificTerm", "Generic")
SYMMETRIC_RELATIONS = frozenset({"COMPARE", "CONJUNCTION"})  # A COMPARE B says B COMPARE A
RELATION_TYPES = ("USED-FOR", "FEATURE-OF", "HYPONYM-OF", "PART-OF", "COMPARE", "CONJUNCTION", "EVALUATE-FOR")
PTB_BRACKETS = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}", "``": '"', "''": '"'}


@dataclass(frozen=True)
class Document:
    """One abstract: its sentences of words, gold entities (start, end, type) and relations
    (head start, head end, tail start, tail end, type), offsets over the whole abstract."""

    key: str
    sentences: tuple[tuple[str, ...], ...]
    entities: frozenset[tuple[int, int, str]]
    relations: frozenset[tuple[int, int, int, int, str]]

    @property
    def words(self) -> list[str]:
        return [w for sentence in self.sentences for w in sentence]


@dataclass(frozen=True)
class Prediction:
    """What a system found in one abstract, in the same offsets as `Document`."""

    entities: frozenset[tuple[int, int, str]]
    relations: frozenset[tuple[int, int, int, int, str]]


@dataclass(frozen=True)
class Scores:
    """Micro precision, recall and F1 (percent) overall and per type, for entities, relations
    (spans + type) and strict relations (entity types right too)."""

    entities: dict[str, tuple[float, float, float]]
    relations: dict[str, tuple[float, float, float]]
    strict_relations: tuple[float, float, float]

    @property
    def entity_f1(self) -> float:
        return self.entities["all"][2]

    @property
    def relation_f1(self) -> float:
        return self.relations["all"][2]

    def to_json(self) -> dict:
        return {
            "entities": {k: [round(x, 2) for x in v] for k, v in self.entities.items()},
            "relations": {k: [round(x, 2) for x in v] for k, v in self.relations.items()},
            "strict_relations": [round(x, 2) for x in self.strict_relations],
        }


def data_dir(root: Path | None = None) -> Path:
    """The SciERC folder: ``$KG_BENCH_DATA/scierc``, else ``../shared/bench-data/scierc`` beside the repository."""
    if os.environ.get("KG_BENCH_DATA"):
        return Path(os.environ["KG_BENCH_DATA"]) / "scierc"
    root = root or Path(__file__).resolve().parents[3]
    return root.parent / "shared" / "bench-data" / "scierc"


def word_text(word: str) -> str:
    """A PTB token as the text it stands for (``-LRB-`` is ``(``)."""
    return PTB_BRACKETS.get(word, word)


def read_scierc(path: Path) -> list[Document]:
    """The abstracts of one DyGIE++ JSONL file."""
    if not path.is_file():
        raise InputError(f"{path}: no such SciERC file")
    documents = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            documents.append(Document(
                key=str(row["doc_key"]),
                sentences=tuple(tuple(s) for s in row["sentences"]),
                entities=frozenset((int(s), int(e), str(t)) for sent in row["ner"] for s, e, t in sent),
                relations=frozenset(
                    (int(a), int(b), int(c), int(d), str(t)) for sent in row["relations"] for a, b, c, d, t in sent
                ),
            ))
        except (ValueError, KeyError, TypeError) as e:
            raise InputError(f"{path}:{n}: not a DyGIE++ row ({e})") from e
    return documents


def sentence_bounds(sentences) -> list[tuple[int, int]]:
    """(first word, one past the last word) of each sentence over the whole abstract."""
    bounds, start = [], 0
    for sentence in sentences:
        bounds.append((start, start + len(sentence)))
        start += len(sentence)
    return bounds


def _prf(correct: int, predicted: int, gold: int) -> tuple[float, float, float]:
    p = 100.0 * correct / predicted if predicted else 0.0
    r = 100.0 * correct / gold if gold else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def _score(gold_sets, predicted_sets, type_of) -> dict[str, tuple[float, float, float]]:
    counts = {"correct": Counter(), "predicted": Counter(), "gold": Counter()}
    for gold, predicted in zip(gold_sets, predicted_sets):
        for item in gold:
            counts["gold"][type_of(item)] += 1
        for item in predicted:
            counts["predicted"][type_of(item)] += 1
            if item in gold:
                counts["correct"][type_of(item)] += 1
    types = sorted(set(counts["gold"]) | set(counts["predicted"]))
    out = {"all": _prf(*(sum(counts[k].values()) for k in ("correct", "predicted", "gold")))}
    out.update({t: _prf(counts["correct"][t], counts["predicted"][t], counts["gold"][t]) for t in types})
    return out


def evaluate(documents: list[Document], predictions: list[Prediction]) -> Scores:
    """Score *predictions* against the gold of *documents* (same order). A ``Dataset`` entity counts
    as ``Material``: SciERC has no Dataset type, kg splits it out of Material by rules."""
    if len(documents) != len(predictions):
        raise ValueError("one prediction per document")
    as_scierc = [frozenset((s, e, "Material" if t == "Dataset" else t) for s, e, t in p.entities) for p in predictions]
    entities = _score([d.entities for d in documents], as_scierc, lambda x: x[2])
    relations = _score([d.relations for d in documents], [p.relations for p in predictions], lambda x: x[4])

    def strict(entity_sets, relation_sets):
        for ents, rels in zip(entity_sets, relation_sets):
            types = {(s, e): t for s, e, t in ents}
            yield {(a, b, types.get((a, b)), c, d, types.get((c, d)), t) for a, b, c, d, t in rels}

    strict_scores = _score(
        list(strict([d.entities for d in documents], [d.relations for d in documents])),
        list(strict(as_scierc, [p.relations for p in predictions])),
        lambda x: "all",
    )
    return Scores(entities=entities, relations=relations, strict_relations=strict_scores["all"])
