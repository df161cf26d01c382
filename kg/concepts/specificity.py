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
import re
from collections import Counter, defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace

from kg.common.processes import Beside, Now
from kg.concepts.model import Concept, ConceptIndex
from kg.text.phrases import normalize_phrase, singularize

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
                      keywords: Mapping[str, Sequence[str]] | None = None, *, beside: Beside | None = None) -> ConceptIndex:
    """*index* with each concept's `specificity` (3 decimals) and `generic` set, measured on the
    papers' *texts* (paper id -> text; the papers of *index*) and their authors' *keywords*
    (paper id -> keywords, for the papers that have some); *beside* as `concept_evidence` takes it."""
    evidence = concept_evidence(index.concepts, texts, keywords, beside=beside)
    scored = []
    for c in index.concepts:
        value = round(specificity(evidence[c.id]), 3)
        scored.append(replace(c, specificity=value, generic=value < GENERIC_BELOW))
    return ConceptIndex(tuple(scored), index.assignment)


def concept_evidence(concepts: Sequence[Concept], texts: Mapping[str, str],
                     keywords: Mapping[str, Sequence[str]] | None = None, *, beside: Beside | None = None) -> dict[str, Evidence]:
    """The `Evidence` of each concept (by id), from the corpus *texts* (paper id -> text) and the
    authors' *keywords* (paper id -> keywords). *beside* (`kg.common.processes.Beside`) may run the cohesion
    (TF-IDF, `_cohesion`) while the texts are counted (`_text_counts`): two independent passes
    over every text, each a few seconds at 10,000 papers. Without it they run one after the other."""
    under = _papers_under(concepts)
    pending = (beside or Now)(lambda: _cohesion(concepts, under, texts))
    keywords = {pid: kws for pid, kws in (keywords or {}).items() if kws and pid in texts}
    chosen, naming = _chosen(concepts, keywords) if keywords else (Counter(), 0)
    if naming < KEYWORD_COVERAGE * len(keywords):
        keywords, chosen = {}, Counter()
    containing, plural, chosen_of = _text_counts(concepts, texts, keywords)
    cohesion = pending.result()
    return {c.id: Evidence(len(under[c.id]), cohesion.get(c.id), len(c.papers), containing.get(c.key, 0),
                           plural.get(c.key) if " " not in c.key else None, chosen.get(c.id, 0), chosen_of.get(c.key, 0))
            for c in concepts}


def _chosen(concepts: Sequence[Concept], keywords: Mapping[str, Sequence[str]]) -> tuple[Counter, int]:
    """Each concept's id -> the papers whose *keywords* name it: by its key, or its label or an
    alternative label (an acronym), as keys are written (`normalize_phrase`); and how many papers'
    keywords name some concept."""
    by_key = {c.key: c.id for c in concepts}  # a concept's own key first, then the others' labels
    for c in concepts:
        for form in (c.label, *c.alt_labels):
            by_key.setdefault(normalize_phrase(form.replace("-", " ")), c.id)
    chosen: Counter = Counter()
    naming = 0
    for kws in keywords.values():
        named = {by_key[k] for k in (normalize_phrase(kw.replace("-", " ")) for kw in kws) if k in by_key}
        chosen.update(named)
        naming += bool(named)
    return chosen, naming


def _papers_under(concepts: Sequence[Concept]) -> dict[str, set[str]]:
    """Each concept's papers and those of every concept below it (``broader``, transitively)."""
    under = {c.id: set(c.papers) for c in concepts}
    parents = {c.id: c.broader for c in concepts}
    for c in concepts:
        seen, todo = {c.id}, list(c.broader)
        while todo:
            up = todo.pop()
            if up in seen or up not in under:
                continue
            seen.add(up)
            under[up].update(c.papers)
            todo.extend(parents[up])
    return under


_TOKEN = re.compile(r"[a-z0-9][a-z0-9']*")
_WORDS = re.compile(r"[a-z0-9']+")


def _cohesion(concepts: Sequence[Concept], under: Mapping[str, set[str]], texts: Mapping[str, str]) -> dict[str, float]:
    """Each concept's cohesion: the mean pairwise cosine of the TF-IDF vectors of the papers under
    it, the concept's own words left out, over the mean pairwise cosine of all the corpus's papers.
    Concepts under two papers (or a corpus under three) have none.

    For unit vectors v_i, the sum of the pairwise cosines of a set is (|sum v_i|^2 - sum |v_i|^2) / 2:
    the sums of every concept's vectors are one sparse product (concepts x papers) @ (papers x words),
    made a block of concepts at a time."""
    ids = sorted(texts)
    if len(ids) < 3:
        return {}
    import numpy as np
    from scipy import sparse
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(sublinear_tf=True, min_df=2, stop_words="english", token_pattern=r"(?u)\b[a-z][a-z0-9]+\b")
    try:
        X = vectorizer.fit_transform([texts[p].lower() for p in ids]).tocsr()
    except ValueError:  # no word in two texts
        return {}
    X2 = X.multiply(X).tocsr()
    row = {p: i for i, p in enumerate(ids)}
    vocabulary = vectorizer.vocabulary_
    total = np.asarray(X.sum(axis=0)).ravel()
    n = len(ids)
    baseline = (total @ total - X2.sum()) / (n * (n - 1))
    if baseline <= 0:
        return {}
    measured = [(c, sorted(row[p] for p in under[c.id] if p in row)) for c in concepts]
    measured = [(c, papers) for c, papers in measured if len(papers) >= 2]
    out = {}
    for start in range(0, len(measured), 2000):
        block = measured[start:start + 2000]
        indptr = np.cumsum([0] + [len(papers) for _, papers in block])
        members = np.concatenate([papers for _, papers in block])
        M = sparse.csr_matrix((np.ones(len(members)), members, indptr), shape=(len(block), n))
        S, Q = (M @ X).tocsr(), (M @ X2).tocsr()
        norms = np.asarray(S.multiply(S).sum(axis=1)).ravel()
        squares = np.asarray(Q.sum(axis=1)).ravel()
        own = [(r, j) for r, (c, _) in enumerate(block)
               for j in {vocabulary.get(w) for w in set(_TOKEN.findall(c.label.lower())) | set(c.key.split())} if j is not None]
        if own:
            rows, cols = np.array(own).T
            np.subtract.at(norms, rows, np.asarray(S[rows, cols]).ravel() ** 2)
            np.subtract.at(squares, rows, np.asarray(Q[rows, cols]).ravel())
        sizes = np.diff(indptr)
        values = (norms - squares) / (sizes * (sizes - 1)) / baseline
        out.update((c.id, float(v)) for (c, _), v in zip(block, values.tolist()))
    return out


def _text_counts(concepts: Sequence[Concept], texts: Mapping[str, str],
                 among: Collection[str] = ()) -> tuple[Counter, dict[str, float], Counter]:
    """How many texts contain each concept key (its words as keys are written, inside longer
    phrases too), for each one-word key the share of its uses in the texts in a plural form, and
    how many of the texts of the papers *among* contain each key (in the same pass)."""
    keys = {c.key for c in concepts}
    # the words before the last of each longer key, and each of their starts: a text's words are
    # followed only as long as they are the start of some key
    starts: set[str] = set()
    for key in keys:
        words = key.split(" ")
        if 1 < len(words) <= 6:  # (a longer key is found in no text: a keyphrase wherever it is)
            starts.update(" ".join(words[:k]) for k in range(1, len(words)))
    containing: Counter = Counter()
    within: Counter = Counter()  # of the papers *among*
    forms: Counter = Counter()  # each word as written (lowercase)
    one: dict[str, str] = {}  # each word -> its key alone (lowercase, American, singular)
    for pid, text in texts.items():
        words = _WORDS.findall(text.lower())
        forms.update(words)
        unique = set(words)
        for word in unique.difference(one):
            one[word] = normalize_phrase(word)
        found = {alone for alone in map(one.__getitem__, unique) if alone in keys}
        n = len(words)
        for i in [i for i, word in enumerate(words) if word in starts]:  # the words that open a longer key
            start = words[i]
            for end in range(i + 1, min(n, i + 6)):  # the key's last word, as its key alone
                key = f"{start} {one[words[end]]}"
                if key in keys:
                    found.add(key)
                start = f"{start} {words[end]}"
                if start not in starts:
                    break
        containing.update(found)
        if pid in among:
            within.update(found)
    plural: dict[str, float] = {}
    by_singular: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for form, count in forms.items():
        one = singularize(form)
        by_singular[one][form != one] += count
    for key in keys:
        if " " not in key and key in by_singular:
            single, many = by_singular[key]
            plural[key] = many / (single + many) if single + many else 0.0
    return containing, plural, within
