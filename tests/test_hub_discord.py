"""A Hub model through the real discord.py client against the fake Discord: ``/ftcost``
names it, and a button click on its estimate (the request read back from the store,
since a Hub id is not inlined in custom ids) is answered without asking the Hub again."""

from __future__ import annotations

import pytest

from adapters.discord.client import message_key
from bot.store_sqlite import SQLiteStore
from catalog.hub.ref import HubRef
from tests.fakes.discord_server import FLAG_EPHEMERAL, validate_message
from tests.fakes.hub_server import SUPPORT_REPO, FakeHub
from tests.test_discord_bot import click, custom_ids, running, slash, stored, wait_until

REPO = SUPPORT_REPO


@pytest.fixture
def hub(support_hub: FakeHub) -> FakeHub:
    return support_hub


@pytest.fixture
def store(sqlite_store: SQLiteStore) -> SQLiteStore:
    return sqlite_store


async def test_slash_command_and_button_click_on_a_hub_model(discord_fake, store, hub):
    fake = discord_fake
    async with running(fake, store):
        cb = await slash(fake, {"query": f"{REPO} qlora 20M tokens"})
        [embed] = cb["data"]["embeds"]
        assert embed["title"] == f"{REPO} · QLoRA"
        assert "read from the Hugging Face Hub (revision main, commit" in str(cb["data"])
        assert validate_message(cb["data"]) == []
        asked = len(hub.hits())

        [estimate] = fake.channel_messages()
        mid = int(estimate["id"])
        # the handler stores the estimate's context just after answering: a click that
        # fast would find nothing (no person clicks within milliseconds)
        await stored(store, message_key(fake.channel_id, mid))
        full = next(i for i in custom_ids(cb["data"]) if i.startswith("ftc:m:full"))
        await click(fake, mid, full)
        await wait_until(lambda: len(fake.channel_messages(mid)) == 1)

        [answer] = fake.channel_messages(mid)
        assert answer["embeds"][0]["title"].startswith(f"{REPO} · Full")
        assert "method QLoRA → Full" in answer["embeds"][0]["description"]
        assert asked == 2 and len(hub.hits()) == asked
        assert fake.violations == []


async def test_chart_of_a_hub_model_the_hub_cannot_serve_now_is_explained_privately(
    discord_fake, store, hub
):
    fake = discord_fake
    async with running(fake, store) as runner:
        cb = await slash(fake, {"query": f"{REPO} qlora 20M tokens"})
        [estimate] = fake.channel_messages()
        mid = int(estimate["id"])
        await stored(store, message_key(fake.channel_id, mid))
        await store.cache_put(runner.service.hub.cache_key(HubRef.parse(REPO)), "", 0)
        hub.repos.clear()  # the Hub no longer serves it (and nothing is cached)

        chart = next(i for i in custom_ids(cb["data"]) if i.startswith("ftc:c"))
        await click(fake, mid, chart)
        await wait_until(lambda: any(
            "I couldn't draw the chart" in str(m["embeds"]) for m in fake.channel_messages()
        ))
    [notice] = [m for m in fake.channel_messages() if "draw the chart" in str(m["embeds"])]
    assert notice["flags"] & FLAG_EPHEMERAL
    assert f"No model {REPO} on the Hugging Face Hub" in str(notice["embeds"])
    assert not any(m.get("attachments") for m in fake.channel_messages(mid))


async def test_a_hub_model_read_slowly_is_deferred_first_then_answered(discord_fake, store, hub):
    fake = discord_fake
    hub.repos[REPO.lower()].delay_s = 1.6  # two files: 3.2 s, past Discord's 3 s deadline
    async with running(fake, store):
        cb = await slash(fake, {"query": f"{REPO} qlora 20M tokens"})
        await fake.wait_for_call("PATCH", "/webhooks/", timeout=10)

    assert cb["type"] == 5  # deferred ("ftcost is thinking…")
    assert fake.violations == []
    [estimate] = fake.channel_messages()
    assert estimate["embeds"][0]["title"] == f"{REPO} · QLoRA"
    assert "read from the Hugging Face Hub" in str(estimate["embeds"])
    assert custom_ids(estimate)


async def test_a_bad_hub_model_read_slowly_is_explained_privately_after_deferring(
    discord_fake, store, hub
):
    fake = discord_fake
    hub.add("acme/slow-and-missing", {"model_type": "no-such-architecture"}, delay_s=1.6)
    async with running(fake, store):
        cb = await slash(fake, {"query": "acme/slow-and-missing qlora"})
        await fake.wait_for_call("POST", "/webhooks/", timeout=10)

    assert cb["type"] == 5
    assert fake.violations == []
    # the public "thinking" message is gone; only the private notice is left
    assert [m for m in fake.channel_messages() if not m["flags"] & FLAG_EPHEMERAL] == []
    [notice] = [c for c in fake.find_calls("POST", "/webhooks/")]
    assert notice.json["flags"] & FLAG_EPHEMERAL
    assert "no-such-architecture" in str(notice.json["embeds"])
