"""The Oxigraph worker of ``kg serve``: ``oxigraph serve-read-only`` supervised in a child process.

Started on a free loopback port, with ``PR_SET_PDEATHSIG`` (it dies with kg) and a heap cap
(``RLIMIT_DATA``); killed and restarted when a query passes its deadline.
"""

from __future__ import annotations

import contextlib
import http.client
import math
import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

from kg.common.logs import Log, quiet
from kg.common.processes import dies_with_parent
from kg.errors import InputError, KGError

_WORKER_START = 30.0  # seconds Oxigraph may take to open the store
_CRASH_PAUSE = 5.0  # seconds at most between a worker that keeps crashing and the next


# --------------------------------------------------------------------------------------------
# The Oxigraph worker


class Unavailable(Exception):
    """No worker to send a query to: the server is stopping, the worker failed for good, or it is restarting."""


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on *host* now (the system's pick), for a server started next."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _child_setup(max_memory: int | None = None) -> Callable[[], None]:
    """What runs in the worker between fork and exec: die with kg (`dies_with_parent`), and
    a cap on its heap (``RLIMIT_DATA``: an allocation past it fails, and Oxigraph aborts)."""
    import resource

    die = dies_with_parent()

    def setup() -> None:  # nothing that takes a lock
        die()
        if max_memory:
            resource.setrlimit(resource.RLIMIT_DATA, (max_memory, max_memory))
    return setup


_OUT_OF_MEMORY = re.compile(r"memory allocation of \d+ bytes failed")


def default_max_memory() -> int:
    """The default cap on the SPARQL worker's memory: a quarter of this machine's, at least 1 GiB."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = 8 << 30
    return max(1 << 30, total // 4)


def parse_size(text: str) -> int:
    """``4G``, ``512M``, ``1.5GiB``, ``2000000000`` as bytes (``0``: no limit); `InputError` otherwise."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*", text or "", re.IGNORECASE)
    if not m:
        raise InputError(f"--max-memory {text!r}: give a size such as 4G, 512M or 0 (no limit)")
    scale = 1024 ** " KMGT".index((m.group(2) or " ").upper())
    size = float(m.group(1)) * scale
    if not math.isfinite(size) or size >= 1 << 62:  # 1e400 is inf, and no machine has 4 EiB
        raise InputError(f"--max-memory {text!r}: give a size such as 4G, 512M or 0 (no limit)")
    return int(size)


def format_size(n: int) -> str:
    return "no limit" if not n else f"{n / (1 << 30):.1f} GiB" if n >= 1 << 30 else f"{n >> 20} MiB"


class Worker:
    """``oxigraph serve-read-only`` over the store, on a free loopback port, restarted on demand.

    One supervisor thread owns the process (``PR_SET_PDEATHSIG`` fires when the thread that
    forked ends, so it must be a long-lived one): it starts it, waits until it answers, and
    kills and restarts it when asked (a query past its deadline) or when it dies.
    """

    def __init__(self, exe: str, location: Path, *, log: Log = quiet, max_memory: int | None = None) -> None:
        self.exe, self.location, self.log, self.max_memory = exe, location, log, max_memory
        self.generation = 0
        self._out_of_memory: set[int] = set()  # generations that died of the memory cap
        self._killed: set[int] = set()  # generations kg killed (a query past its deadline, a stop)
        self.crashes = 0  # workers that died on their own (a query that crashed Oxigraph, say)
        self._drained: set[int] = set()  # generations whose stderr has ended
        self.restarts = 0
        self._cond = threading.Condition()
        self._proc: subprocess.Popen | None = None
        self._port = 0
        self._ready = False
        self._restart = False
        self._stopping = False
        self._failure: str | None = None
        self._stderr: deque[str] = deque(maxlen=20)
        self._dying: list[subprocess.Popen] = []
        self._thread = threading.Thread(target=self._supervise, name="kg-serve-oxigraph", daemon=True)

    # -- public
    def start(self) -> None:
        self._thread.start()
        with self._cond:
            while not self._ready and self._failure is None:
                self._cond.wait(0.1)
            if self._failure is not None:
                raise KGError(f"the SPARQL server did not start: {self._failure}")

    def acquire(self, deadline: float) -> tuple[int, int]:
        """(generation, port) of a running worker; waits for one until *deadline*."""
        with self._cond:
            while not self._ready:
                if self._stopping:
                    raise Unavailable("the server is shutting down")
                if self._failure is not None and not self._thread.is_alive():
                    raise Unavailable(f"the SPARQL server failed: {self._failure}")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise Unavailable("the SPARQL server is restarting; try again")
                self._cond.wait(min(remaining, 0.5))
            return self.generation, self._port

    def restart(self, generation: int, reason: str) -> None:
        """Kill and restart the worker of *generation* (if it is still the current one)."""
        with self._cond:
            if generation == self.generation and self._ready and not self._stopping:
                self.log(f"restarting the SPARQL worker: {reason}")
                self._killed.add(generation)
                self._ready = False
                self._restart = True
                self.restarts += 1
                self._cond.notify_all()

    def out_of_memory(self, generation: int, wait: float = 2.0) -> bool:
        """Whether the worker of *generation* died of the memory cap. Its connections break as it
        dies, a moment before it is gone: this waits for that (0.2 s), then for its last words."""
        if not self.max_memory:
            return False
        with self._cond:
            proc = self._proc if generation == self.generation else None
        if proc is not None:
            end = time.monotonic() + 0.2
            while proc.poll() is None and time.monotonic() < end:
                time.sleep(0.01)
            if proc.poll() is None:
                return False  # alive: the connection broke for another reason
        end = time.monotonic() + wait
        with self._cond:
            while generation not in self._drained and time.monotonic() < end:
                self._cond.wait(0.05)
            return generation in self._out_of_memory

    def crashed(self, generation: int, wait: float = 0.2) -> bool:
        """Whether the worker of *generation* died on its own (not killed by kg). Its connections
        break as it dies, a moment before it is gone: this waits for that, up to *wait* seconds."""
        with self._cond:
            proc = self._proc if generation == self.generation else None
        end = time.monotonic() + wait
        while proc is not None and proc.poll() is None and time.monotonic() < end:
            time.sleep(0.01)
        with self._cond:
            if generation in self._killed or self._stopping:
                return False
            return proc.poll() is not None if proc is not None else generation < self.generation

    def wait_replaced(self, generation: int, deadline: float) -> None:
        """Wait (until *deadline*) until the supervisor has seen the worker of *generation* end."""
        with self._cond:
            while self.generation == generation and self._ready and time.monotonic() < deadline:
                self._cond.wait(min(0.05, max(0.0, deadline - time.monotonic())))

    def failure(self) -> str | None:
        """Why the worker stopped for good (it failed too often, or could not start), or None."""
        with self._cond:
            return self._failure if not self._thread.is_alive() else None

    def current(self, generation: int) -> bool:
        """Whether *generation* is the running worker (not restarted, nor asked to restart)."""
        with self._cond:
            return generation == self.generation and self._ready

    @property
    def pid(self) -> int | None:
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def stop(self, wait: float = 10.0) -> None:
        with self._cond:
            self._stopping = True
            self._ready = False
            self._cond.notify_all()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(wait)
        self._kill(self._proc, gentle=True)
        for proc in self._dying:  # killed workers: make sure they are gone, not left as zombies
            self._kill(proc, gentle=False)

    # -- the supervisor thread
    def _supervise(self) -> None:
        """Start the worker, and start it again whenever it stops. It is never given up on once it
        has started: a worker that dies while serving was most likely crashed by a request, and
        a client must not be able to stop ``kg serve``. When it dies often (5 times within a
        minute) it is restarted after a pause of `_CRASH_PAUSE` seconds, not in a busy loop.
        Only a worker that cannot start at all (`_spawn` fails) stops the server."""
        crashes: deque[float] = deque(maxlen=5)
        try:
            while True:
                with self._cond:
                    if self._stopping:
                        return
                try:
                    proc, port = self._spawn()
                except KGError as e:
                    with self._cond:
                        self._failure = str(e)
                        self._cond.notify_all()
                    return
                with self._cond:
                    self._proc, self._port = proc, port
                    self.generation += 1
                    self._ready = not self._stopping
                    self._failure = None
                    self._cond.notify_all()
                    while not self._stopping and not self._restart and proc.poll() is None:
                        self._cond.wait(0.25)
                    asked, self._restart, self._ready = self._restart, False, False
                    self._cond.notify_all()
                if self._stopping:
                    return
                if asked:  # SIGKILL now; reaped in the background while the next one starts
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(proc.pid, signal.SIGKILL)
                    self._dying.append(proc)
                    threading.Thread(target=proc.wait, name="kg-serve-reaper", daemon=True).start()
                    continue
                self._kill(proc, gentle=False)
                crashes.append(time.monotonic())
                self.crashes += 1
                detail = " / ".join(list(self._stderr)[-3:]) or f"exit code {proc.returncode}"
                often = len(crashes) == crashes.maxlen and crashes[-1] - crashes[0] < 60
                pause = _CRASH_PAUSE if often else 0.2
                self.log(f"the SPARQL worker stopped unexpectedly ({detail[-500:]}); starting it again"
                         + (f" in {pause:g} s ({crashes.maxlen} times within a minute)" if often else ""))
                with self._cond:
                    self._cond.wait_for(lambda: self._stopping, pause)
        finally:
            with self._cond:
                self._ready = False
                self._cond.notify_all()
            self._kill(self._proc, gentle=True)

    def _spawn(self) -> tuple[subprocess.Popen, int]:
        last = ""
        for _ in range(5):
            port = free_port()
            cmd = [self.exe, "serve-read-only", "--location", str(self.location), "--bind", f"127.0.0.1:{port}"]
            try:
                proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        start_new_session=True, close_fds=True,
                                        preexec_fn=_child_setup(self.max_memory))
            except OSError as e:
                raise KGError(f"cannot run {self.exe} ({e.strerror or e})") from e
            self._stderr.clear()
            threading.Thread(target=self._drain, args=(proc, self.generation + 1), name="kg-serve-oxigraph-stderr",
                             daemon=True).start()
            deadline = time.monotonic() + _WORKER_START
            while time.monotonic() < deadline and proc.poll() is None and not self._stopping:
                if self._answers(port):
                    return proc, port
                time.sleep(0.02)
            self._kill(proc, gentle=False)
            last = " / ".join(self._stderr) or f"exit code {proc.returncode}"
            if self._stopping:
                raise KGError("stopped while starting")
            if "in use" not in last.lower():
                break
        raise KGError(last or "oxigraph did not answer")

    @staticmethod
    def _answers(port: int) -> bool:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        try:
            conn.request("GET", "/query?query=ASK%7B%7D", headers={"Accept": "application/sparql-results+json"})
            return conn.getresponse().status == 200
        except (OSError, http.client.HTTPException):
            return False
        finally:
            conn.close()

    def _drain(self, proc: subprocess.Popen, generation: int) -> None:
        """Keep the worker's last lines of stderr, and note when it ran out of memory."""
        assert proc.stderr is not None
        for raw in proc.stderr:
            line = raw.decode("utf-8", "replace").strip()
            if line and not line.startswith("Listening for requests"):
                self._stderr.append(line)
            if _OUT_OF_MEMORY.search(line):
                with self._cond:
                    self._out_of_memory.add(generation)
        proc.stderr.close()
        with self._cond:
            self._drained.add(generation)
            self._cond.notify_all()

    @staticmethod
    def _kill(proc: subprocess.Popen | None, *, gentle: bool) -> None:
        """Stop *proc* and its process group (SIGTERM then SIGKILL, or SIGKILL) and reap it."""
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGTERM if gentle else signal.SIGKILL)
        try:
            proc.wait(3 if gentle else 30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


class Pool:
    """Keep-alive connections to the current worker."""

    def __init__(self, worker: Worker) -> None:
        self.worker = worker
        self._idle: list[tuple[int, http.client.HTTPConnection]] = []
        self._lock = threading.Lock()

    def get(self, deadline: float) -> tuple[int, http.client.HTTPConnection, bool]:
        generation, port = self.worker.acquire(deadline)
        with self._lock:
            while self._idle:
                gen, conn = self._idle.pop()
                if gen == generation:
                    return gen, conn, True
                conn.close()
        return generation, http.client.HTTPConnection("127.0.0.1", port, timeout=max(0.05, deadline - time.monotonic())), False

    def put(self, generation: int, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if generation == self.worker.generation and len(self._idle) < 64:
                self._idle.append((generation, conn))
                return
        conn.close()

    def close(self) -> None:
        with self._lock:
            for _, conn in self._idle:
                conn.close()
            self._idle.clear()
