"""A small hand-made knowledge graph, built by the real `kg.graph.build_graph`.

No model runs: the papers, their ranked keyphrases and the concept index (what
`kg.concepts.merge.merge_concepts` would return) are written out below, so the graph has the exact
shape `kg build` produces (docs/model.md) and every figure can be checked by hand:

======  =====  ====  =====================================================================
paper   venue  year  subject edges (rank: concept, score, phrase)
======  =====  ====  =====================================================================
P1      ICML   2024  1 zeroth-order-optimization 0.7100 "zeroth-order optimization";
                     2 large-language-model 0.6500 "LLMs"; 3 fine-tuning 0.5200 "fine-tuning";
                     (4 "the memory footprint" joins no concept); 5 memory-efficiency 0.3100
P2      ICML   2025  1 stochastic-zeroth-order-optimization 0.6842; 2 federated-learning 0.6120
                     "FL"; 3 stochastic-gradient-descent 0.4433 "SGD" (rank 4, "stochastic
                     gradient descent" 0.4012, joins the same concept and is dropped)
P3      ICLR   2025  1 stochastic-gradient-descent 0.8010; 2 optimization 0.3305;
                     3 large-language-model 0.2950 "large language models"
P4      ICLR   2024  1 federated-learning 0.7421; 2 large-language-model 0.7012 "LLM";
                     3 fine-tuning 0.5567; 4 zeroth-order-optimization 0.4100; (5 "memory":
                     generic, no link)
P5      ICLR   2025  1 memory-efficiency 0.5000; 2 fine-tuning 0.4500 "fine tuning";
                     3 optimization -0.0412 (a negative cosine score); (4 "memory" names the
                     generic concept memory: no subject link)
P6      -      -     1 stochastic-gradient-descent 0.6200 "SGD" (no venue, no year)
======  =====  ====  =====================================================================

Concept hierarchy (skos:broader): stochastic-zeroth-order-optimization ->
zeroth-order-optimization -> optimization; large-language-model -> language-model (a broader
concept with no paper of its own). Alternative labels: LLM/LLMs, SGD, FL, ZO optimization.
Every concept has a specificity (`_SPECIFICITY`); memory is generic: P4 and P5 name it (its
kgv:mentionCount 2), none has it as subject.
P1 has a GitHub URL (a code repository) and P3 an arXiv URL (a plain link).

The map (`kg.graph.layout.add_map`, as the build runs it) places the 7 concepts two or more papers
share and, to fill a small map, stochastic-zeroth-order-optimization (one paper; not
language-model, none) in two clusters: 1 "memory efficiency / fine-tuning / zeroth-order
optimization" (those three, large-language-model and optimization; the dominant cluster of P1, P3,
P4 and P5) and 2 "stochastic gradient descent / federated learning" (those two and
stochastic-zeroth-order-optimization, which, of one paper, names no cluster; P2 and P6).

Authors (in byline order) and identifiers, as a BibTeX or OpenAlex input gives them:

======  ==========================================================  ===========================
paper   authors                                                     identifiers
======  ==========================================================  ===========================
P1      Ada Lovelace (ORCID 0000-0002-1825-0097), Alan Turing        DOI 10.5555/zo-llm.2024
P2      Alan Turing, Grace Hopper (ORCID 0000-0001-5109-3700)        -
P3      ada lovelace (no ORCID: joins Ada Lovelace, the one so       arXiv 2501.00001
        named with one), Grace Hopper
P4      Alan  Turing (two spaces: the same name), Katherine Johnson  DOI 10.5555/fedft.2024
P5      Katherine Johnson, A. Turing (another name: another person)  -
P6      -                                                            -
======  ==========================================================  ===========================

So five persons: Ada Lovelace (P1, P3), Alan Turing (P1, P2, P4), Grace Hopper (P2, P3),
Katherine Johnson (P4, P5), A. Turing (P5).

Concept types and typed relations (`fixture_types`, a hand-written `ConceptTypes`, as
`kg.concepts.entities.type_concepts` would give them from entity mentions):

====================================  ========================  ==========================
concept                               type votes                entity_type
====================================  ========================  ==========================
federated-learning                    Task 2, Method 1          Task
fine-tuning                           Task 3                    Task
large-language-model                  Method 2, Material 1      Method
memory-efficiency                     Metric 2                  Metric
optimization                          Method 1, Task 1          none (a tie)
stochastic-gradient-descent           Method 3                  Method
stochastic-zeroth-order-optimization  Method 1                  Method
zeroth-order-optimization             Method 3                  Method
====================================  ========================  ==========================

=====================================================================  ==============================
relation (head TYPE tail)                                              evidence (paper: score)
=====================================================================  ==============================
zeroth-order-optimization USED-FOR fine-tuning                         P1 0.91, P4 0.74 (support 2)
stochastic-zeroth-order-optimization USED-FOR federated-learning       P2 0.88
stochastic-gradient-descent USED-FOR optimization                      P3 0.83
stochastic-gradient-descent USED-FOR large-language-model              P3 0.67
memory-efficiency EVALUATE-FOR zeroth-order-optimization               P1 0.62
memory-efficiency EVALUATE-FOR fine-tuning                             P5 0.58
stochastic-gradient-descent COMPARE stochastic-zeroth-order-optimization  P2 0.95 (symmetric)
stochastic-zeroth-order-optimization HYPONYM-OF zeroth-order-optimization P2 0.70
=====================================================================  ==============================

Each evidence sentence is a sentence of the paper's abstract (P1's second, P3's first, the others' whole first)."""

from __future__ import annotations

import networkx as nx

from kg.concepts.entities import ConceptTypes, Evidence, TypedRelation
from kg.concepts.model import Concept, ConceptIndex
from kg.extract.keyphrases import Keyphrase, PaperKeyphrases
from kg.graph.build import build_graph
from kg.graph.layout import add_map
from kg.rdf.vocabulary import DEFAULT_BASE
from kg.text.records import Author
from kg.text.sources import Paper, Source

__all__ = ["ADA", "GRACE", "MODEL", "MODEL_SHA256", "P1", "P2", "P3", "P4", "P5", "P6", "fixture_graph", "fixture_types"]

P1, P2, P3, P4, P5, P6 = (f"p{i}{'0' * 14}" for i in range(1, 7))  # "p" + 15 hex digits, as kg makes them
MODEL = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_SHA256 = "0" * 64
GITHUB = "https://github.com/example/zo-llm"
ARXIV = "https://arxiv.org/abs/2501.00001"

# id: (label, title, venue, year, urls, source, source_id, abstract)
_PAPERS = {
    P1: ("Zeroth-order fine-tuning of LLMs", "Zeroth-Order Fine-Tuning of LLMs", "ICML", 2024, (GITHUB,),
         Source("seeds/fixture.txt", paragraph=1), None,
         "Fine-tuning large language models (LLMs) with back-propagation needs much memory. We fine-tune LLMs "
         f"with zeroth-order optimization and cut the memory footprint. Code: {GITHUB}"),
    P2: ("Federated zeroth-order optimization", None, "ICML", 2025, (),
         Source("seeds/fixture.txt", paragraph=2), None,
         "We study stochastic zeroth-order optimization in federated learning (FL), where clients cannot compute "
         "gradients, and compare it with stochastic gradient descent (SGD)."),
    P3: ("Stochastic gradient descent at scale", None, "ICLR", 2025, (ARXIV,),
         Source("seeds/fixture.txt", paragraph=3), None,
         f"We prove convergence rates of stochastic gradient descent for non-convex optimization and train large "
         f"language models with it. Preprint: {ARXIV}"),
    P4: ("Federated fine-tuning of LLMs", None, "ICLR", 2024, (),
         Source("seeds/fixture.jsonl", row=1), "openreview:abc123",
         "Federated learning lets clients fine-tune an LLM without sharing data; zeroth-order optimization keeps "
         "the communication small."),
    P5: ("Memory-efficient fine-tuning", None, "ICLR", 2025, (),
         Source("seeds/fixture.jsonl", row=2), "openreview:def456",
         "Memory efficiency matters for fine tuning; we trade optimization accuracy for memory."),
    P6: ("SGD without a venue", None, None, None, (),
         Source("seeds/fixture.txt", paragraph=4), None,
         "A note on SGD."),
}

ADA, GRACE = "0000-0002-1825-0097", "0000-0001-5109-3700"
# id: (authors, DOI, arXiv id)
_AUTHORS = {
    P1: ((Author("Ada Lovelace", ADA), Author("Alan Turing")), "10.5555/zo-llm.2024", None),
    P2: ((Author("Alan Turing"), Author("Grace Hopper", GRACE)), None, None),
    P3: ((Author("ada lovelace"), Author("Grace Hopper")), None, "2501.00001"),
    P4: ((Author("Alan  Turing"), Author("Katherine Johnson")), "10.5555/fedft.2024", None),
    P5: ((Author("Katherine Johnson"), Author("A. Turing")), None, None),
    P6: ((), None, None),
}

# paper id: [(phrase, score, rank, concept id or None)], best first, as KeyBERT ranks them
_KEYPHRASES = {
    P1: [("zeroth-order optimization", 0.71, 1, "zeroth-order-optimization"),
         ("LLMs", 0.65, 2, "large-language-model"),
         ("fine-tuning", 0.52, 3, "fine-tuning"),
         ("the memory footprint", 0.4, 4, None),
         ("memory efficiency", 0.31, 5, "memory-efficiency")],
    P2: [("stochastic zeroth-order optimization", 0.6842, 1, "stochastic-zeroth-order-optimization"),
         ("FL", 0.612, 2, "federated-learning"),
         ("SGD", 0.4433, 3, "stochastic-gradient-descent"),
         ("stochastic gradient descent", 0.4012, 4, "stochastic-gradient-descent")],
    P3: [("stochastic gradient descent", 0.801, 1, "stochastic-gradient-descent"),
         ("optimization", 0.3305, 2, "optimization"),
         ("large language models", 0.295, 3, "large-language-model")],
    P4: [("federated learning", 0.7421, 1, "federated-learning"),
         ("LLM", 0.7012, 2, "large-language-model"),
         ("fine-tuning", 0.5567, 3, "fine-tuning"),
         ("zeroth-order optimization", 0.41, 4, "zeroth-order-optimization"),
         ("memory", 0.1, 5, "memory")],
    P5: [("memory efficiency", 0.5, 1, "memory-efficiency"),
         ("fine tuning", 0.45, 2, "fine-tuning"),
         ("optimization", -0.0412, 3, "optimization"),
         ("memory", 0.2, 4, "memory")],
    P6: [("SGD", 0.62, 1, "stochastic-gradient-descent")],
}

# id: (key, label, alt_labels, broader ids)
_CONCEPTS = {
    "federated-learning": ("federated learning", "federated learning", ("FL",), ()),
    "fine-tuning": ("fine tuning", "fine-tuning", (), ()),
    "language-model": ("language model", "language model", (), ()),
    "large-language-model": ("large language model", "large language model", ("LLM", "LLMs"), ("language-model",)),
    "memory": ("memory", "memory", (), ()),
    "memory-efficiency": ("memory efficiency", "memory efficiency", (), ()),
    "optimization": ("optimization", "optimization", (), ()),
    "stochastic-gradient-descent": ("stochastic gradient descent", "stochastic gradient descent", ("SGD",), ()),
    "stochastic-zeroth-order-optimization": ("stochastic zeroth order optimization", "stochastic zeroth-order optimization",
                                             (), ("zeroth-order-optimization",)),
    "zeroth-order-optimization": ("zeroth order optimization", "zeroth-order optimization", ("ZO optimization",),
                                  ("optimization",)),
}


# id: specificity (kg.concepts.specificity); "memory" is generic (under 0.45): no paper's subject
_SPECIFICITY = {"federated-learning": 0.81, "fine-tuning": 0.62, "language-model": 0.5, "large-language-model": 0.66,
                "memory": 0.31, "memory-efficiency": 0.7, "optimization": 0.47, "stochastic-gradient-descent": 0.72,
                "stochastic-zeroth-order-optimization": 0.9, "zeroth-order-optimization": 0.85}


# concept id: {type: mentions} (kg.concepts.entities.type_concepts' votes); optimization's tie elects no type
_VOTES = {"federated-learning": {"Method": 1, "Task": 2}, "fine-tuning": {"Task": 3},
          "large-language-model": {"Material": 1, "Method": 2}, "memory-efficiency": {"Metric": 2},
          "optimization": {"Method": 1, "Task": 1}, "stochastic-gradient-descent": {"Method": 3},
          "stochastic-zeroth-order-optimization": {"Method": 1}, "zeroth-order-optimization": {"Method": 3}}

_P3_FIRST = ("We prove convergence rates of stochastic gradient descent for non-convex optimization and train large "
             "language models with it.")  # P3's first sentence

# (head, type, tail, [(paper, the stating sentence of its abstract, score)]); COMPARE's head is the lesser id
_RELATIONS = [
    ("memory-efficiency", "EVALUATE-FOR", "fine-tuning",
     [(P5, "Memory efficiency matters for fine tuning; we trade optimization accuracy for memory.", 0.58)]),
    ("memory-efficiency", "EVALUATE-FOR", "zeroth-order-optimization",
     [(P1, "We fine-tune LLMs with zeroth-order optimization and cut the memory footprint.", 0.62)]),
    ("stochastic-gradient-descent", "COMPARE", "stochastic-zeroth-order-optimization",
     [(P2, _PAPERS[P2][7], 0.95)]),
    ("stochastic-gradient-descent", "USED-FOR", "large-language-model",
     [(P3, _P3_FIRST, 0.67)]),
    ("stochastic-gradient-descent", "USED-FOR", "optimization",
     [(P3, _P3_FIRST, 0.83)]),
    ("stochastic-zeroth-order-optimization", "HYPONYM-OF", "zeroth-order-optimization", [(P2, _PAPERS[P2][7], 0.7)]),
    ("stochastic-zeroth-order-optimization", "USED-FOR", "federated-learning", [(P2, _PAPERS[P2][7], 0.88)]),
    ("zeroth-order-optimization", "USED-FOR", "fine-tuning",
     [(P1, "We fine-tune LLMs with zeroth-order optimization and cut the memory footprint.", 0.91),
      (P4, _PAPERS[P4][7], 0.74)]),
]


def _evidence(pid: str, sentence: str, score: float) -> Evidence:
    """The evidence of *pid* stating a relation in *sentence*, a slice of its abstract."""
    start = _PAPERS[pid][7].index(sentence)
    return Evidence(pid, start, start + len(sentence), score)


def fixture_types() -> ConceptTypes:
    """The fixture's concept types and typed relations (see the module docstring)."""
    relations = tuple(TypedRelation(h, t, o, tuple(_evidence(*e) for e in found)) for h, t, o, found in _RELATIONS)
    return ConceptTypes(_VOTES, relations)


def fixture_graph(*, typed: bool = True, types: ConceptTypes | None = None,
                  keywords: dict[str, tuple[str, ...]] | None = None) -> nx.Graph:
    """The fixture graph: 6 papers, 10 concepts (one generic), 2 venues (see the module docstring);
    with the concepts' types and typed relations unless not *typed* (*types* instead of the fixture's);
    the papers have no authors' keywords but those *keywords* gives (paper id -> keywords, as `Paper` holds them)."""
    papers = [
        Paper(pid, abstract, abstract, title=title, venue=venue, year=year, source_id=source_id, urls=urls, sources=(source,),
              authors=_AUTHORS[pid][0], doi=_AUTHORS[pid][1], arxiv=_AUTHORS[pid][2], keywords=(keywords or {}).get(pid, ()))
        for pid, (_, title, venue, year, urls, source, source_id, abstract) in _PAPERS.items()
    ]
    keyphrases = [
        PaperKeyphrases(pid, tuple(Keyphrase(phrase, score, rank) for phrase, score, rank, _ in found))
        for pid, found in _KEYPHRASES.items()
    ]
    assignment = {(pid, phrase): cid for pid, found in _KEYPHRASES.items() for phrase, _, _, cid in found if cid}
    concepts = tuple(
        Concept(cid, key, label, tuple(sorted(alt)), tuple(sorted({p for (p, _), c in assignment.items() if c == cid})), broader,
                specificity=_SPECIFICITY[cid], generic=_SPECIFICITY[cid] < 0.45)
        for cid, (key, label, alt, broader) in sorted(_CONCEPTS.items())
    )
    metadata = {  # as kg's pipeline sets it, with fixed values (not today's Settings defaults)
        "base_iri": DEFAULT_BASE,
        "model": MODEL,
        "model_sha256": MODEL_SHA256,
        "extractor": "KeyBERT (noun-phrase candidates, MMR)",
        "settings": {"top_n": 10, "diversity": 0.4, "use_mmr": True, "max_words": 5},
        "fingerprint": "4881a8e23d5a2e31",
        "kg_version": "0.1.0",
    }
    labels = {pid: d[0] for pid, d in _PAPERS.items()}
    G = build_graph(papers, keyphrases, ConceptIndex(concepts, assignment), labels, metadata=metadata, types=(types or fixture_types()) if typed else None)
    add_map(G)  # as the build does: clusters and positions
    return G


def unsorted_orders(G: nx.Graph) -> nx.Graph:
    """*G* (the fixture graph) with P1's URLs and sources and a concept's broader concepts each in an order that is
    not their sorted one (RDF keeps it in a ``kgv:urlOrder``, ``sourceOrder``, ``broaderOrder`` literal)."""
    p1 = G.nodes[f"paper:{P1}"]
    p1["urls"] = [*p1["urls"], "https://arxiv.org/abs/2501.00001"]  # github.com's first
    p1["sources"] = [*p1["sources"], "seeds/fixture.jsonl#row=9"]  # fixture.txt's first
    szoo = G.nodes["concept:stochastic-zeroth-order-optimization"]
    szoo["broader"] = [*szoo["broader"], "concept:stochastic-gradient-descent"]  # zeroth-order-optimization first
    return G


if __name__ == "__main__":  # print the fixture's RDF: python tests/fixture_graph.py
    from kg.rdf.statements import to_rdf
    from kg.rdf.write import serialize

    print(serialize(to_rdf(fixture_graph()), "turtle"))
