"""Slack threads under pressure, through the real bot (its aiohttp server, the real bolt
app behind it, the local Slack Web API stand-in and signed requests):

* a click that changes a thread's estimate takes the thread's turn, as a typed reply does,
  so a reply typed while the click is being answered builds on the click's estimate and
  neither change is lost from the thread's context;
* over the rate limit, a person is told once a window: later refused mentions and thread
  replies get nothing, while a slash command or a click is answered every time;
* a thread reply that mentions a user group or the whole channel (``<!subteam^…>``,
  ``<!channel>``, ``<!here>``, ``<!everyone>``) is for those people, not the bot: ignored.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable
from typing import Any

import pytest

from adapters.slack.blocks import ACTION_METHOD, ACTION_SEQ, ACTIONS_BLOCK_ID
from bot.ratelimit import RateLimiter
from bot.store import ThreadKey
from engine import Method
from tests.fakes import (
    FakeSlack,
    app_mention_event,
    block_action_body,
    event_body,
    message_event,
    slash_command_body,
)
from tests.fakes.slack_signing import BOT_USER_ID
from tests.slack_harness import Harness

QUERY = "8b lora 20M tokens"


async def slash(bot: Harness, slack: FakeSlack, text: str = QUERY) -> str:
    """A slash command that posts an estimate; the estimate's ts."""
    status, _ = await bot.post(slash_command_body(text, response_url=slack.response_url("C1")))
    assert status == 200
    await bot.settle()
    return slack.calls_to("chat.postMessage", ok=True)[-1].response["ts"]


def button(slack: FakeSlack, ts: str, action_id: str) -> dict[str, Any]:
    blocks = slack.messages[("C1", ts)]["blocks"]
    actions = next(b for b in blocks if b.get("block_id") == ACTIONS_BLOCK_ID)
    return next(e for e in actions["elements"] if e["action_id"] == action_id)


def click(slack: FakeSlack, ts: str, action_id: str) -> str:
    return block_action_body(
        action_id, button(slack, ts, action_id)["value"], message_ts=ts,
        message_blocks=slack.messages[("C1", ts)]["blocks"],
        response_url=slack.response_url("C1"),
    )


def thread_reply(text: str, thread_ts: str, n: int, user: str = "U1") -> str:
    event = message_event(text, ts=f"{time.time():.6f}", thread_ts=thread_ts, user=user)
    event["parent_user_id"] = BOT_USER_ID
    return event_body(event, event_id=f"EvH{n}")


def mention(text: str, n: int, user: str = "U1") -> str:
    event = app_mention_event(f"<@{BOT_USER_ID}> {text}", ts=f"{time.time():.6f}", user=user)
    return event_body(event, event_id=f"EvM{n}")


async def wait_until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


def estimates(slack: FakeSlack) -> list[str]:
    """Every estimate posted, as its fallback text, in order."""
    return [c.args.get("text", "") for c in slack.calls_to("chat.postMessage", ok=True)]


# -- 1. a click takes the thread's turn --------------------------------------------------------
async def test_a_reply_typed_while_a_click_is_answered_builds_on_the_clicks_estimate(
    bot: Harness, slack: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    ts = await slash(bot, slack)  # LoRA, seq 2,048
    service = bot.runtime.service

    # Hold the click in the middle of its answer (the 2x seq words are `seq 4096`) ...
    clicked, release = asyncio.Event(), asyncio.Event()
    answer = service.answer_async

    async def held_answer(text: str, *args: Any, **kwargs: Any) -> Any:
        if text.startswith("seq "):
            clicked.set()
            await release.wait()
        return await answer(text, *args, **kwargs)

    monkeypatch.setattr(service, "answer_async", held_answer)

    # ... and see whether the typed reply then queues for the thread behind the click, or
    # (when the click holds no turn) is answered past it meanwhile.
    asked = 0
    turn = service.thread_turn

    def watched_turn(key: ThreadKey) -> contextlib.AbstractAsyncContextManager[None]:
        nonlocal asked
        asked += 1
        return turn(key)

    monkeypatch.setattr(service, "thread_turn", watched_turn)

    await bot.post(click(slack, ts, ACTION_SEQ))
    await asyncio.wait_for(clicked.wait(), 10)
    await bot.post(thread_reply("what if full", ts, 1))
    await wait_until(lambda: asked == 2 or len(estimates(slack)) == 2)
    release.set()
    await bot.settle()

    _, by_click, by_reply = estimates(slack)
    assert "seq 2,048 → 4,096" in by_click
    assert "method LoRA → Full" in by_reply
    context = await bot.store.get_thread(ThreadKey("slack", "C1", ts))
    assert (context.request.method, context.request.seq_len) == (Method.FULL, 4096)
    assert context.message_id == slack.calls_to("chat.postMessage", ok=True)[-1].response["ts"]


async def test_clicks_in_one_thread_are_answered_one_at_a_time(
    bot: Harness, slack: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    ts = await slash(bot, slack)
    service = bot.runtime.service
    inside, most = 0, 0
    answer = service.answer_async

    async def counted_answer(*args: Any, **kwargs: Any) -> Any:
        nonlocal inside, most
        inside += 1
        most = max(most, inside)
        try:
            await asyncio.sleep(0.05)
            return await answer(*args, **kwargs)
        finally:
            inside -= 1

    monkeypatch.setattr(service, "answer_async", counted_answer)
    await asyncio.gather(
        bot.post(click(slack, ts, ACTION_SEQ)),
        bot.post(click(slack, ts, ACTION_METHOD + "full")),
        bot.post(click(slack, ts, ACTION_METHOD + "qlora")),
    )
    await bot.settle()

    assert most == 1
    assert len(estimates(slack)) == 4


# -- 2. over the rate limit: told once a window ------------------------------------------------
def limit_to_one(bot: Harness) -> None:
    """One command a minute, in one window that never ends during the test."""
    now = time.time()
    bot.runtime.service.limiter = RateLimiter(bot.store, per_minute=1, clock=lambda: now)


def limited_lines(caplog: pytest.LogCaptureFixture, trigger: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "ftcost.command"
            and f"trigger={trigger} " in r.getMessage() and "kind=limited" in r.getMessage()]


async def test_mentions_refused_after_the_first_notice_of_the_window_get_nothing(
    bot: Harness, slack: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "ftcost.command")
    limit_to_one(bot)
    await slash(bot, slack)  # the window's one command
    for n in range(3):
        await bot.post(mention(QUERY, n))
        await bot.settle()

    (notice,) = slack.calls_to("chat.postEphemeral")
    assert "One moment" in notice.args["text"]
    assert len(slack.calls_to("chat.postMessage")) == 1  # the slash command's estimate
    lines = limited_lines(caplog, "mention")
    assert len(lines) == 3  # each refusal is still logged as limited
    assert sum("outcome=ephemeral" in line for line in lines) == 1
    assert sum("outcome=quiet" in line for line in lines) == 2


async def test_thread_replies_refused_after_the_first_notice_of_the_window_get_nothing(
    bot: Harness, slack: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "ftcost.command")
    limit_to_one(bot)
    ts = await slash(bot, slack)
    for n, text in enumerate(("what if 8k seq", "what if full", "on 2x h100")):
        await bot.post(thread_reply(text, ts, n))
        await bot.settle()

    (notice,) = slack.calls_to("chat.postEphemeral")
    assert notice.args["thread_ts"] == ts and "One moment" in notice.args["text"]
    assert len(slack.calls_to("chat.postMessage")) == 1
    assert len(limited_lines(caplog, "followup")) == 3


async def test_slash_commands_and_clicks_are_told_every_time_they_are_limited(
    bot: Harness, slack: FakeSlack
) -> None:
    limit_to_one(bot)
    ts = await slash(bot, slack)
    await bot.post(mention(QUERY, 1))  # the window's first refusal: told
    await bot.post(mention(QUERY, 2))  # quiet
    await bot.settle()
    for _ in range(2):
        await bot.post(slash_command_body(QUERY, response_url=slack.response_url("C1")))
        await bot.post(click(slack, ts, ACTION_SEQ))
    await bot.settle()

    told = [r for r in slack.responses if r.get("response_type") == "ephemeral"]
    assert len(told) == 4 and all("One moment" in r.get("text", "") for r in told)
    assert len(slack.calls_to("chat.postEphemeral")) == 1
    assert len(slack.calls_to("chat.postMessage")) == 1


# -- 3. group and broadcast mentions are for other people -----------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "<!subteam^S1|@gpu-team> 8b",
        "<!subteam^S1> 8b",
        "<!channel> 8b",
        "<!here> 8b",
        "<!here|here> 8b",
        "<!everyone> can someone check 8b",
    ],
)
async def test_a_thread_reply_mentioning_a_group_or_everyone_is_ignored(
    bot: Harness, slack: FakeSlack, text: str
) -> None:
    ts = await slash(bot, slack)
    await bot.post(thread_reply(text, ts, 1))
    await bot.settle()

    assert slack.calls_to("chat.postEphemeral") == []
    assert len(slack.calls_to("chat.postMessage")) == 1


async def test_a_date_in_a_thread_reply_reads_as_its_fallback_text(
    bot: Harness, slack: FakeSlack
) -> None:
    ts = await slash(bot, slack)
    await bot.post(thread_reply("what if 8k seq by <!date^1392734382^{date}|Feb 18>", ts, 1))
    await bot.settle()

    (error,) = slack.calls_to("chat.postEphemeral")
    shown = json.dumps(error.args["blocks"])
    assert "Feb 18" in shown and "@Feb" not in shown


async def test_a_mention_inside_an_estimates_thread_takes_the_threads_turn(
    bot: Harness, slack: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its answer is posted in the thread and becomes the thread's context, so it waits
    for a reply or click being answered there, as they wait for each other."""
    ts = await slash(bot, slack)
    service = bot.runtime.service
    turns: list[ThreadKey] = []
    turn = service.thread_turn

    def watched_turn(key: ThreadKey) -> contextlib.AbstractAsyncContextManager[None]:
        turns.append(key)
        return turn(key)

    monkeypatch.setattr(service, "thread_turn", watched_turn)
    event = app_mention_event(f"<@{BOT_USER_ID}> 70b qlora", ts=f"{time.time():.6f}")
    event["thread_ts"] = ts
    await bot.post(event_body(event, event_id="EvMT1"))
    await bot.settle()

    assert turns == [ThreadKey("slack", "C1", ts)]
    assert len(estimates(slack)) == 2
