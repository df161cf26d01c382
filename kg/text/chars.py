"""Characters an output format cannot hold, removed or replaced by the writers.

A graph built through the Python API can hold any string, so every writer is safe on its
own rather than trusting the readers' cleaning: a lone surrogate (``"\\ud800"``, which a JSON
input's escape can make) cannot be encoded as UTF-8 at all, and XML 1.0 forbids most C0
controls whatever the encoding (a GEXF file holding one is not XML: Gephi refuses it).
"""

from __future__ import annotations

import re

__all__ = ["encodable", "replace_surrogates", "utf8", "xml_text"]

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# What XML 1.0's Char production leaves out: C0 controls but tab, LF and CR; U+FFFE and U+FFFF
# (lone surrogates, also left out, are replaced by `encodable` instead).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def replace_surrogates(text: str) -> tuple[str, int]:
    """*text* with each unpaired UTF-16 surrogate replaced by U+FFFD, and how many there were.

    A JSON string may escape one (``"\\ud800"``) that is no character: Python keeps it, and
    nothing can write it as UTF-8. (A pair of escapes is one character, joined by the JSON reader.)"""
    return _LONE_SURROGATE.subn("\ufffd", text)


def encodable(text: str) -> str:
    """*text* with each lone surrogate replaced by U+FFFD (REPLACEMENT CHARACTER), so that it
    encodes as UTF-8; *text* itself when it holds none.

    >>> encodable("a\\ud800b")
    'a�b'
    """
    return replace_surrogates(text)[0] if _LONE_SURROGATE.search(text) else text


def utf8(text: str) -> bytes:
    """*text* as UTF-8, each lone surrogate written as U+FFFD (`encodable`): what the JSON
    writers write, whose encoder keeps a lone surrogate as it is (``ensure_ascii=False``)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return encodable(text).encode("utf-8")


def xml_text(text: str) -> str:
    """*text* as XML 1.0 can hold it, in an element or an attribute: the characters it forbids
    removed (C0 controls but tab, LF and CR; U+FFFE, U+FFFF), lone surrogates as U+FFFD.

    >>> xml_text("Venue\\x01 \\x1b[1mBold\\ud800")
    'Venue [1mBold�'
    """
    return _NOT_XML.sub("", encodable(text))
