"""``kg serve`` on the command line: options, signals, the summary it prints.
"""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path

import click

from kg.errors import KGError
from kg.serve.app import DEFAULT_HOST, DEFAULT_PORT, DEFAULT_TIMEOUT, start_server
from kg.serve.worker import parse_size
from kg.sparql.store import _quiet

# --------------------------------------------------------------------------------------------
# The command line


@click.command("serve", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--graph", "graph_dir", default="outputs", show_default=True, type=click.Path(path_type=Path),
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
def serve_command(graph_dir: Path, host: str, port: int, timeout: float, max_memory: str | None,
                  allow_service: tuple[str, ...], access: bool) -> None:
    """Serve the graph built into --graph: the explorer at / and the SPARQL endpoint at /sparql."""
    say = lambda m: click.echo(f"kg serve: {m}", err=True)
    stop = threading.Event()
    received: list[str] = []

    def on_signal(signum, _frame) -> None:
        received.append(signal.Signals(signum).name)
        stop.set()

    handled = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]
    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {s: signal.signal(s, on_signal) for s in handled}
    try:
        server = start_server(graph_dir, host, port, timeout, log=say, access_log=say if access else _quiet,
                              max_memory=None if max_memory is None else parse_size(max_memory),
                              allow_service=allow_service)
        try:
            s = server.explorer.summary
            click.echo(f"serving {graph_dir} ({s['papers']} papers, {s['concepts']} concepts, {server.store.triples} triples)")
            click.echo(f"  explorer:        {server.url}")
            click.echo(f"  SPARQL endpoint: {server.sparql_url}  (read-only; queries stop after {timeout:g} s "
                       f"or {server.max_memory_text} of memory)")
            click.echo("Press Ctrl-C to stop.", nl=True)
            sys.stdout.flush()
            while not stop.wait(0.5):
                if server.worker._failure is not None and not server.worker._thread.is_alive():
                    raise KGError(f"the SPARQL server failed: {server.worker._failure}")
        finally:
            server.stop()
        if received:
            say(f"stopped ({received[0]})")
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def main(argv: list[str] | None = None) -> None:
    """``python -m kg.serve [options]``: `serve_command` with kg's error handling."""
    try:
        serve_command.main(args=argv, prog_name="kg serve", standalone_mode=False)
    except click.exceptions.Abort:
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except KGError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(e.exit_code)
    sys.exit(0)
