"""SIGTERM / SIGINT and the process's run: heard from the first moment, a signal during a
start that hangs cancels it and closes what was opened; every stop ends with a
``ftcost-bot stopped shutdown_s=...`` line."""

from __future__ import annotations

import asyncio
import logging
import re
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from bot.config import Config
from bot.config_load import load_config
from bot.runtime import PlatformStartError, Runtime, StartInterrupted


class Runner:
    """A platform runner whose ``start`` hangs (``hang=True``), fails or succeeds."""

    name = "dummy"

    def __init__(self, *, hang: bool = False, fail: str | None = None) -> None:
        self.hang, self.fail = hang, fail
        self.starting = asyncio.Event()
        self.events: list[str] = []

    def routes(self) -> list[web.RouteDef]:
        return []

    async def start(self) -> None:
        self.events.append("start")
        self.starting.set()
        if self.fail is not None:
            raise PlatformStartError(self.fail)
        if self.hang:
            try:
                await asyncio.Event().wait()  # a connection that never completes
            except asyncio.CancelledError:
                self.events.append("start cancelled")
                raise

    async def stop(self, timeout: float = 10.0) -> None:
        self.events.append("stop")

    async def health(self) -> dict[str, Any]:
        return {"ok": True}


def config(tmp_path: Path) -> Config:
    return load_config(None, {"FTCOST_STORE": str(tmp_path / "s.sqlite3")})


def stopped_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.getMessage().startswith("ftcost-bot stopped")]  # fmt: skip


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_a_signal_during_a_hanging_start_stops_the_runtime(tmp_path, caplog, sig):
    runner = Runner(hang=True)
    runtime = Runtime(config(tmp_path), runners=[runner])
    running = asyncio.create_task(runtime.run_until_stopped())
    await asyncio.wait_for(runner.starting.wait(), 5)

    began = time.monotonic()
    with caplog.at_level(logging.INFO, logger="ftcost.bot"):
        signal.raise_signal(sig)
        with pytest.raises(StartInterrupted) as err:
            await asyncio.wait_for(running, 5)

    assert time.monotonic() - began < 2
    assert err.value.signum == sig
    assert str(err.value).startswith(f"stopped by {sig.name} during start-up")
    assert runner.events == ["start", "start cancelled", "stop"]
    assert runtime.stopping and runtime.store._conn is None  # the store is closed
    messages = [r.getMessage() for r in caplog.records]
    assert f"ftcost-bot stopping during start-up signal={sig.name}" in messages
    assert len(stopped_lines(caplog)) == 1


async def test_a_stop_request_during_the_start_interrupts_it_too(tmp_path):
    runner = Runner(hang=True)
    runtime = Runtime(config(tmp_path), runners=[runner])
    stop = asyncio.Event()
    running = asyncio.create_task(runtime.run_until_stopped(stop))
    await asyncio.wait_for(runner.starting.wait(), 5)

    stop.set()
    with pytest.raises(StartInterrupted, match="stopped by a stop request during start-up"):
        await asyncio.wait_for(running, 5)

    assert runner.events[-1] == "stop"


async def test_a_failed_start_raises_its_own_error_not_an_interruption(tmp_path):
    runner = Runner(fail="the platform said no: fix X")
    runtime = Runtime(config(tmp_path), runners=[runner])

    with pytest.raises(PlatformStartError, match="the platform said no") as err:
        await asyncio.wait_for(runtime.run_until_stopped(), 5)

    assert not isinstance(err.value, StartInterrupted)
    assert runner.events == ["start", "stop"]


async def test_sigterm_after_the_start_stops_and_logs_how_long_the_stop_took(tmp_path, caplog):
    runner = Runner()
    runtime = Runtime(config(tmp_path), runners=[runner])
    with caplog.at_level(logging.INFO, logger="ftcost.bot"):
        running = asyncio.create_task(runtime.run_until_stopped())
        while not any("ftcost-bot started" in r.getMessage() for r in caplog.records):
            await asyncio.sleep(0.01)
        signal.raise_signal(signal.SIGTERM)
        await asyncio.wait_for(running, 5)

    messages = [r.getMessage() for r in caplog.records]
    stopping = messages.index("ftcost-bot stopping signal=SIGTERM")
    (stopped,) = stopped_lines(caplog)
    assert messages.index(stopped) > stopping
    assert re.fullmatch(r"ftcost-bot stopped shutdown_s=\d+\.\d\d", stopped)
    assert runner.events == ["start", "stop"]


async def test_every_stop_logs_the_stopped_line_last(tmp_path, caplog):
    runtime = Runtime(config(tmp_path), runners=[Runner()])
    await runtime.start()
    with caplog.at_level(logging.INFO):
        await runtime.stop()

    assert caplog.records[-1].getMessage().startswith("ftcost-bot stopped shutdown_s=")


class StubbornRunner(Runner):
    """A start that swallows the first cancellation (a library catching it) and hangs on."""

    async def start(self) -> None:
        self.starting.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.events.append("ignored a cancel")
        await asyncio.Event().wait()  # the second cancel (loop teardown) ends it


async def test_a_start_that_ignores_the_cancel_is_left_after_the_shutdown_bound(
    tmp_path, monkeypatch, caplog
):
    import bot.runtime as runtime_module

    monkeypatch.setattr(runtime_module, "SHUTDOWN_CLOSE_S", 0.1)
    monkeypatch.setattr(runtime_module, "SHUTDOWN_FINAL_S", 0.1)
    cfg = config(tmp_path).model_copy(update={"shutdown_timeout_s": 0.2})
    runner = StubbornRunner()
    running = asyncio.create_task(Runtime(cfg, runners=[runner]).run_until_stopped())
    await asyncio.wait_for(runner.starting.wait(), 5)

    began = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="ftcost.bot"):
        signal.raise_signal(signal.SIGTERM)
        with pytest.raises(StartInterrupted):
            await asyncio.wait_for(running, 5)

    assert 0.3 < time.monotonic() - began < 2
    assert runner.events == ["ignored a cancel"]
    assert any("start-up did not stop within 0.4 s" in r.getMessage() for r in caplog.records)
