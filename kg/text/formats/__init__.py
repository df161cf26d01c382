"""Readers of the bibliographic formats researchers export, found by suffix and content.

=================  ======================================  =====================================
format             found by                                 reader
=================  ======================================  =====================================
BibTeX             ``.bib``, ``.bibtex``; a file whose       `kg.text.formats.bibtex`
                   first line is ``@type{``
RIS                ``.ris``; a file whose first line is     `kg.text.formats.ris`
                   ``TY  - ``
Web of Science     a file whose first lines are ``FN …``    `kg.text.formats.ris`
(tagged export)    and ``PT …`` (``savedrecs.txt``)
OpenAlex works     ``.json`` (a work, a list of works, an    `kg.text.formats.openalex`
                   API response with ``results``) or JSON
                   Lines whose rows are works
arXiv metadata     JSON Lines (the snapshot's                `kg.text.formats.arxiv`
                   ``arxiv-metadata-oai-snapshot.json``)
                   whose rows have ``versions`` and
                   ``categories``
=================  ======================================  =====================================

Anything else is one of kg's own formats (`kg.text.sources`): a JSON Lines or JSON file of
rows with an ``abstract`` is read as kg's rows. Each reader takes a file's name and its
decoded text and gives its records, its warnings and the count of what it skipped, as the
readers of `kg.text.sources` do.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable

from kg.errors import InputError
from kg.text.files import (
    Lines,
    Warnings,
    escapes_surrogates,
    json_rows,
    parse_json,
    split_lines,
    surrogate_warning,
    without_surrogates,
)
from kg.text.formats.ris import is_wos

__all__ = ["FOLDER_SUFFIXES", "detect", "read_format"]

# The one list of suffixes kg reads, by format (docs/input.md documents them).
TEXT_SUFFIXES = (".txt",)  # abstract lists, or an export of another format by its content
BIBTEX_SUFFIXES = (".bib", ".bibtex")
RIS_SUFFIXES = (".ris",)
JSON_SUFFIXES = (".json",)
JSONL_SUFFIXES = (".jsonl", ".ndjson")
CSV_SUFFIXES = (".csv", ".tsv")  # kg's own, read by kg.text.sources whatever their content
# What a folder is read for; a file named on its own is read whatever its suffix, as an abstract
# list unless its content is of another format.
FOLDER_SUFFIXES = TEXT_SUFFIXES + JSONL_SUFFIXES + CSV_SUFFIXES + JSON_SUFFIXES + BIBTEX_SUFFIXES + RIS_SUFFIXES
# Rows looked at to tell which JSON Lines format a file is.
SNIFF_ROWS = 20
# Lines looked at to tell a file's format by its content.
HEAD_LINES = 200

_RIS_START = re.compile(r"TY  - ?")
_BIBTEX_START = re.compile(r"@[A-Za-z]+\s*[{(]")


def detect(suffix: str, text: str | Lines) -> str | None:
    """The format of a file by its *suffix*, then its content: "bibtex", "ris", "wos" (Web of
    Science's tagged export), "json" (a JSON document, or JSON Lines in a .json file) or
    "jsonl"; None for kg's own (abstract lists, CSV).

    A .txt file or one of another suffix is BibTeX or RIS when its first line (past blank
    lines and, for BibTeX, ``%`` comments) starts as they do; one of another suffix than .txt
    is JSON when it starts with ``{`` or ``[``.
    """
    if suffix in BIBTEX_SUFFIXES:
        return "bibtex"
    if suffix in JSON_SUFFIXES:
        return "json"
    if suffix in JSONL_SUFFIXES:  # (its text may be `Lines`, which the lines below could not read)
        return "jsonl"
    if suffix in CSV_SUFFIXES:
        return None
    lines = [line.strip() for line in split_lines(text.lstrip("\ufeff"), first=HEAD_LINES) if line.strip()]
    if suffix in RIS_SUFFIXES:
        return "wos" if is_wos(lines) else "ris"
    if lines and _RIS_START.match(lines[0]):
        return "ris"
    if is_wos(lines):
        return "wos"
    code = [line for line in lines if not line.startswith("%")]
    if code and _BIBTEX_START.match(code[0]):
        return "bibtex"
    if suffix != ".txt" and lines and lines[0][:1] in "{[":
        return "json"
    return None


Reader = Callable[[str, str], tuple[list, list, dict[str, int]]]


def read_format(name: str, suffix: str, text: str | Lines, *, jsonl: Reader, row: Callable) -> tuple[list, list, dict[str, int]] | None:
    """The records, warnings and skip counts of the file *name* (*suffix*, decoded *text*) when
    it is of a format this package reads; None when it is one of kg's own (abstract lists, CSV,
    JSON Lines of kg's rows: `kg.text.sources` reads them). *jsonl* reads kg's own JSON Lines
    (a .json file of them); *row* makes a record of one of kg's rows (a JSON file of them)."""
    kind = detect(suffix, text)
    if kind == "bibtex":
        from kg.text.formats.bibtex import read_bibtex

        return read_bibtex(name, text)
    if kind in ("ris", "wos"):
        from kg.text.formats.ris import read_ris, read_wos

        return (read_ris if kind == "ris" else read_wos)(name, text)
    if kind == "json":
        return _read_json(name, text, jsonl=jsonl, row=row)
    if kind == "jsonl":
        return _read_lines(name, text)
    return None


def _read_lines(name: str, text: str | Lines):
    """JSON Lines of OpenAlex works or arXiv metadata; None for kg's own rows."""
    kind = lines_kind(text)
    if kind == "openalex":
        from kg.text.formats.openalex import read_openalex_lines

        return read_openalex_lines(name, text)
    if kind == "arxiv":
        from kg.text.formats.arxiv import read_arxiv_lines

        return read_arxiv_lines(name, text)
    return None


def lines_kind(text: str | Lines) -> str:
    """"openalex", "arxiv" or "kg": what the first object rows of JSON Lines are (up to
    `SNIFF_ROWS` rows that parse are looked at; the first that is an object decides)."""
    rows = json_rows("", text, [], {})  # the warnings are given by the reader, which reads the rows again
    for _, data in itertools.islice(rows, SNIFF_ROWS):
        if isinstance(data, dict):
            return item_kind(data)
    return "kg"


def item_kind(data: dict) -> str:
    """"openalex" for an OpenAlex work, "arxiv" for an arXiv metadata record, else "kg"."""
    from kg.text.formats.arxiv import is_arxiv
    from kg.text.formats.openalex import is_openalex

    if is_openalex(data):
        return "openalex"
    if is_arxiv(data):
        return "arxiv"
    return "kg"


def _read_json(name: str, text: str, *, jsonl: Reader, row: Callable):
    """A JSON document: an OpenAlex work, a list of works or an API response (``results``), a
    list of arXiv records or of kg's rows; or JSON Lines saved as .json (the arXiv snapshot)."""
    try:
        data = parse_json(text)
    except json.JSONDecodeError as e:
        if e.msg == "Extra data":  # a second value after the first: JSON Lines
            return _read_lines(name, text) or jsonl(name, text)
        raise InputError(f"{name}: not valid JSON ({e.msg} at line {e.lineno}, column {e.colno}); fix it, "
                         "or save one JSON object a line as .jsonl") from e
    except RecursionError as e:
        raise InputError(f"{name}: JSON nested too deep to read; give kg OpenAlex works, arXiv records or rows with an 'abstract'") from e
    except ValueError as e:  # a number json cannot make
        raise InputError(f"{name}: not valid JSON ({e}); fix it") from e
    items = data.get("results") if isinstance(data, dict) and isinstance(data.get("results"), list) else data
    items = [items] if isinstance(items, dict) else items
    if items == []:
        raise InputError(_no_items(name, data))
    if not isinstance(items, list):
        raise InputError(f"{name}: a JSON {type(data).__name__}, not works or rows; give kg OpenAlex works, arXiv records "
                         "or objects with an 'abstract'")
    notes = Warnings()
    if escapes_surrogates(text):
        items = list(_without_surrogates(name, items, notes))
    kinds = {item_kind(item) for item in items if isinstance(item, dict)}
    if "openalex" in kinds:
        from kg.text.formats.openalex import read_openalex_works

        records, more, skipped = read_openalex_works(name, items)
    elif "arxiv" in kinds:
        from kg.text.formats.arxiv import read_arxiv_items

        records, more, skipped = read_arxiv_items(name, items)
    else:
        more, skipped = [], {}
        records = [r for i, item in enumerate(items, start=1) if (r := row(name, i, item, more, skipped))]
    notes.extend(more)
    return records, notes, skipped


def _no_items(name: str, data: object) -> str:
    """Why a JSON document with an empty list of works or rows is refused, in one line."""
    if isinstance(data, dict):
        return (f"{name}: an OpenAlex API response with no works (its 'results' list is empty); query again with a "
                "filter that finds works, and rebuild")
    return f"{name}: an empty JSON list; put OpenAlex works, arXiv records or objects with an 'abstract' in it"


def _without_surrogates(name: str, items: list, notes: list):
    """*items* (of a JSON document) with unpaired surrogates as U+FFFD, a warning naming each item (its row) and field."""
    for i, item in enumerate(items, start=1):
        try:
            item, fields = without_surrogates(item)
        except RecursionError as e:
            raise InputError(f"{name}: JSON nested too deep to read; give kg OpenAlex works, arXiv records or rows with an 'abstract'") from e
        if fields:
            notes.append(surrogate_warning(name, f"row {i}", fields))
        yield item
