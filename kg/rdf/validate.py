"""A graph checked against kg's SHACL shapes (``shapes/kg.shacl.ttl``), with pySHACL."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kg.errors import InputError
from kg.resources import shapes_file

_FORMATS = {".ttl": "turtle", ".nt": "nt", ".jsonld": "json-ld"}
_SAY_READING = 5_000_000  # bytes: a file whose reading takes seconds (rdflib reads ~1 MB/s); a smaller one is read silently


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


def validate_graph(graph: str | Path = "outputs", log: Callable[[str], None] | None = None,
                   shapes: str | Path | None = None) -> Validation:
    """Check *graph* (a build folder or one of its RDF files) against kg's shapes (or the Turtle file *shapes*).

    *log*, if given, is told what is being done (reading the file, checking it), for a big graph's long wait.
    """
    from pyshacl import validate
    from rdflib import Graph, Namespace

    say = log or (lambda message: None)
    path = rdf_file(graph)
    size = path.stat().st_size
    if size >= _SAY_READING:
        say(f"reading {path} ({size / 1e6:.0f} MB)...")
    started = time.perf_counter()
    data = Graph()
    try:
        data.parse(path, format=_FORMATS[path.suffix])
    except Exception as e:  # rdflib raises many kinds for a file it cannot read
        said = (str(e).splitlines() or [""])[0][:200]  # an error may have no message (KeyError())
        raise InputError(f"{path}: cannot be read as RDF ({e.__class__.__name__}: {said})") from e
    say(f"read {len(data)} triples in {time.perf_counter() - started:.1f} s; checking them against kg's SHACL shapes...")
    started = time.perf_counter()
    shapes_graph = Graph().parse(shapes or shapes_file(), format="turtle")
    # The shapes use no SHACL-AF feature (rules, functions, SPARQL targets), so advanced mode would only copy the
    # data graph first; and they need no inference.
    conforms, results, text = validate(data, shacl_graph=shapes_graph, inference="none", advanced=False)
    sh = Namespace("http://www.w3.org/ns/shacl#")
    violations = len(set(results.subjects(predicate=sh.resultSeverity)))
    say(f"checked in {time.perf_counter() - started:.1f} s")
    return Validation(path, len(data), bool(conforms), violations, text)
