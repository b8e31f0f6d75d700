"""A per-user rate limit, shared by replicas through the state store.

Each user may send ``per_minute`` commands (slash commands, mentions, thread follow-ups,
button clicks) per fixed one-minute window; more get a polite private message instead of
an estimate. The count lives in the store (:meth:`bot.store.Store.hit`), so two replicas
behind a load balancer share one budget per user. When the store cannot be reached the
limiter counts in this process instead: a flood is still held back, and an outage of the
store never refuses anyone it would have served.

A fixed window admits at most ``2 x per_minute`` in any 60 s that straddles a window
boundary; that is acceptable for flood protection and costs one counter per user.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.store_types import StoreUnavailable, count_unavailable

if TYPE_CHECKING:  # a name only: the store loads with its backend
    from bot.store import Store

WINDOW_S = 60.0
DEFAULT_PER_MINUTE = 20


@dataclass(frozen=True, slots=True)
class Verdict:
    allowed: bool
    count: int
    """Commands this user sent in the current window, this one included."""
    retry_after_s: float
    """Seconds until the window resets (0 when allowed)."""

    def first_refused(self, per_minute: int) -> bool:
        """Whether this is the first command refused in its window: the one whose asker
        is told, so a flood of messages is not answered by a flood of notices."""
        return not self.allowed and self.count <= per_minute + 1


class RateLimiter:
    """``await limiter.check("slack", "U123")`` -> :class:`Verdict`.

    ``per_minute`` of 0 turns the limit off. ``clock`` (epoch seconds) is injectable.
    """

    def __init__(
        self,
        store: Store | None,
        per_minute: int = DEFAULT_PER_MINUTE,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.per_minute = per_minute
        self._clock = clock
        self._local: dict[str, tuple[int, int]] = {}
        """key -> (window index, count): the fallback while the store is unreachable."""

    @property
    def enabled(self) -> bool:
        return self.per_minute > 0

    def _local_hit(self, key: str, window: int) -> int:
        last_window, count = self._local.get(key, (window, 0))
        count = count + 1 if last_window == window else 1
        if len(self._local) > 10_000:  # users of past windows: forget them
            self._local = {k: v for k, v in self._local.items() if v[0] == window}
        self._local[key] = (window, count)
        return count

    async def check(self, platform: str, user: str | None) -> Verdict:
        """Count one command by ``user`` on ``platform`` and say whether it may run.
        Anonymous events (no user id) are not limited."""
        if not self.enabled or not user:
            return Verdict(True, 0, 0.0)
        now = self._clock()
        window = math.floor(now / WINDOW_S)
        key = f"rate:{platform}:{user}"
        count: int
        if self.store is not None:
            try:
                count = await self.store.hit(key, WINDOW_S)
            except StoreUnavailable:
                count_unavailable("rate_limit")
                count = self._local_hit(key, window)
        else:
            count = self._local_hit(key, window)
        if count <= self.per_minute:
            return Verdict(True, count, 0.0)
        return Verdict(False, count, (window + 1) * WINDOW_S - now)


def limited_message(verdict: Verdict, per_minute: int) -> str:
    """The polite refusal, for the asker only."""
    wait = max(1, math.ceil(verdict.retry_after_s))
    return (
        f"You've sent {per_minute} requests in the last minute, which is this workspace's "
        f"limit per person, so I'm pausing your requests for {wait} s. Nothing is wrong "
        "with your query: send it again then. (The limit keeps one busy thread from "
        "slowing the bot for everyone; admins can change it with rate_limit_per_minute.)"
    )
