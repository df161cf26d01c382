"""The stages after extraction in rounds over partitions (`kg.common.rounds`): on a Dask cluster's
workers (`kg.scale.rounds.DaskRounds`) they give what they give in this process."""

from __future__ import annotations

from kg.common.rounds import LocalRounds
from kg.concepts.merge import merge_concepts
from kg.concepts.specificity import concept_evidence, score_specificity
from kg.scale.executor import open_executor
from kg.scale.rounds import DaskRounds, rounds_on
from kg.text.acronyms import definition_pairs

TEXTS = {
    "llm1": "Large language models (LLMs) follow instructions. We study prompting of language models for reasoning.",
    "llm2": "Large language models (LLMs) hallucinate; retrieval grounds the answers of language models to prompts.",
    "use": "Reasoning of LLMs improves with prompts: chain of thought prompting of language models on reasoning tasks.",
    "v1": "Visual question answering (VQA) asks questions about images; a model reads the image and the question.",
    "vqa": "Text-based VQA datasets ask questions about text in images: the model reads scene text in the image.",
    "adam": "We train the networks with the Adam optimizer and compare it with SGD on language models.",
    "sgd": "Adam is fast; stochastic gradient descent (SGD) generalizes better for large language models.",
}
PHRASES = {"use": ["LLMs", "LLM-based agents"], "llm1": ["large language models", "prompting"], "vqa": ["VQA", "images"],
           "v1": ["visual question answering"], "adam": ["adam optimizer", "SGD"], "sgd": ["Adam", "stochastic gradient descent"]}


def test_the_merge_on_dask_workers_is_the_merge_in_this_process():
    extractions = [(pid, PHRASES.get(pid, []), definition_pairs(text)) for pid, text in TEXTS.items()]
    here = merge_concepts(extractions, texts=TEXTS, partition_size=2)
    assert here == merge_concepts(extractions, texts=TEXTS, partition_size=2, rounds=LocalRounds())
    by_id = here.by_id()
    assert by_id[here.assignment[("use", "LLMs")]].key == "large language model"
    assert here.assignment[("adam", "adam optimizer")] == here.assignment[("sgd", "Adam")]
    with open_executor("dask-local:2") as executor:
        rounds = rounds_on(executor)
        assert isinstance(rounds, DaskRounds)
        there = merge_concepts(extractions, texts=TEXTS, partition_size=2, rounds=rounds)
        assert there.concepts == here.concepts
        assert list(there.assignment.items()) == list(here.assignment.items())
        # specificity: partitions of 3 on the workers, the whole corpus here, the same figures to the last bit
        keywords = {"llm1": ["large language models"], "v1": ["VQA"], "sgd": ["optimization"]}
        measured = concept_evidence(here.concepts, TEXTS, keywords)
        assert any(e.cohesion is not None for e in measured.values())
        assert concept_evidence(here.concepts, TEXTS, keywords, partition_size=3, rounds=rounds) == measured
        assert score_specificity(here, TEXTS, keywords, partition_size=3, rounds=rounds) == score_specificity(here, TEXTS, keywords)
        held = rounds.place([1, 2, 3])  # the partitions stay on the workers: handles, not values
        assert [h.result() for h in held] == [1, 2, 3] and sum(len(k) for k in executor.client.has_what().values()) >= 3
        assert rounds.map(divmod, held, [2, 2, 2]) == [(0, 1), (1, 0), (1, 1)]
        kept = rounds.keep(pow, held, exp=2)
        assert rounds.map(int.__add__, kept, held) == [2, 6, 12]
    with open_executor("local") as executor:
        assert isinstance(rounds_on(executor), LocalRounds)


def _many_texts(n: int = 400):
    """*n* texts of words from a vocabulary of 300, each paper with three of its two-word phrases: tables large
    enough that Dask sends their arrays as buffers (read-only on the worker)."""
    import random

    rng = random.Random(20261207)
    words = [f"{a}{b}" for a in ("lat", "gra", "spe", "qua", "neu", "mol") for b in ("ent", "ph", "ctral", "ntum", "ral", "ecule",
                                                                                       "tic", "ion", "ics", "ogy")]
    words = [f"{w}{k}" for w in words for k in ("a", "o", "u", "e", "i")]
    texts, phrases = {}, {}
    for i in range(n):
        chosen = rng.sample(words, 14)
        texts[f"p{i}"] = " ".join(chosen) + "."
        phrases[f"p{i}"] = [f"{chosen[k]} {chosen[k + 1]}" for k in (0, 4, 8)] + [chosen[12]]
    return texts, phrases


def test_specificity_on_dask_workers_with_tables_sent_as_buffers():
    texts, phrases = _many_texts()
    index = merge_concepts([(pid, phrases[pid], ()) for pid in texts])
    here = concept_evidence(index.concepts, texts)
    assert sum(e.cohesion is not None for e in here.values()) > 100
    with open_executor("dask-local:2") as executor:
        assert concept_evidence(index.concepts, texts, partition_size=64, rounds=rounds_on(executor)) == here
