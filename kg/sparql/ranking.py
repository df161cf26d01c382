"""Ranked answers: what a canned query ranks by, how it breaks ties, and whether its cut falls in a tie.

A query that answers its first N rows (a ``?top`` parameter, or a fixed ``LIMIT``) declares it in its
header, one line, which its ORDER BY must follow (tests/sparql/test_ranking.py checks each)::

    # Ranked by: ?papers desc; ties by ?otherLabel (lowercase), then ?other; per ?concept; the first ?top

The keys before ``ties by`` are the measure (``desc``: highest first); those after it only order
rows equal on the measure; ``per ?v`` ranks within each value of ``?v``; ``the first ?top`` (or
``the first 25``) is the cut. A cut falls inside a tie when row N and row N+1 of a group are
equal on the measure: which of them is shown is then the tie order's choice, not the measure's.
`cut_ties` finds that from the answer to the same query asked for N+1 rows (kg.sparql.catalogue's
`probe_query` writes it); the table says it under the rows (`kg.sparql.results.format_table`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from kg.errors import QueryError

_KEY = re.compile(r"\?([A-Za-z_][A-Za-z0-9_]*)(\s+desc\b)?\s*(?:\(([^)]*)\))?\s*$")


@dataclass(frozen=True)
class Key:
    """One key of a ranking: a variable, highest first when *desc*, and what it means when said."""

    name: str
    desc: bool = False
    note: str = ""  # e.g. "lowercase": how the ORDER BY compares it

    def said(self) -> str:
        return self.name + (f" ({self.note})" if self.note else "")


@dataclass(frozen=True)
class Ranking:
    """A ranked query's declaration (`parse_ranking`): its measure, tie order, groups and cut."""

    measure: tuple[Key, ...]
    ties: tuple[Key, ...] = ()
    group: str | None = None  # ranked within each value of this variable
    top: str | int = 0  # the parameter that says how many rows (a group's), or a fixed number

    def order(self) -> list[tuple[str, bool]]:
        """(variable, descending) of the keys, as the ORDER BY must sort after its group."""
        return [(k.name, k.desc) for k in (*self.measure, *self.ties)]

    def as_json(self) -> dict:
        return {"measure": [{"name": k.name, "desc": k.desc} for k in self.measure],
                "ties": [k.name for k in self.ties], "per": self.group, "top": self.top}


def _keys(text: str, what: str) -> tuple[Key, ...]:
    keys = []
    for part in re.split(r"(?:,\s*(?:then\s+)?|\s+then\s+)(?![^(]*\))", text.strip()):  # not within (...)
        m = _KEY.match(part.strip())
        if not m:
            raise QueryError(f"Ranked by: cannot read {part.strip()!r} among the {what} (write ?name, ?name desc, ?name (note))")
        keys.append(Key(m.group(1), bool(m.group(2)), (m.group(3) or "").strip()))
    return tuple(keys)


def parse_ranking(text: str) -> Ranking:
    """The ranking a header's ``Ranked by:`` line declares (*text*: what follows the colon)."""
    parts = [p.strip() for p in text.split(";") if p.strip()]
    if not parts:
        raise QueryError("Ranked by: names no key")
    measure, ties, group, top = _keys(parts[0], "measure"), (), None, 0
    for part in parts[1:]:
        if part.startswith("ties by "):
            ties = _keys(part.removeprefix("ties by "), "tie keys")
        elif m := re.fullmatch(r"per \?([A-Za-z_][A-Za-z0-9_]*)", part):
            group = m.group(1)
        elif m := re.fullmatch(r"the first (?:\?([A-Za-z_][A-Za-z0-9_]*)|(\d+))", part):
            top = m.group(1) or int(m.group(2))
        else:
            raise QueryError(f"Ranked by: cannot read {part!r} (ties by ?a, then ?b; per ?g; the first ?top or N)")
    return Ranking(measure, ties, group, top)


def order_keys(text: str) -> list[tuple[str, bool]]:
    """(variable, descending) of each term of the last ORDER BY of query *text*, a term read as the
    first variable it names (``LCASE(STR(?label))`` sorts by ``label``), repeats of one run as one."""
    found = list(re.finditer(r"\bORDER\s+BY\b", text, re.IGNORECASE))
    if not found:
        return []
    clause = re.split(r"\b(?:LIMIT|OFFSET)\b|}", text[found[-1].end():], maxsplit=1, flags=re.IGNORECASE)[0]
    clause = re.sub(r'"(?:[^"\\]|\\.)*"', '""', clause)  # a string's text is no variable
    terms, depth, start = [], 0, 0
    for i, c in enumerate(clause + " "):
        depth += (c == "(") - (c == ")")
        if depth == 0 and c.isspace():
            if clause[start:i].strip():
                terms.append(clause[start:i].strip())
            start = i + 1
    out: list[tuple[str, bool]] = []
    for term in terms:
        m = re.search(r"\?([A-Za-z_][A-Za-z0-9_]*)", term)
        if m:
            key = (m.group(1), term.upper().startswith("DESC"))
            if not out or out[-1] != key:
                out.append(key)
    return out


@dataclass(frozen=True)
class Tie:
    """A cut at row *at* of a group (or of the answer) that falls inside a tie: the rows on both
    sides of it have the *values* of the measure; *shown* of the rows kept have them too."""

    at: int
    values: tuple[tuple[str, str], ...]
    shown: int
    group: str | None = None  # the group's label (or value) when the query ranks per group


def _groups(variables: Sequence[str], rows: Sequence[Sequence[str | None]], group: str | None) -> dict:
    index = variables.index(group) if group in variables else None
    found: dict[str | None, list] = {}
    for row in rows:
        found.setdefault(row[index] if index is not None else None, []).append(row)
    return found


def cut_ties(ranking: Ranking, n: int, probe_variables: Sequence[str], probe_rows: Sequence[Sequence[str | None]],
             shown_groups: set | None = None) -> list[Tie]:
    """The cuts at *n* rows (a group's) that fall inside a tie, read from the *probe*: the same query
    asked for *n* + 1 rows a group, every page. *shown_groups* (values of the group variable in the
    answer shown) limits them to the groups the answer has."""
    variables = list(probe_variables)
    measure = [variables.index(k.name) for k in ranking.measure if k.name in variables]
    if not measure or n <= 0:
        return []
    label = next((ranking.group + s for s in ("Label", "Name") if ranking.group and ranking.group + s in variables), ranking.group)
    out = []
    for value, rows in _groups(variables, probe_rows, ranking.group).items():
        if len(rows) <= n or (shown_groups is not None and ranking.group and value not in shown_groups):
            continue
        last = tuple(rows[n - 1][i] for i in measure)
        if last != tuple(rows[n][i] for i in measure):
            continue
        shown = sum(1 for r in rows[:n] if tuple(r[i] for i in measure) == last)
        name = rows[0][variables.index(label)] if label in variables else value
        out.append(Tie(n, tuple((variables[i], v or "") for i, v in zip(measure, last)), shown, name))
    return out


def tie_note(ranking: Ranking, tie: Tie, name_group: bool = True) -> str:
    """One line saying *tie*: where the cut is, the value tied on, and how ties are ordered (the
    group named first when *name_group*: an answer of several groups)."""
    values = ", ".join(f"{k} = {v}" for k, v in tie.values)
    where = f"for {ranking.group} {tie.group}: " if name_group and ranking.group and tie.group is not None else ""
    top = f"{ranking.top} = {tie.at}" if isinstance(ranking.top, str) else f"{tie.at} rows"
    order = ", then ".join(k.said() for k in ranking.ties) or "the store's order"
    shown = ("the one row shown has" if tie.at == 1 else f"all {tie.at} rows shown have" if tie.shown == tie.at else
             "the last row shown has" if tie.shown == 1 else f"the last {tie.shown} rows shown have")
    more = f"; a larger {ranking.top} shows more" if isinstance(ranking.top, str) else ""
    return (f"{where}the cut at {top} falls inside a tie: {shown} {values}, and so do rows not shown "
            f"(ties are ordered by {order}{more})")
