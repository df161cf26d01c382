"""Acronym definitions in text, after Schwartz & Hearst (2003): ``long form (SF)``.

Pure functions on strings. ``find_definitions`` maps each short form an abstract defines
to its long form; ``strip_definitions`` removes the ``(SF)`` so that the long form reads
as one phrase again (``zeroth-order (ZO) optimization`` -> ``zeroth-order optimization``).
"""

from __future__ import annotations

import re

__all__ = ["find_definitions", "strip_definitions", "is_acronym"]

_PAREN = re.compile(r"\(\s*([^()]{1,20}?)\s*\)")
_DEFINED = re.compile(r"\s*\(\s*([^()]*?)\s*\)")  # a parenthesis and the white space before it
_CLAUSE_CHARS = 2000  # looked at before a parenthesis: the long form is at most 17 words of its clause
_WORD = re.compile(r"\S+")


def is_acronym(token: str) -> bool:
    """A token written as an acronym: two or more capitals, or a capital after the first letter.

    >>> [is_acronym(t) for t in ("LLMs", "ZO", "NeurIPS", "Gemma2", "the", "SGD")]
    [True, True, True, False, False, True]
    """
    if token.islower():  # no capital at all (most tokens)
        return False
    letters = [c for c in token if c.isalpha()]
    if len(letters) < 2:
        return False
    upper = sum(c.isupper() for c in letters)
    return upper >= 2 or (upper >= 1 and not letters[0].isupper())


def _valid_short(short: str) -> bool:
    if not (2 <= len(short) <= 12) or len(short.split()) > 2:
        return False
    if not short[0].isalnum() or not any(c.isalpha() for c in short):
        return False
    return any(c.isupper() for c in short)


def _best_long_form(short: str, long: str) -> str | None:
    """Schwartz-Hearst: match the short form's characters right to left in the long form."""
    s = len(short) - 1
    l = len(long) - 1
    while s >= 0:
        c = short[s].lower()
        if not c.isalnum():
            s -= 1
            continue
        while l >= 0 and (long[l].lower() != c or (s == 0 and l > 0 and long[l - 1].isalnum())):
            l -= 1
        if l < 0:
            return None
        l -= 1
        s -= 1
    start = long.rfind(" ", 0, l + 1) + 1
    return long[start:]


def find_definitions(text: str) -> dict[str, str]:
    """Short form -> long form for every ``long form (SF)`` the text defines.

    >>> find_definitions("Federated Adversarial Learning (FAL) enhances large language models (LLMs).")
    {'FAL': 'Federated Adversarial Learning', 'LLMs': 'large language models'}
    >>> find_definitions("zeroth-order (ZO) optimization")
    {'ZO': 'zeroth-order'}
    """
    found: dict[str, str] = {}
    for match in _PAREN.finditer(text):
        short = match.group(1).strip()
        if not _valid_short(short):
            continue
        before = text[max(0, match.start() - _CLAUSE_CHARS) : match.start()].rstrip()  # not the whole text each time
        # The clause before the parenthesis, at most min(|SF| + 5, 2 |SF|) words.
        clause = re.split(r"[.;:!?()\[\]]|,\s", before)[-1]
        words = _WORD.findall(clause)
        n = min(len(short) + 5, 2 * len(short))
        window = " ".join(words[-n:])
        if not window:
            continue
        long = _best_long_form(short, window)
        if not long:
            continue
        long = long.strip(" ,;:-")
        if len(long) <= len(short) or short.lower() in long.lower().split():
            continue
        found.setdefault(short, long)
    return found


def strip_definitions(text: str, definitions: dict[str, str]) -> str:
    """Remove ``(SF)`` after each defined long form, so the long form is one phrase.

    >>> strip_definitions("zeroth-order (ZO) optimization is fast", {"ZO": "zeroth-order"})
    'zeroth-order optimization is fast'
    """
    if not definitions:
        return text
    # one pass over the text, whatever the number of definitions
    return _DEFINED.sub(lambda m: "" if m.group(1) in definitions else m.group(0), text)
