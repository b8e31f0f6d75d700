"""Unreadable price records in the store (a hand edit, a disk fault, another schema): a
corrupt snapshot or subscription is skipped with a logged warning and kept as stored, and
the refresh and the announcements go on. Every backend (``make_store``: SQLite, Redis)."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Protocol

import pytest
import redis

from bot.price_service import PriceCommands, PriceContext, PriceReplyKind
from bot.price_store import Subscription, UnreadableRecord
from bot.prices import Fetch, PriceBook, PriceJob, PricesConfig
from bot.store import Store
from catalog.price_build import CloudFetch, build_snapshot
from catalog.price_snapshot import PriceSnapshot
from catalog.price_sources import PriceSettings
from catalog.skypilot import parse_vms_csv
from engine.specs import Catalog
from tests.fakes.clock import ManualClock
from tests.fakes.poster import FakePoster

DAY0 = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
CSV = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,"
       "SpotPrice\ngpu_1x_h100_sxm5,H100,1.0,26.0,200.0,{price},us-east-1,,\n")  # fmt: skip
CONFIG = PricesConfig(clouds=(), announce_interval_s=0)


class Vandal(Protocol):
    """Writes over a stored record behind the store's back, as a hand edit would."""

    def snapshot_document(self, snapshot_id: str, text: str) -> None: ...

    def subscription_cards(self, platform: str, channel: str, text: str) -> None: ...

    def subscription_cards_of(self, platform: str, channel: str) -> str | None: ...


class SQLiteVandal:
    def __init__(self, path: Path) -> None:
        self.path = path

    def _execute(self, sql: str, *args: str) -> list[tuple[str, ...]]:
        conn = sqlite3.connect(self.path)
        try:
            with conn:
                return conn.execute(sql, args).fetchall()
        finally:
            conn.close()

    def snapshot_document(self, snapshot_id: str, text: str) -> None:
        self._execute("UPDATE price_snapshots SET document = ? WHERE id = ?", text, snapshot_id)

    def subscription_cards(self, platform: str, channel: str, text: str) -> None:
        self._execute("UPDATE subscriptions SET cards = ? WHERE platform = ? AND channel = ?",
                      text, platform, channel)  # fmt: skip

    def subscription_cards_of(self, platform: str, channel: str) -> str | None:
        rows = self._execute("SELECT cards FROM subscriptions WHERE platform = ? AND "
                             "channel = ?", platform, channel)  # fmt: skip
        return rows[0][0] if rows else None


class RedisVandal:
    """The key layout of ``bot/store_redis.py`` (its module docstring)."""

    def __init__(self, url: str, prefix: str) -> None:
        self.url, self.prefix = url, prefix

    def _hset(self, key: str, field: str, value: str) -> None:
        client = redis.Redis.from_url(self.url, decode_responses=True)
        try:
            client.hset(self.prefix + key, field, value)
        finally:
            client.close()

    def snapshot_document(self, snapshot_id: str, text: str) -> None:
        self._hset(f"price:snapshot:{snapshot_id}", "document", text)

    def subscription_cards(self, platform: str, channel: str, text: str) -> None:
        self._hset(f"price:sub:{platform}:{channel}", "cards", text)

    def subscription_cards_of(self, platform: str, channel: str) -> str | None:
        client = redis.Redis.from_url(self.url, decode_responses=True)
        try:
            value = client.hget(f"{self.prefix}price:sub:{platform}:{channel}", "cards")
        finally:
            client.close()
        return None if value is None else str(value)


@pytest.fixture
def clock(store_clock: ManualClock) -> ManualClock:
    return store_clock


@pytest.fixture
def vandal(store_backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Vandal:
    if store_backend == "sqlite":
        return SQLiteVandal(tmp_path / "store.sqlite3")  # make_store's file
    return RedisVandal(request.getfixturevalue("redis_url"),
                       request.getfixturevalue("redis_prefix"))  # fmt: skip


@pytest.fixture
async def store(make_store: Callable[[], Store]) -> AsyncIterator[Store]:
    async with make_store() as opened:
        yield opened


def fetch_at(prices: dict[str, float]) -> Fetch:
    async def fetch(settings: PriceSettings, catalog: Catalog, previous: PriceSnapshot | None,
                    now: datetime) -> PriceSnapshot:  # fmt: skip
        csv = CSV.format(price=prices["h100"])
        return build_snapshot(taken_at=now, previous=previous, teams=[],
                              clouds=[CloudFetch("lambda", "lambda", parse_vms_csv(csv, "lambda"))])

    return fetch


def job(store: Store, catalog: Catalog, clock: ManualClock, prices: dict[str, float],
        poster: FakePoster | None = None) -> PriceJob:  # fmt: skip
    return PriceJob(store, PriceBook(catalog, CONFIG), CONFIG, clock, owner="a",
                    posters={"slack": poster} if poster else {}, fetch=fetch_at(prices))


# -- snapshots --------------------------------------------------------------------------------
async def test_an_unreadable_latest_snapshot_is_skipped_for_the_readable_one_before_it(
    store: Store, vandal: Vandal, caplog: pytest.LogCaptureFixture
) -> None:
    await store.save_price_snapshot("old", 100.0, None, '{"a": 1}')
    await store.save_price_snapshot("new", 200.0, "old", '{"b": 1}')
    vandal.snapshot_document("new", "{not json")

    with caplog.at_level(logging.WARNING, logger="ftcost.store"):
        latest = await store.latest_price_snapshot()

    assert latest is not None and latest.id == "old"
    assert "unreadable price snapshot 'new'" in caplog.text
    kept = await store.get_price_snapshot("new")  # kept as it is, never deleted
    assert kept is not None and kept.document == "{not json"


async def test_the_refresh_goes_on_past_an_unreadable_snapshot(
    store: Store, vandal: Vandal, catalog: Catalog, clock: ManualClock
) -> None:
    prices = {"h100": 2.5}
    first = await job(store, catalog, clock, prices).run(DAY0)
    assert first.snapshot is not None
    vandal.snapshot_document(first.snapshot.id, "{not json")
    await clock.advance(days=1)

    restarted = job(store, catalog, clock, prices)
    outcome = await restarted.startup()  # the only snapshot is unreadable: refresh now

    assert outcome is not None and outcome.status == "refreshed"
    latest = await store.latest_price_snapshot()
    assert latest is not None and latest.id != first.snapshot.id
    assert restarted.book.snapshot is not None and restarted.book.snapshot.id == latest.id
    assert (await restarted.run(DAY0 + timedelta(days=2))).status == "refreshed"


# -- subscriptions ----------------------------------------------------------------------------
async def subscribe_two(store: Store) -> None:
    await store.save_subscription(Subscription("slack", "C_GOOD", "slack:T1", 1.0))
    await store.save_subscription(Subscription("slack", "C_BAD", "slack:T1", 1.0))


async def test_an_unreadable_subscription_is_left_out_of_the_list_with_a_warning(
    store: Store, vandal: Vandal, caplog: pytest.LogCaptureFixture
) -> None:
    await subscribe_two(store)
    vandal.subscription_cards("slack", "C_BAD", "[h100")

    with caplog.at_level(logging.WARNING, logger="ftcost.store"):
        subs = await store.list_subscriptions()

    assert [s.channel for s in subs] == ["C_GOOD"]
    assert "C_BAD" in caplog.text and "cards is not JSON" in caplog.text
    assert vandal.subscription_cards_of("slack", "C_BAD") == "[h100"  # kept as stored


@pytest.mark.parametrize("cards", ["[h100", '"h100"', "[1, 2]", "{}"])
async def test_getting_an_unreadable_subscription_raises_unreadable_record(
    store: Store, vandal: Vandal, cards: str
) -> None:
    await subscribe_two(store)
    vandal.subscription_cards("slack", "C_BAD", cards)

    with pytest.raises(UnreadableRecord, match="cards"):
        await store.get_subscription("slack", "C_BAD")


async def test_the_other_channels_are_announced_past_an_unreadable_subscription(
    store: Store, vandal: Vandal, catalog: Catalog, clock: ManualClock
) -> None:
    prices, poster = {"h100": 2.5}, FakePoster()
    refresh = job(store, catalog, clock, prices, poster)
    await refresh.run(DAY0)
    await subscribe_two(store)
    vandal.subscription_cards("slack", "C_BAD", "[h100")
    prices["h100"] = 2.0
    await clock.advance(days=1)

    outcome = await refresh.run(DAY0 + timedelta(days=1))

    assert outcome.announcements is not None and outcome.announcements.sent == ["slack:C_GOOD"]
    assert [channel for channel, _ in poster.posted] == ["C_GOOD"]


async def test_prices_in_a_channel_with_an_unreadable_subscription_says_so(
    store: Store, vandal: Vandal, catalog: Catalog, clock: ManualClock
) -> None:
    await subscribe_two(store)
    vandal.subscription_cards("slack", "C_BAD", "[h100")
    commands = PriceCommands(store, PriceBook(catalog), clock)

    reply = await commands.handle("prices", PriceContext("slack", "C_BAD", "slack:T1", "U1"))

    assert reply is not None and reply.kind is PriceReplyKind.PRICES
    assert reply.subscription is None
    assert "could not be read" in reply.text and "/ftcost subscribe" in reply.text
    assert vandal.subscription_cards_of("slack", "C_BAD") == "[h100"


async def test_an_unreadable_subscription_names_the_configured_slash_command(
    store: Store, vandal: Vandal, catalog: Catalog, clock: ManualClock
) -> None:
    await subscribe_two(store)
    vandal.subscription_cards("slack", "C_BAD", "[h100")
    commands = PriceCommands(store, PriceBook(catalog), clock)

    reply = await commands.handle("prices", PriceContext("slack", "C_BAD", "slack:T1", "U1"),
                                  "/cost")  # fmt: skip

    assert reply is not None and "`/cost subscribe" in reply.text and "/ftcost" not in reply.text
