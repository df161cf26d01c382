from hypothesis import given, settings
from hypothesis import strategies as st

from kg.concepts.merge import merge_concepts
from kg.concepts.model import concept_slug
from kg.text.phrases import is_filler, normalize_phrase


def key(phrase):
    return normalize_phrase(phrase)


def test_case_plural_hyphen_and_spelling_variants_share_a_key():
    assert key("Zeroth-Order Optimization") == key("zeroth order optimization") == key("zeroth-order optimisation")
    assert key("large language models") == key("Large Language Model")
    assert key("neighbourhood graphs") == key("neighborhood graph")
    assert key("policies") == key("policy") and key("analyses") == key("analysis")


def test_latin_plurals_and_plurals_of_words_in_s_share_a_key():
    assert key("Nash equilibria") == key("Nash equilibrium") == "nash equilibrium"
    assert key("natural stimuli") == key("natural stimulus")
    assert key("exploration bonuses") == key("exploration bonus") == "exploration bonus"
    assert key("university campuses") == "university campus"
    assert key("causes") == "cause" and key("houses") == "house"  # a word in -se keeps its e


def test_only_british_ise_becomes_ize():
    assert key("optimised") == "optimized" and key("organising") == "organizing" and key("prioritised") == "prioritized"
    # -ise in American spelling too: the key keeps it (it names the concept's IRI)
    assert key("self-supervised learning") == "self supervised learning"
    assert key("online advertising") == "online advertising" and key("image denoising") == "image denoising"
    assert key("surprising connection") == "surprising connection" and key("revised") == "revised"
    assert key("Supervised learning") == key("supervised learning")


def test_different_concepts_keep_different_keys():
    pairs = [("adversarial training", "adversarial attacks"), ("federated learning", "federated adversarial learning"),
             ("gradient descent", "gradient clipping"), ("bias", "bia")]
    for a, b in pairs:
        assert key(a) != key(b)


@given(st.text(max_size=60))
@settings(max_examples=300, deadline=None)
def test_normalization_is_idempotent(text):
    assert normalize_phrase(normalize_phrase(text)) == normalize_phrase(text)


@given(st.text(min_size=1, max_size=40))
@settings(max_examples=300, deadline=None)
def test_slugs_are_iri_safe(text):
    slug = concept_slug(normalize_phrase(text) or "x")
    assert slug and all(c.isascii() and (c.isalnum() or c == "-") for c in slug)


def test_generic_filler_never_is_a_concept():
    for phrase in ["paper", "approach", "methods", "results", "work", "experiments", "framework", "the proposed method",
                   "extensive experiments", "novel framework"]:
        assert is_filler(phrase), phrase
    for phrase in ["learning framework", "gradient descent", "federated learning"]:
        assert not is_filler(phrase), phrase


def test_acronym_joins_its_expansion_across_papers():
    index = merge_concepts([
        ("p1", ["large language models (LLMs)", "zeroth-order optimization"], [("LLMs", "large language models"), ("ZO", "zeroth-order")]),
        ("p2", ["LLMs", "ZO optimization", "fine-tuning"], []),
        ("p3", ["LLM", "Zeroth Order Optimization"], []),
    ])
    a = index.assignment
    assert a[("p2", "LLMs")] == a[("p3", "LLM")]
    assert a[("p2", "ZO optimization")] == a[("p1", "zeroth-order optimization")] == a[("p3", "Zeroth Order Optimization")]
    concept = index.by_id()[a[("p2", "ZO optimization")]]
    assert concept.label == "zeroth-order optimization"
    assert set(concept.alt_labels) >= {"ZO optimization", "Zeroth Order Optimization"} and len(concept.papers) == 3
    llm = index.by_id()[a[("p2", "LLMs")]]
    assert llm.label == "large language model" and "LLMs" in llm.alt_labels


def test_an_acronym_the_corpus_defines_two_ways_is_left_alone():
    index = merge_concepts([
        ("p1", ["LR"], [("LR", "likelihood ratio")]),
        ("p2", ["LR"], [("LR", "learning rate")]),
        ("p3", ["LR schedules"], []),
    ])
    a = index.assignment
    assert a[("p1", "LR")] != a[("p2", "LR")]
    assert index.by_id()[a[("p3", "LR schedules")]].key == "lr schedule"


def test_broader_concepts_from_heads():
    index = merge_concepts([
        ("p1", ["zeroth-order optimization"], []),
        ("p2", ["black-box optimization", "optimization"], []),
        ("p3", ["deep neural networks"], []),
        ("p4", ["graph neural networks"], []),
    ])
    by_key = {c.key: c for c in index.concepts}
    assert by_key["zeroth order optimization"].broader == ("optimization",)
    assert by_key["deep neural network"].broader == ("neural-network",)
    assert by_key["neural network"].papers == ()  # implied by two narrower concepts of two papers
    assert by_key["optimization"].broader == ()


def test_a_key_and_the_key_with_a_class_noun_are_one_concept(hash_embedder):
    from kg.concepts.variants import synonym_candidates

    assert synonym_candidates(["gradient descent", "gradient descent method", "gradient descent algorithm", "language",
                               "language model", "graph", "graph algorithm"]) == [
        ("gradient descent", "gradient descent algorithm"), ("gradient descent", "gradient descent method"),
        ("gradient descent algorithm", "gradient descent method")]
    index = merge_concepts([("p1", ["gradient descent"], ()), ("p2", ["gradient descent method"], ())],
                           embed=hash_embedder.embed, synonym_threshold=-1.0)
    assert index.assignment[("p1", "gradient descent")] == index.assignment[("p2", "gradient descent method")]


def test_a_word_joins_the_word_and_a_noun_only_where_a_text_says_it_names_one():
    extractions = [("p1", ["adam optimizer", "loss spikes"], ()), ("p2", ["adam", "implicit bias"], ()),
                   ("p3", ["graph", "graph algorithm"], ())]
    texts = {"p1": "Loss spikes emerge in training with the Adam optimizer.",
             "p2": "Adam is the de facto optimizer in deep learning; we study its implicit bias.",
             "p3": "The graph algorithm runs on a graph."}
    a = merge_concepts(extractions, texts=texts).assignment
    assert a[("p1", "adam optimizer")] == a[("p2", "adam")]
    assert a[("p3", "graph")] != a[("p3", "graph algorithm")]
    a = merge_concepts(extractions).assignment  # no text, no evidence
    assert a[("p1", "adam optimizer")] != a[("p2", "adam")]
    for text in ["Optimizers, such as SGD and Adam, converge.", "We use adaptive optimizers like Adam.",
                 "Adam, Kingma's method, is an adaptive optimizer."]:
        a = merge_concepts(extractions, texts={"p1": text}).assignment
        assert a[("p1", "adam optimizer")] == a[("p2", "adam")], text
    a = merge_concepts(extractions, texts={"p1": "the adam optimizer", "p2": "Adam is fast; the optimizer is slow."}).assignment
    assert a[("p1", "adam optimizer")] != a[("p2", "adam")]


def test_an_adjective_in_a_title_a_compound_or_a_list_item_names_no_instance():
    """What a build of 10,000 ML abstracts took for evidence that `robust` names a model, an approach,
    a framework and a method (so that `robust` became the label of `robust models`, beside the concept
    `robust`); the evidence a name gives is still taken."""
    from kg.concepts.instances import named_instances

    keys = ["robust", "robust model", "robust approach", "robust framework", "robust method", "adam", "adam optimizer",
            "language", "language model", "learning", "learning algorithm", "relu", "relu network", "bayesian", "bayesian method"]
    for text in ["A Robust Method for Corruption-Tolerant Bandits.",
                 "Wasserstein distributionally robust optimization (WDRO) is a popular model for uncertainty.",
                 "Robust control is a core approach in engineering.",
                 "We show that robust OOD generalization is the framework to study.",
                 "Off-policy methods, including importance sampling and doubly robust, are biased.",
                 "Popular models, such as language models, ...", "Q-learning is an algorithm; deep Q-learning is a learning algorithm.",
                 "We train a ReLU network with a Bayesian method."]:
        assert named_instances(keys, [text]) == [], text
    for text in ["Optimizers such as SGD, RMSProp and Adam.", "the Adam optimizer",
                 "Adam (Kingma and Ba, 2015) is the default optimizer.", "optimizers such as stochastic gradient descent or Adam"]:
        assert named_instances(keys, [text]) == [("adam", "adam optimizer")], text


def test_named_instances_read_half_of_many_texts_in_a_forked_process_find_the_same_pairs():
    # kg build reads half of the abstracts in a forked copy of itself (`beside`) while it reads the other half
    from kg.concepts.instances import SPLIT_FROM, named_instances
    from kg.pipeline.fork import Forked

    keys = ["adam", "adam optimizer", "relu", "relu network", "graph", "graph algorithm", "lasso", "lasso estimator"]
    texts = ["We use adaptive optimizers like Adam.", "A graph algorithm on a graph.",
             "Lasso is a sparse estimator."] + ["Nothing to see here."] * SPLIT_FROM
    texts.insert(SPLIT_FROM // 2 + 10, "Fast networks, such as ReLU.")  # in the second half, read by the fork
    ran = []

    def forked(fn):
        ran.append(fn)
        return Forked(fn, doing="reading the abstracts for named instances")

    alone = named_instances(keys, texts)
    assert alone == [("adam", "adam optimizer"), ("lasso", "lasso estimator"), ("relu", "relu network")]
    assert named_instances(keys, texts, beside=forked) == alone and len(ran) == 1
    assert named_instances(keys, texts[:3], beside=forked) == alone[:2] and len(ran) == 1  # few texts: read here alone


def test_the_capital_of_a_name_is_its_own_first_letter():
    """"the WR method" says nothing of `or`, nor "the EMM algorithm" of `gmm` (three pairs of this
    kind on 25,000 synthetic abstracts: `or method`, `gmm algorithm`, `svm model`)."""
    from kg.concepts.instances import named_instances

    keys = ["or", "or method", "gmm", "gmm algorithm", "svm", "svm model"]
    for text in ["In a second step, the WR method drives it.", "Our GMM is faster than the EMM algorithm.",
                 "The IVM model uses a fraction of the data, like the SVM."]:
        assert named_instances(keys, [text]) == [], text
    assert named_instances(keys, ["We run the GMM algorithm."]) == [("gmm", "gmm algorithm")]
    assert named_instances(keys, ["The SVM model is trained."]) == [("svm", "svm model")]


def test_what_a_text_says_of_a_name_is_the_same_with_its_clues_read_once():
    """`named_instances` searches a pattern only where the text's clues (`_Clues`: capitals after
    "the", sentence openers, the noun before a list) let it match: the answers are those of every
    pattern searched, on texts made to sit at each clue's edge."""
    import random

    from kg.concepts.instances import _Clues, _says_instance

    every = _Clues("\u00e9")  # a text that is not ASCII: no clue, every pattern searched
    assert every.capitalized is every.openers is every.listed is None
    texts = ["the The Adam optimizer", "THE ADAM OPTIMIZER", "Optimizers, such as SGD, RMSProp and Adam.",
             "optimizers like Adam", "optimizers-like Adam", "e.g. Adam is an optimizer", "x. Adam (Kingma) is the best optimizer",
             "the\nAdam\noptimizer", "Models, e.g., BERT and GPT.", "the Adam-based optimizer", "SGD is the optimizer",
             "methods including\tSGD and Adam", "optimizers , such as Adam.", "A Robust Method", "likelihood Adam optimizer"]
    words = ["the", "The", "Adam", "adam", "ADAM", "optimizer", "optimizers", "such as", "is", "an", ".", ",", "and",
             "like", "SGD", "e.g.", "model", "models", "including", "(x)", ";"]
    rng = random.Random(20261204)
    texts += [" ".join(rng.choice(words) for _ in range(rng.randint(3, 14))) for _ in range(2000)]
    for text in texts:
        clues = _Clues(text)
        for stem in ("adam", "sgd", "bert", "robust"):
            for noun in ("optimizer", "model", "method"):
                assert _says_instance(text, stem, noun, clues) == _says_instance(text, stem, noun, every), (text, stem, noun)


def test_two_expansions_of_one_acronym_that_differ_in_a_word_are_one_concept(real_embedder):
    index = merge_concepts([
        ("p1", ["stochastic gradient method"], [("SGD", "stochastic gradient method")]),
        ("p2", ["stochastic gradient descent"], [("SGD", "stochastic gradient descent")]),
        ("p3", ["SGD"], []),
        ("p4", ["contrastive learning"], [("CL", "contrastive learning")]),
        ("p5", ["continual learning"], [("CL", "continual learning")]),
    ], embed=real_embedder.embed)
    a = index.assignment
    assert a[("p1", "stochastic gradient method")] == a[("p2", "stochastic gradient descent")] == a[("p3", "SGD")]
    assert a[("p4", "contrastive learning")] != a[("p5", "continual learning")]


def test_a_synonym_label_never_makes_its_concept_broader_than_itself(hash_embedder):
    """The seeds' case: `EF` (error feedback) and `error feedback methods` join under the key "error feedback"
    with the label "error feedback methods", whose head is the key itself."""
    index = merge_concepts([("p1", ["EF", "error feedback methods"], [("EF", "error feedback")])],
                           embed=hash_embedder.embed, synonym_threshold=-1.0)
    (concept,) = index.concepts
    assert (concept.key, concept.label, concept.broader) == ("error feedback", "error feedback methods", ())


def test_a_head_that_is_the_label_of_a_merged_concept_is_that_concept(hash_embedder):
    """`linear program` and `linear programming`, two expansions of LP, are one concept, labelled
    `linear programming`, keyed `linear program`; the head of `integer linear programming` is that
    concept, not a second one of the same label (a 10,000-abstract ML build had five such pairs)."""
    lp, lps = (("LP", "linear programming"),), (("LP", "linear program"),)
    extractions = [("p1", ["linear programs"], lps), ("p2", ["linear program"], ()), ("p3", ["linear programming"], lp),
                   ("p4", ["linear programming"], ()), ("p5", ["integer linear programming"], ()),
                   ("p6", ["integer linear programming"], ())]
    index = merge_concepts(extractions, embed=hash_embedder.embed, synonym_threshold=-1.0)
    by_id = index.by_id()
    merged = by_id[index.assignment[("p2", "linear program")]]
    assert merged.id == index.assignment[("p3", "linear programming")] and merged.label == "linear programming"
    assert merged.key == "linear program"
    assert [c.label for c in index.concepts].count("linear programming") == 1
    assert by_id[index.assignment[("p5", "integer linear programming")]].broader == (merged.id,)
