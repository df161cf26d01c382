"""kg's concept merge on the labelled pairs of tests/data/concept_pairs.tsv, with the real model.

Each pair is merged in a corpus of its own: a paper with label a, a paper with label b, and a
paper that makes the pair's acronym definitions (column ``defines``), as another abstract of a
real corpus would. Precision must stay >= 0.95; recall is recorded and must not fall below a
floor a little under what was measured (docs/model.md has the figures and the threshold curve).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from kg.concepts.merge import merge_concepts
from kg.concepts.variants import near_duplicate_candidates, variant_groups
from kg.evaluation.concept_pairs import memoized, read_pairs, score_pairs, split_pairs

PAIRS = Path(__file__).resolve().parents[1] / "data" / "concept_pairs.tsv"
RECALL_FLOOR = {"all": 0.65, "test": 0.63}  # measured 0.676 and 0.667 at the chosen thresholds (596 pairs)


@pytest.fixture(scope="module")
def pairs():
    return read_pairs(PAIRS)


@pytest.fixture(scope="module")
def embed(real_embedder):
    return memoized(real_embedder.embed)


def test_the_list_is_large_balanced_and_has_the_issue_negatives(pairs):
    assert len(pairs) >= 500
    counts = Counter((p.same, p.source) for p in pairs)
    assert all(counts[(same, source)] >= 25 for same in (True, False) for source in ("seeds", "ml")), counts
    labelled = {(p.a, p.b): p.same for p in pairs}
    for a, b in [("adversarial training", "adversarial attacks"), ("federated learning", "federated adversarial learning"),
                 ("gradient descent", "gradient clipping")]:
        assert labelled[(a, b)] is False
    assert len({(p.a, p.b) for p in pairs}) == len(pairs)


@pytest.mark.parametrize("part", ["all", "test"])
def test_merge_precision_and_recall(pairs, embed, part, record_property):
    chosen = pairs if part == "all" else split_pairs(pairs)[1]
    scores = score_pairs(chosen, embed=embed)
    record_property("precision", round(scores.precision, 3))
    record_property("recall", round(scores.recall, 3))
    print(f"{part}: {len(chosen)} pairs, precision {scores.precision:.3f}, recall {scores.recall:.3f}")
    assert scores.precision >= 0.95, [(p.a, p.b) for p in scores.false_merges]
    assert scores.recall >= RECALL_FLOOR[part], [(p.a, p.b) for p in scores.missed]


def test_hard_negatives_stay_apart_with_the_model(embed):
    for a, b in [("upper bound", "lower bound"), ("faster convergence rate", "slower convergence rate"),
                 ("linear function", "linear functional"), ("downstream use", "downstream user"),
                 ("text-to-image generation", "image-to-text generation"), ("l1 regularization", "l2 regularization")]:
        index = merge_concepts([("a", [a], ()), ("b", [b], ())], embed=embed)
        assert index.assignment[("a", a)] != index.assignment[("b", b)], (a, b)


def test_near_duplicates_join_one_concept_with_every_form_kept(embed):
    index = merge_concepts([
        ("p1", ["graph convolutional networks", "fine-tuning"], ()),
        ("p2", ["graph convolution network", "finetuning"], ()),
        ("p3", ["graph neural networks (GNNs)"], [("GNNs", "graph neural networks")]),
        ("p4", ["GNN"], ()),
    ], embed=embed)
    a, by_id = index.assignment, index.by_id()
    gcn = by_id[a[("p1", "graph convolutional networks")]]
    assert a[("p2", "graph convolution network")] == gcn.id and set(gcn.papers) == {"p1", "p2"}
    assert {"graph convolutional networks", "graph convolution network"} <= {gcn.label, *gcn.alt_labels}
    assert a[("p1", "fine-tuning")] == a[("p2", "finetuning")]
    assert a[("p3", "graph neural networks (GNNs)")] == a[("p4", "GNN")]
    assert by_id[a[("p4", "GNN")]].key == "graph neural network"


def test_without_a_model_only_spacing_variants_merge():
    assert variant_groups(["data set", "dataset", "deep net", "deep network"]) == [{"data set", "dataset"}]
    assert near_duplicate_candidates(["deep net", "deep network"]) == [("deep net", "deep network")]


def test_candidates_among_many_keys_pair_only_the_near_duplicates():
    """50,000 keys (25,000 pairs that differ in one form of a word): every pair found, no other."""
    keys = [f"w{i % 997} w{i // 997} {s}" for i in range(25_000) for s in ("network", "net")]
    found = near_duplicate_candidates(keys)
    assert sorted(found) == sorted((k.removesuffix(" network") + " net", k) for k in keys[::2])
