"""A price announcement's thread holds its reference estimate: a change asked there ("what
if h200?") changes that estimate, a whole question is answered as asked, and chatter about
the prices stays unanswered. The fan-out keeps the reference request beside each posted
announcement for the store's thread lifetime; keeping it never changes the post's outcome.

The Slack tests drive the real bot (its aiohttp server, the real bolt app, the local Slack
Web API stand-in, signed requests) on a real SQLite store, with the announcement posted by
the real fan-out and Slack poster.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from adapters.slack.announce import SlackPoster
from bot.announce import Fanout, Target, plan_announcement
from bot.announcement_thread import announcement_cache_key, announcement_request
from bot.price_store import Subscription
from bot.store_types import StoreUnavailable, ThreadKey
from engine.specs import Catalog
from tests.fakes import FakeSlack, event_body, message_event
from tests.fakes.clock import ManualClock
from tests.fakes.poster import FakePoster
from tests.fakes.price_store import MemoryPriceStore
from tests.fakes.slack_signing import BOT_USER_ID
from tests.slack_harness import Harness, StartBot, http_bot_config, starting
from tests.test_prices_platforms import NEW, OLD, T1, announcement

DAY_S = 86400.0


# -- the fan-out keeps the reference ---------------------------------------------------------
async def test_a_posted_announcement_keeps_its_reference_request_for_its_thread(
    catalog: Catalog,
) -> None:
    clock = ManualClock(T1)
    store = MemoryPriceStore(clock.time)
    ann = announcement(catalog)
    poster = FakePoster()

    await Fanout(store, {"slack": poster}, clock, owner="a").run(
        ann.snapshot_id, [Target(Subscription("slack", "C1", "slack:T1"), ann)])

    kept = await announcement_request(store, ThreadKey("slack", "C1", "C1-1"))
    assert ann.reference is not None and kept == ann.reference.request


async def test_the_reference_is_kept_as_long_as_the_store_keeps_threads(
    catalog: Catalog,
) -> None:
    clock = ManualClock(T1)
    store = MemoryPriceStore(clock.time)
    ann = announcement(catalog)

    await Fanout(store, {"slack": FakePoster()}, clock, owner="a", thread_ttl_s=7 * DAY_S).run(
        ann.snapshot_id, [Target(Subscription("slack", "C1", "slack:T1"), ann)])

    _, expires = store.cache[announcement_cache_key(ThreadKey("slack", "C1", "C1-1"))]
    assert expires == pytest.approx(clock.time() + 7 * DAY_S)


async def test_a_store_that_cannot_keep_the_reference_leaves_the_announcement_sent(
    catalog: Catalog,
) -> None:
    class NoCache(MemoryPriceStore):
        async def cache_put(self, key: str, value: str, ttl_s: float) -> None:
            raise ConnectionError("store went away")

    clock = ManualClock(T1)
    store = NoCache(clock.time)
    ann = announcement(catalog)

    result = await Fanout(store, {"slack": FakePoster()}, clock, owner="a").run(
        ann.snapshot_id, [Target(Subscription("slack", "C1", "slack:T1"), ann)])

    assert result.sent == ["slack:C1"] and result.complete


async def test_another_thread_has_no_announcement_reference(catalog: Catalog) -> None:
    clock = ManualClock(T1)
    store = MemoryPriceStore(clock.time)
    ann = announcement(catalog)
    await Fanout(store, {"slack": FakePoster()}, clock, owner="a").run(
        ann.snapshot_id, [Target(Subscription("slack", "C1", "slack:T1"), ann)])

    assert await announcement_request(store, ThreadKey("slack", "C1", "C1-2")) is None
    assert await announcement_request(store, ThreadKey("slack", "C2", "C1-1")) is None


async def test_a_platform_that_reads_no_replies_under_announcements_keeps_nothing(
    catalog: Catalog,
) -> None:
    clock = ManualClock(T1)
    store = MemoryPriceStore(clock.time)
    ann = announcement(catalog, "discord")
    poster = FakePoster(platform="discord", threads=False)

    await Fanout(store, {"discord": poster}, clock, owner="a").run(
        ann.snapshot_id, [Target(Subscription("discord", "C1", "discord:T1"), ann)])

    assert store.cache == {}


def test_the_reference_is_on_the_plans_card_when_the_plan_kept_to_the_channels_cards(
    catalog: Catalog,
) -> None:
    sub = Subscription("slack", "C1", "slack:T1", cards=("h100-sxm",))

    ann = plan_announcement(sub, OLD, NEW, catalog)

    assert ann is not None and ann.reference is not None
    assert ann.reference.request is not None and ann.reference.request.gpu == "h100-sxm"


def test_the_reference_keeps_to_no_card_when_the_plan_chose_among_all(
    catalog: Catalog,
) -> None:
    ann = announcement(catalog)

    assert ann.reference is not None and ann.reference.request is not None
    assert ann.reference.request.gpu is None


# -- replies in the announcement's Slack thread ----------------------------------------------
@pytest.fixture
async def start_bot(slack: FakeSlack, tmp_path: Path) -> AsyncIterator[StartBot]:
    async with starting(lambda: http_bot_config(slack, tmp_path)) as start:
        yield start


@pytest.fixture
async def bot(start_bot: StartBot) -> Harness:
    return await start_bot()


async def announce(bot: Harness, slack: FakeSlack, catalog: Catalog) -> str:
    """The real fan-out posts an announcement to C1 through the bot's own client and
    store; the announcement's ts (its thread)."""
    ann = announcement(catalog)
    poster = SlackPoster(bot.bot.client)
    result = await Fanout(bot.store, {"slack": poster}, ManualClock(datetime.now(UTC)),
                          owner="test").run(
        ann.snapshot_id, [Target(Subscription("slack", "C1", "slack:T1"), ann)])
    assert result.sent == ["slack:C1"]
    return str(slack.calls_to("chat.postMessage", ok=True)[-1].response["ts"])


async def reply(bot: Harness, text: str, thread_ts: str, event_id: str) -> None:
    """A person's reply in the thread under the bot's announcement."""
    event = message_event(text, ts=f"{time.time():.6f}", thread_ts=thread_ts)
    event["parent_user_id"] = BOT_USER_ID
    status, _ = await bot.post(event_body(event, event_id=event_id))
    assert status == 200
    await bot.settle()


def in_thread(slack: FakeSlack, method: str, thread_ts: str) -> list[str]:
    return [json.dumps(c.args.get("blocks"), ensure_ascii=False)
            for c in slack.calls_to(method) if c.args.get("thread_ts") == thread_ts]


async def test_a_change_under_an_announcement_changes_its_reference_estimate(
    bot: Harness, slack: FakeSlack, catalog: Catalog
) -> None:
    thread = await announce(bot, slack, catalog)

    await reply(bot, "what if h200", thread, "EvA1")

    [answer] = in_thread(slack, "chat.postMessage", thread)
    assert "Llama 3.1 70B" in answer and "QLoRA" in answer and "h200" in answer.lower()
    assert "no longer kept" not in answer
    assert in_thread(slack, "chat.postEphemeral", thread) == []


async def test_the_answer_under_an_announcement_becomes_the_threads_estimate(
    bot: Harness, slack: FakeSlack, catalog: Catalog
) -> None:
    thread = await announce(bot, slack, catalog)

    await reply(bot, "what if h200", thread, "EvA2")
    await reply(bot, "what if 8k seq", thread, "EvA3")

    context = await bot.store.get_thread(ThreadKey("slack", "C1", thread))
    assert context is not None and context.request.gpu == "h200-sxm"
    assert context.request.seq_len == 8192


async def test_chatter_under_an_announcement_stays_unanswered(
    bot: Harness, slack: FakeSlack, catalog: Catalog
) -> None:
    thread = await announce(bot, slack, catalog)

    await reply(bot, "nice, H100s got cheaper!", thread, "EvA4")

    assert in_thread(slack, "chat.postMessage", thread) == []
    assert in_thread(slack, "chat.postEphemeral", thread) == []


async def test_a_store_outage_under_an_announcement_is_answered_as_an_outage(
    bot: Harness, slack: FakeSlack, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    thread = await announce(bot, slack, catalog)

    async def unreachable(key: str) -> str | None:
        raise StoreUnavailable("redis is down")

    monkeypatch.setattr(bot.store, "cache_get", unreachable)
    await reply(bot, "what if h200", thread, "EvA5")

    [notice] = in_thread(slack, "chat.postEphemeral", thread)
    assert "Context unavailable" in notice and "no longer kept" not in notice
