"""Discord messages in the bot's own recent thread whose stored estimate is gone (the store
lost it, or holds one this version can't read), through the real discord.py client
against the fake Discord: answered as during a store outage and as on Slack. A whole
question is a fresh estimate saying the thread's estimate is no longer kept; a change
("what if 8k seq") gets that note and how to ask in full; chatter stays unanswered."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import discord

from bot.store_sqlite import SQLiteStore
from tests.fakes.discord_server import FakeDiscord
from tests.test_discord_bot import bot_answers, running, slash, wait_until

NOT_KEPT = "is no longer kept, so this is a fresh estimate"
NOT_KEPT_TITLE = "Estimate no longer kept"


async def recent_bot_thread(fake: FakeDiscord) -> int:
    """A thread the bot opened on one of its estimates a moment ago, whose estimate the
    store does not have (a wiped volume, a Redis restart without persistence)."""
    thread = discord.utils.time_snowflake(datetime.now(UTC))
    fake.channels[thread] = fake._thread_object(
        thread, fake.channel_id, "an estimate · what-ifs", owner_id=fake.bot_user_id
    )
    await fake.dispatch("THREAD_CREATE", {**fake.channels[thread], "newly_created": False})
    return thread


def text_of(message: dict[str, Any]) -> str:
    return json.dumps(message.get("embeds") or [], ensure_ascii=False)


def stored_threads(path: Path) -> int:
    """Thread contexts the store holds (read behind its back)."""
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM threads").fetchone()[0])
    finally:
        conn.close()


def forget_every_thread(path: Path) -> None:
    """Lose every stored context behind the store's back, as a wiped volume would."""
    conn = sqlite3.connect(path)
    try:
        with conn:
            conn.execute("DELETE FROM threads")
    finally:
        conn.close()


async def test_a_whole_question_in_the_bots_thread_without_its_estimate_is_a_fresh_estimate(
    discord_fake: FakeDiscord, sqlite_store: SQLiteStore
) -> None:
    fake = discord_fake
    async with running(fake, sqlite_store, message_content=True):
        thread = await recent_bot_thread(fake)
        await fake.dispatch("MESSAGE_CREATE", fake.message_create("8b lora seq 8k", thread))
        [answer] = await bot_answers(fake, thread)

    assert NOT_KEPT in text_of(answer)


async def test_a_change_in_the_bots_thread_without_its_estimate_says_how_to_ask_in_full(
    discord_fake: FakeDiscord, sqlite_store: SQLiteStore
) -> None:
    fake = discord_fake
    async with running(fake, sqlite_store, message_content=True):
        thread = await recent_bot_thread(fake)
        await fake.dispatch("MESSAGE_CREATE", fake.message_create("what if 8k seq", thread))
        [answer] = await bot_answers(fake, thread)

    assert answer["embeds"][0]["title"] == NOT_KEPT_TITLE
    assert "Ask again with the whole query" in text_of(answer)


async def test_chatter_in_the_bots_thread_without_its_estimate_stays_unanswered(
    discord_fake: FakeDiscord, sqlite_store: SQLiteStore
) -> None:
    fake = discord_fake
    async with running(fake, sqlite_store, message_content=True):
        thread = await recent_bot_thread(fake)
        await fake.dispatch("MESSAGE_CREATE", fake.message_create("thanks, nice!", thread))
        await fake.dispatch("MESSAGE_CREATE", fake.message_create("8b lora seq 8k", thread))
        answers = await bot_answers(fake, thread)

    assert len(answers) == 1 and NOT_KEPT in text_of(answers[0])  # the question only


async def test_a_slash_follow_up_in_the_bots_thread_without_its_estimate_says_so(
    discord_fake: FakeDiscord, sqlite_store: SQLiteStore
) -> None:
    fake = discord_fake
    async with running(fake, sqlite_store):
        thread = await recent_bot_thread(fake)
        change = await slash(fake, {"query": "what if 8k seq"}, channel_id=thread)

    assert change["data"]["embeds"][0]["title"] == NOT_KEPT_TITLE


async def test_a_mention_replying_to_an_estimate_the_store_lost_says_so(
    discord_fake: FakeDiscord, sqlite_store: SQLiteStore, tmp_path: Path
) -> None:
    fake = discord_fake

    def ours() -> list[dict[str, Any]]:
        return [m for m in fake.channel_messages() if m["author"]["id"] == str(fake.bot_user_id)]

    async with running(fake, sqlite_store):
        await slash(fake, {"query": "70b qlora 50M tokens h100"})
        estimate = int(fake.channel_messages()[-1]["id"])
        # The context is stored after the estimate is posted: lose it only once it is there.
        await wait_until(lambda: stored_threads(tmp_path / "bot.sqlite3") > 0)
        forget_every_thread(tmp_path / "bot.sqlite3")
        await fake.dispatch("MESSAGE_CREATE", fake.message_create(
            f"<@{fake.bot_user_id}> what if 8k seq", mentions=[fake.bot_user_id],
            message_reference=estimate))
        await wait_until(lambda: len(ours()) == 2)

    answer = ours()[-1]
    assert answer["embeds"][0]["title"] == NOT_KEPT_TITLE
    assert "Which model" not in text_of(answer)
