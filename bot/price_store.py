"""What the state store keeps for prices: snapshots, channel subscriptions and
announcement records, as backend-neutral records (ids are strings, documents JSON,
times epoch seconds stamped by the store's clock), and :class:`PriceStore`, the
methods the refresh job and the announcer use.

Announcement records make the fan-out exactly-once: a record is **claimed** (state
``sending``) before a post and **finished** after it (``sent``, ``gone`` or ``failed``).
A claim is atomic (insert-if-absent, or re-claim of a ``failed`` record with attempts
left), so a channel is never posted to twice, and a crash leaves at most one record per
run in ``sending``: "in doubt", settled on the next run (see ``bot.announce``).
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from catalog.price_snapshot import PriceSnapshot
from engine import Request

PRICE_REFRESH_LOCK = "price-refresh"
PRICE_ANNOUNCE_LOCK = "price-announce"


@dataclass(frozen=True, slots=True)
class StoredSnapshot:
    id: str
    taken_at: float
    previous_id: str | None
    """The snapshot this one was compared with (announcements are the difference)."""
    document: str
    """:meth:`PriceSnapshot.to_json`."""
    announced: bool = False
    """Every announcement of this snapshot is settled."""

    def snapshot(self) -> PriceSnapshot:
        return PriceSnapshot.from_json(self.document)


@dataclass(frozen=True, slots=True)
class Subscription:
    """A channel that wants price-change announcements."""

    platform: str
    channel: str
    workspace: str
    """``slack:<team id>`` / ``discord:<guild id>``: which team sheet applies."""
    min_change_pct: float = 5.0
    """Announce a card whose price moved by at least this many percent."""
    cards: tuple[str, ...] = ()
    """Catalog card ids; empty means every live NVIDIA card."""
    created_by: str | None = None
    created_at: float = 0.0
    gone: str | None = None
    """Why the channel can no longer be posted to (``channel_not_found``, ``Discord 404``);
    None while it is reachable. A gone channel is skipped."""


class AnnouncementState(StrEnum):
    SENDING = "sending"
    """Claimed: a post is (or was, before a crash) in flight."""
    SENT = "sent"
    GONE = "gone"
    """The channel is gone or the bot was removed: not retried."""
    FAILED = "failed"
    """Not posted (a definite error); claimable again while attempts remain."""
    UNCONFIRMED = "unconfirmed"
    """In doubt after a crash and the platform can't tell whether it was posted: left
    alone rather than risk a second post."""


FINAL_STATES = frozenset(
    {AnnouncementState.SENT, AnnouncementState.GONE, AnnouncementState.UNCONFIRMED}
)


@dataclass(frozen=True, slots=True)
class AnnouncementRecord:
    snapshot_id: str
    platform: str
    channel: str
    state: AnnouncementState
    attempts: int
    claimed_at: float
    finished_at: float | None = None
    message_id: str | None = None
    detail: str | None = None


class PriceStore(Protocol):
    """The store methods the price refresh and announcements use.

    ``bot.store.Store`` inherits them (as abstract methods every backend must
    implement); test doubles match the protocol structurally."""

    # -- locks (existing) -------------------------------------------------------------------
    @abstractmethod
    async def acquire_lock(self, name: str, owner: str, ttl_s: float) -> bool: ...

    @abstractmethod
    async def release_lock(self, name: str, owner: str) -> bool: ...

    # -- price snapshots --------------------------------------------------------------------
    @abstractmethod
    async def save_price_snapshot(
        self, snapshot_id: str, taken_at: float, previous_id: str | None, document: str
    ) -> None:
        """Insert a snapshot (a second save of the same id is ignored)."""

    @abstractmethod
    async def latest_price_snapshot(self) -> StoredSnapshot | None:
        """The snapshot with the latest ``taken_at``."""

    @abstractmethod
    async def get_price_snapshot(self, snapshot_id: str) -> StoredSnapshot | None: ...

    @abstractmethod
    async def mark_snapshot_announced(self, snapshot_id: str) -> None: ...

    # -- subscriptions ----------------------------------------------------------------------
    @abstractmethod
    async def save_subscription(self, subscription: Subscription) -> None:
        """Insert or replace the subscription of ``(platform, channel)`` (clears ``gone``
        unless the record sets it)."""

    @abstractmethod
    async def remove_subscription(self, platform: str, channel: str) -> bool:
        """True when there was one."""

    @abstractmethod
    async def get_subscription(self, platform: str, channel: str) -> Subscription | None: ...

    @abstractmethod
    async def list_subscriptions(self) -> list[Subscription]:
        """Every subscription, gone ones included, in creation order."""

    @abstractmethod
    async def mark_subscription_gone(self, platform: str, channel: str, reason: str) -> None: ...

    # -- announcements ----------------------------------------------------------------------
    @abstractmethod
    async def claim_announcement(
        self, snapshot_id: str, platform: str, channel: str, max_attempts: int
    ) -> AnnouncementRecord | None:
        """Atomically: create the record in ``sending`` (attempt 1), or move a ``failed``
        one with fewer than ``max_attempts`` attempts back to ``sending``; None when the
        record exists in any other state."""

    @abstractmethod
    async def finish_announcement(
        self,
        snapshot_id: str,
        platform: str,
        channel: str,
        state: AnnouncementState,
        message_id: str | None = None,
        detail: str | None = None,
    ) -> None: ...

    @abstractmethod
    async def list_announcements(self, snapshot_id: str) -> list[AnnouncementRecord]: ...

    # -- the reference estimate -------------------------------------------------------------
    @abstractmethod
    async def latest_channel_request(self, platform: str, channel: str) -> Request | None:
        """The request of the channel's most recently updated thread context."""
