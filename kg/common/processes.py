"""Child processes that die with kg: `dies_with_parent`, what the store's loader, the server's
Oxigraph worker, the model process and the views' writer run first; and how a stage is handed a
way to run part of its work beside itself (`Beside`, `Now`)."""

from __future__ import annotations

import functools
import os
import signal
import sys
from collections.abc import Callable

__all__ = ["Beside", "Now", "dies_with_parent"]

# A function of no arguments -> an object whose ``result()`` is its value, run beside the caller
# (`kg.pipeline.fork.Forked`: in a forked copy of the build) or at once (`Now`): a stage given one
# runs two independent passes of its own at the same time, on the core a build leaves idle there.
Beside = Callable[[Callable[[], object]], object]


class Now:
    """``fn()`` run at once, in this process; `result` gives its value (the `Beside` of a stage given none)."""

    def __init__(self, fn: Callable[[], object]) -> None:
        self._value = fn()

    def result(self) -> object:
        return self._value

_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


@functools.cache
def _prctl():
    """libc's ``prctl`` on Linux (looked up once, in the parent: nothing is looked up after a fork), else None."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def dies_with_parent() -> Callable[[], None]:
    """What a child process runs first (``preexec_fn``, or first thing after a fork) so that it
    dies with this process however this one ends, SIGKILL included: ``PR_SET_PDEATHSIG`` on
    Linux, and an exit if this process is already gone. The kernel sends the signal when the
    *thread* that started the child ends, so start it from one that lives as long as the child
    should. Elsewhere only the check is made. Takes no lock (safe between fork and exec)."""
    parent, prctl = os.getpid(), _prctl()

    def setup() -> None:
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl
            os._exit(1)

    return setup
