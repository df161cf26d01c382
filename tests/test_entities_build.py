"""The entity stage inside `kg build` (issue 45): entities.jsonl in offsets of the abstract as
given, concept types and typed relations in the graph and stats.json, the cache, --no-entities,
and the bad inputs (no entity, a 3,000-word abstract, text that is not English, damaged weights).
The real shipped entity model runs; keyphrases use the hashing embedder for speed."""

from __future__ import annotations

import json
import shutil

import pytest

import kg
from kg.errors import ModelError
from kg.graph.io import load_graph

ROWS = [
    {"id": "a", "abstract": "We  propose a graph neural network for node classification and evaluate it on the Cora "
                            "dataset with accuracy.\nOur method outperforms label propagation &amp; GCN."},
    {"id": "b", "abstract": "Graph neural networks are used for node classification. We evaluate graph neural networks "
                            "on the Cora dataset."},
    {"id": "c", "abstract": "No."},  # the model reads "No" as a Metric; no stop word alone is a mention (rules.is_mention)
    {"id": "d", "abstract": "Les réseaux de neurones profonds apprennent des représentations à partir de données brutes."},
    {"id": "e", "abstract": " ".join(["We train a convolutional network for image classification on ImageNet"] * 300) + "."},
]


def write_rows(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def typed_build(tmp_path_factory, hash_embedder, nlp):
    folder = tmp_path_factory.mktemp("typed")
    source = write_rows(folder / "papers.jsonl", ROWS)
    return kg.build([source], folder / "out", embedder=hash_embedder, nlp=nlp, store=False)


def records(out):
    return [json.loads(line) for line in (out / "entities.jsonl").read_text(encoding="utf-8").splitlines()]


def test_entities_jsonl_offsets_point_into_the_abstract_as_given(typed_build):
    by_id = {r["source_id"]: r for r in map(json.loads, (typed_build.out / "keyphrases.jsonl").read_text().splitlines())}
    rows = records(typed_build.out)
    assert [r["id"] for r in rows] == [by_id[r["id"]]["id"] for r in ROWS]  # one per paper, in input order
    abstracts = {by_id[r["id"]]["id"]: r["abstract"] for r in ROWS}
    for row in rows:
        text = abstracts[row["id"]]
        for e in row["entities"]:
            assert text[e["start"]:e["end"]] == e["text"]
            assert e["type"] in {"Task", "Method", "Dataset", "Metric", "Material", "OtherScientificTerm", "Generic"}
        for r in row["relations"]:
            assert 0 <= r["head"] < len(row["entities"]) and 0 <= r["tail"] < len(row["entities"]) and r["head"] != r["tail"]
    first = rows[0]
    texts = {e["text"]: e["type"] for e in first["entities"]}
    assert "Cora dataset" in " ".join(texts) and any(t == "Dataset" for x, t in texts.items() if "Cora" in x)
    assert first["relations"], "the first abstract states relations (a method used for a task, evaluated on a dataset)"


def test_abstracts_with_no_entity_and_long_ones_are_kept(typed_build):
    rows = {r["id"]: r for r in records(typed_build.out)}
    assert len(rows) == len(ROWS)
    ids = {json.loads(line)["source_id"]: json.loads(line)["id"] for line in (typed_build.out / "keyphrases.jsonl").read_text().splitlines()}
    assert rows[ids["c"]]["entities"] == [] and rows[ids["c"]]["relations"] == []
    assert len(rows[ids["e"]]["entities"]) > 100  # 3,000 words read whole, in pieces


def test_concepts_typed_and_related_in_the_graph_and_stats(typed_build):
    G = load_graph(typed_build.out / "graph.json")
    gnn = next(d for n, d in G.nodes(data=True) if d.get("kind") == "concept" and d["key"] == "graph neural network")
    assert gnn["entity_type"] == "Method" and gnn["type_votes"]["Method"] >= 2
    used = [r for r in gnn.get("relations", ()) if r["type"] == "USED-FOR"]
    assert used and G.nodes[used[0]["object"]]["label"].lower().startswith("node classification")
    assert used[0]["papers"] == len(used[0]["evidence"]) >= 1
    for r in used:
        for ev in r["evidence"]:
            abstract = G.nodes[ev["paper"]]["abstract"]
            assert 0 <= ev["start"] < ev["end"] <= len(abstract)
    stats = typed_build.stats["entities"]
    rows = records(typed_build.out)
    assert stats["papers_with_mentions"] == sum(bool(r["entities"]) for r in rows) >= 3
    assert stats["mentions"] == sum(len(r["entities"]) for r in rows) and stats["concepts_by_type"]["Method"] >= 1
    assert stats["concept_relations"] == sum(len(d.get("relations", ())) for _, d in G.nodes(data=True))


def test_cached_entities_are_not_computed_again_and_no_entities_removes_them(tmp_path, hash_embedder, nlp, monkeypatch):
    source = write_rows(tmp_path / "papers.jsonl", ROWS[:2])
    out = tmp_path / "out"
    kg.build([source], out, embedder=hash_embedder, nlp=nlp, store=False)
    before = (out / "entities.jsonl").read_bytes()
    from kg.scale import executor

    def refuse(*args, **kwargs):
        raise AssertionError("entities computed again")

    monkeypatch.setattr(executor, "entity_partition", refuse)
    write_rows(source, ROWS[:2] + [{"id": "x", "abstract": "Short."}] )
    with pytest.raises(AssertionError, match="computed again"):  # the new abstract alone is extracted
        kg.build([source], out, embedder=hash_embedder, nlp=nlp, store=False)
    write_rows(source, ROWS[:2])
    kg.build([source], out, embedder=hash_embedder, nlp=nlp, store=False, cache=True, entities=True)
    assert (out / "entities.jsonl").read_bytes() == before
    result = kg.build([source], out, embedder=hash_embedder, nlp=nlp, store=False, entities=False)
    assert not (out / "entities.jsonl").exists() and "entities" not in result.stats
    assert all("type_votes" not in d for _, d in load_graph(out / "graph.json").nodes(data=True))


def test_the_learned_ranking_reads_the_mentions_a_build_finds(tmp_path, hash_embedder, nlp, monkeypatch):
    """With entities (the default) each document goes to the ranking with its abstract's mentions, as
    entities.jsonl records them; with --no-entities without any; the provenance says which trees ranked."""
    from kg.extract import keyphrases

    seen = {}
    tag = keyphrases.tag_documents

    def recording(items, *args, **kwargs):
        tagged = tag(items, *args, **kwargs)
        seen.update((t.paper_id, t.mentions) for t in tagged)
        return tagged

    monkeypatch.setattr(keyphrases, "tag_documents", recording)
    source = write_rows(tmp_path / "papers.jsonl", ROWS[:2])
    typed = kg.build([source], tmp_path / "typed", embedder=hash_embedder, nlp=nlp, store=False, cache=False)
    rows = [json.loads(line) for line in (tmp_path / "typed" / "entities.jsonl").read_text().splitlines()]
    assert any(row["entities"] for row in rows)
    for row in rows:
        assert [(m[1], m[2]) for m in seen[row["id"]]] == [(e["type"], e["score"]) for e in row["entities"]]
    assert "with typed-entity mentions" in typed.graph.graph["extractor"]
    seen.clear()
    plain = kg.build([source], tmp_path / "plain", embedder=hash_embedder, nlp=nlp, store=False, cache=False, entities=False)
    assert seen and all(m is None for m in seen.values())
    assert "mentions" not in plain.graph.graph["extractor"]


def test_damaged_weights_fail_first_naming_the_file_and_the_command(tmp_path, hash_embedder, nlp, monkeypatch, run_cli):
    from kg.extract.entities import model

    copy = tmp_path / "weights" / "entities.safetensors"
    copy.parent.mkdir()
    shutil.copy(model.weights_path().with_suffix(".json"), copy.with_suffix(".json"))
    copy.write_bytes(model.weights_path().read_bytes()[:1000])
    monkeypatch.setattr(model, "weights_path", lambda: copy)
    source = write_rows(tmp_path / "papers.jsonl", ROWS[:1])
    with pytest.raises(ModelError, match="python -m kg.extract.entities.train") as e:
        kg.build([source], tmp_path / "out", embedder=hash_embedder, nlp=nlp, store=False)
    assert str(copy) in str(e.value) and not (tmp_path / "out").exists()
    run = run_cli("build", str(source), "--out", str(tmp_path / "out"), "-q")
    assert run.code == 3 and "entities.safetensors" in run.err and "Traceback" not in run.err
    copy.unlink()
    run = run_cli("build", str(source), "--out", str(tmp_path / "out"), "-q")
    assert run.code == 3 and "missing" in run.err
    run = run_cli("build", str(source), "--out", str(tmp_path / "out"), "-q", "--no-entities")
    assert run.code == 0 and not (tmp_path / "out" / "entities.jsonl").exists()


def test_kg_stats_counts_the_typed_concepts_and_relations(typed_build, run_cli):
    figures = kg.stats(typed_build.out)
    assert figures["entities"]["concepts_by_type"] == typed_build.stats["entities"]["concepts_by_type"]
    run = run_cli("stats", "--graph", str(typed_build.out))
    assert run.code == 0 and "concepts by type: " in run.out and "Method " in run.out
    assert "typed relations between concepts: " in run.out
