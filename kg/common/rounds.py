"""Rounds over partitions: how a stage after extraction reads the papers where they are.

A stage written as rounds (`kg.concepts.merge.merge_rounds`) places its partitions once (`Rounds.place`),
then maps a function of one partition, and of tables broadcast to every partition, over them:
`Rounds.map` brings the results back in partition order, `Rounds.keep` leaves them where they were made
(a partition's senses, its assignment), to be handed to a later round by position. `LocalRounds` runs
them in this process, one after the other; `kg.scale.rounds.DaskRounds` on a Dask cluster's workers,
the partitions and kept results held there. The outputs are the same (docs/design.md, "Why the stages
after extraction run in rounds over partitions").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

__all__ = ["LocalRounds", "Rounds"]


class Rounds(Protocol):
    """Where the partitions of a stage live and its rounds run."""

    def place(self, parts: Sequence[Any]) -> list[Any]:
        """A handle of each partition, in order: the partition itself, or a reference to it where it is held."""

    def map(self, fn: Callable, handles: Sequence[Any], *per_part: Sequence[Any], **broadcast: Any) -> list[Any]:
        """``fn(part, *(that part's item of each per_part), **broadcast)`` for every partition, the
        results here in partition order. *per_part* items may be handles `keep` gave."""

    def keep(self, fn: Callable, handles: Sequence[Any], *per_part: Sequence[Any], **broadcast: Any) -> list[Any]:
        """As `map`, but each result stays where it was made: a handle of it, in partition order."""


class LocalRounds:
    """Every round in this process, one partition after the other: the handles are the partitions and results themselves."""

    def place(self, parts: Sequence[Any]) -> list[Any]:
        return list(parts)

    def map(self, fn: Callable, handles: Sequence[Any], *per_part: Sequence[Any], **broadcast: Any) -> list[Any]:
        return [fn(part, *(items[i] for items in per_part), **broadcast) for i, part in enumerate(handles)]

    keep = map
