"""A clock tests move by hand: nothing waits for real time.

``await clock.advance(hours=24)`` moves the time and wakes every ``sleep_until`` that is
now due (in time order), then lets the woken tasks run. ``sleep(seconds)`` (used for
pacing and rate-limit back-off) advances the clock itself and returns at once, and is
recorded in ``slept``.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta


class ManualClock:
    def __init__(self, start: datetime) -> None:
        self._now = start
        self._waiters: list[tuple[datetime, asyncio.Future[None]]] = []
        self.slept: list[float] = []

    def now(self) -> datetime:
        return self._now

    def time(self) -> float:
        return self._now.timestamp()

    async def sleep_until(self, when: datetime) -> None:
        if when <= self._now:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((when, future))
        try:
            await future
        finally:
            self._waiters = [(w, f) for w, f in self._waiters if f is not future]

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self._set(self._now + timedelta(seconds=max(0.0, seconds)))
        await asyncio.sleep(0)

    def _set(self, when: datetime) -> None:
        self._now = max(self._now, when)
        for due, future in sorted(self._waiters, key=lambda w: w[0]):
            if due <= self._now and not future.done():
                future.set_result(None)

    async def advance(self, delta: timedelta | None = None, **kwargs: float) -> None:
        """Move forward by ``delta`` (or ``timedelta(**kwargs)``) and let due sleepers run."""
        self._set(self._now + (delta if delta is not None else timedelta(**kwargs)))
        await settle()

    async def advance_to(self, when: datetime) -> None:
        self._set(when)
        await settle()

    @property
    def sleepers(self) -> int:
        return sum(1 for _, f in self._waiters if not f.done())


async def settle(rounds: int = 20) -> None:
    """Let ready tasks run (a few passes of the event loop, no real waiting)."""
    for _ in range(rounds):
        await asyncio.sleep(0)
