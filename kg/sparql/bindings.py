"""SPARQL text, read token by token: variables, bound values written in as terms, SERVICE clauses.

Used where a query travels as text (to an endpoint, to the served worker), so that a bound
value can never change the query's structure and a federated query can be refused.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping

from kg.errors import QueryError

# --------------------------------------------------------------------------------------------
# Bindings as query text (SEP-0007 substitution), for the named queries of the explorer


_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<comment>\#[^\n\r]*)
  | (?P<iri><[^<>"{}|^`\\\x00-\x20]*>)
  | (?P<string>'''(?:(?:'|'')?(?:[^'\\]|\\.))*'''|\"\"\"(?:(?:"|"")?(?:[^"\\]|\\.))*\"\"\"
              |'(?:[^'\\\n\r]|\\.)*'|"(?:[^"\\\n\r]|\\.)*")
  | (?P<var>[?$][A-Za-z0-9_\u00B7\u00C0-\U000EFFFF]+)
  | (?P<lang>@[A-Za-z]+(?:-[A-Za-z0-9]+)*)
  | (?P<word>(?:[A-Za-z_\u00C0-\U000EFFFF][\w.\-\u00B7]*)?:(?:[\w.\-:%\u00B7\u00C0-\U000EFFFF]|\\.)*
             |[A-Za-z_\u00C0-\U000EFFFF][\w\-\u00B7]*|\d[\w.]*)
  | (?P<other>.)
""", re.VERBOSE | re.DOTALL)

_XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
_ECHAR = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
_check_store = None


def _term_text(term) -> str:
    """A pyoxigraph IRI or literal as SPARQL text, checked to read back as the same term."""
    global _check_store
    import pyoxigraph as ox

    if isinstance(term, ox.NamedNode):
        if re.search(r'[<>"{}|^`\\\x00-\x20]', term.value):
            raise QueryError(f"<{term.value}> cannot be written as a SPARQL IRI")
        return f"<{term.value}>"
    if not isinstance(term, ox.Literal):
        raise QueryError(f"{term} cannot be bound: give an IRI or a literal")
    text = '"' + "".join(_ECHAR.get(c, c) for c in term.value) + '"'
    if term.language:
        text += "@" + term.language
    elif term.datatype.value != _XSD_STRING:
        text += f"^^{_term_text(term.datatype)}"
    if _check_store is None:
        _check_store = ox.Store()
    back = next(iter(_check_store.query(f"SELECT ({text} AS ?x) WHERE {{}}")))["x"]
    if back != term:
        raise QueryError(f"{term} cannot be written as a SPARQL literal")
    return text


def query_variables(query: str) -> set[str]:
    """The names of the variables *query* mentions (comments and strings skipped)."""
    return {m.group()[1:] for m in _TOKEN.finditer(query) if m.lastgroup == "var"}


_UNICODE_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")


def service_endpoints(query: str) -> list[str | None]:
    """The endpoints of the ``SERVICE`` clauses of *query*: an IRI as written, ``None`` for one named
    by a variable or a prefixed name (which cannot be checked against an allow-list).

    Comments, strings and IRIs are skipped as the SPARQL grammar reads them; the text is read
    both as written and with its ``\\u`` escapes decoded (SPARQL 1.1, 19.2), so an escaped
    keyword is found too.
    """
    def decode(m: re.Match) -> str:
        code = int(m.group(1) or m.group(2), 16)
        return chr(code) if code <= 0x10FFFF else m.group()

    found: list[str | None] = []
    for text in dict.fromkeys((query, _UNICODE_ESCAPE.sub(decode, query))):
        tokens = [m for m in _TOKEN.finditer(text) if m.lastgroup not in ("ws", "comment")]
        for i, m in enumerate(tokens):
            if m.lastgroup != "word" or m.group().upper() != "SERVICE":
                continue
            rest = tokens[i + 1:i + 3]
            if rest and rest[0].lastgroup == "word" and rest[0].group().upper() == "SILENT":
                rest = rest[1:]
            target = rest[0] if rest else None
            found.append(target.group()[1:-1] if target is not None and target.lastgroup == "iri" else None)
    return found


def check_federation(query: str, allowed: Collection[str] = ()) -> None:
    """Refuse a *query* with a ``SERVICE`` clause whose endpoint is not in *allowed* (`QueryError`).

    A served query must not make the server send requests to addresses its client picks
    (server-side request forgery): federated queries are off unless the operator lists the
    endpoints (``kg serve --allow-service IRI``).
    """
    for endpoint in service_endpoints(query):
        if endpoint is not None and endpoint in allowed:
            continue
        if not allowed:
            raise QueryError("federated queries (SERVICE) are disabled on this server; its operator can allow "
                             "endpoints with kg serve --allow-service IRI")
        if endpoint is None:
            raise QueryError("a SERVICE endpoint must be written as a full IRI (<http://...>) on this server")
        raise QueryError(f"SERVICE <{endpoint}> is not allowed on this server; allowed: "
                         + ", ".join(f"<{a}>" for a in sorted(allowed)))


def substitute(query: str, bindings: Mapping[str, object]) -> str:
    """*query* with each variable of *bindings* (name -> pyoxigraph IRI or literal) replaced by its value.

    The same substitution pyoxigraph applies for ``Store.query(substitutions=...)`` (SEP-0007),
    written out as query text so that the bound query can be sent over the SPARQL protocol:
    every use of the variable becomes the term; in the top SELECT clause ``?v`` becomes
    ``(term AS ?v)``, in the SELECT clause of a subquery it is dropped (the term is used
    everywhere, there is nothing left to join on), in GROUP BY and ORDER BY it becomes
    ``(term)``. A variable the query assigns itself (``AS ?v``, ``VALUES``) cannot be bound
    (`QueryError`). Values are written by `_term_text`, which checks that each reads back
    as the same term, so no value can change the structure of the query.
    """
    terms = {name.lstrip("?$"): _term_text(term) for name, term in bindings.items()}
    if not terms:
        return query
    out: list[str] = []
    brace = paren = 0
    mode: str | None = None  # "select", "group", "order", "values"
    clause = {}  # state of the open clause
    prev = ""  # previous significant token, upper case
    pending_by: str | None = None
    for m in _TOKEN.finditer(query):
        kind, tok = m.lastgroup, m.group()
        if kind in ("ws", "comment"):
            out.append(tok)
            continue
        upper = tok.upper() if kind == "word" else tok
        if mode == "select" and paren == clause["paren"] and (upper in ("WHERE", "FROM") or tok == "{"):
            if not clause["top"] and clause["kept"] == 0 and not clause["star"]:
                out.insert(clause["at"], f" (0 AS ?_kg_unused{len(out)})")
            mode = None
        if mode in ("group", "order") and ((kind == "word" and upper in ("HAVING", "ORDER", "LIMIT", "OFFSET", "VALUES"))
                                           or (tok == "}" and brace == clause["brace"])):
            mode = None
        if mode == "values" and tok == "{":
            mode = None
        if kind == "word":
            if upper == "SELECT":
                mode, clause = "select", {"paren": paren, "top": brace == 0, "kept": 0, "star": False, "at": len(out) + 1}
            elif upper in ("DISTINCT", "REDUCED") and mode == "select" and prev == "SELECT":
                clause["at"] = len(out) + 1
            elif upper in ("GROUP", "ORDER"):
                pending_by = upper
            elif upper == "BY" and pending_by:
                mode, clause = ("group" if pending_by == "GROUP" else "order"), {"paren": paren, "brace": brace}
            elif upper == "VALUES":
                mode = "values"
            if upper != "BY":
                pending_by = pending_by if upper in ("GROUP", "ORDER") else None
            out.append(tok)
        elif kind == "var":
            name = tok[1:]
            if name not in terms:
                if mode == "select" and paren == clause["paren"]:
                    clause["kept"] += 1
                out.append(tok)
            elif prev == "AS":
                raise QueryError(f"?{name} is assigned by the query (AS ?{name}) and cannot be bound")
            elif mode == "values":
                raise QueryError(f"?{name} is given by a VALUES block of the query and cannot be bound")
            elif mode == "select" and paren == clause["paren"]:
                if clause["top"]:
                    out.append(f"({terms[name]} AS {tok})")
                    clause["kept"] += 1
                # in a subquery: dropped from its SELECT clause
            elif mode in ("group", "order") and paren == clause["paren"]:
                out.append(f"({terms[name]})")
            else:
                out.append(terms[name])
        else:
            if tok == "{":
                brace += 1
            elif tok == "}":
                brace -= 1
            elif tok == "(":
                paren += 1
            elif tok == ")":
                paren -= 1
                if mode == "select" and paren == clause["paren"]:
                    clause["kept"] += 1  # an (expression AS ?x)
            elif tok == "*" and mode == "select" and paren == clause["paren"]:
                clause["star"] = True
            out.append(tok)
        prev = upper if kind == "word" else tok
    return "".join(out)


_LANG = re.compile(r'^"(.*)"@([A-Za-z]+(?:-[A-Za-z0-9]+)*)$', re.DOTALL)


def check_text(value: str, what: str) -> None:
    """`QueryError` when *value* (a command-line argument, say) is not text: a byte that is not
    UTF-8 in argv, which Python keeps as a lone surrogate, or a lone surrogate itself."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        bad = ord(value[e.start])
        held = f"byte 0x{bad - 0xDC00:02x}, which is not UTF-8" if 0xDC80 <= bad <= 0xDCFF else f"U+{bad:04X}, a lone surrogate"
        raise QueryError(f"{what} holds {held}; give UTF-8 text") from None


def parse_binding(text: str):
    """``NAME=VALUE`` -> (name, pyoxigraph term). ``<iri>`` is an IRI, ``"text"@en`` a tagged
    literal, an integer an ``xsd:integer``, ``"text"`` or anything else a plain string."""
    import pyoxigraph as ox

    name, sep, value = text.partition("=")
    name = name.strip().lstrip("?$")
    if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise QueryError(f"--bind {text!r}: write NAME=VALUE, for example --bind label='federated learning'")
    check_text(value, f"--bind {name}: the value")
    if value.startswith("<") and value.endswith(">") and len(value) > 2:
        try:
            return name, ox.NamedNode(value[1:-1])
        except ValueError as e:
            raise QueryError(f"--bind {name}: {value} is not a valid IRI ({e})") from e
    tagged = _LANG.match(value)
    if tagged:
        return name, ox.Literal(tagged.group(1), language=tagged.group(2))
    if re.fullmatch(r"-?\d+", value):
        return name, ox.Literal(value, datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer"))
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
    return name, ox.Literal(value)


def bind_text(text: str, bindings: Mapping[str, object] | Iterable[str] = (), *, name: str | None = None) -> str:
    """*text* with *bindings* (``NAME=VALUE`` strings as ``kg query --bind`` takes them, or name ->
    pyoxigraph term) written in as SPARQL terms by `substitute`. A variable the query does not
    mention is a `QueryError` (naming the canned query *name*, when given)."""
    terms = dict(bindings) if isinstance(bindings, Mapping) else dict(parse_binding(b) for b in bindings)
    terms = {k.lstrip("?$"): v for k, v in terms.items()}
    if not terms:
        return text
    unknown = sorted(set(terms) - query_variables(text))
    if unknown and name is not None:
        raise QueryError(f"query {name!r} has no variable {', '.join('?' + u for u in unknown)}")
    if unknown:
        raise QueryError(f"--bind {unknown[0]}: this query takes no ?{unknown[0]} (its first comment lines say which it takes)")
    return substitute(text, terms)
