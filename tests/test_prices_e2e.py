"""Price announcements end to end through the real runtime: the Slack app in HTTP mode
against the Slack fake, prices from the SkyPilot-catalog fake."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
import pytest

from bot.config_load import load_config
from bot.runtime import Runtime
from catalog.price_sources import refresh_prices
from tests.fakes import FakeSlack, request_headers, slash_command_body
from tests.fakes.price_server import PriceServer
from tests.price_refresh import CLOUDS, LAMBDA_H100

SECRET = "test-signing-secret-0123456789"


@pytest.fixture
def prices(price_server: PriceServer) -> PriceServer:
    return price_server


def runtime_for(slack: FakeSlack, prices: PriceServer, tmp_path: Path) -> Runtime:
    yml = tmp_path / "bot.yml"
    yml.write_text(json.dumps({
        "slack": {"host": "127.0.0.1"},
        "prices": {"clouds": list(CLOUDS), "base_url": prices.base_url, "mirror_url": None,
                   "timeout_s": 5, "announce_interval_s": 0},
    }))  # fmt: skip
    config = load_config(yml, {
        "SLACK_BOT_TOKEN": "xoxb-1111-2222-test-bot-token", "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_BASE_URL": slack.base_url, "PORT": "0",
        "FTCOST_STORE": str(tmp_path / "state.sqlite3"),
    })  # fmt: skip
    return Runtime(config, price_fetch=refresh_prices)


@pytest.fixture
async def runtime(
    slack: FakeSlack, prices: PriceServer, tmp_path: Path
) -> AsyncIterator[Runtime]:
    rt = runtime_for(slack, prices, tmp_path)
    await rt.start()
    try:
        assert rt.price_startup is not None
        await asyncio.wait_for(rt.price_startup, 30)  # the baseline snapshot
        yield rt
    finally:
        await rt.stop()


async def command(runtime: Runtime, slack: FakeSlack, text: str, user: str = "U1") -> None:
    body = slash_command_body(text, user_id=user, channel_id="C1",
                              response_url=slack.response_url("C1"))  # fmt: skip
    url = f"http://127.0.0.1:{runtime.port}/slack/events"
    headers = request_headers(body, SECRET)
    async with (
        aiohttp.ClientSession() as session,
        session.post(url, data=body.encode(), headers=headers) as resp,
    ):
        assert resp.status == 200
    await runtime.runner("slack").bot.drain(10)  # type: ignore[attr-defined]


async def test_subscribe_then_a_changed_refresh_posts_one_announcement(
    runtime: Runtime, slack: FakeSlack, prices: PriceServer
) -> None:
    assert await runtime.store.latest_price_snapshot() is not None
    slack.set_admin("U1")
    await command(runtime, slack, "subscribe 5% h100")
    sub = await runtime.store.get_subscription("slack", "C1")
    assert sub is not None and sub.workspace.startswith("slack:") and sub.cards == ("h100-sxm",)
    assert not slack.messages_in("C1")  # the confirmation is ephemeral

    # snapshot ids have one-second resolution: keep this refresh's apart from the baseline
    await asyncio.sleep(1.1)
    prices.edit("lambda", LAMBDA_H100, LAMBDA_H100.replace(",24.0,", ",20.0,"))
    slot = datetime.now(UTC)
    outcome = await runtime.price_job.run(slot)
    assert outcome.status == "refreshed" and outcome.announcements is not None
    # the same slot again, and a resumed fan-out, post nothing more
    assert (await runtime.price_job.run(slot)).status == "done"
    await runtime.price_job.resume_announcements()

    assert len(slack.messages_in("C1")) == 1
    assert len(slack.calls_to("chat.postMessage", ok=True)) == 1
    assert outcome.snapshot is not None
    records = await runtime.store.list_announcements(outcome.snapshot.id)
    assert [(r.channel, r.state.value) for r in records] == [("C1", "sent")]


async def test_prices_and_a_denied_subscribe_answer_privately(
    runtime: Runtime, slack: FakeSlack
) -> None:
    await command(runtime, slack, "prices")
    await command(runtime, slack, "subscribe", user="U2")  # not an admin
    first, second = await slack.wait_for_responses(2)
    assert first["response_type"] == second["response_type"] == "ephemeral"
    assert first["blocks"][0]["type"] == "header"
    assert "admins" in second["text"]
    assert await runtime.store.get_subscription("slack", "C1") is None


async def test_estimates_carry_the_price_age_line(runtime: Runtime, slack: FakeSlack) -> None:
    await command(runtime, slack, "70b qlora 50M tokens h100")
    (message,) = slack.messages_in("C1")
    assert "Prices:" in json.dumps(message["blocks"])
