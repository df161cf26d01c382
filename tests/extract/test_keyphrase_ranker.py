"""The learned keyphrase ranking: its features, the shipped trees, their reading and their errors."""

import hashlib
import json
from dataclasses import asdict

import numpy as np
import pytest

from kg.errors import KGError, ModelError
from kg.extract.keyphrases import EXTRACTOR_VERSION, SPACY_MODEL, Candidate, Scored, Settings, Tagged, extract_keyphrases
from kg.extract.ranking import (
    ENTITY_FEATURES,
    ENTITY_RANKER_FEATURES,
    FEATURES,
    entity_features,
    export_trees,
    features,
    learned_relevance,
    load_ranker,
    model_path,
    read_ranker,
)


def _tagged(text, phrases, definitions=()):
    lower = text.lower()
    candidates = tuple(Candidate(p, len(lower[: lower.find(p.lower())].split())) for p in phrases)
    sentences = tuple(s.strip() + "." for s in text.split(".") if s.strip())
    return Tagged("p", text, tuple(definitions), candidates, sentences, len(text.split()))


def _column(x, name):
    return x[:, FEATURES.index(name)]


def test_features_read_nesting_acronyms_definitions_and_repetition():
    text = ("Graph neural networks for molecules. We train graph neural networks and GNN ensembles on molecular graphs; "
            "graph neural networks scale.")
    phrases = ("graph neural networks", "neural networks", "GNN ensembles", "molecules", "GNN")
    tagged = _tagged(text, phrases, definitions=(("GNN", "graph neural networks"),))
    scored = Scored(phrases, np.array([0.6, 0.5, 0.4, 0.3, 0.2], dtype=np.float32), np.eye(5, dtype=np.float32))
    x = features(tagged, scored)
    assert x.shape == (5, len(FEATURES)) and x.dtype == np.float32
    assert list(_column(x, "cosine_rank")) == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert _column(x, "cosine_gap")[0] == 0 and _column(x, "cosine_gap")[4] == pytest.approx(0.4)
    # "neural networks" sits inside "graph neural networks"; "GNN" inside "GNN ensembles"
    assert np.expm1(_column(x, "inside")).round().tolist() == [0, 1, 0, 0, 1]
    assert np.expm1(_column(x, "holds")).round().tolist() == [1, 0, 1, 0, 0]
    assert _column(x, "acronym").tolist() == [0, 0, 0, 0, 1]
    assert _column(x, "with_acronym").tolist() == [0, 0, 1, 0, 0]
    assert _column(x, "defined").tolist() == [1, 0, 0, 0, 0]
    assert _column(x, "defines").tolist() == [0, 0, 0, 0, 1]
    assert _column(x, "first_sentence").tolist() == [1, 1, 0, 1, 0]
    # three whole uses of the long form and one of its acronym (and three of the phrase inside it); a word counts one
    assert np.exp(_column(x, "occurrences")).round().tolist() == [4, 3, 1, 1, 1]
    assert _column(x, "words").tolist() == [3, 2, 2, 1, 1]
    assert _column(x, "head_share")[0] == pytest.approx(2 / 5)  # "networks" ends two of five


def test_no_candidates_no_rows():
    tagged = _tagged("Nothing here.", ())
    assert features(tagged, Scored((), np.zeros(0, np.float32), np.zeros((0, 3), np.float32))).shape == (0, len(FEATURES))


def _fitted(seed=0, rows=4000, width=len(FEATURES)):
    from sklearn.ensemble import HistGradientBoostingClassifier

    rng = np.random.default_rng(seed)
    x = rng.random((rows, width))
    y = (x[:, 0] + 0.5 * x[:, 5] + rng.normal(0, 0.2, rows) > 0.9).astype(int)
    x[::13, 3] = np.nan  # missing values go the way the trees learned
    return HistGradientBoostingClassifier(max_iter=30, random_state=0, early_stopping=False).fit(x, y), rng


def _write(tmp_path, data, name="ranker.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_the_trees_read_back_give_scikit_learns_probabilities(tmp_path):
    model, rng = _fitted()
    ranker = read_ranker(_write(tmp_path, export_trees(model, 2.0, {})))
    x = rng.random((500, len(FEATURES)))
    x[::7, 3] = np.nan
    assert np.abs(ranker.probability(x) - model.predict_proba(x)[:, 1]).max() < 1e-6
    assert np.allclose(ranker.relevance(x), 2.0 * ranker.probability(x))


def test_trees_that_read_mentions_and_termhood_read_back_the_same(tmp_path):
    model, rng = _fitted(width=len(ENTITY_RANKER_FEATURES))
    direction = rng.normal(size=8).astype(np.float32)
    ranker = read_ranker(_write(tmp_path, export_trees(model, 2.0, {}, ENTITY_RANKER_FEATURES, (direction, 0.25))))
    assert ranker.features == ENTITY_RANKER_FEATURES and np.allclose(ranker.direction, direction) and ranker.offset == 0.25
    x = rng.random((300, len(ENTITY_RANKER_FEATURES)))
    assert np.abs(ranker.probability(x) - model.predict_proba(x)[:, 1]).max() < 1e-6
    # the termhood is the candidate's embedding on the direction; missing for vectors of another width
    rows = rng.normal(size=(4, 8)).astype(np.float32)
    assert np.allclose(ranker.termhood(rows), rows @ direction + 0.25, atol=1e-6)
    assert np.isnan(ranker.termhood(rows[:, :5])).all()
    data = export_trees(model, 2.0, {}, ENTITY_RANKER_FEATURES, (direction, 0.25))
    data["termhood"]["direction"][0] = float("nan")
    with pytest.raises(ModelError, match="termhood"):
        read_ranker(_write(tmp_path, data, "bad.json"))
    del data["termhood"]
    with pytest.raises(ModelError, match="termhood"):
        read_ranker(_write(tmp_path, data, "bad.json"))


def test_training_is_repeatable(tmp_path):
    first, _ = _fitted()
    second, _ = _fitted()
    assert json.dumps(export_trees(first, 1.0, {})) == json.dumps(export_trees(second, 1.0, {}))


@pytest.mark.parametrize("entities", [False, True])
def test_the_shipped_rankers_load_and_say_how_they_were_made(entities):
    ranker = load_ranker(entities)
    assert ranker.features == (ENTITY_RANKER_FEATURES if entities else FEATURES)
    assert ranker.scale > 0 and len(ranker.roots) >= 50
    assert (ranker.direction is not None and len(ranker.direction) == 384) == entities  # all-MiniLM-L6-v2's width
    about = json.loads(model_path(entities).read_text())["about"]
    assert about["command"] == "python -m benchmarks.ranker --train" and isinstance(about["seed"], int)
    assert set(about["training"]) == {"ml-train", "semeval-train", "scierc-train"}
    # each training set weighs the same; every set brought keyphrases
    assert all(t["keyphrases"] > 0 for t in about["training"].values())
    if entities:  # the mentions of the split the entity model learned from are not evidence it learned from
        from kg.extract.entities import entity_fingerprint

        assert about["mentions_left_out"] == ["scierc-train"] and about["entity_extractor"] == entity_fingerprint()


@pytest.mark.parametrize("entities", [False, True])
def test_the_shipped_rankers_are_the_ones_their_figures_describe(entities):
    """benchmarks/README.md names the sha256 of the rankers its figures were measured with."""
    from pathlib import Path

    path = model_path(entities)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    readme = (Path(__file__).resolve().parents[2] / "benchmarks" / "README.md").read_text()
    assert f"{path.name} sha256 {digest[:16]}" in readme


def test_entity_features_read_the_mentions_of_the_candidates_key():
    phrases = ("graph neural networks", "neural networks", "molecules", "message passing")
    mentions = (("Graph Neural Network", "Method", 0.9), ("graph neural networks", "Method", 0.7),
                ("molecular property prediction", "Task", 0.8), ("message passing neural networks", "Method", 0.6))
    x = entity_features(phrases, mentions)
    assert x.shape == (4, len(ENTITY_FEATURES))
    column = {name: x[:, i].tolist() for i, name in enumerate(ENTITY_FEATURES)}
    # a mention with the candidate's key (singular and case aside): its best score and its type; both uses counted
    assert column["mention_score"] == pytest.approx([0.9, 0, 0, 0])
    assert np.expm1(column["mentions"]).round().tolist() == [2, 0, 0, 0]
    assert column["type_Method"] == [1, 0, 0, 0] and column["type_Task"] == [0, 0, 0, 0]
    # no mention of its own, but inside one: "neural networks", "message passing"; "molecules" in none
    assert column["mention_overlap"] == [0, 1, 0, 1]
    assert not entity_features(phrases, ()).any()


def test_the_mentions_add_their_features_and_choose_the_trees_that_read_them():
    text = "Graph neural networks for molecules. We train graph neural networks on molecular graphs."
    phrases = ("graph neural networks", "molecules", "molecular graphs")
    scored = Scored(phrases, np.array([0.6, 0.4, 0.5], dtype=np.float32), np.eye(3, dtype=np.float32))
    plain = _tagged(text, phrases)

    def given(mentions):
        return Tagged(*[getattr(plain, f) for f in ("paper_id", "text", "definitions", "candidates", "sentences", "tokens")],
                      mentions=mentions)

    known, none_found = given((("graph neural networks", "Method", 0.95),)), given(())
    assert features(plain, scored).shape == (3, len(FEATURES))
    x = features(known, scored)
    assert x.shape == (3, len(FEATURES) + len(ENTITY_FEATURES)) and np.array_equal(x[:, :len(FEATURES)], features(plain, scored))
    trees = load_ranker(entities=True)
    assert np.isnan(trees.features_of(known, scored)[:, -1]).all()  # (the test's 3-wide vectors: no termhood)
    without, with_mention, no_mention = learned_relevance([plain, known, none_found], [scored] * 3)
    assert np.allclose(without, load_ranker().relevance(features(plain, scored)))
    assert np.allclose(with_mention, trees.relevance(trees.features_of(known, scored)))
    # a method the entity model is sure of ranks higher than the same candidate where the model found nothing
    assert with_mention[0] > no_mention[0] and np.allclose(with_mention[1:], no_mention[1:])


@pytest.mark.parametrize("damage, message", [
    (lambda d: "{not json", "not a keyphrase ranker"),
    (lambda d: {**d, "format": "other/1"}, "not a kg-ranker/1 file"),
    (lambda d: {**d, "features": d["features"][:-1]}, "retrain it"),
    (lambda d: {**d, "trees": []}, "no trees"),
    (lambda d: {**d, "trees": [{**d["trees"][0], "left": [10**6] * len(d["trees"][0]["left"])}]}, "outside the trees"),
    (lambda d: {**d, "scale": -1}, "finite"),
    (lambda d: {k: v for k, v in d.items() if k != "baseline"}, "baseline"),
])
def test_a_damaged_ranker_is_one_clear_error_naming_the_file(tmp_path, damage, message):
    model, _ = _fitted()
    data = damage(export_trees(model, 1.0, {}))
    path = tmp_path / "bad.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    with pytest.raises(ModelError, match=message) as e:
        read_ranker(path)
    assert str(path) in str(e.value)


def test_a_missing_ranker_is_one_clear_error(tmp_path):
    with pytest.raises(ModelError, match="could not be read"):
        read_ranker(tmp_path / "absent.json")


def test_the_ranking_is_a_setting_and_part_of_the_cache_key():
    with pytest.raises(KGError, match="ranking 'best'"):
        Settings(ranking="best")
    learned, similarity = Settings(), Settings(ranking="similarity")
    assert learned.fingerprint("m") != similarity.fingerprint("m")
    # the learned ranking that reads entity mentions keys on the entity extractor; the similarity ranking reads none
    assert len({learned.fingerprint("m"), learned.fingerprint("m", "entities/5/a"), learned.fingerprint("m", "entities/5/b")}) == 3
    assert similarity.fingerprint("m", "entities/5/a") == similarity.fingerprint("m")
    # the similarity ranking keeps the key it had before there were two rankings: its cached extractions stay valid
    fields = asdict(similarity)
    del fields["ranking"]
    before = json.dumps({"model": "m", "spacy": SPACY_MODEL, "extractor": EXTRACTOR_VERSION, **fields}, sort_keys=True)
    assert similarity.fingerprint("m") == hashlib.sha256(before.encode()).hexdigest()[:16]


def test_both_rankings_extract_from_real_text(hash_embedder, nlp):
    text = ("Graph neural networks (GNN) learn on molecules. A GNN with attention beats message passing on "
            "molecular property prediction, and graph neural networks scale to large molecular graphs.")
    mentions = (("Graph neural networks", "Method", 0.9), ("molecular property prediction", "Task", 0.8))
    for ranking, doc in (("learned", ("a", text)), ("similarity", ("a", text)), ("learned", ("a", text, mentions))):
        (paper,) = extract_keyphrases([doc], hash_embedder, nlp=nlp, settings=Settings(ranking=ranking, top_n=5))
        assert 0 < len(paper.keyphrases) <= 5
        assert [k.rank for k in paper.keyphrases] == list(range(1, len(paper.keyphrases) + 1))


def test_each_ranker_reads_what_it_was_trained_on_whatever_the_document_holds():
    """Trees without mention features ignore mentions; trees with them read them as missing when a document has none."""
    phrases = ("graph neural networks", "molecules")
    scored = Scored(phrases, np.array([0.6, 0.4], dtype=np.float32), np.eye(2, dtype=np.float32))
    plain = _tagged("Graph neural networks for molecules.", phrases)
    known = Tagged(plain.paper_id, plain.text, plain.definitions, plain.candidates, plain.sentences, plain.tokens,
                   mentions=(("graph neural networks", "Method", 0.9),))
    text_trees, entity_trees = load_ranker(), load_ranker(entities=True)
    assert np.array_equal(text_trees.features_of(known, scored), text_trees.features_of(plain, scored))
    assert np.isnan(entity_trees.features_of(plain, scored)[:, len(FEATURES):]).all()
    (given,) = learned_relevance([known], [scored], ranker=text_trees)
    assert np.allclose(given, text_trees.relevance(features(plain, scored)))
