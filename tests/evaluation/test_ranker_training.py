"""benchmarks.ranker: a training set with nothing to learn from stops the training with an error naming its file."""

import numpy as np
import pytest

from benchmarks.ranker import SOURCES, check_training, labelled, scored_sets
from benchmarks.levers import Recorded
from kg.errors import InputError
from kg.evaluation.keyphrases import GoldDoc
from kg.extract.keyphrases import Settings, rank_tagged, tag_documents

TEXTS = ["Graph neural networks learn on molecules; graph neural networks predict molecular properties.",
         "We study sparse attention kernels. They reduce memory traffic for long documents."]


def _labels(docs, hash_embedder, nlp):
    tagged = tag_documents([(d.id, d.document) for d in docs], nlp, Settings())
    recorder = Recorded(hash_embedder)
    rank_tagged(tagged, recorder, Settings(ranking="similarity"), {})
    record = {"tagged": {"s": tagged}, "vectors": recorder.vectors, "tokens": recorder.tokens, "max_tokens": recorder.max_tokens}
    return labelled(scored_sets(record, ["s"])["s"], docs)


def test_keyphrases_that_are_candidates_label_them(hash_embedder, nlp):
    docs = [GoldDoc(str(i), "", t, keys) for i, (t, keys) in enumerate(zip(TEXTS, [("graph neural networks",), ("sparse attention kernels",)]))]
    x, y, doc = _labels(docs, hash_embedder, nlp)
    assert y.sum() == 2 and set(doc[y == 1]) == {0, 1} and len(x) == len(y)
    check_training("semeval-train", docs, y)  # nothing to say


def test_keyphrases_absent_from_their_abstracts_are_one_clear_error(hash_embedder, nlp):
    docs = [GoldDoc(str(i), "", t, ("protein folding",)) for i, t in enumerate(TEXTS)]
    _, y, _ = _labels(docs, hash_embedder, nlp)
    assert not y.any()
    with pytest.raises(InputError, match="semeval2010/train.jsonl: none of the gold keyphrases of its 2 documents"):
        check_training("semeval-train", docs, y)


def test_a_training_set_without_keyphrases_is_one_clear_error():
    with pytest.raises(InputError, match=r"scierc/train.jsonl: no document with gold keyphrases"):
        check_training("scierc-train", [], np.zeros(0, dtype=np.int8))
    assert set(SOURCES) >= {"ml-train", "semeval-train", "scierc-train"}
