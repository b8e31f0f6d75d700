"""A Hub model through the real Slack app (HTTP mode, the fake Slack Web API): the slash
command names it, a thread reply changes it, and the Hub is asked once."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from catalog.hub.ref import HubRef
from tests.fakes import (
    FakeSlack,
    event_body,
    message_event,
    slash_command_body,
    validate_blocks,
)
from tests.fakes.hub_server import SUPPORT_REPO, FakeHub
from tests.slack_harness import Harness, running
from tests.test_chart_slack import click_chart
from tests.test_slack_http import all_text, bot_config, slash

REPO = SUPPORT_REPO


@pytest.fixture
def hub(support_hub: FakeHub) -> FakeHub:
    return support_hub


@pytest.fixture
async def bot(slack: FakeSlack, hub: FakeHub, tmp_path: Path) -> AsyncIterator[Harness]:
    async with running(bot_config(slack, tmp_path / "state.sqlite3", tmp_path)) as harness:
        yield harness


async def test_slash_command_and_thread_followup_on_a_hub_model(bot, slack, hub):
    ts = await slash(bot, slack, f"{REPO} lora 20M tokens")
    asked = len(hub.hits())

    await bot.post(event_body(
        message_event("what if 8k seq?", ts="1700000100.000001", thread_ts=ts), event_id="EvH1"
    ))
    await bot.settle()

    first, reply = slack.calls_to("chat.postMessage")
    assert REPO in first.args["blocks"][0]["text"]["text"]
    assert "read from the Hugging Face Hub (revision main, commit" in all_text(
        first.args["blocks"]
    )
    assert reply.args["thread_ts"] == ts
    assert "seq 2,048 → 8,192" in all_text(reply.args["blocks"])
    assert validate_blocks(first.args["blocks"]) == validate_blocks(reply.args["blocks"]) == []
    assert asked == 2 and len(hub.hits()) == asked


async def test_a_missing_hub_model_is_told_to_the_asker_only(bot, slack, hub):
    status, _ = await bot.post(
        slash_command_body("acme/nope lora", response_url=slack.response_url("C1"))
    )
    await bot.settle()

    (post,) = slack.responses
    assert status == 200 and post["response_type"] == "ephemeral"
    assert "No model acme/nope on the Hugging Face Hub" in all_text(post["blocks"])
    assert slack.calls_to("chat.postMessage") == []


async def test_chart_of_a_hub_model_the_hub_cannot_serve_now_is_explained_privately(
    bot, slack, hub
):
    ts = await slash(bot, slack, f"{REPO} lora 20M tokens")
    hub_resolver = bot.runtime.service.hub
    await bot.store.cache_put(hub_resolver.cache_key(HubRef.parse(REPO)), "", 0)
    hub.repos.clear()  # the Hub no longer serves it (and nothing is cached)

    await click_chart(bot, slack, ts, response_url=slack.response_url("C1"))

    (notice,) = slack.responses
    assert notice["response_type"] == "ephemeral"
    assert "I couldn't draw the chart" in all_text(notice["blocks"])
    assert f"No model {REPO} on the Hugging Face Hub" in all_text(notice["blocks"])
    assert slack.calls_to("files.completeUploadExternal") == []
