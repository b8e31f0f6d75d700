"""A price announcement's thread holds its reference estimate: a change asked there ("what
if h200?") changes that estimate, a whole question is answered as asked, and chatter about
the prices stays unanswered. The fan-out keeps the reference request beside each posted
announcement for the store's thread lifetime; keeping it never changes the post's outcome.

The Slack tests drive the real bot (its aiohttp server, the real bolt app, the local Slack
Web API stand-in, signed requests) on a real SQLite store, with the announcement posted by
the real fan-out and Slack poster.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from adapters.slack.announce import SlackPoster
from bot.announce import Fanout, FanoutResult, Target, plan_announcement
from bot.announcement_thread import announcement_cache_key, announcement_request
from bot.price_store import Subscription
from bot.store_types import StoreUnavailable, ThreadKey
from engine.specs import Catalog
from tests.fakes import FakeSlack
from tests.fakes.clock import ManualClock
from tests.fakes.poster import FakePoster
from tests.fakes.price_store import MemoryPriceStore
from tests.slack_harness import Harness, in_thread, reply_in_thread
from tests.test_prices_platforms import NEW, OLD, T1, announcement

DAY_S = 86400.0


# -- the fan-out keeps the reference ---------------------------------------------------------
async def post(
    catalog: Catalog, store: MemoryPriceStore | None = None, platform: str = "slack",
    threads: bool = True, **fanout: object,
) -> tuple[MemoryPriceStore, FanoutResult]:
    """One announcement posted to channel C1 (message id ``C1-1``) through the fan-out."""
    store = store if store is not None else MemoryPriceStore(ManualClock(T1).time)
    ann = announcement(catalog, platform)
    poster = FakePoster(platform=platform, threads=threads)
    result = await Fanout(store, {platform: poster}, ManualClock(T1), owner="a",
                          **fanout).run(  # type: ignore[arg-type]
        ann.snapshot_id, [Target(Subscription(platform, "C1", f"{platform}:T1"), ann)])
    return store, result


async def test_a_posted_announcement_keeps_its_reference_request_for_its_thread(
    catalog: Catalog,
) -> None:
    store, _ = await post(catalog)

    kept = await announcement_request(store, ThreadKey("slack", "C1", "C1-1"))
    reference = announcement(catalog).reference
    assert reference is not None and kept == reference.request


async def test_the_reference_is_kept_as_long_as_the_store_keeps_threads(
    catalog: Catalog,
) -> None:
    store, _ = await post(catalog, thread_ttl_s=7 * DAY_S)

    _, expires = store.cache[announcement_cache_key(ThreadKey("slack", "C1", "C1-1"))]
    assert expires == pytest.approx(ManualClock(T1).time() + 7 * DAY_S)


async def test_a_store_that_cannot_keep_the_reference_leaves_the_announcement_sent(
    catalog: Catalog,
) -> None:
    class NoCache(MemoryPriceStore):
        async def cache_put(self, key: str, value: str, ttl_s: float) -> None:
            raise ConnectionError("store went away")

    _, result = await post(catalog, NoCache(ManualClock(T1).time))

    assert result.sent == ["slack:C1"] and result.complete


async def test_another_thread_has_no_announcement_reference(catalog: Catalog) -> None:
    store, _ = await post(catalog)

    assert await announcement_request(store, ThreadKey("slack", "C1", "C1-2")) is None
    assert await announcement_request(store, ThreadKey("slack", "C2", "C1-1")) is None


async def test_a_platform_that_reads_no_replies_under_announcements_keeps_nothing(
    catalog: Catalog,
) -> None:
    store, result = await post(catalog, platform="discord", threads=False)

    assert result.sent == ["discord:C1"] and store.cache == {}


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


async def test_a_change_under_an_announcement_changes_its_reference_estimate(
    bot: Harness, slack: FakeSlack, catalog: Catalog
) -> None:
    thread = await announce(bot, slack, catalog)

    await reply_in_thread(bot, "what if h200", thread, "EvA1")

    [answer] = in_thread(slack, "chat.postMessage", thread)
    assert "Llama 3.1 70B" in answer and "QLoRA" in answer and "h200" in answer.lower()
    assert "no longer kept" not in answer
    assert in_thread(slack, "chat.postEphemeral", thread) == []


async def test_the_answer_under_an_announcement_becomes_the_threads_estimate(
    bot: Harness, slack: FakeSlack, catalog: Catalog
) -> None:
    thread = await announce(bot, slack, catalog)

    await reply_in_thread(bot, "what if h200", thread, "EvA2")
    await reply_in_thread(bot, "what if 8k seq", thread, "EvA3")

    context = await bot.store.get_thread(ThreadKey("slack", "C1", thread))
    assert context is not None and context.request.gpu == "h200-sxm"
    assert context.request.seq_len == 8192


async def test_chatter_under_an_announcement_stays_unanswered(
    bot: Harness, slack: FakeSlack, catalog: Catalog
) -> None:
    thread = await announce(bot, slack, catalog)

    await reply_in_thread(bot, "nice, H100s got cheaper!", thread, "EvA4")

    assert in_thread(slack, "chat.postMessage", thread) == []
    assert in_thread(slack, "chat.postEphemeral", thread) == []


async def test_a_store_outage_under_an_announcement_is_answered_as_an_outage(
    bot: Harness, slack: FakeSlack, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    thread = await announce(bot, slack, catalog)

    async def unreachable(key: str) -> str | None:
        raise StoreUnavailable("redis is down")

    monkeypatch.setattr(bot.store, "cache_get", unreachable)
    await reply_in_thread(bot, "what if h200", thread, "EvA5")

    [notice] = in_thread(slack, "chat.postEphemeral", thread)
    assert "Context unavailable" in notice and "no longer kept" not in notice
