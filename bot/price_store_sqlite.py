"""The SQLite side of :class:`bot.price_store.PriceStore`: schema migration and methods,
mixed into ``bot.store_sqlite.SQLiteStore`` (they use its ``_run`` and ``_clock``).

The Redis backend (``bot/store_redis.py``) has the same semantics, and so has the
in-memory fake (``tests/fakes/price_store.py``): snapshots -> a sorted set by
``taken_at`` + hashes; subscriptions -> a hash per channel; announcement claims -> a Lua
insert-if-absent / compare-and-set on the state.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Awaitable, Callable
from typing import Any

from bot.price_store import (
    AnnouncementRecord,
    AnnouncementState,
    StoredSnapshot,
    Subscription,
    UnreadableRecord,
    snapshot_record,
    subscription_record,
    warn_unreadable,
)
from engine import Request

PRICE_MIGRATION = (
    2,
    "price snapshots, subscriptions, announcements",
    """
        CREATE TABLE price_snapshots (
            id          TEXT PRIMARY KEY,
            taken_at    REAL NOT NULL,
            previous_id TEXT,
            document    TEXT NOT NULL,
            announced   INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX price_snapshots_taken_at ON price_snapshots (taken_at);
        CREATE TABLE subscriptions (
            platform       TEXT NOT NULL,
            channel        TEXT NOT NULL,
            workspace      TEXT NOT NULL,
            min_change_pct REAL NOT NULL,
            cards          TEXT NOT NULL,
            created_by     TEXT,
            created_at     REAL NOT NULL,
            gone           TEXT,
            PRIMARY KEY (platform, channel)
        );
        CREATE TABLE announcements (
            snapshot_id TEXT NOT NULL,
            platform    TEXT NOT NULL,
            channel     TEXT NOT NULL,
            state       TEXT NOT NULL,
            attempts    INTEGER NOT NULL,
            claimed_at  REAL NOT NULL,
            finished_at REAL,
            message_id  TEXT,
            detail      TEXT,
            PRIMARY KEY (snapshot_id, platform, channel)
        );
        CREATE INDEX threads_channel ON threads (platform, channel, updated_at);
    """,
)
"""Append to ``bot.store_sqlite.MIGRATIONS``."""


class SQLitePriceTables:
    """Mixin for ``SQLiteStore``: the :class:`~bot.price_store.PriceStore` methods."""

    _clock: Callable[[], float]
    _run: Callable[[Callable[[sqlite3.Connection], Any]], Awaitable[Any]]

    # -- price snapshots --------------------------------------------------------------------
    async def save_price_snapshot(
        self, snapshot_id: str, taken_at: float, previous_id: str | None, document: str
    ) -> None:
        def q(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO price_snapshots (id, taken_at, previous_id, document, announced)"
                " VALUES (?, ?, ?, ?, 0) ON CONFLICT (id) DO NOTHING",
                (snapshot_id, taken_at, previous_id, document),
            )

        await self._run(q)

    @staticmethod
    def _snapshot(row: tuple[Any, ...] | None) -> StoredSnapshot | None:
        if row is None:
            return None
        return StoredSnapshot(row[0], row[1], row[2], row[3], bool(row[4]))

    async def latest_price_snapshot(self) -> StoredSnapshot | None:
        def nth(offset: int) -> Callable[[sqlite3.Connection], tuple[Any, ...] | None]:
            return lambda conn: conn.execute(
                "SELECT id, taken_at, previous_id, document, announced FROM price_snapshots"
                " ORDER BY taken_at DESC, id DESC LIMIT 1 OFFSET ?", (offset,),
            ).fetchone()

        skipped = 0
        while True:  # newest first, past any unreadable record (kept as it is)
            row = await self._run(nth(skipped))
            if row is None:
                return None
            try:
                return snapshot_record(row[0], row[1], row[2], row[3], bool(row[4]))
            except UnreadableRecord as exc:
                warn_unreadable(f"price snapshot {row[0]!r}", exc)
                skipped += 1

    async def get_price_snapshot(self, snapshot_id: str) -> StoredSnapshot | None:
        row = await self._run(lambda conn: conn.execute(
            "SELECT id, taken_at, previous_id, document, announced FROM price_snapshots"
            " WHERE id = ?", (snapshot_id,)).fetchone())  # fmt: skip
        return self._snapshot(row)

    async def mark_snapshot_announced(self, snapshot_id: str) -> None:
        await self._run(lambda conn: conn.execute(
            "UPDATE price_snapshots SET announced = 1 WHERE id = ?", (snapshot_id,)))  # fmt: skip

    # -- subscriptions ----------------------------------------------------------------------
    async def save_subscription(self, subscription: Subscription) -> None:
        s = subscription

        def q(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO subscriptions (platform, channel, workspace, min_change_pct, cards,"
                " created_by, created_at, gone) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (platform, channel) DO UPDATE SET workspace = excluded.workspace,"
                " min_change_pct = excluded.min_change_pct, cards = excluded.cards,"
                " created_by = excluded.created_by, created_at = excluded.created_at,"
                " gone = excluded.gone",
                (s.platform, s.channel, s.workspace, s.min_change_pct, json.dumps(list(s.cards)),
                 s.created_by, s.created_at, s.gone),
            )  # fmt: skip

        await self._run(q)

    @staticmethod
    def _subscription(row: tuple[Any, ...]) -> Subscription:
        """Raises :class:`UnreadableRecord` for a row that cannot be read."""
        return subscription_record(*row)

    _SUBSCRIPTION_COLUMNS = (
        "platform, channel, workspace, min_change_pct, cards, created_by, created_at, gone"
    )

    async def remove_subscription(self, platform: str, channel: str) -> bool:
        def q(conn: sqlite3.Connection) -> bool:
            return conn.execute(
                "DELETE FROM subscriptions WHERE platform = ? AND channel = ?",
                (platform, channel),
            ).rowcount == 1

        return await self._run(q)

    async def get_subscription(self, platform: str, channel: str) -> Subscription | None:
        row = await self._run(lambda conn: conn.execute(
            f"SELECT {self._SUBSCRIPTION_COLUMNS} FROM subscriptions"
            " WHERE platform = ? AND channel = ?", (platform, channel)).fetchone())  # fmt: skip
        return None if row is None else self._subscription(row)

    async def list_subscriptions(self) -> list[Subscription]:
        rows = await self._run(lambda conn: conn.execute(
            f"SELECT {self._SUBSCRIPTION_COLUMNS} FROM subscriptions"
            " ORDER BY created_at, platform, channel").fetchall())  # fmt: skip
        subs = []
        for row in rows:
            try:
                subs.append(self._subscription(row))
            except UnreadableRecord as exc:
                warn_unreadable(f"subscription of {row[0]} channel {row[1]!r}", exc)
        return subs

    async def mark_subscription_gone(self, platform: str, channel: str, reason: str) -> None:
        await self._run(lambda conn: conn.execute(
            "UPDATE subscriptions SET gone = ? WHERE platform = ? AND channel = ?",
            (reason, platform, channel)))  # fmt: skip

    # -- announcements ----------------------------------------------------------------------
    _ANNOUNCEMENT_COLUMNS = (
        "snapshot_id, platform, channel, state, attempts, claimed_at, finished_at, message_id,"
        " detail"
    )

    @staticmethod
    def _announcement(row: tuple[Any, ...]) -> AnnouncementRecord:
        """Raises :class:`UnreadableRecord` for a row that cannot be read: a state this
        version does not know, or attempts / times that are not numbers."""
        try:
            state = AnnouncementState(row[3])
        except ValueError:
            raise UnreadableRecord("its state is not one this version knows") from None
        numbers = (row[4], row[5]) if row[6] is None else (row[4], row[5], row[6])
        if not all(isinstance(n, int | float) for n in numbers):
            raise UnreadableRecord("attempts, claimed_at or finished_at is not a number")
        return AnnouncementRecord(row[0], row[1], row[2], state, row[4], row[5], row[6],
                                  row[7], row[8])  # fmt: skip

    async def claim_announcement(
        self, snapshot_id: str, platform: str, channel: str, max_attempts: int
    ) -> AnnouncementRecord | None:
        now = self._clock()
        key = (snapshot_id, platform, channel)

        def q(conn: sqlite3.Connection) -> tuple[Any, ...] | None:
            cur = conn.execute(
                "INSERT INTO announcements (snapshot_id, platform, channel, state, attempts,"
                " claimed_at) VALUES (?, ?, ?, 'sending', 1, ?)"
                " ON CONFLICT (snapshot_id, platform, channel) DO UPDATE SET state = 'sending',"
                " attempts = announcements.attempts + 1, claimed_at = excluded.claimed_at,"
                " finished_at = NULL, detail = NULL"
                " WHERE announcements.state = 'failed' AND announcements.attempts < ?",
                (*key, now, max_attempts),
            )
            if cur.rowcount != 1:
                return None
            return conn.execute(
                f"SELECT {self._ANNOUNCEMENT_COLUMNS} FROM announcements"
                " WHERE snapshot_id = ? AND platform = ? AND channel = ?", key,
            ).fetchone()  # fmt: skip

        row = await self._run(q)
        return None if row is None else self._announcement(row)

    async def finish_announcement(
        self,
        snapshot_id: str,
        platform: str,
        channel: str,
        state: AnnouncementState,
        message_id: str | None = None,
        detail: str | None = None,
    ) -> None:
        now = self._clock()
        await self._run(lambda conn: conn.execute(
            "UPDATE announcements SET state = ?, finished_at = ?, message_id = ?, detail = ?"
            " WHERE snapshot_id = ? AND platform = ? AND channel = ?",
            (state.value, now, message_id, detail, snapshot_id, platform, channel)))  # fmt: skip

    async def list_announcements(self, snapshot_id: str) -> list[AnnouncementRecord]:
        rows = await self._run(lambda conn: conn.execute(
            f"SELECT {self._ANNOUNCEMENT_COLUMNS} FROM announcements WHERE snapshot_id = ?"
            " ORDER BY platform, channel", (snapshot_id,)).fetchall())  # fmt: skip
        records = []
        for row in rows:  # past any unreadable record (kept: its channel is not re-claimed)
            try:
                records.append(self._announcement(row))
            except UnreadableRecord as exc:
                warn_unreadable(f"announcement of snapshot {snapshot_id!r} to {row[1]} channel "
                                f"{row[2]!r}", exc)  # fmt: skip
        return records

    # -- the reference estimate -------------------------------------------------------------
    async def latest_channel_request(self, platform: str, channel: str) -> Request | None:
        row = await self._run(lambda conn: conn.execute(
            "SELECT request FROM threads WHERE platform = ? AND channel = ?"
            " ORDER BY updated_at DESC LIMIT 1", (platform, channel)).fetchone())  # fmt: skip
        if row is None:
            return None
        try:
            return Request.model_validate_json(row[0])
        except ValueError:
            return None
