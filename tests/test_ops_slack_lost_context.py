"""Slack replies under the bot's own estimate whose stored context is gone, through the real
bot (its aiohttp server, the real bolt app, the local Slack Web API stand-in, signed
requests) on a real SQLite store:

* missing: no row for the thread (Redis restarted without persistence, a lost volume);
* unreadable: a row written by another version (a request field this one does not know).

Both are answered as during a store outage: a whole question afresh, saying the thread's
estimate is no longer kept; a change ("what if 8k seq") gets that note and how to ask in
full. An unreadable one is also logged, naming the thread and never what it held. Chatter
under a bot message without an estimate (an announcement) stays unanswered.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from pathlib import Path

import pytest

from tests.fakes import FakeSlack, slash_command_body
from tests.slack_harness import Harness, in_thread, reply_in_thread

NOT_KEPT = "is no longer kept, so this is a fresh estimate"
ASK_IN_FULL = "Ask again with the whole query"
FOREIGN_FIELD = "schema_v99_field"
STORED_WORDS = "private-words-of-the-asker"


async def estimate(bot: Harness, slack: FakeSlack) -> str:
    """A slash command that posts an estimate; the estimate's ts (its thread)."""
    body = slash_command_body("8b lora 20M tokens", response_url=slack.response_url("C1"))
    status, _ = await bot.post(body)
    assert status == 200
    await bot.settle()
    return str(slack.calls_to("chat.postMessage", ok=True)[-1].response["ts"])


def recent_ts() -> str:
    """A thread started a minute ago: well within the store's ``thread_ttl_days``."""
    return f"{time.time() - 60:.6f}"


def overwrite_context(path: Path, thread_ts: str) -> None:
    """The thread's stored request as another version would write it, behind the store's
    back: a field this version does not know."""
    request = json.dumps({"model": STORED_WORDS, "method": "lora", FOREIGN_FIELD: 1})
    conn = sqlite3.connect(path)
    try:
        with conn:
            conn.execute("UPDATE threads SET request = ? WHERE thread = ?", (request, thread_ts))
    finally:
        conn.close()


# -- missing ----------------------------------------------------------------------------------
async def test_a_whole_question_under_an_estimate_with_no_stored_context_is_a_fresh_estimate(
    bot: Harness, slack: FakeSlack
) -> None:
    thread = recent_ts()

    await reply_in_thread(bot, "8b lora seq 8k", thread, "EvL1")

    [answer] = in_thread(slack, "chat.postMessage", thread)
    assert NOT_KEPT in answer


async def test_a_change_under_an_estimate_with_no_stored_context_says_how_to_ask_in_full(
    bot: Harness, slack: FakeSlack
) -> None:
    thread = recent_ts()

    await reply_in_thread(bot, "what if 8k seq", thread, "EvL2")

    [notice] = in_thread(slack, "chat.postEphemeral", thread)
    assert "estimate is no longer kept" in notice and ASK_IN_FULL in notice
    assert in_thread(slack, "chat.postMessage", thread) == []


async def test_chatter_under_a_bot_message_with_no_estimate_stays_unanswered(
    bot: Harness, slack: FakeSlack
) -> None:
    thread = recent_ts()  # an announcement, say

    await reply_in_thread(bot, "nice, thanks!", thread, "EvL3")

    assert in_thread(slack, "chat.postMessage", thread) == []
    assert in_thread(slack, "chat.postEphemeral", thread) == []


# -- unreadable ---------------------------------------------------------------------------------
async def test_a_change_under_an_unreadable_context_says_how_to_ask_in_full(
    bot: Harness, slack: FakeSlack, tmp_path: Path
) -> None:
    thread = await estimate(bot, slack)
    overwrite_context(tmp_path / "state.sqlite3", thread)

    await reply_in_thread(bot, "what if 8k seq", thread, "EvU1")

    [notice] = in_thread(slack, "chat.postEphemeral", thread)
    assert "estimate is no longer kept" in notice and ASK_IN_FULL in notice


async def test_a_whole_question_under_an_unreadable_context_is_a_fresh_estimate(
    bot: Harness, slack: FakeSlack, tmp_path: Path
) -> None:
    thread = await estimate(bot, slack)
    overwrite_context(tmp_path / "state.sqlite3", thread)

    await reply_in_thread(bot, "70b qlora 50M tokens h100", thread, "EvU2")

    [answer] = in_thread(slack, "chat.postMessage", thread)
    assert NOT_KEPT in answer


async def test_an_unreadable_context_is_warned_about_by_thread_never_by_contents(
    bot: Harness, slack: FakeSlack, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    thread = await estimate(bot, slack)
    overwrite_context(tmp_path / "state.sqlite3", thread)

    with caplog.at_level(logging.WARNING, logger="ftcost.store"):
        await reply_in_thread(bot, "what if 8k seq", thread, "EvU3")

    [warning] = [r for r in caplog.records if "no longer validates" in r.getMessage()]
    assert warning.levelno == logging.WARNING
    assert f"thread={thread}" in warning.getMessage()
    assert FOREIGN_FIELD in warning.getMessage()  # where it fails, not what it holds
    assert STORED_WORDS not in caplog.text
