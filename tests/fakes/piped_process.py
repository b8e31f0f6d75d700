"""A helper process spoken to over a pipe, for benchmarks that keep a fake server off
the load generator's core.

The target runs as ``target(conn, *args)`` in a fresh (``spawn``) interpreter, sends one
hello message when it is ready (its address, say), then answers one message per command
until it reads ``"stop"`` or the pipe closes.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, Self


class PipedProcess:
    """Start ``target`` on enter, stop it on exit; :meth:`ask` sends a command and
    returns the answer (thread-safe)."""

    def __init__(
        self, target: Callable[..., None], *args: object, start_timeout_s: float = 60.0
    ) -> None:
        ctx = multiprocessing.get_context("spawn")
        self._conn: Connection
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=target, args=(child, *args), daemon=True)
        self._lock = threading.Lock()
        self._start_timeout_s = start_timeout_s
        self.hello: Any = None
        """What the process sent when it was ready."""

    def __enter__(self) -> Self:
        self._proc.start()
        if not self._conn.poll(self._start_timeout_s):
            raise RuntimeError(f"the helper process {self._proc.name} did not start")
        self.hello = self._conn.recv()
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(OSError):
            self._conn.send("stop")
        self._proc.join(10)
        if self._proc.is_alive():
            self._proc.kill()

    def ask(self, command: str) -> Any:
        with self._lock:
            self._conn.send(command)
            return self._conn.recv()
