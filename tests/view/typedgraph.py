"""A small graph with typed concepts and typed relations, built by the real `kg.graph.build_graph`
(``types=ConceptTypes``) and laid out by tests/map_layout.py, for the map's and the explorer's tests.

======================  ===================  =====  ===============================
concept                 type (votes)         papers relations it heads (support)
======================  ===================  =====  ===============================
transformer             Method (5 M, 1 T)    4      USED-FOR machine translation (2),
                                                    HYPONYM-OF neural network (1)
machine translation     Task (4)             4      -
recurrent neural net    Method (2)           2      USED-FOR machine translation (1),
                                                    COMPARE transformer (1)
WMT14                   Dataset (2)          2      EVALUATE-FOR transformer (2)
BLEU                    Metric (3)           3      EVALUATE-FOR machine translation (2)
attention               none (1 M, 1 T)      2      PART-OF transformer (1)
neural network          Method (1)           2      -
beam search             - (no votes)         2      -
======================  ===================  =====  ===============================
"""

from __future__ import annotations

import networkx as nx
from map_layout import with_map

from kg.concepts.entities import ConceptTypes, Evidence, TypedRelation
from kg.concepts.model import Concept, ConceptIndex
from kg.extract.keyphrases import Keyphrase, PaperKeyphrases
from kg.graph.build import build_graph
from kg.text.papers import Paper

__all__ = ["ABSTRACTS", "TYPED", "sentence", "typed_graph"]

Q1, Q2, Q3, Q4, Q5 = (f"q{i}{'0' * 14}" for i in range(1, 6))
ABSTRACTS = {
    Q1: "We present the transformer. The transformer is used for machine translation and beats "
        "recurrent neural networks. We evaluate it on WMT14 with BLEU.",
    Q2: "Machine translation with a transformer and beam search. Attention is a part of the transformer. "
        "BLEU measures machine translation.",
    Q3: "Recurrent neural networks are used for machine translation. Neural networks again. Beam search helps.",
    Q4: "The transformer is a neural network. WMT14 evaluates the transformer, scored with BLEU for machine translation.",
    Q5: "Attention everywhere: a note with no stated relation.",
}
# concept id: (label, type votes, papers)
TYPED = {
    "transformer": ("transformer", {"Method": 5, "Task": 1}, (Q1, Q2, Q4, Q5)),
    "machine-translation": ("machine translation", {"Task": 4}, (Q1, Q2, Q3, Q4)),
    "recurrent-neural-network": ("recurrent neural network", {"Method": 2}, (Q1, Q3)),
    "wmt14": ("WMT14", {"Dataset": 2}, (Q1, Q4)),
    "bleu": ("BLEU", {"Metric": 3}, (Q1, Q2, Q4)),
    "attention": ("attention", {"Method": 1, "Task": 1}, (Q2, Q5)),
    "neural-network": ("neural network", {"Method": 1}, (Q3, Q4)),
    "beam-search": ("beam search", {}, (Q2, Q3)),
}


def sentence(paper: str, text: str) -> tuple[int, int]:
    """The offsets of *text* in *paper*'s abstract."""
    start = ABSTRACTS[paper].index(text)
    return start, start + len(text)


def _relation(head: str, kind: str, tail: str, *stated: tuple[str, str, float]) -> TypedRelation:
    return TypedRelation(head, kind, tail, tuple(Evidence(p, *sentence(p, text), score) for p, text, score in stated))


RELATIONS = (
    _relation("transformer", "USED-FOR", "machine-translation",
              (Q1, "The transformer is used for machine translation and beats recurrent neural networks.", 0.91),
              (Q2, "Machine translation with a transformer and beam search.", 0.62)),
    _relation("transformer", "HYPONYM-OF", "neural-network", (Q4, "The transformer is a neural network.", 0.7)),
    _relation("recurrent-neural-network", "USED-FOR", "machine-translation",
              (Q3, "Recurrent neural networks are used for machine translation.", 0.88)),
    _relation("recurrent-neural-network", "COMPARE", "transformer",
              (Q1, "The transformer is used for machine translation and beats recurrent neural networks.", 0.66)),
    _relation("wmt14", "EVALUATE-FOR", "transformer", (Q1, "We evaluate it on WMT14 with BLEU.", 0.8),
              (Q4, "WMT14 evaluates the transformer, scored with BLEU for machine translation.", 0.85)),
    _relation("bleu", "EVALUATE-FOR", "machine-translation", (Q2, "BLEU measures machine translation.", 0.77),
              (Q4, "WMT14 evaluates the transformer, scored with BLEU for machine translation.", 0.5)),
    _relation("attention", "PART-OF", "transformer", (Q2, "Attention is a part of the transformer.", 0.73)),
)


def typed_graph(*, types: bool = True) -> nx.Graph:
    """The graph of the module docstring (without its types unless *types*), laid out."""
    papers = [Paper(p, a, a, venue="ACL", year=2020 + i) for i, (p, a) in enumerate(ABSTRACTS.items())]
    of = {p: [c for c, (_, _, ps) in TYPED.items() if p in ps] for p in ABSTRACTS}
    keyphrases = [PaperKeyphrases(p, tuple(Keyphrase(TYPED[c][0], round(0.9 - k / 10, 2), k + 1) for k, c in enumerate(cs)))
                  for p, cs in of.items()]
    assignment = {(p, TYPED[c][0]): c for p, cs in of.items() for c in cs}
    concepts = tuple(Concept(c, label.lower(), label, (), tuple(sorted(ps))) for c, (label, _, ps) in sorted(TYPED.items()))
    votes = {c: votes for c, (_, votes, _) in TYPED.items() if votes}
    G = build_graph(papers, keyphrases, ConceptIndex(concepts, assignment), {p: f"paper {p[1]}" for p in ABSTRACTS},
                    metadata={"base_iri": "https://example.org/kg/"},
                    types=ConceptTypes(votes, RELATIONS) if types else None)
    return with_map(G)
