"""Typed scientific entities and relations in abstracts (issue 45): SciERC's six entity types plus
Dataset (split out of Material by rules), and its seven relation types between entities of a sentence.

The model (`model.py`) is trained by `python -m kg.extract.entities.train` and ships inside the
package; `find_entities` runs it on raw text and answers in character offsets of that text.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

__all__ = ["MAX_SENTENCE_WORDS", "Entity", "PaperEntities", "Relation", "entity_fingerprint", "find_entities", "load_entity_model"]

# Sentences are cut into pieces of at most this many words before the model reads them: SciERC's
# sentences are shorter, and relation pairs grow with the square of the entities in a sentence
# (a 3,000-word abstract without full stops would otherwise pair hundreds of mentions).
MAX_SENTENCE_WORDS = 80


@dataclass(frozen=True)
class Entity:
    """A mention: character offsets into the given text (end exclusive), its text, type and score."""

    start: int
    end: int
    text: str
    type: str
    score: float


@dataclass(frozen=True)
class Relation:
    """A directed relation between two entities of one paper (indices into its `entities`)."""

    head: int
    tail: int
    type: str
    score: float


@dataclass(frozen=True)
class PaperEntities:
    """A paper's mentions and relations; *sentences*: the pieces the model read (character
    offsets, end exclusive), each relation between two mentions of one piece."""

    entities: tuple[Entity, ...]
    relations: tuple[Relation, ...]
    sentences: tuple[tuple[int, int], ...] = ()

    @property
    def mentions(self) -> tuple[tuple[str, str, float], ...]:
        """(text, type, score) of each mention: what the learned keyphrase ranking reads
        (`kg.extract.keyphrases.Tagged.mentions`)."""
        return tuple((e.text, e.type, e.score) for e in self.entities)


# Raised when what the stage writes for the same weights changes (the cache keys depend on it).
ENTITIES_VERSION = 5  # bump it when the entity extractor's output changes (what each bump changed: `git log -L` on this line)


def entity_fingerprint() -> str:
    """What an entity extraction depends on besides the text: the shipped weights (their recorded
    sha256; `load_entity_model` checks the file against it), the sentence cut and `ENTITIES_VERSION`.
    Raises `kg.errors.ModelError` when the weights or their record are missing or damaged."""
    from .model import read_record, weights_path

    return f"entities/{ENTITIES_VERSION}/{read_record(weights_path())['sha256']}/{MAX_SENTENCE_WORDS}"


@lru_cache(maxsize=1)
def load_entity_model():
    """The shipped model (checked against its recorded sha256), loaded once per process."""
    from .model import load_model

    return load_model()[0]


@lru_cache(maxsize=1)
def _sentencizer():
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


def split_words(text: str) -> list[list[tuple[str, int, int]]]:
    """Sentences of (word, start, end) in character offsets of *text*; long sentences cut into
    pieces of `MAX_SENTENCE_WORDS` words."""
    sentences = []
    for sentence in _sentencizer()(text).sents:
        words = [(t.text, t.idx, t.idx + len(t.text)) for t in sentence if not t.is_space]
        sentences.extend(words[i : i + MAX_SENTENCE_WORDS] for i in range(0, len(words), MAX_SENTENCE_WORDS))
    return [s for s in sentences if s]


def find_entities(texts: list[str], model=None) -> list[PaperEntities]:
    """Typed entities and relations of each text, in character offsets of that text.

    Each text is read on one torch thread (texts side by side on as many threads as torch has), so
    that its result is the same bits whatever the process's thread count: a Dask worker runs one,
    kg build's model process two, and split over two threads a matrix product rounds otherwise."""
    from kg.extract.embed import one_thread_each

    from .model import tokenizer

    model = model or load_entity_model()
    tokenizer(), _sentencizer()  # loaded once, before threads share them
    return one_thread_each(lambda text: _paper_entities(text or "", model), list(texts))


def _paper_entities(text: str, model) -> PaperEntities:
    from kg.text.chars import replace_surrogates

    from .model import predict
    from .rules import dataset_type

    given, text = text, replace_surrogates(text)[0]  # no tokenizer takes a lone surrogate; one U+FFFD each keeps the offsets
    sentences = split_words(text)
    words = [w for s in sentences for w, _, _ in s]
    spans = [(a, b) for s in sentences for _, a, b in s]
    bounds, start = [], 0
    for s in sentences:
        bounds.append((start, start + len(s)))
        start += len(s)
    found, relations = predict(model, [[w for w, _, _ in s] for s in sentences])
    entities = []
    for s, e, kind, score in found:
        sentence = next(b for b in bounds if b[0] <= s < b[1])
        begin, end = spans[s][0], spans[e][1]
        entities.append(Entity(begin, end, given[begin:end], dataset_type(words, sentence, s, e, kind), round(score, 4)))
    return PaperEntities(
        tuple(entities), tuple(Relation(i, j, kind, round(score, 4)) for i, j, kind, score in relations),
        tuple((s[0][1], s[-1][2]) for s in sentences))
