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


def test_a_citation_or_year_in_parentheses_defines_nothing():
    from kg.text.clean import clean_text

    text = ("Graph networks (Smith et al., 2020) and message passing (2019) learn on molecules (Gilmer and Lee, 2017), "
            "and graph kernels (GK; Vishwanathan et al., 2010) compare them.")
    assert find_definitions(text) == {"GK": "graph kernels"}
    assert find_definitions(clean_text(text)) == {"GK": "graph kernels"}
    index = merge_concepts([("p1", ["graph networks", "message passing", "graph kernels"], definition_pairs(text)),
                            ("p2", ["SE"], [])])
    assert len(set(index.assignment.values())) == 4


def test_a_list_marker_before_a_long_form_defines_nothing():
    text = "We study (a) graph kernels and (i) random walks (RWs), and (b) spectral methods (SM)."
    assert find_definitions(text) == {"RWs": "random walks", "SM": "spectral methods"}


def test_an_english_word_in_capitals_takes_no_other_papers_long_form():
    index = merge_concepts([
        ("p1", ["uncertainty sampling"], [("US", "uncertainty sampling")]),
        ("p2", ["information technology"], [("IT", "information technology")]),
        ("p3", ["active lifelong learning"], [("ALL", "active lifelong learning")]),
        ("p4", ["US economy", "IT budgets", "ALL"], []),
        ("p5", ["US"], [("US", "uncertainty sampling")]),  # its own definition still counts
    ])
    assert {concept_of(index, "p4", p).key for p in ("US economy", "IT budgets", "ALL")} == {"us economy", "it budget", "all"}
    assert concept_of(index, "p5", "US").key == "uncertainty sampling"


def test_a_title_in_capitals_is_not_read_as_acronyms(nlp, hash_embedder):
    from kg.extract.keyphrases import extract_keyphrases
    from kg.text.papers import Paper, uncapitalized

    assert uncapitalized("ALL YOU NEED FOR IT SUPPORT WITH BERT", "We fine-tune BERT.") == "all you need for it support with BERT"
    assert uncapitalized("BERT for IT Support", "") == "BERT for IT Support"
    papers = [Paper("t1", "We route support tickets with transformers.", "We route support tickets with transformers.",
                    title="ALL YOU NEED IS ATTENTION: TRANSFORMERS FOR IT SUPPORT IN THE US"),
              Paper("d1", "Information technology (IT) costs grow. IT support is a field.", "Information technology (IT) costs grow. IT support is a field."),
              Paper("d2", "Uncertainty sampling (US) picks queries; US is cheap.", "Uncertainty sampling (US) picks queries; US is cheap.")]
    found = extract_keyphrases([(p.id, p.document) for p in papers], hash_embedder, nlp=nlp)
    index = merge_concepts([(f.paper_id, [k.phrase for k in f.keyphrases], f.definitions) for f in found])
    title_keys = {c.key for c in index.concepts if "t1" in c.papers}
    assert not title_keys & {"information technology support", "uncertainty sampling", "information technology"}


def test_an_acronym_whose_letter_is_inside_its_first_word_is_defined():
    # XAI: the X of "eXplainable" (a capital the writer set) or of a word opening with "ex"
    assert find_definitions("We review eXplainable AI (XAI) methods.") == {"XAI": "eXplainable AI"}
    assert find_definitions("explainable artificial intelligence (XAI) helps.") == {"XAI": "explainable artificial intelligence"}
    index = merge_concepts([("p1", ["eXplainable AI", "XAI methods"], [("XAI", "eXplainable AI")]), ("p2", ["explainable AI"], [])])
    assert index.assignment[("p1", "eXplainable AI")] == index.assignment[("p2", "explainable AI")]
    assert concept_of(index, "p1", "XAI methods").key == "explainable ai method"
    # a lower-case letter inside a word is no start ("circle" does not spell RL)
    assert find_definitions("a circle (RL) of points") == {}


def test_a_parenthesis_listing_names_defines_none_of_them():
    # "(ImageNet, CIFAR etc)" gives examples of "images of single objects"; its letters are not ImageNet's
    assert find_definitions("For datasets with many, large images of single objects (ImageNet, CIFAR etc) we fail.") == {}
    assert find_definitions("on natural images (ImageNet etc.) and text (BERT, GPT-2).") == {}
    # a short form and a remark still define it
    assert find_definitions("reinforcement learning (RL, Sutton 1998) and graph neural networks (GNNs, e.g. GCN)") == {
        "RL": "reinforcement learning", "GNNs": "graph neural networks"}
