"""A learned keyphrase ranking: what kg knows of each candidate of a document, as numbers a model weighs.

KeyBERT's phrase-document similarity stays the core signal; beside it the evidence the hand-weighted ranking
reads (an early first occurrence, repetition, a defined acronym's long form) and what it does not: the phrase's
length and shape, how its similarity compares with the document's other candidates, whether it sits inside other
candidates (a field term such as *graph neural networks* inside *molecular graph neural networks*) or holds
them. Every feature is read off one document, so a paper's keyphrases never depend on the rest of a corpus (the
extraction cache keys on the paper alone).

When a build finds typed entities (`kg.extract.entities`, on by default), the mentions the entity model marks in the
abstract are evidence too (`ENTITY_FEATURES`: whether the candidate is one, its type, the model's confidence): a
second set of trees reads them (``ranker-entities.json``), the first (``ranker.json``) ranks without them. The second
also reads the candidate's *termhood*: its embedding projected on a direction learned with the trees (what kind of
phrase is chosen, whatever the document), which the packaged model's vectors give.
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
from kg.text.phrases import normalize_phrase, phrase_occurrences

__all__ = ["ENTITY_FEATURES", "ENTITY_RANKER_FEATURES", "FEATURES", "MODEL_FORMAT", "TERMHOOD", "Ranker", "entity_features",
           "export_trees", "features", "learned_relevance", "load_ranker", "model_digest", "model_path", "ranker_from",
           "read_ranker"]

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

# Read when the document's typed-entity mentions are known (`Tagged.mentions`): the candidate's key (`normalize_phrase`)
# against the mentions' keys.
ENTITY_TYPES = ("Task", "Method", "Metric", "Material", "Dataset", "OtherScientificTerm", "Generic")
ENTITY_FEATURES = (
    "mention_score",  # the entity model's best confidence in a mention with the candidate's key, 0 when none is
    "mentions",  # ln(1 + mentions with its key)
    "mention_overlap",  # no mention has its key, but one holds it or is held by it
    *(f"type_{t}" for t in ENTITY_TYPES),  # the type of its most confident mention
)
# The candidate's embedding times the ranker's learned direction, plus its offset (`Ranker.direction`): read by the trees
# that ship one; missing (NaN) when the embedder's vectors are not as wide as the direction (another model than kg's).
TERMHOOD = "termhood"
ENTITY_RANKER_FEATURES = FEATURES + ENTITY_FEATURES + (TERMHOOD,)  # what ranker-entities.json reads


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
    `Scored`; this module sits below that one, which calls it), then the `ENTITY_FEATURES` when the document's
    entity mentions are known (``tagged.mentions`` is not None): a (candidates, features) float32 array."""
    mentions = getattr(tagged, "mentions", None)
    text_features = _text_features(tagged, scored)
    if mentions is None:
        return text_features
    return np.hstack([text_features, entity_features(scored.phrases, mentions)])


def entity_features(phrases: Sequence[str], mentions: Sequence[tuple[str, str, float]]) -> np.ndarray:
    """The `ENTITY_FEATURES` of each phrase, from the document's mentions ((text, type, score) each)."""
    best: dict[str, tuple[float, str]] = {}
    count: Counter = Counter()
    for text, kind, score in mentions:
        key = normalize_phrase(text)
        if key:
            count[key] += 1
            if score > best.get(key, (-1.0, ""))[0]:
                best[key] = (float(score), kind)
    keys = tuple(best)
    out = np.zeros((len(phrases), len(ENTITY_FEATURES)), dtype=np.float32)
    for i, phrase in enumerate(phrases):
        key = normalize_phrase(phrase)
        score, kind = best.get(key, (0.0, ""))
        out[i, 0] = score
        out[i, 1] = np.log1p(count[key])
        out[i, 2] = key not in best and any(_holds(other, key) or _holds(key, other) for other in keys)
        if kind in ENTITY_TYPES:
            out[i, 3 + ENTITY_TYPES.index(kind)] = 1.0
    return out


def _holds(outer: str, inner: str) -> bool:
    """*inner* is *outer*'s words or a run of them."""
    return bool(inner) and f" {inner} " in f" {outer} "


def _text_features(tagged, scored) -> np.ndarray:
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
    direction: np.ndarray | None = None  # with `TERMHOOD` among the features: its direction and offset
    offset: float = 0.0

    def termhood(self, embeddings: np.ndarray) -> np.ndarray:
        """The `TERMHOOD` of each candidate embedding (rows): NaN when they are not as wide as the direction."""
        embeddings = np.asarray(embeddings, dtype=np.float32)
        if self.direction is None or embeddings.ndim != 2 or embeddings.shape[1] != len(self.direction):
            return np.full(len(embeddings), np.nan, dtype=np.float32)
        return (embeddings @ self.direction + self.offset).astype(np.float32)

    def features_of(self, tagged, scored) -> np.ndarray:
        """The rows this ranker reads for one document: the `FEATURES`, then, for trees that read them, the
        `ENTITY_FEATURES` (missing when the document's mentions are not known) and the termhood."""
        parts = [_text_features(tagged, scored)]
        if ENTITY_FEATURES[0] in self.features:
            mentions = getattr(tagged, "mentions", None)
            parts.append(entity_features(scored.phrases, mentions) if mentions is not None
                         else np.full((len(scored.phrases), len(ENTITY_FEATURES)), np.nan, dtype=np.float32))
        if TERMHOOD in self.features:
            parts.append(self.termhood(scored.embeddings)[:, None])
        return np.hstack(parts) if len(parts) > 1 else parts[0]

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


def export_trees(model, scale: float, about: dict, names: Sequence[str] = FEATURES,
                 termhood: tuple[np.ndarray, float] | None = None) -> dict:
    """A fitted scikit-learn `HistGradientBoostingClassifier` (binary, numeric features: *names*, `FEATURES` or
    `ENTITY_RANKER_FEATURES`) as the JSON kg ships, with the *termhood* (direction, offset) its last feature reads."""
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
    out = {"format": MODEL_FORMAT, "features": list(names), "baseline": float(np.ravel(model._baseline_prediction)[0]),
           "scale": scale, "trees": trees, "about": about}
    if termhood is not None:
        out["termhood"] = {"direction": [float(v) for v in termhood[0]], "offset": float(termhood[1])}
    return out


def model_path(entities: bool = False) -> Path:
    """The shipped trees: those that read `ENTITY_FEATURES` too with *entities*."""
    return Path(__file__).parent / "data" / ("ranker-entities.json" if entities else "ranker.json")


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
        names = tuple(data["features"])
        if names not in (FEATURES, ENTITY_RANKER_FEATURES):
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
            features=names, baseline=float(data["baseline"]), roots=offsets[:-1].astype(np.int64),
            feature=joined("feature", np.int64), threshold=joined("threshold", np.float64),
            left=joined("left", np.int64, shift=True), right=joined("right", np.int64, shift=True),
            leaf=joined("leaf", bool), value=joined("value", np.float64), missing_left=joined("missing_left", bool),
            scale=float(data["scale"]), depth=max(_depth(t) for t in trees),
            **_termhood(data, names),
        )
    except (KeyError, TypeError, IndexError) as e:
        raise ValueError(f"{type(e).__name__}: {e}") from e
    size = len(ranker.value)
    inner = ~ranker.leaf
    if ((ranker.left[inner] >= size) | (ranker.right[inner] >= size) | (ranker.left[inner] < 0)
            | (ranker.feature[inner] >= len(names)) | (ranker.feature[inner] < 0)).any():
        raise ValueError("a node points outside the trees")
    if not np.isfinite(ranker.value).all() or not np.isfinite(ranker.scale) or ranker.scale <= 0:
        raise ValueError("a value is not a finite number")
    return ranker


def _termhood(data: dict, names: tuple[str, ...]) -> dict:
    if TERMHOOD not in names:
        return {}
    direction = np.asarray(data["termhood"]["direction"], dtype=np.float32)
    offset = float(data["termhood"]["offset"])
    if direction.ndim != 1 or not len(direction) or not np.isfinite(direction).all() or not np.isfinite(offset):
        raise ValueError("its termhood direction is not a row of finite numbers")
    return {"direction": direction, "offset": offset}


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


@lru_cache(maxsize=2)
def load_ranker(entities: bool = False) -> Ranker:
    """kg's own ranker (the one that reads entity mentions too with *entities*), read once per process."""
    return read_ranker(model_path(entities))


def learned_relevance(batch: Sequence, scored: Sequence, ranker: Ranker | None = None) -> list[np.ndarray]:
    """MMR's relevance of each document's scored candidates (`Tagged` and `Scored` documents, as `features` reads
    them) by the learned ranker (*ranker*, else kg's own: the one that reads mentions for the documents whose
    mentions are known; the other is not read when no document needs it): the rows one ranker reads, at once."""
    out: list[np.ndarray] = [np.zeros(0, dtype=np.float32) for _ in batch]
    for entities in (False, True):
        picked = [i for i, t in enumerate(batch) if (getattr(t, "mentions", None) is not None) == entities]
        if not picked:
            continue
        reader = ranker or load_ranker(entities)
        blocks = [reader.features_of(batch[i], scored[i]) for i in picked]
        if not any(len(b) for b in blocks):
            continue
        relevance = reader.relevance(np.vstack(blocks))
        for i, part in zip(picked, np.split(relevance, np.cumsum([len(b) for b in blocks])[:-1])):
            out[i] = part
    return out
