"""What only the Redis store has: an unreachable, restarted or frozen server
(``StoreUnavailable``, ``ping() is False``, recovery without a reopen), credentials kept
out of messages, the key prefix, native expiry in real time. The shared contract is in
``tests/test_bot_store.py`` and ``tests/test_prices_store.py``.

Tests that stop or freeze Redis start a ``redis-server`` of their own (never the shared
one of ``FTCOST_TEST_REDIS_URL``)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
import redis

from bot.store import StoreError, StoreUnavailable, ThreadKey
from bot.store_redis import RedisStore
from engine import Method, Request
from tests.fakes.clock import ManualClock
from tests.redis_server import RedisServer, fast_forward, free_port, redis_server_path

KEY = ThreadKey("slack", "C1", "1700000000.000100")
REQUEST = Request(model="llama-3.1-70b", method=Method.QLORA, gpu="h100-sxm",
                  dataset_tokens=50_000_000)

needs_redis_server = pytest.mark.skipif(
    redis_server_path() is None,
    reason="needs redis-server on PATH to stop and restart (Debian: apt-get install "
           "redis-server)",
)  # fmt: skip


@pytest.fixture
def own_server() -> Iterator[RedisServer]:
    with RedisServer() as server:
        yield server


# -- unreachable, restarted, frozen ---------------------------------------------------------
async def test_opening_with_nothing_listening_is_store_unavailable() -> None:
    store = RedisStore(f"redis://:hunter2@127.0.0.1:{free_port()}/0")

    with pytest.raises(StoreUnavailable, match="unreachable") as info:
        await store.open()

    assert "127.0.0.1" in str(info.value) and "hunter2" not in str(info.value)
    assert await store.ping() is False


@needs_redis_server
async def test_calls_fail_fast_while_redis_is_down_and_recover_when_it_returns(
    own_server: RedisServer,
) -> None:
    async with RedisStore(own_server.url, prefix="t:") as store:
        await store.save_thread(KEY, REQUEST, "1")
        own_server.stop()

        with pytest.raises(StoreUnavailable, match="unreachable"):
            await store.get_thread(KEY)
        with pytest.raises(StoreUnavailable):
            await store.acquire_lock("prices", "replica-a", 30)
        down = await store.ping()

        own_server.start()  # the same port, empty (no persistence): a fresh Redis

        assert down is False
        assert await store.ping() is True
        assert await store.get_thread(KEY) is None
        assert await store.acquire_lock("prices", "replica-a", 30)  # Lua scripts reloaded
        assert await store.claim_announcement("s1", "slack", "C1", 3) is not None


@needs_redis_server
async def test_a_frozen_redis_times_out_instead_of_hanging(own_server: RedisServer) -> None:
    async with RedisStore(own_server.url, prefix="t:", socket_timeout=0.2) as store:
        own_server.pause()
        try:
            with pytest.raises(StoreUnavailable, match="unreachable"):
                await asyncio.wait_for(store.first_seen("slack:T1:Ev1", 60), timeout=5)
            frozen_ping = await asyncio.wait_for(store.ping(), timeout=5)
        finally:
            own_server.resume()

        assert frozen_ping is False
        assert await store.first_seen("slack:T1:Ev2", 60) is True


@needs_redis_server
async def test_a_wrong_password_is_reported_without_it() -> None:
    with RedisServer(password="right-password-42") as server:
        url = server.url.replace("right-password-42", "wrong-password-42")
        store = RedisStore(url)
        with pytest.raises(StoreUnavailable, match="credentials") as info:
            await store.open()
        async with RedisStore(server.url, prefix="t:") as good:
            assert await good.first_seen("x", 60) is True

    assert "wrong-password-42" not in str(info.value)
    assert "right-password-42" not in good.location


async def test_a_store_error_is_not_unavailable_when_redis_answers_wrongly(
    redis_url: str, redis_prefix: str
) -> None:
    async with RedisStore(redis_url, prefix=redis_prefix) as store:
        client = redis.Redis.from_url(redis_url)
        client.set(f"{redis_prefix}thread:slack:C1:{KEY.thread}", "a string, not a hash")
        client.close()

        with pytest.raises(StoreError, match="WRONGTYPE") as info:
            await store.get_thread(KEY)

    assert not isinstance(info.value, StoreUnavailable)


# -- keys -----------------------------------------------------------------------------------
async def test_every_key_lives_under_the_prefix(redis_url: str, redis_prefix: str) -> None:
    async with RedisStore(redis_url, prefix=redis_prefix) as store:
        await store.save_thread(KEY, REQUEST, "1")
        await store.first_seen("e", 60)
        await store.acquire_lock("l", "o", 60)
        await store.cache_put("c", "v", 60)
        await store.hit("h", 60)
        await store.save_price_snapshot("s1", 1.0, None, "{}")
        await store.claim_announcement("s1", "slack", "C1", 3)
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    mine = sorted(client.scan_iter(match=f"{redis_prefix}*"))
    client.close()

    assert sorted(k.removeprefix(redis_prefix).split(":")[0] for k in mine) == [
        "cache", "hit", "lock", "price", "price", "price", "price", "seen", "thread", "threads",
        "threads",
    ]  # fmt: skip


async def test_stores_with_different_prefixes_share_nothing(
    redis_url: str, redis_prefix: str
) -> None:
    async with RedisStore(redis_url, prefix=redis_prefix + "a:") as a, \
            RedisStore(redis_url, prefix=redis_prefix + "b:") as b:  # fmt: skip
        await a.save_thread(KEY, REQUEST, "1")
        assert await a.first_seen("e", 60) and await b.first_seen("e", 60)
        assert await b.get_thread(KEY) is None


async def test_an_unreadable_stored_request_reads_as_no_context(
    redis_url: str, redis_prefix: str
) -> None:
    async with RedisStore(redis_url, prefix=redis_prefix) as store:
        await store.save_thread(KEY, REQUEST, "1")
        client = redis.Redis.from_url(redis_url)
        client.hset(f"{redis_prefix}thread:slack:C1:{KEY.thread}", "request",
                    '{"model": "", "bogus": 1}')  # fmt: skip
        client.close()

        assert await store.get_thread(KEY) is None
        assert await store.latest_channel_request("slack", "C1") is None


# -- expiry ---------------------------------------------------------------------------------
async def test_redis_expires_event_ids_in_real_time(redis_url: str, redis_prefix: str) -> None:
    """No fast-forward: Redis' own clock at work (short TTLs, a quarter of a second)."""
    async with RedisStore(redis_url, prefix=redis_prefix) as store:
        assert await store.first_seen("slack:T1:Ev1", ttl_s=0.15) is True
        await asyncio.sleep(0.25)
        assert await store.first_seen("slack:T1:Ev1", ttl_s=0.15) is True


async def test_a_native_thread_ttl_expires_contexts_and_skips_them(
    redis_url: str, redis_prefix: str
) -> None:
    clock = ManualClock(datetime(2026, 12, 1, tzinfo=UTC))
    older = ThreadKey("slack", "C1", "1.0")
    newer = ThreadKey("slack", "C1", "2.0")
    async with RedisStore(redis_url, prefix=redis_prefix, clock=clock.time,
                          thread_ttl_s=100) as store:  # fmt: skip
        await store.save_thread(older, REQUEST, "1")
        await clock.advance(seconds=60)
        await fast_forward(redis_url, redis_prefix, 60)
        await store.save_thread(newer, REQUEST.model_copy(update={"seq_len": 8192}), "2")
        await fast_forward(redis_url, redis_prefix, 50)  # older: 110 s, newer: 50 s

        assert await store.get_thread(older) is None
        assert await store.get_thread(newer) is not None
        latest = await store.latest_channel_request("slack", "C1")
        assert latest is not None and latest.seq_len == 8192
        await fast_forward(redis_url, redis_prefix, 60)
        assert await store.latest_channel_request("slack", "C1") is None


# -- housekeeping ---------------------------------------------------------------------------
async def test_purge_drops_a_corrupt_index_member_and_goes_on(
    redis_url: str, redis_prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A member of ``threads:by-time`` that is not ``[platform, channel, thread]`` in JSON
    is dropped (and logged, cut short) instead of failing this and every later purge."""
    clock = ManualClock(datetime(2026, 12, 1, tzinfo=UTC))
    by_time = f"{redis_prefix}threads:by-time"
    huge = "{" + "x" * 10_000
    corrupt = ["not json", "[1, 2, 3]", '["slack", "C1"]', huge]
    async with RedisStore(redis_url, prefix=redis_prefix, clock=clock.time) as store:
        await store.save_thread(KEY, REQUEST, "1")
        client = redis.Redis.from_url(redis_url, decode_responses=True)
        try:
            client.zadd(by_time, {member: clock.time() for member in corrupt})
            await clock.advance(seconds=100)

            with caplog.at_level("WARNING", logger="ftcost.store"):
                removed = await asyncio.wait_for(store.purge_expired(thread_ttl_s=50),
                                                 timeout=10)  # fmt: skip
            left = client.zrange(by_time, 0, -1)
        finally:
            client.close()

        assert removed == 1
        assert await store.get_thread(KEY) is None
        assert left == []
        assert await store.purge_expired(thread_ttl_s=50) == 0  # and the next one is clean
    warnings = [r.getMessage() for r in caplog.records if r.name == "ftcost.store"]
    assert len(warnings) == len(corrupt)
    assert all("corrupt" in w for w in warnings)
    assert max(len(w) for w in warnings) < 300  # the huge member is cut short
