"""Near duplicates: keys that name one concept though written apart or together, with a variant
word (``graph convolution network`` / ``graph convolutional network``), or with a class noun more
(``gradient descent`` / ``gradient descent method``), merged when their embeddings agree.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence

from kg.concepts.similarity import cosines
from kg.text.phrases import is_filler, singularize

__all__ = ["CLASS_NOUNS", "NEAR_DUPLICATE_THRESHOLD", "SYNONYM_THRESHOLD", "near_duplicate_candidates", "synonym_candidates",
           "variant_groups"]


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
    from networkx.utils import UnionFind

    groups = UnionFind()  # holds only the keys of some union: the members of the groups
    union = groups.union

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
        for (x, y), cosine in zip(near + synonyms, cosines(near + synonyms, embed)):
            if cosine >= (threshold if (x, y) in near_set else synonym_threshold):
                union(x, y)
    present = set(keys)
    for x, y in same:
        if x in present and y in present:
            union(x, y)
    return sorted((g for g in groups.to_sets() if len(g) > 1), key=min)
