"""What a SPARQL query gives, whoever ran it: the `QueryResult` of a local query (`kg.sparql.engine`)
and of an endpoint's answer (`kg.sparql.remote`)."""

from __future__ import annotations

import json
from dataclasses import dataclass

__all__ = ["QueryResult", "term_value"]


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


def term_value(term: dict) -> str:
    """The text of a SPARQL JSON results term: an IRI, a literal's lexical form, a blank node's
    label (a quoted triple, RDF 1.2, as its JSON). A local query's rows (`kg.sparql.engine`) and an
    endpoint's (`kg.sparql.remote`) are read with it."""
    value = term["value"]
    return value if isinstance(value, str) else json.dumps(value)
