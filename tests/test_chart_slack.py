"""The chart on Slack, end to end: the real bolt app over HTTP, the real slack_sdk
``files_upload_v2`` (files.getUploadURLExternal, the upload POST,
files.completeUploadExternal) against the fake Web API."""
# ruff: noqa: F401  (fixtures imported from test_slack_http are test parameters)

from __future__ import annotations

import struct
from typing import Any

from adapters.slack.blocks import ACTION_CHART, ACTIONS_BLOCK_ID
from tests.fakes import FakeSlack, block_action_body, event_body, message_event
from tests.slack_harness import Harness
from tests.test_slack_http import (  # the HTTP-mode bot and its fixtures, as they are
    QUERY,
    slash,
    start_bot,
)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def chart_button(slack: FakeSlack, channel: str, ts: str) -> dict[str, Any]:
    blocks = slack.messages[(channel, ts)]["blocks"]
    actions = next(b for b in blocks if b.get("block_id") == ACTIONS_BLOCK_ID)
    return next(e for e in actions["elements"] if e["action_id"] == ACTION_CHART)


async def click_chart(bot: Harness, slack: FakeSlack, ts: str, thread_ts: str | None = None,
                      **kw: Any) -> None:
    button = chart_button(slack, "C1", ts)
    await bot.post(block_action_body(
        ACTION_CHART, button["value"], message_ts=ts, thread_ts=thread_ts,
        message_blocks=slack.messages[("C1", ts)]["blocks"], **kw))
    await bot.settle()


async def test_estimates_carry_a_show_chart_button(bot, slack):
    ts = await slash(bot, slack)

    button = chart_button(slack, "C1", ts)

    assert button["text"]["text"] == "Show chart" and button["value"]


async def test_show_chart_uploads_the_png_into_the_estimates_thread(bot, slack):
    ts = await slash(bot, slack)

    await click_chart(bot, slack, ts)

    (shared,) = await slack.wait_for_files()
    assert (shared.channel, shared.thread_ts) == ("C1", ts)
    assert shared.filename == "chart.png" and shared.data.startswith(PNG_SIGNATURE)
    assert struct.unpack(">II", shared.data[16:24]) == (1600, 900)
    assert shared.title.startswith("Llama 3.1 70B") and "Full" in shared.alt_txt
    steps = [c.method for c in slack.calls if c.method.startswith("files.")]
    assert steps == ["files.getUploadURLExternal", "files.completeUploadExternal"]
    assert len(slack.calls_to("chat.postMessage")) == 1  # the chart only, no new estimate
    assert slack.violations == []


async def test_show_chart_on_a_threaded_estimate_goes_to_the_same_thread(bot, slack):
    ts = await slash(bot, slack)
    await bot.post(event_body(message_event("what if 8k seq", ts="1700000100.000001",
                                            thread_ts=ts), event_id="EvChartT"))
    await bot.settle()
    reply_ts = slack.calls_to("chat.postMessage", ok=True)[-1].response["ts"]

    await click_chart(bot, slack, reply_ts, thread_ts=ts)

    (shared,) = await slack.wait_for_files()
    assert shared.thread_ts == ts  # the parent, never the reply's ts
    assert slack.violations == []


async def test_the_chart_word_posts_the_estimate_then_its_chart_in_its_thread(bot, slack):
    ts = await slash(bot, slack, text=QUERY + " chart")

    (shared,) = await slack.wait_for_files()
    (estimate,) = slack.calls_to("chat.postMessage")
    assert estimate.args["blocks"][0]["text"]["text"] == "Llama 3.1 70B · QLoRA"
    assert (shared.channel, shared.thread_ts) == ("C1", ts)


async def test_chart_alone_in_a_thread_uploads_only_the_chart(bot, slack):
    ts = await slash(bot, slack)

    await bot.post(event_body(message_event("chart", ts="1700000100.000002", thread_ts=ts),
                              event_id="EvChartOnly"))
    await bot.settle()

    (shared,) = await slack.wait_for_files()
    assert shared.thread_ts == ts
    assert len(slack.calls_to("chat.postMessage")) == 1


async def test_without_files_write_the_clicker_is_told_what_to_fix(bot, slack):
    ts = await slash(bot, slack)
    slack.scopes = {"commands", "chat:write"}

    await click_chart(bot, slack, ts, response_url=slack.response_url("C1"))

    (post,) = slack.responses
    assert post["response_type"] == "ephemeral"
    assert "couldn't attach the chart" in post["text"] and "files:write" in post["text"]
    assert slack.files == []
