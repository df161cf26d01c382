"""Acronyms in keyphrases: expanded by their paper's own definitions, else by the long form of other
papers that the paper's text supports (`kg.concepts.senses`); two expansions of one acronym that name
one concept found.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence

from kg.concepts.similarity import cosines
from kg.text.acronyms import is_acronym
from kg.text.phrases import is_plain_phrase, normalize_phrase, phrase_words

__all__ = ["ENGLISH_CAPITALS", "MODIFIERS", "acronym_synonyms", "acronym_tokens", "acronym_votes", "defining_papers", "expand_acronyms", "local_definitions", "phrase_key", "representatives",
           "resolve_acronyms", "short_key", "without_short_form"]


# Short English words that a text may set in capitals ("the US economy", "IT budgets", "ALL of them",
# a title in capitals): the key of such a short form is taken for the word, not for another paper's acronym.
ENGLISH_CAPITALS = frozenset({
    "a", "all", "an", "and", "any", "are", "as", "at", "be", "but", "by", "can", "do", "for", "from", "go", "he",
    "her", "his", "how", "if", "in", "is", "it", "its", "me", "my", "no", "nor", "not", "now", "of", "off", "on",
    "one", "or", "our", "out", "she", "so", "than", "that", "the", "this", "to", "too", "two", "up", "us", "was",
    "we", "what", "when", "who", "why", "will", "with", "yes", "you", "your",
})


def short_key(short: str) -> str:
    """The key of a short form: as written, a plural s after a capital dropped. Case tells
    acronyms apart (GPS, the graph transformer, is not GPs, Gaussian processes).

    >>> [short_key(s) for s in ("LLMs", "GPs", "GPS", "NeRFs", "ViT")]
    ['LLM', 'GP', 'GPS', 'NeRF', 'ViT']
    """
    if len(short) > 2 and short[-1] == "s" and not short[-2].islower():
        return short[:-1]
    return short


def acronym_votes(definitions: Iterable[tuple[str, Sequence[tuple[str, str]]]]) -> dict[str, Counter]:
    """Short-form key -> how many definitions give each long-form key.

    *definitions* holds (paper id, [(short form, long form), ...])."""
    votes: dict[str, Counter] = defaultdict(Counter)
    for _, pairs in definitions:
        for short, long in pairs:
            votes[short_key(short)][normalize_phrase(long)] += 1
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


def defining_papers(definitions: Iterable[tuple[str, Sequence[tuple[str, str]]]],
                    same: Mapping[str, str] | None = None) -> dict[str, dict[str, list[str]]]:
    """Short-form key -> long-form key -> the papers that define it so, from (paper id, [(short
    form, long form), ...]): each paper's unambiguous definitions (`local_definitions`), long forms
    that *same* joins counted as one."""
    same = same or {}
    defined: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for pid, pairs in definitions:
        for key, long in local_definitions(pairs).items():
            if long:
                defined[key][same.get(long, long)].append(pid)
    return defined


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
    return [pair for pair, cosine in zip(sorted(pairs), cosines(sorted(pairs), embed)) if cosine >= threshold]


def representatives(pairs: Sequence[tuple[str, str]], weight: Mapping[str, int] | None = None) -> dict[str, str]:
    """Each key of *pairs* -> the key of its group (the keys the pairs join it to) with the largest
    *weight* (how many definitions give it), then the first in sorted order: "reinforcement
    learning", defined by hundreds, not "reinforcement learned", defined once.

    >>> representatives([("reinforcement learned", "reinforcement learning")], {"reinforcement learning": 578})
    {'reinforcement learned': 'reinforcement learning', 'reinforcement learning': 'reinforcement learning'}
    """
    from networkx.utils import UnionFind

    weight = weight or {}
    groups = UnionFind()
    for a, b in pairs:
        groups.union(a, b)
    out = {}
    for group in groups.to_sets():
        best = min(group, key=lambda k: (-weight.get(k, 0), k))
        out.update((k, best) for k in group)
    return dict(sorted(out.items()))


def phrase_key(phrase: str) -> tuple[str | None, list[str]]:
    """The key of a phrase with no acronym (the same in every paper); else None and the tokens of
    the phrase (its acronym dropped, `without_short_form`; `acronym_tokens`) to `expand_acronyms`.

    >>> phrase_key("zeroth-order methods"), phrase_key("LLMs (LLM)")
    (('zeroth order method', []), (None, ['LLMs']))
    """
    if is_plain_phrase(phrase):  # most phrases: the words are there to see
        return normalize_phrase(phrase.replace("-", " ")), []
    words = phrase_words(without_short_form(phrase))
    if any(not w.islower() and is_acronym(w) for w in words):  # (islower: most words, at C speed)
        return None, acronym_tokens(without_short_form(phrase))
    return normalize_phrase(" ".join(words)), words


# Words after a hyphen that make an acronym a modifier, not part of a name ("LLM-based agents",
# "GNN-driven"): such an acronym may be expanded; any other hyphenated token with an acronym in it
# is a name (EM-POWER, IG-Net, a-GPS, DR-submodular) and is never expanded inside.
MODIFIERS = frozenset("""
agnostic aided assisted augmented aware based centered centric compatible conditioned driven empowered enabled
enhanced equipped free friendly generated guided induced informed inspired integrated like level only oriented
powered ready related scale specific style styled supported trained tuned type
""".split())

_TOKEN_EDGE = re.compile(r"^[^\w+#]+|[^\w+#]+$")


def acronym_tokens(phrase: str) -> list[str]:
    """The tokens of a phrase with an acronym: split at white space only, each stripped of the signs
    around it, so that a hyphenated name stays one token.

    >>> acronym_tokens("text-based VQA datasets"), acronym_tokens("EM-POWER, (IG-Net)")
    (['text-based', 'VQA', 'datasets'], ['EM-POWER', 'IG-Net'])
    """
    return [t for t in (_TOKEN_EDGE.sub("", w) for w in phrase.split()) if t]


def local_definitions(defs: Sequence[tuple[str, str]]) -> dict[str, str | None]:
    """A paper's acronyms: short-form key -> long-form key, or None for one it defines two ways
    (that paper's uses of it are then expanded neither by its own definitions nor by the corpus's).
    An acronym inside a long form takes the paper's definition of it too, so that "multimodal
    LLM" (MLLM) and "multimodal large language model" are one key.

    >>> local_definitions([("LLMs", "large language models"), ("MLLMs", "multimodal LLMs")])
    {'LLM': 'large language model', 'MLLM': 'multimodal large language model'}
    """
    local: dict[str, str | None] = {}
    for short, long in defs:
        key, long_key = short_key(short), normalize_phrase(long)
        local[key] = long_key if local.get(key, long_key) == long_key else None
    for short, long in defs:
        key = short_key(short)
        if local[key] and not is_plain_phrase(long):
            words = [local.get(short_key(w)) or w if short_key(w) != key and is_acronym(w) else w
                     for w in acronym_tokens(long)]
            local[key] = normalize_phrase(" ".join(words))
    return local


def expand_acronyms(tokens: Sequence[str], local: Mapping[str, str | None],
                    sense: Callable[[str], str | None]) -> tuple[str, bool]:
    """The phrase of *tokens* (`acronym_tokens`) with each acronym replaced by its long-form key, and
    whether any was. An acronym the paper defines takes its paper's long form (`local`); one it
    does not, the long form *sense* gives its key (`kg.concepts.senses`: what the paper's text
    supports), if any. A word of English in capitals (US, IT, ALL) is expanded by its paper's own
    definition only, and a hyphenated token is a name unless it is an acronym and `MODIFIERS`
    ("LLM-based"), or the paper defines it whole.

    >>> expand_acronyms(["LLM-based", "agents", "EM-POWER", "IT"], {}, {"LLM": "large language model", "EM": "em"}.get)
    ('large language model based agents EM-POWER IT', True)
    """
    out = []
    expanded = False
    for token in tokens:
        long = None
        rest = ""
        if not token.islower() and is_acronym(token):
            key = short_key(token)
            if key not in local and ("-" in token or "/" in token):  # a name, unless acronym + modifier
                head, _, tail = token.partition("-")
                modified = "/" not in token and is_acronym(head) and tail and all(w in MODIFIERS for w in tail.split("-"))
                key, rest = (short_key(head), " " + tail.replace("-", " ")) if modified else (None, "")
            if key is not None:
                long = local[key] if key in local else None if key.lower() in ENGLISH_CAPITALS else sense(key)
        if long:
            out.append(long + rest)
            expanded = True
        else:
            out.append(token)
    return " ".join(out), expanded


_TRAILING_SHORT_FORM = re.compile(r"^(.*?\S)\s*\(\s*([^()\s]+)\s*\)$")


def without_short_form(phrase: str) -> str:
    """A phrase with the acronym it defines in parentheses dropped, so that it joins its concept.

    >>> without_short_form("graph neural networks (GNNs)"), without_short_form("f(x)")
    ('graph neural networks', 'f(x)')
    """
    if ")" not in phrase:  # most phrases: no match possible
        return phrase
    m = _TRAILING_SHORT_FORM.match(phrase)
    return m.group(1) if m and is_acronym(m.group(2)) else phrase
