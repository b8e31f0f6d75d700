"""The state store contract, run against every backend (the ``store`` fixture in
``tests/conftest.py``: SQLite and Redis): thread contexts, retry de-duplication with
expiry, locks with expiry, the string cache, fixed-window counters, purging. Then what
only the SQLite backend has: its file, its versioned schema, the locations it opens.
(Redis-only behaviour: ``tests/test_store_redis.py``; price records:
``tests/test_prices_store.py``.)"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable

import pytest

from adapters.parse import parse_query
from bot.store import Store, StoreError, ThreadKey, redact_url, store_kind
from bot.store_factory import open_store_from
from bot.store_redis import RedisStore
from bot.store_sqlite import MIGRATIONS, SQLiteStore
from engine import Method, Request
from engine.specs import Catalog
from tests.fakes.clock import ManualClock

KEY = ThreadKey("slack", "C1", "1700000000.000100")
REQUEST = Request(model="llama-3.1-70b", method=Method.QLORA, gpu="h100-sxm",
                  dataset_tokens=50_000_000)

Elapse = Callable[[float], Awaitable[None]]


# == the contract: every backend ============================================================

# -- thread contexts ------------------------------------------------------------------------
async def test_thread_context_round_trips_and_survives_a_reopen(
    make_store: Callable[[], Store],
) -> None:
    async with make_store() as store:
        assert await store.get_thread(KEY) is None
        await store.save_thread(KEY, REQUEST, "1700000000.000100")

    async with make_store() as store:
        context = await store.get_thread(KEY)

    assert context is not None
    assert context.request == REQUEST and context.message_id == "1700000000.000100"


async def test_a_context_reads_back_with_only_what_was_said(store: Store) -> None:
    said = Request(model="llama-3.1-8b", method="full", framework="torchtune", seq_len=4096)

    await store.save_thread(KEY, said, "1")

    context = await store.get_thread(KEY)
    assert context is not None
    assert context.request.model_fields_set == said.model_fields_set  # profile fills the rest


async def test_a_context_records_when_it_was_saved(store: Store, store_clock: ManualClock):
    await store.save_thread(KEY, REQUEST, "1")

    context = await store.get_thread(KEY)

    assert context is not None and context.updated_at == store_clock.time()


async def test_saving_again_replaces_the_context(store: Store) -> None:
    await store.save_thread(KEY, REQUEST, "1")
    changed = REQUEST.model_copy(update={"seq_len": 8192})

    await store.save_thread(KEY, changed, "2")

    context = await store.get_thread(KEY)
    assert context is not None and (context.request.seq_len, context.message_id) == (8192, "2")


async def test_saving_without_a_message_id_clears_the_old_one(store: Store) -> None:
    await store.save_thread(KEY, REQUEST, "1")

    await store.save_thread(KEY, REQUEST)

    context = await store.get_thread(KEY)
    assert context is not None and context.message_id is None


async def test_contexts_are_keyed_by_platform_channel_and_thread(store: Store) -> None:
    await store.save_thread(KEY, REQUEST, "1")

    for other in (ThreadKey("discord", "C1", KEY.thread), ThreadKey("slack", "C2", KEY.thread),
                  ThreadKey("slack", "C1", "1700000000.000200")):
        assert await store.get_thread(other) is None


async def test_ids_containing_separators_do_not_collide(store: Store) -> None:
    await store.save_thread(ThreadKey("slack", "a:b", "c"), REQUEST, "first")
    await store.save_thread(ThreadKey("slack", "a", "b:c"), REQUEST, "second")

    first = await store.get_thread(ThreadKey("slack", "a:b", "c"))
    assert first is not None and first.message_id == "first"


async def test_the_channels_latest_estimate_is_its_newest_thread(
    store: Store, store_clock: ManualClock, catalog: Catalog
) -> None:
    old, new = parse_query("8b lora", catalog), parse_query("70b qlora 50M tokens", catalog)
    await store.save_thread(ThreadKey("slack", "C1", "1.0"), old)
    await store_clock.advance(seconds=5)
    await store.save_thread(ThreadKey("slack", "C1", "2.0"), new)
    await store.save_thread(ThreadKey("slack", "C2", "3.0"), old)

    assert await store.latest_channel_request("slack", "C1") == new
    assert await store.latest_channel_request("slack", "C9") is None


# -- retry de-duplication -------------------------------------------------------------------
async def test_first_seen_is_true_once_then_again_after_expiry(
    store: Store, elapse: Elapse
) -> None:
    assert await store.first_seen("slack:T1:Ev1", ttl_s=60) is True
    assert await store.first_seen("slack:T1:Ev1", ttl_s=60) is False
    assert await store.first_seen("slack:T1:Ev2", ttl_s=60) is True
    await elapse(61)
    assert await store.first_seen("slack:T1:Ev1", ttl_s=60) is True
    assert await store.first_seen("slack:T1:Ev1", ttl_s=60) is False


async def test_first_seen_is_atomic_across_replicas(make_store: Callable[[], Store]) -> None:
    async with make_store() as a, make_store() as b:
        results = await asyncio.gather(
            *(s.first_seen("slack:T1:EvRace", 60) for s in [a, b] * 10)
        )

    assert results.count(True) == 1


# -- locks ----------------------------------------------------------------------------------
async def test_locks_have_one_holder_until_released_or_expired(
    store: Store, elapse: Elapse
) -> None:
    assert await store.acquire_lock("prices", "replica-a", ttl_s=30)
    assert not await store.acquire_lock("prices", "replica-b", ttl_s=30)
    assert await store.acquire_lock("prices", "replica-a", ttl_s=30)  # renew
    assert not await store.release_lock("prices", "replica-b")
    assert await store.release_lock("prices", "replica-a")
    assert await store.acquire_lock("prices", "replica-b", ttl_s=30)
    await elapse(31)
    assert await store.acquire_lock("prices", "replica-a", ttl_s=30)


async def test_renewing_a_lock_extends_its_expiry(store: Store, elapse: Elapse) -> None:
    await store.acquire_lock("prices", "replica-a", ttl_s=30)
    await elapse(20)
    await store.acquire_lock("prices", "replica-a", ttl_s=30)
    await elapse(20)
    held_after_40s = not await store.acquire_lock("prices", "replica-b", ttl_s=30)
    await elapse(11)

    assert held_after_40s and await store.acquire_lock("prices", "replica-b", ttl_s=30)


async def test_a_lock_has_one_holder_among_racing_replicas(
    make_store: Callable[[], Store],
) -> None:
    async with make_store() as a, make_store() as b:
        results = await asyncio.gather(
            *(s.acquire_lock("prices", f"replica-{i}", 30) for i, s in enumerate([a, b] * 5))
        )

    assert results.count(True) == 1


# -- the string cache -----------------------------------------------------------------------
async def test_a_cached_value_is_read_back_until_it_expires(
    store: Store, elapse: Elapse
) -> None:
    assert await store.cache_get("hf:meta-llama/Llama-3.1-8B") is None
    await store.cache_put("hf:meta-llama/Llama-3.1-8B", '{"hidden_size": 4096}', ttl_s=3600)
    await elapse(3599)
    before = await store.cache_get("hf:meta-llama/Llama-3.1-8B")
    await elapse(2)

    assert before == '{"hidden_size": 4096}'
    assert await store.cache_get("hf:meta-llama/Llama-3.1-8B") is None


async def test_putting_again_replaces_the_value_and_its_expiry(
    store: Store, elapse: Elapse
) -> None:
    await store.cache_put("k", "old", ttl_s=10)
    await store.cache_put("k", "new", ttl_s=100)
    await elapse(50)

    assert await store.cache_get("k") == "new"


async def test_a_zero_ttl_caches_nothing_and_drops_the_old_value(store: Store) -> None:
    await store.cache_put("k", "old", ttl_s=60)

    await store.cache_put("k", "new", ttl_s=0)

    assert await store.cache_get("k") is None


async def test_the_cache_is_shared_by_replicas(make_store: Callable[[], Store]) -> None:
    async with make_store() as a, make_store() as b:
        await a.cache_put("hf:x", "ü value with unicode", ttl_s=60)
        assert await b.cache_get("hf:x") == "ü value with unicode"


# -- fixed-window counters ------------------------------------------------------------------
async def test_hits_count_up_within_a_window_per_key(store: Store) -> None:
    counts = [await store.hit("rate:slack:U1", 60) for _ in range(3)]

    assert counts == [1, 2, 3]
    assert await store.hit("rate:slack:U2", 60) == 1


async def test_a_new_window_starts_from_one(
    store: Store, store_clock: ManualClock, elapse: Elapse
) -> None:
    assert store_clock.time() % 60 == 0  # the test starts on a window boundary
    await store.hit("rate:slack:U1", 60)
    await elapse(59)
    last_in_window = await store.hit("rate:slack:U1", 60)
    await elapse(1)

    assert last_in_window == 2
    assert await store.hit("rate:slack:U1", 60) == 1


async def test_hits_from_racing_replicas_are_all_counted(
    make_store: Callable[[], Store],
) -> None:
    async with make_store() as a, make_store() as b:
        counts = await asyncio.gather(*(s.hit("rate:slack:U1", 60) for s in [a, b] * 10))

    assert sorted(counts) == list(range(1, 21))


async def test_a_window_must_be_positive(store: Store) -> None:
    with pytest.raises(ValueError, match="window_s"):
        await store.hit("rate:slack:U1", 0)


# -- housekeeping ---------------------------------------------------------------------------
async def test_purge_removes_stale_threads_and_keeps_fresh_ones(
    store: Store, elapse: Elapse
) -> None:
    fresh = ThreadKey("slack", "C1", "1700000100.000100")
    await store.save_thread(KEY, REQUEST, "1")
    await elapse(100)
    await store.save_thread(fresh, REQUEST.model_copy(update={"seq_len": 8192}), "2")

    removed = await store.purge_expired(thread_ttl_s=50)

    assert removed >= 1
    assert await store.get_thread(KEY) is None and await store.get_thread(fresh) is not None
    latest = await store.latest_channel_request("slack", "C1")
    assert latest is not None and latest.seq_len == 8192


async def test_purge_without_a_thread_ttl_keeps_threads(store: Store, elapse: Elapse) -> None:
    await store.save_thread(KEY, REQUEST, "1")
    await elapse(10 * 365 * 86400)

    await store.purge_expired()

    assert await store.get_thread(KEY) is not None


async def test_an_open_store_answers_ping(store: Store) -> None:
    assert await store.ping() is True


async def test_using_a_store_that_is_not_open_is_a_store_error(
    make_store: Callable[[], Store],
) -> None:
    store = make_store()

    with pytest.raises(StoreError, match="not open"):
        await store.get_thread(KEY)
    assert await store.ping() is False


async def test_channel_settings_are_set_read_back_replaced_and_removed(store: Store) -> None:
    assert await store.channel_settings("slack", "C1") == {}

    await store.set_channel_setting("slack", "C1", "framework", "hf")
    await store.set_channel_setting("slack", "C1", "prices", "spot")
    await store.set_channel_setting("slack", "C1", "framework", "unsloth")
    assert await store.channel_settings("slack", "C1") == {
        "framework": "unsloth", "prices": "spot"}

    await store.set_channel_setting("slack", "C1", "framework", None)
    assert await store.channel_settings("slack", "C1") == {"prices": "spot"}


async def test_channel_settings_are_per_platform_and_channel_and_survive_a_reopen(
    make_store: Callable[[], Store],
) -> None:
    async with make_store() as first:
        await first.set_channel_setting("slack", "C:1", "framework", "hf")
        await first.set_channel_setting("discord", "C:1", "framework", "torchtune")
    async with make_store() as again:
        assert await again.channel_settings("slack", "C:1") == {"framework": "hf"}
        assert await again.channel_settings("discord", "C:1") == {"framework": "torchtune"}
        assert await again.channel_settings("slack", "C") == {}


async def test_purge_keeps_channel_settings(store: Store, elapse: Elapse) -> None:
    await store.set_channel_setting("slack", "C1", "framework", "hf")
    await elapse(400 * 86400)

    await store.purge_expired(thread_ttl_s=86400)

    assert await store.channel_settings("slack", "C1") == {"framework": "hf"}


# == SQLite only =============================================================================


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


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


async def test_a_version_2_store_gains_the_cache_and_counters(tmp_path):
    path = tmp_path / "s.sqlite3"
    with sqlite3.connect(path, isolation_level=None) as conn:
        conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY,"
                     " description TEXT NOT NULL, applied_at REAL NOT NULL)")  # fmt: skip
        for version, description, script in MIGRATIONS[:2]:
            for statement in filter(str.strip, script.split(";")):
                conn.execute(statement)
            conn.execute("INSERT INTO schema_migrations VALUES (?, ?, 0)", (version, description))
        conn.execute("INSERT INTO threads VALUES ('slack', 'C1', 't', ?, 'm', 1.0)",
                     (REQUEST.model_dump_json(),))  # fmt: skip

    async with SQLiteStore(path) as store:
        await store.cache_put("k", "v", ttl_s=60)
        assert await store.cache_get("k") == "v"
        assert await store.schema_version() == max(m[0] for m in MIGRATIONS)
        assert await store.hit("u", 60) == 1
        assert await store.get_thread(ThreadKey("slack", "C1", "t")) is not None


async def test_a_version_3_store_gains_channel_settings_and_keeps_its_data(tmp_path):
    path = tmp_path / "s.sqlite3"
    async with SQLiteStore(path) as store:
        await store.save_thread(KEY, REQUEST, "m")
    with sqlite3.connect(path, isolation_level=None) as conn:  # as version 3 left it
        conn.execute("DROP TABLE channel_settings")
        conn.execute("DELETE FROM schema_migrations WHERE version > 3")

    async with SQLiteStore(path) as store:
        await store.set_channel_setting("slack", "C1", "framework", "hf")
        assert await store.channel_settings("slack", "C1") == {"framework": "hf"}
        assert await store.get_thread(KEY) is not None


async def test_a_store_from_a_newer_version_is_refused(tmp_path):
    path = tmp_path / "s.sqlite3"
    async with SQLiteStore(path):
        pass
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO schema_migrations VALUES (999, 'future', 0)")

    with pytest.raises(StoreError, match="newer"):
        async with SQLiteStore(path):
            pass


async def test_an_unreadable_stored_request_reads_as_no_context(tmp_path):
    path = tmp_path / "s.sqlite3"
    async with SQLiteStore(path) as store:
        await store.save_thread(KEY, REQUEST, "1")
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE threads SET request = '{\"model\": \"\", \"bogus\": 1}'")

    async with SQLiteStore(path) as store:
        assert await store.get_thread(KEY) is None


async def test_purge_counts_every_expired_row(tmp_path):
    clock = Clock()
    async with SQLiteStore(tmp_path / "s.sqlite3", clock=clock) as store:
        await store.first_seen("old", ttl_s=10)
        await store.acquire_lock("l", "o", ttl_s=10)
        await store.cache_put("c", "v", ttl_s=10)
        await store.hit("u", 10)
        await store.save_thread(KEY, REQUEST, "1")
        clock.now += 11
        await store.first_seen("new", ttl_s=10)
        await store.cache_put("c2", "v", ttl_s=10)
        assert await store.purge_expired() == 4
        assert await store.purge_expired() == 0
        clock.now += 100
        assert await store.purge_expired(thread_ttl_s=50) == 3  # new, c2, the thread


async def test_unopenable_path_is_a_store_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")

    with pytest.raises(StoreError, match="cannot open"):
        await SQLiteStore(blocker / "sub" / "s.sqlite3").open()


async def test_memory_store_works_for_tests():
    async with SQLiteStore(":memory:") as store:
        await store.save_thread(KEY, REQUEST)
        assert (await store.get_thread(KEY)).message_id is None


# == locations (STORE_URL / store.path) ======================================================


def test_sqlite_locations():
    assert open_store_from("state.db").path == "state.db"
    assert open_store_from("sqlite:///var/x.db").path == "var/x.db"
    assert open_store_from("sqlite:////abs/x.db").path == "/abs/x.db"
    assert open_store_from(":memory:").path == ":memory:"


@pytest.mark.parametrize("url", ["redis://localhost:6379/0", "rediss://:pw@cache.example:6380/1",
                                 "unix:///run/redis/redis.sock?db=2", "REDIS://localhost"])
def test_redis_locations(url: str) -> None:
    store = open_store_from(url)

    assert isinstance(store, RedisStore) and store.url == url


def test_an_unsupported_scheme_names_the_accepted_forms():
    with pytest.raises(StoreError, match=r"unsupported store scheme postgres://.*redis://"):
        open_store_from("postgres://user:hunter2@db/ftcost")
    with pytest.raises(StoreError) as info:
        store_kind("mysql://root:hunter2@db")
    assert "hunter2" not in str(info.value)


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///", "sqlite:///  "])
def test_a_sqlite_url_without_a_file_is_refused_not_kept_in_memory(url: str) -> None:
    with pytest.raises(StoreError, match="names no file"):
        open_store_from(url)


def test_a_redis_database_that_is_not_a_number_is_refused() -> None:
    with pytest.raises(StoreError, match="not a whole number") as info:
        open_store_from("redis://:hunter2@localhost:6379/1x")
    assert "hunter2" not in str(info.value)


def test_a_malformed_redis_url_is_a_store_error_without_its_password():
    with pytest.raises(StoreError, match="invalid Redis URL") as info:
        open_store_from("redis://:hunter2@localhost:notaport/0")
    assert "hunter2" not in str(info.value)


@pytest.mark.parametrize(("url", "shown"), [
    ("redis://:hunter2@h:6379/0", "redis://:***@h:6379/0"),
    ("redis://ftcost:hunter2@h/0", "redis://ftcost:***@h/0"),
    ("unix:///run/redis.sock?db=1&password=hunter2", "unix:///run/redis.sock?db=1&password=***"),
    ("redis://h:6379/0", "redis://h:6379/0"),
    ("/var/lib/ftcost/state.db", "/var/lib/ftcost/state.db"),
])  # fmt: skip
def test_locations_are_shown_without_passwords(url: str, shown: str) -> None:
    assert redact_url(url) == shown

