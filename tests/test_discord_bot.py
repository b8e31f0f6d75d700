"""The Discord bot end to end: the real discord.py client against the fake Discord.

Nothing in discord.py is patched: the product's own ``point_discord_at`` sets
``Route.BASE`` from the configured API base URL and discovers the gateway through the
fake's ``GET /gateway``, as it would for any stand-in.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import discord
import pytest

from adapters.discord.client import ClientSettings, FtcostClient, create_client, message_key
from adapters.discord.runner import DiscordRunner, sync_commands
from bot.ratelimit import RateLimiter
from bot.service import Service
from bot.store import ThreadKey
from bot.store_sqlite import SQLiteStore
from engine.choices import Framework
from tests.fakes.discord_server import (
    FLAG_EPHEMERAL,
    FakeDiscord,
    validate_autocomplete,
    validate_message,
)

LONG_QUERY = (
    "llama-3.1-405b full fp32 adamw-8bit pure-bf16 offload 1.5T tokens 0.5 epochs seq 128k "
    "bs 64 no-ckpt no-flash fused-ce zero2 8x t4 mfu 1.5% $0.013/hr r 4096 attn"
)


# ---------------------------------------------------------------------------------------------
# fixtures and helpers
# ---------------------------------------------------------------------------------------------
@pytest.fixture
def fake(discord_fake: FakeDiscord) -> FakeDiscord:
    return discord_fake


@pytest.fixture
def store(sqlite_store: SQLiteStore) -> SQLiteStore:
    return sqlite_store


def settings(fake: FakeDiscord, **kw: Any) -> ClientSettings:
    return ClientSettings(api_base_url=fake.base_url, **kw)


@contextlib.asynccontextmanager
async def running(
    fake: FakeDiscord, store: SQLiteStore | None, **kw: Any
) -> AsyncIterator[DiscordRunner]:
    """The product's runner (login, gateway discovery, READY), with commands synced to
    the fake guild first (as ``sync-commands --guild`` would)."""
    service = Service(store, workers=0)
    conf = settings(fake, **kw)
    if not fake.guild_commands.get(fake.guild_id):
        await sync_commands("fake-token", conf, fake.guild_id, service)
    runner = DiscordRunner(None, service, settings=conf, token="fake-token",
                           guild_ready_timeout=0.05)
    await runner.start(ready_timeout=5)
    try:
        yield runner
    finally:
        await runner.stop(timeout=2)


async def wait_until(predicate: Callable[[], Any], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


async def slash(fake: FakeDiscord, options: dict[str, Any] | None = None,
                **kw: Any) -> dict[str, Any]:
    """Dispatch ``/ftcost`` and return its (first) interaction callback."""
    payload = fake.interaction_slash("ftcost", options or {}, **kw)
    await fake.dispatch("INTERACTION_CREATE", payload)
    await fake.wait_for_call("POST", f"/interactions/{payload['id']}/")
    return next(cb for cb in fake.interaction_callbacks
                if cb["interaction_id"] == int(payload["id"]))


async def stored(store: SQLiteStore, key: ThreadKey, check: Callable[[Any], bool] = bool,
                 timeout: float = 5.0) -> Any:
    """The context under ``key`` once it satisfies ``check`` (the handler saves it right
    after Discord has the reply, so a test may look a moment too early)."""
    deadline = time.monotonic() + timeout
    while True:
        ctx = await store.get_thread(key)
        if ctx is not None and check(ctx):
            return ctx
        if time.monotonic() > deadline:
            raise AssertionError(f"no context under {key}")
        await asyncio.sleep(0.01)


def custom_ids(message: dict[str, Any]) -> list[str]:
    return [c["custom_id"] for row in message.get("components") or [] for c in row["components"]]


def message_creating_calls(fake: FakeDiscord) -> list[dict[str, Any]]:
    """Bodies of every call that created or edited a message."""
    bodies = []
    for call in fake.calls:
        if call.method == "POST" and "/callback" in call.path:
            if (call.json or {}).get("type") in (4, 7):
                bodies.append(call.json["data"])
        elif call.method in ("POST", "PATCH") and (
            call.path.endswith("/messages") or "/webhooks/" in call.path
            or "/messages/" in call.path
        ) and not call.path.endswith("/threads"):
            bodies.append(call.json or {})
    return bodies


async def click(fake: FakeDiscord, message_id: int, custom_id: str, *,
                values: list[str] | None = None, channel_id: int | None = None) -> None:
    ctype = 3 if values else 2
    payload = fake.interaction_component(custom_id, ctype, values=values, message=message_id,
                                         channel_id=channel_id)
    await fake.dispatch("INTERACTION_CREATE", payload)


# ---------------------------------------------------------------------------------------------
# slash command
# ---------------------------------------------------------------------------------------------
async def test_slash_command_answers_with_one_callback_embeds_and_buttons(
    fake: FakeDiscord, store: SQLiteStore
) -> None:
    async with running(fake, store) as runner:
        # the product discovered the gateway from the API base URL
        assert fake.find_calls("GET", "/gateway", status=200)
        assert runner.client is not None and runner.client.is_ready()
        cb = await slash(fake, {"query": "70b qlora 50M tokens h100"})
        assert cb["type"] == 4
        data = cb["data"]
        assert validate_message(data) == []
        assert not (data.get("flags") or 0) & FLAG_EPHEMERAL
        [embed] = data["embeds"]
        assert embed["title"] == "Llama 3.1 70B · QLoRA"
        assert "48.7 GB per GPU" in embed["description"]
        assert embed["color"] in (0x2ECC71, 0x3498DB)
        assert [f["name"] for f in embed["fields"]][:3] == ["Memory per GPU", "Cards", "What if"]
        ids = custom_ids(data)
        assert ids[0].startswith("ftc:m:full:mllama-3.1-70b")
        assert any(i.startswith("ftc:s2:") for i in ids) and ids[-1].startswith("ftc:g:")
        assert all(len(i) <= 100 for i in ids)
        assert data["allowed_mentions"] == {"parse": []}
        # exactly one callback, no follow-up needed
        assert len(fake.interaction_callbacks) == 1
        [msg] = fake.channel_messages()
        ctx = await stored(store, ThreadKey("discord", str(fake.channel_id), msg["id"]))
        assert ctx.request.model == "llama-3.1-70b"
        assert ctx.message_id == msg["id"]
        assert fake.violations == []


async def test_structured_options_combine_with_the_query(
    fake: FakeDiscord, store: SQLiteStore
) -> None:
    async with running(fake, store):
        cb = await slash(fake, {"query": "qlora 50M tokens", "model": "llama-3.1-70b",
                                "gpu": "8x h100", "seq": "4k", "epochs": 2.0})
        embed = cb["data"]["embeds"][0]
        assert embed["title"] == "Llama 3.1 70B · QLoRA"
        assert "seq 4,096" in embed["description"] and "2 epochs" in embed["description"]
        assert "8x NVIDIA H100" in embed["description"]

        conflict = await slash(fake, {"query": "70b lora", "method": "full"})
        assert conflict["data"]["flags"] & FLAG_EPHEMERAL
        text = conflict["data"]["embeds"][0]["description"]
        assert "method" in text and "LoRA" in text and "Full" in text


async def test_bad_query_is_an_ephemeral_error_naming_the_word(
    fake: FakeDiscord, store: SQLiteStore
) -> None:
    async with running(fake, store):
        cb = await slash(fake, {"query": "70b qlora 50M tokens h1000"})
        data = cb["data"]
        assert data["flags"] & FLAG_EPHEMERAL
        assert "components" not in data or not data["components"]
        embed = data["embeds"][0]
        assert "h1000" in embed["description"]
        assert "h100" in " ".join(f["value"] for f in embed["fields"])
        assert validate_message(data) == []
        assert all(m["flags"] & FLAG_EPHEMERAL for m in fake.channel_messages())


async def test_help_and_listings_are_ephemeral(fake: FakeDiscord, store: SQLiteStore) -> None:
    async with running(fake, store):
        payload = fake.interaction_slash("ftcost-help")
        await fake.dispatch("INTERACTION_CREATE", payload)
        await fake.wait_for_call("POST", f"/interactions/{payload['id']}/")
        for query in ("help", "models", "gpus"):
            cb = await slash(fake, {"query": query})
            assert cb["data"]["flags"] & FLAG_EPHEMERAL
            assert validate_message(cb["data"]) == []
        help_cb = fake.interaction_callbacks[0]["data"]
        assert "Ask in one line" in help_cb["embeds"][0]["description"]
        models = fake.interaction_callbacks[2]["data"]["embeds"][0]
        everything = models["description"] + "".join(f["value"] for f in models["fields"])
        assert "llama-3.1-70b" in everything and "synthetic" in everything
        assert fake.violations == []


async def test_autocomplete_offers_at_most_25_matching_choices(
    fake: FakeDiscord, store: SQLiteStore
) -> None:
    async with running(fake, store):
        results = {}
        for option, typed in (("model", ""), ("model", "llama 3.1"), ("model", "70b"),
                              ("gpu", "8x h1"), ("model", "meta-llama/Llama-3.1-70B")):
            payload = fake.interaction_autocomplete("ftcost", {option: typed})
            await fake.dispatch("INTERACTION_CREATE", payload)
            await fake.wait_for_call("POST", f"/interactions/{payload['id']}/")
            cb = fake.interaction_callbacks[-1]
            assert cb["type"] == 8
            assert validate_autocomplete(cb["data"]["choices"]) == []
            results[(option, typed)] = [c["value"] for c in cb["data"]["choices"]]
        assert len(results[("model", "")]) == 25
        assert all("llama-3.1" in v for v in results[("model", "llama 3.1")][:3])
        assert results[("model", "70b")][0] == "llama-3.1-70b"
        assert results[("gpu", "8x h1")][0] == "8x h100-sxm"
        assert results[("model", "meta-llama/Llama-3.1-70B")][0] == "llama-3.1-70b"


# ---------------------------------------------------------------------------------------------
# buttons, threads, follow-ups
# ---------------------------------------------------------------------------------------------
async def test_button_click_answers_in_the_estimates_thread(
    fake: FakeDiscord, store: SQLiteStore
) -> None:
    async with running(fake, store):
        cb = await slash(fake, {"query": "70b qlora 50M tokens h100"})
        [estimate] = fake.channel_messages()
        mid = int(estimate["id"])
        full = next(i for i in custom_ids(cb["data"]) if i.startswith("ftc:m:full"))
        await click(fake, mid, full)
        await fake.wait_for_call("POST", f"/channels/{mid}/messages", status=200)
        # acknowledged without touching the estimate, answered in a thread on it
        assert fake.interaction_callbacks[-1]["type"] == 6
        threads = f"/channels/{fake.channel_id}/messages/{mid}/threads"
        [thread_call] = fake.find_calls("POST", threads)
        assert thread_call.json["name"].startswith("Llama 3.1 70B · QLoRA")
        [answer] = fake.channel_messages(mid)
        embed = answer["embeds"][0]
        assert embed["title"].startswith("Llama 3.1 70B · Full")
        assert "method QLoRA → Full" in embed["description"]
        assert validate_message(answer) == []
        ctx = await stored(store, ThreadKey("discord", str(fake.channel_id), str(mid)),
                           lambda c: c.request.method is not None
                           and c.request.method.value == "full")
        assert ctx.message_id == answer["id"]

        # the select on the threaded estimate: another card, answered in the same thread
        select = next(i for i in custom_ids(answer) if i.startswith("ftc:g"))
        option = answer["components"][-1]["components"][0]["options"][0]["value"]
        await click(fake, int(answer["id"]), select, values=[option], channel_id=mid)
        await wait_until(lambda: len(fake.channel_messages(mid)) == 2)
        second = fake.channel_messages(mid)[1]["embeds"][0]
        assert f"card h100-sxm → {option}" in second["description"]
        assert len(fake.find_calls("POST", "/channels/", status=201)) == 1  # one thread only
        assert fake.violations == []


async def test_without_thread_permissions_a_click_answers_in_the_channel(
    fake: FakeDiscord, store: SQLiteStore
) -> None:
    async with running(fake, store):
        cb = await slash(fake, {"query": "8b lora 20M tokens"})
        mid = int(fake.channel_messages()[0]["id"])
        fake.fail_next("POST", f"/channels/{fake.channel_id}/messages/{mid}/threads",
                       status=403, code=50013)
        await click(fake, mid, custom_ids(cb["data"])[0])
        [followup] = await fake.wait_for_call("POST", f"/webhooks/{fake.application_id}/",
                                              status=200)
        assert not (followup.json.get("flags") or 0) & FLAG_EPHEMERAL
        assert "method LoRA → Full" in followup.json["embeds"][0]["description"]
        assert custom_ids(followup.json)  # with its own buttons
        # in a DM there are no threads either
        dm = fake.interaction_component(custom_ids(cb["data"])[0], dm=True)
        await fake.dispatch("INTERACTION_CREATE", dm)
        await fake.wait_for_call("POST", f"/webhooks/{fake.application_id}/", count=2)
        assert fake.violations == []


async def test_slash_command_in_the_thread_is_a_followup(
    fake: FakeDiscord, store: SQLiteStore
) -> None:
    async with running(fake, store):
        cb = await slash(fake, {"query": "8b lora 20M tokens"})
        mid = int(fake.channel_messages()[0]["id"])
        seq = next(i for i in custom_ids(cb["data"]) if i.startswith("ftc:s2"))
        await click(fake, mid, seq)
        await wait_until(lambda: fake.channel_messages(mid))
        assert "seq 2,048 → 4,096" in fake.channel_messages(mid)[0]["embeds"][0]["description"]

        followup = await slash(fake, {"query": "what if 8k seq and qlora"}, channel_id=mid)
        embed = followup["data"]["embeds"][0]
        assert "seq 4,096 → 8,192" in embed["description"]  # on the thread's last request
        assert "method LoRA → QLoRA" in embed["description"]
        assert not (followup["data"].get("flags") or 0) & FLAG_EPHEMERAL
        assert len(fake.channel_messages(mid)) == 2  # landed in the thread
        await stored(store, ThreadKey("discord", str(fake.channel_id), str(mid)),
                     lambda c: c.request.seq_len == 8192)

        # structured options in the thread change the last request too
        opt = await slash(fake, {"tokens": "100M"}, channel_id=mid)
        assert "tokens 20M → 100M" in opt["data"]["embeds"][0]["description"]
        # a thread the bot has no estimate in: a fresh query
        fresh = await slash(fake, {"query": "8b qlora"}, channel_id=fake.thread_id)
        assert fresh["data"]["embeds"][0]["title"].startswith("Llama 3.1 8B · QLoRA")


async def test_thread_messages_need_a_mention_without_the_content_intent(
    fake: FakeDiscord, store: SQLiteStore
) -> None:
    async with running(fake, store):
        await slash(fake, {"query": "8b lora 20M tokens"})
        mid = int(fake.channel_messages()[0]["id"])
        thread = await runner_thread(fake, mid)
        await fake.dispatch("MESSAGE_CREATE", fake.message_create("what if 8k seq", thread))
        await fake.dispatch(
            "MESSAGE_CREATE",
            fake.message_create(f"<@{fake.bot_user_id}> what if 4k seq", thread,
                                mentions=[fake.bot_user_id]),
        )
        answers = await bot_answers(fake, thread)
        assert len(answers) == 1  # the plain message arrived without content: ignored
        assert "seq 2,048 → 4,096" in answers[0]["embeds"][0]["description"]
        assert answers[0]["allowed_mentions"] == {"parse": [], "replied_user": False}


async def runner_thread(fake: FakeDiscord, message_id: int) -> int:
    """Open a thread on a message as a user would (Discord's "Create Thread")."""
    fake.channels[message_id] = fake._thread_object(
        message_id, fake.channel_id, "user thread", owner_id=fake.user_id
    )
    await fake.dispatch("THREAD_CREATE", {**fake.channels[message_id], "newly_created": True})
    return message_id


async def bot_answers(fake: FakeDiscord, thread: int) -> list[dict[str, Any]]:
    """The bot's messages in ``thread``, once there is one and the rest had time to land."""
    def ours() -> list[dict[str, Any]]:
        return [m for m in fake.channel_messages(thread)
                if m["author"]["id"] == str(fake.bot_user_id)]

    await wait_until(ours)
    await asyncio.sleep(0.1)
    return ours()


async def test_plain_thread_messages_with_the_content_intent(
    fake: FakeDiscord, store: SQLiteStore
) -> None:
    async with running(fake, store, message_content=True):
        assert fake.identifies[-1]["intents"] & (1 << 15)
        await slash(fake, {"query": "8b lora 20M tokens"})
        mid = int(fake.channel_messages()[0]["id"])
        thread = await runner_thread(fake, mid)
        await fake.dispatch("MESSAGE_CREATE", fake.message_create("thanks, nice!", thread))
        await fake.dispatch("MESSAGE_CREATE", fake.message_create("what if full", thread))
        answers = await bot_answers(fake, thread)
        assert len(answers) == 1  # chatter that does not parse is not answered
        assert "method LoRA → Full" in answers[0]["embeds"][0]["description"]


async def test_a_question_in_the_bots_thread_older_than_the_store_keeps_says_it_is_fresh(
    fake: FakeDiscord, store: SQLiteStore
) -> None:
    from datetime import UTC, datetime

    old = discord.utils.time_snowflake(datetime(2020, 1, 1, tzinfo=UTC))
    async with running(fake, store, message_content=True):
        fake.channels[old] = fake._thread_object(
            old, fake.channel_id, "an old estimate", owner_id=fake.bot_user_id
        )
        await fake.dispatch("THREAD_CREATE", {**fake.channels[old], "newly_created": False})
        await fake.dispatch("MESSAGE_CREATE", fake.message_create("8b lora seq 8k", old))
        answers = await bot_answers(fake, old)
        assert "is no longer kept, so this is a fresh estimate" in json.dumps(
            answers[0]["embeds"]
        )


async def test_thread_chatter_costs_no_rate_limit_and_gets_no_notice(
    fake: FakeDiscord, store: SQLiteStore
) -> None:
    async with running(fake, store, message_content=True) as runner:
        runner.service.limiter = RateLimiter(store, per_minute=2)
        await slash(fake, {"query": "8b lora 20M tokens"})  # 1 of 2
        mid = int(fake.channel_messages()[0]["id"])
        thread = await runner_thread(fake, mid)
        for chatter in ("nice", "ok cool", "great"):
            await fake.dispatch("MESSAGE_CREATE", fake.message_create(chatter, thread))
        await fake.dispatch("MESSAGE_CREATE", fake.message_create("what if full", thread))
        answers = await bot_answers(fake, thread)
        assert len(answers) == 1  # the estimate, no rate-limit notices
        assert "method LoRA → Full" in answers[0]["embeds"][0]["description"]


async def test_new_in_a_thread_keeps_the_channels_settings(
    fake: FakeDiscord, store: SQLiteStore
) -> None:
    async with running(fake, store, message_content=True):
        await slash(fake, {"query": "set framework unsloth"})
        await slash(fake, {"query": "8b lora 20M tokens"})
        mid = int(fake.channel_messages()[-1]["id"])  # the estimate, after the settings
        thread = await runner_thread(fake, mid)
        await fake.dispatch("MESSAGE_CREATE",
                            fake.message_create("new 8b lora 20M tokens", thread))
        [answer] = await bot_answers(fake, thread)
        assert "Unsloth" in json.dumps(answer["embeds"])


async def test_mentions_in_a_channel(fake: FakeDiscord, store: SQLiteStore) -> None:
    async with running(fake, store):
        mention = f"<@{fake.bot_user_id}>"
        await fake.dispatch("MESSAGE_CREATE", fake.message_create(
            f"{mention} 70b qlora 50M tokens h100 @everyone", mentions=[fake.bot_user_id]))
        await wait_until(lambda: any(m["author"]["id"] == str(fake.bot_user_id)
                                     for m in fake.channel_messages()))
        estimate = next(m for m in fake.channel_messages()
                        if m["author"]["id"] == str(fake.bot_user_id))
        assert "h1" not in estimate["content"]
        # (the @everyone in the query is an unknown word: an error, shown without pinging)
        assert estimate["embeds"][0]["title"] == "Can't read that query"
        assert "@\u200beveryone" in estimate["embeds"][0]["description"]
        assert estimate["allowed_mentions"]["parse"] == []

        await fake.dispatch("MESSAGE_CREATE", fake.message_create(
            f"{mention} 70b qlora 50M tokens h100", mentions=[fake.bot_user_id]))
        await wait_until(lambda: len([m for m in fake.channel_messages()
                                      if m["author"]["id"] == str(fake.bot_user_id)]) == 2)
        ours = [m for m in fake.channel_messages() if m["author"]["id"] == str(fake.bot_user_id)]
        assert ours[1]["embeds"][0]["title"] == "Llama 3.1 70B · QLoRA"
        assert ours[1]["message_reference"]  # a reply to the asker

        # replying to the estimate with a mention opens its thread
        await fake.dispatch("MESSAGE_CREATE", fake.message_create(
            f"{mention} what if 8k seq", mentions=[fake.bot_user_id],
            message_reference=int(ours[1]["id"])))
        thread_id = int(ours[1]["id"])
        await wait_until(lambda: fake.channel_messages(thread_id))
        assert "seq 2,048 → 8,192" in fake.channel_messages(thread_id)[0]["embeds"][0][
            "description"]


# ---------------------------------------------------------------------------------------------
# limits and safety
# ---------------------------------------------------------------------------------------------
async def test_allowed_mentions_none_on_every_message(
    fake: FakeDiscord, store: SQLiteStore
) -> None:
    async with running(fake, store):
        cb = await slash(fake, {"query": "70b qlora 50M tokens h100"})
        mid = int(fake.channel_messages()[0]["id"])
        await slash(fake, {"query": "<@&1> @everyone h1000"})
        await click(fake, mid, custom_ids(cb["data"])[0])
        await wait_until(lambda: fake.channel_messages(mid))
        await fake.dispatch("MESSAGE_CREATE", fake.message_create(
            f"<@{fake.bot_user_id}> what if 8k seq", mid, mentions=[fake.bot_user_id]))
        await wait_until(lambda: len(fake.channel_messages(mid)) >= 3)
        bodies = message_creating_calls(fake)
        assert len(bodies) >= 4
        for body in bodies:
            assert body.get("allowed_mentions", {}).get("parse") == [], body


async def test_429_on_the_thread_message_is_retried_and_delivered(
    fake: FakeDiscord, store: SQLiteStore
) -> None:
    async with running(fake, store):
        cb = await slash(fake, {"query": "8b lora 20M tokens"})
        mid = int(fake.channel_messages()[0]["id"])
        fake.rate_limit_next("POST", f"/channels/{mid}/messages", retry_after=0.2)
        await click(fake, mid, custom_ids(cb["data"])[0])
        calls = await fake.wait_for_call("POST", f"/channels/{mid}/messages", count=2)
        assert [c.status for c in calls] == [429, 200]
        assert len(fake.channel_messages(mid)) == 1


async def test_largest_request_uses_the_store_and_survives_a_restart(
    fake: FakeDiscord, tmp_path: Path
) -> None:
    path = tmp_path / "restart.sqlite3"
    first = SQLiteStore(path)
    await first.open()
    async with running(fake, first):
        cb = await slash(fake, {"query": LONG_QUERY})
        ids = custom_ids(cb["data"])
        assert ids and all(":" not in i[len("ftc:m:full"):] for i in ids)  # no inline request
        estimate = fake.channel_messages()[0]
        mid = int(estimate["id"])
        small = await slash(fake, {"query": "8b lora 20M tokens"})
        small_mid = int(fake.channel_messages()[1]["id"])
        await stored(first, message_key(fake.channel_id, mid))
    await first.close()

    second = SQLiteStore(path)  # a new process: same file, nothing in memory
    await second.open()
    try:
        async with running(fake, second):
            await click(fake, mid, next(i for i in ids if i.startswith("ftc:s2")))
            await wait_until(lambda: fake.channel_messages(mid))
            embed = fake.channel_messages(mid)[0]["embeds"][0]
            assert "seq 131,072 → 262,144" in embed["description"]
            # the other estimate's thread context and inline ids work after the restart too
            await click(fake, small_mid, custom_ids(small["data"])[0])
            await wait_until(lambda: fake.channel_messages(small_mid))
            followup = await slash(fake, {"query": "2 epochs"}, channel_id=small_mid)
            assert "epochs 3 → 2" in followup["data"]["embeds"][0]["description"]
    finally:
        await second.close()


async def test_a_click_on_an_unknown_estimate_says_so(fake: FakeDiscord) -> None:
    async with running(fake, None):
        payload = fake.interaction_component("ftc:m:full")
        await fake.dispatch("INTERACTION_CREATE", payload)
        await fake.wait_for_call("POST", f"/webhooks/{fake.application_id}/")
        [followup] = fake.find_calls("POST", f"/webhooks/{fake.application_id}/")
        assert followup.json["flags"] & FLAG_EPHEMERAL
        assert "no longer know" in followup.json["embeds"][0]["description"]


# ---------------------------------------------------------------------------------------------
# registration, sharding, start-up errors
# ---------------------------------------------------------------------------------------------
async def test_sync_commands_registers_globally_or_in_one_guild(fake: FakeDiscord) -> None:
    names = await sync_commands("fake-token", settings(fake))
    assert names == ["ftcost", "ftcost-help"]
    [put] = fake.find_calls("PUT", f"/applications/{fake.application_id}/commands")
    ftcost = put.json[0]
    options = {o["name"]: o for o in ftcost["options"]}
    assert list(options) == ["query", "model", "gpu", "method", "tokens", "seq", "epochs",
                             "framework", "config"]
    assert options["config"]["type"] == 11  # ATTACHMENT
    assert [c["value"] for c in options["framework"]["choices"]] == [f.value for f in Framework]
    assert options["model"]["autocomplete"] and options["gpu"]["autocomplete"]
    assert [c["value"] for c in options["method"]["choices"]] == ["full", "lora", "qlora"]
    assert not any(o["required"] for o in ftcost["options"])
    assert await sync_commands("fake-token", settings(fake), fake.guild_id) == names
    assert [c["name"] for c in fake.guild_commands[fake.guild_id]] == names
    assert not fake.find_calls("GET", "/gateway/bot")  # no gateway connection for a sync


async def test_commands_are_not_registered_on_start(fake: FakeDiscord) -> None:
    fake.guild_commands[fake.guild_id] = [{"name": "placeholder"}]  # skip the helper's sync
    async with running(fake, None):
        pass
    assert not fake.find_calls("PUT", "/applications/")


async def test_sharded_client_when_configured(fake: FakeDiscord, store: SQLiteStore) -> None:
    async with running(fake, store, shard_count="auto") as runner:
        assert isinstance(runner.client, discord.AutoShardedClient)
        assert fake.find_calls("GET", "/gateway/bot", status=200)
        assert fake.identifies[-1]["shard"] == [0, 1]
        cb = await slash(fake, {"query": "8b qlora"})
        assert cb["data"]["embeds"][0]["title"].startswith("Llama 3.1 8B")
        assert (await runner.health())["ok"] is True


async def test_bad_token_and_refused_intent_fail_start_clearly(fake: FakeDiscord) -> None:
    from bot.runtime import PlatformStartError

    fake.token = "right-token"
    runner = DiscordRunner(None, Service(workers=0), settings=settings(fake), token="wrong")
    with pytest.raises(PlatformStartError, match="rejected DISCORD_TOKEN"):
        await runner.start(ready_timeout=5)

    fake.token = None
    fake.privileged_intents_enabled = 0
    runner = DiscordRunner(None, Service(workers=0), settings=settings(fake, message_content=True),
                           token="t", guild_ready_timeout=0.05)
    with pytest.raises(PlatformStartError, match="Message Content intent"):
        await runner.start(ready_timeout=5)


def test_create_client_picks_the_class() -> None:
    service = Service(workers=0)
    assert type(create_client(service, ClientSettings())) is FtcostClient
    sharded = create_client(service, ClientSettings(shard_count=4, shard_ids=(0, 1)))
    assert isinstance(sharded, discord.AutoShardedClient)
    assert sharded.shard_count == 4 and sharded.shard_ids == [0, 1]
    assert sharded.allowed_mentions is not None
    assert sharded.allowed_mentions.to_dict() == {"parse": []}
    intents = create_client(service, ClientSettings(message_content=True)).intents
    assert intents.message_content and intents.guild_messages and not intents.members


def test_the_runner_is_a_platform_runner() -> None:
    from bot.runtime import PlatformRunner

    runner = DiscordRunner(None, Service(workers=0), token="t")
    assert isinstance(runner, PlatformRunner)
    assert runner.name == "discord" and runner.routes() == []
