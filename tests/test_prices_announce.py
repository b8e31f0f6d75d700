"""Announcement planning (which channels, which cards, the reference estimate) and the
exactly-once fan-out (crash and restart, gone channels, failures, rate limits)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from adapters.formats import fmt_money
from adapters.parse import parse_query
from bot.announce import (
    Announcement,
    Fanout,
    FanoutResult,
    Target,
    cheapest_plan,
    default_cards,
    plan_announcement,
)
from bot.price_store import AnnouncementState, Subscription
from catalog.price_snapshot import (
    CardPrices,
    CloudQuotes,
    PriceSnapshot,
    Quote,
    TeamPrice,
    TeamSheet,
    snapshot_id,
)
from catalog.prices import priced_catalog
from engine.specs import Catalog
from tests.fakes.clock import ManualClock
from tests.fakes.poster import Crash, FakePoster
from tests.fakes.price_store import MemoryPriceStore

T0 = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
T1 = T0 + timedelta(days=1)
OLD = {"h100-sxm": 3.00, "a100-80gb-sxm": 1.80, "l40s": 1.00}
NEW = {"h100-sxm": 2.40, "a100-80gb-sxm": 1.71, "l40s": 1.03}


def snapshot(at: datetime, prices: dict[str, float], **extra: object) -> PriceSnapshot:
    cards = {
        card: CardPrices(card=card, clouds={"lambda": CloudQuotes(
            on_demand=Quote(price=p, cloud="lambda", region="us-east-1"), as_of=at)})
        for card, p in prices.items()
    }  # fmt: skip
    return PriceSnapshot(id=snapshot_id(at), taken_at=at, cards=cards, **extra)  # type: ignore[arg-type]


def sub(channel: str, pct: float = 5.0, *cards: str, platform: str = "slack") -> Subscription:
    return Subscription(platform, channel, f"{platform}:T1", pct, tuple(cards))


def plan(s: Subscription, catalog: Catalog, **kw: object) -> Announcement | None:
    return plan_announcement(s, snapshot(T0, OLD), snapshot(T1, NEW), catalog, **kw)  # type: ignore[arg-type]


# -- planning -------------------------------------------------------------------------------


def test_cards_that_moved_at_least_the_threshold_are_announced(catalog: Catalog) -> None:
    ann = plan(sub("C1"), catalog)
    assert ann is not None
    assert [(m.card, round(m.percent, 1)) for m in ann.moves] == [
        ("h100-sxm", -20.0),
        ("a100-80gb-sxm", -5.0),
    ]


def test_a_higher_threshold_keeps_fewer_cards(catalog: Catalog) -> None:
    ann = plan(sub("C2", 10.0), catalog)
    assert ann is not None and [m.card for m in ann.moves] == ["h100-sxm"]


def test_nothing_is_announced_under_the_threshold(catalog: Catalog) -> None:
    assert plan(sub("C3", 25.0), catalog) is None


def test_only_the_cards_a_channel_watches_are_announced(catalog: Catalog) -> None:
    ann = plan(sub("C4", 2.0, "l40s"), catalog)
    assert ann is not None and [m.card for m in ann.moves] == ["l40s"]


def test_default_cards_are_the_live_nvidia_ones(catalog: Catalog) -> None:
    cards = default_cards(catalog)
    assert "h100-sxm" in cards and "mi300x" not in cards and "v100-16gb" not in cards


def test_a_move_line_shows_old_new_percent_and_source(catalog: Catalog) -> None:
    ann = plan(sub("C1"), catalog)
    assert ann is not None
    assert ann.moves[0].line() == (
        "h100-sxm $3.00 → $2.40/hr (-20.0%), lowest on-demand across lambda"
    )


def test_the_default_reference_is_70b_qlora_50m_tokens(catalog: Catalog) -> None:
    ann = plan(sub("C1"), catalog)
    assert ann is not None and ann.reference is not None
    assert not ann.reference.from_channel
    assert ann.reference.label == "Llama 3.1 70B · QLoRA, 50M tokens"


def test_the_reference_says_cheapest_plan_now_and_was(catalog: Catalog) -> None:
    ann = plan(sub("C1"), catalog)
    assert ann is not None and ann.reference is not None
    request = parse_query("70b qlora 50M tokens", catalog)
    now = cheapest_plan(request, priced_catalog(catalog, snapshot(T1, NEW)))
    was = cheapest_plan(request, priced_catalog(catalog, snapshot(T0, OLD)))
    assert now is not None and was is not None
    assert ann.reference.sentence().startswith(
        f"cheapest plan now {fmt_money(now.cost_usd)} on {now.cards}, "
        f"was {fmt_money(was.cost_usd)}"
    )


def test_the_channels_last_estimate_is_the_reference(catalog: Catalog) -> None:
    last = parse_query("8b lora 10M tokens", catalog)
    ann = plan(sub("C1"), catalog, last_request=last)
    assert ann is not None and ann.reference is not None
    assert ann.reference.from_channel and ann.reference.label.endswith("LoRA, 10M tokens")


def test_a_last_estimate_without_tokens_falls_back_to_the_default(catalog: Catalog) -> None:
    ann = plan(sub("C1"), catalog, last_request=parse_query("8b lora", catalog))
    assert ann is not None and ann.reference is not None and not ann.reference.from_channel


def test_a_team_sheet_changes_what_its_workspace_sees(catalog: Catalog) -> None:
    sheet = TeamSheet(workspace="slack:T1", location="x", prices={
        "h100-sxm": TeamPrice(price=2.0)}, as_of=T0)  # fmt: skip
    old = snapshot(T0, OLD, team_sheets={"slack:T1": sheet})
    new = snapshot(T1, NEW, team_sheets={"slack:T1": sheet})
    ann = plan_announcement(sub("C1"), old, new, catalog)
    assert ann is not None and [m.card for m in ann.moves] == ["a100-80gb-sxm"]


def test_the_text_fallback_has_every_line(catalog: Catalog) -> None:
    ann = plan(sub("C1"), catalog)
    assert ann is not None
    text = ann.text()
    assert text.startswith("GPU prices changed: 2 cards\n• h100-sxm $3.00 → $2.40/hr")
    assert "reference estimate (Llama 3.1 70B · QLoRA, 50M tokens): cheapest plan now" in text


# -- fan-out --------------------------------------------------------------------------------


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(T1)


@pytest.fixture
def store(clock: ManualClock) -> MemoryPriceStore:
    return MemoryPriceStore(clock.time)


def targets(catalog: Catalog, *channels: str) -> list[Target]:
    out = []
    for channel in channels:
        s = sub(channel)
        ann = plan(s, catalog)
        assert ann is not None
        out.append(Target(s, ann))
    return out


def fanout(store: MemoryPriceStore, poster: FakePoster, clock: ManualClock,
           owner: str = "a", **kw: object) -> Fanout:  # fmt: skip
    return Fanout(store, {"slack": poster}, clock, owner=owner, **kw)  # type: ignore[arg-type]


SID = snapshot_id(T1)
CHANNELS = ("C1", "C2", "C3", "C4", "C5")


async def test_every_channel_gets_one_post(
    store: MemoryPriceStore, clock: ManualClock, catalog: Catalog
) -> None:
    poster = FakePoster()
    result = await fanout(store, poster, clock).run(SID, targets(catalog, *CHANNELS))
    assert poster.channels() == list(CHANNELS) and result.complete
    assert {r.state for r in await store.list_announcements(SID)} == {AnnouncementState.SENT}


async def test_a_second_run_posts_nothing(
    store: MemoryPriceStore, clock: ManualClock, catalog: Catalog
) -> None:
    poster = FakePoster()
    await fanout(store, poster, clock).run(SID, targets(catalog, *CHANNELS))
    again = await fanout(store, poster, clock).run(SID, targets(catalog, *CHANNELS))
    assert len(poster.posted) == 5 and len(again.skipped) == 5


async def test_a_crash_after_a_post_then_a_restart_serves_each_channel_once(
    store: MemoryPriceStore, clock: ManualClock, catalog: Catalog
) -> None:
    poster = FakePoster(crash_after_post=1)
    with pytest.raises(Crash):
        await fanout(store, poster, clock, owner="a").run(SID, targets(catalog, *CHANNELS))
    await fanout(store, poster, clock, owner="b").run(SID, targets(catalog, *CHANNELS))
    assert poster.channels() == list(CHANNELS)
    assert poster.checks == ["C2"]  # only the one in doubt was checked


async def test_a_crash_before_a_post_then_a_restart_posts_it(
    store: MemoryPriceStore, clock: ManualClock, catalog: Catalog
) -> None:
    poster = FakePoster(crash_before_post=2)
    with pytest.raises(Crash):
        await fanout(store, poster, clock, owner="a").run(SID, targets(catalog, *CHANNELS))
    assert poster.channels() == ["C1", "C2"]
    await fanout(store, poster, clock, owner="b").run(SID, targets(catalog, *CHANNELS))
    assert poster.channels() == list(CHANNELS)


async def test_in_doubt_without_a_way_to_check_is_never_posted_twice(
    store: MemoryPriceStore, clock: ManualClock, catalog: Catalog
) -> None:
    poster = FakePoster(crash_before_post=2, can_check=False)
    with pytest.raises(Crash):
        await fanout(store, poster, clock, owner="a").run(SID, targets(catalog, *CHANNELS))
    result = await fanout(store, poster, clock, owner="b").run(SID, targets(catalog, *CHANNELS))
    assert poster.channels() == ["C1", "C2", "C4", "C5"] and result.unconfirmed == ["slack:C3"]


async def test_a_crashed_replicas_lock_blocks_until_it_expires(
    store: MemoryPriceStore, clock: ManualClock, catalog: Catalog
) -> None:
    poster = FakePoster(crash_before_post=1)
    store_lock_release = store.release_lock

    async def crashed_release(name: str, owner: str) -> bool:  # a dead process releases nothing
        return False

    store.release_lock = crashed_release  # type: ignore[method-assign]
    with pytest.raises(Crash):
        await fanout(store, poster, clock, owner="a").run(SID, targets(catalog, *CHANNELS))
    store.release_lock = store_lock_release  # type: ignore[method-assign]
    blocked = await fanout(store, poster, clock, owner="b").run(SID, targets(catalog, *CHANNELS))
    await clock.advance(minutes=11)
    done = await fanout(store, poster, clock, owner="b").run(SID, targets(catalog, *CHANNELS))
    assert blocked.locked_out and done.complete and poster.channels() == list(CHANNELS)


async def test_a_gone_channel_is_marked_and_never_retried(
    store: MemoryPriceStore, clock: ManualClock, catalog: Catalog
) -> None:
    for t in targets(catalog, *CHANNELS):
        await store.save_subscription(t.subscription)
    poster = FakePoster(gone={"C3": "channel_not_found"})
    first = await fanout(store, poster, clock).run(SID, targets(catalog, *CHANNELS))
    await fanout(store, poster, clock).run(SID, targets(catalog, *CHANNELS))
    assert first.gone == ["slack:C3"] and first.complete
    assert (await store.get_subscription("slack", "C3")).gone == "channel_not_found"  # type: ignore[union-attr]
    assert "C3" not in poster.channels() and len(poster.posted) == 4


async def test_a_failed_post_is_retried_on_the_next_run_up_to_the_limit(
    store: MemoryPriceStore, clock: ManualClock, catalog: Catalog
) -> None:
    poster = FakePoster(failing={"C2"})
    results = [
        await fanout(store, poster, clock, max_attempts=2).run(SID, targets(catalog, "C1", "C2"))
        for _ in range(3)
    ]
    record = next(r for r in await store.list_announcements(SID) if r.channel == "C2")
    assert [r.failed for r in results] == [["slack:C2"], ["slack:C2"], []]
    assert (record.state, record.attempts) == (AnnouncementState.FAILED, 2)


async def test_a_post_that_recovers_is_sent_once(
    store: MemoryPriceStore, clock: ManualClock, catalog: Catalog
) -> None:
    poster = FakePoster(failing={"C2"})
    await fanout(store, poster, clock).run(SID, targets(catalog, "C1", "C2"))
    poster.failing.clear()
    result = await fanout(store, poster, clock).run(SID, targets(catalog, "C1", "C2"))
    assert result.sent == ["slack:C2"] and poster.channels() == ["C1", "C2"]


async def test_a_rate_limit_waits_its_retry_after_then_posts(
    store: MemoryPriceStore, clock: ManualClock, catalog: Catalog
) -> None:
    poster = FakePoster(retry_after=7.0)
    poster.rate_limits["C1"] = 2
    result = await fanout(store, poster, clock, interval_s=0).run(SID, targets(catalog, "C1"))
    assert result.sent == ["slack:C1"] and clock.slept == [7.0, 7.0, 0]


async def test_a_long_rate_limit_wait_keeps_the_lock_so_no_replica_posts_twice(
    store: MemoryPriceStore, clock: ManualClock, catalog: Catalog
) -> None:
    poster = FakePoster(retry_after=700.0)  # longer than the fan-out lock's 600 s
    poster.rate_limits["C1"] = 1
    other: list[FanoutResult] = []

    class ReplicaDuringTheWait(ManualClock):
        async def sleep(self, seconds: float) -> None:
            await super().sleep(seconds)
            if seconds > 0 and not other:  # another replica resumes meanwhile
                other.append(await fanout(store, poster, clock, owner="b").run(
                    SID, targets(catalog, "C1")))

    clock = ReplicaDuringTheWait(clock.now())
    store = MemoryPriceStore(clock.time)
    result = await fanout(store, poster, clock, interval_s=0, lock_ttl_s=600.0).run(
        SID, targets(catalog, "C1"))
    assert other[0].locked_out and result.sent == ["slack:C1"]
    assert poster.channels() == ["C1"] and clock.slept[0] == 300.0


async def test_endless_rate_limits_give_up_for_this_run(
    store: MemoryPriceStore, clock: ManualClock, catalog: Catalog
) -> None:
    poster = FakePoster()
    poster.rate_limits["C1"] = 100
    result = await fanout(store, poster, clock, max_rate_limit_waits=3).run(
        SID, targets(catalog, "C1")
    )
    assert result.failed == ["slack:C1"] and not result.complete


async def test_posts_are_paced(
    store: MemoryPriceStore, clock: ManualClock, catalog: Catalog
) -> None:
    poster = FakePoster()
    await fanout(store, poster, clock, interval_s=1.5).run(SID, targets(catalog, "C1", "C2"))
    assert clock.slept == [1.5, 1.5]


async def test_a_platform_without_a_poster_here_is_left_for_another_replica(
    store: MemoryPriceStore, clock: ManualClock, catalog: Catalog
) -> None:
    s = sub("D1", platform="discord")
    ann = plan(s, catalog)
    assert ann is not None
    result = await fanout(store, FakePoster(), clock).run(SID, [Target(s, ann)])
    assert result.elsewhere == ["discord:D1"] and await store.list_announcements(SID) == []
    assert result.done_here and not result.complete  # the snapshot stays unannounced
