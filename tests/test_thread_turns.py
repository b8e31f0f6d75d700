"""Replies in one thread take turns, in one process and across replicas sharing a store
(bot/turns.py): a second quick reply builds on the estimate the first one posted."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from bot.store import Store, StoreUnavailable
from bot.store_sqlite import SQLiteStore
from bot.store_types import ThreadKey
from bot.turns import ThreadTurns

KEY = ThreadKey("slack", "C1", "100.1")


async def _reply(
    turns: ThreadTurns, name: str, hold: float, order: list[str],
    inside: asyncio.Event | None = None,
) -> None:
    async with turns.turn(KEY):
        order.append(f"{name} in")
        if inside is not None:
            inside.set()
        await asyncio.sleep(hold)
        order.append(f"{name} out")


async def test_two_replicas_sharing_a_store_answer_one_thread_in_turn(
    make_store: Callable[[], Store],
) -> None:
    order: list[str] = []
    async with make_store() as a, make_store() as b:
        inside = asyncio.Event()
        first = asyncio.create_task(_reply(ThreadTurns(a), "first", 0.2, order, inside))
        await inside.wait()  # the first replica holds the thread
        await asyncio.gather(first, _reply(ThreadTurns(b), "second", 0.0, order))

    assert order == ["first in", "first out", "second in", "second out"]


async def test_replicas_answer_different_threads_at_once(
    make_store: Callable[[], Store],
) -> None:
    order: list[str] = []
    other = ThreadKey("slack", "C1", "200.2")
    async with make_store() as a, make_store() as b:
        held = asyncio.Event()

        async def first() -> None:
            async with ThreadTurns(a).turn(KEY):
                order.append("first in")
                await held.wait()
                order.append("first out")

        async def second() -> None:
            async with ThreadTurns(b).turn(other):
                order.append("second in")
            held.set()

        await asyncio.wait_for(asyncio.gather(first(), second()), timeout=5)

    assert sorted(order[:2]) == ["first in", "second in"] and order[2] == "first out"


async def test_a_thread_is_free_again_once_its_turn_ends(make_store: Callable[[], Store]) -> None:
    async with make_store() as store:
        turns = ThreadTurns(store)
        async with turns.turn(KEY):
            pass

        assert await store.acquire_lock(f"turn:{KEY.platform}:{KEY.channel}:{KEY.thread}",
                                        "someone", 5)
        assert len(turns) == 0


async def test_a_thread_held_past_the_wait_is_answered_anyway() -> None:
    async with SQLiteStore(":memory:") as store:
        assert await store.acquire_lock("turn:slack:C1:100.1", "a stopped replica", 30)
        entered = False
        async with ThreadTurns(store, wait_s=0.1).turn(KEY):
            entered = True

    assert entered


class _DownStore(SQLiteStore):
    async def acquire_lock(self, name: str, owner: str, ttl_s: float) -> bool:
        raise StoreUnavailable("the store is down")


async def test_a_store_that_is_down_never_holds_a_reply_back() -> None:
    order: list[str] = []
    async with _DownStore(":memory:") as store:
        await _reply(ThreadTurns(store), "only", 0.0, order)

    assert order == ["only in", "only out"]


class _SlowAfterLocking(SQLiteStore):
    """Takes the lock, then answers late: a reply cancelled meanwhile never learns it."""

    locked = asyncio.Event()

    async def acquire_lock(self, name: str, owner: str, ttl_s: float) -> bool:
        got = await super().acquire_lock(name, owner, ttl_s)
        self.locked.set()
        await asyncio.sleep(10)
        return got


async def _cancelled_while_locking(store: _SlowAfterLocking) -> asyncio.Task[None]:
    """A reply's task, cancelled once the store has set its lock but not yet answered."""
    store.locked = asyncio.Event()

    async def reply() -> None:
        async with ThreadTurns(store).turn(KEY):
            pass

    task = asyncio.create_task(reply())
    await asyncio.wait_for(store.locked.wait(), 5)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    return task


async def test_a_reply_cancelled_while_the_store_takes_its_lock_gives_the_lock_back() -> None:
    async with _SlowAfterLocking(":memory:") as store:
        await _cancelled_while_locking(store)

        name = f"turn:{KEY.platform}:{KEY.channel}:{KEY.thread}"
        assert await SQLiteStore.acquire_lock(store, name, "the next reply", 5)


class _SlowAndFailingRelease(_SlowAfterLocking):
    async def release_lock(self, name: str, owner: str) -> bool:
        raise RuntimeError("the store is closing")


async def test_a_cancelled_reply_stays_cancelled_when_giving_the_lock_back_fails() -> None:
    async with _SlowAndFailingRelease(":memory:") as store:
        task = await _cancelled_while_locking(store)
        assert task.cancelled()
