"""Run a job at every firing time of a cron schedule, on an injectable clock.

The clock is the only source of time: :class:`SystemClock` in the bot, a manual clock in
tests (``tests/fakes/clock.py``), so tests move time forward instead of sleeping. A job
that raises is logged and the schedule goes on; a job still running when the next time
comes skips that time, and the next run is at the first time after it ends (runs never
overlap in one process and never pile up; across replicas the job itself takes a store
lock). The price refresh catches up anyway: it fetches the latest prices whatever the
time it was scheduled for.

A job that reports a failure (it returns a result whose ``failed`` is True: the price
refresh when the store was unreachable or every source failed, a network blip) is tried
again for the same slot after :data:`RETRY_FIRST_S`, then after twice as long each time
(1, 2, 4 ... minutes), never more than :data:`RETRY_MAX_S` apart, until it succeeds or the
next retry would come at or after the next scheduled time, which takes over. A job that
raises is a bug rather than a blip: logged and counted, not retried.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta

from bot.clock import Clock
from bot.cron import CronSchedule

log = logging.getLogger("ftcost.scheduler")

RETRY_FIRST_S = 60.0
"""A run that reported a failure is first tried again this many seconds after it."""
RETRY_FACTOR = 2.0
"""Each further retry waits this many times longer than the one before (1, 2, 4 ... min)."""
RETRY_MAX_S = 3600.0
"""The longest wait between two retries (an hour): a source back after a long outage is
read within the hour, and a daily schedule gets at most about 30 tries a day."""

Job = Callable[[datetime], Awaitable[object]]
"""Called with the scheduled time (the slot) it runs for. A result whose ``failed``
attribute is True reports a failure, retried (:func:`reports_failure`)."""


def retry_delay(attempt: int) -> float:
    """Seconds before retry number ``attempt`` (1, 2, ...) of a failed run: 60, 120, 240
    ... capped at :data:`RETRY_MAX_S`."""
    return min(RETRY_FIRST_S * RETRY_FACTOR ** max(attempt - 1, 0), RETRY_MAX_S)


def reports_failure(result: object) -> bool:
    """Whether a job's result says the run failed (its ``failed`` attribute is True)."""
    return getattr(result, "failed", False) is True


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
        """Completed runs, retries included (whether the job succeeded or failed)."""
        self.failures = 0
        """Runs that raised or reported a failure."""
        self.retries = 0
        """Runs that were retries of a failed one."""
        self.next_run: datetime | None = None
        self._task: asyncio.Task[None] | None = None
        self._changed = asyncio.Condition()

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self, retry: datetime | None = None) -> None:
        """Start the loop. ``retry``: the slot of a run that failed before it started (the
        start-up catch-up refresh), retried with back-off first."""
        if not self.running:
            self._task = asyncio.get_running_loop().create_task(
                self._loop(retry), name=f"scheduler:{self.name}"
            )

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def run_once(self, slot: datetime) -> bool:
        """Run the job for ``slot`` now (start-up catch-up, tests); never raises. True
        when the job reported a failure (:func:`reports_failure`): worth a retry."""
        failed = False
        try:
            failed = reports_failure(await self.job(slot))
            if failed:
                self.failures += 1
        except Exception:
            self.failures += 1
            log.exception("scheduled job failed job=%s slot=%s", self.name, slot.isoformat())
        finally:
            self.runs += 1
            async with self._changed:
                self._changed.notify_all()
        return failed

    async def _loop(self, retry: datetime | None = None) -> None:
        if retry is not None:
            await self._retry(retry)
        while True:
            slot = self.schedule.next_after(self.clock.now())
            log.info("next run job=%s at=%s", self.name, slot.isoformat())
            await self._wait_until(slot)
            if await self.run_once(slot):
                await self._retry(slot)

    async def _wait_until(self, when: datetime) -> None:
        """Say when the next run is (:attr:`next_run`), then wait for it."""
        self.next_run = when
        async with self._changed:
            self._changed.notify_all()
        await self.clock.sleep_until(when)

    async def _retry(self, slot: datetime) -> None:
        """Run the job for ``slot`` again with back-off (:func:`retry_delay`) until it
        succeeds, or until the next retry would come at or after the next scheduled time,
        which then runs instead."""
        upcoming = self.schedule.next_after(self.clock.now())
        attempt = 1
        while (at := self.clock.now() + timedelta(seconds=retry_delay(attempt))) < upcoming:
            log.warning("job failed, retry %d at=%s job=%s slot=%s", attempt, at.isoformat(),
                        self.name, slot.isoformat())  # fmt: skip
            await self._wait_until(at)
            self.retries += 1
            if not await self.run_once(slot):
                return
            attempt += 1
        log.warning("job failed, no retry before the next scheduled run job=%s slot=%s "
                    "next=%s", self.name, slot.isoformat(), upcoming.isoformat())  # fmt: skip

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
