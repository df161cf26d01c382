"""LaTeX in bibliographic fields: accented letters as Unicode, and whole fields as text.

BibTeX files and arXiv metadata write ``C{\\'e}sar`` and ``Schr\\"odinger``. An abstract is
kept as given and cleaned as every abstract is (`kg.text.clean.clean_text`), after its
accents are decoded (`decode_accents`: only accent and special-letter macros change, so the
cleaning sees what it sees in any other input); a title, a name or a venue is made text
whole (`latex_field`: braces, accents, ``\\emph{}``, math as Unicode) by pylatexenc, the LaTeX
decoder bibtexparser itself uses.
"""

from __future__ import annotations

import re
from functools import cache

from kg.text.clean import normalize_space

__all__ = ["decode_accents", "latex_field"]

# An accent macro with its letter (\'e, \'{e}, {\'e}, \"\i, \c{c}, \v S), or a special letter
# (\ss, \o, \AA, \l, \i, with {} or braces around, or the one space after it that TeX takes
# as the end of the macro), the only LaTeX `decode_accents` changes.
_LETTER = r"(?:\{\s*\\?[A-Za-z]\s*\}|\\[ij](?![A-Za-z])(?:\{\}|\s)?|[A-Za-z])"
_ACCENT = rf"\\['\"`^~=.]\s*{_LETTER}|\\[uvHckbdrt](?:\s*\{{\s*\\?[A-Za-z]\s*\}}|\s+[A-Za-z])"
_SPECIAL = r"\\(?:ss|o|O|aa|AA|ae|AE|oe|OE|l|L|i|j)(?![A-Za-z])(?:\{\}|\s)?"
_MACRO = re.compile(rf"\{{(?:{_ACCENT}|{_SPECIAL})\}}|{_ACCENT}|{_SPECIAL}")


@cache
def _converter():
    from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db

    macros = get_default_latex_context_db()
    # biblatex's own text macros that BibTeX files use (pylatexenc drops macros it does not know)
    macros.add_context_category("biblatex", prepend=True, macros=[MacroTextSpec("hyphen", simplify_repl="-")])
    return LatexNodes2Text(math_mode="text", strict_latex_spaces=True, latex_context=macros)


def _to_text(latex: str) -> str:
    try:
        return _converter().latex_to_text(latex)
    except Exception:  # pylatexenc's errors have no common base; the text stays as given
        return latex


def decode_accents(text: str) -> str:
    """*text* with its LaTeX accent and special-letter macros as Unicode letters, nothing else.

    >>> decode_accents(r"Jean C{\\'e}sar, Schr\\"odinger's $\\alpha$")
    "Jean César, Schrödinger's $\\\\alpha$"
    """
    if "\\" not in text:
        return text
    return _MACRO.sub(lambda m: _to_text(m.group()), text)


def latex_field(value: str) -> str:
    """A LaTeX field value (a title, a name, a venue) as plain text, single-spaced.

    >>> latex_field(r"{{An} Amazing \\emph{Title}} on $\\alpha$-nets")
    'An Amazing Title on α-nets'
    """
    if not any(c in value for c in "\\{}$~"):
        return normalize_space(value)
    return normalize_space(_to_text(value))
