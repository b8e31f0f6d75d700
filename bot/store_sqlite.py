"""The default state store: one SQLite file (:class:`SQLiteStore`), created on first
start and migrated forward by :data:`MIGRATIONS`.

It implements :class:`bot.store.Store` (the interface and what is kept: see
``bot/store.py``) with the standard library's ``sqlite3`` on one dedicated thread (a
one-worker executor, the same design as ``aiosqlite`` without the dependency): one
connection, every statement serialized on that thread, the event loop never blocked by
disk I/O. WAL journal mode keeps commits cheap. A new table is a migration appended to
:data:`MIGRATIONS` (never edit an applied one).

The file holds thread contexts and settings, so a new one is created readable and
writable by its owner only (:data:`OWNER_ONLY`, 0600; SQLite gives its ``-wal`` and
``-shm`` files the database's mode); an existing file others can read is used as it is,
with a warning saying how to tighten it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import sqlite3
import stat
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from bot.price_store_sqlite import PRICE_MIGRATION, SQLitePriceTables
from bot.settings_store import SETTINGS_MIGRATION, SQLiteSettingsTables
from bot.store import (
    Store,
    StoreError,
    StoreUnavailable,
    ThreadContext,
    ThreadKey,
    request_json,
    warn_unreadable_context,
)
from engine import Request

T = TypeVar("T")

log = logging.getLogger("ftcost.store")

OWNER_ONLY = 0o600
"""The mode of a SQLite store (or backup) file ftcost creates: read and write for its
owner only."""


def create_owner_only(path: str | Path) -> bool:
    """Create ``path`` as an empty file with mode :data:`OWNER_ONLY` (the umask can only
    narrow it); False, touching nothing, when it already exists. Atomic (``O_EXCL``), so
    it also refuses a file that appeared meanwhile. SQLite takes an empty file for a new
    database, and gives its journal, ``-wal`` and ``-shm`` files the same mode."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, OWNER_ONLY)
    except FileExistsError:
        return False
    os.close(fd)
    return True


def warn_if_others_can_read(path: str | Path) -> None:
    """A warning when the existing store file is open to its group or other users."""
    with contextlib.suppress(OSError):
        info = os.stat(path)
        mode = info.st_mode & 0o777
        if stat.S_ISREG(info.st_mode) and mode & 0o077:
            log.warning(
                "the SQLite store %s is readable by other users (mode %03o); it holds "
                "thread contexts and settings: chmod 600 %s (and its -wal and -shm files)",
                path, mode, path,
            )  # fmt: skip

Migration = tuple[int, str, str]
"""(version, description, SQL script)."""

MIGRATIONS: list[Migration] = [
    (
        1,
        "thread contexts, seen event ids, locks",
        """
        CREATE TABLE threads (
            platform   TEXT NOT NULL,
            channel    TEXT NOT NULL,
            thread     TEXT NOT NULL,
            request    TEXT NOT NULL,
            message_id TEXT,
            updated_at REAL NOT NULL,
            PRIMARY KEY (platform, channel, thread)
        );
        CREATE INDEX threads_updated_at ON threads (updated_at);
        CREATE TABLE seen_events (
            event_id   TEXT PRIMARY KEY,
            expires_at REAL NOT NULL
        );
        CREATE INDEX seen_events_expires_at ON seen_events (expires_at);
        CREATE TABLE locks (
            name       TEXT PRIMARY KEY,
            owner      TEXT NOT NULL,
            expires_at REAL NOT NULL
        );
        """,
    ),
    PRICE_MIGRATION,
    (
        3,
        "string cache, fixed-window counters",
        """
        CREATE TABLE cache (
            key        TEXT PRIMARY KEY,
            value      TEXT NOT NULL,
            expires_at REAL NOT NULL
        );
        CREATE INDEX cache_expires_at ON cache (expires_at);
        CREATE TABLE hits (
            key        TEXT NOT NULL,
            window_s   REAL NOT NULL,
            window_index INTEGER NOT NULL,
            count      INTEGER NOT NULL,
            expires_at REAL NOT NULL,
            PRIMARY KEY (key, window_s)
        );
        CREATE INDEX hits_expires_at ON hits (expires_at);
        """,
    ),
    SETTINGS_MIGRATION,
]



SQLITE_BUSY_TIMEOUT_MS = 1000
"""How long a statement waits for another writer's lock before the store counts as
unavailable: a locked database costs a reply at most about this long (Redis: 1 s)."""
SQLITE_FAILURE_MEMORY_S = 30.0
"""``ping`` (``/healthz``) reports the store unhealthy for this long after a statement
failed with a SQLite operational error (locked, busy, full disk, I/O)."""


class SQLiteStore(SQLitePriceTables, SQLiteSettingsTables, Store):
    """The default store: one SQLite file, created on first start.

    ``clock`` (epoch seconds) is injectable for expiry tests. A SQLite operational error
    (the database locked by another writer past ``SQLITE_BUSY_TIMEOUT_MS``, a full disk,
    an I/O error) raises :class:`StoreUnavailable`, as a Redis outage does, so callers
    answer without the store and ``/healthz`` says degraded.
    """

    def __init__(self, path: str | Path, *, clock: Callable[[], float] = time.time) -> None:
        self.path = str(path)
        self._clock = clock
        self._conn: sqlite3.Connection | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._failed_at: float | None = None
        """``time.monotonic()`` of the last operational error (for :meth:`ping`)."""

    # -- plumbing ---------------------------------------------------------------------------
    async def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        if self._executor is None or self._conn is None:
            raise StoreError("the store is not open")
        conn = self._conn
        try:
            return await asyncio.get_running_loop().run_in_executor(self._executor, fn, conn)
        except sqlite3.OperationalError as exc:
            self._failed_at = time.monotonic()
            if conn.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    await asyncio.get_running_loop().run_in_executor(
                        self._executor, conn.rollback
                    )
            raise StoreUnavailable(f"the SQLite store cannot be used right now ({exc})") from exc

    def _connect(self) -> sqlite3.Connection:
        if self.path not in (":memory:", ""):
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            if not create_owner_only(self.path):
                warn_if_others_can_read(self.path)
        conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        if self.path != ":memory:":
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
        return conn

    @staticmethod
    def _migrate(conn: sqlite3.Connection) -> int:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at REAL NOT NULL)"
        )
        applied = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
        known = {m[0] for m in MIGRATIONS}
        if applied - known:
            raise StoreError(
                f"the store was written by a newer ftcost (schema version {max(applied)}; "
                f"this one knows up to {max(known)})"
            )
        for version, description, script in MIGRATIONS:
            if version in applied:
                continue
            # executescript() commits first; run the statements in one transaction instead.
            conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in filter(str.strip, script.split(";")):
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_migrations (version, description, applied_at)"
                    " VALUES (?, ?, ?)",
                    (version, description, time.time()),
                )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return max(known)

    async def open(self) -> None:
        if self._conn is not None:
            return
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ftcost-store")
        loop = asyncio.get_running_loop()
        try:
            self._conn = await loop.run_in_executor(self._executor, self._connect)
            await loop.run_in_executor(self._executor, self._migrate, self._conn)
        except (sqlite3.Error, OSError) as exc:
            await self.close()
            raise StoreError(f"cannot open the SQLite store at {self.path}: {exc}") from exc
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        conn, executor = self._conn, self._executor
        self._conn = None
        self._executor = None
        if executor is None:
            return
        if conn is not None:
            await asyncio.get_running_loop().run_in_executor(executor, conn.close)
        executor.shutdown(wait=True)

    async def schema_version(self) -> int:
        def q(conn: sqlite3.Connection) -> int:
            row = conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()
            return int(row[0] or 0)

        return await self._run(q)

    async def ping(self) -> bool:
        """True when a write could start now (the write lock is free) and no statement
        failed in the last ``SQLITE_FAILURE_MEMORY_S``: a read alone succeeds on a database
        another writer has locked or on a full disk."""
        recent = self._failed_at is not None and (
            time.monotonic() - self._failed_at < SQLITE_FAILURE_MEMORY_S
        )

        def probe(conn: sqlite3.Connection) -> bool:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("ROLLBACK")
            return True

        try:
            ok = await self._run(probe)
        except (StoreError, sqlite3.Error):
            return False
        return ok and not recent

    # -- threads ----------------------------------------------------------------------------
    async def get_thread(self, key: ThreadKey) -> ThreadContext | None:
        def q(conn: sqlite3.Connection) -> tuple[Any, ...] | None:
            return conn.execute(
                "SELECT request, message_id, updated_at FROM threads"
                " WHERE platform = ? AND channel = ? AND thread = ?",
                (key.platform, key.channel, key.thread),
            ).fetchone()

        row = await self._run(q)
        if row is None:
            return None
        try:
            request = Request.model_validate_json(row[0])
        except ValueError as exc:
            # A context written by another request schema that no longer validates: read
            # as missing (said in a warning) rather than failing every follow-up.
            warn_unreadable_context(key, exc)
            return None
        return ThreadContext(key, request, row[1], row[2])

    async def save_thread(
        self, key: ThreadKey, request: Request, message_id: str | None = None
    ) -> None:
        payload = request_json(request)
        now = self._clock()

        def q(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO threads (platform, channel, thread, request, message_id, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (platform, channel, thread) DO UPDATE SET"
                " request = excluded.request, message_id = excluded.message_id,"
                " updated_at = excluded.updated_at",
                (key.platform, key.channel, key.thread, payload, message_id, now),
            )

        await self._run(q)

    # -- events -----------------------------------------------------------------------------
    async def first_seen(self, event_id: str, ttl_s: float) -> bool:
        now = self._clock()

        def q(conn: sqlite3.Connection) -> bool:
            cur = conn.execute(
                "INSERT INTO seen_events (event_id, expires_at) VALUES (?, ?)"
                " ON CONFLICT (event_id) DO UPDATE SET expires_at = excluded.expires_at"
                " WHERE seen_events.expires_at <= ?",
                (event_id, now + ttl_s, now),
            )
            return cur.rowcount == 1

        return await self._run(q)

    # -- locks ------------------------------------------------------------------------------
    async def acquire_lock(self, name: str, owner: str, ttl_s: float) -> bool:
        now = self._clock()

        def q(conn: sqlite3.Connection) -> bool:
            cur = conn.execute(
                "INSERT INTO locks (name, owner, expires_at) VALUES (?, ?, ?)"
                " ON CONFLICT (name) DO UPDATE SET owner = excluded.owner,"
                " expires_at = excluded.expires_at"
                " WHERE locks.expires_at <= ? OR locks.owner = excluded.owner",
                (name, owner, now + ttl_s, now),
            )
            return cur.rowcount == 1

        return await self._run(q)

    async def release_lock(self, name: str, owner: str) -> bool:
        def q(conn: sqlite3.Connection) -> bool:
            cur = conn.execute("DELETE FROM locks WHERE name = ? AND owner = ?", (name, owner))
            return cur.rowcount == 1

        return await self._run(q)

    # -- cache ------------------------------------------------------------------------------
    async def cache_get(self, key: str) -> str | None:
        now = self._clock()

        def q(conn: sqlite3.Connection) -> tuple[Any, ...] | None:
            return conn.execute(
                "SELECT value FROM cache WHERE key = ? AND expires_at > ?", (key, now)
            ).fetchone()

        row = await self._run(q)
        return None if row is None else str(row[0])

    async def cache_put(self, key: str, value: str, ttl_s: float) -> None:
        now = self._clock()

        def q(conn: sqlite3.Connection) -> None:
            if ttl_s <= 0:
                conn.execute("DELETE FROM cache WHERE key = ?", (key,))
                return
            conn.execute(
                "INSERT INTO cache (key, value, expires_at) VALUES (?, ?, ?)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value,"
                " expires_at = excluded.expires_at",
                (key, value, now + ttl_s),
            )

        await self._run(q)

    # -- counters ---------------------------------------------------------------------------
    async def hit(self, key: str, window_s: float) -> int:
        if window_s <= 0:
            raise ValueError(f"window_s must be positive, not {window_s}")
        now = self._clock()
        window = math.floor(now / window_s)

        def q(conn: sqlite3.Connection) -> int:
            # One row per (key, window length) holding the current window: a hit in a
            # later window restarts the count at 1.
            row = conn.execute(
                "INSERT INTO hits (key, window_s, window_index, count, expires_at)"
                " VALUES (?, ?, ?, 1, ?)"
                " ON CONFLICT (key, window_s) DO UPDATE SET"
                " count = CASE WHEN hits.window_index = excluded.window_index"
                " THEN hits.count + 1 ELSE 1 END,"
                " window_index = excluded.window_index, expires_at = excluded.expires_at"
                " RETURNING count",
                (key, window_s, window, (window + 1) * window_s),
            ).fetchone()
            return int(row[0])

        return await self._run(q)

    # -- housekeeping -----------------------------------------------------------------------
    async def purge_expired(self, thread_ttl_s: float | None = None) -> int:
        now = self._clock()

        def q(conn: sqlite3.Connection) -> int:
            n = conn.execute("DELETE FROM seen_events WHERE expires_at <= ?", (now,)).rowcount
            n += conn.execute("DELETE FROM locks WHERE expires_at <= ?", (now,)).rowcount
            n += conn.execute("DELETE FROM cache WHERE expires_at <= ?", (now,)).rowcount
            n += conn.execute("DELETE FROM hits WHERE expires_at <= ?", (now,)).rowcount
            if thread_ttl_s is not None:
                n += conn.execute(
                    "DELETE FROM threads WHERE updated_at <= ?", (now - thread_ttl_s,)
                ).rowcount
            return n

        return await self._run(q)
