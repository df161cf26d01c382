"""Specificity: how much a concept says about the papers it is a concept of, measured on the corpus.

A concept is general when naming it tells little about a paper: ``learning``, ``networks``,
``training`` in ML abstracts, ``energy`` or ``cells`` elsewhere. Three corpus statistics say so,
none of them a word list:

- **cohesion** (after VOSviewer's relevance score: a term whose co-occurrences spread evenly over
  the corpus is general): how much more alike the papers under the concept (its own and its
  narrower concepts') are than random pairs of papers of the corpus, on TF-IDF vectors of their
  texts without the concept's own words. The mean pairwise cosine of a random set is the
  corpus's, whatever its size, so the ratio does not favour rare concepts; it is shrunk towards
  "unknown" for few papers.
- **keyphraseness** (Mihalcea & Csomai 2007): of the papers whose text contains the concept's
  words, the share that have it as a keyphrase. A general word is everywhere and rarely the point.
- **countability**, for a concept of one word: the share of its uses in the plural. A single
  count noun (``agents``, ``nodes``, ``layers``, ``cells``, ``particles``) names members of a class,
  not a topic (``privacy``, ``regret``, ``planning``).

Where the papers carry their authors' keywords, a fourth: **authors' choice**. A concept the authors
of at least `MIN_CHOSEN` papers give as a keyword, and of at least `AUTHOR_KEYPHRASENESS` of the papers
with keywords whose text contains it (keyphraseness with the authors' choices), is not generic,
however frequent: ``deep learning``, ``transformers``, ``interpretability`` are what researchers
file their papers under; ``learning``, ``agents``, ``training`` are in thousands of texts and
almost no paper's keywords. Read the other way, a concept in the texts of hundreds of papers with
keywords that under 1 % of them give (``downstream tasks``, ``optimal policy``) is generic.

`specificity` combines them into [0, 1] (1 = most specific); a concept under `GENERIC_BELOW` is
*generic*: it is no paper's subject any more (kg.graph.build), but stays as a broader concept.
The constants were chosen on the dev half of hand-labelled ML concepts and checked on
Inspec, SemEval-2010 and NUS builds (docs/model.md, "Specificity").
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial

from kg.common.processes import Beside, Now
from kg.common.rounds import LocalRounds, Rounds
from kg.concepts.evidence import (ConceptTable, TextCounts, add_counts, add_sums, analyze_texts, count_keys, part_key_counts,
                                  part_sums, part_term_counts, partition_papers, plural_shares, weigh)
from kg.concepts.evidence import cohesion as measure_cohesion
from kg.concepts.model import Concept, ConceptIndex

__all__ = ["GENERIC_BELOW", "Evidence", "concept_evidence", "score_specificity", "specificity"]

# A concept whose specificity is under this is generic (chosen on the dev half of the labelled concepts).
GENERIC_BELOW = 0.45
# Papers this many times as alike as random pairs of the corpus: cohesion counts fully.
FULL_COHESION = 4.0
# A concept that is a keyphrase of this share of the papers that contain its words or fewer:
# keyphraseness counts nothing (a log scale up to 1).
LEAST_KEYPHRASENESS = 0.01
# Cohesion measured on few papers is noisy: it is shrunk towards "unknown" (0.5) as if that had been
# seen on this many papers more (a concept under five papers counts half).
PRIOR_WEIGHT = 4
# What a single word used in the plural half of the time or more loses.
COUNT_NOUN_PENALTY = 0.2
# Authors' choice: a concept given as a keyword by this many papers or more, and by at least this share of
# the papers with keywords whose text contains it, is at least at the line (not generic). The share
# separates, on the 12,981 ML abstracts with keywords, the terms authors file papers under (``neural
# networks`` 0.08, ``machine learning`` 0.11, ``generalization`` 0.16, ``transformers`` 0.37) from the
# words every text has (``learning`` 0.004, ``training`` 0.002, ``agents`` 0.01, ``representations`` 0.01);
# docs/concepts.md.
AUTHOR_KEYPHRASENESS = 0.05
MIN_CHOSEN = 3
# Authors' neglect, the same statistic read the other way: a concept in the texts of this many papers with
# keywords or more, given as a keyword by under `NEVER_CHOSEN` of them, is generic however cohesive
# (``downstream tasks`` 1 of 402, ``machine learning models`` 0 of 246, ``optimal policy`` 0 of 139,
# ``training samples`` 0 of 145): what papers use, not what they are about. At 100 papers, a term authors
# chose at the 5 % of ``neural networks`` would show no more than one choice once in 25 corpora.
MIN_UNCHOSEN = 100
NEVER_CHOSEN = 0.01
# Keywords that name no concept of the corpus (another language, a controlled vocabulary) say nothing
# about its concepts: they count only where at least this share of the papers with keywords name one.
KEYWORD_COVERAGE = 0.5


@dataclass(frozen=True)
class Evidence:
    """What `specificity` reads of one concept: its papers under it (its own and its narrower
    concepts'), cohesion (their mean pairwise similarity over the corpus's; None under two
    papers), the papers that name it and that contain its words, and (one word) its plural share."""

    under: int
    cohesion: float | None
    named: int
    containing: int
    plural: float | None
    chosen: int = 0  # papers whose authors give it as a keyword
    chosen_of: int = 0  # papers with keywords whose text contains it


def specificity(e: Evidence) -> float:
    """The specificity in [0, 1] of a concept with evidence *e* (module docstring).

    >>> round(specificity(Evidence(under=200, cohesion=4.0, named=60, containing=120, plural=None)), 3)
    0.92
    >>> round(specificity(Evidence(under=3800, cohesion=1.1, named=320, containing=5500, plural=0.0)), 3)
    0.226
    """
    if e.cohesion is None:
        alike = 0.5  # unknown
    else:
        observed = min(1.0, max(0.0, math.log(max(e.cohesion, 1e-9)) / math.log(FULL_COHESION)))
        weight = e.under - 1  # the evidence of k papers is worth k - 1 against PRIOR_WEIGHT for "unknown"
        alike = (weight * observed + PRIOR_WEIGHT * 0.5) / (weight + PRIOR_WEIGHT)
    if e.named == 0:
        key = 0.5  # a broader concept no paper names: unknown
    else:
        share = min(1.0, e.named / max(e.containing, e.named))
        key = min(1.0, max(0.0, math.log(share / LEAST_KEYPHRASENESS) / math.log(1 / LEAST_KEYPHRASENESS)))
    value = (alike + key) / 2
    if e.plural is not None:
        value -= COUNT_NOUN_PENALTY * min(1.0, 2 * e.plural)
    if e.chosen >= MIN_CHOSEN and e.chosen >= AUTHOR_KEYPHRASENESS * max(e.chosen_of, e.chosen):
        value = max(value, GENERIC_BELOW)  # what authors file their papers under is no generic word
    elif e.chosen_of >= MIN_UNCHOSEN and e.chosen < NEVER_CHOSEN * e.chosen_of:
        value = min(value, GENERIC_BELOW - 0.001)  # what hundreds of authors never file a paper under
    return min(1.0, max(0.0, value))


def score_specificity(index: ConceptIndex, texts: Mapping[str, str],
                      keywords: Mapping[str, Sequence[str]] | None = None, *, partition_size: int | None = None,
                      beside: Beside | None = None, rounds: Rounds | None = None) -> ConceptIndex:
    """*index* with each concept's `specificity` (3 decimals) and `generic` set, measured on the
    papers' *texts* (paper id -> text; the papers of *index*) and their authors' *keywords*
    (paper id -> keywords, for the papers that have some); *partition_size*, *beside* and *rounds* as
    `concept_evidence` takes them."""
    evidence = concept_evidence(index.concepts, texts, keywords, partition_size=partition_size, beside=beside, rounds=rounds)
    scored = []
    for c in index.concepts:
        value = round(specificity(evidence[c.id]), 3)
        scored.append(replace(c, specificity=value, generic=value < GENERIC_BELOW))
    return ConceptIndex(tuple(scored), index.assignment)


def concept_evidence(concepts: Sequence[Concept], texts: Mapping[str, str],
                     keywords: Mapping[str, Sequence[str]] | None = None, *, partition_size: int | None = None,
                     beside: Beside | None = None, rounds: Rounds | None = None) -> dict[str, Evidence]:
    """The `Evidence` of each concept (by id), from the corpus *texts* (paper id -> text) and the
    authors' *keywords* (paper id -> keywords): two rounds of a map over partitions of *partition_size*
    papers (None: one) and a reduce (`kg.concepts.evidence`), the same figures, to the last bit, whatever
    the partitions. *beside* (`kg.common.processes.Beside`) may run the TF-IDF half of round A and round B
    while this process counts the keys in the texts (the other half of round A); *rounds*
    (`kg.common.rounds.Rounds`) may run the maps elsewhere (a Dask cluster's workers: `beside` is not read)."""
    table = ConceptTable.of(concepts)
    partitions = partition_papers(concepts, texts, keywords, size=partition_size)
    if rounds is None or isinstance(rounds, LocalRounds):
        # the TF-IDF half of round A, then round B, beside the keys' half of round A: two passes over the texts at once
        pending = (beside or Now)(partial(_tfidf_rounds, LocalRounds(), partitions, table))
        keyed = add_counts(count_keys(table, papers) for papers in partitions)
        counts, cohesion = pending.result()
    else:  # the partitions and their terms held where the rounds run; the tables come back
        handles = rounds.place(partitions)
        counts, cohesion = _tfidf_rounds(rounds, handles, table)
        keyed = add_counts(rounds.map(part_key_counts, handles, table=table))
    counts = add_counts([counts, keyed])
    if counts.naming < KEYWORD_COVERAGE * counts.with_keywords:  # keywords that mostly name no concept say nothing
        chosen, chosen_of = Counter(), Counter()
    else:
        chosen, chosen_of = counts.chosen, counts.within
    plural = plural_shares(counts, table)
    return {c.id: Evidence(counts.under[c.id], cohesion.get(c.id), counts.named[c.id], counts.containing[c.key],
                           plural.get(c.key) if " " not in c.key else None, chosen[c.id], chosen_of[c.key])
            for c in concepts}


def _tfidf_rounds(rounds: Rounds, handles: Sequence, table: ConceptTable) -> tuple[TextCounts, dict[str, float]]:
    """The TF-IDF half of round A (`count_terms`) and round B over the partitions of *handles*, where *rounds*
    runs them (each partition's terms kept with it): the counts round B read, and each measured concept's cohesion."""
    terms = rounds.keep(analyze_texts, handles)
    counts = add_counts(rounds.map(part_term_counts, handles, terms, table=table))
    weights = weigh(counts, table)
    sums = add_sums(rounds.map(part_sums, handles, terms, table=table, weights=weights)) if weights.measured else None
    return counts, measure_cohesion(weights, sums)
