"""Text cleaning: strip LaTeX and markdown noise before extraction, pull out URLs.

Every function here is pure: text in, text out.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["citation_keys", "clean_text", "find_urls", "normalize_space"]

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

# A fenced code block, ``` or ~~~ (three or more, an optional language) through the same fence,
# with its line breaks or with them collapsed ("```python import torch ```"). The fences stand
# alone, between white space: LaTeX quote runs like "``````''edge''" are no fence.
_CODE_FENCE = re.compile(r"(?<!\S)(`{3,}|~{3,})[\w+#.-]*\s(?:.*?\s)?\1(?![`~])", re.DOTALL)
# A % that may open a comment to the end of its line: at the start or after white space.
# _strip_line_comments decides ("% TODO" opening a line, "text % TODO fix it").
_LINE_COMMENT = re.compile(r"(?<!\S)%")
# What follows a % in mid-line that opens a comment: a space and a word ("% TODO").
_COMMENT_WORD = re.compile(r"[ \t]+[A-Za-z]")
# Text before a % that makes it a percentage: a number ("95 %", "10+%", "(100)%", "$20$ %",
# "20~%", "5\n% gain").
_NUMBER_BEFORE = re.compile(r"\d[+)$}~]*\s*$")
_NON_SPACE = re.compile(r"\S")
_DISPLAY_MATH = re.compile(r"\$\$.*?\$\$", re.DOTALL)
_BRACKET_MATH = re.compile(r"\\\[.*?\\\]", re.DOTALL)
# $...$ or \(...\), with a % right after; _math_text decides whether a $...$ is math.
_INLINE_MATH = re.compile(r"(?<!\\)\$(?:\\\$|[^$])*?(?<!\\)\$%?", re.DOTALL)
_PAREN_MATH = re.compile(r"\\\(.*?\\\)%?", re.DOTALL)
# A plain word in a would-be math span: two or more letters between spaces, not a \command
# ("$5 per run and $": per, run, and).
_PLAIN_WORD = re.compile(r"(?:^|(?<=\s))[A-Za-z]{2,}[,;:.!?]?(?=\s|$)")
# \cmd{...} keeps its argument; size and style switches inside braces vanish.
_SWITCH = re.compile(r"\\(?:small|tiny|scriptsize|footnotesize|large|Large|LARGE|huge|Huge|normalsize|bf|it|em|rm|sc|tt|sf)\b\s*")
_COMMAND_WITH_ARG = re.compile(r"\\[A-Za-z]+\*?\s*\{([^{}]*)\}")
_BARE_COMMAND = re.compile(r"\\[A-Za-z]+\*?")
_LATEX_ESCAPE = re.compile(r"\\([%&#_$])")
# A citation, cross-reference or label command with its optional arguments and its key: the key
# names a bibliography entry or an anchor, never text ("\\citep[see][]{hu2021lora}", "\\ref{fig:1}").
_REFERENCE = re.compile(
    r"\\(?:[A-Za-z]*[Cc]ite[A-Za-z]*|[cC]ref|[a-z]*ref|label)\*?\s*(?:\[[^\[\]{}]{0,200}\]\s*){0,2}\{[^{}]{0,500}\}")
# LaTeX's unbreakable space: a ~ right after a word or a closing sign ("learning~(RL)", "Fig.~3"),
# not one opening a number in prose ("~10x") nor the accent \~{n}.
_TIE = re.compile(r"(?<=[\w.,;:)\]}'])~")
# A bibliography key left bare in the text: a surname glued to a year and a word ("hu2021lora",
# "lin2014microsoft"), or a surname and a year alone inside square brackets ("[vaswani2017,
# Smith2020a]"). Bare, a word and a year is a name or a token ("topic2019", "coco2017", "wmt2014"),
# and names with digits are not keys either: word2vec, GPT-4, ResNet50, COCO2017, L2.
_KEY = r"[A-Za-z][a-z]+(?:19|20)\d\d[a-z]?"
_CITATION_KEY = re.compile(r"(?<![\w/.@:-])[A-Za-z][a-z]+(?:19|20)\d\d[a-z]{2,}(?![\w/@:-])")
_BRACKETED_KEYS = re.compile(rf"\[\s*{_KEY}(?:\s*[,;]\s*{_KEY})*\s*\]")
# Author-year citations: "(Smith et al., 2020)", "(Smith and Lee, 2019; Wu 2021a)", and the
# narrative "Smith et al. (2020)". The surnames and years are no keyphrase, and such a parenthesis
# is no acronym's definition.
_AUTHORS = r"[A-Z][\w'-]+(?:\s+(?:and|&)\s+[A-Z][\w'-]+|\s+et\s+al\.?)?"
_YEAR = r"(?:19|20)\d\d[a-z]?"
_CITED = rf"(?:(?:e\.g\.|see|cf\.),?\s+)?{_AUTHORS},?\s+{_YEAR}"
_AUTHOR_YEAR = re.compile(rf"\(\s*{_CITED}(?:\s*[;,]\s*{_CITED})*\s*\)|\b[A-Z][\w'-]+\s+et\s+al\.?\s*\(\s*{_YEAR}\s*\)")
# The same in square brackets ("[Blum et al. 2017]"), and a narrative "Sagawa et al." with its year or
# none ("due to Rouyer et al., 2021", "the WILDS datasets Sagawa et al., which"): a name and "et al" is
# no keyphrase ("datasets sagawa et al").
_BRACKETED_AUTHOR_YEAR = re.compile(rf"\[\s*{_CITED}(?:\s*[;,]\s*{_CITED})*\s*\]")
# (Not one that closes a parenthesis: "(CNNs; LeCun et al., 1998)" stays the acronym's definition.)
_ET_AL = re.compile(rf"\b[A-Z][\w'-]+\s+et\s+al\b(?!\.?(?:,?\s+{_YEAR})?\s*[)\]])\.?(?:,?\s+{_YEAR}\b)?")
# The spans of links and emphasis are bounded: unbounded, a pattern scans the rest of the text
# from each opener that has no closer ("[a](" or "**a " repeated: quadratic, minutes).
_MD_LINK = re.compile(r"!?\[([^\]]{0,500})\]\(([^)\s]{1,500})(?:\s+\"[^\"]{0,500}\")?\)")
_MD_EMPHASIS = re.compile(r"(\*{1,3}|_{2,3})(?=\S)(.{1,500}?)(?<=\S)\1")
# Markdown's single-underscore italics: at word edges only (not snake_case), two characters or more
# inside (a lone `_x_` may be a variable), no underscore inside.
_MD_UNDERSCORE = re.compile(r"(?<![\w\\])_(?=[^\s_])([^_\n]{2,500}?)(?<=[^\s_])_(?!\w)")
MAX_NESTING = 8  # passes over nested \emph{\textbf{...}} and ***...***: real markup nests 2 or 3 deep
# A run of signs: never part of a keyphrase, and spaCy's tokenizer takes time quadratic in its
# length (8,000 brackets in a row: 74 s).
_SIGN_RUN = re.compile(r"[^\w\s]{16,}")
_MD_CODE = re.compile(r"`([^`]+)`")
# A LaTeX comment: a % that is not a percentage ("68.2%", "50 %", "10+%", "(100)%", "(%)")
# nor escaped ("95\%"). Scraped abstracts lose their line breaks, so it runs to the end of
# its line or of its sentence.
_COMMENT = re.compile(r"(?<![\d\s\\(])(?<!\d[+)])%[^\n.!?]*|(?<=\s)(?<!\d\s)%(?=[A-Za-z])[^\n.!?]*")
_HTML_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_EMPTY_BRACKETS = re.compile(r"\([\s,;:]*\)|\[[\s,;:]*\]")
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


def _strip_line_comments(text: str) -> str:
    """% comments to the end of their line removed; percentages and maybe-prose stay.

    A % is a comment when it opens a line, or follows white space in mid-line with a space
    and a word after it ("text % TODO fix it"). A percent after a number stays ("a 5 % gain",
    also across a line break). Text whose line breaks were collapsed is one line: there a
    comment running to the end of the text goes only when it holds no sentence punctuation
    ("... % TODO remove this"), for it may be the rest of the abstract ("... bids. % As far
    as learning is concerned, ...").
    """
    parts = []
    pos = 0
    line_start = 0  # of the line of the % looked at (they come in order: each line is searched once)
    last_punct = max(text.rfind("."), text.rfind("!"), text.rfind("?"))
    for match in _LINE_COMMENT.finditer(text):
        percent = match.start()
        if percent < pos or _NUMBER_BEFORE.search(text, max(0, percent - 40), percent):
            continue
        while (newline := text.find("\n", line_start, percent)) >= 0:
            line_start = newline + 1
        if _NON_SPACE.search(text, line_start, percent) and not _COMMENT_WORD.match(text, percent + 1):
            continue
        line_end = text.find("\n", percent)
        if line_end < 0:
            line_end = len(text)
            if last_punct > percent:  # sentence punctuation after it
                continue
        parts.append(text[pos:percent])
        pos = line_end
    parts.append(text[pos:])
    return "".join(parts)


def _math_text(match: re.Match) -> str | None:
    """What a $...$ or \\(...\\) span leaves in the text, or None when its $ opens no math.

    Where the line is. A $ right before a digit may be currency ("$5", "$5-$10"): its span is
    prose, not math, when it holds a plain word ("$5 per run and $", "$5 and $") or its
    closing $ is right before a digit ("$5-$"); "$10$%", "$2 \\times 2$", "$1-\\delta$" stay
    math. Any other span is prose only with three plain words or more: text set in math
    when its $s hug it ("$Learning with Evolving Class Ontology$" keeps its words), else a
    lone $ ("the $ sign and the $"). "$HARMONIC$", "$k$", "$ R^2=1 $", "$\\sim$32.9",
    "$x \\text{ if } y$" stay math. \\(...\\) is always math.
    """
    span = match.group(0)
    if span.startswith("$"):
        body = span.rstrip("%")[1:-1]
        words = len(_PLAIN_WORD.findall(body))
        if body[:1].isdigit():
            after = match.string[match.start() + len(body) + 2 : match.start() + len(body) + 3]
            if words or after.isdigit():
                return None
        elif words >= 3:
            return None if body[:1].isspace() or body[-1:].isspace() else body
    return _keep_word_math(match)


def _before_last(text: str, closer: str, sub) -> str:
    """``sub`` applied to *text* up to the last *closer* only: after it, an opener has no closer,
    and a lazy pattern would scan the rest of the text from each one (quadratic)."""
    end = text.rfind(closer)
    if end < 0:
        return text
    end += len(closer)
    return sub(text[:end]) + text[end:]


def _strip_inline_math(text: str) -> str:
    """Inline math removed (a name in it kept); a $ that opens no math stays as it is."""
    if "\\(" in text:
        text = _before_last(text, "\\)", lambda head: _PAREN_MATH.sub(" ", head))  # \(...\) is always math
    parts = []
    pos = 0
    while (match := _INLINE_MATH.search(text, pos)) is not None:
        kept = _math_text(match)
        if kept is None:  # skip this $ alone: the next one may open real math
            parts.append(text[pos : match.start() + 1])
            pos = match.start() + 1
            continue
        parts.append(text[pos : match.start()])
        parts.append(kept)
        pos = match.end()
    parts.append(text[pos:])
    return "".join(parts)


def citation_keys(text: str) -> list[str]:
    """The bare bibliography keys in *text* (a surname glued to a year, often a word).

    >>> citation_keys("CLIP radford2021learning, word2vec, GPT-4, ResNet50, COCO2017, topic2019 [vaswani2017]")
    ['radford2021learning', 'vaswani2017']
    """
    found = [(m.start(), m.group()) for m in _CITATION_KEY.finditer(text)]
    found += [(m.start(), key) for m in _BRACKETED_KEYS.finditer(text) for key in re.findall(_KEY, m.group())]
    return [key for _, key in sorted(found)]


def _strip_citations(text: str) -> str:
    """Author-year citations and bare bibliography keys removed (`_AUTHOR_YEAR`, `_CITATION_KEY`):
    glued to a phrase, a key becomes part of a keyphrase ("low rank adaptation hu2021lora")."""
    if "(" in text:
        text = _AUTHOR_YEAR.sub(" ", text)
    if "et al" in text:
        if "[" in text:
            text = _BRACKETED_AUTHOR_YEAR.sub(" ", text)
        text = _ET_AL.sub(" ", text)
    if "19" in text or "20" in text:
        if "[" in text:
            text = _BRACKETED_KEYS.sub(" ", text)
        text = _CITATION_KEY.sub(" ", text)
    return text


def clean_text(text: str) -> str:
    """Text fit for keyphrase extraction: no math, LaTeX, markdown, HTML tags or URLs.

    >>> clean_text(r"We use \\emph{\\small Random Reshuffling} and ***Atom Theory*** ($R^2$).")
    'We use Random Reshuffling and Atom Theory.'
    """
    text = _INVISIBLE.sub("", unicodedata.normalize("NFKC", text))
    text = _SIGN_RUN.sub(" ", text)
    if _HAS_TYPOGRAPHIC.search(text):  # translate looks up every character: only when needed
        text = text.translate(_TYPOGRAPHIC)
    # Each pattern runs only when the character it needs is there: most abstracts have no markup.
    if "```" in text or "~~~" in text:
        text = _CODE_FENCE.sub(" ", text)
    if "](" in text:
        text = _MD_LINK.sub(lambda m: m.group(1), text)
    lowered = text.lower()
    if "http" in lowered or "www." in lowered:
        text = _URL.sub(" ", text)
    if "%" in text:  # before math: in LaTeX a comment hides any $ in it
        text = _strip_line_comments(text)
    if "\\" in text:  # before math and commands: a citation's key is no text
        text = _REFERENCE.sub(" ", text)
    if "~" in text:  # before comments: "20~%" is a percentage
        text = _TIE.sub(" ", text)
    if "$" in text or "\\" in text:
        text = _DISPLAY_MATH.sub(" ", text)
        if "\\[" in text:
            text = _before_last(text, "\\]", lambda head: _BRACKET_MATH.sub(" ", head))
        text = _strip_inline_math(text)
    if "%" in text:
        text = _COMMENT.sub(" ", text)
    if "\\" in text:
        text = _LATEX_ESCAPE.sub(r"\1", text)
        text = _SWITCH.sub("", text)
        for _ in range(MAX_NESTING):  # nested \emph{\textbf{...}}; deeper ones lose their braces below
            previous = text
            text = _COMMAND_WITH_ARG.sub(lambda m: m.group(1), text)
            if text == previous:
                break
        text = _BARE_COMMAND.sub(" ", text)
    text = text.replace("{", "").replace("}", "")
    if "`" in text:
        text = _MD_CODE.sub(lambda m: m.group(1), text)
    if "*" in text or "__" in text:
        for _ in range(MAX_NESTING):
            previous = text
            text = _MD_EMPHASIS.sub(lambda m: m.group(2), text)
            if text == previous:
                break
    if "_" in text:
        text = _MD_UNDERSCORE.sub(lambda m: m.group(1), text)
    if "<" in text:
        text = _HTML_TAG.sub(" ", text)
    text = _strip_citations(text)
    text = _single_spaced(text)
    # Empty brackets left where math or a URL stood, and space before punctuation.
    if "(" in text or "[" in text:
        text = _EMPTY_BRACKETS.sub("", text)
    text = _SPACE_BEFORE.sub(r"\1", text)
    if "(" in text:
        text = _OPEN_SPACE.sub("(", text)
    return _single_spaced(text)


def given_spans(given: str, normalized: str) -> tuple[list[int], list[int]] | None:
    """Where each character of *normalized* (``normalize_space(given)``) comes from in *given*: its
    start and end there (end exclusive), so that offsets into the abstract kg reads become offsets
    into the abstract as the input gave it. None when *normalized* is not made from *given*."""
    starts, ends, pieces = [], [], []
    i, n = 0, len(given)
    while i < n:  # each character with the combining marks after it: what NFC may compose into one
        j = i + 1
        while j < n and unicodedata.combining(given[j]):
            j += 1
        piece = _INVISIBLE.sub("", unicodedata.normalize("NFC", given[i:j]))
        pieces.append(piece)
        starts.extend([i] * len(piece))
        ends.extend([j] * len(piece))
        i = j
    text = "".join(pieces)
    first = next((k for k, c in enumerate(text) if not c.isspace()), len(text))  # nothing before the first word
    keep = [k for k in range(first, len(text))  # a run of white space as its last character
            if not text[k].isspace() or (k + 1 < len(text) and not text[k + 1].isspace())]
    single = "".join(" " if text[k].isspace() else text[k] for k in keep)
    if single != normalized:
        return None
    return [starts[k] for k in keep], [ends[k] for k in keep]
