"""A learned keyphrase ranking: what kg knows of each candidate of a document, as numbers a model weighs.

KeyBERT's phrase-document similarity stays the core signal; beside it the evidence the hand-weighted ranking
reads (an early first occurrence, repetition, a defined acronym's long form) and what it does not: the phrase's
length and shape, how its similarity compares with the document's other candidates, whether it sits inside other
candidates (a field term such as *graph neural networks* inside *molecular graph neural networks*) or holds
them. Every feature is read off one document, so a paper's keyphrases never depend on the rest of a corpus (the
extraction cache keys on the paper alone).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from kg.errors import ModelError
from kg.text.acronyms import is_acronym
from kg.text.phrases import phrase_occurrences

__all__ = ["FEATURES", "MODEL_FORMAT", "Ranker", "export_trees", "features", "learned_relevance", "load_ranker", "model_digest",
           "model_path", "ranker_from", "read_ranker"]

FEATURES = (
    "cosine",  # KeyBERT's similarity of the phrase and the document
    "cosine_gap",  # the document's best similarity minus this one
    "cosine_z",  # this similarity in standard deviations of the document's
    "cosine_rank",  # place by similarity among the document's candidates, 0 first, 1 last
    "first",  # 1 - first occurrence / tokens (1: the first word)
    "first_sentence",  # occurs in the document's first sentence (often the title)
    "spread",  # last occurrence minus first, as a share of the text
    "occurrences",  # ln(whole-phrase occurrences), a defined acronym's uses counted as its long form's
    "word_occurrences",  # ln(mean occurrences of the phrase's words)
    "words",  # words in the phrase (a hyphenated compound is one)
    "characters",  # ln(characters)
    "acronym",  # the phrase is an acronym
    "with_acronym",  # the phrase holds an acronym and other words
    "defined",  # the long form of an acronym the document defines
    "defines",  # an acronym the document defines
    "hyphen",
    "digit",
    "inside",  # ln(1 + candidates that hold this phrase as whole words)
    "holds",  # ln(1 + candidates this phrase holds as whole words)
    "head_share",  # share of the document's candidates ending in this phrase's last word
    "candidates",  # ln(candidates of the document)
    "tokens",  # ln(tokens of the document)
)


_WORD = re.compile(r"[\w-]+")  # a word as kg's phrases hold one: a hyphenated compound is one
_DIGIT = re.compile(r"\d")


def _nesting(keys: Sequence[str]) -> tuple[list[int], list[int]]:
    """For each phrase, how many other phrases hold it as whole words, and how many it holds."""
    known = {key: i for i, key in enumerate(keys)}
    inside, holds = [0] * len(keys), [0] * len(keys)
    for i, key in enumerate(keys):
        words = key.split()
        parts = {" ".join(words[a:b]) for a in range(len(words)) for b in range(a + 1, len(words) + 1)} - {key}
        for part in parts:
            j = known.get(part)
            if j is not None:
                holds[i] += 1
                inside[j] += 1
    return inside, holds


def features(tagged, scored) -> np.ndarray:
    """The `FEATURES` of each scored candidate of one document (a `kg.extract.keyphrases.Tagged` and its
    `Scored`; this module sits below that one, which calls it): a (candidates, features) float32 array."""
    phrases = scored.phrases
    n = len(phrases)
    out = np.zeros((n, len(FEATURES)), dtype=np.float32)
    if not n:
        return out
    cosine = scored.cosine.astype(np.float32)
    text = tagged.text.lower()
    lower = [p.lower() for p in phrases]
    first = {c.phrase: c.position for c in tagged.candidates}
    defined_long = {long.lower() for _, long in tagged.definitions}
    defined_short = {short.lower() for short, _ in tagged.definitions}
    opening = tagged.sentences[0].lower() if tagged.sentences else ""
    heads: dict[str, int] = {}
    for key in lower:
        head = key.rsplit(" ", 1)[-1]
        heads[head] = heads.get(head, 0) + 1
    words = Counter(_WORD.findall(text))
    order = np.argsort(-cosine, kind="stable")
    place = np.empty(n, dtype=np.float32)
    place[order] = np.arange(n, dtype=np.float32) / max(n - 1, 1)
    size = max(len(text), 1)
    tokens = [p.split() for p in phrases]
    acronyms = [sum(map(is_acronym, t)) for t in tokens]
    inside, holds = _nesting(lower)
    columns = {
        "cosine": cosine,
        "cosine_gap": cosine.max() - cosine,
        "cosine_z": (cosine - cosine.mean()) / (float(cosine.std()) or 1.0),
        "cosine_rank": place,
        "first": 1.0 - np.array([first[p] for p in phrases], dtype=np.float32) / max(tagged.tokens, 1),
        "first_sentence": [key in opening for key in lower],
        "spread": [(text.rfind(key) - text.find(key)) / size if key in text else 0.0 for key in lower],
        "occurrences": np.log(np.array(phrase_occurrences(tagged.text, tagged.definitions, phrases), dtype=np.float32)),
        "word_occurrences": np.log([sum(max(words[w], 1) for w in t) / len(t) for t in (k.split() for k in lower)]),
        "words": [len(t) for t in tokens],
        "characters": np.log([len(key) for key in lower]),
        "acronym": [len(t) == 1 and a == 1 for t, a in zip(tokens, acronyms)],
        "with_acronym": [len(t) > 1 and a > 0 for t, a in zip(tokens, acronyms)],
        "defined": [key in defined_long for key in lower],
        "defines": [key in defined_short for key in lower],
        "hyphen": ["-" in key for key in lower],
        "digit": [_DIGIT.search(key) is not None for key in lower],
        "inside": np.log1p(inside),
        "holds": np.log1p(holds),
        "head_share": [heads[key.rsplit(" ", 1)[-1]] / n for key in lower],
        "candidates": np.log(n),
        "tokens": np.log(max(tagged.tokens, 1)),
    }
    for i, name in enumerate(FEATURES):
        out[:, i] = columns[name]
    return out


MODEL_FORMAT = "kg-ranker/1"


@dataclass(frozen=True)
class Ranker:
    """Gradient-boosted trees over `FEATURES` (trained by `python -m benchmarks.ranker --train`), flattened into
    arrays: node *i* sends a row left when ``x[feature[i]] <= threshold[i]``; a leaf adds ``value[i]`` to the log-odds.
    *scale* multiplies the probability into MMR's relevance, so kg's diversity means what it means for the similarity
    ranking (chosen in training)."""

    features: tuple[str, ...]
    baseline: float
    roots: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    leaf: np.ndarray
    value: np.ndarray
    missing_left: np.ndarray
    scale: float
    depth: int

    def probability(self, x: np.ndarray) -> np.ndarray:
        """The chance that each row's candidate is a keyphrase: each tree walked by the rows still inside it
        (a tree at a time: four times faster than all trees at once, which gathers for rows already at a leaf)."""
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != len(self.features):
            raise ValueError(f"the ranker reads {len(self.features)} features, not {x.shape[-1]}")
        raw = np.full(len(x), self.baseline)
        for root in self.roots:
            node = np.full(len(x), root)
            walking = np.arange(len(x))
            for _ in range(self.depth):
                walking = walking[~self.leaf[node[walking]]]
                if not len(walking):
                    break
                at = node[walking]
                values = x[walking, self.feature[at]]
                go_left = (values <= self.threshold[at]) | (np.isnan(values) & self.missing_left[at])
                node[walking] = np.where(go_left, self.left[at], self.right[at])
            raw += self.value[node]
        return (1.0 / (1.0 + np.exp(-raw))).astype(np.float32)

    def relevance(self, x: np.ndarray) -> np.ndarray:
        return self.scale * self.probability(x)


def export_trees(model, scale: float, about: dict) -> dict:
    """A fitted scikit-learn `HistGradientBoostingClassifier` (binary, numeric features) as the JSON kg ships."""
    trees = []
    for (predictor,) in model._predictors:
        nodes = predictor.nodes
        trees.append({
            "feature": nodes["feature_idx"].tolist(),
            "threshold": [float(t) for t in nodes["num_threshold"]],
            "left": nodes["left"].tolist(),
            "right": nodes["right"].tolist(),
            "leaf": nodes["is_leaf"].astype(bool).tolist(),
            "value": [float(v) for v in nodes["value"]],
            "missing_left": nodes["missing_go_to_left"].astype(bool).tolist(),
        })
    return {"format": MODEL_FORMAT, "features": list(FEATURES), "baseline": float(np.ravel(model._baseline_prediction)[0]),
            "scale": scale, "trees": trees, "about": about}


def model_path() -> Path:
    return Path(__file__).parent / "data" / "ranker.json"


def model_digest(path: Path | None = None) -> str:
    """sha256 of the ranker file (part of the extraction fingerprint: new trees, new keyphrases)."""
    path = path or model_path()
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as e:
        raise ModelError(f"{path}: the keyphrase ranker could not be read ({e.strerror or e}); reinstall kg") from e


def read_ranker(path: Path | None = None) -> Ranker:
    """The ranker in *path* (kg's own by default); a clear `ModelError` naming the file when it is not one."""
    path = path or model_path()
    try:
        return ranker_from(json.loads(path.read_bytes()))
    except OSError as e:
        raise ModelError(f"{path}: the keyphrase ranker could not be read ({e.strerror or e}); reinstall kg") from e
    except ValueError as e:  # json's errors too
        raise ModelError(f"{path}: not a keyphrase ranker kg can use ({e})") from e


def ranker_from(data: object) -> Ranker:
    """The `Ranker` of a ``kg-ranker/1`` document (what `export_trees` makes, as JSON reads it back); a `ValueError`
    saying what is wrong when it is not one."""
    try:
        if not isinstance(data, dict) or data.get("format") != MODEL_FORMAT:
            raise ValueError(f"not a {MODEL_FORMAT} file")
        if tuple(data["features"]) != FEATURES:
            raise ValueError("its features are not the ones this kg computes; retrain it (python -m benchmarks.ranker --train)")
        trees = data["trees"]
        if not trees:
            raise ValueError("it has no trees")
        offsets = np.cumsum([0] + [len(t["value"]) for t in trees])

        def joined(name, dtype, shift=False):
            parts = [np.asarray(t[name], dtype=dtype) for t in trees]
            if shift:
                parts = [part + offsets[i] for i, part in enumerate(parts)]
            return np.concatenate(parts)

        ranker = Ranker(
            features=FEATURES, baseline=float(data["baseline"]), roots=offsets[:-1].astype(np.int64),
            feature=joined("feature", np.int64), threshold=joined("threshold", np.float64),
            left=joined("left", np.int64, shift=True), right=joined("right", np.int64, shift=True),
            leaf=joined("leaf", bool), value=joined("value", np.float64), missing_left=joined("missing_left", bool),
            scale=float(data["scale"]), depth=max(_depth(t) for t in trees),
        )
    except (KeyError, TypeError, IndexError) as e:
        raise ValueError(f"{type(e).__name__}: {e}") from e
    size = len(ranker.value)
    inner = ~ranker.leaf
    if ((ranker.left[inner] >= size) | (ranker.right[inner] >= size) | (ranker.left[inner] < 0)
            | (ranker.feature[inner] >= len(FEATURES)) | (ranker.feature[inner] < 0)).any():
        raise ValueError("a node points outside the trees")
    if not np.isfinite(ranker.value).all() or not np.isfinite(ranker.scale) or ranker.scale <= 0:
        raise ValueError("a value is not a finite number")
    return ranker


_NODE_FIELDS = ("feature", "threshold", "left", "right", "leaf", "value", "missing_left")


def _depth(tree: dict) -> int:
    deepest, stack, size = 0, [(0, 0)], len(tree["value"])
    while stack:
        node, depth = stack.pop()
        if not (isinstance(node, int) and 0 <= node < size) or any(len(tree[k]) != size for k in _NODE_FIELDS):
            raise ValueError("a node points outside the trees")
        deepest = max(deepest, depth)
        if not tree["leaf"][node]:
            if depth > 1000:
                raise ValueError("a tree is deeper than 1,000 nodes")
            stack += [(tree["left"][node], depth + 1), (tree["right"][node], depth + 1)]
    return deepest


@lru_cache(maxsize=1)
def load_ranker() -> Ranker:
    """kg's own ranker, read once per process."""
    return read_ranker()


def learned_relevance(batch: Sequence, scored: Sequence, ranker: Ranker | None = None) -> list[np.ndarray]:
    """MMR's relevance of each document's scored candidates (`Tagged` and `Scored` documents, as `features` reads
    them) by the learned ranker: all rows of a batch at once."""
    ranker = ranker or load_ranker()
    blocks = [features(t, s) for t, s in zip(batch, scored)]
    if not any(len(b) for b in blocks):
        return [np.zeros(0, dtype=np.float32) for _ in blocks]
    relevance = ranker.relevance(np.vstack(blocks))
    return np.split(relevance, np.cumsum([len(b) for b in blocks])[:-1])
