"""The framework and the channel's defaults on Discord, through the real discord.py client
against the fake gateway and REST API: the ``framework`` option, ``/ftcost set ...`` and
``/ftcost settings``, a thread using its channel's defaults."""

from __future__ import annotations

import json

from bot.store import ThreadKey
from tests.fakes.discord_server import FLAG_EPHEMERAL
from tests.test_discord_bot import runner_thread, running, slash, stored


async def _estimate_request(fake, store, options):
    cb = await slash(fake, options)
    assert not (cb["data"].get("flags") or 0) & FLAG_EPHEMERAL, cb["data"]
    mid = int(fake.channel_messages()[-1]["id"])
    context = await stored(store, ThreadKey("discord", str(fake.channel_id), str(mid)))
    return context.request, cb


async def test_the_framework_option_sets_the_estimates_framework(discord_fake, sqlite_store):
    async with running(discord_fake, sqlite_store):
        request, cb = await _estimate_request(
            discord_fake, sqlite_store, {"query": "8b lora 10M tokens", "framework": "unsloth"})

    assert request.framework.value == "unsloth"
    assert "*Framework:* Unsloth" in cb["data"]["embeds"][0]["description"]


async def test_a_channel_default_set_with_the_query_applies_and_the_option_wins(
    discord_fake, sqlite_store
):
    async with running(discord_fake, sqlite_store):
        confirm = await slash(discord_fake, {"query": "set framework hf"})
        shown = await slash(discord_fake, {"query": "settings"})
        defaulted, _ = await _estimate_request(discord_fake, sqlite_store,
                                               {"query": "8b lora 10M tokens"})
        chosen, _ = await _estimate_request(
            discord_fake, sqlite_store, {"query": "8b lora 10M tokens", "framework": "litgpt"})

    assert confirm["data"]["flags"] & FLAG_EPHEMERAL
    assert "framework setting is now hf" in json.dumps(confirm["data"]["embeds"])
    assert "framework: hf" in json.dumps(shown["data"]["embeds"])
    assert defaulted.framework.value == "hf"
    assert chosen.framework.value == "litgpt"


async def test_a_bad_setting_is_explained_privately(discord_fake, sqlite_store):
    async with running(discord_fake, sqlite_store):
        cb = await slash(discord_fake, {"query": "set prices cheap"})

    assert cb["data"]["flags"] & FLAG_EPHEMERAL
    assert "is not a value of the prices setting" in json.dumps(cb["data"]["embeds"])
    assert await sqlite_store.channel_settings("discord", str(discord_fake.channel_id)) == {}


async def test_a_subscription_asked_in_an_estimates_thread_is_its_channels(
    discord_fake, sqlite_store
):
    manage_channels = str(1 << 4)
    async with running(discord_fake, sqlite_store):
        await slash(discord_fake, {"query": "8b lora 10M tokens"})
        thread = await runner_thread(discord_fake, int(discord_fake.channel_messages()[-1]["id"]))
        cb = await slash(discord_fake, {"query": "subscribe 10%"}, channel_id=thread,
                         permissions=manage_channels)

    assert cb["data"]["flags"] & FLAG_EPHEMERAL
    assert "announcement after a price refresh" in json.dumps(cb["data"]["embeds"])
    channel = str(discord_fake.channel_id)
    assert await sqlite_store.get_subscription("discord", channel) is not None
    assert await sqlite_store.get_subscription("discord", str(thread)) is None
