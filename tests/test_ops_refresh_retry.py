"""A failed price refresh is counted and tried again soon, not a day later.

* The scheduler (on a manual clock) retries a run that reports a failure for the same
  slot after 1, 2, 4 ... minutes, at most an hour apart, stopping before the next
  scheduled run; a failed start-up refresh can be handed to it to retry.
* The refresh job, on a real SQLite store that another writer holds locked (the store is
  unavailable), fails the refresh, counts it in ``ftcost_price_refresh_runs_total`` and in
  ``ftcost_store_unavailable_total`` by operation, and the scheduler's retry refreshes once
  the store answers; a refresh where every source failed (the local SkyPilot-catalog
  stand-in answering 500) is retried the same way.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.cron import CronSchedule
from bot.metrics import sample
from bot.scheduler import RETRY_MAX_S, Job, Scheduler, retry_delay
from bot.store_sqlite import SQLiteStore
from bot.store_types import StoreUnavailable
from engine.specs import Catalog
from tests.fakes.clock import ManualClock
from tests.fakes.price_server import PriceServer
from tests.price_refresh import CLOUDS, DAY0, make_job

FIVE = datetime(2026, 12, 1, 5, 0, tzinfo=UTC)
SIX = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
SEVEN = SIX + timedelta(hours=1)
RUNS = "ftcost_price_refresh_runs_total"
UNAVAILABLE = "ftcost_store_unavailable_total"


@dataclass(frozen=True)
class Result:
    failed: bool


def job_failing(times: int, slots: list[datetime]) -> Job:
    """A job that reports a failure its first ``times`` runs (every run when negative),
    recording each run's slot."""

    async def job(slot: datetime) -> Result:
        slots.append(slot)
        return Result(failed=times < 0 or len(slots) <= times)

    return job


async def run_times(sched: Scheduler, clock: ManualClock, until: datetime) -> list[datetime]:
    """Let the scheduler run until its next run is at or after ``until``; when each ran."""
    times: list[datetime] = []
    while True:
        await sched.wait_until_waiting(times[-1] if times else None)
        assert sched.next_run is not None
        if sched.next_run >= until:
            return times
        times.append(sched.next_run)
        await clock.advance_to(sched.next_run)
        await sched.wait_for_runs(len(times))


# -- the scheduler ------------------------------------------------------------------------------
async def test_a_failed_run_is_retried_after_one_two_and_four_minutes() -> None:
    clock, slots = ManualClock(FIVE), []
    sched = Scheduler(CronSchedule.parse("0 6 * * *"), job_failing(3, slots), clock)
    sched.start()

    times = await run_times(sched, clock, SIX + timedelta(hours=1))
    await sched.stop()

    minutes = [int((t - SIX).total_seconds() // 60) for t in times]
    assert minutes == [0, 1, 3, 7]


async def test_a_retry_runs_the_failed_runs_slot() -> None:
    clock, slots = ManualClock(FIVE), []
    sched = Scheduler(CronSchedule.parse("0 6 * * *"), job_failing(2, slots), clock)
    sched.start()

    await run_times(sched, clock, SIX + timedelta(hours=1))
    await sched.stop()

    assert slots == [SIX, SIX, SIX]


async def test_after_a_successful_retry_the_next_run_is_the_next_scheduled_time() -> None:
    clock, slots = ManualClock(FIVE), []
    sched = Scheduler(CronSchedule.parse("0 6 * * *"), job_failing(1, slots), clock)
    sched.start()

    await run_times(sched, clock, SIX + timedelta(hours=1))
    await sched.stop()

    assert sched.next_run == SIX + timedelta(days=1)
    assert (sched.failures, sched.retries) == (1, 1)


async def test_retries_stop_before_the_next_scheduled_run() -> None:
    clock, slots = ManualClock(FIVE), []
    sched = Scheduler(CronSchedule.parse("0 * * * *"), job_failing(-1, slots), clock)
    sched.start()

    times = await run_times(sched, clock, SEVEN)
    await sched.stop()

    assert [int((t - SIX).total_seconds() // 60) for t in times] == [0, 1, 3, 7, 15, 31]
    assert sched.next_run == SEVEN


def test_retries_wait_twice_as_long_each_time_at_most_an_hour() -> None:
    assert [retry_delay(n) for n in range(1, 9)] == [
        60, 120, 240, 480, 960, 1920, RETRY_MAX_S, RETRY_MAX_S,
    ]


async def test_a_failed_start_up_run_handed_to_the_scheduler_is_retried_first() -> None:
    clock, slots = ManualClock(FIVE), []
    sched = Scheduler(CronSchedule.parse("0 6 * * *"), job_failing(0, slots), clock)
    startup_slot = datetime(1970, 1, 1, tzinfo=UTC)
    sched.start(retry=startup_slot)

    times = await run_times(sched, clock, SIX)
    await sched.stop()

    assert times == [FIVE + timedelta(minutes=1)] and slots == [startup_slot]


# -- the refresh job: the store unavailable ----------------------------------------------------
@pytest.fixture
def clock() -> ManualClock:
    """An hour before the day's scheduled refresh (:data:`DAY0`)."""
    return ManualClock(DAY0 - timedelta(hours=1))


@pytest.fixture
def server(price_server: PriceServer) -> PriceServer:
    return price_server


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "prices.sqlite3"


@pytest.fixture
async def store(path: Path, clock: ManualClock) -> AsyncIterator[SQLiteStore]:
    async with SQLiteStore(path, clock=clock.time) as opened:
        yield opened


@contextlib.contextmanager
def held_by_another_writer(path: Path) -> Iterator[None]:
    """Another process holds the database's write lock: every write of the store waits
    its busy timeout and finds the store unavailable."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("BEGIN EXCLUSIVE")
        yield
        conn.execute("ROLLBACK")
    finally:
        conn.close()


async def test_a_refresh_that_cannot_take_its_lock_counts_as_failed(
    store: SQLiteStore, path: Path, server: PriceServer, clock: ManualClock, catalog: Catalog
) -> None:
    job = make_job(store, server, clock, catalog)
    failed = sample(RUNS, status="failed")

    with held_by_another_writer(path):
        outcome = await job.run(DAY0)

    assert outcome.failed and outcome.slot == DAY0
    assert sample(RUNS, status="failed") == failed + 1


async def test_a_refresh_that_cannot_take_its_lock_counts_the_store_miss(
    store: SQLiteStore, path: Path, server: PriceServer, clock: ManualClock, catalog: Catalog
) -> None:
    job = make_job(store, server, clock, catalog)
    missed = sample(UNAVAILABLE, operation="price_refresh")

    with held_by_another_writer(path):
        await job.run(DAY0)

    assert sample(UNAVAILABLE, operation="price_refresh") == missed + 1


async def test_a_refresh_the_store_refused_refreshes_on_its_first_retry(
    store: SQLiteStore, path: Path, server: PriceServer, clock: ManualClock, catalog: Catalog
) -> None:
    job = make_job(store, server, clock, catalog)
    sched = Scheduler(CronSchedule.parse(job.config.schedule), job.run, clock, name="prices")
    sched.start()
    await sched.wait_until_waiting()

    with held_by_another_writer(path):
        await clock.advance_to(DAY0)
        await sched.wait_for_runs(1)
    await sched.wait_until_waiting(DAY0)
    await clock.advance_to(DAY0 + timedelta(minutes=1))
    await sched.wait_for_runs(2)
    await sched.stop()

    latest = await store.latest_price_snapshot()
    assert latest is not None and sched.retries == 1
    assert job.book.snapshot is not None and job.book.snapshot.id == latest.id


# -- the refresh job: every source failed ---------------------------------------------------------
async def test_a_refresh_where_every_source_failed_is_retried_once_they_answer(
    store: SQLiteStore, server: PriceServer, clock: ManualClock, catalog: Catalog
) -> None:
    for cloud in CLOUDS:
        server.fail(cloud, 500)
    job = make_job(store, server, clock, catalog)
    sched = Scheduler(CronSchedule.parse(job.config.schedule), job.run, clock, name="prices")
    sched.start()
    await sched.wait_until_waiting()
    await clock.advance_to(DAY0)
    await sched.wait_for_runs(1)
    await sched.wait_until_waiting(DAY0)
    assert sched.next_run == DAY0 + timedelta(minutes=1)

    server.load(*CLOUDS)  # the network blip is over
    await clock.advance_to(DAY0 + timedelta(minutes=1))
    await sched.wait_for_runs(2)
    await sched.stop()

    assert await store.latest_price_snapshot() is not None
    assert sched.failures == 1 and sched.retries == 1


class _DownAtStart(SQLiteStore):
    """A store that cannot be reached while ``down`` (Redis still starting beside the bot)."""

    down = True

    async def latest_price_snapshot(self):  # type: ignore[no-untyped-def]
        if self.down:
            raise StoreUnavailable("the store is starting")
        return await super().latest_price_snapshot()


async def test_a_start_up_with_the_store_down_fails_its_refresh_for_the_scheduler_to_retry(
    path: Path, server: PriceServer, clock: ManualClock, catalog: Catalog
) -> None:
    async with _DownAtStart(path, clock=clock.time) as store:
        job = make_job(store, server, clock, catalog)
        missed = sample(UNAVAILABLE, operation="price_refresh")

        outcome = await job.startup()

        assert outcome is not None and outcome.failed and outcome.slot is not None
        assert sample(UNAVAILABLE, operation="price_refresh") == missed + 1
        assert job.book.failed_try is not None
