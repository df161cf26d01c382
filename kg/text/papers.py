"""Records read from files joined into papers: one `Paper` per abstract (its id from its content, `paper_id`) and
per DOI or arXiv id when the abstracts agree; an identifier on two different abstracts is a `Conflict`, kept
and reported. `ReadReport` is what reading gives the build.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from kg.text.clean import clean_text, find_urls, normalize_space
from kg.text.files import (
    Warnings,
)
from kg.text.records import Author, Diagnostic, Source, unique_keywords
from kg.text.records import Record as _Record
from kg.text.records import where as _where

__all__ = ["Conflict", "Paper", "Prepared", "ReadReport", "merge_prepared", "merge_records", "paper_id", "prepare",
           "uncapitalized"]

_CAPITALS = re.compile(r"[A-Z][A-Z0-9]*")


def uncapitalized(title: str, text: str) -> str:
    """A title set all in capitals (three words or more) in lower case, but for the words its
    abstract *text* also writes in capitals (its acronyms); any other title as it is. Set so,
    every word of a title reads as an acronym ("ALL YOU NEED FOR IT SUPPORT": ALL and IT then
    take another paper's long forms).

    >>> uncapitalized("BERT FOR IT SUPPORT", "We fine-tune BERT.")
    'BERT for it support'
    """
    if any(c.islower() for c in title) or len(_CAPITALS.findall(title)) < 3:
        return title
    written = set(_CAPITALS.findall(text))
    return _CAPITALS.sub(lambda m: m.group(0) if m.group(0) in written else m.group(0).lower(), title)


@dataclass(frozen=True, slots=True)
class Paper:
    """One paper: the abstract as given, its cleaned text, and what the input said of it."""

    id: str
    abstract: str
    text: str
    title: str | None = None
    venue: str | None = None
    year: int | None = None
    source_id: str | None = None
    urls: tuple[str, ...] = ()
    sources: tuple[Source, ...] = ()
    doi: str | None = None  # checked, lowercase (kg.text.identifiers)
    arxiv: str | None = None
    authors: tuple[Author, ...] = ()  # in byline order
    journal_ref: str | None = None  # an arXiv record's journal reference
    given: str | None = None  # the abstract as the input gives it, when that is not `abstract` (white space single)
    # the authors' keywords, in input order (`kg.text.records.keywords_of`); of merged records, the union in order of first appearance
    keywords: tuple[str, ...] = ()

    @property
    def document(self) -> str:
        """The text keyphrases come from: the title (when given) and the cleaned abstract."""
        if self.title:
            title = uncapitalized(clean_text(self.title), self.text)
            return f"{title}. {self.text}" if not title.endswith((".", "?", "!")) else f"{title} {self.text}"
        return self.text


@dataclass(frozen=True)
class ReadReport:
    """What reading produced: the papers (deduplicated, in input order) and every warning; the
    files read (by the names they are recorded by) and the SHA-256 of the bytes read of each."""

    papers: tuple[Paper, ...]
    warnings: tuple[Diagnostic, ...] = ()
    files: tuple[str, ...] = ()
    digests: tuple[str, ...] = ()
    records_read: int = 0
    duplicates_merged: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    # every warning by kind (reason), counted: *warnings* keeps at most MAX_KEPT_WARNINGS of a kind
    warning_counts: dict[str, int] = field(default_factory=dict)
    conflicts: tuple[Conflict, ...] = ()  # DOIs and arXiv ids given to different abstracts


def paper_id(abstract: str) -> str:
    """A stable id from the abstract's content: the same text gives the same id anywhere.

    White space and Unicode composition do not change it.

    >>> paper_id("Deep  learning.") == paper_id("Deep learning.")
    True
    """
    digest = hashlib.sha256(normalize_space(abstract).encode("utf-8")).hexdigest()
    return "p" + digest[:15]


@dataclass(frozen=True)
class Conflict:
    """One DOI or arXiv id given to records whose abstracts differ: kept as separate papers, reported."""

    identifier: str  # "doi:10.…" or "arxiv:…"
    papers: tuple[str, ...]  # the paper ids, in input order
    sources: tuple[str, ...]  # where each record was read

    def as_dict(self) -> dict[str, object]:
        return {"identifier": self.identifier, "papers": list(self.papers), "sources": list(self.sources)}


# What two copies of one abstract share whatever the export: its letters and digits, case folded
# (BibTeX braces, RIS line breaks, HTML entities decoded or not, punctuation and spaces differ).
_NOT_WORD = re.compile(r"[\W_]+")


def _text_key(text: str) -> bytes:
    """A digest of *text*'s letters and digits, case folded: equal for two exports of one abstract."""
    return hashlib.blake2b(_NOT_WORD.sub("", text.casefold()).encode("utf-8"), digest_size=16).digest()


def _identities(record: _Record) -> list[str]:
    """The identifiers that make *record* the same paper as another: its DOI and arXiv id."""
    return [f"doi:{record.doi}"] * bool(record.doi) + [f"arxiv:{record.arxiv}"] * bool(record.arxiv)


class _Papers:
    """Records joined into papers: one paper per abstract (by content id, or by its letters and
    digits) and per DOI or arXiv id when the abstracts agree; one identifier on two different
    abstracts is a `Conflict`, reported, never resolved by dropping either."""

    def __init__(self) -> None:
        self.papers: dict[str, Paper] = {}
        self.more: dict[str, list[Source]] = {}  # the sources after the first of each paper
        self.by_text: dict[bytes, str] = {}
        self.by_identity: dict[str, str] = {}
        self.conflicts: dict[str, list[tuple[str, Source]]] = {}
        self.merged = 0
        self.notes = Warnings()

    def add(self, item: Prepared) -> None:
        record, pid = item.record, item.id
        if pid in self.papers:
            self._join(pid, record, "same abstract")
        elif (known := self.by_text.get(item.key)) is not None:
            self._join(known, record, "same abstract (up to case, punctuation and markup)")
        else:
            for identity in _identities(record):
                if (other := self.by_identity.get(identity)) is not None:
                    self._conflict(identity, other, pid, record)
            self._new(item)

    def _new(self, item: Prepared) -> None:
        record, pid = item.record, item.id
        self.papers[pid] = Paper(
            id=pid,
            abstract=record.abstract,
            text=item.text,
            title=record.title,
            venue=record.venue,
            year=record.year,
            source_id=record.source_id,
            urls=item.urls,
            sources=(record.source,),
            doi=record.doi,
            arxiv=record.arxiv,
            authors=record.authors,
            journal_ref=record.journal_ref,
            given=record.given if record.given != record.abstract else None,
            keywords=record.keywords,
        )
        self.by_text.setdefault(item.key, pid)
        for identity in _identities(record):
            self.by_identity.setdefault(identity, pid)

    def _join(self, pid: str, record: _Record, same: str) -> None:
        known = self.papers[pid]
        self.merged += 1
        self.notes.append(Diagnostic(
            record.source.file, _where(record.source),
            f"{same} as {known.sources[0]}; kept once as paper {pid} with both sources{_dropped(known, record)}",
            "duplicate_merged"))
        self.more.setdefault(pid, []).append(record.source)  # joined once at the end: a tuple grown per copy is quadratic
        fields = ("title", "venue", "year", "source_id", "doi", "arxiv", "authors", "journal_ref")
        if not all(getattr(known, f) for f in fields):
            known = self.papers[pid] = replace(known, **{f: getattr(known, f) or getattr(record, f) for f in fields})
        if record.keywords:  # the union, in order of first appearance
            keywords = unique_keywords(known.keywords + record.keywords)
            if keywords != known.keywords:
                self.papers[pid] = replace(known, keywords=keywords)
        for identity in _identities(record):
            self.by_identity.setdefault(identity, pid)

    def _conflict(self, identity: str, other: str, pid: str, record: _Record) -> None:
        first = self.papers[other]
        kind, _, value = identity.partition(":")
        name = "DOI" if kind == "doi" else "arXiv id"
        self.notes.append(Diagnostic(
            record.source.file, _where(record.source),
            f"{name} {value} is also that of {first.sources[0]} (paper {other}), whose abstract differs; both are kept "
            f"as separate papers with this {name}: check which record it belongs to and fix the other",
            "identifier_conflict"))
        found = self.conflicts.setdefault(identity, [(other, first.sources[0])])
        found.append((pid, record.source))

    def result(self) -> tuple[list[Paper], int, list[Diagnostic], tuple[Conflict, ...]]:
        for pid, sources in self.more.items():
            self.papers[pid] = replace(self.papers[pid], sources=self.papers[pid].sources + tuple(sources))
        conflicts = tuple(Conflict(identity, tuple(p for p, _ in found), tuple(str(s) for _, s in found))
                          for identity, found in self.conflicts.items())
        return list(self.papers.values()), self.merged, self.notes, conflicts


@dataclass(frozen=True, slots=True)
class Prepared:
    """A record with what merging needs of it worked out (`prepare`): its cleaned *text*, paper
    *id*, *key* of letters and digits (`_text_key`) and *urls*. Cleaning is most of the cost of
    reading a file, so it is done per file, where `kg.text.readcache` can keep it."""

    record: _Record
    text: str
    id: str
    key: bytes
    urls: tuple[str, ...]


def prepare(record: _Record) -> Prepared:
    """*record* with its cleaned text (the reader's, when it made it), id, text key and URLs."""
    text = record.text if record.text is not None else clean_text(record.abstract)
    text = record.abstract if text == record.abstract else text  # one string when cleaning changed nothing
    return Prepared(record, text, paper_id(record.abstract), _text_key(text), find_urls(record.abstract))


def merge_records(records: Iterable[_Record]) -> tuple[list[Paper], int, list[Diagnostic], tuple[Conflict, ...]]:
    """One paper per distinct abstract and per DOI or arXiv id, every source kept, input order;
    the identifiers given to different abstracts."""
    return merge_prepared(prepare(record) for record in records)


def merge_prepared(items: Iterable[Prepared]) -> tuple[list[Paper], int, list[Diagnostic], tuple[Conflict, ...]]:
    """`merge_records` of records already `prepare` d."""
    papers = _Papers()
    for item in items:
        papers.add(item)
    return papers.result()


def _dropped(known: Paper, record: _Record) -> str:
    """What of *record*'s venue and year its paper, *known*, does not keep: '' when nothing."""
    pairs = (("venue", known.venue, record.venue), ("year", known.year, record.year), ("DOI", known.doi, record.doi),
             ("arXiv id", known.arxiv, record.arxiv))
    kept = [(what, k, r) for what, k, r in pairs if k is not None and r is not None and k != r]
    if not kept:
        return ""
    what = " and ".join(w for w, _, _ in kept)
    return (f"; the {what} given here ({' '.join(str(r) for _, _, r in kept)}) {'is' if len(kept) == 1 else 'are'} not kept,"
            f" the paper keeps {' '.join(str(k) for _, k, _ in kept)}")
