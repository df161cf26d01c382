"""The wall time of a build's stages (`BuildResult.timings`, ``kg build --timings``): where a build's, above all a
rebuild's, time goes, measured where it is spent rather than guessed from a profile of one stage.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from time import perf_counter

__all__ = ["TOTAL", "VIEWS", "Timeline"]

TOTAL = "total"  # the last span: the whole build, from its call to its result
VIEWS = "views: "  # before the spans of the views writer, a forked process that runs beside the RDF writer (`kg.pipeline.fork`)


class Timeline:
    """Named spans of wall time (`time.perf_counter`), in the order they ended: each `stage` block
    adds one, `extend` adds those another process measured. A span costs two clock reads."""

    def __init__(self) -> None:
        self._start = perf_counter()
        self._spans: list[tuple[str, float]] = []

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the block as the span *name* (also when it raises: a failed stage took its time too)."""
        start = perf_counter()
        try:
            yield
        finally:
            self._spans.append((name, perf_counter() - start))

    def files(self, open_output):
        """*open_output* (a context manager giving the output file *name*) with each file's block,
        making and writing it, timed as the span *name*."""

        @contextmanager
        def opened(name: str):
            with self.stage(name), open_output(name) as f:
                yield f

        return opened

    def extend(self, spans: Iterable[tuple[str, float]], prefix: str = "") -> None:
        """Add *spans* measured elsewhere (the forked views writer's), each name after *prefix*."""
        self._spans.extend((prefix + name, seconds) for name, seconds in spans)

    def spans(self) -> tuple[tuple[str, float], ...]:
        """The spans so far."""
        return tuple(self._spans)

    def done(self) -> tuple[tuple[str, float], ...]:
        """The spans, then `TOTAL`: the wall time since this timeline was made."""
        return (*self._spans, (TOTAL, perf_counter() - self._start))
