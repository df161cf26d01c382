"""Acronym definitions in text, after Schwartz & Hearst (2003): ``long form (SF)``, ``long form
(SF; more)`` and ``SF (long form)``.

Pure functions on strings. ``definition_pairs`` lists every (short form, long form) an abstract
defines, ``find_definitions`` maps each short form it defines one way to its long form (one letter,
``(a)`` or ``(i)``, is never a short form; two long forms for one short form define neither);
``strip_definitions`` removes the ``(SF)`` so that the long form reads as one phrase again
(``zeroth-order (ZO) optimization`` -> ``zeroth-order optimization``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping

__all__ = ["definition_pairs", "find_definitions", "strip_definitions", "is_acronym"]

_PAREN = re.compile(r"\(\s*([^()]{1,60}?)\s*\)")
_SHORT_PART = re.compile(r"[;,]")  # (SF; more), (SF, more)
_CLAUSE = re.compile(r"[.;:!?()\[\]]|,\s")
_DEFINED = re.compile(r"\s*\(\s*([^()]*?)\s*\)")  # a parenthesis and the white space before it
_CLAUSE_CHARS = 2000  # looked at before a parenthesis: the long form is at most 17 words of its clause
_WORD = re.compile(r"\S+")
_QUOTES = "'\"`~"  # never at either end of a short or long form ("large language models' (LLMs')")


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
        while l >= 0 and (long[l].lower() != c or (s == 0 and l > 0 and long[l - 1].isalnum() and not _opens(long, l))):
            l -= 1
        if l < 0:
            return None
        l -= 1
        s -= 1
    start = long.rfind(" ", 0, l + 1) + 1
    return long[start:]


def _opens(long: str, i: int) -> bool:
    """Whether the letter at *i*, inside a word, may stand for the word all the same: a capital the
    writer set there ("eXplainable AI (XAI)") or the x of a word that opens with "ex" ("explainable
    artificial intelligence (XAI)")."""
    start = long.rfind(" ", 0, i) + 1
    return long[i].isupper() and long[start:i].islower() or (long[i] in "xX" and i == start + 1 and long[start] in "eE")


def _fold(long: str) -> str:
    """A long form compared with another of the same short form: case, hyphens and a final s aside."""
    words = long.lower().replace("-", " ").split()
    return " ".join(w[:-1] if w.endswith("s") and len(w) > 3 else w for w in words)


def definition_pairs(text: str) -> list[tuple[str, str]]:
    """Every (short form, long form) the text defines, in text order, each distinct one once:
    ``long form (SF)``, ``long form (SF; more)`` / ``(SF, more)``, and ``SF (long form)``.

    A short form defined with two different long forms appears with both (`find_definitions`
    keeps neither: the text is ambiguous about it).

    >>> definition_pairs("policy optimization (PO) under partial observability (PO)")
    [('PO', 'policy optimization'), ('PO', 'partial observability')]
    """
    found: dict[tuple[str, str], None] = {}
    seen: dict[str, set[str]] = {}
    for match in _PAREN.finditer(text):
        inside = match.group(1).strip()
        head = _short_part(inside)  # (SF; more): only an acronym opens such a parenthesis
        pair = (_long_before(text, match.start(), head) if head == inside.strip(_QUOTES) or is_acronym(head) and not _listed(inside)
                else None) or _short_before(text, match.start(), inside)
        if pair is None:
            continue
        short, long = pair
        folded = _fold(long)
        if folded not in seen.setdefault(short, set()):
            seen[short].add(folded)
            found[(short, long)] = None
    return list(found)


def _listed(inside: str) -> bool:
    """Whether a parenthesis is a list of names, not a short form and a remark: "images of single
    objects (ImageNet, CIFAR etc)" gives examples of the words before it, and defines none of them."""
    if inside.rstrip(". ").lower().endswith(" etc"):
        return True
    parts = [part.strip().strip(_QUOTES) for part in _SHORT_PART.split(inside)]
    second = parts[1].split() if len(parts) > 1 else []
    if not 0 < len(second) <= 2:
        return False
    # a second name (CIFAR, GPT-2 etc), not a citation (LeCun et al.) or a remark (e.g. GCN)
    return second[0].lower().startswith("etc") or is_acronym(second[0]) and "et" not in second


def _short_part(inside: str) -> str:
    """The first part of a parenthesis, without quotes around it: (SF; more) and (LLMs') give SF, LLMs."""
    return _SHORT_PART.split(inside, 1)[0].strip().strip(_QUOTES)


def _long_before(text: str, start: int, short: str) -> tuple[str, str] | None:
    """``long form (SF)``: the long form in the clause before the parenthesis at *start*,
    at most min(|SF| + 5, 2 |SF|) words."""
    if not _valid_short(short):
        return None
    clause = _CLAUSE.split(text[max(0, start - _CLAUSE_CHARS):start].rstrip())[-1]  # not the whole text each time
    words = _WORD.findall(clause)
    window = " ".join(words[-min(len(short) + 5, 2 * len(short)):])
    long = _best_long_form(short, window) if window else None
    if not long:
        return None
    long = long.strip(" ,;:-" + _QUOTES)
    if len(long) <= len(short) or short.lower() in long.lower().split():
        return None
    return short, long


def _short_before(text: str, start: int, inside: str) -> tuple[str, str] | None:
    """``SF (long form)``: an acronym right before the parenthesis at *start* whose letters the
    words inside spell (`_spells`): the whole parenthesis is the long form."""
    before = text[max(0, start - _CLAUSE_CHARS):start].rstrip()
    short = before[before.rfind(" ") + 1:] if before else ""
    return (short, inside) if is_acronym(short) and _valid_short(short) and _spells(short, inside) else None


def _spells(short: str, inside: str) -> bool:
    """Whether the 2 to 8 words *inside* a parenthesis are the long form of *short* (Schwartz-Hearst,
    from the first word's first letter on)."""
    words = inside.split()
    if not 2 <= len(words) <= 8 or not all(w.replace("-", "").isalpha() for w in words):
        return False
    return _best_long_form(short, inside) == inside and inside[0].lower() == short[0].lower()


def find_definitions(text: str) -> dict[str, str]:
    """Short form -> long form for every acronym the text defines one way (`definition_pairs`).

    >>> find_definitions("Federated Adversarial Learning (FAL) enhances large language models (LLMs).")
    {'FAL': 'Federated Adversarial Learning', 'LLMs': 'large language models'}
    >>> find_definitions("zeroth-order (ZO) optimization")
    {'ZO': 'zeroth-order'}
    """
    pairs = definition_pairs(text)
    twice = {s for s, n in Counter(s for s, _ in pairs).items() if n > 1}
    return {s: l for s, l in pairs if s not in twice}


def strip_definitions(text: str, definitions: Iterable[str] | Mapping[str, str]) -> str:
    """Remove each defined short form's parenthesis, so the long form is one phrase:
    ``long (SF)`` and ``long (SF; more)`` lose the parenthesis, ``SF (long)`` becomes ``long``.

    >>> strip_definitions("zeroth-order (ZO) optimization is fast", {"ZO": "zeroth-order"})
    'zeroth-order optimization is fast'
    >>> strip_definitions("We train with SGD (stochastic gradient descent).", ["SGD"])
    'We train with stochastic gradient descent.'
    """
    shorts = set(definitions)
    if not shorts:
        return text
    out: list[str] = []
    last = 0
    for match in _DEFINED.finditer(text):  # one pass over the text, whatever the number of definitions
        inside = match.group(1)
        if _short_part(inside) in shorts:  # long (SF), long (SF; more)
            out.append(text[last:match.start()])
            last = match.end()
            continue
        start = _short_ending_at(text, match.start(), last, shorts)
        if start is not None and _spells(text[start:match.start()], inside):  # SF (long)
            out.append(text[last:start])
            out.append(inside)
            last = match.end()
    out.append(text[last:])
    return "".join(out)


def _short_ending_at(text: str, end: int, floor: int, shorts: set[str]) -> int | None:
    """Where a short form of *shorts* that ends at *end* and follows no word character starts."""
    for n in range(2, 13):
        start = end - n
        if start < floor:
            return None
        if text[start:end] in shorts and (start == 0 or not (text[start - 1].isalnum() or text[start - 1] in "_-")):
            return start
    return None
