"""Acronym senses: a paper's own definition wins, and another paper's long form is given to an
acronym only where the paper's text supports it (`kg.concepts.senses`).

Each wrong merge issue 49 found in held-out ICLR abstracts is rebuilt here from short synthetic
abstracts: the paper that defines the acronym one way, and a paper that uses it meaning another.
"""

from __future__ import annotations

import pytest

from kg.concepts.acronyms import acronym_tokens, expand_acronyms, short_key
from kg.concepts.merge import merge_concepts
from kg.concepts.senses import choose_senses, sense_scores
from kg.text.acronyms import definition_pairs

LLM_PAPERS = {
    "llm1": "Large language models (LLMs) follow instructions. We study prompting of language models for reasoning tasks "
            "and chain of thought prompts that improve arithmetic reasoning of the language model.",
    "llm2": "Large language models (LLMs) hallucinate. We propose retrieval of documents to ground the answers of "
            "language models, reducing hallucination in question answering with prompts.",
    "llm3": "We align large language models (LLMs) with human preferences. Instruction tuning and preference "
            "optimization of language models make their answers to prompts more helpful.",
}


def merged(texts: dict[str, str], phrases: dict[str, list[str]]):
    """The concept index of *texts*, each paper with its *phrases* and the definitions its text makes."""
    return merge_concepts([(pid, phrases.get(pid, []), definition_pairs(text)) for pid, text in texts.items()], texts=texts)


def key_of(index, pid: str, phrase: str) -> str:
    return index.by_id()[index.assignment[(pid, phrase)]].key


def test_an_acronym_used_in_a_paper_like_those_that_define_it_takes_their_long_form():
    texts = dict(LLM_PAPERS, use="Reasoning of LLMs improves with prompts: we study chain of thought prompting and "
                                 "instruction following of language models on reasoning tasks.")
    index = merged(texts, {"use": ["LLMs", "LLM-based agents"], "llm1": ["large language models"]})
    assert key_of(index, "use", "LLMs") == "large language model"
    assert key_of(index, "use", "LLM-based agents") == "large language model based agent"
    assert index.assignment[("use", "LLMs")] == index.assignment[("llm1", "large language models")]


def test_an_acronym_in_a_paper_about_something_else_stays_itself():
    # FID defined once as a fairness metric; FID scores of an image generator are Frechet inception distances
    texts = {
        "fair": "We measure feature importance disparity (FID) between subgroups. Fairness audits of tabular "
                "classifiers find features whose importance differs across protected groups.",
        "gen": "Our diffusion model generates images of higher quality: FID scores on CIFAR-10 and ImageNet improve "
               "over generative adversarial networks, with fewer sampling steps.",
    } | LLM_PAPERS
    index = merged(texts, {"gen": ["FID scores"], "fair": ["feature importance disparity"]})
    assert key_of(index, "gen", "FID scores") == "fid score"
    # LiDAR: a metric one paper defines is no sensor of self-driving papers
    texts = {
        "metric": "We propose linear discriminant analysis rank (LiDAR), a metric of the quality of joint embedding "
                  "representations learned by self-supervised learning, from the rank of their covariance.",
        "car1": "Self-driving cars perceive the road with LiDAR point clouds and cameras; we fuse both sensors for 3D "
                "object detection of pedestrians and vehicles.",
        "car2": "Autonomous driving needs LiDAR sensing in rain: we simulate weather noise on point clouds and train "
                "detectors of vehicles that keep their accuracy.",
    }
    index = merged(texts, {"car1": ["LiDAR point clouds"], "car2": ["LiDAR"]})
    assert key_of(index, "car1", "LiDAR point clouds") == "lidar point cloud"
    assert key_of(index, "car2", "LiDAR") == "lidar"


def test_one_acronym_two_senses_each_paper_takes_the_one_its_text_supports():
    texts = {
        "q1": "Variational quantum algorithms (VQAs) run parameterized quantum circuits on noisy quantum hardware; "
              "barren plateaus of the circuit parameters slow their training.",
        "q2": "We train variational quantum algorithms (VQAs) on qubits with a classical optimizer of the quantum "
              "circuit parameters, avoiding barren plateaus.",
        "v1": "Visual question answering (VQA) asks questions about images; a model reads the image and the question "
              "text and answers with words.",
        "v2": "Models for visual question answering (VQA) answer questions about images by attending to image regions "
              "that the question text names.",
        "use": "Text-based VQA datasets ask questions about text in images: the model reads scene text in the image "
               "and answers the question.",
    }
    index = merged(texts, {"use": ["text-based VQA datasets", "VQA"]})
    assert key_of(index, "use", "VQA") == "visual question answering"
    assert "quantum" not in key_of(index, "use", "text-based VQA datasets")


def test_case_tells_acronyms_apart():
    # GPS (GraphGPS) is not GPs (Gaussian processes)
    assert short_key("GPS") != short_key("GPs") == short_key("GP")
    texts = {
        "gp": "Gaussian processes (GPs) give calibrated uncertainty for regression with kernels; we scale GP "
              "inference to large graphs of data.",
        "graph": "GPS layers combine message passing and attention on graphs: our graph transformer built from GPS "
                 "layers scales to large graphs of molecules.",
    }
    index = merged(texts, {"graph": ["GPS layers", "GPS"]})
    assert key_of(index, "graph", "GPS") == "gps"


def test_a_papers_own_definition_wins():
    texts = {
        "gp": "Gaussian processes (GPs) are priors over functions; sparse GP approximations scale them.",
        "agps": "We introduce the approximate Gaussian Proposal Sampler (a-GPS), a sampler of proposals for Markov "
                "chain Monte Carlo; a-GPS mixes faster than Gaussian process based proposals.",
        "qga": "Question generation and answering (QG/A) evaluates summaries: QG/A asks questions of a summary and "
               "checks the answers; graph based quadratic growth (QG) is not it.",
    }
    index = merged(texts, {"agps": ["a-GPS"], "qga": ["QG/A"]})
    assert key_of(index, "agps", "a-GPS") == "approximate gaussian proposal sampler"
    assert key_of(index, "qga", "QG/A") == "question generation and answering"


@pytest.mark.parametrize("name", ["EM-POWER", "IG-Net", "Malcom-PSGD", "FC-GFlowNets", "VCR-Graphormer", "CoRe-GD",
                                  "FB-GAN", "ED-NeRF", "DR-submodular", "PINNacle"])
def test_a_name_with_an_acronym_in_it_is_never_expanded_inside(name):
    senses = {"EM": "expectation maximization", "IG": "integrated gradient", "PSGD": "parallel stochastic gradient descent",
              "FC": "federated contrastive", "VCR": "visual commonsense reasoning", "GD": "gradient descent",
              "FB": "feedback", "GAN": "generative adversarial network", "ED": "encoder decoder",
              "NeRF": "neural radiance field", "DR": "distributionally robust", "PINN": "physics informed neural network"}
    phrase, expanded = expand_acronyms(acronym_tokens(name), {}, senses.get)
    assert (phrase, expanded) == (name, False)


def test_a_name_the_paper_defines_whole_takes_its_definition():
    text = "Flow-consistent GFlowNets (FC-GFlowNets) train generative flow networks on federated clients."
    local = {short_key(s): lg.lower() for s, lg in definition_pairs(text)}
    assert expand_acronyms(["FC-GFlowNets"], local, {}.get) == ("flow-consistent gflownets", True)


def test_an_english_word_in_capitals_takes_no_sense():
    phrase, expanded = expand_acronyms(acronym_tokens("US elections"), {}, {"US": "uniform sampling"}.get)
    assert (phrase, expanded) == ("US elections", False)


def test_no_support_no_expansion_and_the_scores_behind_it():
    defined = {"PI": {"path integral": ["a"], "proportional integral": ["b"]}}
    texts = {"a": "Path integral control of stochastic systems samples trajectories of the dynamics.",
             "b": "A proportional integral controller tunes the gains of feedback loops of a motor.",
             "use": "PI controllers tune feedback gains of a motor: we learn the proportional and integral gains.",
             "none": "We study PI on a benchmark of planning."}
    scores = sense_scores([("use", "PI"), ("none", "PI")], defined, texts)
    long, best, second, written = scores[("use", "PI")]
    assert long == "proportional integral" and best > second and not written
    assert choose_senses([("use", "PI"), ("none", "PI")], defined, texts) == {("use", "PI"): "proportional integral"}
    assert choose_senses([("use", "PI")], defined, {}) == {}  # no text, no evidence


def test_one_papers_odd_long_form_does_not_take_an_acronym_hundreds_define_otherwise():
    # "representation learning (RL)" defined once, "reinforcement learning (RL)" by five papers: a paper on
    # representations for RL that writes "representation learning" out means reinforcement learning by RL
    rl = {f"rl{i}": f"Reinforcement learning (RL) trains agents{i} with rewards; policies of the agent explore "
                    f"environments and maximize the return of episodes, with value functions and exploration." for i in range(5)}
    texts = rl | {
        "repr": "Representation learning (RL) learns features of images without labels, with contrastive losses "
                "on augmentations of the images.",
        "use": "Representation learning for online RL: we learn representations of states so that RL agents explore "
               "environments with rewards and maximize the return of episodes.",
    }
    index = merged(texts, {"use": ["online RL"]})
    assert key_of(index, "use", "online RL") == "online reinforcement learning"


def test_the_merge_in_partitions_of_any_size_is_the_merge_of_the_whole_corpus():
    """Each pass of the merge maps the partitions and adds their tables in order (`merge_rounds`): an
    acronym defined in one partition and used in another, a long form two definers share, a named
    instance ("the Adam optimizer") said in a third, the same concepts, labels and assignment."""
    texts = dict(LLM_PAPERS,
                 use="Reasoning of LLMs improves with prompts: we study chain of thought prompting and "
                     "instruction following of language models on reasoning tasks.",
                 v1="Visual question answering (VQA) asks questions about images; a model reads the image and the question "
                    "text and answers with words.",
                 v2="Models for visual question answering (VQA) answer questions about images by attending to image regions.",
                 q1="Variational quantum algorithms (VQAs) run parameterized quantum circuits on noisy quantum hardware.",
                 vqa="Text-based VQA datasets ask questions about text in images: the model reads scene text in the image.",
                 adam="We train the networks with the Adam optimizer and compare it with SGD on language models.",
                 sgd="Adam is fast; stochastic gradient descent (SGD) generalizes better for large language models.")
    phrases = {"use": ["LLMs", "LLM-based agents"], "llm1": ["large language models", "prompting"],
               "llm2": ["Large language models", "retrieval"], "vqa": ["text-based VQA datasets", "VQA"],
               "v1": ["visual question answering", "images"], "adam": ["adam optimizer", "SGD", "language models"],
               "sgd": ["Adam", "stochastic gradient descent", "language model"]}
    extractions = [(pid, phrases.get(pid, []), definition_pairs(text)) for pid, text in texts.items()]
    whole = merge_concepts(extractions, texts=texts)
    assert key_of(whole, "use", "LLMs") == "large language model" and key_of(whole, "vqa", "VQA") == "visual question answering"
    assert whole.assignment[("adam", "adam optimizer")] == whole.assignment[("sgd", "Adam")]
    for size in (1, 2, 3, len(texts)):
        parted = merge_concepts(extractions, texts=texts, partition_size=size)
        assert parted.concepts == whole.concepts, size
        assert list(parted.assignment.items()) == list(whole.assignment.items()), size
    assert merge_concepts(extractions, partition_size=2) == merge_concepts(extractions)  # no texts: the corpus's senses
    assert merge_concepts([], texts={}, partition_size=2).concepts == ()
