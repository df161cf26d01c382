"""Typed entities and relations (issue 45): the SciERC reader and evaluator on a hand-written
fixture, the Dataset rules, the word-piece windows, and the shipped model (marked `model`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kg.errors import InputError, ModelError
from kg.extract.entities.model import RETRAIN_COMMAND, Encoding, _windows, read_record, weights_path
from kg.extract.entities.rules import dataset_type, is_dataset
from kg.extract.entities.scierc import Prediction, evaluate, read_scierc, word_text

FIXTURE = Path(__file__).resolve().parent.parent / "data" / "scierc" / "fixture.jsonl"


def test_the_reader_keeps_offsets_over_the_whole_abstract():
    first, second = read_scierc(FIXTURE)
    assert first.key == "kg-fixture-1" and len(first.sentences) == 2
    assert (15, 16, "Material") in first.entities
    assert " ".join(first.words[15:17]) == "Foo Treebank"
    assert (15, 16, 10, 10, "EVALUATE-FOR") in first.relations
    assert second.relations == {(0, 1, 3, 4, "COMPARE"), (0, 1, 8, 9, "USED-FOR")}
    assert [word_text(w) for w in first.words[17:20]] == ["(", "FTB", ")"]


def test_a_file_that_is_not_scierc_is_an_input_error(tmp_path):
    (tmp_path / "bad.jsonl").write_text('{"doc_key": 1}\n')
    with pytest.raises(InputError, match="bad.jsonl:1"):
        read_scierc(tmp_path / "bad.jsonl")
    with pytest.raises(InputError):
        read_scierc(tmp_path / "absent.jsonl")


def test_the_evaluator_follows_scierc_protocol():
    docs = read_scierc(FIXTURE)
    perfect = [Prediction(d.entities, d.relations) for d in docs]
    scores = evaluate(docs, perfect)
    assert scores.entity_f1 == 100.0 and scores.relation_f1 == 100.0 and scores.strict_relations[2] == 100.0
    # Dataset counts as Material; a reversed relation and a wrong span are wrong.
    first = docs[0]
    entities = (first.entities - {(15, 16, "Material"), (6, 7, "Task")}) | {(15, 16, "Dataset"), (5, 7, "Task")}
    relations = {(6, 7, 3, 4, "USED-FOR"), (15, 16, 10, 10, "EVALUATE-FOR")}
    scores = evaluate([first], [Prediction(frozenset(entities), frozenset(relations))])
    assert scores.entities["Material"][2] == 100.0
    assert scores.entities["all"][:2] == pytest.approx((5 / 6 * 100, 5 / 6 * 100))
    assert scores.relations["all"][:2] == pytest.approx((50.0, 100 / 3))
    assert scores.relations["USED-FOR"][2] == 0.0


@pytest.mark.parametrize("mention, before, after, expected", [
    (["parallel", "corpus"], ["a"], [], True),
    (["Penn", "Treebank"], ["on", "the"], ["."], True),
    (["ImageNet"], ["on"], ["dataset", "."], True),
    (["GLUE"], ["the"], ["benchmark"], True),
    (["MNIST"], ["on"], [], True),
    (["data", "set"], ["a", "new"], [], True),
    (["speech"], ["noisy"], ["signals"], False),
    (["images"], [], ["dataset"], False),  # not a name: "images dataset" is left Material
    (["Wikipedia", "articles"], [], [], False),
])
def test_dataset_rules(mention, before, after, expected):
    assert is_dataset(mention, before, after) is expected


def test_punctuation_and_stop_words_alone_are_no_mention():
    from kg.extract.entities.rules import is_mention

    assert not is_mention(["."], "Generic") and not is_mention(["No"], "Metric") and not is_mention(["of", "the"], "Task")
    assert is_mention(["it"], "Generic") and is_mention(["AS"], "Method") and is_mention(["the", "parser"], "Method")


def test_only_material_becomes_dataset():
    words = ["the", "ImageNet", "dataset"]
    assert dataset_type(words, (0, 3), 1, 1, "Material") == "Dataset"
    assert dataset_type(words, (0, 3), 1, 1, "Method") == "Method"


def test_windows_cut_at_sentences_then_words():
    pieces = [[1]] * 10
    assert _windows(pieces, [4, 6], limit=6) == [[0, 1, 2, 3], [4, 5, 6, 7, 8, 9]]
    assert _windows(pieces, [10], limit=4) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert _windows([[1] * 9, [1]], [2], limit=4) == [[0], [1]]  # an overlong word keeps its first pieces


# ---- the shipped model ----------------------------------------------------------------------------

ABSTRACT = (
    "We present a neural network model for named entity recognition in biomedical text. "
    "The model is trained on the GENIA corpus and evaluated with F1 score. "
    "It outperforms conditional random fields (CRFs) on this task."
)


@pytest.fixture(scope="module")
def entity_model():
    from kg.extract.entities import load_entity_model

    return load_entity_model()


@pytest.mark.model
def test_the_shipped_weights_match_their_record():
    meta = read_record(weights_path())
    assert meta["bytes"] == weights_path().stat().st_size <= 30 * 1024 * 1024
    assert meta["command"].startswith(RETRAIN_COMMAND) and isinstance(meta["seed"], int)
    for kind in ("entities", "relations"):
        assert meta["dev"][kind]["all"][2] > meta["dev_baseline"][kind]["all"][2]
        assert abs(meta["dev_int8"][kind]["all"][2] - meta["dev"][kind]["all"][2]) < 1.0  # int8, as kg runs it
    assert meta["config"]["layers"] == 3 and meta["command"].startswith(RETRAIN_COMMAND)
    assert set(meta["dev"]["entities"]) >= {"all", "Task", "Method", "Metric", "Material"}


@pytest.mark.model
def test_find_entities_on_an_abstract(entity_model):
    from kg.extract.entities import find_entities

    (paper,) = find_entities([ABSTRACT], entity_model)
    assert paper.entities
    for entity in paper.entities:
        assert ABSTRACT[entity.start : entity.end] == entity.text and entity.text.strip() == entity.text
        assert entity.type in {"Task", "Method", "Metric", "Material", "OtherScientificTerm", "Generic", "Dataset"}
    texts = {e.text: e.type for e in paper.entities}
    assert texts.get("named entity recognition") == "Task"
    assert any(t == "Method" for t in texts.values())
    for relation in paper.relations:
        assert 0 <= relation.head < len(paper.entities) and 0 <= relation.tail < len(paper.entities)
        assert relation.head != relation.tail


@pytest.mark.model
def test_empty_long_and_foreign_text(entity_model):
    from kg.extract.entities import find_entities

    long_text = " ".join(["The parser improves machine translation on the WMT corpus"] * 400)  # 3,600 words, no full stop
    empty, blank, long, foreign = find_entities(["", "   \n", long_text, "Это просто текст на русском языке."], entity_model)
    assert empty.entities == blank.entities == () and empty.relations == ()
    assert long.entities and all(long_text[e.start : e.end] == e.text for e in long.entities)
    assert all(e.end <= len("Это просто текст на русском языке.") for e in foreign.entities)


@pytest.mark.model
def test_missing_or_corrupt_weights_name_the_file_and_the_command(tmp_path):
    from kg.extract.entities.model import load_model

    with pytest.raises(ModelError, match=RETRAIN_COMMAND):
        load_model(tmp_path / "entities.safetensors")
    shutil.copy(weights_path(), tmp_path / "entities.safetensors")
    shutil.copy(weights_path().with_suffix(".json"), tmp_path / "entities.json")
    with (tmp_path / "entities.safetensors").open("r+b") as f:
        f.seek(1000)
        f.write(b"corrupt")
    with pytest.raises(ModelError, match=r"entities\.safetensors.*python -m kg\.extract\.entities\.train"):
        load_model(tmp_path / "entities.safetensors")
    (tmp_path / "entities.json").write_text(json.dumps({"sha256": "0"}))
    with pytest.raises(ModelError, match="does not match"):
        read_record(tmp_path / "entities.safetensors")


@pytest.mark.model
def test_word_pieces_are_each_words_own_and_a_long_abstract_warns_nobody(capfd, caplog):
    from kg.extract.entities.model import tokenizer, word_pieces

    words = ["Parsing", "naïve", "C++", "e.g.", "\u200b", "", "ﬁne", "日本語", "GPT-4"] * 80  # 720 words, over 512 pieces
    assert word_pieces(tokenizer(), words) == [tokenizer().encode(w, add_special_tokens=False) for w in words]
    assert "longer than" not in capfd.readouterr().err + caplog.text  # transformers' warning about the model's limit


def test_encoding_is_a_frozen_dataclass():
    encoding = Encoding(((101, 7, 102),), (1,), (1,))
    with pytest.raises(AttributeError):
        encoding.first = (0,)


def test_one_relation_per_pair_of_mentions_and_symmetric_ones_in_text_order():
    from kg.extract.entities.model import decode_relations

    found = [(0, 1, "USED-FOR", 0.6), (1, 0, "PART-OF", 0.9), (3, 2, "COMPARE", 0.8), (2, 4, "CONJUNCTION", 0.7),
             (4, 2, "USED-FOR", 0.5)]
    assert decode_relations(found) == [(1, 0, "PART-OF", 0.9), (2, 3, "COMPARE", 0.8), (2, 4, "CONJUNCTION", 0.7)]
    assert decode_relations([]) == []


def test_hostile_texts_give_entities_in_their_own_offsets():
    from kg.extract.entities import find_entities

    texts = ["\ud800 graph neural networks for parsing", "\x00\x01 nulls", "😀 emoji models 😀", "", "   ", "(((((",
             "שלום עולם deep learning", "a" * 20_000]
    found = find_entities(texts)
    assert len(found) == len(texts) and found[3].entities == () and found[4].entities == ()
    for text, paper in zip(texts, found):
        for e in paper.entities:
            assert text[e.start:e.end] == e.text
        for r in paper.relations:
            assert 0 <= r.head < len(paper.entities) and 0 <= r.tail < len(paper.entities)
