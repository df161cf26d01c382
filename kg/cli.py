"""The command line: a thin layer over the Python API (`kg.build`, `kg.query`, `kg.stats`).

Errors kg raises on purpose become one line on stderr and the exit code of their class
(see `kg.errors`); warnings about the input go to stderr, one line each.
"""

from __future__ import annotations

import contextlib
import json
import sys

import click

import kg
from kg.errors import KGError, OutputsWritten
from kg.serve import DEFAULT_HOST, DEFAULT_PORT, DEFAULT_TIMEOUT
from kg.text.files import printable

FORMATS = ("table", "csv", "tsv", "json")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kg")
def cli() -> None:
    """kg: knowledge graphs of research papers from their abstracts."""


def _parse_executor(value: str):
    """The --executor spec, parsed before anything runs (a bad one is a usage error)."""
    from kg.scale.executor import parse_executor

    try:
        return parse_executor(value)
    except KGError as e:
        raise click.BadParameter(str(e)) from None


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--out", default="outputs", show_default=True, help="Folder the outputs are written to.")
@click.option("--base", default=None, help="Base IRI of the RDF graph (default https://example.org/kg/).")
@click.option("--top-n", default=12, show_default=True, type=click.IntRange(1, 100), help="Keyphrases per paper.")
@click.option("--diversity", default=0.2, show_default=True, type=click.FloatRange(0, 1), help="MMR diversity (0: none, 1: most).")
@click.option("--executor", default="local", show_default=True, callback=lambda _ctx, _param, value: _parse_executor(value),
              help="Where extraction runs: local, dask-local[:N] (N worker processes) or dask://HOST:PORT (a Dask scheduler).")
@click.option("--precision", type=click.Choice(("int8", "fp32")), default="int8", show_default=True,
              help="The model's linear layers quantized to int8 (half the model's CPU time, F1 within ~0.2), or the model as published.")
@click.option("--ranking", type=click.Choice(("learned", "similarity")), default="learned", show_default=True,
              help="Keyphrases ranked by kg's trained ranker, or by KeyBERT's similarity with hand-set bonuses (kg before 2026-12).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no summary.")
@click.option("--store", default=None, metavar="URL",
              help="Also load the graph into this SPARQL Graph Store endpoint (Oxigraph http://host:7878/store, Fuseki http://host:3030/DS/data).")
@click.option("--store-update", default=None, metavar="URL",
              help="Its SPARQL Update endpoint (default: --store with its last path segment replaced by 'update').")
@click.option("--store-graph", default=None, metavar="IRI", help="Named graph replaced in the store (default: the base IRI + 'graph').")
@click.option("--store-batch", default=50_000, show_default=True, type=click.IntRange(1), help="Triples per upload request.")
@click.option("--follow-links", is_flag=True,
              help="Read what symbolic links inside the input folders point at (default: skip them with a warning).")
@click.option("--no-entities", "no_entities", is_flag=True,
              help="Skip typed entities and relations: no entities.jsonl, concepts untyped (as builds before them).")
@click.option("--timings", is_flag=True, help="Print the wall time of each stage of the build and the peak memory at its end on stderr, as a table.")
def build(paths, out, base, top_n, diversity, precision, ranking, quiet, store, store_update, store_graph, store_batch, executor,
          follow_links, no_entities, timings) -> None:
    """Build the graph from abstract lists (files or folders; default: seeds/) into --out."""
    from kg.extract.keyphrases import Settings

    if store or store_update:  # a bad URL fails before the build, not after it
        from kg.sparql.remote import store_endpoints

        store_endpoints(store, store_update)

    bar = None
    total = 0

    started = False  # on_start is not called when nothing changed: the build's recorded warnings are shown instead

    def on_start(report):
        nonlocal total, started
        started = True
        _echo_warnings(report.warnings, report.warning_counts)
        total = len(report.papers)

    def advance(desc, n):  # a bar per stage: the typed entities first, then the keyphrases (whose ranking reads them)
        nonlocal bar
        if quiet or not started:
            return
        if bar is None or bar.desc != desc:
            from tqdm import tqdm

            if bar is not None:
                bar.close()
            bar = tqdm(total=total, desc=desc, unit="abstract", file=sys.stderr)
        bar.update(n)

    def progress(n):
        advance("extracting keyphrases", n)

    def entity_progress(n):
        advance("typing entities", n)

    try:
        result = kg.build(paths or ("seeds",), out, base=base, settings=Settings(top_n=top_n, diversity=diversity, precision=precision, ranking=ranking),
                          progress=progress, on_start=on_start, executor=executor,
                          follow_links=follow_links, entities=not no_entities, entity_progress=entity_progress)
    finally:
        if bar is not None:
            bar.close()
    loading = None  # the store being loaded, once it is
    try:
        if started:
            _echo_warnings([w for w in result.warnings if w.reason == "no_concepts"])
        else:  # nothing was read: every warning the build recorded, counted as stats.json counts them
            _echo_warnings(result.warnings, result.stats.get("input", {}).get("warnings"))
        if timings:
            _echo_timings(result.timings, result.peaks)
        if not quiet:
            s = result.stats
            click.echo(
                f"{s['papers']} papers, {s['concepts']} concepts ({s['shared_concepts']} shared by 2+ papers), "
                f"{s['paper_concept_edges']} paper-concept links, {s['connected_components']} components; "
                f"{s['papers_sharing_a_concept']} of {s['papers']} papers share a concept"
            )
            if s.get("entities"):
                e = s["entities"]
                typed = ", ".join(f"{n} {t}" for t, n in sorted(e["concepts_by_type"].items(), key=lambda x: -x[1]) if t != "none")
                click.echo(f"typed concepts: {typed}; {e['concept_relations']} typed relations between concepts")
            if result.unchanged:
                click.echo(f"nothing changed since the last build: the outputs in {result.out}/ are up to date")
            else:
                x = result.extraction
                click.echo(f"wrote {', '.join(p.name for p in result.files)} to {result.out}/ "
                           f"({x.get('computed', 0)} abstracts extracted, {x.get('from_cache', 0)} from the cache)")
        if store or store_update:
            from kg.sparql.remote import default_graph_iri

            graph_iri = store_graph or default_graph_iri(result.graph.graph.get("base_iri"))
            loading = store or store_update
            try:
                report = kg.publish(result.out, store, update=store_update, graph_iri=graph_iri, batch_triples=store_batch)
            except KGError as e:
                raise type(e)(f"the build is written to {result.out}/, but loading it into the store failed: {e}") from e
            if not quiet:
                click.echo(f"loaded {report.triples} triples into <{report.graph}> at {report.endpoint} "
                           f"({report.batches} request{'s' if report.batches != 1 else ''}, {report.seconds:.1f} s)")
    except KeyboardInterrupt:  # the outputs are written: say so, not that they are unchanged
        if result.unchanged and loading is None:
            raise
        written = "the outputs are unchanged" if result.unchanged else f"the new outputs are all in {result.out}/"
        raise OutputsWritten(written + (f"; loading them into {loading} was cut short" if loading else "")) from None


WARNINGS_SHOWN = 10


def _echo_timings(timings, peaks=()) -> None:
    """The build's stages (`kg.BuildResult.timings`) as a table on stderr: seconds, share of the total and the
    process's peak memory at the stage's end (`kg.BuildResult.peaks`; blank where not known)."""
    from kg.pipeline.timeline import VIEWS

    total = dict(timings).get("total") or 0.0
    peak_of = dict(peaks)
    width = max([len(name) for name, _ in timings] + [len("stage")])
    click.echo(f"{'stage':<{width}}  {'seconds':>8}  {'share':>6}  {'peak MiB':>8}", err=True)
    for name, seconds in timings:
        share = f"{100 * seconds / total:5.1f}%" if total else ""
        peak = f"{peak_of[name] / 2**20:8,.0f}" if peak_of.get(name) is not None else ""
        click.echo(f"{name:<{width}}  {seconds:8.2f}  {share:>6}  {peak:>8}", err=True)
    if any(name.startswith(VIEWS) for name, _ in timings):
        click.echo(f"({VIEWS.strip()} the views writer, a forked process beside rdf: the build waits for it in 'wait for views';"
                   " its peak memory counts what it shares with the build process)", err=True)
    click.echo("(peak MiB: the process's highest resident memory so far, at the stage's end: a stage raised it when it is above"
               " the row before)", err=True)


def _echo_warnings(warnings, counts=None) -> None:
    """Each warning on its own line, at most WARNINGS_SHOWN of a kind; the rest counted (*counts*:
    how many of each kind there are, when *warnings* holds only some)."""
    from collections import Counter

    seen: Counter = Counter()
    for w in warnings:
        seen[w.reason] += 1
        if seen[w.reason] <= WARNINGS_SHOWN:
            click.echo(f"warning: {printable(str(w))}", err=True)
    seen.update({reason: n - seen[reason] for reason, n in (counts or {}).items() if n > seen[reason]})
    for reason, n in sorted(seen.items()):
        if n > WARNINGS_SHOWN:
            click.echo(f"warning: … and {n - WARNINGS_SHOWN} more of this kind ({reason}); stats.json counts them all", err=True)


class _QueryCommand(click.Command):
    """``kg query``, whose ``--help`` after a query's name also shows that query's parameters
    and examples (`kg.sparql.catalogue.query_help`)."""

    _VALUED = frozenset(("--graph", "--bind", "--format", "--endpoint", "--default-graph"))

    def parse_args(self, ctx, args):
        if any(a in ("-h", "--help") for a in args):
            words = iter(args)
            for word in words:
                if word in self._VALUED:
                    next(words, None)
                elif not word.startswith("-"):
                    ctx.meta["kg.query"] = word
                    break
        return super().parse_args(ctx, args)

    def format_epilog(self, ctx, formatter) -> None:
        super().format_epilog(ctx, formatter)
        name = ctx.meta.get("kg.query")
        if name is None:
            return
        from kg.sparql.catalogue import find_query, query_help, read_query

        try:
            text = query_help(read_query(find_query(name)))
        except KGError as e:
            text = f"error: {e}\n"
        formatter.write("\n")
        for line in text.splitlines():
            formatter.write(printable(line) + "\n")


@cli.command(cls=_QueryCommand)
@click.argument("query")
@click.option("--graph", default="outputs/graph.ttl", show_default=True, help="RDF file to query (.ttl, .nt, .jsonld).")
@click.option("--bind", "bindings", multiple=True, metavar="NAME=VALUE", help="Initial binding of a query variable (repeatable).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
              help="table: for reading (labels first, short IRIs, fits the terminal); csv, tsv, json: every column, full IRIs.")
@click.option("--endpoint", default=None, metavar="URL", help="Query this SPARQL endpoint instead of a graph file (e.g. http://host:7878/query).")
@click.option("--default-graph", "default_graphs", multiple=True, metavar="IRI",
              help="With --endpoint: the named graph to query as the default graph, e.g. kg build's --store-graph (repeatable).")
def query(query, graph, bindings, fmt, endpoint, default_graphs) -> None:
    """Run a SPARQL query: a .rq file or the name of one in queries/ (e.g. top-concepts).

    kg query NAME --help shows the parameters NAME takes and examples; kg queries lists the names."""
    from click.core import ParameterSource

    from kg.sparql.engine import format_result

    if endpoint and click.get_current_context().get_parameter_source("graph") is ParameterSource.COMMANDLINE:
        raise click.UsageError("give --graph or --endpoint, not both")
    if default_graphs and not endpoint:
        raise click.UsageError("--default-graph needs --endpoint")
    result = kg.query(query, graph=graph, bind=bindings, endpoint=endpoint, default_graph=default_graphs)
    click.echo(format_result(result, fmt), nl=False, color=True)  # the data as it is: click strips escape sequences otherwise
    if fmt != "table":  # the table says them under its rows; data for programs stays data
        for note in result.ties:
            click.echo(printable(note), err=True)
    if result.next_offset is not None:
        click.echo(f"a page of {len(result.rows)} rows; the next: --bind offset={result.next_offset}, all of them: --bind limit=0",
                   err=True)


@cli.command()
@click.option("--graph", default="outputs/graph.json", show_default=True, help="graph.json or the output folder of a build.")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
def stats(graph, as_json) -> None:
    """Figures of a built graph and its ten most connected concepts."""
    figures = kg.stats(graph)
    if as_json:
        click.echo(json.dumps(figures, indent=2, ensure_ascii=False))
        return
    for key, value in figures.items():
        if key not in ("top_concepts", "cluster_summary", "entities"):
            click.echo(f"{key.replace('_', ' ')}: {value}")
    if figures.get("entities"):
        typed = figures["entities"]
        click.echo("concepts by type: " + ", ".join(f"{t} {n}" for t, n in typed["concepts_by_type"].items()))
        click.echo("typed relations between concepts: " + ", ".join(f"{t} {n}" for t, n in typed["concept_relations_by_type"].items()))
    if figures.get("cluster_summary"):
        click.echo("clusters (id, concepts, papers, name):")
        for row in figures["cluster_summary"]:
            click.echo(f"  {row['id']:>4} {row['concepts']:>6} {row['papers']:>6}  {row['label']}")
    click.echo("top concepts:")
    for row in figures["top_concepts"]:
        click.echo(f"  {row['papers']:>4}  {printable(str(row['label']))}")


@cli.command(name="queries")
def list_queries() -> None:
    """List the named queries in queries/ and the parameters each takes."""
    from kg.sparql.catalogue import catalogue

    for name, q in catalogue().items():
        click.echo(f"{name:24} {q.summary}")
        shown = [p for p in q.parameters if p.name not in ("limit", "offset")]
        if shown:
            words = []
            for p in shown:
                mark = "!" if p.required else "" if not p.one_of else "*"
                words.append(f"?{p.name}{mark}" + (f"={p.default}" if p.default is not None else ""))
            click.echo(f"{'':24} --bind " + " ".join(words) + (" (+ limit, offset)" if q.paged else ""))
    click.echo("\n! required, * one of the starred is required, =default; kg query NAME --help says more.")


@cli.command()
@click.option("--graph", default="outputs", show_default=True, help="The output folder of a build, or one of its RDF files.")
def validate(graph) -> None:
    """Check a built graph against kg's SHACL shapes (shapes/kg.shacl.ttl)."""
    from kg.errors import ValidationError
    from kg.rdf.validate import validate_graph

    found = validate_graph(graph, log=lambda m: click.echo(f"kg validate: {m}", err=True))
    if not found.conforms:
        click.echo(found.report, err=True)
        raise ValidationError(f"{found.path}: {found.violations} violation{'s' if found.violations != 1 else ''} "
                              f"of kg's SHACL shapes (the report above)")
    if found.skipped:
        click.echo(f"{found.path}: {found.triples} triples conform to kg's SHACL SPARQL rules ({found.skipped})")
    else:
        click.echo(f"{found.path}: {found.triples} triples conform to kg's SHACL shapes")


@cli.command()
@click.option("--graph", "graph_dir", default="outputs", show_default=True, type=click.Path(path_type=str),
              help="Folder of a `kg build` (its graph.nt and graph.json).")
@click.option("--host", default=DEFAULT_HOST, show_default=True, help="Address to listen on; another than 127.0.0.1 only if asked.")
@click.option("--port", default=DEFAULT_PORT, show_default=True, type=click.IntRange(0, 65535), help="Port (0: any free one).")
@click.option("--timeout", default=DEFAULT_TIMEOUT, show_default=True, type=click.FloatRange(min=0.1, max=86400),
              help="Seconds a SPARQL query may run before it is stopped.")
@click.option("--max-memory", "max_memory", default=None, metavar="SIZE",
              help="Memory the SPARQL engine may use (4G, 512M; 0: no limit); a query past it is stopped "
                   "with 503. Default: a quarter of this machine's memory.")
@click.option("--allow-service", "allow_service", multiple=True, metavar="IRI",
              help="A SPARQL endpoint that queries may call with SERVICE (repeatable). Federated queries are "
                   "refused otherwise.")
@click.option("--log", "access", is_flag=True, help="Print a line for every request.")
def serve(graph_dir, host, port, timeout, max_memory, allow_service, access) -> None:
    """Serve the graph built into --graph: the explorer at / and the SPARQL endpoint at /sparql."""
    from kg.serve import serve as run
    from kg.serve.worker import parse_size

    say = lambda m: click.echo(f"kg serve: {m}", err=True)

    def started(server) -> None:
        s = server.explorer.summary
        counts = f"{s['papers']} papers, {s['concepts']} concepts, " if s.get("papers") is not None else ""
        click.echo(f"serving {graph_dir} ({counts}{server.store.triples} triples)")
        click.echo(f"  explorer:        {server.url}")
        click.echo(f"  SPARQL endpoint: {server.sparql_url}  (read-only; queries stop after {timeout:g} s "
                   f"or {server.max_memory_text} of memory)")
        click.echo("Press Ctrl-C to stop.")
        sys.stdout.flush()

    signal = run(graph_dir, host=host, port=port, timeout=timeout, log=say, access_log=say if access else None,
                 max_memory=None if max_memory is None else parse_size(max_memory), allow_service=allow_service,
                 on_start=started)
    if signal:
        say(f"stopped ({signal})")


from kg.evaluation.keyphrases import eval_command  # noqa: E402  (heavy imports only when it runs)

cli.add_command(eval_command, "eval")


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI, turning kg's errors into one line and an exit code.

    Ctrl-C exits 130 whenever it comes. Python raises KeyboardInterrupt where the main thread
    is, and one raised inside a ``__del__`` (tqdm's, say) or while the interpreter exits is
    printed as "Exception ignored" and lost: the build went on, and ``kg`` exited 0. So the
    interrupt is also recorded when it comes, a command that finished despite one exits 130,
    and the program (*argv* None) ends with `_exit_now` instead of the interpreter's teardown."""
    import signal
    import threading

    if argv is None:  # the kg program: registered first, so run last of every exit callback
        import atexit

        atexit.register(_exit_now)
    came: list[int] = []

    def interrupted(signum, frame) -> None:
        came.append(signum)
        raise KeyboardInterrupt

    watch = threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if watch:
        signal.signal(signal.SIGINT, interrupted)
    try:
        _run(argv)
        if came:  # an interrupt some library swallowed while the command went on to finish
            click.echo("interrupted; the command had finished its work (its outputs are whole)", err=True)
            sys.exit(130)
    except SystemExit as e:
        _exit_code[0] = e.code if isinstance(e.code, int) else 0 if e.code is None else 1
        raise
    except BaseException as e:  # a bug's traceback (1), or Ctrl-C between two lines of this function
        _exit_code[0] = 130 if isinstance(e, KeyboardInterrupt) else 1
        raise
    finally:
        if watch:
            signal.signal(signal.SIGINT, _interrupted_at_exit if argv is None else signal.default_int_handler)


_exit_code = [0]  # what the kg program exits with (`main` sets it; `_exit_now` uses it)


def _interrupted_at_exit(signum, frame) -> None:
    """Ctrl-C while the program exits, its work done: 130 now, not a lost exception and 0."""
    _exit_code[0] = 130
    _exit_now(note="interrupted while exiting; the command had finished its work\n")


def _exit_now(note: str = "") -> None:
    """End the kg program with its exit code, once stdout and stderr are flushed: the
    interpreter's own teardown (every module's objects, a last collection: 2-3 s once torch
    and a 10,000-paper graph are loaded) frees nothing the exit would not, and a Ctrl-C in it
    was lost. Every other exit callback has run: this one was registered first."""
    import os

    with contextlib.suppress(Exception):
        sys.stdout.flush()
    with contextlib.suppress(Exception):
        sys.stderr.write(note)
        sys.stderr.flush()
    os._exit(_exit_code[0])


def _run(argv: list[str] | None) -> None:
    """`cli` on *argv*, with kg's errors, click's and interrupts turned into exit codes."""
    try:
        cli.main(args=argv, prog_name="kg", standalone_mode=False)
    except (click.exceptions.Abort, KeyboardInterrupt) as e:  # click gives a KeyboardInterrupt as Abort, its cause
        interrupt = e.__cause__ if isinstance(e, click.exceptions.Abort) else e
        if isinstance(interrupt, OutputsWritten):  # Ctrl-C once a build's outputs were written, or while they were renamed
            click.echo(f"interrupted; {interrupt}", err=True)
        else:
            click.echo("interrupted; the previous outputs are unchanged", err=True)
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(2 if e.exit_code == 2 else e.exit_code)
    except KGError as e:
        click.echo(f"error: {printable(str(e))}", err=True)  # one line, whatever a file name or a value holds
        sys.exit(e.exit_code)
