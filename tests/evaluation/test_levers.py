"""benchmarks.levers ranks variants from recorded model answers: the replay must be exactly kg's extraction."""

from dataclasses import replace

from benchmarks.levers import KS, Recorded, micro_f1, per_document, rank
from kg.evaluation.keyphrases import evaluate
from kg.extract.keyphrases import Settings, extract_keyphrases, rank_tagged, tag_documents

DOCS = [
    ("a", "Graph neural networks (GNN) learn on molecules. A GNN with attention beats message passing on molecular property prediction."),
    ("b", "We study sparse attention kernels for long documents; sparse attention kernels cut memory traffic on accelerators."),
    ("c", "Federated adversarial learning (FAL) trains robust models across clients without sharing data."),
]
GOLD = [["graph neural networks", "molecular property prediction"], ["sparse attention"], ["federated adversarial learning", "robustness"]]


def test_variants_ranked_from_recorded_answers_equal_kgs_own_extraction(hash_embedder, nlp):
    settings = Settings(top_n=max(KS))
    tagged = tag_documents(DOCS, nlp, settings)
    recorder = Recorded(hash_embedder)
    rank_tagged(tagged, recorder, settings, {})
    recorded = {"tagged": {"set": tagged}, "vectors": recorder.vectors, "tokens": recorder.tokens, "max_tokens": recorder.max_tokens}
    for variant in (settings, replace(settings, frequency_weight=0.0), replace(settings, diversity=0.6, position_weight=0.3)):
        live = [[k.phrase for k in p.keyphrases] for p in extract_keyphrases(DOCS, hash_embedder, nlp=nlp, settings=variant)]
        assert rank(recorded, "set", variant) == live
    predictions = rank(recorded, "set", settings)
    rows = per_document(predictions, GOLD)
    for i, k in enumerate(KS):
        assert abs(micro_f1(rows, i) - 100 * evaluate(predictions, GOLD, ks=KS)["micro"][k]["f1"]) < 1e-9
    assert micro_f1(rows) > 0  # the gold is findable: a count of zero would make the equality above trivial
