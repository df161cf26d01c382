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
from itertools import islice, takewhile

from kg.acronyms import is_acronym

__all__ = [
    "Concept", "ConceptIndex", "NEAR_DUPLICATE_THRESHOLD", "concept_slug", "is_filler", "merge_concepts", "near_duplicate_candidates",
    "normalize_phrase", "singularize", "variant_groups",
]


@dataclass(frozen=True)
class Concept:
    """One concept node: its key (normalized form), labels and the papers it joins."""

    id: str
    key: str
    label: str
    alt_labels: tuple[str, ...]
    papers: tuple[str, ...]
    broader: tuple[str, ...] = ()  # ids of more general concepts


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
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word.endswith("es") and word[:-2] in _UNCHANGED_S:  # bonuses, campuses: the plural of a word in -s
        return word[:-2]
    if len(word) <= 3 or word in _UNCHANGED_S or not word.endswith("s") or word.endswith(("ss", "us", "is", "'s")):
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
    phrase = _DASH.sub("-", unicodedata.normalize("NFKC", phrase))
    return [w for w in map(_strip, _SPLIT.split(phrase)) if w]


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
    words = [_word_key(w) for w in _words(phrase)]
    if words:
        words[-1] = singularize(words[-1])
    return " ".join(w for w in map(_strip, words) if w)


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
    words = normalize_phrase(phrase).split()
    if not words:
        return True
    return all(w in GENERIC or w in WEAK_MODIFIERS or singularize(w) in GENERIC for w in words)


def concept_slug(key: str) -> str:
    """A stable IRI-safe id for a concept key (ASCII letters, digits and hyphens).

    >>> concept_slug("zeroth order optimization")
    'zeroth-order-optimization'
    >>> concept_slug("c++")
    'c-372946aa'
    """
    ascii_key = unicodedata.normalize("NFKD", key).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_key.lower()).strip("-")
    if slug.replace("-", " ") != key or len(slug) > 80 or not slug:
        digest = hashlib.sha1(key.encode("utf-8")).hexdigest()[:8]
        slug = f"{slug[:60].rstrip('-')}-{digest}" if slug else f"c-{digest}"
    return slug


def _short_key(short: str) -> str:
    return singularize(short.lower())


def resolve_acronyms(definitions: Iterable[tuple[str, Sequence[tuple[str, str]]]]) -> dict[str, str]:
    """Corpus-wide acronym -> long-form key, where the corpus agrees on one expansion.

    *definitions* holds (paper id, [(short form, long form), ...]). An acronym defined
    with different expansions is resolved only when two thirds of its definitions agree.
    """
    votes: dict[str, Counter] = defaultdict(Counter)
    for _, pairs in definitions:
        for short, long in pairs:
            votes[_short_key(short)][normalize_phrase(long)] += 1
    resolved = {}
    for short, counter in votes.items():
        (best, n), total = counter.most_common(1)[0], sum(counter.values())
        ranked = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))
        best, n = ranked[0]
        if n * 3 >= total * 2:
            resolved[short] = best
    return resolved


def _expand(phrase: str, local: Mapping[str, str], corpus: Mapping[str, str]) -> tuple[str, bool]:
    """The phrase with each acronym token replaced by its long form key; and whether any was."""
    words = _words(phrase)
    out = []
    expanded = False
    for w in words:
        key = _short_key(w)
        long = (local.get(key) or corpus.get(key)) if is_acronym(w) else None
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
    (`_variant_words`). Found through an index of each key with one word left out, so the cost
    grows with the number of keys, not its square.

    >>> near_duplicate_candidates(["deep net", "deep network", "shallow network", "upper bound", "lower bound"])
    [('deep net', 'deep network')]
    """
    slots: dict[tuple[str, int], dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for key in sorted(set(keys)):
        words = key.split()
        if len(words) < 2:
            continue
        for i, w in enumerate(words):
            slots[(" ".join(words[:i] + ["*"] + words[i + 1:]), i)][w].append(key)
    pairs = set()
    for (pattern, position), by_word in slots.items():
        head = position == pattern.count(" ")
        if len(by_word) < 2:
            continue
        words = sorted(by_word)
        for i, w in enumerate(words):
            # a word is a variant of words it begins (they follow it in sorted order) or that it shortens
            related = list(takewhile(lambda x: x.startswith(w), islice(words, i + 1, None))) if len(w) >= 3 else []
            if w in _SHORTENED:
                related += [x for x in by_word if _SHORTENED[w] == singularize(x)]
            for other in related:
                if _variant_words(w, other, head=head):
                    pairs.update((min(a, b), max(a, b)) for a in by_word[w] for b in by_word[other] if a != b)
    return sorted(pairs)


def variant_groups(
    keys: Sequence[str],
    *,
    embed: Callable[[list[str]], object] | None = None,
    threshold: float = NEAR_DUPLICATE_THRESHOLD,
) -> list[set[str]]:
    """Groups of two or more *keys* that name one concept: keys equal once their spaces are
    gone (``fine tuning`` / ``finetuning``, ``data set`` / ``dataset``), and, with *embed*,
    `near_duplicate_candidates` whose embeddings have a cosine of at least *threshold*. A key
    that is another plus a word (``federated adversarial learning``) is never a near duplicate:
    it is narrower (`add_broader`). Only the keys of candidate pairs are embedded.
    """
    parent = {k: k for k in keys}

    def find(k: str) -> str:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    def union(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    written_together: dict[str, str] = {}
    for key in keys:
        compact = key.replace(" ", "")
        if compact in written_together:
            union(written_together[compact], key)
        else:
            written_together[compact] = key
    if embed is not None:
        pairs = near_duplicate_candidates(keys)
        if pairs:
            import numpy as np

            texts = sorted({k for pair in pairs for k in pair})
            row = {t: i for i, t in enumerate(texts)}
            vectors = np.asarray(embed(texts), dtype=np.float32)
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
            a = vectors[[row[x] for x, _ in pairs]]
            b = vectors[[row[y] for _, y in pairs]]
            for (x, y), cosine in zip(pairs, np.einsum("ij,ij->i", a, b)):
                if cosine >= threshold:
                    union(x, y)
    groups: dict[str, set[str]] = defaultdict(set)
    for key in keys:
        groups[find(key)].add(key)
    return [g for _, g in sorted(groups.items()) if len(g) > 1]


_TRAILING_SHORT_FORM = re.compile(r"^(.*?\S)\s*\(\s*([^()\s]+)\s*\)$")


def _without_short_form(phrase: str) -> str:
    """A phrase with the acronym it defines in parentheses dropped, so that it joins its concept.

    >>> _without_short_form("graph neural networks (GNNs)"), _without_short_form("f(x)")
    ('graph neural networks', 'f(x)')
    """
    m = _TRAILING_SHORT_FORM.match(phrase)
    return m.group(1) if m and is_acronym(m.group(2)) else phrase


def merge_concepts(
    extractions: Sequence[tuple[str, Sequence[str], Sequence[tuple[str, str]]]],
    *,
    embed: Callable[[list[str]], object] | None = None,
    threshold: float = NEAR_DUPLICATE_THRESHOLD,
) -> ConceptIndex:
    """Merge the keyphrases of every paper into concepts.

    *extractions* holds, per paper, (paper id, its keyphrases best first, the acronym
    definitions its text makes). Returns the concepts sorted by id and the concept each
    (paper id, phrase) joined. *embed* (texts -> unit-length rows, the model keyphrases were
    ranked with) lets near-duplicate keys merge when their cosine is at least *threshold*
    (`variant_groups`); without it only keys written apart / together merge.
    """
    corpus = resolve_acronyms((pid, defs) for pid, _, defs in extractions)
    surfaces: dict[str, Counter] = defaultdict(Counter)
    long_forms: dict[str, Counter] = defaultdict(Counter)
    papers: dict[str, dict[str, None]] = defaultdict(dict)
    keys: dict[tuple[str, str], str] = {}
    for pid, phrases, defs in extractions:
        local = {_short_key(s): normalize_phrase(l) for s, l in defs}
        for short, long in defs:  # the defined long form is itself a label of the concept
            long_forms[normalize_phrase(long)][long if any(map(is_acronym, long.split())) else long.lower()] += 0
        for phrase in phrases:
            expanded, was = _expand(_without_short_form(phrase), local, corpus)
            key = normalize_phrase(expanded)
            if not key:
                continue
            keys[(pid, phrase)] = key
            surfaces[key][phrase] += 1
            if was:
                surfaces[key][expanded] += 0
            papers[key][pid] = None
    for key, forms in long_forms.items():
        if key in surfaces:
            for form in forms:
                surfaces[key][form] += 0
    alias: dict[str, str] = {}
    for group in variant_groups(sorted(surfaces), embed=embed, threshold=threshold):
        # the key of the group: the one with most papers, then most uses, then the shortest
        into, *others = sorted(group, key=lambda k: (-len(papers[k]), -sum(surfaces[k].values()), len(k), k))
        for key in others:
            surfaces[into].update(surfaces.pop(key))  # Counter.update keeps count-0 forms
            papers[into].update(papers.pop(key))
            alias[key] = into
    keys = {pk: alias.get(k, k) for pk, k in keys.items()}
    concepts = []
    ids: dict[str, str] = {}
    for key in sorted(surfaces):
        forms = surfaces[key]
        label = _preferred_label(forms)
        alt = tuple(sorted({f for f in forms if f != label}))
        cid = concept_slug(key)
        ids[key] = cid
        concepts.append(Concept(cid, key, label, alt, tuple(papers[key])))
    assignment = {pk: ids[key] for pk, key in keys.items()}
    return ConceptIndex(tuple(sorted(add_broader(concepts), key=lambda c: c.id)), assignment)


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
    words = label.split()
    out = [normalize_phrase(" ".join(words[i:])) for i in range(1, len(words))]
    if len(words) >= 2 and normalize_phrase(words[-1]) in GENERIC:
        base = words[:-1]
        out += [normalize_phrase(" ".join(base[i:])) for i in range(len(base))]
    return sorted(dict.fromkeys(out), key=lambda h: (-len(h.split()), out.index(h)))


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
    by_key = {c.key: c for c in concepts}
    heads: dict[str, set[str]] = defaultdict(set)
    head_papers: dict[str, set[str]] = defaultdict(set)
    label_of = {c.key: c.label for c in concepts}
    for c in concepts:
        for head in _heads(c.label):
            heads[head].add(c.key)
            head_papers[head].update(c.papers)

    def meaningful(head: str) -> bool:
        if is_filler(head) or head in _WEAK_HEADS:
            return False
        if head in by_key:
            return True
        # a head no paper names becomes a concept when it heads concepts of two or more papers
        # ("neural network"); a one-word head needs three ("optimization", not "size": vague
        # one-word heads are never concepts)
        need = 2 if len(head.split()) >= 2 else 3
        return len(heads[head]) >= need and len(head_papers[head]) >= need

    implied: dict[str, Concept] = {}
    parent: dict[str, str] = {}
    pending = sorted(by_key)
    while pending:
        key = pending.pop()
        for head in _heads(label_of.get(key, key)):
            if meaningful(head):
                parent[key] = head
                if head not in by_key and head not in implied:
                    implied[head] = Concept(concept_slug(head), head, head, (), ())
                    label_of[head] = head
                    pending.append(head)
                break
    out = []
    for c in list(concepts) + list(implied.values()):
        up = parent.get(c.key)
        out.append(replace(c, broader=(concept_slug(up),) if up else ()))
    return out


def _preferred_label(forms: Counter) -> str:
    """The most used surface form, preferring a spelled-out form over an acronym."""

    def rank(item):
        form, n = item
        acronym_words = sum(is_acronym(w) for w in form.split())
        return (acronym_words, -n, form != form.lower(), "-" not in form, len(form), form)

    return sorted(forms.items(), key=rank)[0][0]
