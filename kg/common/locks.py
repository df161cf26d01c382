"""The lock on a build folder: who may write it. `kg serve` holds it shared, a build and a
reload of the store exclusive."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["FolderLock"]


class FolderLock:
    """``flock`` on the build folder itself: shared while serving, exclusive while a build writes
    into it (`kg.build` holds it from start to end) or while the store is reloaded. The kernel
    drops it when its holder ends, however it ends. *mode* is what this one holds
    (``"shared"``, ``"exclusive"`` or None)."""

    def __init__(self, folder: Path) -> None:
        import fcntl

        self._fcntl = fcntl
        self.fd: int | None = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self.mode: str | None = None

    def shared(self) -> None:
        self._fcntl.flock(self.fd, self._fcntl.LOCK_SH)
        self.mode = "shared"

    def try_shared(self) -> bool:
        return self._try(self._fcntl.LOCK_SH, "shared")

    def try_exclusive(self) -> bool:
        return self._try(self._fcntl.LOCK_EX, "exclusive")

    def _try(self, kind: int, mode: str) -> bool:
        try:
            self._fcntl.flock(self.fd, kind | self._fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        self.mode = mode
        return True

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # drops the lock
            self.fd = None
            self.mode = None
