"""Identifiers of papers and people as the inputs give them: DOIs, arXiv ids and ORCIDs,
checked and written one way (each reader calls these, so a DOI from BibTeX, RIS, OpenAlex
or arXiv is the same string and the same IRI).

A value that is not one is `None` with the reason (`Checked.problem`), never an exception:
the readers turn it into a warning and keep the paper without it.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import quote, unquote

__all__ = ["Checked", "arxiv_iri", "check_arxiv", "check_doi", "check_orcid", "doi_iri", "orcid_iri"]


@dataclass(frozen=True)
class Checked:
    """An identifier in kg's form (`value`), or why the text given is not one (`problem`)."""

    value: str | None
    problem: str | None = None


# A DOI is "10." + a registrant code of digits (dot-separated parts) + "/" + a suffix of any
# printable characters (ISO 26324); DOIs are case-insensitive, and kg writes them in lowercase.
_DOI = re.compile(r"10\.[0-9]{4,9}(?:\.[0-9]+)*/\S+")  # ASCII digits: \d takes any script's
_DOI_PREFIXES = re.compile(r"^(?:doi:\s*|(?:https?://)?(?:dx\.)?doi\.org/|info:doi/)", re.IGNORECASE)


def check_doi(text: object) -> Checked:
    """*text* as a DOI (``10.1234/abc``, lowercase) if it is one, bare or as ``doi:`` or a
    doi.org URL; else the reason it is not.

    >>> check_doi("https://doi.org/10.7717/PeerJ.4375").value
    '10.7717/peerj.4375'
    >>> check_doi("10.1000").problem
    "'10.1000' is not a DOI (10.<registrant>/<suffix>)"
    """
    if not isinstance(text, str) or not text.strip():
        return Checked(None, f"{text!r} is not a DOI (10.<registrant>/<suffix>)")
    value = _DOI_PREFIXES.sub("", text.strip())
    if "%" in value:  # a DOI URL percent-encodes what a URL cannot hold
        value = unquote(value)
    hidden = _hidden(value)
    if hidden:
        return Checked(None, f"{text.strip()[:80]!r} is not a DOI: it holds {hidden}")
    if not _DOI.fullmatch(value):
        return Checked(None, f"{text.strip()[:80]!r} is not a DOI (10.<registrant>/<suffix>)")
    return Checked(value.lower())


def _hidden(value: str) -> str | None:
    """The first character of *value* no identifier may hold, named, or None: a control character,
    a format character (a right-to-left override, a zero-width space) or U+FFFD. DOIs and arXiv ids
    are shown in the graph and the map, where such a character hides or reorders what is shown
    (one DOI could pass for another)."""
    for c in value:
        if unicodedata.category(c) in ("Cc", "Cf", "Cs") or c == "\ufffd":
            what = ("the mark of a character that could not be decoded" if c == "\ufffd" else "a control character"
                    if unicodedata.category(c) == "Cc" else "an invisible or bidirectional format character")
            return f"U+{ord(c):04X} {unicodedata.name(c, '')}".rstrip() + f", {what} (it could make one identifier look like another)"
    return None


def doi_iri(doi: str) -> str:
    """The https://doi.org/ IRI of a DOI in kg's form (what `check_doi` gives)."""
    return "https://doi.org/" + quote(doi, safe="/:;()[]@!$&'*+,=~._-")


# New-style arXiv ids (since April 2007): YYMM.NNNN or YYMM.NNNNN; old-style: archive(.subject
# class)/YYMMNNN. A version (v2) is dropped: kg names the paper, not one of its versions.
_ARXIV_NEW = re.compile(r"([0-9]{4}\.[0-9]{4,5})(?:v[0-9]+)?")
_ARXIV_OLD = re.compile(r"([a-z]+(?:-[a-z]+)*(?:\.[A-Z]{2})?/[0-9]{7})(?:v[0-9]+)?")
_ARXIV_PREFIXES = re.compile(r"^(?:arxiv:\s*|(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/)", re.IGNORECASE)


def check_arxiv(text: object) -> Checked:
    """*text* as an arXiv id without its version (``2401.00001``, ``hep-th/9608091``), bare,
    as ``arXiv:…`` or an arxiv.org URL; else the reason it is not.

    >>> check_arxiv("arXiv:2401.00001v3").value
    '2401.00001'
    """
    if not isinstance(text, str) or not text.strip():
        return Checked(None, f"{text!r} is not an arXiv id (such as 2401.00001 or hep-th/9608091)")
    value = _ARXIV_PREFIXES.sub("", text.strip()).removesuffix(".pdf")
    hidden = _hidden(value)
    if hidden:
        return Checked(None, f"{text.strip()[:80]!r} is not an arXiv id: it holds {hidden}")
    match = _ARXIV_NEW.fullmatch(value) or _ARXIV_OLD.fullmatch(value)
    if not match:
        return Checked(None, f"{text.strip()[:80]!r} is not an arXiv id (such as 2401.00001 or hep-th/9608091)")
    return Checked(match.group(1))


def arxiv_iri(arxiv: str) -> str:
    """The https://arxiv.org/abs/ IRI of an arXiv id."""
    return "https://arxiv.org/abs/" + arxiv


_ORCID = re.compile(r"([0-9]{4})-?([0-9]{4})-?([0-9]{4})-?([0-9]{3}[0-9X])")
_ORCID_PREFIXES = re.compile(r"^(?:orcid:\s*|(?:https?://)?(?:www\.)?(?:sandbox\.)?orcid\.org/)", re.IGNORECASE)


def check_orcid(text: object) -> Checked:
    """*text* as an ORCID iD (``0000-0002-1825-0097``) if it is one, bare or as an orcid.org
    URL, with a right check digit (ISO 7064 11,2); else the reason it is not.

    >>> check_orcid("https://orcid.org/0000-0002-1825-0097").value
    '0000-0002-1825-0097'
    >>> check_orcid("0000-0002-1825-0098").problem
    "'0000-0002-1825-0098' is not an ORCID iD (its check digit is wrong)"
    """
    if not isinstance(text, str) or not text.strip():
        return Checked(None, f"{text!r} is not an ORCID iD (such as 0000-0002-1825-0097)")
    match = _ORCID.fullmatch(_ORCID_PREFIXES.sub("", text.strip()).upper())
    if not match:
        return Checked(None, f"{text.strip()[:80]!r} is not an ORCID iD (such as 0000-0002-1825-0097)")
    digits = "".join(match.groups())
    total = 0
    for d in digits[:-1]:
        total = (total + int(d)) * 2
    check = (12 - total % 11) % 11
    if digits[-1] != ("X" if check == 10 else str(check)):
        return Checked(None, f"{text.strip()!r} is not an ORCID iD (its check digit is wrong)")
    return Checked("-".join(match.groups()))


def orcid_iri(orcid: str) -> str:
    """The https://orcid.org/ IRI of an ORCID iD."""
    return "https://orcid.org/" + orcid
