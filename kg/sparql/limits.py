"""Bounds on a SPARQL text, checked before any engine sees it: its length, its nesting and its chains.

Oxigraph's parser and evaluator recurse once per level of nesting and once per operator of a
left-deep chain (``1+1+1``, ``{} UNION {} UNION {}``), on an 8 MiB thread stack. Past a few
hundred to a few thousand levels the stack overflows and the process aborts: the ``oxigraph``
worker of ``kg serve`` (every client's queries with it) or the ``kg query`` process. Measured on
Oxigraph 0.5.13 (``oxigraph serve`` and pyoxigraph crash at the same depths), the first that crashes:

    nesting  FILTER EXISTS { 848; STR( 960, CONCAT( 928, IF( 960; { 2,208; subquery 2,560 (2 braces);
             OPTIONAL { and GRAPH ?g { 2,944; ( 4,672; -( 4,672; <<( 5,952; path ( 13,824
    chains   MINUS 1,024; BIND 2,048; 1+1 4,096; 1/1 6,912; UNION, OPTIONAL 6,528; path | 8,192;
             FILTER 9,344; || 9,344; !!!x 9,344

So a query may nest brackets (``( { [ <<``) at most `MAX_DEPTH` deep, a sixth of the lowest
crash (848); ``<<`` counts 4 (nested quoted triples take seconds each level past 32). The
operators on the way from the top to its deepest point, counted at every level passed whether
before or after the nested part (a left-deep chain puts its first operand at the bottom), may
weigh at most `MAX_CHAIN`, a quarter of the lowest crash: MINUS weighs 4, BIND 2, ``/`` 4
(a property path ``:p/:p/...`` of 256 steps takes 5 s), any other operator or UNION, OPTIONAL,
FILTER, VALUES 1. Both together stay under 40 % of the stack. Real queries nest a dozen levels
and chain a few dozen operators. docs/design.md ("Why queries are bounded") says more.

The scan is linear: string literals, ``# comments`` and escaped characters of prefixed names
are skipped (an engine never reads brackets in them), and so are names, numbers and variables.
An IRI ``<...>`` is not skipped whole: where ``<`` can also be "less than", Oxigraph reads
``?a <((((1))))> ?b`` as a comparison and recurses into it (it crashes at the same depth), so
the brackets and operators inside an IRI count as a nested part of its level (they do not
change the depth after it, as an unbalanced ``(`` in an IRI would).
"""

from __future__ import annotations

import re

from kg.errors import QueryError

MAX_QUERY_CHARS = 1 << 20  # characters of a query text: a thousand times the largest canned query
MAX_DEPTH = 128  # brackets nested: ( { [ <<
MAX_CHAIN = 1024  # weight of the operators on the way to the deepest point (MINUS 4, BIND 2, / 4, others 1)

_NAME = r"[^\W\d]|[\u00B7\u00C0-\U000EFFFF]"
_SCAN = re.compile(rf"""
    (?P<skip>
        \#[^\n\r]*+
      | '''(?:[^'\\]|\\.?|'(?!''))*+(?:'''|\Z)
      | \"\"\"(?:[^"\\]|\\.?|"(?!""))*+(?:\"\"\"|\Z)
      | '(?:[^'\\\n\r]|\\.?)*+'?
      | "(?:[^"\\\n\r]|\\.?)*+"?
      | \\.?
      | \^\^
      | [?$][\w\u00B7\u00C0-\U000EFFFF]++
      | @[A-Za-z]++(?:-[A-Za-z0-9]++)*+
      | (?:(?:{_NAME})[\w\-.\u00B7\u00C0-\U000EFFFF]*+)?:(?:[\w\-.:%\u00B7\u00C0-\U000EFFFF]|\\.)*+
      | \d[\d.]*+(?:[eE][+-]?\d++)?
    )
  | (?P<keyword>(?i:UNION|OPTIONAL|MINUS|BIND|FILTER|VALUES)\b)
  | (?P<word>(?:{_NAME})[\w\u00B7\u00C0-\U000EFFFF]*+)
  | (?P<iri><[^<>"{{}}|^`\\\x00-\x20]*+>)
  | (?P<open>[({{\[]|<<)
  | (?P<close>[)}}\]]|>>)
  | (?P<op>\|\||&&|!=|<=|>=|[-+*/|^!=<>])
""", re.VERBOSE | re.DOTALL)
_WEIGHT = {"MINUS": 4, "BIND": 2, "/": 4}  # chain weights other than 1
_LEVELS = {"<<": 4, ">>": 4}  # levels a bracket opens or closes, other than 1
_EXPRESSION = re.compile(r"[(\[+\-*/|!=&^]")


class QueryTooComplex(QueryError):
    """A query text past one of the bounds of `check_query`."""


def query_shape(text: str, stop: tuple[int, int] | None = None) -> tuple[int, int]:
    """(depth, chain) of *text*: the deepest nesting of its brackets, and the greatest weight of
    operators on the way from the top to a point of it (see the module's docstring). With *stop*
    (depth, chain), the scan ends as soon as either is passed, with a (depth, chain) past it."""
    # each open level: [operators' weight at it, deepest child depth, heaviest child chain]
    stack: list[list[int]] = [[0, 0, 0]]
    path = 0  # weight of the operators of the open levels: what the chain is at least
    max_depth, max_chain = stop or (len(text) + 1, 4 * len(text) + 1)
    for m in _SCAN.finditer(text):
        kind = m.lastgroup
        if kind == "skip" or kind == "word":
            continue
        if kind == "open":
            stack.extend([0, 0, 0] for _ in range(_LEVELS.get(m.group(), 1)))
            if len(stack) > max_depth + 1:
                return len(stack) - 1, path
        elif kind == "close":
            for _ in range(_LEVELS.get(m.group(), 1)):
                if len(stack) > 1:
                    path -= stack[-1][0]
                    _close(stack)
        elif kind == "iri":
            iri = m.group()
            signs = len(_EXPRESSION.findall(iri))
            if signs > 16:  # read as an expression (see above)
                depth, chain = query_shape(iri[1:-1], stop)
            else:  # a few signs bound both without a scan
                depth, chain = iri.count("(") + iri.count("["), 4 * signs
            if signs:
                top = stack[-1]
                top[1], top[2] = max(top[1], depth), max(top[2], chain)
                if len(stack) - 1 + depth > max_depth or path + chain > max_chain:
                    return len(stack) - 1 + depth, path + chain
        else:
            weight = _WEIGHT.get(m.group().upper(), 1)
            stack[-1][0] += weight
            path += weight
            if path > max_chain:
                return len(stack) - 1, path
    while len(stack) > 1:  # brackets left open: as deep as if closed at the end
        _close(stack)
    weight, depth, chain = stack[0]
    return depth, chain + weight


def _close(stack: list[list[int]]) -> None:
    """Close the innermost level: its depth and chain go to the level around it."""
    weight, depth, chain = stack.pop()
    top = stack[-1]
    top[1], top[2] = max(top[1], depth + 1), max(top[2], chain + weight)


def check_query(text: str, what: str = "the query") -> None:
    """Refuse (`QueryTooComplex`, one line) a SPARQL *text* longer than `MAX_QUERY_CHARS`, nested
    deeper than `MAX_DEPTH` or chaining more than `MAX_CHAIN` operators: such a text would
    overflow Oxigraph's stack and abort the process that parses it. *what* names it in the message."""
    if len(text) > MAX_QUERY_CHARS:
        raise QueryTooComplex(f"{what} is {len(text):,} characters long; the limit is {MAX_QUERY_CHARS:,}: "
                              f"split it into smaller queries")
    depth, chain = query_shape(text, stop=(MAX_DEPTH, MAX_CHAIN))
    if depth > MAX_DEPTH:
        raise QueryTooComplex(f"{what} nests brackets ( {{ [ << more than {MAX_DEPTH} deep, the limit "
                              f"(deeper queries crash the SPARQL engine): flatten it")
    if chain > MAX_CHAIN:
        raise QueryTooComplex(f"{what} chains more than {MAX_CHAIN} operators (UNION, MINUS, ||, +, /...), the "
                              f"limit (longer chains crash the SPARQL engine): use VALUES or IN (...) instead")
