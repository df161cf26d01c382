"""Acronyms: what abstracts define (`kg.text.acronyms`), and what the merge makes of it.

Every acronym the corpus defines is an alternative label of its long form's concept, whether or not
the acronym alone was extracted; an acronym defined two ways stays ambiguous; and text that only
looks like a definition (one letter, a definition inside another parenthesis, two definitions of one
acronym in one abstract) makes no wrong merge.
"""

from __future__ import annotations

from kg.concepts.merge import merge_concepts
from kg.text.acronyms import definition_pairs, find_definitions, strip_definitions


def concept_of(index, paper, phrase):
    return index.by_id()[index.assignment[(paper, phrase)]]


def test_a_defined_acronym_is_an_alt_label_of_its_long_form_even_unextracted():
    text = "Federated Adversarial Learning (FAL) enhances robustness. We analyze FAL generalization."
    defs = sorted(find_definitions(text).items())
    assert defs == [("FAL", "Federated Adversarial Learning")]
    index = merge_concepts([
        ("p1", ["federated adversarial learning", "FAL generalization"], defs),
        ("p2", ["federated learning"], []),
    ])
    fal = concept_of(index, "p1", "federated adversarial learning")
    assert "FAL" in fal.alt_labels and fal.label == "federated adversarial learning"
    assert "FAL" not in concept_of(index, "p2", "federated learning").alt_labels
    assert concept_of(index, "p1", "FAL generalization").key == "federated adversarial learning generalization"


def test_the_alt_label_reaches_the_concept_its_long_form_merged_into():
    index = merge_concepts([
        ("p1", ["graph neural networks"], [("GNNs", "Graph Neural Networks")]),
        ("p2", ["graph neural network"], []),
    ])
    assert "GNNs" in concept_of(index, "p2", "graph neural network").alt_labels


def test_an_acronym_defined_two_ways_stays_ambiguous_and_labels_both():
    index = merge_concepts([
        ("p1", ["sharpness-aware minimization"], [("SAM", "sharpness-aware minimization")]),
        ("p2", ["segment anything model"], [("SAM", "segment anything model")]),
        ("p3", ["SAM"], []),
    ])
    alone = concept_of(index, "p3", "SAM")
    assert alone.key == "sam" and alone.papers == ("p3",)
    assert "SAM" in concept_of(index, "p1", "sharpness-aware minimization").alt_labels
    assert "SAM" in concept_of(index, "p2", "segment anything model").alt_labels


def test_one_letter_parentheses_define_nothing():
    text = ("We show (a) that stochastic gradient descent (i) converges and (ii) generalizes, (A) in theory "
            "and (B) in practice, for deep networks (DN).")
    assert find_definitions(text) == {"DN": "deep networks"}
    index = merge_concepts([("p1", ["stochastic gradient descent", "deep networks"], sorted(find_definitions(text).items())),
                            ("p2", ["a"], []), ("p3", ["i"], [])])
    assert len({index.assignment[k] for k in index.assignment}) == 4


def test_a_definition_inside_another_parenthesis():
    text = ("Message passing models (for example graph neural networks (GNNs)) are strong. "
            "Convolutional networks (CNNs; LeCun et al., 1998) and vision transformers (ViTs, Dosovitskiy 2021) "
            "see images (see support vector machines (SVMs) (Vapnik, 1995)).")
    assert find_definitions(text) == {"GNNs": "graph neural networks", "CNNs": "Convolutional networks",
                                      "ViTs": "vision transformers", "SVMs": "support vector machines"}
    assert strip_definitions("vision transformers (ViTs, Dosovitskiy 2021) work", ["ViTs"]) == "vision transformers work"


def test_two_definitions_of_one_acronym_in_one_abstract_define_neither():
    text = ("Policy optimization (PO) under partial observability (PO) is hard. "
            "Large language models (LLMs) and a large language model (LLM) are the same.")
    assert find_definitions(text) == {"LLMs": "Large language models", "LLM": "large language model"}
    index = merge_concepts([
        ("p1", ["policy optimization", "partial observability", "PO"], definition_pairs(text)),
        ("p2", ["PO methods"], [("PO", "policy optimization")]),
    ])
    a = index.assignment  # p1's own PO is neither (p2's definition does not decide it), p2's is its own
    assert a[("p1", "PO")] not in (a[("p1", "policy optimization")], a[("p1", "partial observability")])
    assert concept_of(index, "p2", "PO methods").key == "policy optimization method"
    assert "PO" in concept_of(index, "p1", "partial observability").alt_labels  # what p1 wrote


def test_an_acronym_used_before_it_is_defined_joins_its_long_form():
    text = "SGD is everywhere. We show that stochastic gradient descent (SGD) generalizes."
    defs = sorted(find_definitions(text).items())
    index = merge_concepts([("p1", ["SGD", "stochastic gradient descent"], defs), ("p2", ["gradient descent"], [])])
    assert index.assignment[("p1", "SGD")] == index.assignment[("p1", "stochastic gradient descent")]
    assert index.assignment[("p2", "gradient descent")] != index.assignment[("p1", "SGD")]


def test_an_acronym_written_before_its_long_form():
    text = "We train with SGD (stochastic gradient descent) and GPT-4 (OpenAI, 2023) and Adam (Kingma and Ba)."
    assert find_definitions(text) == {"SGD": "stochastic gradient descent"}
    assert strip_definitions(text, find_definitions(text)).startswith("We train with stochastic gradient descent and GPT-4")
