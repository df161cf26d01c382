"""Specificity measured on a corpus: general words are flagged generic, the terms of a topic are not,
in any field (a small corpus of three fields, written here), and the graph and RDF carry it."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kg.concepts.merge import merge_concepts
from kg.concepts.specificity import Evidence, score_specificity, specificity

# Three fields, ten abstracts each: each field's own terms and vocabulary, and words every abstract
# uses (a keyphrase of a few only, as a general word is).
_FIELDS = {
    "physics": ("superconducting qubits", ["Josephson junction", "flux noise", "coherence time", "transmon", "microwave resonator",
                                           "dielectric loss", "quasiparticle poisoning", "cryogenic readout"],
                "qubit junction flux resonator cryogenic microwave coherence decoherence superconducting gate"),
    "biology": ("protein folding", ["chaperone binding", "hydrophobic core", "misfolded aggregates", "amino acid residues",
                                    "molecular dynamics", "disulfide bonds", "folding intermediates", "native state"],
                "protein chaperone residues hydrophobic aggregates folding peptide enzyme cellular membrane"),
    "ml": ("reinforcement learning", ["policy gradient", "reward shaping", "value function", "exploration bonus",
                                      "markov decision process", "off-policy evaluation", "replay buffer", "actor critic"],
           "policy reward agent value exploration environment episode return bellman trajectory"),
}


def _corpus():
    texts, extractions = {}, []
    for field, (topic, terms, vocabulary) in _FIELDS.items():
        words = vocabulary.split()
        for i in range(10):
            own = [terms[i % 8], terms[(i + 3) % 8]]
            pid = f"{field}{i}"
            texts[pid] = (f"We study {topic} with {own[0]} and {own[1]}. " + " ".join(words[(i + k) % 10] for k in range(6))
                          + ". Our results and experiments use a new method; the analysis shows that the method gives results on data.")
            extractions.append((pid, [topic, *own, "results", "method", "analysis", "data"] if i == 0 else [topic, *own], ()))
    return texts, extractions


@pytest.fixture(scope="module")
def scored():
    texts, extractions = _corpus()
    index = merge_concepts(extractions)
    return {c.key: c for c in score_specificity(index, texts).concepts}


def test_words_of_every_field_are_generic_and_each_fields_terms_are_not(scored):
    for key in ["result", "analysis", "data", "method"]:
        assert scored[key].generic, (key, scored[key].specificity)
    from kg.text.phrases import normalize_phrase

    for field, (topic, terms, _) in _FIELDS.items():
        for term in [topic, *terms]:
            c = scored[normalize_phrase(term)]
            assert not c.generic and c.specificity > max(scored[k].specificity for k in ["result", "analysis", "data"]), (term, c)


def test_every_concept_has_a_specificity_in_the_unit_interval(scored):
    assert all(0.0 <= c.specificity <= 1.0 and c.generic == (c.specificity < 0.45) for c in scored.values())


def test_a_count_noun_alone_is_less_specific():
    common = dict(under=50, cohesion=1.8, named=40, containing=200)
    assert specificity(Evidence(**common, plural=0.6)) < specificity(Evidence(**common, plural=0.0)) == specificity(Evidence(**common, plural=None))


def test_few_papers_say_little():
    """Cohesion measured on two papers moves the score less than the same cohesion on two hundred."""
    low = [specificity(Evidence(under=n, cohesion=0.5, named=2, containing=4, plural=None)) for n in (2, 200)]
    assert low[0] > low[1]


@given(under=st.integers(0, 10_000), cohesion=st.one_of(st.none(), st.floats(0, 100)), named=st.integers(0, 1000),
       containing=st.integers(0, 10_000), plural=st.one_of(st.none(), st.floats(0, 1)))
@settings(max_examples=300, deadline=None)
def test_specificity_is_a_number_in_the_unit_interval(under, cohesion, named, containing, plural):
    assert 0.0 <= specificity(Evidence(under, cohesion, named, containing, plural)) <= 1.0


def test_a_generic_concept_is_no_papers_subject_but_stays_a_broader_concept(scored):
    from kg.extract.keyphrases import Keyphrase, PaperKeyphrases
    from kg.graph.build import build_graph
    from kg.graph.stats import graph_stats
    from kg.text.sources import Paper

    texts, extractions = _corpus()
    index = score_specificity(merge_concepts(extractions), texts)
    papers = [Paper(pid, texts[pid], texts[pid]) for pid in texts]
    found = [PaperKeyphrases(pid, tuple(Keyphrase(p, 0.5, r) for r, p in enumerate(ps, 1))) for pid, ps, _ in extractions]
    G = build_graph(papers, found, index, {})
    by_key = {d["key"]: (n, d) for n, d in G.nodes(data=True) if d["kind"] == "concept"}
    node, d = by_key["result"]
    assert d["generic"] and d["papers"] == 0 and d["mentions"] == 3 and not any(G.edges(node))
    node, d = by_key["protein folding"]  # (its papers meet there)
    assert not d["generic"] and d["papers"] == 10 and 0.45 <= d["specificity"] <= 1
    assert graph_stats(G)["papers_sharing_a_specific_concept_or_broader"] == 30


def test_what_authors_file_their_papers_under_is_not_generic():
    # "analysis" is in every text and a keyphrase of one: generic. Where the authors of three papers give
    # it as a keyword (of the 30 papers that contain it: 10 %), it is what they file papers under.
    texts, extractions = _corpus()
    index = merge_concepts(extractions)
    plain = {c.key: c for c in score_specificity(index, texts).concepts}
    assert plain["analysis"].generic
    keywords = {"physics0": ["Analysis", "qubits"], "biology1": ["analyses"], "ml2": ["ANALYSIS", "policy"], "ml3": []}
    chosen = {c.key: c for c in score_specificity(index, texts, keywords).concepts}
    assert not chosen["analysis"].generic and chosen["analysis"].specificity == 0.45
    # two papers are not enough, and a word that three papers choose among thousands that contain it stays generic
    two = {c.key: c for c in score_specificity(index, texts, {"physics0": ["analysis"], "ml2": ["analysis"]}).concepts}
    assert two["analysis"].generic
    assert specificity(Evidence(under=300, cohesion=1.05, named=300, containing=8000, plural=0.0, chosen=30, chosen_of=8000)) < 0.45
    assert specificity(Evidence(under=300, cohesion=1.05, named=300, containing=8000, plural=0.0, chosen=400, chosen_of=8000)) == 0.45
    # the other concepts keep their scores
    assert all(chosen[k].specificity == plain[k].specificity for k in plain if k != "analysis")


def test_what_hundreds_of_authors_never_choose_is_generic():
    # "downstream tasks": cohesive and often a keyphrase, in the texts of 402 papers with keywords, the
    # keyword of 1: what papers use, not what they are about
    cohesive = Evidence(under=150, cohesion=2.0, named=120, containing=400, plural=None)
    assert specificity(cohesive) > 0.6
    assert specificity(replace(cohesive, chosen=1, chosen_of=402)) < 0.45
    # chosen by 1 % or more, or seen in too few papers with keywords to tell: as without keywords
    assert specificity(replace(cohesive, chosen=5, chosen_of=402)) == specificity(cohesive)
    assert specificity(replace(cohesive, chosen=0, chosen_of=99)) == specificity(cohesive)


def test_keywords_that_name_no_concept_are_not_read():
    # a controlled vocabulary or another language: two of three papers' keywords name no concept of
    # the corpus, so none counts (not even the third's "analysis", which would make it specific)
    texts, extractions = _corpus()
    index = merge_concepts(extractions)
    plain = {c.key: c for c in score_specificity(index, texts).concepts}
    foreign = {"physics0": ["Quantenphysik"], "biology1": ["Zellbiologie"], "ml2": ["ANALYSIS"], "ml3": ["analysis"],
               "ml4": ["Maschinelles Lernen"], "ml5": ["Analyse"], "ml6": ["analysis"]}
    read = {c.key: c for c in score_specificity(index, texts, foreign).concepts}
    assert [(c.key, c.specificity) for c in read.values()] == [(c.key, c.specificity) for c in plain.values()]
    # the same keywords with one more paper naming a concept (4 of 7) are read: analysis is chosen
    named = {**foreign, "ml5": ["analysis"]}
    assert not {c.key: c for c in score_specificity(index, texts, named).concepts}["analysis"].generic


def test_the_tfidf_rounds_in_a_forked_process_give_the_same_evidence():
    # kg build runs the TF-IDF half of round A and round B in a forked copy of itself (`beside`) while it counts the keys
    from kg.concepts.specificity import concept_evidence
    from kg.pipeline.fork import Forked

    texts, extractions = _corpus()
    concepts = merge_concepts(extractions).concepts
    ran = []

    def forked(fn):
        ran.append(fn)
        return Forked(fn, doing="measuring the concepts' specificity")

    alone = concept_evidence(concepts, texts, partition_size=4)
    assert concept_evidence(concepts, texts, partition_size=4, beside=forked) == alone and len(ran) == 1  # the same sums
    assert any(e.cohesion is not None for e in alone.values())


def _rich_corpus():
    """`_corpus` with broader concepts set by hand (chains, concepts no paper names, a cycle, an unknown
    one), a paper with an empty text, papers known only by the concepts that name them, and keywords of
    half the papers (each naming a concept by its key, label or alternative label, and a foreign one)."""
    from kg.concepts.model import Concept, ConceptIndex

    texts, extractions = _corpus()
    concepts = {c.key: c for c in merge_concepts(extractions).concepts}
    broader = {"transmon": ["superconducting qubit"], "superconducting qubit": ["quantum computing"],
               "policy gradient": ["reinforcement learning"], "actor critic": ["policy gradient", "reinforcement learning"],
               "value function": ["reinforcement learning"], "reinforcement learning": ["machine learning"],
               "machine learning": ["value function"], "chaperone binding": ["protein folding", "nowhere"]}
    extra = [Concept("quantum-computing", "quantum computing", "quantum computing", ("QC",), ()),
             Concept("machine-learning", "machine learning", "machine learning", ("ML",), ("ghost1",)),
             Concept("ghost", "ghost", "ghost", (), ("ghost1", "ghost2", "physics3", "blank"))]
    ids = {**{k: c.id for k, c in concepts.items()}, **{c.key: c.id for c in extra}, "nowhere": "nowhere"}
    listed = [replace(c, broader=tuple(ids[b] for b in broader.get(c.key, ()))) for c in [*concepts.values(), *extra]]
    named = ["QC", "policy-gradient", "Protein Folding", "analysis", "ML", "results", "Transmon", "reward shaping"]
    keywords = {pid: [kw, "Quantenphysik"] for pid, kw in zip(sorted(texts)[::2], named * 2)}
    return ConceptIndex(tuple(listed), {}), {**texts, "blank": ""}, {**keywords, "ml1": []}


def _same(a, b, tolerance=1e-9):
    """Evidence alike: the counts exactly, the cohesion within *tolerance* (sums in another order)."""
    def counts(e):
        return replace(e, cohesion=e.cohesion is None)

    return a.keys() == b.keys() and all(counts(a[k]) == counts(b[k]) and (a[k].cohesion is None or abs(a[k].cohesion - b[k].cohesion) <= tolerance)
                                        for k in a)


@pytest.mark.parametrize("corpus", ["plain", "rich"])
def test_partitions_of_any_size_give_the_same_evidence(corpus):
    from kg.concepts.specificity import concept_evidence

    if corpus == "plain":
        texts, extractions = _corpus()
        concepts, keywords = merge_concepts(extractions).concepts, None
    else:
        index, texts, keywords = _rich_corpus()
        concepts = index.concepts
    whole = concept_evidence(concepts, texts, keywords)
    assert any(e.cohesion is not None for e in whole.values())
    assert corpus == "plain" or any(e.chosen for e in whole.values())
    for size in (1, 2, 7, len(texts) + 3):  # the same to the last bit: round B adds whole units (`UNIT`)
        assert concept_evidence(concepts, texts, keywords, partition_size=size) == whole, size


def test_the_evidence_is_what_it_was_before_partitions():
    """The golden file was written by `concept_evidence` before it ran in partitions (main at 39c0cfa):
    the evidence of `_corpus` without and with keywords, and of `_rich_corpus`."""
    import json
    from pathlib import Path

    from kg.concepts.specificity import concept_evidence

    golden = json.loads((Path(__file__).resolve().parents[1] / "data" / "golden" / "specificity-evidence.json").read_text())
    texts, extractions = _corpus()
    index, rich, rich_keywords = _rich_corpus()
    keywords = {"physics0": ["Analysis", "qubits"], "biology1": ["analyses"], "ml2": ["ANALYSIS", "policy"], "ml3": []}
    now = {"plain": concept_evidence(merge_concepts(extractions).concepts, texts),
           "keywords": concept_evidence(merge_concepts(extractions).concepts, texts, keywords, partition_size=8),
           "rich": concept_evidence(index.concepts, rich, rich_keywords, partition_size=5)}
    for name, evidence in now.items():
        assert _same(evidence, {k: Evidence(*v) for k, v in golden[name].items()}), name


def test_the_tfidf_rows_are_sklearns():
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer

    from kg.concepts.evidence import TFIDF, ConceptTable, add_counts, analyze_texts, count_terms, partition_papers, tfidf_rows, weigh

    texts, _ = _corpus()
    texts = {**texts, "blank": "", "odd": "Policy, POLICY and policies: the reward's rewards 42 times"}
    expected = TfidfVectorizer(**TFIDF).fit_transform([t.lower() for t in texts.values()]).toarray()
    table, partitions = ConceptTable.of(()), partition_papers((), texts, size=4)
    terms = [analyze_texts(papers) for papers in partitions]
    weights = weigh(add_counts(count_terms(table, papers, t) for papers, t in zip(partitions, terms)), table)
    got = np.vstack([tfidf_rows(weights, t).toarray() for t in terms])
    assert got.shape == expected.shape and np.abs(got - expected).max() <= 1e-12
