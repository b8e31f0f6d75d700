"""Where the bot's time comes from: :class:`Clock`, and :class:`SystemClock`, the real one.

Tests pass a manual clock (``tests/fakes/clock.py``) and move time forward instead of
sleeping. Apart from :mod:`bot.scheduler` so that the conversation Service, which stamps
records with the clock, does not import asyncio: the terminal answers without an event
loop (``Service.answer_offline``), and asyncio's import is a sixth of its start-up.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Protocol

MAX_SLEEP_S = 300.0
"""The system clock re-reads the time at least this often while waiting (the wall clock
may jump: suspend, NTP)."""


class Clock(Protocol):
    """Where time comes from. All times are aware UTC datetimes."""

    def now(self) -> datetime: ...

    def time(self) -> float:
        """Epoch seconds (for stores that stamp records)."""
        ...

    async def sleep_until(self, when: datetime) -> None: ...

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def time(self) -> float:
        return self.now().timestamp()

    async def sleep_until(self, when: datetime) -> None:
        import asyncio  # only ever awaited inside a running loop

        while (left := (when - self.now()).total_seconds()) > 0:
            await asyncio.sleep(min(left, MAX_SLEEP_S))

    async def sleep(self, seconds: float) -> None:
        import asyncio

        await asyncio.sleep(max(0.0, seconds))
