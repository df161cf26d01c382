"""Where ``kg serve`` listens and how long a query may run, unless told otherwise: what the command
line, `kg.serve.serve` and `kg.serve.server.start_server` share."""

from __future__ import annotations

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "DEFAULT_TIMEOUT"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7878
DEFAULT_TIMEOUT = 10.0  # seconds a query may run
