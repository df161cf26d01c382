"""What a SPARQL query gives, whoever ran it: the `QueryResult` of a local query (`kg.sparql.engine`)
and of an endpoint's answer (`kg.sparql.remote`)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

__all__ = ["QueryResult", "Table", "format_table", "read_json_results", "table_layout", "table_view", "term_value"]


@dataclass(frozen=True)
class QueryResult:
    """A SELECT result (variables and rows of terms as strings), an ASK boolean, or triples."""

    variables: tuple[str, ...] = ()
    rows: tuple[tuple[str | None, ...], ...] = ()
    terms: tuple[dict, ...] = ()  # SPARQL 1.1 JSON results bindings, one dict per row
    boolean: bool | None = None
    triples: tuple[tuple[str, str, str], ...] = ()
    kind: str = "select"
    next_offset: int | None = None  # a paged query's full page: the offset of the next one
    bound: tuple[tuple[str, str], ...] = ()  # (name, value) of the bindings given: a table says them once
    ties: tuple[str, ...] = ()  # a ranked query's cut that falls inside a tie, said under a table (kg.sparql.ranking)


def term_value(term: dict) -> str:
    """The text of a SPARQL JSON results term: an IRI, a literal's lexical form, a blank node's
    label (a quoted triple, RDF 1.2, as its JSON). A local query's rows (`kg.sparql.engine`) and an
    endpoint's (`kg.sparql.remote`) are read with it."""
    value = term["value"]
    return value if isinstance(value, str) else json.dumps(value)


_XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"


def _json_term(term: dict) -> dict:
    """A SPARQL JSON results term as `kg.sparql` writes one (``typed-literal`` is a literal,
    ``xsd:string`` is implicit)."""
    term = dict(term)
    if term.get("type") == "typed-literal":
        term["type"] = "literal"
    if term.get("datatype") == _XSD_STRING:
        del term["datatype"]
    return term


def read_json_results(data: dict) -> QueryResult:
    """The `QueryResult` of a SPARQL 1.1 JSON results document (*data*, parsed): an endpoint's
    answer (`kg.sparql.remote`), or kg serve's worker's (`kg.serve.app`)."""
    if "boolean" in data:
        return QueryResult(boolean=bool(data["boolean"]), kind="ask")
    variables = tuple(data.get("head", {}).get("vars", ()))
    solutions = [{k: _json_term(v) for k, v in b.items() if k in variables} for b in data.get("results", {}).get("bindings", ())]
    rows = tuple(tuple(term_value(s[v]) if v in s else None for v in variables) for s in solutions)
    return QueryResult(variables=variables, rows=rows, terms=tuple(solutions))


# --------------------------------------------------------------------------------------------
# A table for people: what `kg query --format table` prints


TABLE_WIDTH = 120  # the width of a table when the output is not a terminal
_MIN_COLUMN = 5  # a column is not cut narrower (its header may be, with an ellipsis)
_GAP = "  "


def display_width(text: str) -> int:
    """Columns *text* takes in a terminal: wide (East Asian) characters two, combining marks none."""
    import unicodedata

    if text.isascii():
        return len(text)
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def fit(text: str, width: int) -> str:
    """*text* cut to *width* columns, an ellipsis in place of what is cut."""
    if display_width(text) <= width:
        return text
    out, used = [], 0
    for c in text:
        w = display_width(c)
        if used + w > width - 1:
            break
        out.append(c)
        used += w
    return "".join(out) + "…"


def _base(iris: list[str]) -> str | None:
    """The prefix most of *iris* share before their last two path segments (kg's base IRI,
    ``https://example.org/kg/``, when they are kg's concepts, papers, people...)."""
    from collections import Counter

    prefixes = Counter()
    for iri in iris:
        head = iri.rstrip("/").rsplit("#", 1)[0]
        cut = head.rfind("/", 0, head.rfind("/"))
        if cut > len("https://"):
            prefixes[iri[:cut + 1]] += 1
    return prefixes.most_common(1)[0][0] if prefixes else None


def _label_of(column: str, variables: list[str]) -> str | None:
    """The column that names the IRIs of *column* (``conceptLabel`` for ``concept``), if any."""
    for suffix in ("Label", "Name", "label", "name"):
        if column + suffix in variables:
            return column + suffix
    return None


@dataclass(frozen=True)
class Table:
    """What a table for people shows of a result (`table_layout`): notes said once above it, the
    columns and their cells (text), and for each cell the full IRI it stands for, or None: an IRI
    column's own value, or the IRI a label names when its IRI column is hidden. `format_table`
    prints it in a terminal; kg serve's ``/api/query?view=table`` sends it to the explorer."""

    notes: tuple[str, ...]
    columns: tuple[str, ...]
    cells: tuple[tuple[str, ...], ...]
    iris: tuple[tuple[str | None, ...], ...]

    def as_json(self) -> dict:
        return {"notes": list(self.notes), "columns": list(self.columns),
                "rows": [list(r) for r in self.cells], "iris": [list(r) for r in self.iris]}


def table_view(result: QueryResult) -> tuple[list[str], list[str], list[list[str]]]:
    """The notes, columns and cells of `table_layout` (*result* as a table for people)."""
    table = table_layout(result)
    return list(table.notes), list(table.columns), [list(r) for r in table.cells]


def table_layout(result: QueryResult, *, full_iris: str = "--format csv shows them") -> Table:
    """What a table shows of *result*: notes said once above it, the columns and the cells;
    *full_iris* tells the reader where the IRIs hidden or shortened are shown whole.

    Bound values are not repeated (a column equal on every row to a ``--bind`` value is left
    out and said once), nor columns empty on every row or equal to another on every row; an
    IRI column whose label column names each IRI is hidden (the label stands for it), other
    IRIs are shortened to what follows the base IRI (``concept/fine-tuning``)."""
    from kg.text.files import printable

    variables = list(result.variables)
    rows = [list(r) for r in result.rows]
    kinds = {v: set() for v in variables}
    for row in result.terms:
        for v in variables:
            if v in row:
                kinds[v].add(row[v].get("type"))
    notes: list[str] = []
    column = {v: [r[i] for r in rows] for i, v in enumerate(variables)}
    drop: set[str] = set()
    said = []
    for name, value in result.bound:
        if name in column and all(x in (None, value) for x in column[name]):
            drop.add(name)
            said.append(f"{name} = {value}")
    if said:
        notes.append("bound: " + ", ".join(said))
    constant = []
    if result.bound and len(rows) > 1:  # what was asked for, found: said once, as the bound values
        same = {v for v in variables if column[v][0] not in (None, "") and all(x == column[v][0] for x in column[v])}
        for v in variables:  # an IRI the same on every row, and its label
            if v in same and v not in drop and kinds[v] == {"uri"}:
                label = _label_of(v, variables) or next((g for g in ("label", "name") if g in same), None)
                for w in (v, label) if label in same and label not in drop else (v,):
                    drop.add(w)
                    constant.append(w)
    if rows:
        empty = [v for v in variables if v not in drop and all(x in (None, "") for x in column[v])]
        drop.update(empty)
        same = []
        if len(rows) > 1:
            kept = [v for v in variables if v not in drop]
            for j, v in enumerate(kept):
                twin = next((u for u in kept[:j] if u not in drop and column[u] == column[v]), None)
                if twin is not None:
                    drop.add(v)
                    same.append(f"{v} = {twin}")
        if empty or same:
            notes.append("not shown: " + ", ".join([*(f"{v} (empty)" for v in empty), *(f"{s} on every row" for s in same)]))
    iri_columns = [v for v in variables if kinds[v] == {"uri"}]
    order = [v for v in variables if v not in drop]
    stands_for = {v: v for v in iri_columns}  # a shown column -> the IRI column its cells link to
    hidden = []
    generic = [g for g in ("label", "name", "title") if g in order]
    for v in [v for v in iri_columns if v in order]:
        label = _label_of(v, order) or (generic.pop(0) if generic and not _label_of(v, variables) else None)
        if label is None:
            continue
        pairs = {(i, lab) for i, lab in zip(column[v], column[label]) if i is not None}
        names = {}
        ok = all(lab not in (None, "") for _, lab in pairs)
        for i, lab in pairs:
            ok = ok and names.setdefault(lab, i) == i
        order.remove(label)
        if ok and rows:
            hidden.append(v)
            order[order.index(v)] = label
            stands_for[label] = v
        else:
            order.insert(order.index(v), label)  # the label first, then its IRI
    if hidden:
        notes.append(f"IRIs of {', '.join(hidden)} hidden: their labels stand for them ({full_iris})")
    base = _base([x for v in iri_columns if v not in hidden for x in column[v] if x])

    def cell(v: str, x: str | None) -> str:
        if x is None:
            return ""
        if v in iri_columns and base and x.startswith(base) and len(x) > len(base):
            x = x[len(base):]
        return printable(" ".join(x.split()))

    if constant:
        labelled = {_label_of(v, variables) for v in constant} - {None}
        notes.insert(len(notes) - bool(hidden), "on every row: " + ", ".join(
            f"{v} = {cell(v, column[v][0])}" for v in constant if v not in iri_columns or not labelled & {_label_of(v, variables)}))

    cells = tuple(tuple(cell(v, column[v][i]) for v in order) for i in range(len(rows)))
    iris = tuple(tuple(column[stands_for[v]][i] if v in stands_for else None for v in order) for i in range(len(rows)))
    return Table(tuple(printable(" ".join(n.split())) for n in notes), tuple(order), cells, iris)


def format_table(result: QueryResult, width: int | None = None) -> str:
    """*result* as an aligned table of at most *width* columns (the terminal's, `TABLE_WIDTH`
    when not a terminal): see `table_view`; long cells are cut with an ellipsis, the widest
    column first, numbers are right-aligned, and columns that cannot fit are left out and said.
    Under the rows, a note for each cut of a ranked answer that falls inside a tie (``ties``)."""
    import shutil
    import textwrap

    from kg.text.files import printable

    if width is None:
        width = shutil.get_terminal_size((TABLE_WIDTH, 24)).columns
    width = max(width, 40)
    notes, columns, cells = table_view(result)
    natural = [max([display_width(c)] + [display_width(r[i]) for r in cells]) for i, c in enumerate(columns)]
    floor = [min(n, _MIN_COLUMN) for n in natural]
    widths = list(natural)
    shown = len(columns)

    def total(k: int) -> int:
        return sum(widths[:k]) + len(_GAP) * max(k - 1, 0)

    while shown and total(shown) > width:
        wide = max(range(shown), key=lambda i: (widths[i] - floor[i] > 0, widths[i], i))
        if widths[wide] > floor[wide]:
            widths[wide] = max(floor[wide], widths[wide] - max(1, (total(shown) - width) // 4))
        else:
            shown -= 1
    if shown < len(columns):
        notes.append(f"{len(columns) - shown} more column(s) do not fit: {', '.join(columns[shown:])} (--format csv)")
    numeric = [bool(cells) and all(re.fullmatch(r"-?[\d.,]+(?:e-?\d+)?", r[i]) or not r[i] for r in cells) for i in range(shown)]

    def line(values: list[str]) -> str:
        parts = []
        for i in range(shown):
            text = fit(values[i], widths[i])
            pad = " " * (widths[i] - display_width(text))
            parts.append(pad + text if numeric[i] else text + pad)
        return _GAP.join(parts).rstrip()

    out = [fit(n, width) for n in notes]
    out += [line(columns), line(["-" * w for w in widths])] + [line(r) for r in cells]
    out.append(f"({len(cells)} row{'s' if len(cells) != 1 else ''})")
    for note in result.ties:  # wrapped, not cut: a reader needs all of it
        out += textwrap.wrap(printable(" ".join(note.split())), width, subsequent_indent="  ")
    return "\n".join(out) + "\n"
