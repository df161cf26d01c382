"""The wall time of a build's stages (`BuildResult.timings`, ``kg build --timings``): where a build's, above all a
rebuild's, time goes, measured where it is spent rather than guessed from a profile of one stage; and the process's
peak memory at the end of each (`BuildResult.peaks`): the stage that raised it is the one whose peak is above the
stage's before it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from time import perf_counter

__all__ = ["TOTAL", "VIEWS", "Timeline", "peak_memory"]

TOTAL = "total"  # the last span: the whole build, from its call to its result
VIEWS = "views: "  # before the spans of the views writer, a forked process that runs beside the RDF writer (`kg.pipeline.fork`)


def peak_memory() -> int | None:
    """This process's peak resident memory so far, in bytes, or None where the platform does not keep one. On Linux
    its memory's high-water mark (``VmHWM``: a forked process's starts at what it shares with its parent, an exec'd
    one's at nothing), elsewhere `resource.getrusage`'s (which on Linux would count the parent's memory a process
    started by fork and exec had when it forked)."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) * 1024  # kB
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB elsewhere


class Timeline:
    """Named spans of wall time (`time.perf_counter`), in the order they ended, each with the process's peak memory
    at its end (`peak_memory`): each `stage` block adds one, `extend` adds those another process measured. A span
    costs two clock reads and a read of the peak (~10 microseconds)."""

    def __init__(self) -> None:
        self._start = perf_counter()
        self._spans: list[tuple[str, float]] = []
        self._peaks: list[tuple[str, int | None]] = []
        self._high: int | None = None

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the block as the span *name* (also when it raises: a failed stage took its time too)."""
        start = perf_counter()
        try:
            yield
        finally:
            self._spans.append((name, perf_counter() - start))
            self._peaks.append((name, self._peak()))

    def files(self, open_output):
        """*open_output* (a context manager giving the output file *name*) with each file's block,
        making and writing it, timed as the span *name*."""

        @contextmanager
        def opened(name: str):
            with self.stage(name), open_output(name) as f:
                yield f

        return opened

    def extend(self, spans: Iterable[tuple[str, float]], prefix: str = "",
               peaks: Iterable[tuple[str, int | None]] = ()) -> None:
        """Add *spans* measured elsewhere (the forked views writer's), each name after *prefix*, with that process's
        *peaks* (`peaks`; none given: not known)."""
        spans, given = list(spans), dict(peaks)
        self._spans.extend((prefix + name, seconds) for name, seconds in spans)
        self._peaks.extend((prefix + name, given.get(name)) for name, _ in spans)

    def spans(self) -> tuple[tuple[str, float], ...]:
        """The spans so far."""
        return tuple(self._spans)

    def _peak(self) -> int | None:
        """`peak_memory`, never below the last reading (the kernel's count of a process's pages lags a little, so the
        mark it reports can dip by a few pages)."""
        now = peak_memory()
        if now is not None:
            self._high = max(now, self._high or 0)
        return self._high

    def peaks(self) -> tuple[tuple[str, int | None], ...]:
        """Each span's name with the peak memory of its process at its end (bytes; None: not known), in the order of
        `spans`; once `done`, `TOTAL` last: this process's peak over the whole build."""
        return tuple(self._peaks)

    def done(self) -> tuple[tuple[str, float], ...]:
        """The spans, then `TOTAL`: the wall time since this timeline was made (and, in `peaks`, the peak so far)."""
        self._peaks.append((TOTAL, self._peak()))
        return (*self._spans, (TOTAL, perf_counter() - self._start))
