"""The keyphrase evaluator (kg.evaluation.keyphrases) on hand-computed cases, its gold reader, and `kg eval`.

Every expected number below is worked out by hand in the comments next to it.
"""

from __future__ import annotations

import json
from fractions import Fraction as F

import pytest

from kg.errors import InputError
from kg.evaluation.keyphrases import (
    GoldDoc,
    document_text,
    eval_command,
    evaluate,
    kg_extractor,
    read_gold,
    stem_phrase,
)


def close(result, expected):
    assert result == pytest.approx(float(expected), abs=1e-12)


# --- stemming ------------------------------------------------------------------------------------


def test_stemming_lowercases_and_stems_each_whitespace_token():
    assert stem_phrase("Neural  Networks") == "neural network"
    assert stem_phrase("models") == stem_phrase("Model") == "model"
    assert stem_phrase("Learning Models") == stem_phrase("learning model") == "learn model"
    assert stem_phrase("state-of-the-art") == "state-of-the-art"  # split on whitespace only, as the published scripts
    assert stem_phrase("   ") == ""


# --- evaluate: three tiny documents, k = 1, 2, 5 ------------------------------------------------

PREDICTIONS = [
    # stems: [neural model, graph learn, other thing]: "Neural Models" is "neural model" again and is dropped
    ["neural model", "Neural Models", "graph learning", "other thing"],
    # no predictions at all
    [],
    # stems: [data, cluster, graph, tree, forest, lake]
    ["data", "clustering", "graphs", "trees", "forests", "lakes"],
]
GOLD = [
    ["neural models", "graph learning", "absent phrase"],  # 3 gold, one absent from every prediction
    ["support vector machines", "kernels"],  # 2 gold, never predicted: they still count in recall
    ["clustering"],  # 1 gold
]


def test_micro_scores_by_hand():
    micro = evaluate(PREDICTIONS, GOLD, ks=(1, 2, 5))["micro"]
    # k=1: correct 1+0+0 = 1, predicted 1+0+1 = 2, gold 3+2+1 = 6 -> P 1/2, R 1/6, F1 = (2·1/2·1/6)/(1/2+1/6) = 1/4
    close(micro[1]["precision"], F(1, 2))
    close(micro[1]["recall"], F(1, 6))
    close(micro[1]["f1"], F(1, 4))
    # k=2: correct 2+0+1 = 3, predicted 2+0+2 = 4 -> P 3/4, R 3/6, F1 = (2·3/4·1/2)/(5/4) = 3/5
    close(micro[2]["precision"], F(3, 4))
    close(micro[2]["recall"], F(1, 2))
    close(micro[2]["f1"], F(3, 5))
    # k=5 is more than doc 1's 3 distinct predictions: its denominator is 3, not 5.
    # correct 2+0+1 = 3, predicted 3+0+5 = 8 -> P 3/8, R 1/2, F1 = (2·3/8·1/2)/(7/8) = 3/7
    close(micro[5]["precision"], F(3, 8))
    close(micro[5]["recall"], F(1, 2))
    close(micro[5]["f1"], F(3, 7))


def test_macro_scores_by_hand():
    result = evaluate(PREDICTIONS, GOLD, ks=(1, 2, 5))
    assert result["documents"] == 3 and result["gold"] == 6
    macro = result["macro"]
    # k=1: P per doc 1, 0 (no predictions), 0; R 1/3, 0, 0; F1 1/2, 0, 0
    close(macro[1]["precision"], F(1, 3))
    close(macro[1]["recall"], F(1, 9))
    close(macro[1]["f1"], F(1, 6))
    # k=2: P 1, 0, 1/2; R 2/3, 0, 1; F1 4/5, 0, 2/3 -> mean F1 (4/5 + 2/3)/3 = 22/45
    close(macro[2]["precision"], F(1, 2))
    close(macro[2]["recall"], F(5, 9))
    close(macro[2]["f1"], F(22, 45))
    # k=5: P 2/3 (of 3), 0, 1/5; R 2/3, 0, 1; F1 2/3, 0, 1/3 -> mean 1/3
    close(macro[5]["precision"], F(13, 45))
    close(macro[5]["recall"], F(5, 9))
    close(macro[5]["f1"], F(1, 3))


def test_duplicates_after_stemming_are_dropped_before_the_cut_at_k():
    # stems [model, graph]: "models" does not take the second slot, so "graph" is in the top 2
    result = evaluate([["model", "models", "graph"]], [["graph"]], ks=(2,))
    close(result["micro"][2]["precision"], F(1, 2))
    close(result["micro"][2]["recall"], 1)
    # a variant of a correct phrase is never a second hit
    result = evaluate([["neural network", "Neural Networks", "neural networks"]], [["neural networks"]], ks=(3,))
    close(result["micro"][3]["precision"], 1)  # one distinct prediction, one hit
    close(result["micro"][3]["f1"], 1)


def test_gold_is_not_deduplicated_so_every_gold_keyphrase_counts_in_recall():
    # "model" and "models" are two gold keyphrases with one stem: one prediction hits one of them
    result = evaluate([["models"]], [["model", "models"]], ks=(5,))
    assert result["gold"] == 2
    close(result["micro"][5]["precision"], 1)
    close(result["micro"][5]["recall"], F(1, 2))
    close(result["micro"][5]["f1"], F(2, 3))


def test_micro_and_macro_differ_when_documents_have_different_gold_sizes():
    # doc A: 1 gold, hit at rank 1; doc B: 9 gold, its one prediction misses
    gold = [["alpha"], [f"key {i}" for i in range(9)]]
    result = evaluate([["alpha"], ["beta"]], gold, ks=(1,))
    # micro: P 1/2, R 1/10, F1 (2·1/2·1/10)/(6/10) = 1/6;  macro: P (1+0)/2, R (1+0)/2, F1 (1+0)/2
    close(result["micro"][1]["recall"], F(1, 10))
    close(result["micro"][1]["f1"], F(1, 6))
    close(result["macro"][1]["recall"], F(1, 2))
    close(result["macro"][1]["f1"], F(1, 2))


def test_no_predictions_anywhere_scores_zero_without_dividing_by_zero():
    result = evaluate([[], ["   "]], [["a"], ["b"]], ks=(5,))
    assert result["micro"][5] == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert result["macro"][5] == {"precision": 0.0, "recall": 0.0, "f1": 0.0}


def test_bad_evaluation_input_is_refused():
    with pytest.raises(ValueError, match="2 prediction lists for 1 gold documents"):
        evaluate([[], []], [["a"]])
    with pytest.raises(ValueError, match=r"gold document\(s\) \[1\] have no keyphrases"):
        evaluate([["a"], ["b"]], [["a"], []])
    with pytest.raises(ValueError, match="positive integers"):
        evaluate([["a"]], [["a"]], ks=(0,))


# --- reading gold data ---------------------------------------------------------------------------


def write_lines(path, rows):
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_read_gold_takes_every_shape_of_the_bench_data(tmp_path):
    path = write_lines(tmp_path / "gold.jsonl", [
        {"id": "1", "title": "A  title", "abstract": "Some text.", "keyphrases": ["neural  models", " ", "graphs"],
         "keyphrases_controlled": ["x"]},
        "",
        {"id": 7, "title": "Only a title", "abstract": None, "keyphrases": "first key; second key"},
        {"id": "ml-1", "title": "", "abstract": "ML abstract.", "keywords": []},
    ])
    docs = read_gold(path)
    assert docs == [
        GoldDoc("1", "A title", "Some text.", ("neural models", "graphs")),
        GoldDoc("7", "Only a title", "", ("first key", "second key")),
        GoldDoc("ml-1", "", "ML abstract.", ()),
    ]
    with pytest.raises(InputError, match="row 3: no 'keyphrases_controlled' field"):
        read_gold(path, field="keyphrases_controlled")
    other = write_lines(tmp_path / "other.jsonl", [{"id": "1", "abstract": "x", "keyphrases": ["a"], "keyphrases_controlled": ["b"]}])
    assert read_gold(other, field="keyphrases_controlled")[0].keyphrases == ("b",)
    assert docs[0].document == "A title. Some text."
    assert docs[1].document == "Only a title."


def test_read_gold_of_a_hostile_file_is_one_input_error(tmp_path):
    """kg eval reads its gold set as kg build reads abstracts: a regular file (a FIFO is refused,
    not waited on), split at line ends only, a row nested too deep or with a number too long is
    one line naming the row."""
    import os

    os.mkfifo(tmp_path / "pipe.jsonl")
    with pytest.raises(InputError, match=r"pipe\.jsonl: a named pipe \(FIFO\), not a regular file; give kg a \.jsonl file"):
        read_gold(tmp_path / "pipe.jsonl")
    row = json.dumps({"id": "1", "abstract": "Graph\u2028networks.", "keyphrases": ["graph"]}, ensure_ascii=False)
    assert [d.abstract for d in read_gold(write_lines(tmp_path / "sep.jsonl", [row]))] == ["Graph networks."]
    deep = tmp_path / "deep.jsonl"
    deep.write_text(json.dumps({"id": "1", "abstract": "x", "keyphrases": ["a"]}) + "\n" + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(InputError, match=r"deep\.jsonl, row 2: JSON nested too deep to read$"):
        read_gold(deep)
    big = tmp_path / "big.jsonl"
    big.write_text('{"id": ' + "9" * 5000 + ', "abstract": "x", "keyphrases": ["a"]}\n')
    with pytest.raises(InputError, match=r"big\.jsonl, row 1: not valid JSON \(Exceeds the limit"):
        read_gold(big)
    surrogate = tmp_path / "surrogate.jsonl"
    surrogate.write_text('{"id": "1", "abstract": "x", "keyphrases": ["a \\ud800"]}\n')
    with pytest.raises(InputError, match=r"surrogate\.jsonl, row 1: 'keyphrases' holds an escaped unpaired surrogate"):
        read_gold(surrogate)


def test_the_document_is_title_and_abstract_as_kg_reads_a_paper():
    assert document_text("Deep nets", r"We use \emph{Random Reshuffling} ($R^2$).") == "Deep nets. We use Random Reshuffling."
    assert document_text("Why?", "Because.") == "Why? Because."
    assert document_text("", "Just the abstract.") == "Just the abstract."


@pytest.mark.parametrize(
    "row, message",
    [
        ('{"id": "1", "keyphrases": ["a"]', r"row 2: not valid JSON"),
        ('["a", "b"]', r"row 2: expected a JSON object, got list"),
        ('{"id": "1", "abstract": "x"}', r"row 2: no 'keyphrases' or 'keywords' field"),
        ('{"id": "1", "abstract": "x", "keyphrases": 3}', r"row 2: 'keyphrases' must be a list of strings"),
        ('{"id": "1", "abstract": "x", "keyphrases": ["a", null]}', r"row 2: 'keyphrases' item 2 is NoneType"),
        ('{"id": "1", "abstract": ["x"], "keyphrases": ["a"]}', r"row 2: 'abstract' must be a string or null"),
        ('{"id": [1], "abstract": "x", "keyphrases": ["a"]}', r"row 2: 'id' must be a string or an integer"),
    ],
)
def test_read_gold_names_the_row_of_a_malformed_line(tmp_path, row, message):
    path = write_lines(tmp_path / "bad.jsonl", [{"id": "0", "abstract": "fine", "keyphrases": ["ok"]}, row])
    with pytest.raises(InputError, match=message):
        read_gold(path)


def test_read_gold_refuses_missing_and_empty_files(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_gold(tmp_path / "nowhere.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n\n")
    with pytest.raises(InputError, match="no documents"):
        read_gold(tmp_path / "empty.jsonl")
    with pytest.raises(InputError, match=r"no 'authors' field"):
        read_gold(write_lines(tmp_path / "g.jsonl", [{"abstract": "x", "keyphrases": ["a"]}]), field="authors")


# --- kg eval (extractors replaced by fakes: no model) --------------------------------------------


@pytest.fixture
def fake_extractors(monkeypatch):
    import kg.evaluation.keyphrases as ev

    calls = []

    def factory(name, phrases):
        def make(top_n, **_):
            calls.append((name, top_n))
            return lambda docs: [list(phrases)[:top_n] for _ in docs]

        return make

    monkeypatch.setitem(ev.EXTRACTORS, "kg", factory("kg", ["graph neural networks", "molecules", "noise"]))
    monkeypatch.setitem(ev.EXTRACTORS, "keybert", factory("keybert", ["noise"]))
    monkeypatch.setitem(ev.EXTRACTORS, "yake", factory("yake", []))
    return calls


def run_eval_cli(args):
    from click.testing import CliRunner

    return CliRunner().invoke(eval_command, args, catch_exceptions=False)


def test_kg_eval_prints_one_row_per_extractor(tmp_path, fake_extractors):
    data = write_lines(tmp_path / "d.jsonl", [
        {"id": "1", "title": "GNNs", "abstract": "Graph neural networks for molecules.", "keyphrases": ["graph neural network", "molecule"]},
        {"id": "2", "title": "Other", "abstract": "Nothing here.", "keyphrases": []},
    ])
    result = run_eval_cli(["--k", "1", "2", str(data), "--baseline", "yake", "keybert"])
    assert result.exit_code == 0, result.output
    assert fake_extractors == [("kg", 2), ("yake", 2), ("keybert", 2)]
    lines = result.stdout.splitlines()
    assert lines[0] == f"{data}: 1 documents, scores in %"
    assert lines[1].split()[:9] == ["extractor", "docs", "docs/s", "micro", "P@1", "micro", "R@1", "micro", "F1@1"]
    kg_row = lines[3].split()
    # kg: k=1 P 1, R 1/2, F1 2/3; k=2 P 1, R 1, F1 1 (micro = macro with one document)
    assert kg_row[:2] == ["kg", "1"] and kg_row[3:9] == ["100.00", "50.00", "66.67", "100.00", "100.00", "100.00"]
    assert [line.split()[0] for line in lines[3:]] == ["kg", "yake", "keybert"]
    assert "1 of 2 documents have no gold keyphrases" in result.stderr


def test_kg_eval_json_and_limit(tmp_path, fake_extractors):
    rows = [{"id": str(i), "abstract": "Graph neural networks.", "keyphrases": ["noise"]} for i in range(5)]
    data = write_lines(tmp_path / "d.jsonl", rows)
    result = run_eval_cli([str(data), "--limit", "3", "--format", "json", "--baseline", "keybert"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["documents"] == 3 and out["ks"] == [5, 10, 15]
    kg, keybert = out["results"]
    assert kg["extractor"] == "kg" and kg["documents"] == 3
    # kg predicts 3 phrases, the third ("noise") is the one gold keyphrase: P@5 1/3, R@5 1
    assert kg["micro"]["5"] == {"precision": 33.33, "recall": 100.0, "f1": 50.0}
    assert keybert["micro"]["5"] == {"precision": 100.0, "recall": 100.0, "f1": 100.0}


def test_kg_eval_values_after_one_flag_stop_at_the_first_that_is_not_one(tmp_path, fake_extractors):
    data = write_lines(tmp_path / "d.jsonl", [{"abstract": "Graph neural networks.", "keyphrases": ["noise"]}])
    result = run_eval_cli(["--k=3", "1", "--format", "json", "--baseline", "keybert", str(data), "--k", "2"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["ks"] == [1, 2, 3]
    assert fake_extractors == [("kg", 3), ("keybert", 3)]  # (extractor, the largest k)
    assert run_eval_cli(["--k", "1", "--", "2", str(data)]).exit_code == 2  # "--" ends the values: two DATASETs


def test_kg_eval_usage_errors(tmp_path, fake_extractors):
    data = write_lines(tmp_path / "d.jsonl", [{"abstract": "x", "keyphrases": ["a"]}])
    assert run_eval_cli([str(data), "--baseline", "rake"]).exit_code == 2
    assert run_eval_cli([str(data), "--k", "0"]).exit_code == 2
    with pytest.raises(InputError, match="no such file"):
        run_eval_cli([str(tmp_path / "missing.jsonl")])


def test_kg_eval_input_errors_exit_2_through_the_command_line(run_cli, tmp_path):
    result = run_cli("eval", str(tmp_path / "missing.jsonl"))
    assert result.code == 2 and "missing.jsonl: no such file" in result.err
    bad = write_lines(tmp_path / "bad.jsonl", [{"abstract": "x", "keyphrases": ["a"]}, "{oops"])
    result = run_cli("eval", str(bad))
    assert result.code == 2 and "bad.jsonl, row 2: not valid JSON" in result.err


# --- the real extractor ---------------------------------------------------------------------------


@pytest.mark.model
def test_kg_extractor_ranks_keyphrases_of_short_documents(default_embedder, nlp):
    docs = [
        GoldDoc("a", "Graph neural networks for molecular property prediction",
                "We train graph neural networks on molecular graphs to predict molecular properties such as "
                "solubility and toxicity.", ("graph neural networks", "molecular property prediction")),
        GoldDoc("b", "Protein structure prediction with sparse attention",
                "Protein structure prediction needs long-range contacts. A sparse attention mechanism over amino acid "
                "sequences predicts contact maps at a fraction of the memory cost.", ("protein structure prediction", "sparse attention")),
    ]
    ranked = kg_extractor(5, embedder=default_embedder, nlp=nlp)(docs)
    assert len(ranked) == 2
    for phrases in ranked:
        assert 1 <= len(phrases) <= 5 and all(isinstance(p, str) and p for p in phrases)
        assert len({stem_phrase(p) for p in phrases}) == len(phrases)
    assert "graph neural networks" in [p.lower() for p in ranked[0]]
    assert "protein structure prediction" in [p.lower() for p in ranked[1]]
    scores = evaluate(ranked, [d.keyphrases for d in docs], ks=(5,))
    assert scores["micro"][5]["recall"] >= 0.5


def test_kg_extractor_ranks_with_the_abstracts_mentions_as_a_build_does(hash_embedder, nlp, monkeypatch):
    """kg eval scores the ranking kg build uses: with the entity model's mentions of each abstract, or, with
    --no-entities (or the similarity ranking), without any."""
    from kg.extract import keyphrases

    seen = []
    tag = keyphrases.tag_documents

    def recording(items, *args, **kwargs):
        tagged = tag(items, *args, **kwargs)
        seen.extend(t.mentions for t in tagged)
        return tagged

    monkeypatch.setattr(keyphrases, "tag_documents", recording)
    docs = [GoldDoc("a", "Graph neural networks for molecules",
                    "We propose a graph neural network for node classification and evaluate it on the Cora dataset.",
                    ("graph neural networks",))]
    kg_extractor(5, embedder=hash_embedder, nlp=nlp)(docs)
    assert seen[0] and all(len(m) == 3 for m in seen[0]) and {m[1] for m in seen[0]} & {"Method", "Task", "Dataset"}
    for options in ({"entities": False}, {"settings": keyphrases.Settings(ranking="similarity")}):
        seen.clear()
        kg_extractor(5, embedder=hash_embedder, nlp=nlp, **options)(docs)
        assert seen == [None]
