"""The scheduler runs its job at each cron time of a manual clock: no real waiting."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.cron import CronSchedule
from bot.scheduler import Scheduler
from tests.fakes.clock import ManualClock

START = datetime(2026, 12, 1, 5, 0, tzinfo=UTC)
SIX = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)


def daily(clock: ManualClock, slots: list[datetime], fail: bool = False) -> Scheduler:
    async def job(slot: datetime) -> None:
        slots.append(slot)
        if fail:
            raise RuntimeError("source exploded")

    return Scheduler(CronSchedule.parse("0 6 * * *"), job, clock, name="test")


async def test_nothing_runs_before_the_first_time() -> None:
    clock, slots = ManualClock(START), []
    sched = daily(clock, slots)
    sched.start()
    await sched.wait_until_waiting()
    await clock.advance(minutes=59)
    assert slots == [] and sched.next_run == SIX
    await sched.stop()


async def test_the_job_runs_at_the_scheduled_time_with_its_slot() -> None:
    clock, slots = ManualClock(START), []
    sched = daily(clock, slots)
    sched.start()
    await sched.wait_until_waiting()
    await clock.advance(hours=1)
    await sched.wait_for_runs(1)
    assert slots == [SIX]
    await sched.stop()


async def test_the_job_runs_once_per_day() -> None:
    clock, slots = ManualClock(START), []
    sched = daily(clock, slots)
    sched.start()
    for day in range(3):
        await sched.wait_until_waiting(SIX + timedelta(days=day - 1))
        await clock.advance_to(SIX + timedelta(days=day))
        await sched.wait_for_runs(day + 1)
    assert slots == [SIX + timedelta(days=d) for d in range(3)]
    await sched.stop()


async def test_a_failing_job_is_logged_and_the_schedule_goes_on() -> None:
    clock, slots = ManualClock(START), []
    sched = daily(clock, slots, fail=True)
    sched.start()
    await sched.wait_until_waiting()
    await clock.advance(hours=1)
    await sched.wait_for_runs(1)
    await sched.wait_until_waiting(SIX)
    assert sched.failures == 1 and sched.next_run == SIX + timedelta(days=1)
    await sched.stop()


async def test_stop_cancels_the_wait() -> None:
    clock, slots = ManualClock(START), []
    sched = daily(clock, slots)
    sched.start()
    await sched.wait_until_waiting()
    await sched.stop()
    assert not sched.running and clock.sleepers == 0
