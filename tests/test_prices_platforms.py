"""Announcements and the prices table rendered natively (Slack blocks, a Discord embed)
and posted through the Slack mock and the fake Discord: gone channels, rate limits, and a
crash mid fan-out settled from the channel history."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import discord
import pytest
from slack_sdk.web.async_client import AsyncWebClient

from adapters.discord.announce import DOWN_COLOUR, DiscordPoster, announcement_embed, prices_embed
from adapters.slack.announce import SlackPoster, announcement_blocks, prices_blocks
from bot.announce import (
    Announcement,
    ChannelGone,
    Fanout,
    RateLimited,
    SendFailed,
    Target,
    plan_announcement,
)
from bot.price_commands import prices_view
from bot.price_store import Subscription
from catalog.price_snapshot import CardPrices, CloudQuotes, PriceSnapshot, Quote, snapshot_id
from engine.specs import Catalog
from tests.fakes.clock import ManualClock
from tests.fakes.discord_server import (
    FakeDiscord,
    point_discord_at,
    restore_discord_endpoints,
    validate_message,
)
from tests.fakes.poster import Crash
from tests.fakes.price_store import MemoryPriceStore
from tests.fakes.slack_api import FakeSlack, validate_blocks

T0 = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
T1 = T0 + timedelta(days=1)


def snapshot(at: datetime, prices: dict[str, float]) -> PriceSnapshot:
    cards = {
        card: CardPrices(card=card, clouds={"lambda": CloudQuotes(
            on_demand=Quote(price=p, cloud="lambda"), as_of=at)})
        for card, p in prices.items()
    }  # fmt: skip
    return PriceSnapshot(id=snapshot_id(at), taken_at=at, cards=cards)


OLD = snapshot(T0, {"h100-sxm": 3.00, "l40s": 1.00})
NEW = snapshot(T1, {"h100-sxm": 2.40, "l40s": 0.90})


def announcement(catalog: Catalog, platform: str = "slack", channel: str = "C1") -> Announcement:
    sub = Subscription(platform, channel, f"{platform}:T1")
    ann = plan_announcement(sub, OLD, NEW, catalog)
    assert ann is not None
    return ann


# -- Slack ------------------------------------------------------------------------------------


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as fake:
        yield fake


def slack_client(slack: FakeSlack) -> AsyncWebClient:
    return AsyncWebClient(token="xoxb-test", base_url=slack.base_url)


def test_slack_blocks_are_valid_and_carry_the_key(catalog: Catalog) -> None:
    blocks = announcement_blocks(announcement(catalog))
    assert validate_blocks(blocks) == []
    assert blocks[0]["block_id"] == f"ftcost-prices-{NEW.id}"
    assert "*h100-sxm* $3.00 → *$2.40*/hr (-20.0%)" in blocks[1]["text"]["text"]


def test_slack_prices_blocks_are_valid(catalog: Catalog) -> None:
    view = prices_view(NEW, catalog, T1 + timedelta(hours=2))
    blocks = prices_blocks(view, "price changes of 5% or more in every live NVIDIA card")
    assert validate_blocks(blocks) == []
    assert any("h100-sxm" in b.get("text", {}).get("text", "") for b in blocks)


async def test_slack_poster_posts_blocks_and_a_text_fallback(
    slack: FakeSlack, catalog: Catalog
) -> None:
    ts = await SlackPoster(slack_client(slack)).post("C1", announcement(catalog))
    [message] = slack.messages_in("C1")
    assert message["ts"] == ts and message["text"].startswith("GPU prices changed: 2 cards")
    assert message["blocks"][0]["block_id"].startswith("ftcost-prices-")


async def test_slack_announcements_name_the_configured_slash_command(
    slack: FakeSlack, catalog: Catalog
) -> None:
    await SlackPoster(slack_client(slack), "/cost").post("C1", announcement(catalog))
    [message] = slack.messages_in("C1")
    footer = message["blocks"][-1]["elements"][0]["text"]
    assert "/cost prices for the table" in footer and "/cost unsubscribe" in footer
    assert "/ftcost" not in footer and "/ftcost" not in message["text"]


def test_slack_prices_table_footer_names_the_configured_slash_command(
    catalog: Catalog,
) -> None:
    view = prices_view(NEW, catalog, T1 + timedelta(hours=2))
    note = prices_blocks(view, None, "/cost")[-1]["elements"][0]["text"]
    assert note.startswith("`/cost subscribe")


@pytest.mark.parametrize("error", ["channel_not_found", "not_in_channel", "is_archived"])
async def test_slack_gone_errors_mean_the_channel_is_gone(
    slack: FakeSlack, catalog: Catalog, error: str
) -> None:
    slack.fail_next("chat.postMessage", error)
    with pytest.raises(ChannelGone, match=error):
        await SlackPoster(slack_client(slack)).post("C1", announcement(catalog))


async def test_slack_429_is_rate_limited_with_its_retry_after(
    slack: FakeSlack, catalog: Catalog
) -> None:
    slack.rate_limit_next("chat.postMessage", retry_after=30)
    with pytest.raises(RateLimited) as info:
        await SlackPoster(slack_client(slack)).post("C1", announcement(catalog))
    assert info.value.retry_after == 30.0


async def test_slack_other_errors_are_failures(slack: FakeSlack, catalog: Catalog) -> None:
    slack.fail_next("chat.postMessage", "internal_error")
    with pytest.raises(SendFailed, match="internal_error"):
        await SlackPoster(slack_client(slack)).post("C1", announcement(catalog))


def serve_history(slack: FakeSlack) -> None:
    def history(args: dict[str, Any]) -> dict[str, Any]:
        return {"messages": slack.messages_in(str(args["channel"])), "has_more": False}

    slack.on("conversations.history", history)


async def test_slack_finds_a_posted_announcement_in_the_history(
    slack: FakeSlack, catalog: Catalog
) -> None:
    serve_history(slack)
    poster, ann = SlackPoster(slack_client(slack)), announcement(catalog)
    assert await poster.was_posted("C1", ann, T1.timestamp()) is False
    await poster.post("C1", ann)
    assert await poster.was_posted("C1", ann, T1.timestamp()) is True


async def test_slack_without_history_access_cannot_tell(
    slack: FakeSlack, catalog: Catalog
) -> None:
    slack.fail_next("conversations.history", "missing_scope")
    poster = SlackPoster(slack_client(slack))
    assert await poster.was_posted("C1", announcement(catalog), T1.timestamp()) is None


class CrashingClient(AsyncWebClient):
    """Dies right after Slack accepted the n-th post (before the bot records it)."""

    def __init__(self, *args: Any, crash_at: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.posts = 0
        self.crash_at = crash_at

    async def chat_postMessage(self, **kwargs: Any) -> Any:
        resp = await super().chat_postMessage(**kwargs)
        self.posts += 1
        if self.posts == self.crash_at:
            raise Crash()
        return resp


async def test_slack_fan_out_after_a_crash_serves_every_channel_once(
    slack: FakeSlack, catalog: Catalog
) -> None:
    serve_history(slack)
    clock = ManualClock(T1)
    store = MemoryPriceStore(clock.time)
    channels = ["C1", "C2", "C3", "C4"]
    targets = [Target(Subscription("slack", c, "slack:T1"), announcement(catalog, "slack", c))
               for c in channels]  # fmt: skip
    crashing = SlackPoster(CrashingClient(token="xoxb-test", base_url=slack.base_url, crash_at=2))
    with pytest.raises(Crash):
        await Fanout(store, {"slack": crashing}, clock, owner="a").run(NEW.id, targets)
    poster = SlackPoster(slack_client(slack))
    result = await Fanout(store, {"slack": poster}, clock, owner="b").run(NEW.id, targets)
    assert {c: len(slack.messages_in(c)) for c in channels} == dict.fromkeys(channels, 1)
    assert result.sent == ["slack:C2", "slack:C3", "slack:C4"]  # C2 found in its history


async def test_slack_fan_out_waits_out_a_rate_limit_on_the_clock(
    slack: FakeSlack, catalog: Catalog
) -> None:
    clock = ManualClock(T1)
    store = MemoryPriceStore(clock.time)
    slack.rate_limit_next("chat.postMessage", retry_after=20)
    target = Target(Subscription("slack", "C1", "slack:T1"), announcement(catalog))
    fanout = Fanout(store, {"slack": SlackPoster(slack_client(slack))}, clock, owner="a",
                    interval_s=1.0)  # fmt: skip
    result = await fanout.run(NEW.id, [target])
    assert result.sent == ["slack:C1"] and clock.slept == [20.0, 1.0]
    assert len(slack.messages_in("C1")) == 1


# -- Discord ----------------------------------------------------------------------------------


@pytest.fixture
async def fake_discord() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as server:
        point_discord_at(server.base_url)
        try:
            yield server
        finally:
            restore_discord_endpoints()


@pytest.fixture
async def client(fake_discord: FakeDiscord) -> AsyncIterator[discord.Client]:
    bot = discord.Client(intents=discord.Intents.default())
    await bot.login("bot-token")
    try:
        yield bot
    finally:
        await bot.close()


def test_discord_embed_is_valid_and_carries_the_key(catalog: Catalog) -> None:
    embed = announcement_embed(announcement(catalog, "discord"))
    assert validate_message({"embeds": [embed.to_dict()]}) == []
    assert embed.colour is not None and embed.colour.value == DOWN_COLOUR
    assert f"ftcost-prices-{NEW.id}" in (embed.footer.text or "")
    assert embed.fields[0].value.startswith("cheapest plan now $")


def test_discord_prices_embed_is_valid(catalog: Catalog) -> None:
    embed = prices_embed(prices_view(NEW, catalog, T1))
    assert validate_message({"embeds": [embed.to_dict()]}) == []


async def test_discord_poster_posts_the_embed(
    fake_discord: FakeDiscord, client: discord.Client, catalog: Catalog
) -> None:
    channel = str(fake_discord.channel_id)
    message_id = await DiscordPoster(client).post(channel, announcement(catalog, "discord"))
    [message] = fake_discord.channel_messages()
    assert message["id"] == message_id
    assert message["embeds"][0]["title"] == "GPU prices changed: 2 cards"


async def test_discord_unknown_channel_is_gone(
    fake_discord: FakeDiscord, client: discord.Client, catalog: Catalog
) -> None:
    fake_discord.mark_channel_gone(fake_discord.channel_id)
    with pytest.raises(ChannelGone, match="Discord 404"):
        await DiscordPoster(client).post(str(fake_discord.channel_id), announcement(catalog))


async def test_discord_missing_access_is_gone(
    fake_discord: FakeDiscord, client: discord.Client, catalog: Catalog
) -> None:
    fake_discord.fail_next("POST", f"/channels/{fake_discord.channel_id}/messages")
    with pytest.raises(ChannelGone, match="Discord 403"):
        await DiscordPoster(client).post(str(fake_discord.channel_id), announcement(catalog))


async def test_discord_fan_out_marks_a_gone_channel_and_serves_the_rest(
    fake_discord: FakeDiscord, client: discord.Client, catalog: Catalog
) -> None:
    clock = ManualClock(T1)
    store = MemoryPriceStore(clock.time)
    good, gone = str(fake_discord.channel_id), "123456789"
    targets = []
    for channel in (good, gone):
        sub = Subscription("discord", channel, "discord:G1")
        await store.save_subscription(sub)
        targets.append(Target(sub, announcement(catalog, "discord", channel)))
    fanout = Fanout(store, {"discord": DiscordPoster(client)}, clock, owner="a")
    result = await fanout.run(NEW.id, targets)
    assert result.sent == [f"discord:{good}"] and result.gone == [f"discord:{gone}"]
    assert (await store.get_subscription("discord", gone)).gone.startswith("Discord 404")  # type: ignore[union-attr]
    assert len(fake_discord.channel_messages()) == 1


# -- who may subscribe ------------------------------------------------------------------------


async def test_slack_workspace_admins_may_manage(slack: FakeSlack) -> None:
    from adapters.slack.delivery import may_manage

    slack.set_admin("U1")
    assert await may_manage(slack_client(slack), "U1") is True
    assert await may_manage(slack_client(slack), "U2") is False
    assert await may_manage(slack_client(slack), None) is False  # no asker: fails closed


async def test_slack_cannot_tell_without_users_read(slack: FakeSlack) -> None:
    from adapters.slack.delivery import may_manage

    slack.fail_next("users.info", "missing_scope")
    assert await may_manage(slack_client(slack), "U1") is None


@pytest.mark.parametrize(
    ("perms", "expected"),
    [
        (discord.Permissions(administrator=True), True),
        (discord.Permissions(manage_guild=True), True),
        (discord.Permissions(manage_channels=True), True),
        (discord.Permissions(send_messages=True, read_messages=True), False),
    ],
)
def test_discord_managers_may_manage(perms: discord.Permissions, expected: bool) -> None:
    from adapters.discord.announce import can_manage

    assert can_manage(perms, in_guild=True) is expected


def test_discord_dms_cannot_tell() -> None:
    from adapters.discord.announce import can_manage

    assert can_manage(discord.Permissions.none(), in_guild=False) is None
