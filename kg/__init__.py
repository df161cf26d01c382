"""kg: knowledge graphs of research papers.

The Python API mirrors the command line::

    import kg
    result = kg.build(["seeds"], out="outputs")      # kg build seeds --out outputs
    rows = kg.query("top-concepts", graph="outputs/graph.ttl")   # kg query top-concepts
    figures = kg.stats("outputs/graph.json")         # kg stats

Heavy libraries (torch, sentence-transformers, spaCy, pyvis) load only when used.
"""

from __future__ import annotations

from kg.errors import InputError, KGError, ModelError, OutputError, QueryError

__all__ = ["build", "query", "stats", "KGError", "InputError", "ModelError", "OutputError", "QueryError"]


def build(paths=("seeds",), out="outputs", **options):
    """Build the graph of the abstracts under *paths* into *out*; see `kg.pipeline.build`."""
    from kg.pipeline import build as _build

    return _build(paths, out, **options)


def query(query, *, graph="outputs/graph.ttl", bind=()):
    """Run a query (a ``.rq`` path or a name in ``queries/``) on *graph*; returns a `QueryResult`.

    *bind* holds ``NAME=VALUE`` strings or a name -> pyoxigraph term mapping.
    """
    from kg.sparql import find_query, load_store, run_query

    text = find_query(query).read_text(encoding="utf-8")
    return run_query(load_store(graph), text, bind)


def stats(graph="outputs/graph.json"):
    """The figures of a built graph (``stats.json``) and its ten most connected concepts."""
    from pathlib import Path

    from kg.graph import graph_stats, load_graph, top_concepts

    path = Path(graph)
    if path.is_dir():
        path = path / "graph.json"
    elif path.suffix != ".json":
        path = path.with_name("graph.json")
    G = load_graph(path)
    return graph_stats(G) | {"top_concepts": [{"concept": n, "label": l, "papers": c} for n, l, c in top_concepts(G)]}
