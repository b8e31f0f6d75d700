"""Discord threads the bot did not open stay the users' own while the store is down: an
outage makes the bot answer in its own threads (a question afresh, a change with how to
ask in full), never in a thread a person opened. Through the real discord.py client
against the local Discord stand-in, on a store that can be switched off."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import discord
import pytest

from tests.test_discord_bot import running
from tests.test_store_outage import SwitchableStore

SOMEONE = 424242
"""A user who opens a thread of their own."""


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SwitchableStore]:
    async with SwitchableStore(tmp_path / "s.sqlite3") as switchable:
        yield switchable


async def test_a_users_own_thread_gets_no_answer_while_the_store_is_down(
    discord_fake, store
) -> None:
    fake = discord_fake
    async with running(fake, store, message_content=True):
        thread = discord.utils.time_snowflake(datetime.now(UTC))
        fake.channels[thread] = fake._thread_object(thread, fake.channel_id, "team chat",
                                                    owner_id=SOMEONE)
        await fake.dispatch("THREAD_CREATE", {**fake.channels[thread], "newly_created": False})
        store.down = True
        await fake.dispatch("MESSAGE_CREATE", fake.message_create("we use a100s", thread))
        await fake.dispatch("MESSAGE_CREATE", fake.message_create("8b lora seq 8k", thread))
        await asyncio.sleep(1.5)
    bot_posts = [m for m in fake.channel_messages(thread)
                 if m["author"]["id"] == str(fake.bot_user_id)]
    assert bot_posts == []
