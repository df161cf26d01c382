"""SPARQL over the built graph with Oxigraph (pyoxigraph): stores, bound queries, output formats.

``--bind`` values reach the engine as initial bindings (pyoxigraph's SEP-0007
substitutions), never as query text, so no value can change a query's structure. In
pyoxigraph only variables the query projects can be bound, and ``BOUND()`` does not see a
substituted value: the queries in ``queries/`` are written for that.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from kg.common.folders import STORE, STORE_SOURCE
from kg.errors import InputError, QueryError
from kg.sparql.bindings import parse_binding
from kg.sparql.limits import check_query
from kg.sparql.results import QueryResult, format_table, term_value

RDF_FORMATS = {".ttl": "TURTLE", ".nt": "N_TRIPLES", ".jsonld": "JSON_LD", ".nq": "N_QUADS", ".trig": "TRIG", ".rdf": "RDF_XML", ".owl": "RDF_XML"}


def persistent_store(graph: str | Path):
    """The on-disk Oxigraph store `kg build` wrote beside *graph* (a build folder or a graph
    file in one), opened read-only, when it is up to date with that folder's ``graph.nt``;
    else None."""
    import pyoxigraph as ox

    path = Path(graph)
    folder = path if path.is_dir() else path.parent
    if not path.is_dir() and path.suffix.lower() not in (".ttl", ".nt", ".jsonld"):
        return None
    from kg.text.files import read_json

    nt, store = folder / "graph.nt", folder / STORE
    recorded = read_json(store / STORE_SOURCE)
    try:
        st = nt.stat()
    except OSError:
        return None
    if not isinstance(recorded, dict):
        return None
    if recorded.get("size") != st.st_size or recorded.get("mtime_ns") != st.st_mtime_ns:
        return None
    if not path.is_dir() and path.name not in ("graph.ttl", "graph.nt", "graph.jsonld"):
        return None
    try:
        return ox.Store.read_only(str(store / "data"))
    except OSError:
        return None


def load_store(graph: str | Path):
    """An Oxigraph store of *graph*: the persistent store of its build folder when that is up
    to date (no parsing at all), else the RDF file (Turtle, N-Triples, JSON-LD...) loaded in memory."""
    import pyoxigraph as ox

    path = Path(graph)
    store = persistent_store(path)
    if store is not None:
        return store
    if path.is_dir():
        path = path / "graph.ttl"
    if not path.is_file():
        from kg.text.files import file_kind

        why = file_kind(path) if path.exists() or path.is_symlink() else None
        if why is not None:  # a FIFO, a device, a link loop: never opened
            raise InputError(f"{path}: {why}, not a regular file; pass --graph a graph file kg build wrote")
        raise InputError(f"{path}: no such graph file; run `kg build` first or pass --graph")
    fmt = RDF_FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise InputError(f"{path}: unknown RDF format; use .ttl, .nt or .jsonld")
    store = ox.Store()
    try:
        store.bulk_load(path=str(path), format=getattr(ox.RdfFormat, fmt))
    except (SyntaxError, ValueError, OSError) as e:
        raise InputError(f"{path}: cannot be read as RDF ({e})") from e
    return store


def run_query(store, query: str, bindings: Mapping[str, object] | Iterable[str] = ()) -> QueryResult:
    """Run a SPARQL query on *store* with initial *bindings* (name -> term, or NAME=VALUE strings)."""
    import pyoxigraph as ox

    check_query(query)  # before pyoxigraph parses it: a query past these bounds would crash this process
    if not isinstance(bindings, Mapping):
        bindings = dict(parse_binding(b) for b in bindings)
    substitutions = {ox.Variable(k): v for k, v in bindings.items()}
    try:
        result = store.query(query, substitutions=substitutions or None)
    except SyntaxError as e:
        raise QueryError(f"the query does not parse: {e}") from e
    except (OSError, ValueError, RuntimeError) as e:
        unknown = re.search(r"variable \?(\w+) in its SELECT projection", str(e))
        if unknown:
            raise QueryError(
                f"--bind {unknown.group(1)}: this query takes no ?{unknown.group(1)} (its first comment lines say which it takes)"
            ) from e
        raise QueryError(f"the query failed: {e}") from e
    if isinstance(result, ox.QueryBoolean):
        return QueryResult(boolean=bool(result), kind="ask")
    if isinstance(result, ox.QuerySolutions):
        # Oxigraph writes the solutions as SPARQL JSON results and the json module reads them back:
        # about a third of the time of making a Python object for each term (thousands of rows).
        data = json.loads(result.serialize(format=ox.QueryResultsFormat.JSON))
        variables = tuple(data["head"]["vars"])
        terms = tuple(data["results"]["bindings"])
        rows = tuple(tuple(term_value(b[v]) if v in b else None for v in variables) for b in terms)
        return QueryResult(variables=variables, rows=rows, terms=terms)
    triples = tuple((str(t.subject), str(t.predicate), str(t.object)) for t in result)
    return QueryResult(triples=triples, kind="construct")


def format_result(result: QueryResult, fmt: str = "table", width: int | None = None) -> str:
    """*result* as a table for people (`kg.sparql.results.format_table`, *width* columns at most:
    the terminal's by default), or for programs, every column with full IRIs: CSV, TSV (tabs,
    a tab or line break in a value written as a space) or JSON (the SPARQL 1.1 Query Results
    JSON Format)."""
    if result.kind == "ask":
        if fmt == "json":
            return json.dumps({"head": {}, "boolean": result.boolean}) + "\n"
        return ("true" if result.boolean else "false") + "\n"
    if result.kind == "construct":
        return "".join(f"{s} {p} {o} .\n" for s, p, o in result.triples)
    if fmt == "json":
        bindings = list(result.terms)
        return json.dumps({"head": {"vars": list(result.variables)}, "results": {"bindings": bindings}}, ensure_ascii=False, indent=1) + "\n"
    if fmt == "csv":
        return _csv(result.variables, result.rows)
    if fmt == "tsv":
        return _tsv(result.variables, result.rows)
    return format_table(result, width)


def _tsv(variables: Sequence[str], rows: Sequence[Sequence[str | None]]) -> str:
    """*rows* as tab-separated values, a row a line, the header without the ``?`` of SPARQL TSV:
    a value's tabs and line breaks are written as spaces (TSV has no quoting)."""
    clean = lambda x: "" if x is None else re.sub(r"[\t\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]", " ", x)
    return "".join("\t".join(map(clean, row)) + "\n" for row in [list(variables), *rows])


def _csv(variables: Sequence[str], rows: Sequence[Sequence[str | None]]) -> str:
    """*rows* as CSV, a row a line. The csv module quotes a value holding a line feed but not one
    holding a lone carriage return (with ``\\n`` line ends), which a reader takes for a line end:
    a row with one has every value quoted."""
    buffer = io.StringIO()
    plain = csv.writer(buffer, lineterminator="\n")
    quoted = csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_ALL)
    plain.writerow(variables)
    for row in rows:
        values = ["" if x is None else x for x in row]
        (quoted if any("\r" in v for v in values) else plain).writerow(values)
    return buffer.getvalue()
