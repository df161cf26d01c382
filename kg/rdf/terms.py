"""The terms of kg's statements written once each as N-Triples text (`Terms`), and the statement groups the writers
take (`Group`: a subject, its predicates, their objects), cut into pieces of a bounded number of statements (`pieces`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from rdflib import XSD

from kg.text.chars import encodable

__all__ = ["Group", "Terms", "XSD_INTEGER", "group", "pieces"]

Group = tuple[str, tuple[str, ...], tuple[str, ...]]  # subject, predicates, objects (the nth object is the nth predicate's)


class Terms:
    """The terms of a graph's statements, each written as its N-Triples text (a term has one,
    and no other term has it, so the text stands for the term in `Statements`): the
    IRIs (`iris`) and each literal's value, language tag and datatype IRI (`literals`).
    Oxigraph checks each term as it comes (an invalid IRI raises ValueError) and writes its text."""

    def __init__(self) -> None:
        import pyoxigraph as ox

        self._named, self._literal = ox.NamedNode, ox.Literal
        self.iris: set[str] = set()
        self.literals: dict[str, tuple[str, str | None, str | None]] = {}
        self._tags: dict[str, str] = {}  # language tag -> its text after a literal's, as Oxigraph writes it
        self._types: dict[str, Any] = {}  # datatype IRI -> its Oxigraph term
        self._base: tuple[frozenset[str], dict] = (frozenset(), {})

    def keep(self) -> None:
        """Make the terms made so far (the vocabulary's) part of every slice `take` gives."""
        self._base = (frozenset(self.iris), dict(self.literals))

    def take(self) -> Terms:
        """The terms made since the last `take` (with those `keep` kept), as a `Terms` of their
        own; from now on this one holds only the kept ones again."""
        taken = Terms.__new__(Terms)
        taken.__dict__.update(self.__dict__)
        self.iris, self.literals = set(self._base[0]), dict(self._base[1])
        return taken

    def iri(self, iri: str) -> str:
        """The IRI *iri*."""
        key = f"<{iri}>"
        if key not in self.iris:
            self._named(iri)
            self.iris.add(key)
        return key

    def text(self, value: str) -> str:
        """A plain (``xsd:string``) literal (of a number or a boolean: the typed literal Oxigraph makes)."""
        if type(value) is not str:
            return self.add(self._literal(value))
        # Oxigraph writes a string without characters N-Triples escapes as it is, in quotes.
        if _ESCAPED(value):
            value = encodable(value)  # a lone surrogate as U+FFFD: Oxigraph (and UTF-8) cannot hold it
            key = str(self._literal(value))
        else:
            key = f'"{value}"'
        if key not in self.literals:
            self.literals[key] = (value, None, None)
        return key

    def tagged(self, value: str, language: str) -> str:
        """A language-tagged literal."""
        tag = self._tags.get(language)
        if tag is None:
            tag = self._tags[language] = str(self._literal("", language=language))[2:]
        if _ESCAPED(value):
            value = encodable(value)
            key = str(self._literal(value, language=language))
        else:
            key = f'"{value}"{tag}'
        if key not in self.literals:
            self.literals[key] = (value, tag[1:], None)
        return key

    def typed(self, value: str, datatype: str) -> str:
        """A literal of the *datatype* IRI (not ``xsd:string``)."""
        found = self._types.get(datatype)
        if found is None:
            found = self._types[datatype] = self._named(datatype)
        value = encodable(value)
        key = str(self._literal(value, datatype=found))
        if key not in self.literals:
            self.literals[key] = (value, None, datatype)
        return key

    def add(self, term) -> str:
        """An Oxigraph term made elsewhere (a ``NamedNode`` or a ``Literal``)."""
        import pyoxigraph as ox

        if isinstance(term, ox.NamedNode):
            return self.iri(term.value)
        if term.language:
            return self.tagged(term.value, term.language)
        if term.datatype.value == str(XSD.string):
            return self.text(term.value)
        return self.typed(term.value, term.datatype.value)

    def term(self, key: str):
        """The Oxigraph term that *key* is the text of."""
        if key in self.iris:
            return self._named(key[1:-1])
        value, language, datatype = self.literals[key]
        if datatype is not None:
            return self._literal(value, datatype=self._types[datatype])
        return self._literal(value, language=language)


_ESCAPED = re.compile(r'[\x00-\x1f"\\\x7f\ud800-\udfff\ufffe\uffff]').search  # characters Oxigraph escapes (or refuses)


XSD_INTEGER = str(XSD.integer)


def group(s: str, about) -> Group:
    """The group of subject *s* and its (predicate, object) pairs *about*."""
    return (s, *zip(*about)) if about else (s, (), ())


def pieces(groups: list[Group], most: int) -> Iterator[list[Group]]:
    """*groups* cut in order into lists of at most *most* statements (a larger group alone); one list when they fit."""
    piece: list[Group] = []
    held = 0
    for g in groups:
        n = len(g[1])
        if piece and held + n > most:
            yield piece
            piece, held = [], 0
        piece.append(g)
        held += n
    yield piece
