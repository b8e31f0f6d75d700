"""What the state store keeps for prices: snapshots, channel subscriptions and
announcement records, as backend-neutral records (ids are strings, documents JSON,
times epoch seconds stamped by the store's clock), and :class:`PriceStore`, the
methods the refresh job and the announcer use.

Announcement records make the fan-out exactly-once: a record is **claimed** (state
``sending``) before a post and **finished** after it (``sent``, ``gone`` or ``failed``).
A claim is atomic (insert-if-absent, or re-claim of a ``failed`` record with attempts
left), so a channel is never posted to twice, and a crash leaves at most one record per
run in ``sending``: "in doubt", settled on the next run (see ``bot.announce``).

A record the store cannot read (a document that is not JSON, a subscription whose card
list is not a JSON list of ids, a number that is not one: a hand edit, a disk fault, a
schema a later version changed) is never deleted: :func:`snapshot_record` and
:func:`subscription_record` raise :class:`UnreadableRecord` for it, and the backends skip
it with a logged warning where they list (the latest snapshot, every subscription), as
``get_thread`` does for a thread context that no longer validates.
"""

from __future__ import annotations

import json
import logging
import math
from abc import abstractmethod
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from catalog.echo import shown
from catalog.price_snapshot import PriceSnapshot
from engine import Request

PRICE_REFRESH_LOCK = "price-refresh"
PRICE_ANNOUNCE_LOCK = "price-announce"

log = logging.getLogger("ftcost.store")


class UnreadableRecord(ValueError):
    """A stored price record that cannot be read; the message says which field and why
    (never the stored value in full). The record is kept as stored."""


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


def _number(value: object, what: str) -> float:
    """A stored number (a SQLite column's number, a Redis field's text), finite."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise UnreadableRecord(f"{what} is not a number")
    try:
        number = float(value)
    except ValueError:
        raise UnreadableRecord(f"{what} {shown(value, 24)!r} is not a number") from None
    if not math.isfinite(number):
        raise UnreadableRecord(f"{what} is not a finite number")
    return number


def _text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise UnreadableRecord(f"{what} is not text")
    return value


def _json(value: object, what: str) -> object:
    try:
        return json.loads(_text(value, what))
    except (ValueError, RecursionError):  # JSONDecodeError, a 5,000-digit int, deep nesting
        raise UnreadableRecord(f"{what} is not JSON") from None


def snapshot_record(
    snapshot_id: object, taken_at: object, previous_id: object, document: object,
    announced: bool,
) -> StoredSnapshot:  # fmt: skip
    """A stored snapshot's fields as a :class:`StoredSnapshot`; :class:`UnreadableRecord`
    when they break the store's own form (text ids, a finite ``taken_at``, a document
    that is a JSON object). Whether the document is a valid :class:`PriceSnapshot` is
    the reader's question (:meth:`StoredSnapshot.snapshot`)."""
    if not isinstance(_json(document, "its document"), dict):
        raise UnreadableRecord("its document is not a JSON object")
    return StoredSnapshot(
        _text(snapshot_id, "its id"), _number(taken_at, "taken_at"),
        None if previous_id is None else _text(previous_id, "previous_id"),
        _text(document, "its document"), announced,
    )  # fmt: skip


def subscription_record(
    platform: str, channel: str, workspace: object, min_change_pct: object, cards: object,
    created_by: object, created_at: object, gone: object,
) -> Subscription:  # fmt: skip
    """A stored subscription's fields (``cards``: the JSON list of card ids) as a
    :class:`Subscription`; :class:`UnreadableRecord` when one cannot be read."""
    ids = _json(cards, "cards")
    if not isinstance(ids, list) or not all(isinstance(c, str) for c in ids):
        raise UnreadableRecord("cards is not a JSON list of card ids")
    return Subscription(
        platform, channel, _text(workspace, "workspace"),
        _number(min_change_pct, "min_change_pct"), tuple(ids),
        None if created_by is None else _text(created_by, "created_by"),
        _number(created_at, "created_at"), None if gone is None else _text(gone, "gone"),
    )  # fmt: skip


def warn_unreadable(what: str, exc: UnreadableRecord) -> None:
    """Log a skipped record: which one, why, and that it is kept."""
    log.warning("unreadable %s skipped (kept in the store as it is): %s", what, exc)


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

    # -- the string cache (existing): an announcement's reference request ---------------------
    @abstractmethod
    async def cache_get(self, key: str) -> str | None: ...

    @abstractmethod
    async def cache_put(self, key: str, value: str, ttl_s: float) -> None: ...

    # -- price snapshots --------------------------------------------------------------------
    @abstractmethod
    async def save_price_snapshot(
        self, snapshot_id: str, taken_at: float, previous_id: str | None, document: str
    ) -> None:
        """Insert a snapshot (a second save of the same id is ignored)."""

    @abstractmethod
    async def latest_price_snapshot(self) -> StoredSnapshot | None:
        """The snapshot with the latest ``taken_at`` among those the store can read; a
        newer unreadable one (:func:`snapshot_record`) is skipped with a logged warning."""

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
    async def get_subscription(self, platform: str, channel: str) -> Subscription | None:
        """The channel's subscription; raises :class:`UnreadableRecord` when it has one
        that cannot be read (kept: ``save_subscription`` replaces it, ``remove`` drops it)."""

    @abstractmethod
    async def list_subscriptions(self) -> list[Subscription]:
        """Every subscription, gone ones included, in creation order; an unreadable one is
        skipped with a logged warning."""

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
