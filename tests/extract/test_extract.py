"""Extraction on the real packaged model and spaCy pipeline (marked `model`)."""

import re

import numpy as np
import pytest
from support import SEEDS

from kg.errors import ModelError
from kg.extract.embed import MODEL_SHA256, file_sha256, model_path, verify_model
from kg.extract.keyphrases import (
    Settings,
    candidates_of,
    embed_documents,
    extract_keyphrases,
)

pytestmark = pytest.mark.model


def test_the_packaged_model_is_the_published_one(real_embedder):
    assert file_sha256(model_path() / "model.safetensors") == MODEL_SHA256
    vectors = real_embedder.embed(["federated learning", "federated learning", "protein folding"])
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert float(vectors[0] @ vectors[1]) > 0.999 and float(vectors[0] @ vectors[2]) < 0.5


def test_a_model_that_does_not_match_its_checksum_is_refused(tmp_path):
    (tmp_path / "model.safetensors").write_bytes(b"not the weights")
    with pytest.raises(ModelError, match=r"model\.safetensors: sha256 [0-9a-f]{64} does not match the published all-MiniLM-L6-v2 weights"):
        verify_model(tmp_path)
    with pytest.raises(ModelError, match="model weights missing"):
        verify_model(tmp_path / "nowhere")


def test_candidates_are_noun_phrases_never_crossing_a_verb(nlp):
    text = ("Federated Adversarial Learning enhances model robustness. Experiments on LLM pretraining show SPECTRA "
            "improves validation loss. We prove that SVD identifies correct NN under node deletions. Edge modifications "
            "make a scratch update infeasible.")
    phrases = [c.phrase for c in candidates_of(nlp(text))]
    assert "federated adversarial learning" in phrases and "model robustness" in phrases
    for bad in ["fal enhances model", "learning enhances", "pretraining show", "svd identifies", "node deletions edge",
                "scratch update infeasible"]:
        assert not any(bad in p.lower() for p in phrases), (bad, phrases)


def test_hyphenated_compounds_and_acronyms_stay_whole(nlp):
    phrases = [c.phrase for c in candidates_of(nlp("We study zeroth-order optimization with threshold-activated sparse autoencoders in LLMs."))]
    assert "zeroth-order optimization" in phrases
    assert "threshold-activated sparse autoencoders" in phrases
    assert "LLMs" in phrases


def test_tagging_leaves_no_new_words_in_spacys_string_store(nlp):
    """A worker tags a whole corpus with one pipeline: the strings spaCy learns from each batch are
    forgotten after it (a memory zone), so its memory does not grow with the corpus's vocabulary;
    the candidates are those of the texts tagged outside a zone."""
    from kg.extract.keyphrases import tag_documents

    texts = [f"We propose glorptastic frobnication{i} for zqxv{i}-regularized quuxformer networks." for i in range(50)]
    expected = [[c.phrase for c in candidates_of(nlp(t))] for t in texts[:3]]
    before = len(nlp.vocab.strings)
    tagged = tag_documents([(str(i), t) for i, t in enumerate(texts)], nlp)
    assert len(nlp.vocab.strings) == before
    assert [[c.phrase for c in t.candidates] for t in tagged[:3]] == expected
    assert "glorptastic frobnication0" in expected[0]


def test_seed_keyphrases_are_well_formed(seeds_build):
    import json

    lines = (seeds_build.out / "keyphrases.jsonl").read_text().splitlines()
    phrases = [k["phrase"] for line in lines for k in json.loads(line)["keyphrases"]]
    assert len(phrases) >= 38 * 5
    verbs = re.compile(r"\b(enhances|show|shows|identifies|is|are|was|were|we|our|this|that)\b", re.I)
    assert not [p for p in phrases if verbs.search(p)]
    assert not [p for p in phrases if p.lower() in {"paper", "approach", "method", "results", "work", "experiments", "framework"}]


def test_the_tail_of_a_long_abstract_counts(real_embedder, nlp):
    head = " ".join(["Graph neural networks learn representations of molecules by passing messages along chemical bonds."] * 30)
    tail = "Finally, we apply protein structure prediction to enzyme design."
    doc = nlp(head + " " + tail)
    sentences = [s.text for s in doc.sents]
    assert real_embedder.count_tokens([doc.text])[0] > real_embedder.max_tokens
    pooled = embed_documents([doc.text], [sentences], real_embedder)[0]
    truncated = real_embedder.embed([doc.text])[0]  # what the model alone sees: the first 256 word pieces
    probe = real_embedder.embed(["protein structure prediction for enzyme design"])[0]
    assert float(pooled @ probe) > float(truncated @ probe) + 0.02
    found = extract_keyphrases([("p", head + " " + tail)], real_embedder, nlp=nlp, settings=Settings(top_n=10))
    assert any("protein" in k.phrase or "enzyme" in k.phrase for k in found[0].keyphrases)


def test_extraction_returns_one_list_per_document_even_for_one(real_embedder, nlp):
    one = extract_keyphrases([("a", "Graph neural networks for molecules.")], real_embedder, nlp=nlp)
    assert len(one) == 1 and one[0].keyphrases[0].rank == 1
    none = extract_keyphrases([("b", "It is what it is, and so it goes.")], real_embedder, nlp=nlp)
    assert none[0].keyphrases == ()


def test_ranks_follow_the_selection_and_scores_are_keyberts_cosine(real_embedder, nlp):
    text = ("Sharpness-aware minimization improves the generalization of deep neural networks "
            "by seeking flat minima of the loss landscape.")
    plain = extract_keyphrases([("a", text)], real_embedder, nlp=nlp, settings=Settings(ranking="similarity", diversity=0.0, position_weight=0.0))[0]
    scores = [k.score for k in plain.keyphrases]
    # no diversity and no position bonus: KeyBERT's own order, by cosine similarity
    assert len(scores) >= 3 and scores == sorted(scores, reverse=True)
    found = extract_keyphrases([("a", text)], real_embedder, nlp=nlp, settings=Settings(ranking="similarity"))[0]
    assert [k.rank for k in found.keyphrases] == list(range(1, len(found.keyphrases) + 1))
    by_phrase = {k.phrase: k.score for k in plain.keyphrases}
    assert all(by_phrase[k.phrase] == k.score for k in found.keyphrases if k.phrase in by_phrase)
    # the first-ranked keyphrase is the most relevant once the bonus for an early first occurrence counts
    assert found.keyphrases[0].phrase == "sharpness-aware minimization"


def test_mmr_rank_keeps_pick_order_and_avoids_redundancy():
    from kg.extract.keyphrases import mmr_rank

    e = np.array([[1.0, 0.0], [0.99, 0.141], [0.0, 1.0]], dtype=np.float32)
    e /= np.linalg.norm(e, axis=1, keepdims=True)
    relevance = np.array([0.9, 0.85, 0.5], dtype=np.float32)
    assert mmr_rank(relevance, e, 3, 0.0) == [0, 1, 2]
    assert mmr_rank(relevance, e, 2, 0.5) == [0, 2]  # the near-copy of the first waits
    assert mmr_rank(relevance, e, 5, 0.5) == [0, 2, 1]
    assert mmr_rank(relevance[:0], e[:0], 3, 0.5) == []

@pytest.mark.parametrize("terms", [1, 384, 1040, 1041, 1536, 3000])
def test_the_float_path_of_an_int8_product_gives_the_int32_sums_bits(terms):
    """On a CPU without fast int8 kernels, int8 products are float32 matrix products
    (`_integer_product`): the same bits as ``torch._int_mm``, the extremes included (a sum of
    1,536 products of -127 and 127 does not fit float32's 24 bits, a slice of 1,040 does)."""
    import torch

    from kg.extract.embed import _EXACT_FLOAT32_TERMS, _integer_product

    assert _EXACT_FLOAT32_TERMS == 1040
    gen = torch.Generator().manual_seed(terms)
    a = torch.randint(-127, 128, (24, terms), dtype=torch.int8, generator=gen)
    b = torch.randint(-127, 128, (terms, 16), dtype=torch.int8, generator=gen)
    a[0], b[:, 0], b[:, 1] = 127, 127, -127  # row 0 by columns 0 and 1: the largest sums there are
    a[1, ::2], a[1, 1::2] = 127, -3  # odd sums well past 2**24: float32 rounds them, as the int32 result's .float()
    want = torch._int_mm(a, b)
    got = _integer_product(a.float(), b.float())
    assert got.dtype == torch.float32 and torch.equal(got, want.float())
    assert int(want.abs().max()) == terms * 127 * 127


def test_the_float_path_is_exact_where_one_float32_product_is_not():
    """Sums far past 2**24 (20,000 terms of 127 * 127 with odd ones among them): a single float32
    product rounds as it goes and differs from the int32 sums; the sliced one does not."""
    import torch

    from kg.extract.embed import _integer_product

    a = torch.full((17, 20000), 127, dtype=torch.int8)
    b = torch.full((20000, 8), 127, dtype=torch.int8)
    b[1::3, 0], b[::7, 1], a[3, ::5] = 1, -1, 3
    want = torch._int_mm(a, b).float()
    assert not torch.equal(a.float() @ b.float(), want)  # what slicing is for
    assert torch.equal(_integer_product(a.float(), b.float()), want)


def test_an_int8_embedding_is_the_same_bits_on_either_path(monkeypatch):
    """KG_INT8_MATMUL chooses torch._int_mm or float products; a text's int8 vector is the same bits."""
    from kg.extract import embed

    texts = ["zeroth-order optimization", "Sharpness-aware minimization seeks flat minima."]
    found = {}
    for path in ("int", "float"):
        monkeypatch.setenv("KG_INT8_MATMUL", path)
        embed._int_mm_is_fast.cache_clear()
        assert embed._int_mm_is_fast() is (path == "int")
        found[path] = embed.load_embedder("int8").embed(texts)
    embed._int_mm_is_fast.cache_clear()
    assert np.array_equal(found["int"], found["float"])


def test_int8_precision_is_the_same_model_quantized_and_its_own_cache_key(real_embedder, nlp):
    from kg.extract.embed import load_embedder

    int8 = load_embedder("int8")
    assert int8 is not real_embedder and int8 is load_embedder("int8")
    assert (int8.precision, real_embedder.precision, Settings().precision) == ("int8", "fp32", "int8")  # int8: kg's default
    texts = ["zeroth-order optimization", "federated learning", "Sharpness-aware minimization seeks flat minima."]
    fp32, q = real_embedder.embed(texts), int8.embed(texts)
    assert np.allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-5)
    cosines = (fp32 * q).sum(axis=1)
    assert cosines.min() > 0.9 and not np.allclose(fp32, q)  # close to the published model, yet quantized
    found = extract_keyphrases([("a", texts[2])], int8, nlp=nlp, settings=Settings(precision="int8"))[0]
    assert found.keyphrases[0].phrase == "sharpness-aware minimization"
    assert Settings(precision="int8").fingerprint("m") != Settings(precision="fp32").fingerprint("m")
    with pytest.raises(ValueError, match="precision"):
        Settings(precision="fp16")
    with pytest.raises(ModelError, match="unknown precision"):
        load_embedder("fp16")


def test_a_suspended_hyphen_shares_the_compound_and_its_head(nlp):
    phrases = {c.phrase: c.position for c in candidates_of(nlp("We compare first- and second-order methods with LLM- and VLM-based agents."))}
    assert "second-order methods" in phrases and "first-order methods" in phrases  # not "order methods"
    assert "order methods" not in phrases
    assert "LLM-based agents" in phrases and "VLM-based agents" in phrases
    assert phrases["first-order methods"] < phrases["second-order methods"]  # where "first-" stands


def test_a_slash_compound_is_one_word(nlp):
    # spaCy splits "A/B" into three tokens; kg joins them as it joins a hyphen's (not "b testing")
    text = "We run A/B testing of input/output pairs on CPU/GPU kernels; inputs / outputs and 3/4 of the time."
    phrases = [c.phrase for c in candidates_of(nlp(text))]
    assert phrases == ["a/b testing", "input/output pairs", "CPU/GPU kernels", "inputs", "outputs", "time"]


def test_coordinated_nouns_and_phrases_make_no_new_candidates(nlp):
    # a plural or a phrase of its own before "and": noun coordination, nothing is distributed
    phrases = [c.phrase for c in candidates_of(nlp("We study graphs and language models, accuracy and efficiency, and a well- known model."))]
    assert sorted(phrases) == sorted(["graphs", "language models", "accuracy", "efficiency", "model"])


def test_the_trimmed_pipeline_tags_exactly_as_the_packaged_one(nlp):
    # load_nlp drops the attribute ruler's POS/morphology/lemma rules (kg reads only tags and
    # sentence starts); its tags, whitespace tokens' "_SP" included, must not change
    import spacy

    from kg.extract.keyphrases import SPACY_MODEL

    full = spacy.load(SPACY_MODEL, exclude=["ner", "lemmatizer", "parser"])
    full.enable_pipe("senter")
    texts = [
        "We  propose\n\na zeroth-order (ZO) method for fine-tuning large language models (LLMs).\tIt's 2x faster.",
        "Graph neural networks  (GNNs) are   widely used . The U.S. results, e.g. on CIFAR-10, hold.\n",
    ]
    def tags(pipeline):
        return [[(t.text, t.tag_, t.is_sent_start) for t in doc] for doc in pipeline.pipe(texts)]

    assert tags(nlp) == tags(full)
    assert any(tag == "_SP" for doc in tags(nlp) for _, tag, _ in doc)
    assert len(nlp.get_pipe("attribute_ruler").patterns) < len(full.get_pipe("attribute_ruler").patterns)


def test_same_length_batches_group_equal_lengths_within_the_token_budget():
    from kg.extract.embed import same_length_batches

    assert same_length_batches([3, 5, 3, 3, 5], 6) == [[0, 2], [3], [1], [4]]
    assert same_length_batches([300, 300], 256) == [[0], [1]]  # one text at least
    assert same_length_batches([], 1024) == []


@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_a_texts_embedding_does_not_depend_on_what_it_is_batched_with(precision):
    # no padding, no batch-wide quantization scale, each batch on one torch thread: the same
    # vector, to the bit, alone, in any company, in any order, in a process with one torch
    # thread or more (a dask worker runs one, kg build's model process two)
    import torch

    from kg.extract.embed import load_embedder

    embedder = load_embedder(precision)
    texts = ["zeroth-order optimization", "graph neural networks", "LLMs", "federated learning",
             "Sharpness-aware minimization seeks flat minima of the training loss.",
             "We fine-tune large language models with zeroth-order (ZO) gradient estimates and show that they "
             "match first-order methods at a fraction of the memory."]
    together = embedder.embed(texts)
    for i, text in enumerate(texts):
        assert np.array_equal(embedder.embed([text])[0], together[i])
    assert np.array_equal(embedder.embed(texts[::-1])[::-1], together)
    threads = torch.get_num_threads()
    torch.set_num_threads(1 if threads > 1 else 2)
    try:
        other_threads = embedder.embed(texts)
    finally:
        torch.set_num_threads(threads)
    assert np.array_equal(other_threads, together)


def test_int8_keyphrases_of_an_abstract_do_not_depend_on_the_abstracts_beside_it(nlp):
    # a rebuild extracts only the new abstracts, together; a clean build extracts them among the
    # others: both must give each paper the same keyphrases and scores
    from kg.extract.embed import load_embedder
    from kg.text.sources import read_papers

    items = [(p.id, p.document) for p in read_papers([SEEDS]).papers[:8]]
    int8, settings = load_embedder("int8"), Settings(precision="int8")
    together = extract_keyphrases(items, int8, nlp=nlp, settings=settings)
    apart = extract_keyphrases(items[:3], int8, nlp=nlp, settings=settings) + extract_keyphrases(items[3:], int8, nlp=nlp, settings=settings)
    assert together == apart


def _ranks(text, phrase, embedder, nlp, **weights):
    """Where *phrase* ranks among the keyphrases of *text* with each of *weights* (a Settings field
    and its values)."""
    (name, values), = weights.items()
    ranks = {}
    for value in values:
        found = extract_keyphrases([("a", text)], embedder, nlp=nlp, settings=Settings(**{name: value}, top_n=20, ranking="similarity"))[0]
        ranks[value] = [k.phrase for k in found.keyphrases].index(phrase)
    return ranks, found


def test_the_long_form_of_a_defined_acronym_ranks_higher(hash_embedder, nlp):
    text = ("We study robustness in distributed training. Federated Adversarial Learning (FAL) trains robust models "
            "across clients. Our analysis of FAL covers convergence rates, communication cost and client drift.")
    ranks, found = _ranks(text, "federated adversarial learning", hash_embedder, nlp, definition_weight=(0.0, 1.0))
    assert found.definitions == (("FAL", "Federated Adversarial Learning"),)
    assert ranks[1.0] == 0 < ranks[0.0]


def test_a_repeated_multi_word_phrase_counts_its_uses_and_its_acronyms():
    from kg.text.phrases import phrase_occurrences

    text = ("Graph neural networks (GNN) scale poorly. Deep graph neural networks scale worse; a GNN with "
            "attention, the graph-neural networks of prior work and GNNs are compared. Graph is a word.")
    counts = phrase_occurrences(text, (("GNN", "graph neural networks"),), ["Graph neural networks", "graph", "first-order methods", "prior work"])
    # the phrase twice in any case (inside "deep graph neural networks" too, not in "graph-neural networks"),
    # plus two uses of its acronym ("GNNs" is not one); a single word and an absent phrase count once
    assert counts == [4, 1, 1, 1]


def test_a_repeated_multi_word_phrase_ranks_higher(hash_embedder, nlp):
    text = ("We study memory traffic on accelerators for long documents. The cost of attention grows with length. "
            "Sparse attention kernels cut it, and sparse attention kernels fuse well with quantized weights.")
    ranks, _ = _ranks(text, "attention kernels", hash_embedder, nlp, frequency_weight=(0.0, 1.0))
    assert ranks[1.0] == 0 < ranks[0.0]


def test_a_paper_spends_one_keyphrase_on_a_concept(real_embedder, nlp):
    # "transformers" and "transformer", "fine-tuning" and "fine tuning", an acronym and its long form: one key each
    text = ("Vision Transformers (ViTs) are strong image classifiers. We study fine-tuning of vision transformers: "
            "a transformer pre-trained on images adapts to new tasks, and fine tuning of ViTs with few labels "
            "keeps their robustness to distribution shift. Transformers beat convolutional networks here.")
    found = extract_keyphrases([("a", text)], real_embedder, nlp=nlp)[0]
    from kg.text.phrases import normalize_phrase

    defined = {short.lower().removesuffix("s"): normalize_phrase(long) for short, long in found.definitions}
    keys = [defined.get(k.phrase.lower().removesuffix("s")) or normalize_phrase(k.phrase.replace("-", " "))
            for k in found.keyphrases]
    assert len(keys) >= 5 and len(set(keys)) == len(keys), keys


def test_one_per_key_keeps_the_most_relevant_form_in_order():
    from kg.extract.keyphrases import one_per_key

    relevance = np.array([0.2, 0.9, 0.5, 0.7, 0.1])
    phrases = ["graph networks", "Graph Network", "fine-tuning", "fine tuning", "GNNs"]
    assert one_per_key(phrases, relevance) == [1, 3, 4]
    assert one_per_key(phrases, relevance, [("GNN", "graph networks")]) == [1, 3]
