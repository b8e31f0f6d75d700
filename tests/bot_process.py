"""Real ``python -m bot`` processes, for the replica tests and the load benchmark.

    bot = BotProcess("a", workdir, env={"SLACK_API_BASE_URL": ..., "STORE_URL": ...},
                     settings={"slack": {"host": "127.0.0.1"}})
    bot.start()
    await bot.wait_ready()            # polls /healthz; raises (with the log) if it exits
    bot.url                           # http://127.0.0.1:<port>
    bot.signal(signal.SIGTERM); await bot.wait_exit()
    bot.close()                       # always: SIGTERM, then SIGKILL after a grace period

The process listens on a port it picks itself (``PORT=0``); the port is read from its
start-up log line (``ftcost-bot started ... port=N``), so two test runs never race for a
"free" port. Its configuration is ``settings`` written as a YAML file (JSON is YAML) plus
``env``; the caller's ``SLACK_*``, ``DISCORD_*``, ``FTCOST_*``, ``STORE_URL``, ``PORT``
and ``HEALTH_PORT`` are not inherited. stdout and stderr go to ``<workdir>/<name>.log``.
On Linux the process is killed if the process that started it dies (``PR_SET_PDEATHSIG``),
so an interrupted test run leaves no bot behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).resolve().parents[1]
STARTED_RE = re.compile(r"ftcost-bot started .*\bport=(\d+)")
INHERIT_NOT = ("SLACK_", "DISCORD_", "FTCOST_")
INHERIT_NOT_EXACT = frozenset({"STORE_URL", "PORT", "HEALTH_PORT"})
CLOSE_GRACE_S = 10.0


def _die_with_parent() -> None:  # runs in the child between fork and exec
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def clean_environ(extra: Mapping[str, str]) -> dict[str, str]:
    """``os.environ`` without the bot's own variables, plus ``extra``."""
    env = {
        k: v for k, v in os.environ.items()
        if not k.startswith(INHERIT_NOT) and k not in INHERIT_NOT_EXACT
    }  # fmt: skip
    env.update(extra)
    env.setdefault("PORT", "0")
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


class BotProcess:
    """One ``python -m bot`` replica (Slack HTTP mode when ``env`` says so)."""

    def __init__(
        self, name: str, workdir: Path, *, env: Mapping[str, str], settings: dict[str, Any],
        python_args: Sequence[str] = (),
    ) -> None:  # fmt: skip
        self.name = name
        self.python_args = list(python_args)
        """Interpreter options before ``-m bot`` (e.g. ``-m cProfile -o FILE``)."""
        self.workdir = workdir
        self.env = clean_environ(env)
        self.settings = settings
        self.config_path = workdir / f"{name}.yml"
        self.log_path = workdir / f"{name}.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.port: int | None = None
        self._log: IO[bytes] | None = None
        self._session: aiohttp.ClientSession | None = None

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> None:
        self.config_path.write_text(json.dumps(self.settings), encoding="utf-8")
        self._log = open(self.log_path, "wb")  # noqa: SIM115 (closed in close())
        self.proc = subprocess.Popen(
            [sys.executable, *self.python_args, "-m", "bot", "--config", str(self.config_path)],
            cwd=ROOT, env=self.env, stdin=subprocess.DEVNULL, stdout=self._log,
            stderr=subprocess.STDOUT, preexec_fn=_die_with_parent,
        )  # fmt: skip

    @property
    def pid(self) -> int:
        assert self.proc is not None, "not started"
        return self.proc.pid

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def url(self) -> str:
        if self.port is None:
            raise RuntimeError(f"replica {self.name} is not ready")
        return f"http://127.0.0.1:{self.port}"

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def _problem(self, what: str) -> RuntimeError:
        tail = "\n".join(self.log_text().splitlines()[-40:])
        return RuntimeError(f"replica {self.name} {what}; its log ends:\n{tail}")

    async def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5))
        return self._session

    async def wait_ready(self, timeout: float = 30.0) -> None:
        """Until ``/healthz`` answers 200 (polled every 50 ms)."""
        deadline = time.monotonic() + timeout
        session = await self._client()
        while time.monotonic() < deadline:
            if not self.running:
                code = self.proc.returncode if self.proc is not None else None
                raise self._problem(f"exited with status {code} before it was ready")
            if self.port is None and (found := STARTED_RE.search(self.log_text())):
                self.port = int(found.group(1))
            if self.port is not None:
                with contextlib.suppress(aiohttp.ClientError, OSError, TimeoutError):
                    async with session.get(self.url + "/healthz") as resp:
                        if resp.status == 200:
                            return
            await asyncio.sleep(0.05)
        raise self._problem(f"was not healthy within {timeout:.0f} s")

    def signal(self, sig: int) -> None:
        if self.running:
            os.kill(self.pid, sig)

    async def wait_exit(self, timeout: float = 30.0) -> int:
        """The exit status (waits in a thread, so the event loop keeps serving)."""
        assert self.proc is not None, "not started"
        return await asyncio.to_thread(self.proc.wait, timeout)

    def close(self) -> None:
        """Stop the process if it still runs (SIGTERM, SIGKILL after a grace period)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(CLOSE_GRACE_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
        await asyncio.to_thread(self.close)

    # -- looking inside ------------------------------------------------------------------
    async def health(self) -> dict[str, Any]:
        session = await self._client()
        async with session.get(self.url + "/healthz") as resp:
            return dict(await resp.json())

    async def inflight(self) -> int:
        """Slack replies this replica is still preparing or posting."""
        return int((await self.health())["platforms"]["slack"]["inflight"])

    async def metric(self, name: str, **labels: str) -> float:
        """The sum of ``name``'s samples (from ``/metrics``) whose labels include ``labels``."""
        session = await self._client()
        async with session.get(self.url + "/metrics") as resp:
            text = await resp.text()
        total = 0.0
        for family in text_string_to_metric_families(text):
            for s in family.samples:
                if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                    total += s.value
        return total
