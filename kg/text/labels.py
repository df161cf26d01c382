"""Short readable labels for papers that come without a title.

The label is the name of the method the abstract introduces (``we propose OVLR``,
``a meta-algorithm, termed IRESET``, ``we introduce ***Atom Theory***``) when there is
one; else the preferred label of its leading concept.
"""

from __future__ import annotations

import re

from kg.text.acronyms import find_definitions, is_acronym

__all__ = ["method_name", "paper_label"]

_CUE = r"(?:propos(?:e|es|ed|ing)|introduc(?:e|es|ed|ing)|present(?:s|ed|ing)?|develop(?:s|ed|ing)?|design(?:s|ed|ing)?|term(?:ed)?|call(?:ed)?|nam(?:ed)|dub(?:bed)?|coin(?:ed)?)"
_EMPHASIS = re.compile(
    r"\b" + _CUE + r"\b[^.;:]{0,40}?(?:(?<![\w*])\*{2,3}([^*\n]{2,60}?)\*{2,3}(?![\w*])|\\textbf\{([^{}]{2,60})\}|\\emph\{(?:\\\w+\s*)?([^{}]{2,60})\}|\$([A-Za-z][A-Za-z0-9+\-]{2,})\$)",
    re.IGNORECASE,
)
_CUE_WORD = re.compile(r"^" + _CUE + r"$", re.IGNORECASE)
_TOKEN = re.compile(r"[A-Za-z0-9][\w+\-]*[\w+]|[A-Za-z0-9]|[,:;.()]")
# What may follow a method's name: punctuation, or a word that starts a clause.
_AFTER_NAME = frozenset("( , : ; . which that is to for as achieves and uses".split())
_FILLER = frozenset("a an the novel new simple general efficient method methods framework algorithm approach technique model procedure meta-algorithm , : called termed named dubbed".split())


def _is_name(token: str) -> bool:
    if not is_acronym(token):
        return False
    # A plural acronym (LLMs, GNNs) names a kind of thing, not a method.
    return not (len(token) > 2 and token.endswith("s") and token[-2].isupper())


def method_name(abstract: str, text: str) -> str | None:
    """The name of the method an abstract introduces, or None.

    *abstract* is the text as given (for emphasis such as ``**Name**``), *text* the cleaned one.

    >>> method_name("we propose \\\\textbf{LOZO+}, a ZO method for LLMs", "we propose LOZO+, a ZO method for LLMs")
    'LOZO+'
    >>> method_name("", "In this paper, we propose a novel meta-algorithm, termed IRESET, which aggregates experts.")
    'IRESET'
    >>> method_name("", "We study the convergence of SGD for LLMs.") is None
    True
    """
    match = _EMPHASIS.search(abstract)
    if match:
        name = next(g for g in match.groups() if g)
        name = re.sub(r"\\\w+\s*", "", name).strip(" *$")
        if name and len(name.split()) <= 5:
            return name
    tokens = _TOKEN.findall(text)
    cues = [i for i, token in enumerate(tokens) if _CUE_WORD.match(token)]
    for i in cues:
        steps = 0
        for j in range(i + 1, min(i + 10, len(tokens))):
            follower = tokens[j]
            after = tokens[j + 1] if j + 1 < len(tokens) else "."
            # A name introduced here: first used here, not a modifier of a following noun.
            if _is_name(follower) and follower not in tokens[:i] and (after in _AFTER_NAME or after.lower() in _AFTER_NAME):
                return follower
            if follower.lower() not in _FILLER:
                steps += 1
            if follower == "." or steps > 4:
                break
    # An acronym the abstract defines in a sentence that introduces something.
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        for cue in re.finditer(r"\b" + _CUE + r"\b", sentence, re.IGNORECASE):
            rest = sentence[cue.end():]
            for short, long in find_definitions(rest).items():
                # the defined long form must follow the cue directly ("called Long Form (LF)")
                if _is_name(short) and 0 <= rest.find(long) <= 25 and short not in text[: text.find(sentence)]:
                    return short
    return None


def paper_label(abstract: str, text: str, *, title: str | None, leading_concept: str | None) -> str:
    """The paper's label: its title, else the method it introduces, else its leading concept."""
    if title:
        return title
    name = method_name(abstract, text)
    if name:
        return name
    if leading_concept:
        return leading_concept[:1].upper() + leading_concept[1:]
    words = text.split()
    return " ".join(words[:8]) + ("…" if len(words) > 8 else "")
