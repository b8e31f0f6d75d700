"""Discord mentions and the per-user rate limit: the real discord.py client against the fake
gateway and REST API, with a limit of one command a minute."""

from __future__ import annotations

import json

from bot.ratelimit import RateLimiter
from tests.fakes.discord_server import FLAG_EPHEMERAL
from tests.test_discord_bot import runner_thread, running, slash, wait_until


async def test_slash_command_over_the_limit_is_refused_privately(discord_fake, sqlite_store):
    async with running(discord_fake, sqlite_store) as runner:
        runner.service.limiter = RateLimiter(sqlite_store, per_minute=1)
        first = await slash(discord_fake, {"query": "8b qlora"})
        second = await slash(discord_fake, {"query": "8b qlora"})
    assert not (first["data"].get("flags") or 0) & FLAG_EPHEMERAL
    assert second["data"]["flags"] & FLAG_EPHEMERAL
    assert "requests in the last minute" in str(second["data"]["embeds"])


async def test_mention_over_the_limit_gets_a_notice_instead_of_an_estimate(
    discord_fake, sqlite_store
):
    async with running(discord_fake, sqlite_store) as runner:
        runner.service.limiter = RateLimiter(sqlite_store, per_minute=1)
        mention = f"<@{discord_fake.bot_user_id}>"
        for _ in range(2):
            await discord_fake.dispatch("MESSAGE_CREATE", discord_fake.message_create(
                f"{mention} 8b qlora", mentions=[discord_fake.bot_user_id]))  # fmt: skip

        def ours() -> list[dict]:
            bot = str(discord_fake.bot_user_id)
            return [m for m in discord_fake.channel_messages() if m["author"]["id"] == bot]

        await wait_until(lambda: len(ours()) == 2)
    titles = [m["embeds"][0].get("title") for m in ours()]
    assert "Llama 3.1 8B · QLoRA" in titles
    assert any("requests in the last minute" in str(m["embeds"]) for m in ours())


async def test_mention_asking_for_prices_gets_the_price_table_not_an_estimate_error(
    discord_fake, sqlite_store
):
    async with running(discord_fake, sqlite_store):
        mention = f"<@{discord_fake.bot_user_id}>"
        await discord_fake.dispatch("MESSAGE_CREATE", discord_fake.message_create(
            f"{mention} prices", mentions=[discord_fake.bot_user_id]))  # fmt: skip
        bot = str(discord_fake.bot_user_id)
        await wait_until(
            lambda: any(m["author"]["id"] == bot for m in discord_fake.channel_messages())
        )
    [reply] = [m for m in discord_fake.channel_messages() if m["author"]["id"] == bot]
    [embed] = reply["embeds"]
    assert "Can't read that query" not in embed.get("title", "")
    assert "h100" in embed["description"].lower()


async def test_prices_asked_in_an_estimates_thread_get_the_price_table(discord_fake, sqlite_store):
    async with running(discord_fake, sqlite_store):
        await slash(discord_fake, {"query": "8b lora 20M tokens"})
        mid = int(discord_fake.channel_messages()[0]["id"])
        thread = await runner_thread(discord_fake, mid)
        await discord_fake.dispatch("MESSAGE_CREATE", discord_fake.message_create(
            f"<@{discord_fake.bot_user_id}> prices", thread,
            mentions=[discord_fake.bot_user_id]))  # fmt: skip
        bot = str(discord_fake.bot_user_id)
        await wait_until(lambda: any(m["author"]["id"] == bot
                                     for m in discord_fake.channel_messages(thread)))
    [reply] = [m for m in discord_fake.channel_messages(thread) if m["author"]["id"] == bot]
    [embed] = reply["embeds"]
    assert "Can't read that query" not in embed.get("title", "")
    assert "h100" in embed["description"].lower()


async def test_short_id_mentions_in_a_bad_query_are_echoed_inert(discord_fake, sqlite_store):
    typed = "8b qlora <@123> <@&1> <#1> @here"
    async with running(discord_fake, sqlite_store):
        callback = await slash(discord_fake, {"query": typed})

    assert callback["data"]["flags"] & FLAG_EPHEMERAL
    shown = json.dumps(callback["data"]["embeds"], ensure_ascii=False)
    for mention in ("<@123>", "<@&1>", "<#1>", "@here"):
        assert mention not in shown
    assert "@\u200bhere" in shown and "<\u200b@123>" in shown


async def test_short_id_mentions_in_a_mention_are_echoed_inert(discord_fake, sqlite_store):
    async with running(discord_fake, sqlite_store):
        await discord_fake.dispatch("MESSAGE_CREATE", discord_fake.message_create(
            f"<@{discord_fake.bot_user_id}> 8b qlora <@&1> <#1>",
            mentions=[discord_fake.bot_user_id]))  # fmt: skip
        bot = str(discord_fake.bot_user_id)
        await wait_until(
            lambda: any(m["author"]["id"] == bot for m in discord_fake.channel_messages())
        )
    [reply] = [m for m in discord_fake.channel_messages() if m["author"]["id"] == bot]
    shown = json.dumps(reply["embeds"], ensure_ascii=False)
    assert "Can't read that query" in shown
    assert "<@&1>" not in shown and "<#1>" not in shown
