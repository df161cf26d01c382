"""SHACL's SPARQL-based constraints (``sh:sparql`` with ``sh:select``), run on an Oxigraph store.

rudof checks the core constraints of kg's shapes quickly but its SPARQL path took 206 s for the
rules of a 1,000-abstract build where Oxigraph's engine, given the same queries, takes 10 s
(benchmarks/README.md, "Validate"): so `kg.rdf.validate` hands these rules to Oxigraph. What is
supported is what SHACL-SPARQL defines for node shapes: the four target kinds and implicit class
targets, ``$this`` pre-bound (Oxigraph's substitution, SEP-0007: a subquery sees it only through
its projection), ``sh:prefixes`` declarations, ``{?var}`` message templates, ``sh:severity`` and
``sh:deactivated``. A rule on a property shape (``$PATH``) is refused rather than half-checked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from kg.errors import InputError

__all__ = ["SparqlRule", "run_rules", "sparql_rules"]

SH = "http://www.w3.org/ns/shacl#"
_RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
_RDFS_CLASS = "http://www.w3.org/2000/01/rdf-schema#Class"
_TEMPLATE = re.compile(r"\{[?$]([A-Za-z_][A-Za-z0-9_]*)\}")
_TARGETS = {  # a target kind: the query giving its focus nodes, {t} its target's term (N-Triples)
    "targetNode": None,
    "targetClass": "SELECT DISTINCT ?f WHERE {{ ?f a/<http://www.w3.org/2000/01/rdf-schema#subClassOf>* {t} }}",
    "targetSubjectsOf": "SELECT DISTINCT ?f WHERE {{ ?f {t} ?o }}",
    "targetObjectsOf": "SELECT DISTINCT ?f WHERE {{ ?s {t} ?f }}",
}


@dataclass(frozen=True)
class SparqlRule:
    """One SPARQL-based constraint of a node shape: its query (prefixes included), message template,
    severity (a SHACL IRI's local name) and targets (kind, IRI or term in N-Triples)."""

    shape: str
    query: str
    message: str
    severity: str
    targets: tuple[tuple[str, object], ...]


@dataclass(frozen=True)
class RuleResult:
    """A solution of a rule's query: a result of its shape (focus node, value, path, message)."""

    shape: str
    focus: str
    value: str | None
    path: str | None
    severity: str
    message: str


def sparql_rules(shapes) -> list[SparqlRule]:
    """The SPARQL-based constraints of the rdflib graph *shapes*, in a stable order."""
    from rdflib import RDF, URIRef

    def sh(name: str) -> URIRef:
        return URIRef(SH + name)

    rules = []
    for shape, constraint in sorted(shapes.subject_objects(sh("sparql"))):
        if shapes.value(shape, sh("path")) is not None:
            raise InputError(f"{shape}: a SPARQL constraint on a property shape ($PATH) is not supported by kg validate")
        if str(shapes.value(constraint, sh("deactivated"))).lower() == "true" or \
                str(shapes.value(shape, sh("deactivated"))).lower() == "true":
            continue
        select = shapes.value(constraint, sh("select"))
        if select is None:
            raise InputError(f"{shape}: a SPARQL constraint without sh:select")
        prefixes = "".join(f"PREFIX {shapes.value(d, sh('prefix'))}: <{shapes.value(d, sh('namespace'))}>\n"
                           for p in shapes.objects(constraint, sh("prefixes")) for d in shapes.objects(p, sh("declare")))
        targets = [(kind, t) for kind in _TARGETS for t in sorted(shapes.objects(shape, sh(kind)))]
        if (shape, RDF.type, URIRef(_RDFS_CLASS)) in shapes:
            targets.append(("targetClass", shape))
        severity = shapes.value(constraint, sh("severity")) or shapes.value(shape, sh("severity")) or sh("Violation")
        message = shapes.value(constraint, sh("message")) or shapes.value(shape, sh("message")) or ""
        rules.append(SparqlRule(str(shape), prefixes + str(select), str(message),
                                str(severity).removeprefix(SH), tuple(targets)))
    return rules


def run_rules(store, rules: list[SparqlRule]) -> Iterator[RuleResult]:
    """The results of *rules* on the pyoxigraph *store*: each solution of a rule's query, for each
    focus node of its targets, is one."""
    import pyoxigraph as ox

    this = ox.Variable("this")
    for rule in rules:
        for focus in _focus_nodes(store, rule.targets):
            try:
                solutions = store.query(rule.query, substitutions={this: focus})
            except SyntaxError as e:
                raise InputError(f"{rule.shape}: its SPARQL constraint is not a query Oxigraph reads ({e})") from e
            except RuntimeError as e:  # Oxigraph substitutes only a projected variable
                raise InputError(f"{rule.shape}: its SPARQL constraint must select $this ({e})") from e
            for solution in solutions:
                yield _result(rule, focus, solution)


def _focus_nodes(store, targets) -> list:
    nodes = {}
    for kind, target in targets:
        term = _ox_term(target)
        if _TARGETS[kind] is None:
            nodes[term] = None
        else:
            for row in store.query(_TARGETS[kind].format(t=term)):
                nodes[row["f"]] = None
    return list(nodes)


def _ox_term(term):
    """The pyoxigraph term of an rdflib term (an IRI, a literal or a blank node of the shapes)."""
    import pyoxigraph as ox
    from rdflib import BNode, Literal

    if isinstance(term, Literal):
        if term.language:
            return ox.Literal(str(term), language=term.language)
        return ox.Literal(str(term), datatype=ox.NamedNode(str(term.datatype)) if term.datatype else None)
    if isinstance(term, BNode):
        return ox.BlankNode(str(term))
    return ox.NamedNode(str(term))


def _text(term) -> str | None:
    """A term as a report shows it: an IRI or a literal's lexical form (a blank node as _:id)."""
    if term is None:
        return None
    value = getattr(term, "value", None)
    return f"_:{value}" if type(term).__name__ == "BlankNode" else str(value)


def _result(rule: SparqlRule, focus, solution) -> RuleResult:
    def bound(name: str):
        try:
            return solution[name]
        except (KeyError, IndexError):
            return None

    value = bound("value")
    path = bound("path")
    message = _TEMPLATE.sub(lambda m: _text(bound(m.group(1))) or "", rule.message)
    return RuleResult(rule.shape, _text(focus), _text(value if value is not None else focus),
                      _text(path), rule.severity, message)
