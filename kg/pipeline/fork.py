"""A function run in a forked copy of the build, beside it: the map's layout and the views while the build writes the
RDF; half of two passes over the texts (the merge's named instances, specificity's cohesion) while it makes the other.
"""

from __future__ import annotations

from collections.abc import Callable

from kg.errors import OutputError

__all__ = ["Forked"]

class Forked:
    """``fn()`` run in a forked copy of this process (it sees everything this one holds, without
    copying), whose result `result` gives, or whose exception it raises. Where the platform
    cannot fork (or a fork fails), ``fn()`` runs at once, in this process. *doing* names its work
    in the error raised when the process stops before it gives a result; *nice* lowers its
    priority (`os.nice`): it then runs on what CPU the processes it runs beside leave. With *forks*, ``fn`` may
    itself run a `Forked` (its process is not a daemon, which multiprocessing forbids to start processes); it dies
    with this process all the same (`kg.common.processes.dies_with_parent`), and `stop` ends it."""

    def __init__(self, fn: Callable[[], object], *, doing: str = "writing the outputs", nice: int = 0,
                 forks: bool = False) -> None:
        import multiprocessing

        self._proc, self._doing = None, doing
        if "fork" in multiprocessing.get_all_start_methods():
            ctx = multiprocessing.get_context("fork")
            self._recv, send = ctx.Pipe(duplex=False)
            from kg.common.processes import dies_with_parent

            try:
                proc = ctx.Process(target=_send_outcome, args=(fn, send, dies_with_parent(), doing, nice),
                                   daemon=not forks)
                proc.start()
                self._proc = proc
            except OSError:  # no memory or process left for a fork
                self._recv.close()
            finally:
                send.close()
        if self._proc is None:
            self._now = _outcome(fn)

    def result(self):
        if self._proc is None:
            kind, value = self._now
        else:
            try:
                kind, value = self._recv.recv()
            except EOFError:
                self._proc.join()
                raise OutputError(f"the process {self._doing} stopped (exit code {self._proc.exitcode}); "
                                  "the previous outputs are unchanged") from None
            finally:
                self._recv.close()
            self._proc.join()
        if kind == "error":
            raise value
        return value

    def stop(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            self._proc.terminate()
            self._proc.join()


def _outcome(fn):
    try:
        return "ok", fn()
    except BaseException as e:  # given to the caller of result()
        return "error", e


def _send_outcome(fn, send, setup: Callable[[], None], doing: str, nice: int) -> None:
    import os
    import pickle

    setup()  # a killed build leaves no writer behind
    if nice:
        os.nice(nice)
    kind, value = _outcome(fn)
    try:
        message = pickle.dumps((kind, value))
    except Exception:  # an exception that does not pickle
        message = pickle.dumps(("error", OutputError(f"{doing} failed: {value!r}")))
    send.send_bytes(message)
    send.close()
