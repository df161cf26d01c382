"""Where a long-running piece says what it does: a `Log` takes one line; `quiet` drops it."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Log", "quiet"]

Log = Callable[[str], None]


def quiet(_: str) -> None:
    """The `Log` that says nothing."""
