"""A graph checked against kg's SHACL shapes (``shapes/kg.shacl.ttl``): the core constraints by rudof's
SHACL engine (pyrudof, Rust), the SPARQL-based rules by Oxigraph's query engine (`kg.rdf.shacl_sparql`).

pySHACL took 15-20 s on the seeds' graph (its SPARQL rules on rdflib's engine) and did not finish a
10,000-abstract build in 30 minutes; rudof alone ran the rules of a 1,000-abstract build 20 times slower
than Oxigraph does (benchmarks/README.md, "Validate"). pySHACL stays the reference the tests compare with.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from kg.errors import InputError
from kg.rdf.shacl_sparql import run_rules, sparql_rules
from kg.resources import shapes_file

_FORMATS = {".ttl": ("Turtle", "TURTLE"), ".nt": ("NTriples", "N_TRIPLES"), ".jsonld": ("JsonLd", "JSON_LD")}  # rudof's, Oxigraph's
_SAY_READING = 5_000_000  # bytes: a file whose reading takes seconds; a smaller one is read silently
_SH = "http://www.w3.org/ns/shacl#"
_SPARQL_COMPONENT = _SH + "SPARQLConstraintComponent"
_SKOLEM = "https://example.org/kg/shapes#property/"  # names of property shapes without one (`_shape_names`)


@dataclass(frozen=True)
class Validation:
    """What the check found: whether the graph conforms (to the rules checked: see *skipped*), how many
    results, and its report."""

    path: Path
    triples: int
    conforms: bool
    violations: int
    report: str
    skipped: str | None = None  # why the core constraints were not checked (a graph too big for this machine's memory)


@dataclass(frozen=True)
class Result:
    """One validation result: the shape and constraint component that found it, its focus node,
    path and value (IRIs or literals in N-Triples form; None where the result has none), severity
    and message."""

    shape: str
    component: str
    focus: str
    path: str | None
    value: str | None
    severity: str
    message: str


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

    The core constraints run in rudof, the SPARQL-based ones in Oxigraph (`kg.rdf.shacl_sparql`: rudof's
    SPARQL path is 20 times slower on them). *log*, if given, is told what is being done (reading the
    file, each engine's check and its time), for a big graph's long wait.
    """
    say = log or (lambda message: None)
    path = rdf_file(graph)
    size = path.stat().st_size
    if size >= _SAY_READING:
        say(f"reading {path} ({size / 1e6:.0f} MB)...")
    started = time.perf_counter()
    store = _read_store(path)
    say(f"read {len(store)} triples in {time.perf_counter() - started:.1f} s; checking them against kg's SHACL shapes...")
    shapes_path = Path(shapes) if shapes else shapes_file()
    shapes_graph = _read_shapes(shapes_path)
    rules = sparql_rules(shapes_graph)
    started = time.perf_counter()
    need, free = core_memory(len(store)), available_memory()
    skipped = None
    if free is not None and need > 0.8 * free:
        skipped = (f"core constraints not checked: rudof would need about {need / 2**30:.0f} GiB for "
                   f"{len(store)} triples and {free / 2**30:.0f} GiB are free")
        say(f"{skipped}; running {len(rules)} SPARQL rules (Oxigraph)...")
        results = []
    else:
        results = _core_results(path, shapes_graph, shapes_path)
        say(f"core constraints checked in {time.perf_counter() - started:.1f} s (rudof); "
            f"running {len(rules)} SPARQL rules (Oxigraph)...")
    started = time.perf_counter()
    results += [Result(r.shape, _SPARQL_COMPONENT, r.focus, r.path, r.value, r.severity, r.message)
                for r in run_rules(store, rules)]
    say(f"SPARQL rules checked in {time.perf_counter() - started:.1f} s")
    violations = sum(r.severity == "Violation" for r in results)
    conforms = not results
    return Validation(path, len(store), conforms, violations, report_text(conforms, results), skipped)


# rudof's peak while checking the core constraints, measured: 3.97 GiB for a 1,000-abstract build
# (370,398 triples), over 21 GiB (stopped) for 10,000 (3,001,840): about 11 GiB a million triples.
CORE_BYTES_PER_TRIPLE = 11 * 2**30 / 1e6
CORE_BASE_BYTES = 2**29


def core_memory(triples: int) -> float:
    """Bytes rudof is expected to take to check the core constraints of a graph of *triples*."""
    return CORE_BASE_BYTES + CORE_BYTES_PER_TRIPLE * triples


def available_memory() -> int | None:
    """Bytes of memory this machine can give without swapping (Linux's MemAvailable), or None if unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _read_store(path: Path):
    """The triples of *path* in an in-memory Oxigraph store; `InputError` for a file it cannot read."""
    import pyoxigraph as ox

    store = ox.Store()
    try:
        store.bulk_load(path=str(path), format=getattr(ox.RdfFormat, _FORMATS[path.suffix][1]))
    except (SyntaxError, ValueError, OSError) as e:
        said = (str(e).splitlines() or [""])[0][:300]
        raise InputError(f"{path}: cannot be read as RDF ({said})") from e
    return store


def _read_shapes(path: Path):
    from rdflib import Graph

    try:
        return Graph().parse(path, format="turtle")
    except Exception as e:  # rdflib raises many kinds for a file it cannot read
        raise InputError(f"{path}: cannot be read as SHACL shapes in Turtle ({e.__class__.__name__})") from e


def _core_results(path: Path, shapes_graph, shapes_path: Path) -> list[Result]:
    """The results of the shapes' core constraints on the file *path*, by rudof (the SPARQL-based
    constraints left out: `kg.rdf.shacl_sparql` runs them)."""
    import pyrudof
    from rdflib import URIRef

    core = shapes_graph.__class__()
    sparql = URIRef(_SH + "sparql")
    for triple in shapes_graph:
        if triple[1] != sparql:
            core.add(triple)
    named, messages = _named_shapes(core)
    engine = pyrudof.Rudof(pyrudof.RudofConfig())
    try:
        # A Path, not a str: rudof reads a str as inline data or a URL when it looks like one.
        engine.read_data(path.resolve(), format=getattr(pyrudof.RDFFormat, _FORMATS[path.suffix][0]),
                         reader_mode=pyrudof.ReaderMode.Strict)
    except pyrudof.RudofError as e:
        said = (str(e).splitlines() or [""])[0]
        raise InputError(f"{path}: cannot be read as RDF ({said[:300]})") from e
    try:
        engine.read_shacl(named, format=pyrudof.ShaclFormat.NTriples, reader_mode=pyrudof.ReaderMode.Strict)
        report = engine.validate_shacl()
    except pyrudof.RudofError as e:
        said = (str(e).splitlines() or [""])[0][:300]
        raise InputError(f"{shapes_path}: not SHACL shapes rudof can use ({said})") from e
    return [_result(entry, messages) for entry in report.violations]


def _named_shapes(graph) -> tuple[str, dict[str, str]]:
    """The shapes *graph* as N-Triples, each property shape named (`_shape_names`), and the sh:message
    of each shape that has one.

    Named, a property shape can be found again from a result that cites it: SHACL gives a shape's own
    sh:message to every result of its constraints, which rudof does not. A result then also says which
    shape found it, not a blank node label of no use to its reader.
    """
    from rdflib import Graph, URIRef

    names = _shape_names(graph)

    def name(term):
        return names.get(term, term)

    named = Graph()
    for s, p, o in graph:
        named.add((name(s), p, name(o)))
    messages = {str(s): str(o) for s, o in named.subject_objects(URIRef(_SH + "message"))}
    return named.serialize(format="nt"), messages


def _shape_names(graph) -> dict:
    """An IRI for each property shape of the shapes *graph* that is a blank node: ``kgsh:PaperShape-name``
    for the property shape of schema:name in kgsh:PaperShape (a count after it where a shape has two of
    one path), ``kgsh:property/N`` for the others. Paths and lists stay blank nodes, as SHACL needs them."""
    from rdflib import BNode, URIRef
    from rdflib.namespace import split_uri

    sh_property, sh_path = URIRef(_SH + "property"), URIRef(_SH + "path")
    names: dict = {}
    for parent, shape in sorted(graph.subject_objects(sh_property)):
        path = graph.value(shape, sh_path)
        if isinstance(shape, BNode) and isinstance(parent, URIRef) and isinstance(path, URIRef):
            base = iri = f"{parent}-{split_uri(path)[1]}"
            n = 1
            while URIRef(iri) in names.values():
                n += 1
                iri = f"{base}-{n}"
            names[shape] = URIRef(iri)
    others = sorted({o for _, o in graph.subject_objects(sh_property) if isinstance(o, BNode)} - names.keys())
    names.update((term, URIRef(f"{_SKOLEM}{n}")) for n, term in enumerate(others, 1))
    return names


def _term(value) -> str | None:
    return None if value is None else str(value)


def _result(entry, messages: dict[str, str]) -> Result:
    """A `Result` of rudof's entry (a core constraint's), with its shape's own sh:message where the
    shape has one, else rudof's."""
    shape = str(entry.source_shape)
    message = messages.get(shape) or str(entry.message or "").strip().strip('"')
    return Result(shape, str(entry.constraint_component), str(entry.focus_node), _term(entry.path),
                  _term(entry.value), str(entry.severity), message)


def report_text(conforms: bool, results: Iterable[Result]) -> str:
    """A report people read, in pySHACL's layout (which users of SHACL tools know): one block a result."""
    results = sorted(results, key=lambda r: (r.shape, r.focus, r.path or "", r.value or "", r.message))
    lines = ["Validation Report", f"Conforms: {conforms}"]
    if results:
        lines.append(f"Results ({len(results)}):")
    for r in results:
        lines.append(f"Constraint {r.severity} in {r.component.removeprefix(_SH)} ({r.component}):")
        lines.append(f"\tSeverity: sh:{r.severity}")
        lines.append(f"\tSource Shape: {r.shape}")
        lines.append(f"\tFocus Node: {r.focus}")
        if r.value is not None:
            lines.append(f"\tValue Node: {r.value}")
        if r.path is not None:
            lines.append(f"\tResult Path: {r.path}")
        if r.message:
            lines.append(f"\tMessage: {r.message}")
    return "\n".join(lines) + "\n"
