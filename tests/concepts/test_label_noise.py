"""No citation key, markup or stray end punctuation in a concept label (issue 49).

Each abstract below is a short synthetic one that reproduces a label seen on held-out ML abstracts
("low rank adaptation hu2021lora", "CLIP radford2021learning", "malicious server COCO
lin2014microsoft", "reinforcement learning~", "large language models'", "Quantile-Guided Diffusion
Policy~"): cleaned, extracted (spaCy, a hashing embedder) and merged as a build does.
"""

from __future__ import annotations

import pytest

from kg.concepts.merge import merge_concepts
from kg.extract.keyphrases import extract_keyphrases
from kg.text.clean import clean_text
from kg.text.noise import label_noise, trim_label

ABSTRACTS = {
    "lora": r"We fine-tune large models with low rank adaptation~\citep{hu2021lora} on new tasks.",
    "lora-bare": "We fine-tune large models with low rank adaptation hu2021lora on new tasks.",
    "clip": r"Image features from CLIP~\cite{radford2021learning} guide the open-vocabulary detector.",
    "clip-bare": "Image features from CLIP radford2021learning guide the open-vocabulary detector.",
    "coco": "A malicious server (MS) attacks federated clients trained on MS COCO lin2014microsoft images.",
    "rl": r"Deep reinforcement learning~(RL) agents explore sparse rewards. We study RL~\cite{sutton2018}.",
    "llm": "We probe large language models' (LLMs') reasoning and the memory of LLMs.",
    "qgdp": r"We propose Quantile-Guided Diffusion Policy~(QGDP), an offline reinforcement learning method.",
    "markup": r"We use {\em sparse attention} with $O(n)$ cost, <sup>2</sup> norms and vision transformers (Dosovitskiy et al., 2021).",
}


@pytest.fixture(scope="module")
def index(nlp, hash_embedder):
    items = [(pid, clean_text(text)) for pid, text in ABSTRACTS.items()]
    found = extract_keyphrases(items, hash_embedder, nlp=nlp)
    return merge_concepts([(f.paper_id, [k.phrase for k in f.keyphrases], f.definitions) for f in found])


def _labels(index, paper=None):
    concepts = [c for c in index.concepts if paper is None or paper in c.papers]
    return {label for c in concepts for label in (c.label, *c.alt_labels)}


def test_no_label_of_the_abstracts_is_noisy(index):
    assert {label: label_noise(label) for label in _labels(index) if label_noise(label)} == {}


@pytest.mark.parametrize(("paper", "label"), [
    ("lora", "low rank adaptation"), ("lora-bare", "low rank adaptation"), ("clip", "CLIP"), ("clip-bare", "CLIP"),
    ("rl", "reinforcement learning"), ("qgdp", "quantile-guided diffusion policy"), ("llm", "large language models"),
    ("markup", "sparse attention"), ("markup", "vision transformers"),
])
def test_the_phrase_a_key_or_markup_was_glued_to_is_its_own_label(index, paper, label):
    assert label in _labels(index, paper)


def test_definitions_carry_no_tilde_or_quote(index):
    rl = next(c for c in index.concepts if c.key == "reinforcement learning")
    assert "RL" in rl.alt_labels and "reinforcement learning~" not in rl.alt_labels
    llm = next(c for c in index.concepts if c.key == "large language model")
    assert "LLMs" in llm.alt_labels and not any(label.endswith("'") for label in (llm.label, *llm.alt_labels))


def test_a_label_cut_with_stray_signs_is_trimmed_at_the_merge():
    index = merge_concepts([
        ("p1", ["reinforcement learning"], [("RL", "reinforcement learning~")]),
        ("p2", ["large language models'", "large language models"], []),
        ("p3", ["C++ compilers", "U.S. census"], []),
    ])
    labels = {label for c in index.concepts for label in (c.label, *c.alt_labels)}
    assert {"reinforcement learning", "RL", "large language models", "C++ compilers", "U.S. census"} <= labels
    assert not any(label_noise(label) for label in labels)


@pytest.mark.parametrize(("label", "trimmed"), [
    ("Quantile-Guided Diffusion Policy~", "Quantile-Guided Diffusion Policy"), ("'attention'", "attention"),
    ("models,", "models"), ("deep learning.", "deep learning"), ("graph (GNN", "graph (GNN"), ("GNN)", "GNN"),
    ("U.S.", "U.S."), ("C#", "C#"), ("(un)supervised learning", "(un)supervised learning"), ("t-SNE", "t-SNE"),
])
def test_trim_label(label, trimmed):
    assert trim_label(label) == trimmed
