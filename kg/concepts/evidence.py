"""The corpus statistics of `kg.concepts.specificity` as rounds of a map over partitions of the papers and a reduce.

Each partition (a few hundred papers, `PaperText`) is read where its texts are; only small tables travel:
per concept, per key, per word. Every map and reduce is a pure function of its arguments, so a worker
can run the maps and the client the reduces, in partition order:

- round A, two maps that each give a partition's `TextCounts`: `count_terms`, the document frequencies of
  the TF-IDF terms (of its `TermCounts`: `analyze_texts` reads each text once, for both rounds) and the
  papers named by and under each concept; `count_keys`, the texts that contain each concept key, the uses
  of each word form, the authors' keywords that name a concept; `add_counts` (reduce) sums them and `weigh` decides the
  vocabulary and idf (`Weights`), as sklearn's ``TfidfVectorizer`` fits them.
- round B: `sum_vectors` (map) gives a partition's `VectorSums`: the sums of the TF-IDF rows of the papers
  under each measured concept; `add_sums` (reduce) adds them and `cohesion` reads each concept's cohesion
  from the total, its own words left out.

All that each partition needs of the concepts is a `ConceptTable`, broadcast to it.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from functools import cache, cached_property
from typing import TYPE_CHECKING

from kg.concepts.model import Concept
from kg.text.phrases import normalize_phrase, singularize

if TYPE_CHECKING:
    import numpy as np
    from scipy import sparse

__all__ = ["ConceptTable", "PaperText", "TermCounts", "TextCounts", "VectorSums", "Weights", "add_counts",
           "add_sums", "analyze_texts", "cohesion", "count_keys", "count_terms", "part_key_counts",
           "part_sums", "part_term_counts", "partition_papers", "plural_shares", "sum_vectors", "tfidf_analyzer", "tfidf_rows", "weigh"]

# The TF-IDF of the cohesion (`kg.concepts.specificity`): on the lowercased texts, English stop words out,
# sublinear term frequencies, terms of two texts or more.
TFIDF = dict(sublinear_tf=True, min_df=2, stop_words="english", token_pattern=r"(?u)\b[a-z][a-z0-9]+\b")

_TOKEN = re.compile(r"[a-z0-9][a-z0-9']*")  # a label's words, as the cohesion leaves them out
_WORDS = re.compile(r"[a-z0-9']+")  # a text's words, as its keys are looked for


@dataclass(frozen=True)
class ConceptTable:
    """What every partition needs to know of the concepts (per concept, never per paper): made once by `of`
    and broadcast. Besides each concept's fields, what the maps look up, each made where it is first read
    (the keys' counts and the TF-IDF rounds run in two processes): the concepts each one counts under
    (itself and those above it, ``broader`` transitively), the concept a keyword names and the starts of
    the keys of several words."""

    ids: tuple[str, ...]
    keys: tuple[str, ...]
    labels: tuple[str, ...]
    alt_labels: tuple[tuple[str, ...], ...]
    broader: tuple[tuple[str, ...], ...]

    @classmethod
    def of(cls, concepts: Sequence[Concept]) -> ConceptTable:
        return cls(tuple(c.id for c in concepts), tuple(c.key for c in concepts), tuple(c.label for c in concepts),
                   tuple(tuple(c.alt_labels) for c in concepts), tuple(tuple(c.broader) for c in concepts))

    @cached_property
    def up(self) -> dict[str, tuple[str, ...]]:
        """Each concept's id -> itself, then every concept above it that the table has."""
        parents = dict(zip(self.ids, self.broader))
        up = {}
        for cid in self.ids:
            seen, todo = {cid: None}, list(parents[cid])
            while todo:
                above = todo.pop()
                if above not in seen and above in parents:
                    seen[above] = None
                    todo.extend(parents[above])
            up[cid] = tuple(seen)
        return up

    @cached_property
    def naming(self) -> dict[str, str]:
        """A keyword as keys are written -> the concept it names: a concept's own key first, then the others' labels."""
        naming = dict(zip(self.keys, self.ids))
        for cid, label, alt in zip(self.ids, self.labels, self.alt_labels):
            for form in (label, *alt):
                naming.setdefault(_keyword_key(form), cid)
        return naming

    @cached_property
    def starts(self) -> frozenset[str]:
        """The words before the last of each key of two to six words, and each of their starts: a text's words
        are followed only as long as they are the start of some key (a longer key is in no text)."""
        starts = set()
        for key in self.keys:
            words = key.split(" ")
            if 1 < len(words) <= 6:
                starts.update(" ".join(words[:k]) for k in range(1, len(words)))
        return frozenset(starts)


@dataclass(frozen=True)
class PaperText:
    """One paper of a partition: its text (None: not known; it counts only as named and under its
    concepts), its authors' keywords and the ids of the concepts it is linked to."""

    id: str
    text: str | None
    keywords: tuple[str, ...] = ()
    concepts: tuple[str, ...] = ()


def partition_papers(concepts: Sequence[Concept], texts: Mapping[str, str],
                     keywords: Mapping[str, Sequence[str]] | None = None, *, size: int | None = None) -> list[tuple[PaperText, ...]]:
    """The papers of *texts* (in their order, then those the *concepts* name without a text) in partitions of
    *size* (None: one)."""
    linked: dict[str, list[str]] = defaultdict(list)
    for c in concepts:
        for pid in c.papers:
            linked[pid].append(c.id)
    keywords = keywords or {}
    papers = [PaperText(pid, text, tuple(keywords.get(pid) or ()), tuple(linked.get(pid, ()))) for pid, text in texts.items()]
    papers += [PaperText(pid, None, (), tuple(ids)) for pid, ids in linked.items() if pid not in texts]
    size = size or max(1, len(papers))
    return [tuple(papers[i:i + size]) for i in range(0, len(papers), size)]


@dataclass(frozen=True)
class TextCounts:
    """Round A's tables of some papers (a partition, or the corpus once added)."""

    texts: int = 0  # papers with a text
    terms: Counter = field(default_factory=Counter)  # TF-IDF term -> texts that have it
    containing: Counter = field(default_factory=Counter)  # concept key -> texts that contain it
    forms: Counter = field(default_factory=Counter)  # word as written -> uses, for the words of one-word keys
    with_keywords: int = 0  # papers with a text and keywords
    naming: int = 0  # of them, the papers whose keywords name some concept
    chosen: Counter = field(default_factory=Counter)  # concept id -> papers whose keywords name it
    within: Counter = field(default_factory=Counter)  # concept key -> texts with keywords that contain it
    named: Counter = field(default_factory=Counter)  # concept id -> papers linked to it
    under: Counter = field(default_factory=Counter)  # concept id -> papers linked to it or to a concept below it


@dataclass(frozen=True, eq=False)
class TermCounts:
    """A partition's texts as sklearn's TF-IDF analyzer (`TFIDF`) reads them: each text's count of each term
    (rows: the partition's papers with a text, in order; columns: ``terms``, the partition's own). Made once
    (`analyze_texts`), it stays with its partition for both rounds."""

    terms: tuple[str, ...]
    counts: sparse.csr_matrix


def analyze_texts(papers: Iterable[PaperText]) -> TermCounts:
    """The `TermCounts` of a partition's *papers*."""
    import numpy as np
    from scipy import sparse

    analyze = tfidf_analyzer()
    column: dict[str, int] = {}
    indptr, indices, values = [0], [], []
    for paper in papers:
        if paper.text is not None:
            tf = Counter(analyze(paper.text.lower()))
            indices.extend(column.setdefault(term, len(column)) for term in tf)
            values.extend(tf.values())
            indptr.append(len(indices))
    counts = sparse.csr_matrix((np.array(values, dtype=np.float64), np.array(indices, dtype=np.int64), indptr),
                               shape=(len(indptr) - 1, len(column)))
    return TermCounts(tuple(column), counts)


def count_terms(table: ConceptTable, papers: Iterable[PaperText], terms: TermCounts) -> TextCounts:
    """The half of round A that round B needs: the texts, the document frequency of each term, the papers named
    by and under each concept."""
    import numpy as np

    named, under = Counter(), Counter()
    texts = 0
    for paper in papers:
        named.update(paper.concepts)
        under.update({above for cid in paper.concepts for above in table.up.get(cid, (cid,))})
        texts += paper.text is not None
    df = Counter(dict(zip(terms.terms, np.bincount(terms.counts.indices, minlength=len(terms.terms)).tolist())))
    return TextCounts(texts, df, named=named, under=under)


def count_keys(table: ConceptTable, papers: Iterable[PaperText]) -> TextCounts:
    """The half of round A that round B does not need: the texts that contain each key, the word forms, the
    authors' keywords that name a concept."""
    keys, singles = set(table.keys), {k for k in table.keys if " " not in k}
    containing, forms, chosen, within = (Counter() for _ in range(4))
    with_keywords = naming = 0
    one: dict[str, str] = {}  # each word -> its key alone (lowercase, American, singular)
    for paper in papers:
        if paper.text is None:
            continue
        words = _WORDS.findall(paper.text.lower())
        forms.update(words)
        found = _keys_in(words, keys, table.starts, one)
        containing.update(found)
        if paper.keywords:
            with_keywords += 1
            within.update(found)
            names = {table.naming[k] for k in map(_keyword_key, paper.keywords) if k in table.naming}
            chosen.update(names)
            naming += bool(names)
    forms = Counter({form: n for form, n in forms.items() if singularize(form) in singles})
    return TextCounts(containing=containing, forms=forms, with_keywords=with_keywords, naming=naming, chosen=chosen, within=within)


def add_counts(parts: Iterable[TextCounts]) -> TextCounts:
    """Round A's reduce: the partitions' `TextCounts` added, in their order."""
    total = {f.name: Counter() if f.default is MISSING else 0 for f in fields(TextCounts)}
    for part in parts:
        for name, value in total.items():
            if isinstance(value, Counter):
                value.update(getattr(part, name))
            else:
                total[name] = value + getattr(part, name)
    return TextCounts(**total)


def plural_shares(counts: TextCounts, table: ConceptTable) -> dict[str, float]:
    """Each one-word key's share of its uses in *counts* in a plural form."""
    by_singular: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for form, n in counts.forms.items():
        one = singularize(form)
        by_singular[one][form != one] += n
    return {key: many / (single + many) if single + many else 0.0
            for key in table.keys if " " not in key and key in by_singular for single, many in [by_singular[key]]}


@dataclass(frozen=True, eq=False)
class Weights:
    """Round A's decision, broadcast to round B: the TF-IDF vocabulary (sorted) and its idf; the concepts
    measured (under two papers or more) and the columns of their own words."""

    texts: int
    terms: tuple[str, ...]
    idf: np.ndarray
    measured: tuple[str, ...]
    own: tuple[np.ndarray, np.ndarray]  # (row in measured, column in terms): a concept's word, once each

    @cached_property
    def column(self) -> dict[str, int]:
        """Each term's column."""
        return {t: j for j, t in enumerate(self.terms)}


def weigh(counts: TextCounts, table: ConceptTable) -> Weights:
    """The vocabulary and the idf of the corpus of *counts* as sklearn's ``TfidfVectorizer`` fits them (the
    terms of two texts or more, sorted; smoothed idf), and the concepts whose cohesion is measured (none in a
    corpus under three texts, or without a term in two texts)."""
    import numpy as np

    n = counts.texts
    terms = tuple(sorted(t for t, df in counts.terms.items() if df >= TFIDF["min_df"])) if n >= 3 else ()
    df = np.array([counts.terms[t] for t in terms], dtype=np.float64)
    idf = np.full_like(df, n + 1.0)  # sklearn's smooth_idf: as if one more text had every term
    idf /= df + 1.0
    np.log(idf, out=idf)
    idf += 1.0
    measured = tuple(cid for cid in table.ids if counts.under[cid] >= 2) if terms else ()
    column = {t: j for j, t in enumerate(terms)}  # (as Weights.column)
    key, label = dict(zip(table.ids, table.keys)), dict(zip(table.ids, table.labels))
    own = [(r, j) for r, cid in enumerate(measured)
           for j in {column.get(w) for w in set(_TOKEN.findall(label[cid].lower())) | set(key[cid].split())} if j is not None]
    rows, cols = np.array(own, dtype=np.int64).reshape(-1, 2).T
    return Weights(n, terms, idf, measured, (rows, cols))


def tfidf_rows(weights: Weights, terms: TermCounts) -> sparse.csr_matrix:
    """The TF-IDF rows of a partition's texts (their *terms*) with the corpus's *weights*: what sklearn's
    ``TfidfVectorizer`` (`TFIDF`) gives them fitted on the corpus (sublinear tf times idf, each row of unit length)."""
    import numpy as np
    from scipy import sparse
    from sklearn.preprocessing import normalize

    to = np.array([weights.column.get(t, -1) for t in terms.terms], dtype=np.int64)  # the corpus's column of each term
    C = terms.counts.tocoo()
    kept = to[C.col] >= 0
    X = sparse.csr_matrix((C.data[kept], (C.row[kept], to[C.col[kept]])), shape=(C.shape[0], len(weights.terms)))
    X.sort_indices()
    np.log(X.data, out=X.data)
    X.data += 1.0
    X.data *= weights.idf[X.indices]
    return normalize(X, norm="l2", copy=False) if X.shape[0] else X  # (sklearn's normalize takes no empty matrix)


# Round B adds TF-IDF entries as whole multiples of 2^-40 (`UNIT`): integer sums are exact in any order, so the
# cohesion is the same whatever the partitions and wherever they are added (up to 2^23 papers under a concept).
UNIT = 2.0 ** 40


@dataclass(frozen=True, eq=False)
class VectorSums:
    """Round B's sums over some papers' TF-IDF rows, in units of 1 / `UNIT` (int64, exact in any order): of
    all of them (``total``, and ``squares``, their squared entries), and for each measured concept (rows as
    in `Weights.measured`) of those under it (``S``; ``Q``, their squared entries but in its own words'
    columns), and how many (``sizes``)."""

    total: np.ndarray
    squares: int
    S: sparse.csr_matrix
    Q: np.ndarray
    sizes: np.ndarray


def sum_vectors(table: ConceptTable, weights: Weights, papers: Sequence[PaperText], terms: TermCounts) -> VectorSums:
    """Round B's map: the `VectorSums` of a partition's *papers* (their *terms*: `analyze_texts`)."""
    import numpy as np
    from scipy import sparse

    papers = [p for p in papers if p.text is not None]
    X = tfidf_rows(weights, terms)
    X2 = X.multiply(X).tocsr()
    X.data, X2.data = _units(X.data), _units(X2.data)
    row = {cid: r for r, cid in enumerate(weights.measured)}
    members = [(row[above], i) for i, p in enumerate(papers)
               for above in {a for cid in p.concepts for a in table.up.get(cid, (cid,))} if above in row]
    rows, cols = np.array(members, dtype=np.int64).reshape(-1, 2).T
    M = sparse.csr_matrix((np.ones(len(rows), dtype=np.int64), (rows, cols)), shape=(len(weights.measured), len(papers)))
    Q = M @ np.asarray(X2.sum(axis=1)).ravel()  # (each row's squares: about UNIT, or 0 for a text without a term)
    own_rows, own_cols = map(np.array, weights.own)  # (copies: Dask hands a worker read-only arrays, which scipy's indexing rejects)
    if len(own_rows):  # the squares in the concepts' own words' columns left out
        words, column = np.unique(own_cols, return_inverse=True)
        np.subtract.at(Q, own_rows, np.asarray((M @ X2[:, words]).tocsr()[own_rows, column]).ravel())
    return VectorSums(np.asarray(X.sum(axis=0)).ravel(), int(X2.sum()), (M @ X).tocsr(), Q,
                      np.bincount(rows, minlength=len(weights.measured)))


def _units(values: np.ndarray) -> np.ndarray:
    """*values* (in [0, 1]) as whole numbers of 1 / `UNIT`."""
    import numpy as np

    return np.rint(values * UNIT).astype(np.int64)


def add_sums(parts: Sequence[VectorSums]) -> VectorSums | None:
    """Round B's reduce: the partitions' `VectorSums` added (None without a partition): whole numbers, so in
    any order the same; in pairs (the first half's sum plus the second's), so that each partial sum is added
    about log2(n) times rather than once per partition after it."""
    if len(parts) <= 1:
        return parts[0] if parts else None
    half = (len(parts) + 1) // 2
    a, b = add_sums(parts[:half]), add_sums(parts[half:])
    return VectorSums(a.total + b.total, a.squares + b.squares, a.S + b.S, a.Q + b.Q, a.sizes + b.sizes)


def cohesion(weights: Weights, sums: VectorSums | None) -> dict[str, float]:
    """Each measured concept's cohesion (`kg.concepts.specificity`): the mean pairwise cosine of the TF-IDF
    rows of the papers under it, its own words left out, over the mean pairwise cosine of all the corpus's
    papers. For unit rows v_i, the sum of the pairwise cosines of a set is (|sum v_i|^2 - sum |v_i|^2) / 2.
    None for a concept under two texts; none at all where the corpus's mean is not above 0."""
    import numpy as np

    n = weights.texts
    if sums is None or not weights.measured:
        return {}
    total = sums.total / UNIT
    baseline = (total @ total - sums.squares / UNIT) / (n * (n - 1))
    if baseline <= 0:
        return {}
    S = sums.S.astype(np.float64) / UNIT
    S.sum_duplicates()  # (canonical: its sums read the entries in one order)
    norms = np.asarray(S.multiply(S).sum(axis=1)).ravel()
    own_rows, own_cols = map(np.array, weights.own)  # (copies: Dask hands a worker read-only arrays, which scipy's indexing rejects)
    if len(own_rows):  # the concepts' own words left out
        np.subtract.at(norms, own_rows, np.asarray(S[own_rows, own_cols]).ravel() ** 2)
    sizes = sums.sizes.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        values = (norms - sums.Q / UNIT) / (sizes * (sizes - 1)) / baseline
    return {cid: float(v) for cid, v, k in zip(weights.measured, values.tolist(), sums.sizes.tolist()) if k >= 2}


def part_term_counts(papers: Sequence[PaperText], terms: TermCounts, *, table: ConceptTable) -> TextCounts:
    """Round A's TF-IDF half as `kg.common.rounds.Rounds` runs it: `count_terms` of a partition and its terms."""
    return count_terms(table, papers, terms)


def part_key_counts(papers: Sequence[PaperText], *, table: ConceptTable) -> TextCounts:
    """Round A's other half as `kg.common.rounds.Rounds` runs it: `count_keys` of a partition."""
    return count_keys(table, papers)


def part_sums(papers: Sequence[PaperText], terms: TermCounts, *, table: ConceptTable, weights: Weights) -> VectorSums:
    """Round B's map as `kg.common.rounds.Rounds` runs it: `sum_vectors` of a partition and its terms."""
    return sum_vectors(table, weights, papers, terms)


@cache
def tfidf_analyzer():
    """sklearn's ``TfidfVectorizer`` analyzer with `TFIDF`'s settings: a text's terms, as it counts them."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(**TFIDF).build_analyzer()


def _keyword_key(keyword: str) -> str:
    """A keyword (or a label) as keys are written."""
    return normalize_phrase(keyword.replace("-", " "))


def _keys_in(words: Sequence[str], keys: set[str], starts: frozenset[str], one: dict[str, str]) -> set[str]:
    """The concept *keys* in a text of *words* (lowercase): its words as keys are written, inside longer
    phrases too; *one* caches each word's key alone."""
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
    return found
