"""Text cleaning: strip LaTeX and markdown noise before extraction, pull out URLs.

Every function here is pure: text in, text out.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["clean_text", "find_urls", "normalize_space"]

_URL = re.compile(r"""(?:https?://|www\.)[^\s<>"'\])}]+""", re.IGNORECASE)
_URL_TRAIL = ".,;:!?)]}'\""

# Characters that carry no text: zero-width spaces and joiners, BOM, soft hyphen.
_INVISIBLE = re.compile("[\u200b\u200c\u200d\u2060\ufeff\u00ad]")
_TYPOGRAPHIC = str.maketrans(
    {
        "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": " - ",
        "\u2015": " - ", "\u2212": "-",
        "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'",
        "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"',
        "\u00ab": '"', "\u00bb": '"', "\u2039": "'", "\u203a": "'",
        "\u2026": "...",
    }
)
_HAS_TYPOGRAPHIC = re.compile("[" + "".join(map(chr, _TYPOGRAPHIC)) + "]")

_DISPLAY_MATH = re.compile(r"\$\$.*?\$\$|\\\[.*?\\\]", re.DOTALL)
_INLINE_MATH = re.compile(r"(?<!\\)\$(?:\\\$|[^$])*?(?<!\\)\$%?|\\\(.*?\\\)%?", re.DOTALL)
# \cmd{...} keeps its argument; size and style switches inside braces vanish.
_SWITCH = re.compile(r"\\(?:small|tiny|scriptsize|footnotesize|large|Large|LARGE|huge|Huge|normalsize|bf|it|em|rm|sc|tt|sf)\b\s*")
_COMMAND_WITH_ARG = re.compile(r"\\[A-Za-z]+\*?\s*\{([^{}]*)\}")
_BARE_COMMAND = re.compile(r"\\[A-Za-z]+\*?")
_LATEX_ESCAPE = re.compile(r"\\([%&#_$])")
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_MD_EMPHASIS = re.compile(r"(\*{1,3}|_{2,3})(?=\S)(.+?)(?<=\S)\1")
_MD_CODE = re.compile(r"`([^`]+)`")
# A LaTeX comment: a % that is not a percentage ("68.2%", "50 %"). Scraped abstracts
# lose their line breaks, so it runs to the end of its line or of its sentence.
_COMMENT = re.compile(r"(?<![\d\s])%[^\n.!?]*|(?<=\s)%(?=[A-Za-z])[^\n.!?]*")
_HTML_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_EMPTY_BRACKETS = re.compile(r"\(\s*[,;:]?\s*\)|\[\s*\]")
_SPACE_BEFORE = re.compile(r"\s+([,.;:!?)])")
_OPEN_SPACE = re.compile(r"\(\s+")


def normalize_space(text: str) -> str:
    """Unicode NFC, invisible characters dropped, every run of white space one space."""
    return _single_spaced(_INVISIBLE.sub("", unicodedata.normalize("NFC", text)))


def _single_spaced(text: str) -> str:
    # every run of white space one space, none at the ends: re.sub(r"\s+", " ", text).strip(),
    # faster (str.split and re's \s take the same characters as white space)
    return " ".join(text.split())


def find_urls(text: str) -> tuple[str, ...]:
    """URLs in *text*, in order of first appearance, without trailing punctuation.

    >>> find_urls("Code: https://github.com/a/b. See www.x.org/y)")
    ('https://github.com/a/b', 'http://www.x.org/y')
    """
    seen: dict[str, None] = {}
    for match in _URL.finditer(text):
        url = match.group(0).rstrip(_URL_TRAIL)
        if url.lower().startswith("www."):
            url = "http://" + url
        seen.setdefault(url, None)
    return tuple(seen)


_WORD_IN_MATH = re.compile(r"\$\s*([A-Za-z][A-Za-z0-9+\-]{2,})\s*\$")


def _keep_word_math(match: re.Match) -> str:
    """Math that holds one name (``$HARMONIC$``) keeps the name; any other math goes."""
    word = _WORD_IN_MATH.fullmatch(match.group(0).rstrip("%"))
    return word.group(1) if word else " "


def clean_text(text: str) -> str:
    """Text fit for keyphrase extraction: no math, LaTeX, markdown, HTML tags or URLs.

    >>> clean_text(r"We use \\emph{\\small Random Reshuffling} and ***Atom Theory*** ($R^2$).")
    'We use Random Reshuffling and Atom Theory.'
    """
    text = _INVISIBLE.sub("", unicodedata.normalize("NFKC", text))
    if _HAS_TYPOGRAPHIC.search(text):  # translate looks up every character: only when needed
        text = text.translate(_TYPOGRAPHIC)
    # Each pattern runs only when the character it needs is there: most abstracts have no markup.
    if "](" in text:
        text = _MD_LINK.sub(lambda m: m.group(1), text)
    lowered = text.lower()
    if "http" in lowered or "www." in lowered:
        text = _URL.sub(" ", text)
    if "$" in text or "\\" in text:
        text = _DISPLAY_MATH.sub(" ", text)
        text = _INLINE_MATH.sub(_keep_word_math, text)
    if "%" in text:
        text = _COMMENT.sub(" ", text)
    if "\\" in text:
        text = _LATEX_ESCAPE.sub(r"\1", text)
        text = _SWITCH.sub("", text)
        previous = None
        while previous != text:  # nested \emph{\textbf{...}}
            previous = text
            text = _COMMAND_WITH_ARG.sub(lambda m: m.group(1), text)
        text = _BARE_COMMAND.sub(" ", text)
    text = text.replace("{", "").replace("}", "")
    if "`" in text:
        text = _MD_CODE.sub(lambda m: m.group(1), text)
    if "*" in text or "__" in text:
        previous = None
        while previous != text:
            previous = text
            text = _MD_EMPHASIS.sub(lambda m: m.group(2), text)
    if "<" in text:
        text = _HTML_TAG.sub(" ", text)
    text = _single_spaced(text)
    # Empty brackets left where math or a URL stood, and space before punctuation.
    if "(" in text or "[" in text:
        text = _EMPTY_BRACKETS.sub("", text)
    text = _SPACE_BEFORE.sub(r"\1", text)
    if "(" in text:
        text = _OPEN_SPACE.sub("(", text)
    return _single_spaced(text)
