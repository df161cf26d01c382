"""The canned queries: the ``.rq`` files shipped with kg, what each answers, and bound texts.

A query whose header has a ``Paged`` section answers a page of its rows: ``limit`` rows (0 for
all of them; by default the number the section starts with, ``Paged: 25 rows a page``, else
`PAGE_ROWS`) after ``offset`` rows, in the query's own order,
which is total (ties broken down to IRIs). A SPARQL LIMIT cannot come from a binding, so the
catalogue writes the page into the query text it owns (`paged_text`): ``LIMIT``/``OFFSET`` at
the query's end, or at a ``#kg:page`` comment line where the query cuts its page before looking
up what only the page's rows need; and the number of the page's last row as ``?pageEnd`` (and
as a ``LIMIT`` at ``#kg:first`` lines), so that a query can leave out early what cannot be on
the page (a row whose stored rank within its concept is past it). ``kg query --bind limit=N`` and kg serve's ``/api/query`` take them.
"""

from __future__ import annotations

import difflib
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from kg.errors import QueryError
from kg.resources import data_dir
from kg.sparql.bindings import bind_text, query_variables, substitute
from kg.sparql.ranking import Ranking, parse_ranking

_QUERY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
PAGE_ROWS = 100  # rows of a page when no limit is given
ALL_ROWS = 1_000_000_000  # the LIMIT of a #kg:first line when every row is asked for (limit=0)
PAGE_VARIABLES = {"limit": f"rows per page (default {PAGE_ROWS}; 0 gives every row)",
                  "offset": "rows skipped before the page (default 0; the next page: offset + limit)"}
_PAGE_MARK = re.compile(r"^([ \t]*)#kg:page\b[^\n]*$", re.MULTILINE)
_FIRST_MARK = re.compile(r"^([ \t]*)#kg:first\b[^\n]*$", re.MULTILINE)
_PAGE_ROWS = re.compile(r"Paged:\s*([0-9][0-9,]*)\s+rows\b")  # a Paged section's own page size


PARAMETER_TYPES = {
    "text": "any text",
    "IRI": "an IRI in angle brackets, <https://...> (a bare http(s) IRI is taken as one)",
    "integer": "a whole number",
    "year": "a year, four digits",
    "boolean": "true or false",
}
_DECLARATION = re.compile(r"\[([^\]]*)\]\s*")


@dataclass(frozen=True)
class Parameter:
    """A binding a canned query takes, as its header declares it: ``?name  [type, ...] meaning``,
    where the bracket holds the type (`PARAMETER_TYPES`) then ``required``, ``default VALUE`` or
    ``one of a/b/c`` (at least one of those parameters must be given)."""

    name: str
    type: str = "text"
    meaning: str = ""
    required: bool = False
    default: str | None = None
    one_of: tuple[str, ...] = ()  # a group, one of which must be given (this one among them)

    @property
    def needed(self) -> bool:
        return self.required or bool(self.one_of)

    def usage(self) -> str:
        """``required``, ``one of ?label ?concept``, ``default 5`` or ``optional``."""
        if self.required:
            return "required"
        if self.one_of:
            return "required: one of " + ", ".join("?" + n for n in self.one_of)
        return f"default {self.default}" if self.default is not None else "optional"

    def as_json(self) -> dict:
        return {"name": self.name, "type": self.type, "description": self.meaning, "required": self.required,
                "default": self.default, "oneOf": list(self.one_of)}


def _parameter(name: str, meaning: str) -> Parameter:
    """A Bindings line's declaration (``[type, ...] meaning``) read; a line without one is text."""
    m = _DECLARATION.match(meaning)
    if not m:
        return Parameter(name, meaning=meaning)
    kind, *rest = [part.strip() for part in m.group(1).split(",")]
    if kind not in PARAMETER_TYPES:
        raise QueryError(f"?{name}: unknown parameter type {kind!r} (one of {', '.join(PARAMETER_TYPES)})")
    required, default, group = False, None, ()
    for part in rest:
        if part == "required":
            required = True
        elif part.startswith("default "):
            default = part.removeprefix("default ").strip()
        elif part.startswith("one of "):
            group = tuple(n.strip().lstrip("?") for n in part.removeprefix("one of ").split("/"))
        else:
            raise QueryError(f"?{name}: cannot read {part!r} in its declaration (required, default V, one of a/b)")
    return Parameter(name, kind, meaning[m.end():].strip(), required, default, group)


@dataclass(frozen=True)
class CannedQuery:
    """A ``.rq`` file of ``queries/``, read with its header comment: the first line says what it
    answers, the section that starts with "Bindings" lists its variables, and ``--bind`` lines
    give examples."""

    name: str
    path: Path
    text: str
    summary: str
    description: str
    variables: tuple[tuple[str, str], ...]  # (name, description)
    examples: tuple[dict[str, str], ...]
    paged: bool = False  # its header has a "Paged" section: it takes limit and offset
    page_rows: int = PAGE_ROWS  # the rows of its page when no limit is given ("Paged: N rows a page")
    parameters: tuple[Parameter, ...] = ()  # its declared bindings (the page's too), in header order
    declared: bool = False  # its header declares its bindings (a Bindings section): others are refused
    ranking: Ranking | None = None  # its header's "Ranked by:" line: a query answering its first N rows

    def parameter(self, name: str) -> Parameter | None:
        return next((p for p in self.parameters if p.name == name), None)

    def groups(self) -> list[tuple[str, ...]]:
        """The sets of parameters of which one must be given (a required one alone)."""
        found: dict[tuple[str, ...], None] = {}
        for p in self.parameters:
            if p.needed:
                found[p.one_of or (p.name,)] = None
        return list(found)

    def as_json(self) -> dict:
        """What ``kg serve`` lists at ``/queries``."""
        return {"name": self.name, "summary": self.summary, "description": self.description,
                "variables": [{"name": k, "description": v} for k, v in self.variables],
                "parameters": [p.as_json() for p in self.parameters],
                "examples": list(self.examples), "text": self.text, "paged": self.paged,
                "ranking": self.ranking.as_json() if self.ranking else None}


def queries_dir() -> Path:
    """The ``queries/`` folder shipped with kg."""
    return data_dir("queries")


def query_text(path: Path) -> str:
    """The text of the query file *path*: a regular file of UTF-8 (`QueryError` otherwise)."""
    from kg.errors import InputError
    from kg.text.files import read_input

    try:
        return read_input(path, str(path), expected="a .rq file of SPARQL").data.decode("utf-8")
    except InputError as e:
        raise QueryError(str(e)) from e
    except UnicodeDecodeError as e:
        raise QueryError(f"{path}: not UTF-8 ({e.reason} at byte {e.start}); save the query as UTF-8") from e


def read_query(path: Path) -> CannedQuery:
    """*path* with what its header comment says."""
    from kg.text.files import split_lines

    text = query_text(path)
    header = []
    for line in split_lines(text):  # SPARQL comments end at a line end, not at U+2028 (str.splitlines)
        if not line.startswith("#"):
            break
        header.append(line[1:].removeprefix(" "))
    variables: dict[str, str] = {}
    parameters: dict[str, Parameter] = {}
    examples = []
    in_bindings = declared = False
    column = 0  # where the description of the last parameter starts: its continuation lines
    for line in header:
        if not line[:1].isspace():  # a section starts: only "Bindings ..." lists variables
            in_bindings = line.startswith("Bindings")
            declared = declared or in_bindings
            column = 0
        var = re.match(r"( {1,4}\?([A-Za-z_][A-Za-z0-9_]*)\s+)(\S.*)$", line) if in_bindings else None
        if var and var.group(2) not in variables:
            variables[var.group(2)] = var.group(3).strip()
            parameters[var.group(2)] = _parameter(var.group(2), var.group(3).strip())
            column = len(var.group(1))
        elif column and len(line) > column and line[:column].isspace() and not line[column].isspace() \
                and not line.lstrip().startswith("kg query"):
            last = list(parameters)[-1]
            p = parameters[last]
            parameters[last] = Parameter(p.name, p.type, f"{p.meaning} {line.strip()}", p.required, p.default, p.one_of)
        else:
            column = 0
        if "--bind" in line:
            example = _example(line)
            if example:
                examples.append(example)
    paged_line = next((line for line in header if line.startswith("Paged")), None)
    paged = paged_line is not None
    size = _PAGE_ROWS.match(paged_line or "")
    page_rows = int(size.group(1).replace(",", "")) if size else PAGE_ROWS
    if paged and page_rows < 1:
        raise QueryError(f"{path.name}: its Paged section says {page_rows} rows a page; a page has 1 row or more")
    ranked = next((line.removeprefix("Ranked by:") for line in header if line.startswith("Ranked by:")), None)
    if paged:
        page_variables = {**PAGE_VARIABLES, "limit": PAGE_VARIABLES["limit"].replace(f"default {PAGE_ROWS}", f"default {page_rows}")}
        variables.update((k, v) for k, v in page_variables.items() if k not in variables)
        parameters.update((k, Parameter(k, "integer", v, default=str(page_rows if k == "limit" else 0)))
                          for k, v in page_variables.items() if k not in parameters)
    return CannedQuery(name=path.stem, path=path, text=text, summary=header[0].strip() if header else "",
                       description="\n".join(header), variables=tuple(variables.items()), examples=tuple(examples), paged=paged,
                       page_rows=page_rows,
                       parameters=tuple(parameters.values()), declared=declared,
                       ranking=parse_ranking(ranked) if ranked is not None else None)


def _example(line: str) -> dict[str, str]:
    try:
        words = shlex.split(line)
    except ValueError:
        return {}
    return dict(value.partition("=")[::2] for flag, value in zip(words, words[1:]) if flag == "--bind" and "=" in value)


def catalogue() -> dict[str, CannedQuery]:
    """Every canned query, by name."""
    return {q.name: q for q in map(read_query, sorted(queries_dir().glob("*.rq")))}


def list_queries() -> dict[str, str]:
    """Name -> what each canned query answers (the first line of its header)."""
    return {name: q.summary for name, q in catalogue().items()}


def canned_queries() -> list[dict]:
    """Every canned query as ``/queries`` lists it: name, summary, header, variables, examples, text."""
    return [q.as_json() for q in catalogue().values()]


def named_query(name: str) -> CannedQuery:
    """The canned query *name* (`QueryError` naming the known ones when there is none)."""
    path = queries_dir() / f"{name}.rq"
    if not isinstance(name, str) or not _QUERY_NAME.fullmatch(name) or not path.is_file():
        known = list(list_queries())
        close = difflib.get_close_matches(str(name), known, n=2, cutoff=0.6) if isinstance(name, str) else []
        if close:
            raise QueryError(f"no query named {str(name)!r}; did you mean {' or '.join(close)}? (kg queries lists them all)")
        raise QueryError(f"no query named {str(name)!r}; known queries: {', '.join(known) or 'none'}")
    return read_query(path)


def find_query(name: str | Path) -> Path:
    """A query file: a path to a ``.rq`` file, or the bare name of a canned query."""
    path = Path(name)
    if path.suffix == ".rq" or path.exists():
        if not path.is_file():
            raise QueryError(f"{path}: no such query file")
        return path
    return named_query(str(name)).path


def bound_query(name: str, bindings: Mapping[str, str] | list[str]) -> str:
    """The text of the canned query *name* with *bindings* (``NAME=VALUE`` strings, as ``kg query --bind``,
    or a name -> value mapping), checked against its declared parameters (`check_bindings`) and
    written in as terms (`kg.sparql.bindings.bind_text`), and its page (``limit``, ``offset``)
    written in when it is paged."""
    pairs = [f"{k}={v}" for k, v in bindings.items()] if isinstance(bindings, Mapping) else list(bindings)
    query = named_query(name)
    pairs = check_bindings(query, pairs)  # as kg query checks them: names, types, required ones
    page, rest = split_page(query, pairs)
    return bind_text(paged_text(query, page), rest, name=name)


@dataclass(frozen=True)
class Page:
    """Which rows of a paged query to answer: *limit* rows (0: all) after the first *offset*."""

    limit: int = PAGE_ROWS
    offset: int = 0

    @property
    def end(self) -> int | None:
        """The position (from 1) of the page's last row, None for all rows."""
        return self.offset + self.limit if self.limit else None


def split_page(query: CannedQuery, bindings: Mapping[str, object] | Iterable[str]) -> tuple[Page | None, Mapping | list]:
    """The page *bindings* ask *query* for (``limit=N``, ``offset=N``, or a mapping with those
    keys; the first page of its ``page_rows`` rows when they give neither), and the other bindings in
    the same form; None when the query is not paged (then a limit or offset is a `QueryError`)."""
    values: dict[str, str] = {}
    if isinstance(bindings, Mapping):
        rest = {}
        for key, value in bindings.items():
            name = str(key).lstrip("?$")
            if name in PAGE_VARIABLES:
                values[name] = str(getattr(value, "value", value)).strip()
            else:
                rest[key] = value
    else:
        rest = []
        for binding in bindings:
            key, sep, value = binding.partition("=")
            if sep and key.strip().lstrip("?$") in PAGE_VARIABLES:
                values[key.strip().lstrip("?$")] = value.strip().strip('"')
            else:
                rest.append(binding)
    if not query.paged:
        if values:
            raise QueryError(f"query {query.name!r} is not paged (it gives few rows): it takes no {' or '.join(sorted(values))}")
        return None, rest
    numbers = {}
    for key, value in values.items():
        if not re.fullmatch(r"\d{1,9}", value):
            raise QueryError(f"--bind {key}={value}: give a whole number >= 0 as the {key} "
                             f"({'the rows a page; 0 gives every row' if key == 'limit' else 'the rows skipped before the page'})")
        numbers[key] = int(value)
    return Page(numbers.get("limit", query.page_rows), numbers.get("offset", 0)), rest


def paged_text(query: CannedQuery, page: Page | None) -> str:
    """The text of *query* answering *page*: its ``LIMIT``/``OFFSET`` at the ``#kg:page`` line
    (else at the end), ``LIMIT`` of the page's last row at each ``#kg:first`` line (where a
    query keeps the first rows that can be on the page), and ``?pageEnd`` bound to that row."""
    if page is None:
        return query.text
    text = query.text
    if page.end is not None and "pageEnd" in query_variables(text):
        import pyoxigraph as ox

        text = substitute(text, {"pageEnd": ox.Literal(str(page.end), datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer"))})
    first = f"LIMIT {page.end if page.end is not None else ALL_ROWS}"  # a LIMIT tells Oxigraph the part is small
    text = _FIRST_MARK.sub(lambda m: m.group(1) + first, text)
    cut = " ".join(part for part in (f"LIMIT {page.limit}" if page.limit else "", f"OFFSET {page.offset}" if page.offset else "") if part)
    if _PAGE_MARK.search(text):  # within the query: a LIMIT even for every row, which tells Oxigraph the part is small
        inner = f"LIMIT {page.limit or ALL_ROWS}" + (f" OFFSET {page.offset}" if page.offset else "")
        return _PAGE_MARK.sub(lambda m: m.group(1) + inner, text, count=1)
    return text.rstrip("\n") + ("\n" + cut if cut else "") + "\n"


def ranked_cut(query: CannedQuery, bindings: Mapping[str, object] | Iterable[str]) -> int | None:
    """How many rows (a group's) a ranked *query* keeps with *bindings*: its ``?top`` as given (else
    its default) or its fixed number; None when it is not ranked or keeps them all (top 0)."""
    ranking = query.ranking
    if ranking is None:
        return None
    if isinstance(ranking.top, int):
        return ranking.top or None
    given = _given(bindings).get(ranking.top)
    p = query.parameter(ranking.top)
    value = given if given is not None else (p.default if p else None)
    try:
        n = int(str(value).strip().strip('"'))
    except (TypeError, ValueError):
        return None
    return n if n > 0 else None


def _given(bindings: Mapping[str, object] | Iterable[str]) -> dict[str, str]:
    if isinstance(bindings, Mapping):
        return {str(k).lstrip("?$"): str(getattr(v, "value", v)) for k, v in bindings.items()}
    return {k.strip().lstrip("?$"): v for k, _, v in (b.partition("=") for b in bindings)}


def probe_query(query: CannedQuery, bindings: Mapping[str, object] | list[str], n: int) -> tuple[str, Mapping | list]:
    """The text and bindings (as `split_page` leaves them) of ranked *query* asked for *n* + 1
    rows a group, on one page of every row: what `kg.sparql.ranking.cut_ties` reads the row after
    the cut from. A fixed cut is the query's last ``LIMIT``, written one higher."""
    ranking = query.ranking
    top = ranking.top if ranking is not None and isinstance(ranking.top, str) else None
    skip = {*PAGE_VARIABLES, *([top] if top else [])}
    if isinstance(bindings, Mapping):
        rest: Mapping | list = {k: v for k, v in bindings.items() if str(k).lstrip("?$") not in skip}
        if top:
            import pyoxigraph as ox

            rest[top] = ox.Literal(str(n + 1), datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer"))
    else:
        rest = [b for b in bindings if b.partition("=")[0].strip().lstrip("?$") not in skip] + ([f"{top}={n + 1}"] if top else [])
    text = paged_text(query, Page(limit=0) if query.paged else None)
    if top is None:
        text, found = re.subn(rf"\bLIMIT\s+{n}(\s*)$", rf"LIMIT {n + 1}\1", text, flags=re.IGNORECASE)
        if not found:
            raise QueryError(f"query {query.name!r} declares its first {n} rows but does not end with LIMIT {n}")
    return text, rest


def with_next_page(result, page: Page | None):
    """*result* (a `kg.sparql.results.QueryResult`) told the offset of the next page when it fills
    its *page* (`split_page`): kg query says how to ask for it, kg serve's table does too."""
    if page is not None and page.limit and len(result.rows) == page.limit:
        return replace(result, next_offset=page.offset + page.limit)
    return result


def tie_probe(query: CannedQuery, bindings: Mapping[str, object] | list[str], result) -> tuple[str, Mapping | list] | None:
    """The probe (`probe_query`) that tells whether a cut of ranked *query* falls inside a tie in its
    *result* (a `kg.sparql.results.QueryResult`), or None when none can: the query is not ranked, or
    no group of *result* reached the cut (a page cut short, ``next_offset`` set, is asked about, as
    it may have). kg query and kg serve ask it, then `tie_notes` reads its answer."""
    n, ranking = ranked_cut(query, bindings), query.ranking
    if n is None or result.kind != "select" or not result.rows:
        return None
    if max(_group_sizes(ranking, result).values()) < n and result.next_offset is None:
        return None
    return probe_query(query, bindings, n)


def tie_notes(query: CannedQuery, bindings: Mapping[str, object] | list[str], result, probe) -> tuple[str, ...]:
    """The notes (`kg.sparql.ranking.tie_note`) for the cuts of ranked *query* in *result* that fall
    inside a tie, read from *probe*: the answer to `tie_probe`'s query."""
    from kg.sparql.ranking import cut_ties, tie_note

    n, ranking = ranked_cut(query, bindings), query.ranking
    sizes = _group_sizes(ranking, result)
    return tuple(tie_note(ranking, t, len(sizes) > 1) for t in cut_ties(ranking, n, probe.variables, probe.rows, set(sizes)))


def _group_sizes(ranking: Ranking, result) -> dict:
    group = result.variables.index(ranking.group) if ranking.group in result.variables else None
    sizes: dict = {}
    for row in result.rows:
        key = row[group] if group is not None else None
        sizes[key] = sizes.get(key, 0) + 1
    return sizes


def bound_values(bindings: Mapping[str, object] | Iterable[str]) -> tuple[tuple[str, str], ...]:
    """(name, value as text) of each binding but the page's: what a table says once instead of in a
    column (`kg.sparql.results.QueryResult.bound`)."""
    pairs = bindings.items() if isinstance(bindings, Mapping) else (b.partition("=")[::2] for b in bindings)
    out = []
    for key, value in pairs:
        name = str(key).strip().lstrip("?$")
        text = str(getattr(value, "value", value)).strip()
        if len(text) > 2 and text[0] + text[-1] in ('<>', '""'):
            text = text[1:-1]
        if name not in PAGE_VARIABLES:
            out.append((name, text))
    return tuple(out)


# --------------------------------------------------------------------------------------------
# The declared parameters: bindings checked before a query runs, and its --help


def _did_you_mean(name: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=2, cutoff=0.6)
    return f"; did you mean {' or '.join('?' + c for c in close)}?" if close else ""


def _takes(query: CannedQuery) -> str:
    names = [f"?{p.name} ({p.type})" for p in query.parameters]
    return f"it takes {', '.join(names)}" if names else "it takes no bindings"


def _checked_value(query: CannedQuery, p: Parameter, value: object) -> object:
    """*value* (a ``--bind`` text or a pyoxigraph term) for *p*, as its type wants it
    (`QueryError` when it is not of that type); a bare http(s) IRI for an IRI becomes ``<IRI>``."""
    term = not isinstance(value, str)
    text = str(getattr(value, "value", value)) if term else value.strip()
    if term:
        import pyoxigraph as ox

        is_iri = isinstance(value, ox.NamedNode)
    else:
        is_iri = len(text) > 2 and text.startswith("<") and text.endswith(">")
    what = f"--bind {p.name}={text if len(text) <= 40 else text[:39] + '…'}"
    if p.type == "IRI":
        if not is_iri and not term and re.fullmatch(r"https?://[^\s<>\"{}|^`\\]+", text):
            return f"<{text}>"
        if not is_iri:
            other = next((n for n in p.one_of if (q := query.parameter(n)) is not None and q.type == "text"), None)
            hint = f" (to match a text, use ?{other})" if other else ""
            raise QueryError(f"{what}: ?{p.name} of query {query.name!r} is an IRI; write it in angle brackets, "
                             f"--bind {p.name}='<https://…>'{hint}")
        return value
    if p.type in ("integer", "year", "boolean") and is_iri:
        raise QueryError(f"{what}: ?{p.name} of query {query.name!r} is {PARAMETER_TYPES[p.type]}, not an IRI")
    if p.type == "integer" and not re.fullmatch(r"-?[0-9]{1,18}", text):
        raise QueryError(f"{what}: ?{p.name} of query {query.name!r} is a whole number (e.g. --bind {p.name}={p.default or 10})")
    if p.type == "year" and not re.fullmatch(r"[0-9]{4}", text):
        raise QueryError(f"{what}: ?{p.name} of query {query.name!r} is a year of four digits (e.g. --bind {p.name}=2024)")
    if p.type == "boolean":
        if text.lower() not in ("true", "false"):
            raise QueryError(f"{what}: ?{p.name} of query {query.name!r} is true or false")
        return value if term else text.lower()
    if p.type in ("integer", "year") and not term:
        return text  # without the spaces around it, so that it is bound as a number
    return value


def check_bindings(query: CannedQuery, bindings: Mapping[str, object] | Iterable[str]) -> Mapping | list:
    """*bindings* (``NAME=VALUE`` strings or name -> term) checked against the parameters *query*
    declares, and returned in the same form: a name it does not take (with a "did you mean"), a
    value not of its parameter's type, or a required parameter left out is a `QueryError` naming
    the parameters it takes. A query that declares no bindings (a .rq file of one's own) is not checked."""
    if not query.declared:
        return bindings
    if isinstance(bindings, Mapping):
        items = [(str(k).lstrip("?$"), k, v) for k, v in bindings.items()]
    else:
        items = []
        for binding in bindings:
            key, sep, value = binding.partition("=")
            if not sep:
                from kg.sparql.bindings import parse_binding

                parse_binding(binding)  # its error: write NAME=VALUE
            items.append((key.strip().lstrip("?$"), key, value))
    out: list[tuple[object, object]] = []
    given = set()
    for name, key, value in items:
        p = query.parameter(name)
        if name in PAGE_VARIABLES:  # checked by split_page, which says what a page is
            out.append((key, value))
            continue
        if p is None:
            raise QueryError(f"query {query.name!r} takes no ?{name}{_did_you_mean(name, (q.name for q in query.parameters))} "
                             f"({_takes(query)}; kg query {query.name} --help)")
        out.append((key, _checked_value(query, p, value)))
        given.add(name)
    for group in query.groups():
        if not given & set(group):
            names = " or ".join("?" + n for n in group)
            example = next((" ".join(f"--bind {k}={shlex.quote(v)}" for k, v in e.items())
                            for e in query.examples if set(e) & set(group)), None)
            hint = f" (e.g. kg query {query.name} {example})" if example else ""
            raise QueryError(f"query {query.name!r} needs {'one of ' if len(group) > 1 else ''}{names}{hint}; "
                             f"{_takes(query)}: kg query {query.name} --help")
    if isinstance(bindings, Mapping):
        return dict(out)
    return [f"{k}={v}" for k, v in out]


def example_lines(query: CannedQuery) -> list[str]:
    """The ``kg query ...`` example command lines of *query*'s header."""
    return [line.strip() for line in query.description.splitlines() if line.strip().startswith("kg query ")]


def query_help(query: CannedQuery, width: int = 100) -> str:
    """What ``kg query NAME --help`` says of *query*: what it answers, its parameters, examples."""
    import textwrap

    out = [f"{query.name}: {query.summary}", ""]
    if query.parameters:
        out.append("Parameters (--bind NAME=VALUE):")
        for p in query.parameters:
            out.append(f"  ?{p.name}  {p.type}, {p.usage()}")
            out += textwrap.wrap(p.meaning, width=width, initial_indent="      ", subsequent_indent="      ")
    else:
        out.append("Parameters: none.")
    examples = example_lines(query)
    if examples:
        out += ["", "Examples:"] + [f"  {e}" for e in examples]
    return "\n".join(out) + "\n"
