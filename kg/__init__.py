"""kg: knowledge graphs of research papers.

The Python API mirrors the command line::

    import kg
    result = kg.build(["seeds"], out="outputs")      # kg build seeds --out outputs
    rows = kg.query("top-concepts", graph="outputs/graph.ttl")   # kg query top-concepts
    figures = kg.stats("outputs/graph.json")         # kg stats
    kg.publish("outputs", "http://127.0.0.1:7878/store")          # kg build --store URL

Heavy libraries (torch, sentence-transformers, spaCy, pyvis) load only when used.
"""

from __future__ import annotations

from kg.errors import InputError, KGError, ModelError, OutputError, QueryError

__all__ = ["build", "query", "stats", "publish", "KGError", "InputError", "ModelError", "OutputError", "QueryError"]


def build(paths=("seeds",), out="outputs", **options):
    """Build the graph of the abstracts under *paths* into *out*; see `kg.pipeline.build`."""
    from kg.pipeline import build as _build

    return _build(paths, out, **options)


def query(query, *, graph="outputs/graph.ttl", bind=(), endpoint=None, default_graph=(), ties=True):
    """Run a query (a ``.rq`` path or a name in ``queries/``) on *graph*; returns a `QueryResult`.

    *bind* holds ``NAME=VALUE`` strings or a name -> pyoxigraph term mapping; a paged query
    also takes ``limit`` (default 100, 0 for all rows) and ``offset``, and its result's
    ``next_offset`` is that of the next page when this one is full. With *endpoint*
    (a SPARQL endpoint URL) the query runs there instead, over *default_graph* (IRIs of named
    graphs, sent as ``default-graph-uri``) when given; see `kg.sparql.remote.query_endpoint`.
    A ranked query (its header's ``Ranked by:``) whose cut falls inside a tie says so in the
    result's ``ties`` (one query more, when the answer reaches its cut; *ties* False skips it).
    """
    from dataclasses import replace

    from kg.sparql.catalogue import (
        bound_values,
        check_bindings,
        find_query,
        paged_text,
        read_query,
        split_page,
        tie_notes,
        tie_probe,
        with_next_page,
    )
    from kg.sparql.engine import load_store, run_query

    canned = read_query(find_query(query))
    bind = checked = check_bindings(canned, bind)  # the parameters its header declares: names, types, required ones
    bound = bound_values(bind)
    page, bind = split_page(canned, bind)  # a paged query's limit and offset (docs/cli.md)
    text = paged_text(canned, page)
    if endpoint is not None:
        from kg.sparql.remote import query_endpoint

        def run(text, bind):
            return query_endpoint(endpoint, text, bind=bind, default_graph=default_graph)
    else:
        store = load_store(graph)

        def run(text, bind):
            return run_query(store, text, bind)
    result = with_next_page(run(text, bind), page)
    probe = tie_probe(canned, checked, result) if ties else None  # one query more, when a group reached the cut
    notes = tie_notes(canned, checked, result, run(*probe)) if probe else ()
    return replace(result, bound=bound, ties=notes)


def publish(graph="outputs", store=None, *, update=None, graph_iri=None, **options):
    """Replace the named graph *graph_iri* (default ``https://example.org/kg/graph``) of a SPARQL
    store with a build's ``graph.nt`` (*graph*: the file or its folder), atomically; returns a
    `PublishReport`. *store* is a Graph Store Protocol endpoint, *update* the SPARQL Update
    endpoint (derived from *store* when not given); see `kg.sparql.remote.publish` for the options.
    """
    from kg.sparql.remote import default_graph_iri
    from kg.sparql.remote import publish as _publish

    return _publish(graph, store, graph_iri or default_graph_iri(), update=update, **options)


def stats(graph="outputs/graph.json"):
    """The figures of a built graph and its ten most connected concepts: the build's
    ``stats.json`` (beside *graph*, a build folder or one of its files), or, where there is none
    (a graph.json alone, or from a kg that did not keep them there), figured from ``graph.json``."""
    from pathlib import Path

    from kg.errors import InputError
    from kg.graph.io import load_graph
    from kg.graph.stats import figures_of_build, graph_stats, typed_figures

    path = Path(graph)
    if path.is_dir():
        path = path / "graph.json"
    elif path.is_file() and path.suffix != ".json":  # another output of the build: its graph.json
        path = path.with_name("graph.json")
    elif not path.exists():
        raise InputError(f"{path}: no such file; run `kg build` first or name a graph.json or the output folder of a build")
    built = figures_of_build(path.with_name("stats.json"))
    if built is not None:
        return built
    G = load_graph(path)
    if "projection" in G.graph:
        raise InputError(f"{path}: the map's projection of a build of more than {G.graph['projection'].get('full_graph_max_papers')} "
                         f"papers, and no stats.json written by this kg beside it; run `kg build` again")
    try:
        typed = typed_figures(G)
        return graph_stats(G) | ({"entities": typed} if typed["concepts_with_mentions"] else {})
    except (KeyError, TypeError, ValueError) as e:  # a node or link without what kg build gives it
        raise InputError(f"{path}: not a graph.json written by kg build (a node or link lacks {e})") from e
