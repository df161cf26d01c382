"""Phrases written one way: the key under which variants of a keyphrase meet (case, hyphens,
British spelling, the head noun's plural), and the generic words no concept is made of.

Below extraction and concepts, which both use it: extraction drops filler phrases
(`is_filler`), concepts merge keyphrases by their key (`normalize_phrase`).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = ["GENERIC", "WEAK_MODIFIERS", "clear_caches", "is_filler", "is_plain_phrase", "normalize_phrase", "phrase_occurrences", "phrase_words",
           "singularize", "whole_count"]

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


def phrase_words(phrase: str) -> list[str]:
    """The words of *phrase*: split at spaces, hyphens, underscores and slashes, each stripped of
    the punctuation around it (NFKC first, dashes as hyphens, for a phrase that is not ASCII)."""
    if not phrase.isascii():  # (both leave an ASCII phrase as it is)
        phrase = _DASH.sub("-", unicodedata.normalize("NFKC", phrase))
    return list(filter(None, map(_strip, _SPLIT.split(phrase))))  # the non-empty ones


def clear_caches() -> None:
    """Empty the memos of phrase words and keys (`normalize_phrase`): a build calls it once its concepts are made,
    after which they would hold up to 2**18 entries each (~19 MB at 10,000 abstracts, more with more) to its end."""
    for memo in (_strip, normalize_phrase, _word_key):
        memo.cache_clear()


@lru_cache(maxsize=1 << 18)  # words repeat across a corpus's phrases far more than phrases do
def _strip(word: str) -> str:
    return _STRIP.sub("", word)


@lru_cache(maxsize=1 << 18)  # a corpus repeats its phrases (and add_broader their suffixes) many times
def normalize_phrase(phrase: str) -> str:
    """The key under which variants of a phrase merge: lowercase, hyphens as spaces,
    American spelling, head noun singular. Idempotent.

    >>> normalize_phrase("Zeroth-Order Optimisation techniques")
    'zeroth order optimization technique'
    >>> normalize_phrase(normalize_phrase("LLMs"))
    'llm'
    """
    key = _normalize_once(phrase)
    # a fixed point, so that normalizing twice changes nothing (most keys are met again: cached)
    return key if key == phrase else normalize_phrase(key)


def _normalize_once(phrase: str) -> str:
    words = list(map(_word_key, phrase_words(phrase)))
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
    words = normalize_phrase(phrase).split()
    if not words:
        return True
    return all(w in GENERIC or w in WEAK_MODIFIERS or singularize(w) in GENERIC for w in words)


# A phrase that `phrase_words` splits at its spaces and hyphens only, and with no acronym.
_PLAIN_PHRASE = re.compile(r"[a-z0-9]+(?:[ -][a-z0-9]+)*")


def is_plain_phrase(phrase: str) -> bool:
    """Whether *phrase* is lowercase ASCII words and digits one space or hyphen apart (most
    phrases: their words are there to see, and no acronym is among them)."""
    return _PLAIN_PHRASE.fullmatch(phrase) is not None


def phrase_occurrences(text: str, definitions, phrases) -> list[int]:
    """How often each multi-word phrase occurs in *text*, as a whole phrase and in any case, with the uses of an
    acronym *definitions* ((short form, long form) pairs) defines counted as its long form's; 1 for one word (and for
    a phrase that only occurs split, as a suspended hyphen's "first-order" does).

    >>> phrase_occurrences("Graph neural networks (GNN) work. GNN and graph neural networks.", [("GNN", "graph neural networks")],
    ...                    ["graph neural networks", "networks", "neural nets"])
    [4, 1, 1]
    """
    lower = text.lower()
    uses: dict[str, int] = {}
    for short, long in definitions:
        uses[long.lower()] = uses.get(long.lower(), 0) + whole_count(text, short)
    counts = []
    for phrase in phrases:
        key = phrase.lower()
        counts.append(1 if " " not in key else max(whole_count(lower, key), 1) + uses.get(key, 0))
    return counts


def whole_count(text: str, needle: str) -> int:
    """Non-overlapping occurrences of *needle* in *text* not inside a longer word or hyphenated
    compound (as ``(?<![\\w-])needle(?![\\w-])`` finds them, without compiling a pattern per phrase:
    a document's hundred phrases would each be compiled anew)."""
    def joined(i: int) -> bool:
        return 0 <= i < len(text) and (text[i].isalnum() or text[i] in "_-")

    n, at = 0, text.find(needle)
    while at != -1:
        end = at + len(needle)
        if not joined(at - 1) and not joined(end):
            n, at = n + 1, text.find(needle, end)
        else:
            at = text.find(needle, at + 1)
    return n
