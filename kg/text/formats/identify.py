"""A record's DOI and arXiv id from what its input gives (fields, URLs), checked, with a
warning for each one that is malformed: the paper is kept without it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kg.text.identifiers import check_arxiv, check_doi, check_orcid
from kg.text.records import Notes

__all__ = ["Found", "identifiers", "orcid"]

ARXIV_DOI_PREFIX = "10.48550/arxiv."  # arXiv's own DOIs: 10.48550/arXiv.2401.00001


@dataclass(frozen=True)
class Found:
    doi: str | None = None
    arxiv: str | None = None


def identifiers(*, doi: object = None, arxiv: object = None, urls: Iterable[object] = (), where: str | None, notes: Notes) -> Found:
    """The DOI and arXiv id of a record: *doi* and *arxiv* as given (the first of several
    space-separated DOIs), else (when not given) one found in *urls* (a doi.org or arxiv.org
    link); an arXiv DOI (10.48550/arXiv.…) also gives the arXiv id. A malformed value is a
    warning, and the paper is kept without it."""
    found_doi = found_arxiv = None
    if doi not in (None, ""):
        checked = check_doi(doi)
        if checked.value is None and isinstance(doi, str) and len(doi.split()) > 1:  # "10.1/a 10.2/b": the first
            checked = check_doi(doi.split()[0]) if check_doi(doi.split()[0]).value else checked
        if checked.value is None:
            notes.warn(where, f"DOI {checked.problem}; the paper is kept without it", "bad_identifier")
        found_doi = checked.value
    if arxiv not in (None, ""):
        checked = check_arxiv(arxiv)
        if checked.value is None:
            notes.warn(where, f"arXiv id {checked.problem}; the paper is kept without it", "bad_identifier")
        found_arxiv = checked.value
    for url in urls:
        if not isinstance(url, str) or not url.strip():
            continue
        low = url.strip().lower()
        if found_doi is None and doi in (None, "") and "doi.org/10." in low:
            found_doi = check_doi(url).value
        if found_arxiv is None and arxiv in (None, "") and "arxiv.org/abs/" in low:
            found_arxiv = check_arxiv(url).value
    if found_arxiv is None and found_doi and found_doi.startswith(ARXIV_DOI_PREFIX):
        found_arxiv = check_arxiv(found_doi[len(ARXIV_DOI_PREFIX):]).value
    return Found(found_doi, found_arxiv)


def orcid(value: object, *, who: str, where: str | None, notes: Notes) -> str | None:
    """An author's ORCID iD, checked (None when not given; None with a warning when malformed)."""
    if value in (None, ""):
        return None
    checked = check_orcid(value)
    if checked.value is None:
        notes.warn(where, f"ORCID of {who}: {checked.problem}; the author is kept without it", "bad_identifier")
    return checked.value
