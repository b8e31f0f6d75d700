"""A slash command the bot is not configured for (the app manifest says ``/cost``, the
config ``/ftcost``), through the real bot in HTTP mode (the real bolt app, signed
requests, the local Slack Web API stand-in): the asker is told what is wrong and how to
put it right, and the log gets one line naming both commands and the fix, not bolt's
multi-line "Unhandled request" suggestion. Other requests no listener takes keep bolt's
404 with one line."""

from __future__ import annotations

import json
import logging
import time

import pytest

from tests.fakes import FakeSlack, event_body, slash_command_body
from tests.slack_harness import Harness

WRONG_COMMAND_LINE = (
    "received /cost but slack.command is /ftcost: set slack.command or fix the app manifest"
)


async def other_command(bot: Harness, slack: FakeSlack) -> tuple[int, str]:
    """``/cost 8b lora`` sent to the bot configured for ``/ftcost``."""
    body = slash_command_body("8b lora", command="/cost", response_url=slack.response_url("C1"))
    status, text = await bot.post(body)
    await bot.settle()
    return status, text


async def test_a_command_the_config_does_not_name_tells_the_asker_what_to_fix(
    bot: Harness, slack: FakeSlack
) -> None:
    status, text = await other_command(bot, slack)

    answer = json.loads(text)
    assert status == 200 and answer["response_type"] == "ephemeral"
    assert "`/cost` reached ftcost, but this bot is set up to answer `/ftcost`" in answer["text"]
    assert "`slack.command: /cost`" in answer["text"]


async def test_a_command_the_config_does_not_name_is_logged_in_one_line(
    bot: Harness, slack: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO):
        await other_command(bot, slack)

    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert lines == [WRONG_COMMAND_LINE]
    assert "Unhandled request" not in caplog.text


async def test_a_command_the_config_does_not_name_is_not_estimated(
    bot: Harness, slack: FakeSlack
) -> None:
    await other_command(bot, slack)

    assert slack.calls_to("chat.postMessage") == [] and slack.responses == []


async def test_the_configured_command_is_still_answered(bot: Harness, slack: FakeSlack) -> None:
    status, _ = await bot.post(slash_command_body("8b lora 20M tokens",
                                                  response_url=slack.response_url("C1")))
    await bot.settle()

    assert status == 200 and len(slack.calls_to("chat.postMessage", ok=True)) == 1


async def test_an_event_no_listener_takes_gets_a_404_and_one_line(
    bot: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    event = {"type": "reaction_added", "user": "U1", "reaction": "thumbsup",
             "item": {"type": "message", "channel": "C1", "ts": "1700000000.000100"},
             "event_ts": f"{time.time():.6f}"}

    with caplog.at_level(logging.INFO):
        status, _ = await bot.post(event_body(event, event_id="EvR1"))

    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert status == 404
    assert lines == ["unhandled Slack request event_callback event=reaction_added: "
                     "no listener for it"]
