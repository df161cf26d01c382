"""Concepts: keyphrases normalized and merged so that papers about one thing meet at one node.

Variants that merge: case, singular/plural (of the head noun), hyphen/space, British/American
spelling, and an acronym with its expansion wherever any abstract of the corpus defines it
(``LLMs`` in one paper joins ``large language models (LLMs)`` defined in another); then
near-duplicates: keys that are one word once written apart and once together (``fine tuning`` /
``finetuning``), and keys that differ in one word that is a variant of the other (``graph
convolution network`` / ``graph convolutional network``, ``deep nets`` / ``deep networks``)
when their label embeddings agree (cosine >= `NEAR_DUPLICATE_THRESHOLD`, chosen on
``tests/data/concept_pairs.tsv``; ``docs/model.md`` has the curve).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import accumulate
from operator import attrgetter

from kg.text.acronyms import is_acronym

__all__ = [
    "CLASS_NOUNS", "Concept", "ConceptIndex", "NEAR_DUPLICATE_THRESHOLD", "SYNONYM_THRESHOLD", "acronym_synonyms", "concept_slug", "INSTANCE_NOUNS", "named_instances",
    "is_filler", "merge_concepts", "near_duplicate_candidates", "normalize_phrase", "singularize", "synonym_candidates",
    "variant_groups",
]


@dataclass(frozen=True, slots=True)
class Concept:
    """One concept node: its key (normalized form), labels and the papers it joins."""

    id: str
    key: str
    label: str
    alt_labels: tuple[str, ...]
    papers: tuple[str, ...]  # the papers that name it (a generic concept is linked to none: kg.graph.build)
    broader: tuple[str, ...] = ()  # ids of more general concepts
    specificity: float | None = None  # in [0, 1], 1 = most specific (kg.concepts.specificity); None: not measured
    generic: bool = False  # too general to be a paper's subject (kg.concepts.specificity.GENERIC_BELOW)


@dataclass(frozen=True)
class ConceptIndex:
    """Every concept, and which concept each (paper id, phrase) joined."""

    concepts: tuple[Concept, ...]
    assignment: Mapping[tuple[str, str], str]

    def by_id(self) -> dict[str, Concept]:
        return {c.id: c for c in self.concepts}


# Nouns too general to be a concept on their own, or made only of such words.
GENERIC = frozenset(
    """paper papers approach method methods methodology result results work works experiment
    experiments framework frameworks model models problem problems study studies task tasks
    performance technique techniques algorithm algorithms analysis analyses way ways case cases
    setting settings insight insights effect effects aspect aspects question questions issue issues
    challenge challenges property properties application applications evaluation evaluations design
    strategy strategies scheme schemes procedure procedures process processes system systems tool
    tools solution solutions idea ideas improvement improvements number numbers type types form
    forms range variety terms term fact facts lens impact efficacy advance advances thing things
    part parts kind kinds example examples manner level levels use usage version versions
    component components aspect art state line lines field fields area areas domain domains
    literature research researcher researchers author authors contribution contributions finding
    findings observation observations evidence point points detail details end question step steps
    benefit benefits advantage advantages limitation limitations goal goals aim purpose need needs
    importance attention focus context contexts scenario scenarios regime regimes condition
    conditions assumption assumptions notion notions concept concepts perspective perspectives view
    views understanding knowledge baseline baselines extension extensions variant variants
    implementation implementations practice practices tradeoff trade-off trade-offs tradeoffs
    datum data set sets dataset datasets benchmark benchmarks metric metrics experiment
    method's paper's theory theories""".split()
)
WEAK_MODIFIERS = frozenset(
    """novel new existing recent various several different many extensive previous prior current
    such other same certain specific particular additional further main key first second third
    last simple general typical common standard usual own important significant substantial
    promising proposed empirical strong powerful better best good large small broad wide
    numerous multiple single few little much more most less least high low great
    the a an this that these those our their its his her my your we they it""".split()
)

_BRITISH = {
    "optimise": "optimize", "optimised": "optimized", "optimiser": "optimizer", "optimisers": "optimizers",
    "minimise": "minimize", "maximise": "maximize", "regularise": "regularize", "regularised": "regularized",
    "regulariser": "regularizer", "normalise": "normalize", "normalised": "normalized", "generalise": "generalize",
    "characterise": "characterize", "parameterise": "parameterize", "parametrise": "parametrize",
    "parameterised": "parameterized", "parametrised": "parametrized", "visualise": "visualize", "summarise": "summarize",
    "recognise": "recognize", "organise": "organize", "utilise": "utilize", "analyse": "analyze", "analysed": "analyzed",
    "tokeniser": "tokenizer", "tokenisers": "tokenizers", "modelling": "modeling", "modelled": "modeled",
    "labelled": "labeled", "labelling": "labeling", "behaviour": "behavior", "behaviours": "behaviors",
    "colour": "color", "neighbour": "neighbor", "neighbours": "neighbors", "neighbourhood": "neighborhood",
    "centre": "center", "centres": "centers", "favour": "favor", "travelling": "traveling", "signalling": "signaling",
    "defence": "defense", "defences": "defenses", "licence": "license", "catalogue": "catalog", "programme": "program",
    "fibre": "fiber", "artefact": "artifact", "artefacts": "artifacts", "grey": "gray", "vapour": "vapor",
}
# British -ise after a consonant ("optimised", "organising") is -ize in American spelling ...
_BRITISH_SUFFIX = re.compile(r"(?<=[a-z]{2}[b-df-hj-np-tv-z])is(ation|ations|ed|er|ers|ing)$")
# ... but not in the verbs that are -ise in both: -vise, -prise and the others of the usual list
# ("supervised", "comprising", "advertising", "exercised", "promising").
_ISE_IN_BOTH = re.compile(r"(?:v|pr|advert|chast|dem|desp|exc|exerc|franch|inc|merchand|prem|prom|surm|circumc|prec|conc)is(?:ation|ations|ed|er|ers|ing)$")
_UNCHANGED_S = frozenset(
    """analysis basis bias gas lens news series species physics mathematics statistics economics
    dynamics robotics kinetics genetics ethics linguistics semantics logistics graphics
    diagnosis hypothesis synthesis thesis axis chassis tennis corpus status virus radius focus
    bus plus consensus census campus apparatus nexus bonus minus chaos cos sas its this thus
    always perhaps across whereas various previous numerous less unless atlas canvas alias
    pandas""".split()
)
_IRREGULAR = {
    "indices": "index", "matrices": "matrix", "vertices": "vertex", "appendices": "appendix",
    "analyses": "analysis", "hypotheses": "hypothesis", "bases": "basis", "axes": "axis",
    "criteria": "criterion", "phenomena": "phenomenon", "data": "data", "people": "person",
    "children": "child", "men": "man", "women": "woman", "mice": "mouse", "geese": "goose",
    "feet": "foot", "teeth": "tooth", "leaves": "leaf", "halves": "half", "lives": "life",
    "selves": "self", "theses": "thesis", "syntheses": "synthesis", "diagnoses": "diagnosis",
    "corpora": "corpus", "genera": "genus", "optima": "optimum", "maxima": "maximum", "minima": "minimum",
    "spectra": "spectrum", "formulae": "formula", "automata": "automaton", "curricula": "curriculum",
    "strata": "stratum", "media": "medium", "biases": "bias", "aliases": "alias", "atlases": "atlas",
    "canvases": "canvas", "lenses": "lens", "gases": "gas", "buses": "bus", "statuses": "status",
    "viruses": "virus", "consensuses": "consensus", "corpuses": "corpus", "focuses": "focus",
    # Latin and Greek plurals of technical English
    "equilibria": "equilibrium", "stimuli": "stimulus", "radii": "radius", "loci": "locus", "foci": "focus",
    "nuclei": "nucleus", "moduli": "modulus", "simplices": "simplex", "cortices": "cortex", "lemmata": "lemma",
    "schemata": "schema", "polyhedra": "polyhedron", "quanta": "quantum", "momenta": "momentum", "bacteria": "bacterium",
}


def singularize(word: str) -> str:
    """The singular of an English noun (rules and exceptions; lowercase input).

    >>> [singularize(w) for w in ["models", "policies", "analyses", "classes", "bias", "llms", "boxes"]]
    ['model', 'policy', 'analysis', 'class', 'bias', 'llm', 'box']
    """
    if word[-1:] != "s":  # most words: only an irregular plural changes
        return _IRREGULAR.get(word, word)
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word.endswith("es") and word[:-2] in _UNCHANGED_S:  # bonuses, campuses: the plural of a word in -s
        return word[:-2]
    if len(word) <= 3 or word in _UNCHANGED_S or word.endswith(("ss", "us", "is", "'s")):
        return word[:-2] if word.endswith("'s") else word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "zzes")):
        return word[:-2]
    if word.endswith("oes") and len(word) > 4:
        return word[:-2]
    return word[:-1]


_DASHES = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"), "-")
_SPLIT = re.compile(r"[\s\-_/]+")
_STRIP = re.compile(r"^[^\w+#]+|[^\w+#]+$")


_DASH = re.compile("[" + "".join(map(chr, _DASHES)) + "]")


def _words(phrase: str) -> list[str]:
    if not phrase.isascii():  # (both leave an ASCII phrase as it is)
        phrase = _DASH.sub("-", unicodedata.normalize("NFKC", phrase))
    return list(filter(None, map(_strip, _SPLIT.split(phrase))))  # the non-empty ones


@lru_cache(maxsize=1 << 18)  # words repeat across a corpus's phrases far more than phrases do
def _strip(word: str) -> str:
    return _STRIP.sub("", word)


def normalize_phrase(phrase: str) -> str:
    """The key under which variants of a phrase merge: lowercase, hyphens as spaces,
    American spelling, head noun singular. Idempotent.

    >>> normalize_phrase("Zeroth-Order Optimisation techniques")
    'zeroth order optimization technique'
    >>> normalize_phrase(normalize_phrase("LLMs"))
    'llm'
    """
    return _normalize(phrase)


@lru_cache(maxsize=1 << 18)  # a corpus repeats its phrases (and add_broader their suffixes) many times
def _normalize(phrase: str) -> str:
    key = _normalize_once(phrase)
    # a fixed point, so that normalizing twice changes nothing (most keys are met again: cached)
    return key if key == phrase else _normalize(key)


def _normalize_once(phrase: str) -> str:
    words = list(map(_word_key, _words(phrase)))
    if words:
        words[-1] = singularize(words[-1])
    return " ".join(filter(None, map(_strip, words)))


@lru_cache(maxsize=1 << 18)
def _word_key(word: str) -> str:
    """A word of a phrase lowercase and in American spelling; a plural acronym (ReLUs, GANs)
    loses its s before case goes."""
    word = (word[:-1] if len(word) > 2 and word.endswith("s") and word[-2].isupper() else word).lower()
    return _BRITISH.get(word) or (word if "is" not in word or _ISE_IN_BOTH.search(word) else _BRITISH_SUFFIX.sub(r"iz\1", word))


def is_filler(phrase: str) -> bool:
    """True for a phrase made only of generic words (``method``, ``proposed approach``, ``results``).

    >>> [is_filler(p) for p in ["framework", "extensive experiments", "learning framework"]]
    [True, True, False]
    """
    words = _normalize(phrase).split()
    if not words:
        return True
    return all(w in GENERIC or w in WEAK_MODIFIERS or singularize(w) in GENERIC for w in words)


_PLAIN_KEY = re.compile(r"[a-z0-9]+(?: [a-z0-9]+)*")


def concept_slug(key: str) -> str:
    """A stable IRI-safe id for a concept key (ASCII letters, digits and hyphens).

    >>> concept_slug("zeroth order optimization")
    'zeroth-order-optimization'
    >>> concept_slug("c++")
    'c-372946aa'
    """
    if len(key) <= 80 and _PLAIN_KEY.fullmatch(key):  # most keys: lowercase ASCII words
        return key.replace(" ", "-") if " " in key else key.lower()  # a new string, as below
    ascii_key = unicodedata.normalize("NFKD", key).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_key.lower()).strip("-")
    if slug.replace("-", " ") != key or len(slug) > 80 or not slug:
        digest = hashlib.sha1(key.encode("utf-8")).hexdigest()[:8]
        slug = f"{slug[:60].rstrip('-')}-{digest}" if slug else f"c-{digest}"
    return slug


def _short_key(short: str) -> str:
    return singularize(short.lower())


def acronym_votes(definitions: Iterable[tuple[str, Sequence[tuple[str, str]]]]) -> dict[str, Counter]:
    """Short-form key -> how many definitions give each long-form key.

    *definitions* holds (paper id, [(short form, long form), ...])."""
    votes: dict[str, Counter] = defaultdict(Counter)
    for _, pairs in definitions:
        for short, long in pairs:
            votes[_short_key(short)][_normalize(long)] += 1
    return votes


def resolve_acronyms(definitions: Iterable[tuple[str, Sequence[tuple[str, str]]]], *,
                     same: Mapping[str, str] | None = None) -> dict[str, str]:
    """Corpus-wide acronym -> long-form key, where the corpus agrees on one expansion.

    *definitions* holds (paper id, [(short form, long form), ...]). An acronym defined
    with different expansions is resolved only when two thirds of its definitions agree;
    long forms that *same* maps to one key (synonyms, `acronym_synonyms`) agree.
    """
    resolved = {}
    for short, counter in acronym_votes(definitions).items():
        if same:
            joined: Counter = Counter()
            for key, n in counter.items():
                joined[same.get(key, key)] += n
            counter = joined
        total = sum(counter.values())
        best, n = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[0]
        if n * 3 >= total * 2:
            resolved[short] = best
    return resolved


def acronym_synonyms(votes: Mapping[str, Counter], *, embed: Callable[[list[str]], object],
                     threshold: float) -> list[tuple[str, str]]:
    """Pairs of long-form keys that name one concept: two expansions of one acronym, of as
    many words, that differ in one word (``stochastic gradient descent`` / ``stochastic gradient
    method`` for SGD; not ``contrastive`` / ``continual learning`` for CL), when their embeddings
    agree (cosine >= *threshold*)."""
    pairs = set()
    for counter in votes.values():
        longs = sorted(counter)
        for i, a in enumerate(longs):
            for b in longs[i + 1:]:
                wa, wb = a.split(), b.split()
                if len(wa) == len(wb) >= 2 and sum(x != y for x, y in zip(wa, wb)) == 1:
                    pairs.add((a, b))
    return [pair for pair, cosine in zip(sorted(pairs), _cosines(sorted(pairs), embed)) if cosine >= threshold]


def _representatives(pairs: Sequence[tuple[str, str]]) -> dict[str, str]:
    """Each key of *pairs* -> the first (in sorted order) of the keys the pairs join it to."""
    parent: dict[str, str] = {}

    def find(k: str) -> str:
        while parent.setdefault(k, k) != k:
            k = parent[k]
        return k

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return {k: find(k) for k in parent}


def _cosines(pairs: Sequence[tuple[str, str]], embed: Callable[[list[str]], object]) -> list[float]:
    """The cosine of the embeddings of each pair of keys (each key embedded once)."""
    if not pairs:
        return []
    import numpy as np

    texts = sorted({k for pair in pairs for k in pair})
    row = {t: i for i, t in enumerate(texts)}
    vectors = np.asarray(embed(texts), dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    a = vectors[[row[x] for x, _ in pairs]]
    b = vectors[[row[y] for _, y in pairs]]
    return np.einsum("ij,ij->i", a, b).tolist()


# A phrase that `_words` splits at its spaces and hyphens only, and with no acronym.
_PLAIN_PHRASE = re.compile(r"[a-z0-9]+(?:[ -][a-z0-9]+)*")


def _plain_key(phrase: str) -> tuple[str | None, list[str]]:
    """The key of a phrase with no acronym (the same in every paper); else None and the words
    of the phrase (its acronym dropped, `_without_short_form`) to `_expand`.

    >>> _plain_key("zeroth-order methods"), _plain_key("LLMs (LLM)")
    (('zeroth order method', []), (None, ['LLMs']))
    """
    if _PLAIN_PHRASE.fullmatch(phrase):  # most phrases: the words are there to see
        return _normalize(phrase.replace("-", " ")), []
    words = _words(_without_short_form(phrase))
    if any(not w.islower() and is_acronym(w) for w in words):  # (islower: most words, at C speed)
        return None, words
    return _normalize(" ".join(words)), words


def _local_definitions(defs: Sequence[tuple[str, str]]) -> dict[str, str | None]:
    """A paper's acronyms: short-form key -> long-form key, or None for one it defines two ways
    (that paper's uses of it are then expanded neither by its own definitions nor by the corpus's)."""
    local: dict[str, str | None] = {}
    for short, long in defs:
        key, long_key = _short_key(short), _normalize(long)
        local[key] = long_key if local.get(key, long_key) == long_key else None
    return local


def _expand(words: Sequence[str], local: Mapping[str, str | None], corpus: Mapping[str, str]) -> tuple[str, bool]:
    """The phrase of *words* with each acronym replaced by its long form key; and whether any was."""
    out = []
    expanded = False
    for w in words:
        long = None
        if not w.islower() and is_acronym(w):
            key = _short_key(w)
            long = local[key] if key in local else corpus.get(key)
        if long:
            out.append(long)
            expanded = True
        else:
            out.append(w)
    return " ".join(out), expanded


# --------------------------------------------------------------------------- near duplicates

# Cosine of two label embeddings (all-MiniLM-L6-v2) from which two keys that differ in one variant
# word are one concept: the middle of the thresholds (0.83-0.86) that gave the dev half of
# tests/data/concept_pairs.tsv its best precision at its best recall (docs/model.md has the curve).
NEAR_DUPLICATE_THRESHOLD = 0.845

# Word endings that change a word's form but not what a key names ("convolution"/"convolutional",
# "fast"/"faster", "dimension"/"dimensionality", "feature"/"features" inside a key). Not among them:
# "-ing" and "-ed" ("language model"/"language modeling", "weight"/"weighted averaging"),
# superlatives ("dense"/"densest subgraph", "near"/"nearest neighbor") and "-ive"/"-istic"
# ("excess"/"excessive risk", "real"/"realistic"). The head (last word) takes only "-ity": there
# "-er" and "-al" make another noun ("downstream use"/"user", "linear function"/"functional").
_VARIANT_ENDINGS = frozenset("s es al ial ic ical ally ly r er ity ality".split())
_HEAD_VARIANT_ENDINGS = frozenset("ity ality".split())
# Word pairs of that shape that name different things.
_DISTINCT_FORMS = frozenset({("function", "functional"), ("graph", "graphical"), ("normal", "normality"), ("class", "classic")})
# Shortened words of ML writing and what they shorten.
_SHORTENED = {
    "net": "network", "nets": "network", "log": "logarithmic", "poly": "polynomial", "multi": "multiple",
    "exp": "exponential", "info": "information", "approx": "approximate", "param": "parameter", "hyperparam": "hyperparameter",
    "stat": "statistical", "prob": "probability", "config": "configuration", "optim": "optimization",
}


def _variant_words(a: str, b: str, *, head: bool = False) -> bool:
    """True when one word is a variant of the other: a form in `_VARIANT_ENDINGS` (for the last
    word of a key, *head*, `_HEAD_VARIANT_ENDINGS`) or a shortening.

    >>> [_variant_words(a, b) for a, b in [("convolution", "convolutional"), ("nets", "networks"),
    ...  ("upper", "lower"), ("off", "offline"), ("dense", "densest"), ("l1", "l12")]]
    [True, True, False, False, False, False]
    >>> _variant_words("use", "user", head=True), _variant_words("dimension", "dimensionality", head=True)
    (False, True)
    """
    if a == b:
        return True
    if any(c.isdigit() for c in a + b):
        return False
    short, long = sorted((a, b), key=lambda w: (len(w), w))
    if _SHORTENED.get(short) == singularize(long):
        return True
    endings = _HEAD_VARIANT_ENDINGS if head else _VARIANT_ENDINGS
    return len(short) >= 3 and long.startswith(short) and long[len(short):] in endings and (short, long) not in _DISTINCT_FORMS


def near_duplicate_candidates(keys: Iterable[str]) -> list[tuple[str, str]]:
    """Pairs of keys with as many words that differ in one word, a variant of the other's
    (`_variant_words`). Found by looking up each key with a word replaced by one of its
    variants among the keys' words (`_variant_partners`), so the cost grows with the number of
    keys, not its square.

    >>> near_duplicate_candidates(["deep net", "deep network", "shallow network", "upper bound", "lower bound"])
    [('deep net', 'deep network')]
    """
    by_words: dict[tuple[str, ...], list[str]] = {}  # the words of keys of two or more -> those keys
    for key in set(keys):
        words = tuple(key.split())
        if len(words) >= 2:
            same = by_words.get(words)
            if same is None:
                by_words[words] = [key]
            else:
                same.append(key)
    partners = _variant_partners({w for words in by_words for w in words})
    pairs = set()
    for words, same in by_words.items():
        last = len(words) - 1
        for i, w in enumerate(words):
            for other, inner, as_last in partners.get(w, ()):
                if as_last if i == last else inner:
                    found = by_words.get((*words[:i], other, *words[i + 1:]))
                    if found:
                        pairs.update((min(a, b), max(a, b)) for a in same for b in found)
    return sorted(pairs)


# Nouns that name a way of doing what the words before them name: a key ending in one names the
# same concept as the key without it ("backpropagation algorithm", "gradient descent method") or with
# another of them ("policy gradient algorithm" / "policy gradient method"). Not "model", "system",
# "network", "problem", "process", "analysis", "architecture": those make another concept
# ("language model", "gaussian process", "sensitivity analysis"). Chosen on the dev half of
# tests/data/concept_pairs.tsv (docs/model.md).
CLASS_NOUNS = frozenset("method algorithm technique scheme procedure approach framework strategy mechanism".split())
# Cosine of two label embeddings from which a key and the key with a class noun are one concept:
# the middle of the thresholds (0.80-0.85) that gave the dev half of tests/data/concept_pairs.tsv its
# best precision (docs/model.md has the curve).
SYNONYM_THRESHOLD = 0.80
# What a single word names when the corpus says it is one ("the Adam optimizer", "optimizers such
# as Adam", "Adam is the de facto optimizer"): `named_instances`.
INSTANCE_NOUNS = CLASS_NOUNS | frozenset("optimizer estimator classifier model architecture solver network regularizer sampler".split())


def synonym_candidates(keys: Iterable[str]) -> list[tuple[str, str]]:
    """Pairs of keys that differ by a class noun at the end (`CLASS_NOUNS`): ``P c1`` / ``P c2``,
    and ``P`` / ``P c`` where ``P`` has two words or more (a single word is often an adjective
    or a vague noun: "numerical method", "graph algorithm"); ``P`` is not filler.

    >>> synonym_candidates(["gradient descent", "gradient descent method", "policy gradient method",
    ...                     "policy gradient algorithm", "graph", "graph algorithm"])
    [('gradient descent', 'gradient descent method'), ('policy gradient algorithm', 'policy gradient method')]
    """
    by_stem: dict[str, list[str]] = defaultdict(list)  # P -> the keys P and P c
    for key in set(keys):
        stem, _, last = key.rpartition(" ")
        if stem and last in CLASS_NOUNS:
            by_stem[stem].append(key)
    pairs = set()
    known = set(keys)
    for stem, with_noun in by_stem.items():
        if is_filler(stem):
            continue
        with_noun.sort()
        pairs.update((a, b) for i, a in enumerate(with_noun) for b in with_noun[i + 1:])
        if " " in stem and stem in known:  # (a single word before the noun: `named_instances`)
            pairs.update((min(stem, k), max(stem, k)) for k in with_noun)
    return sorted(pairs)


def named_instances(keys: Iterable[str], texts: Iterable[str]) -> list[tuple[str, str]]:
    """Pairs ``P`` / ``P c`` of keys, ``P`` one word and ``c`` an `INSTANCE_NOUNS` word, that some
    text says are one thing: ``P`` names a ``c`` ("the Adam optimizer", written with a capital),
    ``c``\\s such as / like / including / e.g. ``P``, or ``P`` is a(n)/the ... ``c``.

    >>> named_instances(["adam", "adam optimizer", "graph", "graph algorithm"],
    ...                 ["Adaptive optimizers like Adam help.", "A graph algorithm on a graph."])
    [('adam', 'adam optimizer')]
    """
    keys = set(keys)
    wanted: dict[str, list[str]] = defaultdict(list)  # P -> the nouns c of its keys P c
    for key in keys:
        stem, _, last = key.rpartition(" ")
        if stem and " " not in stem and last in INSTANCE_NOUNS and stem in keys and not is_filler(stem):
            wanted[stem].append(last)
    if not wanted:
        return []
    found = set()
    for text in texts:
        lower = text.lower()
        words = set(_TEXT_WORD.findall(lower))
        present = wanted.keys() & words
        if not present:
            continue
        clues = _Clues(text)
        for stem in present:
            for noun in wanted[stem]:
                if (stem, noun) not in found and (noun in words or noun + "s" in words) and _says_instance(text, stem, noun, clues):
                    found.add((stem, noun))
    return sorted((stem, f"{stem} {noun}") for stem, noun in found)


_TEXT_WORD = re.compile(r"[a-z0-9][a-z0-9\-]*")
_LIST_START = re.compile(r"(?i)[\s,]+(?:such as|like|including|e\.g\.)")  # ", such as": the word before it is the list's noun
_WORD_END = re.compile(r"\w+$")
_AFTER_THE = re.compile(r"\b(?i:the)\s+(?=([A-Z][\w-]*))")  # (a lookahead: "the The Adam optimizer" gives The and Adam)
_SENTENCE_START = re.compile(r"(?:^|[.;:!?]\s+)([\w-]+)")


class _Clues:
    """What one text can say of any word, read once (`named_instances` asks about hundreds of pairs
    per text, and each pattern search is a scan of the text): the words written with a capital
    after "the", the words that open a sentence, and the words right before a list ("optimizers
    such as"). Each is a necessary condition of one pattern (`_named_pattern`, `_subject_pattern`,
    `_listing_pattern`), so a pattern is searched only where it can match. Known only for an ASCII
    text (Unicode case folding can match a word written otherwise); for another every pattern is."""

    __slots__ = ("capitalized", "openers", "listed")

    def __init__(self, text: str) -> None:
        if text.isascii():
            self.capitalized = {m.group(1).lower() for m in _AFTER_THE.finditer(text)}
            self.openers = {m.group(1).lower() for m in _SENTENCE_START.finditer(text)}
            self.listed = {w.group().lower() for m in _LIST_START.finditer(text)
                           if (w := _WORD_END.search(text, max(0, m.start() - 40), m.start()))}
        else:
            self.capitalized = self.openers = self.listed = None


@lru_cache(maxsize=1 << 14)
def _named_pattern(stem: str, noun: str) -> re.Pattern | None:
    """The capital on the word alone, after "the": "the Adam optimizer", not a title's "The Robust
    Method", nor a name that only qualifies ("a ReLU network", "a Bayesian method": no -ian / -ean
    adjective). None for a word that cannot have a capital."""
    if not stem[0].isalpha() or stem.endswith(("ian", "ean")):
        return None
    # (the first letter the word's own: "[A-Z]" had taken "the WR method" for "or" named a method)
    c = re.escape(noun) + r"s?"
    return re.compile(rf"\b(?i:the)\s+{stem[0].upper()}(?i:{re.escape(stem[1:])})\s+{c}\b")


@lru_cache(maxsize=1 << 14)
def _listing_pattern(stem: str, noun: str) -> re.Pattern:
    """The word a whole item of a list: "such as SGD, RMSProp and Adam", not "such as language models"."""
    p, c = re.escape(stem), re.escape(noun) + r"s?"
    item = r"[\w-]+(?:\s+[\w-]+){0,2}(?:,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+)"
    ends = r"(?=\s*(?:[,;:.)]|$)|\s+(?:and|or|etc)\b)"
    return re.compile(rf"(?i)\b{c}\s*,?\s+(?:such as|like|including|e\.g\.,?)\s+(?:{item}){{0,3}}{p}{ends}")


@lru_cache(maxsize=1 << 14)
def _subject_pattern(stem: str, noun: str) -> re.Pattern:
    """The word the subject of its sentence: "Adam (Kingma and Ba) is an optimizer"."""
    p, c = re.escape(stem), re.escape(noun) + r"s?"
    return re.compile(rf"(?i)(?:^|[.;:!?]\s+){p}(?![\w-])(?!\s+(?!is\b)[\w-])[^.;]{{0,40}}?\bis\s+(?:a|an|the)\s+(?:[\w-]+\s+){{0,3}}?{c}\b")


def _says_instance(text: str, stem: str, noun: str, clues: _Clues | None = None) -> bool:
    """Whether *text* says the word *stem* names a *noun* (`named_instances`): "the Stem noun" written with
    a capital, "nouns such as / like / including / e.g. stem", or "stem ... is a / an / the ... noun".
    Each pattern takes the word only where it is a whole name, not the first or last word of a longer
    one (what 10,000 ML abstracts showed: "A Robust Method" in a title, "models such as language
    models", "methods including ... doubly robust", "robust control is a core approach", "Q-learning
    is an algorithm"). *clues* (`_Clues` of *text*) skips the patterns that cannot match."""
    clues = clues or _Clues(text)
    if clues.capitalized is None or stem in clues.capitalized:
        named = _named_pattern(stem, noun)
        if named is not None and named.search(text):
            return True
    if (clues.listed is None or noun in clues.listed or noun + "s" in clues.listed) and _listing_pattern(stem, noun).search(text):
        return True
    return (clues.openers is None or stem in clues.openers) and bool(_subject_pattern(stem, noun).search(text))


def _variant_partners(vocabulary: set[str]) -> dict[str, list[tuple[str, bool, bool]]]:
    """For each word of *vocabulary*, the words after it in sorted order that two keys may
    differ by (`_variant_words`; and one begins or shortens the other): (that word, whether
    inside a key, whether as its last word).

    >>> dict(_variant_partners({"deep", "net", "network", "networks", "upper", "lower"}))
    {'net': [('network', True, True), ('networks', True, True)], 'network': [('networks', True, False)]}
    """
    # every pair that _variant_words can accept: a word and the word plus an ending, and a
    # shortening and what it shortens
    candidates = set()
    endings: dict[str, list[str]] = defaultdict(list)  # by their last letter
    for ending in _VARIANT_ENDINGS | _HEAD_VARIANT_ENDINGS:
        endings[ending[-1]].append(ending)
    for word in vocabulary:
        for ending in endings.get(word[-1:], ()):
            if word.endswith(ending) and len(word) - len(ending) >= 3 and word[: -len(ending)] in vocabulary:
                candidates.add((word[: -len(ending)], word))
    shortenings = [w for w in vocabulary if w in _SHORTENED]
    if shortenings:
        of_singular: dict[str, list[str]] = defaultdict(list)
        for word in vocabulary:
            of_singular[singularize(word)].append(word)
        for short in shortenings:
            candidates.update((min(short, w), max(short, w)) for w in of_singular.get(_SHORTENED[short], ()))
    partners: dict[str, list[tuple[str, bool, bool]]] = defaultdict(list)
    for a, b in sorted(candidates):
        if a != b and (_begins_or_shortens(a, b) or _begins_or_shortens(b, a)):
            inner, as_last = _variant_words(a, b), _variant_words(a, b, head=True)
            if inner or as_last:
                partners[a].append((b, inner, as_last))
    return partners


def _begins_or_shortens(a: str, b: str) -> bool:
    """Whether word *a* begins word *b* (and has three letters or more) or shortens it."""
    return (len(a) >= 3 and b.startswith(a)) or (a in _SHORTENED and _SHORTENED[a] == singularize(b))


def variant_groups(
    keys: Sequence[str],
    *,
    embed: Callable[[list[str]], object] | None = None,
    threshold: float = NEAR_DUPLICATE_THRESHOLD,
    synonym_threshold: float | None = None,
    same: Iterable[tuple[str, str]] = (),
) -> list[set[str]]:
    """Groups of two or more *keys* that name one concept: keys equal once their spaces are
    gone (``fine tuning`` / ``finetuning``, ``data set`` / ``dataset``), and, with *embed*,
    `near_duplicate_candidates` whose embeddings have a cosine of at least *threshold*. A key
    that is another plus a word (``federated adversarial learning``) is never a near duplicate:
    it is narrower (`add_broader`), unless the word is a class noun (`synonym_candidates`, cosine
    >= *synonym_threshold*, default `SYNONYM_THRESHOLD`). Pairs in *same* (evidence found
    elsewhere: `acronym_synonyms`) always merge. Only the keys of candidate pairs are embedded.
    """
    synonym_threshold = SYNONYM_THRESHOLD if synonym_threshold is None else synonym_threshold
    parent = dict(zip(keys, keys))

    def find(k: str) -> str:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    joined: set[str] = set()  # the keys of some union: the members of the groups

    def union(a: str, b: str) -> None:
        joined.update((a, b))
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    compact = [key.replace(" ", "") for key in keys]
    twice = {c for c, n in Counter(compact).items() if n > 1}  # (few keys)
    written_together: dict[str, str] = {}
    for key, c in zip(keys, compact):
        if c in twice:
            if c in written_together:
                union(written_together[c], key)
            else:
                written_together[c] = key
    if embed is not None:
        near = near_duplicate_candidates(keys)
        near_set = set(near)
        synonyms = [pair for pair in synonym_candidates(keys) if pair not in near_set]
        for (x, y), cosine in zip(near + synonyms, _cosines(near + synonyms, embed)):
            if cosine >= (threshold if (x, y) in near_set else synonym_threshold):
                union(x, y)
    present = set(keys)
    for x, y in same:
        if x in present and y in present:
            union(x, y)
    groups: dict[str, set[str]] = defaultdict(set)
    for key in [k for k in keys if k in joined]:
        groups[find(key)].add(key)
    return [g for _, g in sorted(groups.items()) if len(g) > 1]


_TRAILING_SHORT_FORM = re.compile(r"^(.*?\S)\s*\(\s*([^()\s]+)\s*\)$")


def _without_short_form(phrase: str) -> str:
    """A phrase with the acronym it defines in parentheses dropped, so that it joins its concept.

    >>> _without_short_form("graph neural networks (GNNs)"), _without_short_form("f(x)")
    ('graph neural networks', 'f(x)')
    """
    if ")" not in phrase:  # most phrases: no match possible
        return phrase
    m = _TRAILING_SHORT_FORM.match(phrase)
    return m.group(1) if m and is_acronym(m.group(2)) else phrase


def _keys(extractions: Sequence[tuple[str, Sequence[str], Sequence[tuple[str, str]]]], corpus: Mapping[str, str]):
    """Each (paper id, phrase)'s key (its acronyms expanded by the paper's own definitions, else
    the *corpus*'s); each key's surface forms with their uses and its papers; and each defined
    long form's key with the labels it gives (the long form and the acronym)."""
    surfaces: dict[str, dict[str, int]] = {}  # key -> its surface forms and their uses
    long_forms: dict[str, dict[str, None]] = defaultdict(dict)
    papers: dict[str, dict[str, None]] = {}
    of_key: dict[str, tuple[dict[str, int], dict[str, None]]] = {}  # key -> (its surfaces, its papers)
    keys: dict[tuple[str, str], str] = {}
    # each phrase's key when it has no acronym to expand (most phrases), else its words
    plain_key: dict[str, str] = {}
    acronym_words: dict[str, list[str]] = {}
    for pid, phrases, defs in extractions:
        local = _local_definitions(defs)
        for short, long in defs:  # the defined long form, and the acronym, are labels of the concept
            forms = long_forms[_normalize(long)]
            forms[long if any(map(is_acronym, long.split())) else long.lower()] = None
            forms[short] = None
        for phrase in phrases:
            was = False
            key = plain_key.get(phrase)
            if key is None:
                words = acronym_words.get(phrase)
                if words is None:
                    key, words = _plain_key(phrase)
                    if key is None:
                        acronym_words[phrase] = words
                    else:
                        plain_key[phrase] = key
                if key is None:
                    expanded, was = _expand(words, local, corpus)
                    key = _normalize(expanded)
            if not key:
                continue
            keys[(pid, phrase)] = key
            entry = of_key.get(key)
            if entry is None:
                entry = of_key[key] = surfaces[key], papers[key] = {}, {}
            forms, key_papers = entry
            forms[phrase] = forms.get(phrase, 0) + 1
            if was:
                forms.setdefault(expanded, 0)  # a form of the concept, not a use
            key_papers[pid] = None
    return keys, surfaces, papers, long_forms


def _index(ordered: Sequence[str], surfaces: Mapping[str, dict[str, int]], papers: Mapping[str, dict[str, None]],
           alias: Mapping[str, str], keys: Mapping[tuple[str, str], str]) -> ConceptIndex:
    """The `ConceptIndex` of the keys left after the merge (*ordered*: every key, sorted; *alias*:
    a merged key -> the one it joined), each labelled by its preferred surface form, with the
    broader concepts `_broader` finds."""
    found = []  # (id, key, label, alt labels, papers) of each concept, by key
    ids: dict[str, str] = {}
    for key in ordered:
        forms = surfaces.get(key)
        if forms is None:  # merged into another
            continue
        if len(forms) == 1:  # (most keys)
            (label,), alt = forms, ()
        else:
            label = _preferred_label(forms)
            alt = tuple(sorted([f for f in forms if f != label]))
        ids[key] = cid = concept_slug(key)
        found.append((cid, key, label, alt, tuple(papers[key])))
    for key, into in alias.items():
        ids[key] = ids[into]
    assignment = {pk: ids[key] for pk, key in keys.items()}
    parent, implied = _broader([(key, label, ps) for _, key, label, _, ps in found])
    concepts = []
    for cid, key, label, alt, ps in found:
        up = parent.get(key)
        concepts.append(Concept(cid, key, label, alt, ps, (concept_slug(up),) if up else ()))
    for head in implied:
        up = parent.get(head)
        concepts.append(Concept(concept_slug(head), head, head, (), (), (concept_slug(up),) if up else ()))
    return ConceptIndex(tuple(sorted(concepts, key=attrgetter("id"))), assignment)


def merge_concepts(
    extractions: Sequence[tuple[str, Sequence[str], Sequence[tuple[str, str]]]],
    *,
    embed: Callable[[list[str]], object] | None = None,
    threshold: float = NEAR_DUPLICATE_THRESHOLD,
    synonym_threshold: float | None = None,
    texts: Mapping[str, str] | None = None,
) -> ConceptIndex:
    """Merge the keyphrases of every paper into concepts.

    *extractions* holds, per paper, (paper id, its keyphrases best first, the acronym
    definitions its text makes). Returns the concepts sorted by id and the concept each
    (paper id, phrase) joined. *embed* (texts -> unit-length rows, the model keyphrases were
    ranked with) lets near-duplicate keys merge when their cosine is at least *threshold*
    (`variant_groups`), and synonyms (a class noun more, *synonym_threshold*; two expansions of
    one acronym that differ in a word, `acronym_synonyms`); without it only keys written apart /
    together merge. *texts* (paper id -> its text) lets a word join the word plus the noun of
    what the texts say it names (`named_instances`: "adam" / "adam optimizer").
    """
    synonym_threshold = SYNONYM_THRESHOLD if synonym_threshold is None else synonym_threshold
    votes = acronym_votes((pid, defs) for pid, _, defs in extractions)
    same = acronym_synonyms(votes, embed=embed, threshold=synonym_threshold) if embed is not None else []
    corpus = resolve_acronyms(((pid, defs) for pid, _, defs in extractions), same=_representatives(same))
    keys, surfaces, papers, long_forms = _keys(extractions, corpus)
    alias: dict[str, str] = {}
    ordered = sorted(surfaces)
    if texts:
        same = same + named_instances(ordered, texts.values())
    for group in variant_groups(ordered, embed=embed, threshold=threshold, synonym_threshold=synonym_threshold, same=same):
        # the key of the group: the one with most papers, then most uses, then the shortest
        into, *others = sorted(group, key=lambda k: (-len(papers[k]), -sum(surfaces[k].values()), len(k), k))
        for key in others:
            forms = surfaces[into]
            for form, n in surfaces.pop(key).items():  # count-0 forms too
                forms[form] = forms.get(form, 0) + n
            papers[into].update(papers.pop(key))
            alias[key] = into
    for key, long_labels in long_forms.items():  # (after the variants merge: a long form may have joined another key)
        forms = surfaces.get(alias.get(key, key))
        if forms is not None:
            for form in long_labels:
                forms.setdefault(form, 0)
    return _index(ordered, surfaces, papers, alias, keys)


# Heads too vague to stand as a broader concept ("communication cost" -> "cost").
_WEAK_HEADS = frozenset(
    """cost function value update factor rate quantity measure amount term size space flow mechanism
    efficiency depth landscape feature language training behavior structure information capacity
    scale quality accuracy error step time order dimension layer parameter weight sample input
    output signal pattern component unit node edge loss objective setting""".split()
)


def _heads(label: str) -> list[str]:
    """Keys of the more general forms of a concept label, most specific first: its word
    suffixes (a hyphenated compound is one word), and the same for the label without a
    generic last word ("gradient descent method" -> "gradient descent").

    >>> _heads("vanilla gradient descent method")
    ['gradient descent method', 'vanilla gradient descent', 'descent method', 'gradient descent', 'method', 'descent']
    >>> _heads("sharpness-aware minimization")
    ['minimization']
    """
    if _PLAIN_PHRASE.fullmatch(label):  # most labels
        heads = _plain_heads(label)
        if heads is not None:
            return heads
    words = label.split()
    out = [_normalize(" ".join(words[i:])) for i in range(1, len(words))]
    if out and out[-1] in GENERIC:  # out[-1]: the key of the last word
        base = words[:-1]
        out += [_normalize(" ".join(base[i:])) for i in range(len(base))]
    # more words first, then in order of first appearance (the sort is stable)
    return sorted(dict.fromkeys(out), key=_fewer_words)


def _fewer_words(key: str) -> int:
    return -len(key.split())


def _plain_heads(label: str) -> list[str] | None:
    """`_heads` of a label of lowercase words one space or hyphen apart, cut from the key of
    the label (and of the label without its last word): such words are normalized one by one.

    >>> _plain_heads("vanilla gradient-descent methods")
    ['gradient descent method', 'vanilla gradient descent', 'gradient descent', 'method']
    """
    if " " not in label:
        return []
    out = _suffix_keys(label, 1)
    if out is None or out[-1] not in GENERIC:  # out[-1]: the key of the last word
        return out
    base = _suffix_keys(label[: label.rindex(" ")], 0)
    if base is None:
        return None
    return sorted(dict.fromkeys(out + base), key=_fewer_words)


def _suffix_keys(phrase: str, first: int) -> list[str] | None:
    """The keys of the word suffixes of a plain phrase (`_plain_heads`) from its *first* word on,
    longest first; cut from its key (None if its words do not line up with the key's)."""
    words = phrase.split(" ")
    key_words = _normalize(phrase.replace("-", " ")).split(" ")
    if len(key_words) == len(words):  # (no hyphen)
        return [" ".join(key_words[i:]) for i in range(first, len(words))]
    if len(key_words) != len(words) + phrase.count("-"):
        return None
    starts = list(accumulate((w.count("-") + 1 for w in words[:-1]), initial=0))
    return [" ".join(key_words[i:]) for i in starts[first:]]


def add_broader(concepts: Sequence[Concept]) -> list[Concept]:
    """Concepts with ``broader`` set, plus the broader concepts their heads imply.

    A concept's broader concept is its longest head (a word suffix, also of the key without a
    generic last word such as ``method``) that is a concept itself, or that heads two or more
    concepts of two or more papers (then it becomes a concept of its own, with no papers of
    its own). Generic heads (``model``, ``method``, ``cost``) never become concepts.

    >>> cs = [Concept("a", "zeroth order optimization", "zeroth-order optimization", (), ("p1",)),
    ...       Concept("b", "optimization", "optimization", (), ("p2",))]
    >>> [(c.key, c.broader) for c in add_broader(cs)]
    [('zeroth order optimization', ('optimization',)), ('optimization', ())]
    """
    parent, implied = _broader([(c.key, c.label, c.papers) for c in concepts])
    out = [replace(c, broader=_broader_ids(parent.get(c.key))) for c in concepts]
    return out + [Concept(concept_slug(head), head, head, (), (), _broader_ids(parent.get(head))) for head in implied]


def _broader_ids(up: str | None) -> tuple[str, ...]:
    return (concept_slug(up),) if up else ()


def _broader(concepts: Sequence[tuple[str, str, Sequence[str]]]) -> tuple[dict[str, str], list[str]]:
    """`add_broader` on the (key, label, papers) of each concept: the key of each key's broader
    concept, and the heads that become concepts of their own (in the order they do)."""
    heads_of: dict[str, list[str]] = {}  # key -> the heads of its label
    headed: dict[str, list[tuple[str, Sequence[str]]]] = defaultdict(list)  # head -> the (key, papers) it heads
    for key, label, papers in concepts:
        heads_of[key] = label_heads = _heads(label)
        member = (key, papers)
        for head in label_heads:
            headed[head].append(member)
    # a head that is the label of a concept with another key is that concept ("linear programming",
    # the label of the key "linear program"), not a second concept of the same name
    labelled = {}
    for key, label, _ in concepts:
        named = normalize_phrase(label)
        if named != key and named not in heads_of:
            labelled.setdefault(named, key)

    def meaningful(head: str) -> bool:
        if head not in heads_of and head not in labelled:
            # a head no paper names becomes a concept when it heads concepts of two or more
            # papers ("neural network"); a one-word head needs three ("optimization", not
            # "size": vague one-word heads are never concepts)
            need = 2 if len(head.split()) >= 2 else 3
            members = headed.get(head, ())  # (.get: headed is a defaultdict)
            if len(members) < need or len({key for key, _ in members}) < need or len(set().union(*(papers for _, papers in members))) < need:
                return False
        return head not in _WEAK_HEADS and not is_filler(head)

    implied: dict[str, None] = {}
    parent: dict[str, str] = {}
    is_meaningful: dict[str, bool] = {}  # head -> meaningful(head), which does not change
    pending = sorted(heads_of)
    while pending:
        key = pending.pop()
        label_heads = heads_of.get(key)
        if label_heads is None:  # an implied head, its own label
            label_heads = _heads(key)
        for head in label_heads:
            good = is_meaningful.get(head)
            if good is None:
                good = is_meaningful[head] = meaningful(head)
            head = labelled.get(head, head)
            if good and head != key and not _reaches(parent, head, key):  # (a synonym's label may head its own key: no cycle)
                parent[key] = head
                if head not in heads_of and head not in implied:
                    implied[head] = None
                    pending.append(head)
                break
    # the key string of each implied head as normalize_phrase gives it (not a copy of it)
    return parent, [_normalize(head) for head in implied]


def _reaches(parent: Mapping[str, str], start: str, key: str) -> bool:
    """Whether *key* is *start* or above it in *parent* (key -> its broader key)."""
    seen = set()
    while start not in seen:
        if start == key:
            return True
        seen.add(start)
        start = parent.get(start, start)
    return False


def _preferred_label(forms: Mapping[str, int]) -> str:
    """The most used surface form, preferring a spelled-out form over an acronym."""

    def rank(item):
        form, n = item
        acronym_words = sum(is_acronym(w) for w in form.split())
        return (acronym_words, -n, form != form.lower(), "-" not in form, len(form), form)

    return sorted(forms.items(), key=rank)[0][0]
