"""What never belongs in a concept label: a citation key, markup, stray punctuation at its ends.

`trim_label` removes the punctuation a label may carry at its ends from the text it was cut from
("reinforcement learning~", "large language models'"); `label_noise` says what is wrong with a
label, so that a build's labels can be checked (citation keys and markup are cleaned from the text
before extraction, `kg.text.clean`: a label that still has one shows a gap there).
"""

from __future__ import annotations

import re

from kg.text.clean import citation_keys

__all__ = ["is_trimmed", "label_noise", "trim_label"]

# Signs no label opens or ends with. A "." ends one only as an abbreviation's ("U.S.", "et al.").
_LEADING = re.compile(r"^[\s~'\"`,;:!?*_/-]+")
_TRAILING = re.compile(r"[\s~'\"`,;:!?*_/-]+$")
_MARKUP = re.compile(r"\\[A-Za-z]|[{}$~`]|\*\*|</?[A-Za-z][^<>]*>|&(?:[a-z]+|#\d+);")
_ET_AL = re.compile(r"\bet al\b")


def is_trimmed(label: str) -> bool:
    """Whether *label* ends, at both ends, with a letter or digit (most labels: `trim_label` leaves them)."""
    return label[:1].isalnum() and label[-1:].isalnum()


def trim_label(label: str) -> str:
    """*label* without stray signs at its ends: quotes, tildes, commas and the like, a lone closing
    or opening bracket, a final "." that ends no abbreviation.

    >>> [trim_label(x) for x in ["reinforcement learning~", "large language models'", "U.S.", "C++", "(un)supervised"]]
    ['reinforcement learning', 'large language models', 'U.S.', 'C++', '(un)supervised']
    """
    while True:
        trimmed = _TRAILING.sub("", _LEADING.sub("", label))
        if trimmed.endswith(".") and "." not in trimmed[:-1]:
            trimmed = trimmed[:-1]
        if trimmed.endswith((")", "]")) and trimmed.count(trimmed[-1]) > trimmed.count("(" if trimmed[-1] == ")" else "["):
            trimmed = trimmed[:-1]
        if trimmed.startswith(("(", "[")) and trimmed.count(trimmed[0]) > trimmed.count(")" if trimmed[0] == "(" else "]"):
            trimmed = trimmed[1:]
        if trimmed == label:
            return label
        label = trimmed


def label_noise(label: str) -> str | None:
    """What is wrong with a concept label: "citation key", "markup" or "end punctuation"; None
    when nothing is.

    >>> [label_noise(x) for x in ["CLIP radford2021learning", "{\\\\em sparse} attention", "RL~", "word2vec"]]
    ['citation key', 'markup', 'end punctuation', None]
    """
    if citation_keys(label) or _ET_AL.search(label):
        return "citation key"
    if trim_label(label) != label:
        return "end punctuation"
    if _MARKUP.search(label):
        return "markup"
    return None
