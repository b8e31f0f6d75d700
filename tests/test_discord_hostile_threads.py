"""Discord threads under pressure, through the real discord.py client against the fake
Discord: replies that race in one thread (a slash command, a message, a button click)
take turns; a store that is down or a thread older than the store keeps is said, not
hidden; a flood of messages over the rate limit is not answered by a flood of notices;
a bad option is refused in the user's own words."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import discord
import pytest

from bot.ratelimit import RateLimiter
from bot.store import ThreadKey
from bot.store_sqlite import SQLiteStore
from bot.thread_context import CONTEXT_UNAVAILABLE_NOTE
from tests.fakes.discord_server import FLAG_EPHEMERAL, FakeDiscord
from tests.test_discord_bot import (
    click,
    custom_ids,
    runner_thread,
    running,
    slash,
    stored,
    wait_until,
)
from tests.test_store_outage import SwitchableStore


@pytest.fixture
async def down_store(tmp_path: Path) -> AsyncIterator[SwitchableStore]:
    async with SwitchableStore(tmp_path / "switchable.sqlite3") as store:
        yield store


def _ours(fake: FakeDiscord, channel: int | None = None) -> list[dict[str, Any]]:
    return [m for m in fake.channel_messages(channel)
            if m["author"]["id"] == str(fake.bot_user_id)]


def _text(message: dict[str, Any]) -> str:
    return json.dumps(message.get("embeds") or [], ensure_ascii=False)


def _ephemeral(cb: dict[str, Any]) -> bool:
    return bool((cb["data"].get("flags") or 0) & FLAG_EPHEMERAL)


async def _estimate_with_thread(fake: FakeDiscord, query: str) -> int:
    """Post ``query``'s estimate in the channel and open its thread (as a user would);
    the thread's id (the estimate's)."""
    cb = await slash(fake, {"query": query})
    assert not _ephemeral(cb), cb["data"]
    return await runner_thread(fake, int(fake.channel_messages()[-1]["id"]))


# -- one reply of a thread at a time ---------------------------------------------------------
async def _held_reply(fake: FakeDiscord, thread: int, text: str) -> None:
    """Send ``text`` in the thread and hold its answer up (Discord asks to retry the post),
    its turn held meanwhile."""
    fake.rate_limit_next("POST", f"/channels/{thread}/messages", retry_after=0.6)
    await fake.dispatch("MESSAGE_CREATE", fake.message_create(text, thread))
    await fake.wait_for_call("POST", f"/channels/{thread}/messages", status=429)


async def _after_two_replies(fake: FakeDiscord, store: Any, thread: int) -> Any:
    """The thread's stored context once both replies are posted (and remembered)."""
    await wait_until(lambda: len(_ours(fake, thread)) == 2)
    await asyncio.sleep(0.2)
    return await store.get_thread(ThreadKey("discord", str(fake.channel_id), str(thread)))


def _assert_the_second_built_on_the_first(fake: FakeDiscord, thread: int, ctx: Any) -> None:
    """``what if full`` answered first, ``seq 8k`` second on its estimate: neither lost."""
    first, second = _ours(fake, thread)
    assert "method LoRA → Full" in _text(first)
    assert "Llama 3.1 8B · Full" in _text(second) and "seq 2,048 → 8,192" in _text(second)
    assert ctx is not None and ctx.request.method.value == "full"
    assert ctx.request.seq_len == 8192


async def test_a_slash_follow_up_waits_for_the_thread_message_before_it_and_builds_on_it(
    discord_fake: FakeDiscord, sqlite_store: Any
) -> None:
    fake = discord_fake
    async with running(fake, sqlite_store, message_content=True):
        thread = await _estimate_with_thread(fake, "8b lora 20M tokens")
        await _held_reply(fake, thread, "what if full")
        await slash(fake, {"query": "what if seq 8k"}, channel_id=thread)
        ctx = await _after_two_replies(fake, sqlite_store, thread)

    _assert_the_second_built_on_the_first(fake, thread, ctx)


async def test_a_button_click_holds_the_thread_so_a_message_builds_on_the_clicked_estimate(
    discord_fake: FakeDiscord, sqlite_store: Any
) -> None:
    fake = discord_fake
    async with running(fake, sqlite_store, message_content=True):
        cb = await slash(fake, {"query": "8b lora 20M tokens"})
        mid = int(fake.channel_messages()[-1]["id"])
        thread = await runner_thread(fake, mid)
        full = next(i for i in custom_ids(cb["data"]) if i.startswith("ftc:m:full"))
        fake.rate_limit_next("POST", f"/channels/{thread}/messages", retry_after=0.6)
        await click(fake, mid, full)
        await fake.wait_for_call("POST", f"/channels/{thread}/messages", status=429)
        await fake.dispatch("MESSAGE_CREATE", fake.message_create("what if seq 8k", thread))
        ctx = await _after_two_replies(fake, sqlite_store, thread)

    _assert_the_second_built_on_the_first(fake, thread, ctx)


async def test_a_mention_replying_to_an_estimate_waits_for_its_threads_turn(
    discord_fake: FakeDiscord, sqlite_store: Any
) -> None:
    fake = discord_fake
    async with running(fake, sqlite_store, message_content=True):
        thread = await _estimate_with_thread(fake, "8b lora 20M tokens")
        await _held_reply(fake, thread, "what if full")
        mention = f"<@{fake.bot_user_id}>"
        await fake.dispatch("MESSAGE_CREATE", fake.message_create(
            f"{mention} what if seq 8k", mentions=[fake.bot_user_id],
            message_reference=thread))
        await wait_until(lambda: len(_ours(fake, thread)) == 2)

    assert "Llama 3.1 8B · Full" in _text(_ours(fake, thread)[1])


# -- the thread's estimate can't be read -----------------------------------------------------
async def test_a_slash_follow_up_while_the_store_is_down_says_the_context_is_unavailable(
    discord_fake: FakeDiscord, down_store: SwitchableStore
) -> None:
    fake = discord_fake
    async with running(fake, down_store):
        thread = await _estimate_with_thread(fake, "70b qlora 50M tokens h100")
        down_store.down = True
        change = await slash(fake, {"query": "what if 8k seq"}, channel_id=thread)
        options_only = await slash(fake, {"seq": "8k"}, channel_id=thread)
        whole = await slash(fake, {"query": "8b"}, channel_id=thread)

    assert _ephemeral(change)
    assert change["data"]["embeds"][0]["title"] == "Context unavailable"
    assert "Which model" not in _text(change["data"])
    assert _ephemeral(options_only)  # not the help: the options said a change
    assert options_only["data"]["embeds"][0]["title"] == "Context unavailable"
    assert "seq 8k" in _text(options_only["data"])
    assert not _ephemeral(whole)  # a whole question: answered, saying it is fresh
    assert CONTEXT_UNAVAILABLE_NOTE in _text(whole["data"])


async def _old_bot_thread(fake: FakeDiscord) -> int:
    """A thread of the bot's, created in 2020: older than the store keeps any estimate."""
    old = discord.utils.time_snowflake(datetime(2020, 1, 1, tzinfo=UTC))
    fake.channels[old] = fake._thread_object(
        old, fake.channel_id, "an old estimate", owner_id=fake.bot_user_id
    )
    await fake.dispatch("THREAD_CREATE", {**fake.channels[old], "newly_created": False})
    return old


async def test_a_slash_follow_up_in_the_bots_thread_older_than_the_store_keeps_says_so(
    discord_fake: FakeDiscord, sqlite_store: Any
) -> None:
    fake = discord_fake
    async with running(fake, sqlite_store):
        old = await _old_bot_thread(fake)
        change = await slash(fake, {"query": "what if 8k seq"}, channel_id=old)
        whole = await slash(fake, {"query": "8b lora seq 8k"}, channel_id=old)

    assert _ephemeral(change)
    assert change["data"]["embeds"][0]["title"] == "Estimate no longer kept"
    assert not _ephemeral(whole)
    assert "is no longer kept, so this is a fresh estimate" in _text(whole["data"])


async def test_a_channel_command_beside_options_in_an_old_thread_is_refused_as_anywhere(
    discord_fake: FakeDiscord, sqlite_store: Any
) -> None:
    fake = discord_fake
    async with running(fake, sqlite_store):
        old = await _old_bot_thread(fake)
        cb = await slash(fake, {"query": "set framework", "framework": "unsloth"},
                         channel_id=old)
        settings = await sqlite_store.channel_settings("discord", str(fake.channel_id))

    assert _ephemeral(cb)
    assert "is a command of its own, not read beside the estimate options" in _text(cb["data"])
    assert not settings


async def test_a_mention_replying_to_an_estimate_while_the_store_is_down_says_so(
    discord_fake: FakeDiscord, down_store: SwitchableStore
) -> None:
    fake = discord_fake
    async with running(fake, down_store):
        await slash(fake, {"query": "70b qlora 50M tokens h100"})
        estimate = int(fake.channel_messages()[-1]["id"])
        down_store.down = True
        mention = f"<@{fake.bot_user_id}>"
        await fake.dispatch("MESSAGE_CREATE", fake.message_create(
            f"{mention} what if 8k seq", mentions=[fake.bot_user_id],
            message_reference=estimate))
        await wait_until(lambda: len(_ours(fake)) == 2)

    answer = _ours(fake)[-1]
    assert answer["embeds"][0]["title"] == "Context unavailable"
    assert "Which model" not in _text(answer)


# -- the rate limit's notices -----------------------------------------------------------------
WINDOW_MIDDLE = 1_800_000_030.0
"""Half a minute into a rate-limit window: the test's commands all fall in that window."""


async def test_only_the_first_refused_message_of_a_window_gets_a_public_notice(
    discord_fake: FakeDiscord, sqlite_store: Any, tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "ftcost.command")
    fake = discord_fake
    async with running(fake, sqlite_store) as runner, SQLiteStore(
        tmp_path / "limits.sqlite3", clock=lambda: WINDOW_MIDDLE
    ) as counts:
        runner.service.limiter = RateLimiter(counts, per_minute=1, clock=lambda: WINDOW_MIDDLE)
        mention = f"<@{fake.bot_user_id}>"
        for i in range(5):
            await fake.dispatch("MESSAGE_CREATE", fake.message_create(
                f"{mention} 8b lora {i + 1}M tokens", mentions=[fake.bot_user_id]))
        await wait_until(lambda: len(_ours(fake)) >= 2)
        await asyncio.sleep(0.5)
        messages = _ours(fake)
        # interactions, which Discord requires an answer to, are told every time
        refused = [await slash(fake, {"query": "8b qlora"}) for _ in range(3)]

    notices = [m for m in messages if "requests in the last minute" in _text(m)]
    assert len(messages) == 2 and len(notices) == 1
    logged = [r.getMessage() for r in caplog.records if "kind=limited" in r.getMessage()]
    assert sum("outcome=quiet" in line for line in logged) == 3  # logged, not posted
    assert all(_ephemeral(cb) for cb in refused)
    assert all("requests in the last minute" in _text(cb["data"]) for cb in refused)


# -- option errors in the user's words ---------------------------------------------------------
@pytest.mark.parametrize(
    ("options", "typed", "never", "how"),
    [
        ({"model": "8b", "tokens": "20M samples"}, '"20M samples"', '"tokens" needs',
         "Write the tokens option like 50M or 1.2B"),
        ({"model": "8b", "seq": "max"}, '"max"', '"seq" needs',
         "Write the seq option like 8k or 4096"),
        ({"model": "8b", "seq": "8k samples"}, '"8k samples"', '"samples" needs',
         "Write the seq option like 8k or 4096"),
        ({"model": "8b", "tokens": "5 epochs"}, '"5 epochs"', '"tokens" needs',
         "Write the tokens option like 50M or 1.2B"),
    ],
)
async def test_a_bad_option_is_refused_quoting_what_was_typed_and_how_to_write_it(
    discord_fake: FakeDiscord, sqlite_store: Any, options: dict[str, Any], typed: str,
    never: str, how: str,
) -> None:
    async with running(discord_fake, sqlite_store):
        cb = await slash(discord_fake, options)

    assert _ephemeral(cb)
    text = cb["data"]["embeds"][0]["description"]
    assert typed in text and how in text
    assert never not in text


# -- options beside a follow-up's words -------------------------------------------------------
async def test_options_that_change_nothing_are_named_in_the_nothing_changed_reply(
    discord_fake: FakeDiscord, sqlite_store: Any
) -> None:
    async with running(discord_fake, sqlite_store):
        thread = await _estimate_with_thread(discord_fake, "8b qlora 20M tokens")
        cb = await slash(discord_fake, {"method": "qlora"}, channel_id=thread)

    assert _ephemeral(cb)
    text = cb["data"]["embeds"][0]["description"]
    assert "Nothing changed" in text and '"method:qlora"' in text
    assert '""' not in text


@pytest.mark.parametrize("query", ["new", "new chart"])
async def test_new_beside_options_starts_the_question_the_options_state(
    discord_fake: FakeDiscord, sqlite_store: Any, query: str
) -> None:
    async with running(discord_fake, sqlite_store):
        thread = await _estimate_with_thread(discord_fake, "70b qlora 50M tokens h100")
        cb = await slash(discord_fake, {"query": query, "model": "8b"}, channel_id=thread)
        ctx = await stored(sqlite_store,
                           ThreadKey("discord", str(discord_fake.channel_id), str(thread)),
                           lambda c: c.request.model == "llama-3.1-8b")

    assert not _ephemeral(cb), cb["data"]
    embed = cb["data"]["embeds"][0]
    assert embed["title"].startswith("Llama 3.1 8B")
    assert "What if" not in embed["description"]  # a new question, not a change
    assert ctx.request.dataset_tokens is None  # nothing kept from the thread's estimate
