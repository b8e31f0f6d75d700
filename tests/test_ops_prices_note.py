"""``/ftcost prices`` after a failed refresh says so: when it was tried, which sources
failed (briefly) or that the store could not be reached, and which prices stay in use;
before any refresh has succeeded it no longer claims "no refresh yet". Through the shared
service on a real SQLite store, the real refresh job against the local SkyPilot-catalog
stand-in, and a manual clock."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from bot.ask import Ask
from bot.prices import PriceJob
from bot.service import Service
from bot.store_sqlite import SQLiteStore
from engine.specs import Catalog
from tests.fakes.clock import ManualClock
from tests.fakes.price_server import PriceServer
from tests.price_refresh import CLOUDS, DAY0, DAY1, make_job


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(DAY0)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "prices.sqlite3"


@pytest.fixture
async def store(path: Path, clock: ManualClock) -> AsyncIterator[SQLiteStore]:
    async with SQLiteStore(path, clock=clock.time) as opened:
        yield opened


@pytest.fixture
def job(store: SQLiteStore, price_server: PriceServer, clock: ManualClock,
        catalog: Catalog) -> PriceJob:  # fmt: skip
    return make_job(store, price_server, clock, catalog)


def fail_every_source(server: PriceServer) -> None:
    for cloud in CLOUDS:
        server.fail(cloud, 500)


async def prices_text(store: SQLiteStore, job: PriceJob, clock: ManualClock) -> str:
    """What ``/ftcost prices`` answers in channel C1 (the service sharing the job's prices)."""
    service = Service(store, book=job.book, clock=clock)
    reply = await service.respond(Ask("prices", "slack", channel="C1", workspace="slack:T1"))
    assert reply.prices is not None and reply.prices.view is not None
    assert reply.text == reply.prices.view.summary
    return reply.text


@contextlib.contextmanager
def held_by_another_writer(path: Path) -> Iterator[None]:
    """Another process holds the database's write lock: the store is unavailable."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("BEGIN EXCLUSIVE")
        yield
        conn.execute("ROLLBACK")
    finally:
        conn.close()


async def test_after_a_first_refresh_where_every_source_failed_prices_says_none_succeeded(
    store: SQLiteStore, job: PriceJob, price_server: PriceServer, clock: ManualClock
) -> None:
    fail_every_source(price_server)
    await job.run(DAY0)

    text = await prices_text(store, job, clock)

    assert text.startswith("Built-in catalog prices: no refresh has succeeded yet.")
    assert "no refresh yet" not in text


async def test_prices_says_when_the_failed_refresh_was_tried(
    store: SQLiteStore, job: PriceJob, price_server: PriceServer, clock: ManualClock
) -> None:
    fail_every_source(price_server)
    await job.run(DAY0)
    await clock.advance(hours=2)

    text = await prices_text(store, job, clock)

    assert f"The last refresh, tried 2 h ago ({DAY0:%Y-%m-%d %H:%M} UTC), failed" in text


async def test_prices_names_the_first_failed_sources_and_counts_the_rest(
    store: SQLiteStore, job: PriceJob, price_server: PriceServer, clock: ManualClock
) -> None:
    fail_every_source(price_server)
    await job.run(DAY0)

    text = await prices_text(store, job, clock)

    named = [cloud for cloud in CLOUDS if f"{cloud}: " in text]
    assert len(named) == 3 and "and 1 more" in text
    assert "the built-in prices stay in use" in text


async def test_prices_says_the_store_could_not_be_reached(
    store: SQLiteStore, job: PriceJob, path: Path, clock: ManualClock
) -> None:
    with held_by_another_writer(path):
        await job.run(DAY0)

    text = await prices_text(store, job, clock)

    assert "failed: the store could not be reached" in text


async def test_after_a_stored_refresh_a_later_failure_says_the_earlier_prices_stay(
    store: SQLiteStore, job: PriceJob, price_server: PriceServer, clock: ManualClock
) -> None:
    await job.run(DAY0)
    await clock.advance_to(DAY1)
    fail_every_source(price_server)
    await job.run(DAY1)

    text = await prices_text(store, job, clock)

    assert text.startswith("In use:")
    assert "the prices of the refresh before it stay in use" in text


async def test_a_successful_refresh_after_a_failed_one_clears_the_note(
    store: SQLiteStore, job: PriceJob, price_server: PriceServer, clock: ManualClock
) -> None:
    fail_every_source(price_server)
    await job.run(DAY0)
    price_server.load(*CLOUDS)
    await clock.advance(minutes=1)
    await job.run(DAY0)

    text = await prices_text(store, job, clock)

    assert "The last refresh" not in text


async def test_without_a_refresh_tried_prices_keeps_its_built_in_summary(
    store: SQLiteStore, job: PriceJob, clock: ManualClock
) -> None:
    text = await prices_text(store, job, clock)

    assert text.startswith("Built-in catalog prices (no refresh yet).")
    assert "The last refresh" not in text

