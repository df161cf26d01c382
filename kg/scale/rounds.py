"""The rounds of the stages after extraction (`kg.common.rounds.Rounds`) on a Dask cluster's workers.

The partitions are scattered once and stay on the workers; each round's tables are broadcast once
(not pickled with each of its tasks); a result a later round reads (`keep`) stays on the worker that
made it, and Dask runs the later task there. The client holds what `map` brings back: tables about
concepts, not the papers.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kg.common.rounds import LocalRounds, Rounds
from kg.errors import ExecutorError

__all__ = ["DaskRounds", "rounds_on"]


@dataclass(frozen=True)
class DaskRounds:
    """Rounds on the workers of *client* (a ``distributed.Client``)."""

    client: Any

    def place(self, parts: Sequence[Any]) -> list[Any]:
        return self.client.scatter(list(parts), hash=False) if parts else []

    def keep(self, fn: Callable, handles: Sequence[Any], *per_part: Sequence[Any], **broadcast: Any) -> list[Any]:
        run = uuid.uuid4().hex[:8]
        # each table once, to every worker: a keyword value would be pickled into each task
        tables = {name: self.client.scatter([value], broadcast=True, hash=False)[0] for name, value in broadcast.items()}
        return [self.client.submit(fn, part, *(items[i] for items in per_part), **tables, pure=False,
                                   key=f"kg-{fn.__name__.replace('_', '-')}-{run}-{i}")
                for i, part in enumerate(handles)]

    def map(self, fn: Callable, handles: Sequence[Any], *per_part: Sequence[Any], **broadcast: Any) -> list[Any]:
        from distributed import KilledWorker

        futures = self.keep(fn, handles, *per_part, **broadcast)
        try:
            return self.client.gather(futures)
        except KilledWorker as e:
            raise ExecutorError(f"Dask workers died running {fn.__name__} on the partitions, too often to retry ({e})") from e
        finally:
            self.client.cancel(futures)


def rounds_on(executor) -> Rounds:
    """Where the rounds run given an open executor (`kg.scale.executor.open_executor`): on its Dask
    cluster's workers, else in this process."""
    client = getattr(executor, "client", None)
    return DaskRounds(client) if client is not None else LocalRounds()
