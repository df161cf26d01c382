"""A graph checked against kg's SHACL shapes (``shapes/kg.shacl.ttl``), with pySHACL."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kg.errors import InputError
from kg.resources import shapes_file

_FORMATS = {".ttl": "turtle", ".nt": "nt", ".jsonld": "json-ld"}


@dataclass(frozen=True)
class Validation:
    """What pySHACL found: whether the graph conforms, how many results, and its report."""

    path: Path
    triples: int
    conforms: bool
    violations: int
    report: str


def rdf_file(graph: str | Path) -> Path:
    """The RDF file of *graph*: the file itself, or ``graph.ttl`` of a build folder."""
    path = Path(graph)
    if path.is_dir():
        path = path / "graph.ttl"
    if not path.is_file():
        raise InputError(f"{path}: no such file; run `kg build` first, or name a graph.ttl, graph.nt or graph.jsonld")
    if path.suffix not in _FORMATS:
        raise InputError(f"{path}: not an RDF file kg writes (.ttl, .nt, .jsonld)")
    return path


def validate_graph(graph: str | Path = "outputs") -> Validation:
    """Check *graph* (a build folder or one of its RDF files) against kg's shapes."""
    from pyshacl import validate
    from rdflib import Graph, Namespace

    path = rdf_file(graph)
    data = Graph()
    try:
        data.parse(path, format=_FORMATS[path.suffix])
    except Exception as e:  # rdflib raises many kinds for a file it cannot read
        said = (str(e).splitlines() or [""])[0][:200]  # an error may have no message (KeyError())
        raise InputError(f"{path}: cannot be read as RDF ({e.__class__.__name__}: {said})") from e
    shapes = Graph().parse(shapes_file(), format="turtle")
    conforms, results, text = validate(data, shacl_graph=shapes, advanced=True)
    sh = Namespace("http://www.w3.org/ns/shacl#")
    violations = len(set(results.subjects(predicate=sh.resultSeverity)))
    return Validation(path, len(data), bool(conforms), violations, text)
