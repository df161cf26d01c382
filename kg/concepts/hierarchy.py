"""Broader concepts: each concept's longest head that is a concept, or that heads concepts of
several papers (then a concept of its own)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from itertools import accumulate

from kg.concepts.model import Concept, concept_slug
from kg.text.phrases import GENERIC, is_filler, is_plain_phrase, normalize_phrase

__all__ = ["add_broader", "broader_keys"]


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
    if is_plain_phrase(label):  # most labels
        heads = _plain_heads(label)
        if heads is not None:
            return heads
    words = label.split()
    out = [normalize_phrase(" ".join(words[i:])) for i in range(1, len(words))]
    if out and out[-1] in GENERIC:  # out[-1]: the key of the last word
        base = words[:-1]
        out += [normalize_phrase(" ".join(base[i:])) for i in range(len(base))]
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
    key_words = normalize_phrase(phrase.replace("-", " ")).split(" ")
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
    parent, implied = broader_keys([(c.key, c.label, c.papers) for c in concepts])
    out = [replace(c, broader=_broader_ids(parent.get(c.key))) for c in concepts]
    return out + [Concept(concept_slug(head), head, head, (), (), _broader_ids(parent.get(head))) for head in implied]


def _broader_ids(up: str | None) -> tuple[str, ...]:
    return (concept_slug(up),) if up else ()


def broader_keys(concepts: Sequence[tuple[str, str, Sequence[str]]]) -> tuple[dict[str, str], list[str]]:
    """`add_broader` on the (key, label, papers) of each concept: the key of each key's broader
    concept, and the heads that become concepts of their own (in the order they do)."""
    heads_of: dict[str, list[str]] = {}  # key -> the heads of its label
    one: dict[str, str] = {}  # each head one string, however many labels it heads
    for key, label, _ in concepts:
        heads_of[key] = [one.setdefault(head, head) for head in _heads(label)]
    # a head that is the label of a concept with another key is that concept ("linear programming",
    # the label of the key "linear program"), not a second concept of the same name
    labelled = {}
    for key, label, _ in concepts:
        named = normalize_phrase(label)
        if named != key and named not in heads_of:
            labelled.setdefault(named, key)
    headed: dict[str, list[tuple[str, Sequence[str]]]] = defaultdict(list)  # head -> the (key, papers) it heads
    for key, _, papers in concepts:  # (of the heads that are no concept's key or label: `meaningful` counts them)
        member = (key, papers)
        for head in heads_of[key]:
            if head not in heads_of and head not in labelled:
                headed[head].append(member)
    del one

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
    return parent, [normalize_phrase(head) for head in implied]


def _reaches(parent: Mapping[str, str], start: str, key: str) -> bool:
    """Whether *key* is *start* or above it in *parent* (key -> its broader key)."""
    seen = set()
    while start not in seen:
        if start == key:
            return True
        seen.add(start)
        start = parent.get(start, start)
    return False
