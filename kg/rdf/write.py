"""The RDF files: the statements laid out as N-Triples, Turtle and JSON-LD.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from itertools import chain

import networkx as nx
from rdflib import RDF, Graph

from kg.errors import KGError
from kg.rdf.statements import Statements
from kg.rdf.terms import XSD_INTEGER, Group, Terms
from kg.rdf.vocabulary import DEFAULT_BASE, check_base, prefixes

FORMATS = {"graph.nt": "nt", "graph.ttl": "turtle", "graph.jsonld": "json-ld"}  # in the order write_rdf writes them


def rdf_files(G: nx.Graph, *, base: str | None = None) -> dict[str, bytes]:
    """The text (UTF-8) of each RDF output file of *G*: ``graph.ttl``, ``graph.nt`` and
    ``graph.jsonld``: the N-Triples and Turtle that Oxigraph's serializers write (and kg's
    compact JSON-LD) of `statements`, without building an rdflib graph. The same graph gives
    the same bytes."""
    out = in_memory(lambda open_output: write_rdf(G, open_output, base=base))
    return {name: out[name] for name in FORMATS}


def in_memory(write: Callable[[Callable], None]) -> dict[str, bytes]:
    """What *write* writes, by file name, when it is handed an ``open_output(name)`` context
    manager that gives in-memory binary files (the writers of `write_rdf`'s kind)."""
    import io
    from contextlib import contextmanager

    out: dict[str, bytes] = {}

    @contextmanager
    def open_output(name: str):
        buffer = io.BytesIO()
        yield buffer
        out[name] = buffer.getvalue()

    write(open_output)
    return out


def write_rdf(G: nx.Graph, open_output, *, base: str | None = None, written: Callable[[str], None] | None = None) -> None:
    """Write each RDF output file of *G* (`rdf_files`) to the binary file that
    ``open_output(name)`` (a context manager) gives, the three together from the statements a
    slice at a time (`kg.rdf.statements._Statements`), so that neither a file's text (at 10,000
    papers the three come to ~400 MB) nor every statement is held in memory. *written* is
    called with each file's name once they are written (``graph.nt`` first)."""
    base = check_base(base or G.graph.get("base_iri") or DEFAULT_BASE)
    statements = Statements(G, base)
    names = prefixes(base)
    with open_output("graph.nt") as nt, open_output("graph.ttl") as ttl, open_output("graph.jsonld") as jsonld:
        turtle, json_ld = _Turtle(names, ttl), _JsonLd(names, jsonld)
        for groups, terms in statements.chunks():
            _ntriples(groups, nt)
            turtle.write(groups, terms)
            json_ld.write(groups, terms)
        turtle.close()
        json_ld.close()
    if written is not None:
        for name in FORMATS:
            written(name)


def _literally(text: str) -> str:
    """*text* as a literal part of a %-format template."""
    return text.replace("%", "%%")


def _ntriples(groups: list[Group], f) -> None:
    """Write the statement *groups* (terms as N-Triples text) to *f* as N-Triples: a triple a
    line, as Oxigraph's serializer writes them."""
    f.write("".join([f"{s} {p} {o} .\n" for s, ps, os in groups for p, o in zip(ps, os)]).encode("utf-8"))


class _Turtle:
    """Writes to *f* the Turtle that Oxigraph's serializer writes for the triples of statement
    groups given a slice at a time (`write`), with the *names* prefixes, its ``@prefix`` lines
    in name order (Oxigraph's own order is that of a hash map).

    Oxigraph writes each IRI and typed literal (`_turtle_forms` asks it for a slice's all at
    once) and each plain or language-tagged literal as in N-Triples; its layout is kept here: a
    subject's next predicate after `` ;`` on a new line with a tab, a repeated predicate's
    next object after `` , ``, a subject's last statement ended by `` .``. The text of a
    group's statements comes from a template made once for its predicates."""

    def __init__(self, names: dict[str, str], f) -> None:
        self._names, self._f = names, f
        self._predicates: dict[str, str] = {}
        self._templates: dict[tuple[str, ...], str] = {}
        self._head: str | None = None
        self._last_s: str | None = None
        self._last_p: str | None = None
        self._forms = _Memo()  # N-Triples text -> Turtle form, across slices (a concept is named in many)

    def _template(self, ps: tuple[str, ...], last: str | None, terms: Terms) -> str:
        """The text of statements of *ps* after their subject's, %s for each object; *last*:
        the predicate of the statement just before of the same subject, if any."""
        parts = []
        for p in ps:
            if p == last:
                parts.append(" , %s")
                continue
            if p not in self._predicates:
                self._predicates[p] = _literally(_turtle_predicate(terms.term(p), self._names))
            parts.append((" ;\n\t" if last is not None else " ") + self._predicates[p] + " %s")
            last = p
        return "".join(parts)

    def write(self, groups: list[Group], terms: Terms) -> None:
        """Write the statement *groups* of one slice, whose terms are *terms*."""
        keys = [*terms.iris, *(key for key in terms.literals if key.endswith(">"))]  # a typed literal's ends with its datatype
        forms = self._forms.keeping(keys)
        asked = [key for key in keys if key not in forms]
        if asked or self._head is None:
            found, head = _turtle_forms(asked, terms, self._names)
            forms.update(found)
            if self._head is None:
                self._head = head
        get, templates = forms.get, self._templates
        last_s, last_p = self._last_s, self._last_p
        out = []
        for s, ps, os in groups:
            if not ps:
                continue
            if s == last_s:  # the subject goes on (each has one group: not from `Statements`)
                out.append(self._template(ps, last_p, terms) % (*map(get, os, os),))
            else:
                found = templates.get(ps)
                if found is None:
                    found = templates[ps] = "%s" + self._template(ps, None, terms)
                out += (" .\n" if last_s is not None else self._head, found % (get(s, s), *map(get, os, os)))
            last_s, last_p = s, ps[-1]
        self._last_s, self._last_p = last_s, last_p
        self._f.write("".join(out).encode("utf-8"))

    def close(self) -> None:
        """End the last subject's statements."""
        self._f.write(b" .\n" if self._last_s is not None else b"\n")


def _turtle_forms(asked: list[str], terms: Terms, names: dict[str, str]) -> tuple[dict[str, str], str]:
    """The Turtle text Oxigraph writes for each IRI and typed literal *asked* (N-Triples texts of
    *terms*) under the *names* prefixes, and its ``@prefix`` lines (sorted) with the empty line
    after them: all from one Turtle serialization of a triple for each term, one subject and two
    predicates by turns, so that each term ends up on a line of its own."""
    import pyoxigraph as ox

    forms: dict[str, str] = {}
    lines: list[str] = []
    for start in range(0, len(asked) or 1, _FORMS_AT_ONCE):  # a slice at a time: its texts are not all held at once
        keys = asked[start:start + _FORMS_AT_ONCE]
        nt = "".join([f"<urn:kg:s> <urn:kg:p{i & 1}> {key} .\n" for i, key in enumerate(keys)]).encode("utf-8")
        out = ox.serialize(ox.parse(nt, format=ox.RdfFormat.N_TRIPLES, lenient=True), format=ox.RdfFormat.TURTLE, prefixes=names)
        del nt
        *lines, body = out.decode("utf-8").split("\n", len(names))
        del out
        pieces = re.split(r" ;\n\t<urn:kg:p[01]> ", body.removeprefix("<urn:kg:s> <urn:kg:p0> ").removesuffix(" .\n"))
        if not all(line.startswith("@prefix ") for line in lines) or len(pieces) != len(keys) \
                or not body.startswith("<urn:kg:s> <urn:kg:p0> "):
            raise KGError("unexpected Turtle from pyoxigraph: not the @prefix lines and then one term a line")
        del body
        forms.update((key, _plain(form, key, terms)) for key, form in zip(keys, pieces))
    return forms, "".join(line + "\n" for line in sorted(lines)) + "\n"


class _Memo(dict):
    """What a writer made for a term (its text in the file's syntax), kept from slice to slice: at
    10,000 papers 73 % of a slice's IRIs and typed literals were in an earlier one (concepts,
    words, counts). At most `_MEMO_SIZE` are kept: when more would be, only those of the slice
    being written stay (`keeping`)."""

    def keeping(self, keys: list[str]) -> _Memo:
        """This memo, emptied of all but *keys* first if holding *keys* too could overflow it."""
        if len(self) + len(keys) > _MEMO_SIZE:
            kept = {key: self[key] for key in keys if key in self}
            self.clear()
            self.update(kept)
        return self


_MEMO_SIZE = 400_000  # terms a `_Memo` holds at most (~60 MB of texts)


# Terms whose Turtle forms `_turtle_forms` asks Oxigraph for in one serialization: at 10,000 papers
# there are ~500,000, and asking for all at once held ~85 MB of texts at the build's peak.
_FORMS_AT_ONCE = 20_000


# A prefixed name every Turtle reader takes (rdflib, Jena, Raptor, Turtle 1.0 and 1.1): ASCII
# letters, digits, '_' and '-', no escapes, no '.' (rdflib fails at a local name ending in
# an escaped '.', older readers at any escape, Turtle 1.0 at a leading digit).
_PLAIN_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*:(?:[A-Za-z_][A-Za-z0-9_-]*)?")


def _plain(form: str, key: str, terms: Terms) -> str:
    """Oxigraph's Turtle *form* of the term *key* (its N-Triples text), with a prefixed name
    that is not `_PLAIN_NAME` written as the full IRI instead (``kg:word\\/c\\.`` is
    ``<https://example.org/kg/word/c.>``): the IRI of an IRI, the datatype of a typed literal."""
    if key.startswith("<"):
        return form if form.startswith("<") or _PLAIN_NAME.fullmatch(form) else key
    lexical, marks, datatype = form.rpartition("^^")
    if not marks or datatype.startswith("<") or _PLAIN_NAME.fullmatch(datatype):
        return form  # a plain datatype, or a literal Oxigraph writes bare (1, true, 1.5)
    return f"{lexical}^^<{terms.literals[key][2]}>"


def _turtle_predicate(p, names: dict[str, str]) -> str:
    """The Turtle text Oxigraph writes for the predicate *p* (an Oxigraph ``NamedNode``), as a
    full IRI where its prefixed name is not a `_PLAIN_NAME`."""
    import pyoxigraph as ox

    out = ox.serialize([ox.Triple(ox.NamedNode("urn:kg:s"), p, ox.NamedNode("urn:kg:o"))], format=ox.RdfFormat.TURTLE, prefixes=names)
    line = out.decode("utf-8").split("\n")[len(names)]
    form = line.removeprefix("<urn:kg:s> ").removesuffix(" <urn:kg:o> .")
    return form if form == "a" or form.startswith("<") or _PLAIN_NAME.fullmatch(form) else f"<{p.value}>"


class _JsonLd:
    """Writes to *f* compact JSON-LD of statement groups given a slice at a time (`write`): a
    ``@context`` of the *names* prefixes and one node object a line in ``@graph``. Integers are
    JSON numbers; other typed literals say their type.

    A node object is the text the JSON encoder writes for it (keys sorted, no spaces, each
    key's values in a list), put together from the JSON text of each term's value by a
    template made once for its predicates."""

    def __init__(self, names: dict[str, str], f) -> None:
        self._encode = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"), check_circular=False).encode
        self._compact = _compactor(names)
        self._rdf_type = f"<{RDF.type}>"
        self._templates: dict[tuple[str, ...], tuple[str, tuple[int, ...], tuple[int, ...]]] = {}
        self._ids: dict[str, str] = {}  # IRI -> the JSON text of its compact form (as an @type)
        self._made = _Memo()  # IRI or typed literal -> the JSON text of its value, across slices
        self._separator = "\n"
        self._f = f
        head = self._encode({"@context": dict(sorted(names.items()))})
        f.write((head[:-1] + ',"@graph":[').encode("utf-8"))

    def _values(self, terms: Terms) -> dict[str, str]:
        """The JSON text of the value of each of *terms* (by N-Triples text), made when first asked for
        (an IRI's or typed literal's taken from an earlier slice's when it was made there)."""
        encode, compact, quote = self._encode, self._compact, _QUOTE
        literals, iris = terms.literals, terms.iris
        made = self._made.keeping([*iris, *(key for key, (_, language, datatype) in literals.items() if language or datatype)])

        class Values(dict):
            def __missing__(self, key: str) -> str:
                text = made.get(key)
                if text is None:
                    text = made[key] = _json_value(key, iris, literals, encode, compact)
                self[key] = text
                return text

        return Values({key: quote(value) for key, (value, language, datatype) in literals.items()
                       if language is None and datatype is None})  # strings, most read once: at C speed

    def _template(self, ps: tuple[str, ...]) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
        """The node object of statements of *ps*: its text with %s for each value, the
        values' places among (@id, object of each statement), and the places of the rdf:type
        statements' objects (whose value is written as an @type)."""
        encode = self._encode
        fields: dict[str, list[int]] = {"@id": [0]}
        for i, p in enumerate(ps, 1):
            fields.setdefault("@type" if p == self._rdf_type else self._compact(p[1:-1]), []).append(i)
        fields = dict(sorted(fields.items()))
        text = ",".join(['"@id":%s' if key == "@id" else f"{_literally(encode(key))}:[{','.join(['%s'] * len(at))}]"
                         for key, at in fields.items()])
        return "{" + text + "}", tuple(chain.from_iterable(fields.values())), tuple(fields.get("@type", ()))

    def write(self, groups: list[Group], terms: Terms) -> None:
        """Write the node objects of the statement *groups* of one slice, whose terms are *terms*."""
        values, templates, ids, compact, quote = self._values(terms), self._templates, self._ids, self._compact, _QUOTE
        separator = self._separator
        out = []
        for s, ps, os in groups:
            found = templates.get(ps)
            if found is None:
                found = templates[ps] = self._template(ps)
            text, places, types = found
            texts = [quote(compact(s[1:-1])), *map(values.__getitem__, os)]
            for i in types:
                o = os[i - 1]
                texts[i] = ids.get(o) or ids.setdefault(o, quote(compact(o[1:-1])))
            out += (separator, text % (*map(texts.__getitem__, places),))
            separator = ",\n"
        self._separator = separator
        self._f.write("".join(out).encode("utf-8"))

    def close(self) -> None:
        """End ``@graph`` and the document."""
        self._f.write(b"\n\n]}\n" if self._separator == "\n" else b"\n]}\n")


_QUOTE = json.encoder.encode_basestring  # what the JSON encoder writes for a str


def _json_value(key: str, iris, literals, encode, compact) -> str:
    """The JSON text of the value of the term *key* (its N-Triples text, one of *iris* or *literals*)."""
    if key in iris:
        return '{"@id":' + _QUOTE(compact(key[1:-1])) + "}"  # as `encode` writes {"@id": ...}
    value, language, datatype = literals[key]
    if language is not None:
        return encode({"@value": value, "@language": language})
    if datatype == XSD_INTEGER and re.fullmatch(r"-?[1-9][0-9]{0,14}|0", value):
        return encode(int(value))
    return encode({"@value": value, "@type": compact(datatype)})


def _compactor(names: dict[str, str]) -> Callable[[str], str]:
    """A function that writes an IRI as ``prefix:local`` under the longest of the *names*
    namespaces it extends, else as it is."""
    by_length = sorted(names.items(), key=lambda kv: -len(kv[1]))
    longest = re.compile("|".join(re.escape(ns) for _, ns in by_length)).match  # alternatives are tried in order
    prefix_of = {ns: prefix for prefix, ns in reversed(by_length)}  # the first of two names of one namespace

    def compact(iri: str) -> str:
        found = longest(iri)
        if found is None:
            return iri
        if found.end() < len(iri):
            return _compact_iri(prefix_of[found.group()], iri[found.end():], iri)
        for prefix, ns in by_length:  # the IRI of a namespace itself
            if iri.startswith(ns) and len(iri) > len(ns):
                return _compact_iri(prefix, iri[len(ns):], iri)
        return iri

    return compact


def _compact_iri(prefix: str, suffix: str, iri: str) -> str:
    """``prefix:suffix``, unless a JSON-LD reader would take it for an absolute IRI (a suffix
    that starts with ``//``, JSON-LD 1.1's rule): then *iri* as it is."""
    return iri if suffix.startswith("//") else f"{prefix}:{suffix}"


def serialize(g: Graph, fmt: str) -> str:
    """Text of *g* in an rdflib format, stable from run to run (N-Triples lines sorted)."""
    if fmt in ("nt", "ntriples", "nt11"):
        lines = sorted(set(g.serialize(format="nt").split("\n")) - {""})  # a literal may hold U+2028 as it is
        return "\n".join(lines) + "\n"
    if fmt == "json-ld":
        context = {prefix: str(uri) for prefix, uri in g.namespaces()}
        return g.serialize(format="json-ld", context=context, indent=1, sort_keys=True)
    return g.serialize(format=fmt)
