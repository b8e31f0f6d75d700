"""The bot's Slack app in HTTP mode, as the Slack tests drive it: the real bot (its aiohttp
server on 127.0.0.1, the real bolt app behind it) pointed at the local Slack Web API
stand-in (``FakeSlack``), and a client that posts properly signed requests to it."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp

from bot.config import Config
from bot.runtime import Runtime
from tests.fakes import FakeSlack, event_body, message_event, request_headers
from tests.fakes.slack_signing import BOT_USER_ID

SECRET = "test-signing-secret-0123456789"
BOT_TOKEN = "xoxb-1111-2222-test-bot-token"


def http_bot_config(slack: FakeSlack, tmp_path: Path) -> Config:
    """An HTTP-mode bot against ``slack`` on a SQLite store in ``tmp_path``, prices off."""
    from bot.config_load import load_config

    yml = tmp_path / "bot.yml"
    yml.write_text(json.dumps({"slack": {"host": "127.0.0.1"}, "prices": {"enabled": False}}))
    return load_config(yml, bot_env(slack, tmp_path / "state.sqlite3"))


def bot_env(slack: FakeSlack, store: Path) -> dict[str, str]:
    """The environment the bot is started with: the test's token and signing secret, the
    fake Web API, any free port and the state store at ``store``."""
    return {
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_BASE_URL": slack.base_url,
        "PORT": "0",
        "FTCOST_STORE": str(store),
    }


class Harness:
    def __init__(self, runtime: Runtime, session: aiohttp.ClientSession) -> None:
        self.runtime = runtime
        self.session = session
        self.url = f"http://127.0.0.1:{runtime.port}/slack/events"

    @classmethod
    async def start(cls, config: Config) -> Harness:
        """The bot started on ``config``, with a client session to post to it."""
        runtime = Runtime(config)
        await runtime.start()
        return cls(runtime, aiohttp.ClientSession())

    async def stop(self) -> None:
        await self.session.close()
        await self.runtime.stop()

    @property
    def bot(self):
        return self.runtime.runner("slack").bot

    @property
    def store(self):
        return self.runtime.store

    async def post(
        self,
        body: str,
        *,
        secret: str = SECRET,
        timestamp: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, str]:
        all_headers = {**request_headers(body, secret, timestamp), **(headers or {})}
        async with self.session.post(self.url, data=body.encode(), headers=all_headers) as resp:
            return resp.status, await resp.text()

    async def settle(self) -> None:
        """Wait until every reply the bot started has been delivered."""
        await self.bot.drain(10)


StartBot = Callable[..., Awaitable[Harness]]


@asynccontextmanager
async def running(config: Config) -> AsyncIterator[Harness]:
    """The bot started on ``config``, stopped on leaving."""
    harness = await Harness.start(config)
    try:
        yield harness
    finally:
        await harness.stop()


@asynccontextmanager
async def starting(config_for: Callable[..., Config]) -> AsyncIterator[StartBot]:
    """``await start(...)`` starts a bot on ``config_for(...)``; every bot started is
    stopped on leaving, in the order they were started."""
    started: list[Harness] = []

    async def start(*args: Any, **kwargs: Any) -> Harness:
        harness = await Harness.start(config_for(*args, **kwargs))
        started.append(harness)
        return harness

    try:
        yield start
    finally:
        for harness in started:
            await harness.stop()


async def reply_in_thread(bot: Harness, text: str, thread_ts: str, event_id: str) -> None:
    """A person's reply in the thread under the bot's own message (an estimate, an
    announcement), delivered and answered."""
    event = message_event(text, ts=f"{time.time():.6f}", thread_ts=thread_ts)
    event["parent_user_id"] = BOT_USER_ID
    status, _ = await bot.post(event_body(event, event_id=event_id))
    assert status == 200
    await bot.settle()


def in_thread(slack: FakeSlack, method: str, thread_ts: str) -> list[str]:
    """The blocks (as text) of every ``method`` call in the thread."""
    return [json.dumps(c.args.get("blocks"), ensure_ascii=False)
            for c in slack.calls_to(method) if c.args.get("thread_ts") == thread_ts]
