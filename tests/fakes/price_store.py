"""An in-memory :class:`bot.price_store.PriceStore` with the SQLite store's semantics, for
testing the refresh job and the announcer without a database (several "replicas" share
one instance)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from bot.price_store import (
    AnnouncementRecord,
    AnnouncementState,
    StoredSnapshot,
    Subscription,
)
from engine import Request


class MemoryPriceStore:
    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.locks: dict[str, tuple[str, float]] = {}
        self.snapshots: dict[str, StoredSnapshot] = {}
        self.subscriptions: dict[tuple[str, str], Subscription] = {}
        self.announcements: dict[tuple[str, str, str], AnnouncementRecord] = {}
        self.channel_requests: dict[tuple[str, str], Request] = {}
        self.lock_attempts: list[tuple[str, str, bool]] = []
        self.cache: dict[str, tuple[str, float]] = {}
        """key -> (value, expires at)."""

    async def acquire_lock(self, name: str, owner: str, ttl_s: float) -> bool:
        now = self.clock()
        held = self.locks.get(name)
        ok = held is None or held[1] <= now or held[0] == owner
        if ok:
            self.locks[name] = (owner, now + ttl_s)
        self.lock_attempts.append((name, owner, ok))
        return ok

    async def release_lock(self, name: str, owner: str) -> bool:
        if self.locks.get(name, ("", 0.0))[0] == owner:
            del self.locks[name]
            return True
        return False

    async def cache_get(self, key: str) -> str | None:
        value, expires = self.cache.get(key, ("", 0.0))
        return value if expires > self.clock() else None

    async def cache_put(self, key: str, value: str, ttl_s: float) -> None:
        if ttl_s <= 0:
            self.cache.pop(key, None)
            return
        self.cache[key] = (value, self.clock() + ttl_s)

    async def save_price_snapshot(
        self, snapshot_id: str, taken_at: float, previous_id: str | None, document: str
    ) -> None:
        self.snapshots.setdefault(
            snapshot_id, StoredSnapshot(snapshot_id, taken_at, previous_id, document)
        )

    async def latest_price_snapshot(self) -> StoredSnapshot | None:
        return max(self.snapshots.values(), key=lambda s: s.taken_at, default=None)

    async def get_price_snapshot(self, snapshot_id: str) -> StoredSnapshot | None:
        return self.snapshots.get(snapshot_id)

    async def mark_snapshot_announced(self, snapshot_id: str) -> None:
        if snapshot_id in self.snapshots:
            self.snapshots[snapshot_id] = replace(self.snapshots[snapshot_id], announced=True)

    async def save_subscription(self, subscription: Subscription) -> None:
        self.subscriptions.pop((subscription.platform, subscription.channel), None)
        self.subscriptions[(subscription.platform, subscription.channel)] = subscription

    async def remove_subscription(self, platform: str, channel: str) -> bool:
        return self.subscriptions.pop((platform, channel), None) is not None

    async def get_subscription(self, platform: str, channel: str) -> Subscription | None:
        return self.subscriptions.get((platform, channel))

    async def list_subscriptions(self) -> list[Subscription]:
        return sorted(self.subscriptions.values(),
                      key=lambda s: (s.created_at, s.platform, s.channel))  # fmt: skip

    async def mark_subscription_gone(self, platform: str, channel: str, reason: str) -> None:
        sub = self.subscriptions.get((platform, channel))
        if sub is not None:
            self.subscriptions[(platform, channel)] = replace(sub, gone=reason)

    async def claim_announcement(
        self, snapshot_id: str, platform: str, channel: str, max_attempts: int
    ) -> AnnouncementRecord | None:
        key = (snapshot_id, platform, channel)
        old = self.announcements.get(key)
        now = self.clock()
        if old is None:
            rec = AnnouncementRecord(snapshot_id, platform, channel, AnnouncementState.SENDING,
                                     1, now)  # fmt: skip
        elif old.state is AnnouncementState.FAILED and old.attempts < max_attempts:
            rec = replace(old, state=AnnouncementState.SENDING, attempts=old.attempts + 1,
                          claimed_at=now, finished_at=None, detail=None)  # fmt: skip
        else:
            return None
        self.announcements[key] = rec
        return rec

    async def finish_announcement(
        self,
        snapshot_id: str,
        platform: str,
        channel: str,
        state: AnnouncementState,
        message_id: str | None = None,
        detail: str | None = None,
    ) -> None:
        key = (snapshot_id, platform, channel)
        self.announcements[key] = replace(
            self.announcements[key], state=state, finished_at=self.clock(),
            message_id=message_id, detail=detail,
        )  # fmt: skip

    async def list_announcements(self, snapshot_id: str) -> list[AnnouncementRecord]:
        return [r for (s, _, _), r in self.announcements.items() if s == snapshot_id]

    async def latest_channel_request(self, platform: str, channel: str) -> Request | None:
        return self.channel_requests.get((platform, channel))
