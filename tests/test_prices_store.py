"""The store's price records, one contract for every store backend (SQLite, Redis: the
``make_store`` fixture of ``tests/conftest.py``) and the in-memory fake the job tests use:
snapshots, subscriptions, announcement claims."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta

import pytest

from bot.price_store import AnnouncementState, PriceStore, Subscription
from bot.store import Store
from tests.fakes.clock import ManualClock
from tests.fakes.price_store import MemoryPriceStore

T0 = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(T0)


@pytest.fixture
def store_clock(clock: ManualClock) -> ManualClock:
    """The backends' clock is this module's ``clock``."""
    return clock


@pytest.fixture(params=["sqlite", "redis", "memory"])
def store_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def store(
    store_backend: str, clock: ManualClock, request: pytest.FixtureRequest
) -> AsyncIterator[PriceStore]:
    if store_backend == "memory":
        yield MemoryPriceStore(clock.time)
        return
    make_store: Callable[[], Store] = request.getfixturevalue("make_store")
    async with make_store() as opened:
        yield opened


async def test_the_latest_snapshot_is_the_newest(store: PriceStore) -> None:
    await store.save_price_snapshot("b", 200.0, "a", '{"b": 1}')
    await store.save_price_snapshot("a", 100.0, None, '{"a": 1}')
    latest = await store.latest_price_snapshot()
    assert latest is not None and (latest.id, latest.previous_id, latest.announced) == (
        "b", "a", False,
    )  # fmt: skip


async def test_no_snapshot_yet(store: PriceStore) -> None:
    assert await store.latest_price_snapshot() is None


async def test_saving_a_snapshot_twice_keeps_the_first(store: PriceStore) -> None:
    await store.save_price_snapshot("a", 100.0, None, "first")
    await store.save_price_snapshot("a", 100.0, None, "second")
    got = await store.get_price_snapshot("a")
    assert got is not None and got.document == "first"


async def test_a_snapshot_is_marked_announced(store: PriceStore) -> None:
    await store.save_price_snapshot("a", 100.0, None, "{}")
    await store.mark_snapshot_announced("a")
    got = await store.get_price_snapshot("a")
    assert got is not None and got.announced


async def test_a_subscription_round_trips(store: PriceStore) -> None:
    sub = Subscription("slack", "C1", "slack:T1", 7.5, ("h100-sxm", "l40s"), "U1", 10.0)
    await store.save_subscription(sub)
    assert await store.get_subscription("slack", "C1") == sub


async def test_subscribing_again_replaces_and_clears_gone(store: PriceStore) -> None:
    await store.save_subscription(Subscription("slack", "C1", "slack:T1"))
    await store.mark_subscription_gone("slack", "C1", "channel_not_found")
    gone = await store.get_subscription("slack", "C1")
    await store.save_subscription(Subscription("slack", "C1", "slack:T1", 10.0))
    again = await store.get_subscription("slack", "C1")
    assert gone is not None and gone.gone == "channel_not_found"
    assert again is not None and (again.gone, again.min_change_pct) == (None, 10.0)


async def test_subscriptions_are_listed_oldest_first(store: PriceStore) -> None:
    await store.save_subscription(Subscription("slack", "C2", "w", created_at=2.0))
    await store.save_subscription(Subscription("discord", "9", "w", created_at=1.0))
    assert [s.channel for s in await store.list_subscriptions()] == ["9", "C2"]


async def test_unsubscribing_removes_only_that_channel(store: PriceStore) -> None:
    await store.save_subscription(Subscription("slack", "C1", "w"))
    await store.save_subscription(Subscription("slack", "C2", "w"))
    assert await store.remove_subscription("slack", "C1") is True
    assert await store.remove_subscription("slack", "C1") is False
    assert [s.channel for s in await store.list_subscriptions()] == ["C2"]


async def test_a_claim_is_granted_once(store: PriceStore) -> None:
    first = await store.claim_announcement("s1", "slack", "C1", 3)
    second = await store.claim_announcement("s1", "slack", "C1", 3)
    assert first is not None and (first.state, first.attempts) == (AnnouncementState.SENDING, 1)
    assert second is None


async def test_a_claim_records_the_store_time(store: PriceStore, clock: ManualClock) -> None:
    await clock.advance(seconds=42)
    claim = await store.claim_announcement("s1", "slack", "C1", 3)
    assert claim is not None and claim.claimed_at == (T0 + timedelta(seconds=42)).timestamp()


async def test_a_failed_announcement_is_claimable_until_attempts_run_out(
    store: PriceStore,
) -> None:
    attempts = []
    for _ in range(3):
        claim = await store.claim_announcement("s1", "slack", "C1", 2)
        attempts.append(claim.attempts if claim else None)
        await store.finish_announcement("s1", "slack", "C1", AnnouncementState.FAILED,
                                        detail="HTTP 500")  # fmt: skip
    assert attempts == [1, 2, None]


@pytest.mark.parametrize(
    "state", [AnnouncementState.SENT, AnnouncementState.GONE, AnnouncementState.UNCONFIRMED]
)
async def test_a_settled_announcement_is_never_claimed_again(
    store: PriceStore, state: AnnouncementState
) -> None:
    await store.claim_announcement("s1", "slack", "C1", 3)
    await store.finish_announcement("s1", "slack", "C1", state, message_id="m1")
    assert await store.claim_announcement("s1", "slack", "C1", 3) is None


async def test_announcements_are_listed_per_snapshot(store: PriceStore) -> None:
    await store.claim_announcement("s1", "slack", "C1", 3)
    await store.claim_announcement("s1", "discord", "9", 3)
    await store.claim_announcement("s2", "slack", "C1", 3)
    await store.finish_announcement("s1", "slack", "C1", AnnouncementState.SENT, "ts1")
    records = {(r.platform, r.channel): r for r in await store.list_announcements("s1")}
    assert set(records) == {("slack", "C1"), ("discord", "9")}
    assert (records[("slack", "C1")].state, records[("slack", "C1")].message_id) == (
        AnnouncementState.SENT, "ts1",
    )  # fmt: skip



async def test_a_reclaim_clears_the_failure_detail(store: PriceStore) -> None:
    await store.claim_announcement("s1", "slack", "C1", 3)
    await store.finish_announcement("s1", "slack", "C1", AnnouncementState.FAILED,
                                    detail="HTTP 500")  # fmt: skip
    again = await store.claim_announcement("s1", "slack", "C1", 3)
    assert again is not None and (again.state, again.finished_at, again.detail) == (
        AnnouncementState.SENDING, None, None,
    )  # fmt: skip


async def test_finishing_records_the_outcome_and_time(
    store: PriceStore, clock: ManualClock
) -> None:
    await store.claim_announcement("s1", "slack", "C1", 3)
    await clock.advance(seconds=3)
    await store.finish_announcement("s1", "slack", "C1", AnnouncementState.SENT, "ts1")
    (record,) = await store.list_announcements("s1")
    assert (record.state, record.message_id, record.detail, record.finished_at) == (
        AnnouncementState.SENT, "ts1", None, (T0 + timedelta(seconds=3)).timestamp(),
    )  # fmt: skip


@pytest.mark.parametrize("store_backend", ["sqlite", "redis"], indirect=True)
async def test_racing_claims_from_replicas_grant_one(make_store: Callable[[], Store]) -> None:
    async with make_store() as a, make_store() as b:
        claims = await asyncio.gather(
            *(s.claim_announcement("s1", "slack", "C1", 3) for s in [a, b] * 5)
        )
    assert sum(c is not None for c in claims) == 1


async def test_marking_an_unknown_snapshot_or_subscription_creates_nothing(
    store: PriceStore,
) -> None:
    await store.mark_snapshot_announced("nope")
    await store.mark_subscription_gone("slack", "C9", "channel_not_found")
    assert await store.get_price_snapshot("nope") is None
    assert await store.get_subscription("slack", "C9") is None
