"""The canned queries: the ``.rq`` files shipped with kg, what each answers, and bound texts.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kg.errors import QueryError
from kg.resources import data_dir
from kg.sparql.bindings import bind_text

_QUERY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


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

    def as_json(self) -> dict:
        """What ``kg serve`` lists at ``/queries``."""
        return {"name": self.name, "summary": self.summary, "description": self.description,
                "variables": [{"name": k, "description": v} for k, v in self.variables],
                "examples": list(self.examples), "text": self.text}


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
    examples = []
    in_bindings = False
    for line in header:
        if not line[:1].isspace():  # a section starts: only "Bindings ..." lists variables
            in_bindings = line.startswith("Bindings")
        var = re.match(r"\s+\?([A-Za-z_][A-Za-z0-9_]*)\s+(\S.*)$", line) if in_bindings else None
        if var and var.group(1) not in variables:
            variables[var.group(1)] = var.group(2).strip()
        if "--bind" in line:
            example = _example(line)
            if example:
                examples.append(example)
    return CannedQuery(name=path.stem, path=path, text=text, summary=header[0].strip() if header else "",
                       description="\n".join(header), variables=tuple(variables.items()), examples=tuple(examples))


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
        raise QueryError(f"no query named {str(name)!r}; known queries: {', '.join(list_queries()) or 'none'}")
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
    or a name -> value mapping) written in as terms (`kg.sparql.bindings.bind_text`)."""
    pairs = [f"{k}={v}" for k, v in bindings.items()] if isinstance(bindings, Mapping) else list(bindings)
    return bind_text(named_query(name).text, pairs, name=name)
