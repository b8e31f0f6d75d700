"""Run a job at every firing time of a cron schedule, on an injectable clock.

The clock is the only source of time: :class:`SystemClock` in the bot, a manual clock in
tests (``tests/fakes/clock.py``), so tests move time forward instead of sleeping. A job
that raises is logged and the schedule goes on; a job still running when the next time
comes skips that time, and the next run is at the first time after it ends (runs never
overlap in one process and never pile up; across replicas the job itself takes a store
lock). The price refresh catches up anyway: it fetches the latest prices whatever the
time it was scheduled for.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime

from bot.clock import Clock
from bot.cron import CronSchedule

log = logging.getLogger("ftcost.scheduler")



Job = Callable[[datetime], Awaitable[object]]
"""Called with the scheduled time (the slot) it runs for."""


class Scheduler:
    """``Scheduler(CronSchedule.parse("0 6 * * *"), job, clock).start()``."""

    def __init__(
        self, schedule: CronSchedule, job: Job, clock: Clock, *, name: str = "job"
    ) -> None:
        self.schedule = schedule
        self.job = job
        self.clock = clock
        self.name = name
        self.runs = 0
        """Completed runs (whether the job succeeded or raised)."""
        self.failures = 0
        self.next_run: datetime | None = None
        self._task: asyncio.Task[None] | None = None
        self._changed = asyncio.Condition()

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        if not self.running:
            self._task = asyncio.get_running_loop().create_task(
                self._loop(), name=f"scheduler:{self.name}"
            )

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def run_once(self, slot: datetime) -> None:
        """Run the job for ``slot`` now (start-up catch-up, tests); never raises."""
        try:
            await self.job(slot)
        except Exception:
            self.failures += 1
            log.exception("scheduled job failed job=%s slot=%s", self.name, slot.isoformat())
        finally:
            self.runs += 1
            async with self._changed:
                self._changed.notify_all()

    async def _loop(self) -> None:
        while True:
            slot = self.schedule.next_after(self.clock.now())
            self.next_run = slot
            log.info("next run job=%s at=%s", self.name, slot.isoformat())
            async with self._changed:
                self._changed.notify_all()
            await self.clock.sleep_until(slot)
            await self.run_once(slot)

    async def wait_for_runs(self, count: int) -> None:
        """Until at least ``count`` runs have completed (for tests and shutdown)."""
        async with self._changed:
            await self._changed.wait_for(lambda: self.runs >= count)

    async def wait_until_waiting(self, slot: datetime | None = None) -> None:
        """Until the loop waits for its next run (after ``slot``, when given)."""
        async with self._changed:
            await self._changed.wait_for(
                lambda: self.next_run is not None and (slot is None or self.next_run > slot)
            )
