"""``kg serve``: the graph over HTTP, with Oxigraph's own SPARQL server behind kg's front.

`serve` runs it until a signal; `kg.serve.server.start_server` starts one in the background.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection

from kg.serve.defaults import DEFAULT_HOST, DEFAULT_PORT, DEFAULT_TIMEOUT

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "DEFAULT_TIMEOUT", "serve"]


def serve(graph_dir: str | os.PathLike = "outputs", *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
          timeout: float = DEFAULT_TIMEOUT, max_memory: int | None = None, allow_service: Collection[str] = (),
          log: Callable[[str], None] | None = None, access_log: Callable[[str], None] | None = None,
          on_start: Callable | None = None) -> str | None:
    """Serve the build in *graph_dir* until SIGINT, SIGTERM or SIGHUP (`start_server`'s options),
    then stop the worker and free the port and the folder. *on_start* is called with the running
    `Server`. Returns the name of the signal that stopped it. Raises `KGError` when the SPARQL
    worker or the HTTP front fails for good."""
    import signal
    import threading

    from kg.common.logs import quiet
    from kg.errors import KGError
    from kg.serve.server import start_server

    stop = threading.Event()
    received: list[str] = []

    def on_signal(signum, _frame) -> None:
        received.append(signal.Signals(signum).name)
        stop.set()

    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        with start_server(graph_dir, host, port, timeout, log=log or quiet, access_log=access_log or quiet,
                          max_memory=max_memory, allow_service=allow_service) as server:
            if on_start is not None:
                on_start(server)
            while not stop.wait(0.5):
                if (failure := server.failure()) is not None:
                    raise KGError(failure)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    return received[0] if received else None
