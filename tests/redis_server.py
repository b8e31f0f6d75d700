"""A throwaway ``redis-server`` for tests: started from ``PATH`` on a free loopback port,
in a temporary directory, with persistence off (``--save ''``, ``--appendonly no``).

    with RedisServer() as server:          # skips nothing: raises if redis-server is missing
        url = server.url                   # redis://127.0.0.1:<port>/0
        server.stop(); server.start()      # a restart on the same port (recovery tests)
        server.pause(); server.resume()    # SIGSTOP/SIGCONT: a Redis that hangs (timeouts)

``redis_server_path()`` says whether one can be started at all. Any process may use the
same server (e.g. two bot processes sharing one store): pass them ``server.url``.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from contextlib import suppress
from pathlib import Path
from types import TracebackType

STARTUP_TIMEOUT_S = 10.0


def redis_server_path() -> str | None:
    """The ``redis-server`` executable on ``PATH``, or None."""
    return shutil.which("redis-server")


def free_port() -> int:
    """A TCP port nothing listens on right now (on 127.0.0.1)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def redis_answers(host: str, port: int, timeout_s: float = 0.5) -> bool:
    """True when something on ``host:port`` answers ``PING`` (with or without a password:
    a server with ``requirepass`` answers ``-NOAUTH``, which counts as up)."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as s:
            s.sendall(b"PING\r\n")
            reply = s.recv(64)
    except OSError:
        return False
    return reply.startswith((b"+PONG", b"-NOAUTH"))


class RedisServer:
    """One ``redis-server`` process on ``127.0.0.1:port`` (a free port by default).

    ``password`` sets ``requirepass`` (its URL then carries it); ``extra_args`` are passed
    to ``redis-server`` as given."""

    def __init__(
        self,
        port: int | None = None,
        *,
        password: str | None = None,
        extra_args: tuple[str, ...] = (),
        executable: str | None = None,
    ) -> None:
        exe = executable or redis_server_path()
        if exe is None:
            raise FileNotFoundError("redis-server is not on PATH (Debian: apt-get install "
                                    "redis-server)")  # fmt: skip
        self.executable = exe
        self.port = port or free_port()
        self.password = password
        self.extra_args = extra_args
        self._tmp = tempfile.TemporaryDirectory(prefix="ftcost-redis-")
        self.dir = Path(self._tmp.name)
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    @property
    def log(self) -> str:
        """The server's log so far (for failure messages)."""
        path = self.dir / "redis.log"
        return path.read_text(errors="replace") if path.exists() else ""

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> None:
        """Start the server (again, on the same port) and wait until it answers."""
        if self.running:
            return
        args = [
            self.executable, "--port", str(self.port), "--bind", "127.0.0.1",
            "--save", "", "--appendonly", "no", "--dir", str(self.dir),
            "--pidfile", str(self.dir / "redis.pid"), "--logfile", str(self.dir / "redis.log"),
            "--daemonize", "no",
        ]  # fmt: skip
        if self.password:
            args += ["--requirepass", self.password]
        args += list(self.extra_args)
        self._proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL)  # fmt: skip
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not redis_answers("127.0.0.1", self.port):
            if self._proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"redis-server on port {self.port} did not start:\n{self.log}")
            time.sleep(0.02)

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 5 s) and wait for it to exit."""
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        with suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGCONT)  # a paused server can't act on SIGTERM
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def pause(self) -> None:
        """Freeze the server (SIGSTOP): connections stay open, nothing answers."""
        if self._proc is not None:
            os.kill(self._proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        if self._proc is not None:
            os.kill(self._proc.pid, signal.SIGCONT)

    def close(self) -> None:
        self.stop()
        self._tmp.cleanup()

    def __enter__(self) -> RedisServer:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:  # fmt: skip
        self.close()


_SHIFT_TTL = """
local left = redis.call('PTTL', KEYS[1])
if left > 0 then
  left = left - tonumber(ARGV[1])
  if left <= 0 then redis.call('DEL', KEYS[1]) else redis.call('PEXPIRE', KEYS[1], left) end
end
return 0
"""


async def fast_forward(url: str, prefix: str, seconds: float) -> None:
    """Age every key under ``prefix`` by ``seconds``: each TTL shrinks by that much and a
    key whose TTL runs out is deleted, as if the server's clock had moved on. Tests pair it
    with moving the store's injected clock, so Redis-native expiry is tested without
    sleeping (Redis itself has no settable clock)."""
    from redis.asyncio import Redis

    client = Redis.from_url(url)
    try:
        shift = client.register_script(_SHIFT_TTL)
        async for key in client.scan_iter(match=_glob_escape(prefix) + "*", count=500):
            await shift(keys=[key], args=[round(seconds * 1000)])
    finally:
        await client.aclose()


def _glob_escape(text: str) -> str:
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)


def delete_prefix(url: str, prefix: str) -> None:
    """Delete every key under ``prefix`` (a test's clean-up on a shared server)."""
    import redis

    client = redis.Redis.from_url(url, socket_timeout=5)
    try:
        keys = list(client.scan_iter(match=_glob_escape(prefix) + "*", count=500))
        for i in range(0, len(keys), 500):
            client.delete(*keys[i : i + 500])
    finally:
        client.close()


def redis_url_answers(url: str, timeout_s: float = 2.0) -> str | None:
    """None when the Redis at ``url`` answers ``PING``; else why not."""
    import redis

    client = redis.Redis.from_url(url, socket_timeout=timeout_s,
                                  socket_connect_timeout=timeout_s)  # fmt: skip
    try:
        client.ping()
    except (redis.RedisError, OSError) as exc:
        return f"{type(exc).__name__}: {exc}"
    finally:
        client.close()
    return None
