"""The refresh job end to end against a local catalog server, an in-memory store and a
scriptable poster: announcements per channel, bad sources, replicas, crash and restart,
unsubscribe, the scheduler and start-up catch-up. Time is a manual clock."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from bot.cron import CronSchedule
from bot.price_store import AnnouncementState, PriceStore, Subscription
from bot.prices import PriceBook, PriceJob, PricesConfig
from bot.scheduler import Scheduler
from bot.store_sqlite import SQLiteStore
from engine.specs import Catalog
from tests.fakes.clock import ManualClock, settle
from tests.fakes.poster import Crash, FakePoster
from tests.fakes.price_server import PriceServer
from tests.fakes.price_store import MemoryPriceStore
from tests.price_refresh import DAY0, DAY1, LAMBDA_H100, make_job, prices_config

DAY2 = DAY0 + timedelta(days=2)


@pytest.fixture
def server(price_server: PriceServer) -> PriceServer:
    return price_server


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(DAY0)


@pytest.fixture(params=["sqlite", "memory"])
async def store(request: pytest.FixtureRequest, clock: ManualClock) -> AsyncIterator[PriceStore]:
    if request.param == "memory":
        yield MemoryPriceStore(clock.time)
        return
    async with SQLiteStore(":memory:", clock=clock.time) as sqlite:
        yield sqlite


async def subscribe(store: PriceStore, channel: str, pct: float = 5.0) -> None:
    await store.save_subscription(Subscription("slack", channel, "slack:T1", pct))


def cheaper_lambda_h100(server: PriceServer) -> None:
    server.edit("lambda", LAMBDA_H100, LAMBDA_H100.replace(",24.0,", ",20.0,"))


async def day0(job: PriceJob, clock: ManualClock) -> None:
    assert (await job.run(DAY0)).status == "refreshed"
    await clock.advance_to(DAY1)


async def test_a_refresh_puts_the_new_prices_in_force(
    store: PriceStore, server: PriceServer, clock: ManualClock, catalog: Catalog
) -> None:
    job = make_job(store, server, clock, catalog)
    await job.run(DAY0)
    gpu = job.book.catalog_for().gpu("h100-sxm")
    assert (gpu.price_per_gpu_hour, gpu.price_refreshed_at) == (3.0, DAY0)


async def test_changes_announce_once_per_subscribed_channel_and_not_under_threshold(
    store: PriceStore, server: PriceServer, clock: ManualClock, catalog: Catalog
) -> None:
    poster = FakePoster()
    job = make_job(store, server, clock, catalog, poster)
    await day0(job, clock)
    for channel, pct in (("C1", 5.0), ("C2", 10.0), ("C3", 20.0)):
        await subscribe(store, channel, pct)
    cheaper_lambda_h100(server)
    outcome = await job.run(DAY1)
    assert sorted(poster.channels()) == ["C1", "C2"]  # -16.7% is under C3's 20%
    assert poster.announcements[0].moves[0].line().startswith("h100-sxm $3.00 → $2.50/hr")
    assert outcome.snapshot is not None
    stored = await store.get_price_snapshot(outcome.snapshot.id)
    assert stored is not None and stored.announced


async def test_no_change_means_no_announcement(
    store: PriceStore, server: PriceServer, clock: ManualClock, catalog: Catalog
) -> None:
    poster = FakePoster()
    job = make_job(store, server, clock, catalog, poster)
    await day0(job, clock)
    await subscribe(store, "C1")
    await job.run(DAY1)
    assert poster.posted == []


async def test_a_bad_source_keeps_the_last_good_prices_and_announces_nothing(
    store: PriceStore, server: PriceServer, clock: ManualClock, catalog: Catalog
) -> None:
    poster = FakePoster()
    job = make_job(store, server, clock, catalog, poster)
    await day0(job, clock)
    await subscribe(store, "C1")
    server.fail("lambda", 500)  # lambda had the cheapest H100
    server.files["aws"] = "<html>oops</html>"
    outcome = await job.run(DAY1)
    assert poster.posted == []
    assert job.book.catalog_for().gpu("h100-sxm").price_per_gpu_hour == 3.0
    assert outcome.snapshot is not None
    assert {s.name for s in outcome.snapshot.stale_sources} == {"aws", "lambda"}


async def test_two_instances_on_one_store_refresh_once(
    store: PriceStore, server: PriceServer, clock: ManualClock, catalog: Catalog
) -> None:
    a = make_job(store, server, clock, catalog, owner="a")
    b = make_job(store, server, clock, catalog, owner="b")
    outcomes = await asyncio.gather(a.run(DAY0), b.run(DAY0))
    assert sorted(o.status for o in outcomes) == ["locked", "refreshed"]
    assert server.hits["aws"] == 1
    refreshed = next(o for o in outcomes if o.status == "refreshed").snapshot
    latest = await store.latest_price_snapshot()
    assert refreshed is not None and latest is not None and latest.id == refreshed.id


async def test_a_replica_arriving_after_the_refresh_finds_it_done(
    store: PriceStore, server: PriceServer, clock: ManualClock, catalog: Catalog
) -> None:
    a = make_job(store, server, clock, catalog, owner="a")
    b = make_job(store, server, clock, catalog, owner="b")
    await a.run(DAY0)
    await clock.advance(seconds=30)
    late = await b.run(DAY0)
    assert late.status == "done" and server.hits["aws"] == 1
    assert b.book.catalog_for().gpu("h100-sxm").price_per_gpu_hour == 3.0


async def test_a_crashed_refresh_lock_expires(
    store: PriceStore, server: PriceServer, clock: ManualClock, catalog: Catalog
) -> None:
    await store.acquire_lock("price-refresh", "dead-replica", 900)
    job = make_job(store, server, clock, catalog)
    assert (await job.run(DAY0)).status == "locked"
    await clock.advance(minutes=16)
    assert (await job.run(DAY0)).status == "refreshed"


async def test_a_crash_mid_fan_out_then_a_restart_serves_every_channel_once(
    store: PriceStore, server: PriceServer, clock: ManualClock, catalog: Catalog
) -> None:
    poster = FakePoster()
    job = make_job(store, server, clock, catalog, poster)
    await day0(job, clock)
    channels = [f"C{i}" for i in range(1, 7)]
    for channel in channels:
        await subscribe(store, channel)
    cheaper_lambda_h100(server)
    poster.crash_after_post = 2
    with pytest.raises(Crash):
        await job.run(DAY1)
    assert len(poster.posted) == 3
    restarted = make_job(store, server, clock, catalog, poster, owner="b")
    await restarted.startup()
    assert sorted(poster.channels()) == channels
    latest = await store.latest_price_snapshot()
    assert latest is not None and latest.announced
    states = {r.state for r in await store.list_announcements(latest.id)}
    assert states == {AnnouncementState.SENT}
    assert server.hits["aws"] == 2  # the restart did not refresh again


async def test_unsubscribe_stops_announcements(
    store: PriceStore, server: PriceServer, clock: ManualClock, catalog: Catalog
) -> None:
    poster = FakePoster()
    job = make_job(store, server, clock, catalog, poster)
    await day0(job, clock)
    await subscribe(store, "C1")
    cheaper_lambda_h100(server)
    await job.run(DAY1)
    await store.remove_subscription("slack", "C1")
    await clock.advance_to(DAY2)
    server.load("lambda")  # back to 3.00: a +20% move
    await job.run(DAY2)
    assert poster.channels() == ["C1"]


async def test_a_channel_subscribed_after_a_snapshot_is_not_told_about_it(
    store: PriceStore, server: PriceServer, clock: ManualClock, catalog: Catalog
) -> None:
    poster = FakePoster()
    job = make_job(store, server, clock, catalog, poster)
    await day0(job, clock)
    first = job.book.snapshot
    cheaper_lambda_h100(server)
    await subscribe(store, "C1")  # no channel yet when the refresh runs
    second = (await job.run(DAY1)).snapshot
    assert first is not None and second is not None
    await clock.advance(minutes=5)
    await store.save_subscription(
        Subscription("slack", "C9", "slack:T1", 5.0, created_at=clock.time())
    )
    await job.announce(second, first)  # e.g. a resumed fan-out
    assert poster.channels() == ["C1"]


async def test_the_scheduler_refreshes_at_six_utc(server: PriceServer, catalog: Catalog) -> None:
    clock = ManualClock(DAY0 - timedelta(hours=1))
    store = MemoryPriceStore(clock.time)
    job = make_job(store, server, clock, catalog)
    scheduler = Scheduler(CronSchedule.parse(job.config.schedule), job.run, clock, name="prices")
    scheduler.start()
    await scheduler.wait_until_waiting()
    assert server.hits["aws"] == 0
    await clock.advance(hours=1)
    await scheduler.wait_for_runs(1)
    await scheduler.stop()
    assert server.hits["aws"] == 1 and await store.latest_price_snapshot() is not None


async def test_startup_refreshes_when_there_is_no_snapshot(
    store: PriceStore, server: PriceServer, clock: ManualClock, catalog: Catalog
) -> None:
    outcome = await make_job(store, server, clock, catalog).startup()
    assert outcome is not None and outcome.status == "refreshed"


async def test_startup_refreshes_when_a_scheduled_time_was_missed(
    store: PriceStore, server: PriceServer, clock: ManualClock, catalog: Catalog
) -> None:
    await make_job(store, server, clock, catalog).run(DAY0)
    await clock.advance(days=1, minutes=1)
    outcome = await make_job(store, server, clock, catalog, owner="b").startup()
    assert outcome is not None and outcome.status == "refreshed"


async def test_startup_does_not_refresh_recent_prices(
    store: PriceStore, server: PriceServer, clock: ManualClock, catalog: Catalog
) -> None:
    await make_job(store, server, clock, catalog).run(DAY0)
    await clock.advance(hours=23)
    job = make_job(store, server, clock, catalog, owner="b")
    assert await job.startup() is None
    assert job.book.catalog_for().gpu("h100-sxm").price_per_gpu_hour == 3.0


def test_a_bad_schedule_is_a_config_error() -> None:
    with pytest.raises(ValueError, match="expected 5 fields"):
        PricesConfig(schedule="daily at six")


async def test_a_replica_follows_snapshots_stored_by_another(
    store: PriceStore, server: PriceServer, clock: ManualClock, catalog: Catalog
) -> None:
    class WaitingClock(ManualClock):
        async def sleep(self, seconds: float) -> None:  # waits for advance(), like time
            await self.sleep_until(self.now() + timedelta(seconds=seconds))

    waiting = WaitingClock(DAY0)
    cfg = prices_config(server)
    follower = PriceJob(store, PriceBook(catalog, cfg), cfg, waiting, owner="b")
    task = asyncio.get_running_loop().create_task(follower.follow())
    try:
        await make_job(store, server, clock, catalog, owner="a").run(DAY0)
        assert follower.book.snapshot is None
        await waiting.advance(seconds=cfg.reload_interval_s)
        await store.latest_price_snapshot()  # the store's one worker ran the follower's read
        await settle()
        assert follower.book.snapshot is not None
    finally:
        task.cancel()


async def test_a_process_for_another_platform_posts_its_channels_of_a_snapshot(
    store: PriceStore, server: PriceServer, clock: ManualClock, catalog: Catalog
) -> None:
    """Slack and Discord run as separate processes on one store: the one that took the
    snapshot posts its own channels; the other posts its own when it next resumes."""
    cfg = prices_config(server)
    slack, discord = FakePoster("slack"), FakePoster("discord")
    slack_job = PriceJob(store, PriceBook(catalog, cfg), cfg, clock, owner="s",
                         posters={"slack": slack})
    discord_job = PriceJob(store, PriceBook(catalog, cfg), cfg, clock, owner="d",
                           posters={"discord": discord})
    await day0(slack_job, clock)
    await subscribe(store, "C1")
    await store.save_subscription(Subscription("discord", "D1", "discord:G1", 5.0))
    cheaper_lambda_h100(server)
    outcome = await slack_job.run(DAY1)
    assert outcome.snapshot is not None and slack.channels() == ["C1"]
    stored = await store.get_price_snapshot(outcome.snapshot.id)
    assert stored is not None and not stored.announced  # D1 is still owed
    await discord_job.resume_announcements()
    assert discord.channels() == ["D1"] and slack.channels() == ["C1"]
    stored = await store.get_price_snapshot(outcome.snapshot.id)
    assert stored is not None and stored.announced


async def test_a_platform_no_process_runs_is_looked_at_once_per_process(
    store: PriceStore, server: PriceServer, clock: ManualClock, catalog: Catalog
) -> None:
    slack = FakePoster("slack")
    job = make_job(store, server, clock, catalog, slack)
    await day0(job, clock)
    await subscribe(store, "C1")
    await store.save_subscription(Subscription("discord", "D1", "discord:G1", 5.0))
    cheaper_lambda_h100(server)
    outcome = await job.run(DAY1)
    assert outcome.announcements is not None and outcome.announcements.elsewhere == [
        "discord:D1"]
    assert await job.resume_announcements() is None  # served here: not planned again
