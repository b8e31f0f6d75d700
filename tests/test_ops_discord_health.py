"""Discord's part of ``/healthz``: healthy only while the gateway is connected.

discord.py keeps ``is_ready()`` true through a disconnect and its reconnect attempts, and
its latency is ``inf`` until a heartbeat is answered on the new connection: the runner's
health must say unhealthy (``/healthz`` 503, as Slack's Socket Mode check does while its
socket is down) and write the latency as JSON ``null``. The real discord.py client runs
against the fake Discord (``tests/fakes/discord_server.py``); the gateway goes down by
closing the fake, or by the fake dropping its sockets.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp

from adapters.discord.client import ClientSettings
from adapters.discord.runner import DiscordRunner
from bot.config_load import load_config
from bot.runtime import Runtime
from bot.service import Service
from tests.fakes.discord_server import FakeDiscord

DOWN_WITHIN_S = 10.0
"""How long discord.py may take to notice the closed gateway."""


@contextlib.asynccontextmanager
async def running(fake: FakeDiscord, **settings: Any) -> AsyncIterator[DiscordRunner]:
    """The product's runner, logged in and READY against ``fake``."""
    conf = ClientSettings(api_base_url=fake.base_url, **settings)
    runner = DiscordRunner(None, Service(workers=0), settings=conf, token="fake-token",
                           guild_ready_timeout=0.05)  # fmt: skip
    await runner.start(ready_timeout=5)
    try:
        yield runner
    finally:
        await runner.stop(timeout=2)


async def health_when(
    runner: DiscordRunner, wanted: Callable[[dict[str, Any]], bool],
    timeout: float = DOWN_WITHIN_S,
) -> dict[str, Any]:
    """The runner's health once ``wanted`` holds for it (AssertionError after ``timeout``)."""
    deadline = time.monotonic() + timeout
    while True:
        health = await runner.health()
        if wanted(health):
            return health
        if time.monotonic() > deadline:
            raise AssertionError(f"health never became as wanted: {health}")
        await asyncio.sleep(0.05)


def is_down(health: dict[str, Any]) -> bool:
    return health["ok"] is False


def strict_json(text: str) -> Any:
    """``text`` parsed as RFC 8259 JSON: ``Infinity`` and ``NaN`` refused."""

    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


async def test_a_connected_gateway_is_healthy(discord_fake: FakeDiscord) -> None:
    async with running(discord_fake) as runner:
        health = await runner.health()

    assert (health["ok"], health["ready"], health["connected"]) == (True, True, True)


async def test_a_closed_gateway_is_unhealthy_although_discord_py_is_still_ready(
    discord_fake: FakeDiscord,
) -> None:
    async with running(discord_fake) as runner:
        await discord_fake.close()
        health = await health_when(runner, is_down)

    assert (health["ok"], health["connected"]) == (False, False)
    assert health["ready"] is True  # discord.py's own flag, which misled the old check


async def test_healthz_answers_503_with_strict_json_while_the_gateway_is_down(
    discord_fake: FakeDiscord, tmp_path: Path
) -> None:
    config = load_config(None, {
        "DISCORD_TOKEN": "fake-token", "DISCORD_API_BASE_URL": discord_fake.base_url,
        "HEALTH_PORT": "0", "STORE_URL": str(tmp_path / "bot.sqlite3"),
    })  # fmt: skip
    async with Runtime(config) as runtime, aiohttp.ClientSession() as session:
        url = f"http://127.0.0.1:{runtime.health_port}/healthz"
        runner = runtime.runner("discord")
        await discord_fake.close()
        await health_when(runner, is_down)
        async with session.get(url) as resp:
            status, text = resp.status, await resp.text()

    assert status == 503
    assert strict_json(text)["platforms"]["discord"]["latency_ms"] is None
    assert "Infinity" not in text


async def test_the_gateway_is_healthy_again_once_discord_py_has_reconnected(
    discord_fake: FakeDiscord,
) -> None:
    async with running(discord_fake) as runner:
        resumes = len(discord_fake.resumes)
        await discord_fake.drop_connections()
        await health_when(runner, lambda _: len(discord_fake.resumes) > resumes)
        health = await health_when(runner, lambda h: h["ok"] is True)

    assert health["connected"] is True


async def test_a_sharded_client_is_unhealthy_while_its_shards_are_disconnected(
    discord_fake: FakeDiscord,
) -> None:
    async with running(discord_fake, shard_count="auto") as runner:
        assert (await runner.health())["ok"] is True
        await discord_fake.close()
        health = await health_when(runner, is_down)

    assert health["connected"] is False
