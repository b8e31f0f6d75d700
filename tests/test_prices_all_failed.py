"""Price refreshes that got nothing, and stored price records the job or the store can no
longer read.

* A refresh in which every source failed counts as failed (metrics, log), stores nothing,
  keeps the previous snapshot in force, and leaves its scheduled time to be tried again.
* A stored snapshot that is a JSON object but no longer validates as a ``PriceSnapshot``
  (a later version's field, a hand edit) never crashes the job: logged, kept, not used.
* An announcement record with a state this version does not know (or a broken Redis index
  entry) is skipped with a warning and kept, on every store backend, and its channel is
  not posted to again.

The refresh runs against the local SkyPilot-catalog stand-in (``PriceServer``) with the
real ``refresh_prices``; time is a manual clock.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path

import pytest
import redis

from bot.announce import Fanout, Target, plan_announcement
from bot.metrics import sample
from bot.price_store import AnnouncementState, Subscription
from bot.store import Store
from bot.store_sqlite import SQLiteStore
from catalog.price_snapshot import CardPrices, CloudQuotes, PriceSnapshot, Quote, snapshot_id
from engine.specs import Catalog
from tests.fakes.clock import ManualClock
from tests.fakes.poster import FakePoster
from tests.fakes.price_server import PriceServer
from tests.price_refresh import CLOUDS, DAY0, DAY1, make_job

RUNS = "ftcost_price_refresh_runs_total"


@pytest.fixture
def server(price_server: PriceServer) -> PriceServer:
    return price_server


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(DAY0)


@pytest.fixture
def sqlite_path(tmp_path: Path) -> Path:
    return tmp_path / "prices.sqlite3"


@pytest.fixture
async def sqlite(sqlite_path: Path, clock: ManualClock) -> AsyncIterator[SQLiteStore]:
    async with SQLiteStore(sqlite_path, clock=clock.time) as opened:
        yield opened


def execute(path: Path, sql: str, *args: str) -> None:
    """Write behind the store's back, as a hand edit would."""
    conn = sqlite3.connect(path)
    try:
        with conn:
            conn.execute(sql, args)
    finally:
        conn.close()


def fail_every_source(server: PriceServer) -> None:
    for cloud in CLOUDS:
        server.fail(cloud, 500)


def later_version(snapshot: PriceSnapshot) -> str:
    """``snapshot``'s document as a later version might write it: a field this one lacks."""
    return json.dumps({**json.loads(snapshot.to_json()), "schema": 2})


# -- every source failed ----------------------------------------------------------------------
async def test_a_refresh_where_every_source_failed_counts_as_failed(
    sqlite: SQLiteStore, server: PriceServer, clock: ManualClock, catalog: Catalog,
    caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    job = make_job(sqlite, server, clock, catalog)
    assert (await job.run(DAY0)).status == "refreshed"
    await clock.advance_to(DAY1)
    fail_every_source(server)
    failed, refreshed = sample(RUNS, status="failed"), sample(RUNS, status="refreshed")

    with caplog.at_level(logging.WARNING, logger="ftcost.prices"):
        outcome = await job.run(DAY1)

    assert outcome.status == "failed"
    assert sample(RUNS, status="failed") == failed + 1
    assert sample(RUNS, status="refreshed") == refreshed
    assert "price refresh failed: every source failed (4)" in caplog.text


async def test_a_refresh_where_every_source_failed_keeps_the_previous_snapshot(
    sqlite: SQLiteStore, server: PriceServer, clock: ManualClock, catalog: Catalog
) -> None:
    job = make_job(sqlite, server, clock, catalog)
    first = (await job.run(DAY0)).snapshot
    assert first is not None
    await clock.advance_to(DAY1)
    fail_every_source(server)

    outcome = await job.run(DAY1)

    latest = await sqlite.latest_price_snapshot()
    assert latest is not None and latest.id == first.id  # nothing new stored
    assert job.book.snapshot is not None and job.book.snapshot.id == first.id
    assert outcome.snapshot is not None and outcome.snapshot.id == first.id


async def test_a_first_refresh_where_every_source_failed_leaves_the_built_in_prices(
    sqlite: SQLiteStore, server: PriceServer, clock: ManualClock, catalog: Catalog
) -> None:
    fail_every_source(server)
    job = make_job(sqlite, server, clock, catalog)

    outcome = await job.run(DAY0)

    assert outcome.status == "failed" and outcome.snapshot is None
    assert await sqlite.latest_price_snapshot() is None
    assert job.book.catalog_for() is catalog


async def test_the_slot_of_a_refresh_where_every_source_failed_is_tried_again(
    sqlite: SQLiteStore, server: PriceServer, clock: ManualClock, catalog: Catalog
) -> None:
    await make_job(sqlite, server, clock, catalog).run(DAY0)
    await clock.advance_to(DAY1)
    fail_every_source(server)
    assert (await make_job(sqlite, server, clock, catalog).run(DAY1)).status == "failed"
    server.load(*CLOUDS)  # the sources are back

    restarted = make_job(sqlite, server, clock, catalog)
    outcome = await restarted.startup()  # DAY1 was missed: not covered by the failure

    assert outcome is not None and outcome.status == "refreshed"
    assert outcome.snapshot is not None and outcome.snapshot.taken_at == DAY1


async def test_one_good_source_is_still_a_refresh(
    sqlite: SQLiteStore, server: PriceServer, clock: ManualClock, catalog: Catalog
) -> None:
    await make_job(sqlite, server, clock, catalog).run(DAY0)
    await clock.advance_to(DAY1)
    for cloud in ("aws", "gcp", "runpod"):
        server.fail(cloud, 500)

    outcome = await make_job(sqlite, server, clock, catalog).run(DAY1)

    assert outcome.status == "refreshed"
    assert outcome.snapshot is not None and len(outcome.snapshot.stale_sources) == 3


# -- a stored snapshot that no longer validates -----------------------------------------------
async def stored_then_outdated(
    store: SQLiteStore, path: Path, server: PriceServer, clock: ManualClock, catalog: Catalog
) -> PriceSnapshot:
    """A refresh at DAY0, whose stored document is then rewritten as a later version's."""
    snapshot = (await make_job(store, server, clock, catalog).run(DAY0)).snapshot
    assert snapshot is not None
    execute(path, "UPDATE price_snapshots SET document = ? WHERE id = ?",
            later_version(snapshot), snapshot.id)  # fmt: skip
    return snapshot


async def test_loading_a_snapshot_that_no_longer_validates_keeps_the_built_in_prices(
    sqlite: SQLiteStore, sqlite_path: Path, server: PriceServer, clock: ManualClock,
    catalog: Catalog, caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    old = await stored_then_outdated(sqlite, sqlite_path, server, clock, catalog)
    job = make_job(sqlite, server, clock, catalog)

    with caplog.at_level(logging.WARNING, logger="ftcost.prices"):
        assert await job.load() is None

    assert job.book.snapshot is None and job.book.catalog_for() is catalog
    assert f"stored price snapshot {old.id!r} no longer validates" in caplog.text
    assert "schema" in caplog.text  # where it fails, named
    kept = await sqlite.get_price_snapshot(old.id)
    assert kept is not None and kept.document == later_version(old)


async def test_a_snapshot_that_no_longer_validates_is_logged_once(
    sqlite: SQLiteStore, sqlite_path: Path, server: PriceServer, clock: ManualClock,
    catalog: Catalog, caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    await stored_then_outdated(sqlite, sqlite_path, server, clock, catalog)
    job = make_job(sqlite, server, clock, catalog)

    with caplog.at_level(logging.WARNING, logger="ftcost.prices"):
        for _ in range(3):  # start-up, then the follow loop's reloads
            await job.load()

    assert caplog.text.count("no longer validates") == 1


async def test_a_refresh_after_a_snapshot_that_no_longer_validates_goes_on(
    sqlite: SQLiteStore, sqlite_path: Path, server: PriceServer, clock: ManualClock,
    catalog: Catalog,
) -> None:  # fmt: skip
    old = await stored_then_outdated(sqlite, sqlite_path, server, clock, catalog)
    await clock.advance_to(DAY1)
    job = make_job(sqlite, server, clock, catalog)

    outcome = await job.run(DAY1)

    assert outcome.status == "refreshed" and outcome.snapshot is not None
    assert job.book.snapshot is not None and job.book.snapshot.id == outcome.snapshot.id
    stored = await sqlite.get_price_snapshot(outcome.snapshot.id)
    assert stored is not None and stored.previous_id is None  # nothing to compare with
    assert await sqlite.get_price_snapshot(old.id) is not None


async def test_a_slot_already_taken_by_a_snapshot_that_no_longer_validates_is_done(
    sqlite: SQLiteStore, sqlite_path: Path, server: PriceServer, clock: ManualClock,
    catalog: Catalog,
) -> None:  # fmt: skip
    await stored_then_outdated(sqlite, sqlite_path, server, clock, catalog)
    job = make_job(sqlite, server, clock, catalog)

    outcome = await job.run(DAY0)

    assert outcome.status == "done" and outcome.snapshot is None
    assert job.book.snapshot is None


def snapshot(at: datetime, h100: float) -> PriceSnapshot:
    card = CardPrices(card="h100-sxm", clouds={"lambda": CloudQuotes(
        on_demand=Quote(price=h100, cloud="lambda"), as_of=at)})  # fmt: skip
    return PriceSnapshot(id=snapshot_id(at), taken_at=at, cards={"h100-sxm": card})


async def test_an_unannounced_snapshot_that_no_longer_validates_is_not_announced(
    sqlite: SQLiteStore, server: PriceServer, clock: ManualClock, catalog: Catalog
) -> None:
    old, new = snapshot(DAY0, 3.0), snapshot(DAY1, 2.0)
    await sqlite.save_price_snapshot(old.id, DAY0.timestamp(), None, old.to_json())
    await sqlite.mark_snapshot_announced(old.id)
    await sqlite.save_price_snapshot(new.id, DAY1.timestamp(), old.id, later_version(new))
    await sqlite.save_subscription(Subscription("slack", "C1", "slack:T1", 1.0))
    poster = FakePoster()
    job = make_job(sqlite, server, clock, catalog, poster)

    assert await job.resume_announcements() is None

    assert poster.posted == []
    kept = await sqlite.get_price_snapshot(new.id)
    assert kept is not None and not kept.announced  # kept as it is


async def test_a_snapshot_whose_previous_no_longer_validates_is_settled_unannounced(
    sqlite: SQLiteStore, server: PriceServer, clock: ManualClock, catalog: Catalog
) -> None:
    old, new = snapshot(DAY0, 3.0), snapshot(DAY1, 2.0)
    await sqlite.save_price_snapshot(old.id, DAY0.timestamp(), None, later_version(old))
    await sqlite.save_price_snapshot(new.id, DAY1.timestamp(), old.id, new.to_json())
    await sqlite.save_subscription(Subscription("slack", "C1", "slack:T1", 1.0))
    poster = FakePoster()
    job = make_job(sqlite, server, clock, catalog, poster)

    await job.resume_announcements()

    assert poster.posted == []
    settled = await sqlite.get_price_snapshot(new.id)
    assert settled is not None and settled.announced


# -- announcement records the store cannot read (every backend) -------------------------------
def corrupt_state(store_backend: str, tmp_path: Path, request: pytest.FixtureRequest,
                  snapshot_id: str, channel: str, state: str) -> None:  # fmt: skip
    """Write ``state`` over an announcement record's, behind the store's back."""
    if store_backend == "sqlite":
        execute(tmp_path / "store.sqlite3",  # make_store's file
                "UPDATE announcements SET state = ? WHERE snapshot_id = ? AND channel = ?",
                state, snapshot_id, channel)  # fmt: skip
        return
    prefix = request.getfixturevalue("redis_prefix")
    client = redis.Redis.from_url(request.getfixturevalue("redis_url"), decode_responses=True)
    try:
        client.hset(f"{prefix}price:ann:{snapshot_id}:slack:{channel}", "state", state)
    finally:
        client.close()


async def claim_and_send(store: Store, snapshot_id: str, channel: str) -> None:
    assert await store.claim_announcement(snapshot_id, "slack", channel, 3) is not None
    await store.finish_announcement(snapshot_id, "slack", channel, AnnouncementState.SENT)


async def test_an_announcement_in_an_unknown_state_is_skipped_with_a_warning(
    store: Store, store_backend: str, tmp_path: Path, request: pytest.FixtureRequest,
    caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    await claim_and_send(store, "S1", "C_GOOD")
    await claim_and_send(store, "S1", "C_BAD")
    corrupt_state(store_backend, tmp_path, request, "S1", "C_BAD", "delivered-v2")

    with caplog.at_level(logging.WARNING, logger="ftcost.store"):
        records = await store.list_announcements("S1")

    assert [r.channel for r in records] == ["C_GOOD"]
    assert "unreadable announcement of snapshot 'S1' to slack channel 'C_BAD'" in caplog.text


async def test_the_channel_of_an_unreadable_announcement_is_not_posted_again(
    store: Store, store_backend: str, tmp_path: Path, request: pytest.FixtureRequest,
    catalog: Catalog, store_clock: ManualClock,
) -> None:  # fmt: skip
    old, new = snapshot(DAY0, 3.0), snapshot(DAY1, 2.0)
    sub = Subscription("slack", "C1", "slack:T1", 1.0)
    ann = plan_announcement(sub, old, new, catalog)
    assert ann is not None
    await claim_and_send(store, new.id, "C1")
    corrupt_state(store_backend, tmp_path, request, new.id, "C1", "delivered-v2")
    poster = FakePoster()

    result = await Fanout(store, {"slack": poster}, store_clock, owner="a",
                          interval_s=0).run(new.id, [Target(sub, ann)])  # fmt: skip

    assert poster.posted == [] and result.skipped == ["slack:C1"]


@pytest.mark.parametrize("store_backend", ["redis"])
async def test_an_unreadable_redis_announcement_index_entry_is_skipped(
    store: Store, request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture
) -> None:
    await claim_and_send(store, "S1", "C_GOOD")
    prefix = request.getfixturevalue("redis_prefix")
    client = redis.Redis.from_url(request.getfixturevalue("redis_url"), decode_responses=True)
    try:
        client.sadd(f"{prefix}price:anns:S1", "{not json")
    finally:
        client.close()

    with caplog.at_level(logging.WARNING, logger="ftcost.store"):
        records = await store.list_announcements("S1")

    assert [r.channel for r in records] == ["C_GOOD"]
    assert "unreadable announcement index entry of snapshot 'S1'" in caplog.text

