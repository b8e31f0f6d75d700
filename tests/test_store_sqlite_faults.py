"""SQLite faults are "store unavailable": a database locked by another writer, a full disk.

Estimates still go out (the store is only context), the call fails fast instead of waiting
5 s, and ``ping`` (what ``/healthz`` reports) says the store is not healthy until it is.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from bot.service import Context, ReplyKind, Service
from bot.store import StoreUnavailable, ThreadKey
from bot.store_sqlite import SQLITE_BUSY_TIMEOUT_MS, SQLiteStore
from engine import Request

KEY = ThreadKey("slack", "C1", "100.1")


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteStore]:
    async with SQLiteStore(tmp_path / "state.db") as s:
        yield s


@pytest.fixture
def locked(store: SQLiteStore) -> Iterator[sqlite3.Connection]:
    """Another process's writer holding the database's write lock."""
    other = sqlite3.connect(store.path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    yield other
    other.execute("ROLLBACK")
    other.close()


async def test_a_locked_database_raises_store_unavailable_within_the_busy_timeout(
    store: SQLiteStore, locked: sqlite3.Connection
) -> None:
    started = time.monotonic()
    with pytest.raises(StoreUnavailable, match="locked"):
        await store.save_thread(KEY, Request(model="llama-3.1-8b"))
    assert time.monotonic() - started < SQLITE_BUSY_TIMEOUT_MS / 1000 + 2


async def test_ping_reports_a_locked_database_as_unhealthy(
    store: SQLiteStore, locked: sqlite3.Connection
) -> None:
    assert not await store.ping()


async def test_the_store_works_again_once_the_lock_is_released(store: SQLiteStore) -> None:
    other = sqlite3.connect(store.path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    with pytest.raises(StoreUnavailable):
        await store.save_thread(KEY, Request(model="llama-3.1-8b"))
    other.execute("ROLLBACK")
    other.close()
    await store.save_thread(KEY, Request(model="llama-3.1-8b"))
    assert (await store.get_thread(KEY)) is not None


async def test_a_full_disk_raises_store_unavailable(store: SQLiteStore) -> None:
    def fill_the_disk(conn: sqlite3.Connection) -> None:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")

    await store._run(fill_the_disk)
    big = Request(model="llama-3.1-8b")
    with pytest.raises(StoreUnavailable, match="full"):
        for i in range(2000):
            await store.save_thread(ThreadKey("slack", "C1", f"{i}.0"), big, "x" * 4000)
    assert not await store.ping()


async def test_estimates_still_go_out_while_the_database_is_locked(
    store: SQLiteStore, locked: sqlite3.Connection
) -> None:
    reply = await Service(store).handle(
        "70b qlora 50M tokens h100", Context("slack", "C1", user="U1")
    )
    assert reply is not None and reply.kind is ReplyKind.ESTIMATE
