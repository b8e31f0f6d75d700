"""The SQLite store: created on first start, versioned schema, thread contexts that
survive a reopen, atomic first-seen checks with expiry, locks with expiry."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from bot.store import MIGRATIONS, SQLiteStore, StoreError, ThreadKey, open_store_from
from engine import Method, Request

KEY = ThreadKey("slack", "C1", "1700000000.000100")
REQUEST = Request(model="llama-3.1-70b", method=Method.QLORA, gpu="h100-sxm",
                  dataset_tokens=50_000_000)


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def store(tmp_path: Path):
    async with SQLiteStore(tmp_path / "s.sqlite3") as s:
        yield s


async def test_first_open_creates_the_file_and_records_the_schema_version(tmp_path):
    path = tmp_path / "nested" / "dir" / "state.sqlite3"

    async with SQLiteStore(path) as store:
        version = await store.schema_version()
        assert await store.ping()

    assert path.exists()
    assert version == max(m[0] for m in MIGRATIONS)
    rows = sqlite3.connect(path).execute("SELECT version, description FROM schema_migrations")
    assert [r[0] for r in rows] == [m[0] for m in MIGRATIONS]


async def test_reopening_does_not_reapply_migrations(tmp_path):
    path = tmp_path / "s.sqlite3"
    async with SQLiteStore(path):
        pass
    async with SQLiteStore(path) as store:
        assert await store.schema_version() == max(m[0] for m in MIGRATIONS)
    count = sqlite3.connect(path).execute("SELECT COUNT(*) FROM schema_migrations").fetchone()
    assert count == (len(MIGRATIONS),)


async def test_a_store_from_a_newer_version_is_refused(tmp_path):
    path = tmp_path / "s.sqlite3"
    async with SQLiteStore(path):
        pass
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO schema_migrations VALUES (999, 'future', 0)")

    with pytest.raises(StoreError, match="newer"):
        async with SQLiteStore(path):
            pass


async def test_thread_context_round_trips_and_survives_a_reopen(tmp_path):
    path = tmp_path / "s.sqlite3"
    async with SQLiteStore(path) as store:
        assert await store.get_thread(KEY) is None
        await store.save_thread(KEY, REQUEST, "1700000000.000100")

    async with SQLiteStore(path) as store:
        context = await store.get_thread(KEY)

    assert context is not None
    assert context.request == REQUEST and context.message_id == "1700000000.000100"


async def test_saving_again_replaces_the_context(store):
    await store.save_thread(KEY, REQUEST, "1")
    changed = REQUEST.model_copy(update={"seq_len": 8192})

    await store.save_thread(KEY, changed, "2")

    context = await store.get_thread(KEY)
    assert (context.request.seq_len, context.message_id) == (8192, "2")


async def test_contexts_are_keyed_by_platform_channel_and_thread(store):
    await store.save_thread(KEY, REQUEST, "1")

    for other in (ThreadKey("discord", "C1", KEY.thread), ThreadKey("slack", "C2", KEY.thread),
                  ThreadKey("slack", "C1", "1700000000.000200")):
        assert await store.get_thread(other) is None


async def test_an_unreadable_stored_request_reads_as_no_context(tmp_path):
    path = tmp_path / "s.sqlite3"
    async with SQLiteStore(path) as store:
        await store.save_thread(KEY, REQUEST, "1")
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE threads SET request = '{\"model\": \"\", \"bogus\": 1}'")

    async with SQLiteStore(path) as store:
        assert await store.get_thread(KEY) is None


async def test_first_seen_is_true_once_then_again_after_expiry(tmp_path):
    clock = Clock()
    async with SQLiteStore(tmp_path / "s.sqlite3", clock=clock) as store:
        assert await store.first_seen("slack:T1:Ev1", ttl_s=60) is True
        assert await store.first_seen("slack:T1:Ev1", ttl_s=60) is False
        assert await store.first_seen("slack:T1:Ev2", ttl_s=60) is True
        clock.now += 61
        assert await store.first_seen("slack:T1:Ev1", ttl_s=60) is True
        assert await store.first_seen("slack:T1:Ev1", ttl_s=60) is False


async def test_first_seen_is_atomic_under_concurrency(tmp_path):
    path = tmp_path / "s.sqlite3"
    async with SQLiteStore(path) as a, SQLiteStore(path) as b:
        results = await asyncio.gather(
            *(s.first_seen("slack:T1:EvRace", 60) for s in [a, b] * 10)
        )

    assert results.count(True) == 1


async def test_locks_have_one_holder_until_released_or_expired(tmp_path):
    clock = Clock()
    async with SQLiteStore(tmp_path / "s.sqlite3", clock=clock) as store:
        assert await store.acquire_lock("prices", "replica-a", ttl_s=30)
        assert not await store.acquire_lock("prices", "replica-b", ttl_s=30)
        assert await store.acquire_lock("prices", "replica-a", ttl_s=30)  # renew
        assert not await store.release_lock("prices", "replica-b")
        assert await store.release_lock("prices", "replica-a")
        assert await store.acquire_lock("prices", "replica-b", ttl_s=30)
        clock.now += 31
        assert await store.acquire_lock("prices", "replica-a", ttl_s=30)


async def test_purge_removes_expired_rows_and_stale_threads(tmp_path):
    clock = Clock()
    async with SQLiteStore(tmp_path / "s.sqlite3", clock=clock) as store:
        await store.first_seen("old", ttl_s=10)
        await store.acquire_lock("l", "o", ttl_s=10)
        await store.save_thread(KEY, REQUEST, "1")
        clock.now += 11
        await store.first_seen("new", ttl_s=10)
        assert await store.purge_expired() == 2
        assert await store.get_thread(KEY) is not None
        clock.now += 100
        assert await store.purge_expired(thread_ttl_s=50) >= 1
        assert await store.get_thread(KEY) is None


async def test_using_a_closed_store_is_a_store_error(tmp_path):
    store = SQLiteStore(tmp_path / "s.sqlite3")

    with pytest.raises(StoreError, match="not open"):
        await store.get_thread(KEY)
    assert await store.ping() is False


async def test_unopenable_path_is_a_store_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")

    with pytest.raises(StoreError, match="cannot open"):
        await SQLiteStore(blocker / "sub" / "s.sqlite3").open()


def test_store_locations():
    assert open_store_from("state.db").path == "state.db"
    assert open_store_from("sqlite:///var/x.db").path == "var/x.db"
    assert open_store_from("sqlite:////abs/x.db").path == "/abs/x.db"
    assert open_store_from(":memory:").path == ":memory:"
    with pytest.raises(StoreError, match="redis"):
        open_store_from("redis://localhost:6379/0")


async def test_memory_store_works_for_tests():
    async with SQLiteStore(":memory:") as store:
        await store.save_thread(KEY, REQUEST)
        assert (await store.get_thread(KEY)).message_id is None
