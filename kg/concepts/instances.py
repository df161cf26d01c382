"""Named instances: a word and the word plus the noun of what the abstracts say it names
("adam" / "adam optimizer": "the Adam optimizer", "optimizers such as Adam").
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

from kg.common.processes import Beside
from kg.concepts.variants import CLASS_NOUNS
from kg.text.phrases import is_filler

__all__ = ["INSTANCE_NOUNS", "instance_candidates", "named_instances", "said_instances"]

# What a single word names when the corpus says it is one ("the Adam optimizer", "optimizers such
# as Adam", "Adam is the de facto optimizer"): `named_instances`.
INSTANCE_NOUNS = CLASS_NOUNS | frozenset("optimizer estimator classifier model architecture solver network regularizer sampler".split())
SPLIT_FROM = 2000  # texts from which `named_instances` given *beside* reads half of them there (~0.3 s each 1,000)


def named_instances(keys: Iterable[str], texts: Iterable[str], *, beside: Beside | None = None) -> list[tuple[str, str]]:
    """Pairs ``P`` / ``P c`` of keys, ``P`` one word and ``c`` an `INSTANCE_NOUNS` word, that some
    text says are one thing: ``P`` names a ``c`` ("the Adam optimizer", written with a capital),
    ``c``\\s such as / like / including / e.g. ``P``, or ``P`` is a(n)/the ... ``c``. *beside*
    (`kg.common.processes.Beside`) may read half of many texts while this reads the other half:
    the pairs are those some text says, found in either half.

    >>> named_instances(["adam", "adam optimizer", "graph", "graph algorithm"],
    ...                 ["We use adaptive optimizers like Adam.", "A graph algorithm on a graph."])
    [('adam', 'adam optimizer')]
    """
    wanted = instance_candidates(keys)
    if not wanted:
        return []
    if beside is not None:
        texts = list(texts)
        if len(texts) >= SPLIT_FROM:
            half = len(texts) // 2
            pending = beside(lambda: said_instances(wanted, texts[half:]))
            found = said_instances(wanted, texts[:half]) | pending.result()
            return sorted((stem, f"{stem} {noun}") for stem, noun in found)
    return sorted((stem, f"{stem} {noun}") for stem, noun in said_instances(wanted, texts))


def instance_candidates(keys: Iterable[str]) -> dict[str, list[str]]:
    """The pairs `named_instances` looks for among *keys*: each one-word key P -> the nouns c of the keys P c."""
    keys = set(keys)
    wanted: dict[str, list[str]] = defaultdict(list)
    for key in keys:
        stem, _, last = key.rpartition(" ")
        if stem and " " not in stem and last in INSTANCE_NOUNS and stem in keys and not is_filler(stem):
            wanted[stem].append(last)
    return dict(wanted)


def said_instances(wanted: Mapping[str, Sequence[str]], texts: Iterable[str]) -> set[tuple[str, str]]:
    """The (P, c) of *wanted* (`instance_candidates`) that some of *texts* says are one thing (`named_instances`):
    a set, so that what several groups of texts say is their union."""
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
    return found


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
