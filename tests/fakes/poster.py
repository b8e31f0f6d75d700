"""A scriptable :class:`bot.announce.Poster` for fan-out tests."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from bot.announce import Announcement, ChannelGone, RateLimited, SendFailed


class Crash(BaseException):
    """Stands for the process dying (not an ``Exception``: nothing catches it)."""


@dataclass
class FakePoster:
    platform: str = "slack"
    threads: bool = True
    posted: list[tuple[str, str]] = field(default_factory=list)
    """(channel, announcement key) per message that landed."""
    announcements: list[Announcement] = field(default_factory=list)
    gone: dict[str, str] = field(default_factory=dict)
    failing: set[str] = field(default_factory=set)
    rate_limits: Counter[str] = field(default_factory=Counter)
    retry_after: float = 2.0
    crash_before_post: int | None = None
    """Die when about to post message number N (0-based), before it lands."""
    crash_after_post: int | None = None
    """Die right after message number N landed, before the bot hears back."""
    can_check: bool = True
    """``was_posted`` answers (else None: "the platform can't tell")."""
    checks: list[str] = field(default_factory=list)

    async def post(self, channel: str, announcement: Announcement) -> str:
        if channel in self.gone:
            raise ChannelGone(self.gone[channel])
        if self.rate_limits[channel] > 0:
            self.rate_limits[channel] -= 1
            raise RateLimited(self.retry_after)
        if channel in self.failing:
            raise SendFailed("HTTP 500")
        if self.crash_before_post == len(self.posted):
            self.crash_before_post = None
            raise Crash()
        self.posted.append((channel, announcement.key))
        self.announcements.append(announcement)
        if self.crash_after_post == len(self.posted) - 1:
            self.crash_after_post = None
            raise Crash()
        return f"{channel}-{len(self.posted)}"

    async def was_posted(
        self, channel: str, announcement: Announcement, since: float
    ) -> bool | None:
        self.checks.append(channel)
        if not self.can_check:
            return None
        return (channel, announcement.key) in self.posted

    def channels(self) -> list[str]:
        return [c for c, _ in self.posted]
